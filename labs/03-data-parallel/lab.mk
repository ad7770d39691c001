# lab 03 — from four serial copies to one data-parallel model
LAB_03_STUDENT_C := sampler.c dscaler.c ddp.c
LAB_03_STUDENT_CU :=
LAB_03_STUDENT_H :=
LAB_03_KIT_C := kit.c outputs.c
LAB_03_LAUNCH := common/bin/dlrun -n 4
LAB_03_RUN_ARGS :=
