# lab 01 — logistic regression on one GPU, with feature scaling
LAB_01_STUDENT_C := scaler.c logreg.c
LAB_01_STUDENT_CU := logreg_cuda.cu
LAB_01_STUDENT_H := logreg_math.h
LAB_01_KIT_C := kit.c
