# lab 05 — DDP as PyTorch builds it: gradient buckets overlapped with backward
LAB_05_STUDENT_C := buckets.c reducer.c scaler.c amp.c checkpoint.c
LAB_05_STUDENT_CU :=
LAB_05_STUDENT_H :=
LAB_05_KIT_C := kit.c
LAB_05_LAUNCH := common/bin/dlrun -n 4
LAB_05_RUN_ARGS := --bucket-mb 1
