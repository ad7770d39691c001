# lab 01 — logistic regression on one GPU, with feature scaling
LAB_01_STUDENT_C := scaler.c logreg.c
LAB_01_STUDENT_CU := logreg_cuda.cu
LAB_01_STUDENT_H := logreg_math.h
LAB_01_KIT_C := kit.c outputs.c
LAB_01_KIT_CU := kit_cuda.cu
# The student files are compiled for speed: -O3 turns GCC's loop vectoriser on
# in full, and -fno-math-errno -fno-trapping-math let it treat expf and log1pf
# as pure functions and compute both sides of a select, so a branch-free loop
# over rows calls glibc's vector expf/log1pf (see logreg.c). No -ffast-math:
# sums keep their order, NaN stays NaN. Baseline x86-64 (SSE2), no -march.
LAB_01_CFLAGS := -O3 -fno-math-errno -fno-trapping-math
$(foreach f,$(LAB_01_STUDENT_C),%/01/$(f:.c=.o)): STUDENT_CFLAGS += $(LAB_01_CFLAGS)
