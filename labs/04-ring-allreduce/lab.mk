# lab 04 — the ring AllReduce by hand, measured like nccl-tests
LAB_04_STUDENT_C := naive.c ring.c chunked.c
LAB_04_STUDENT_CU :=
LAB_04_STUDENT_H :=
LAB_04_KIT_C := kit.c outputs.c
LAB_04_LAUNCH := common/bin/dlrun -n 4
LAB_04_RUN_ARGS := -b 8 -e 16M -f 4
