# lab 02 — honest evaluation: stratified splits, confusion matrices, softmax regression
LAB_02_STUDENT_C := split.c metrics.c softmax.c select.c
LAB_02_STUDENT_CU := softmax_cuda.cu
LAB_02_STUDENT_H := softmax_math.h
LAB_02_KIT_C := kit.c outputs.c
LAB_02_RUN_ARGS := --data fashion_mnist
