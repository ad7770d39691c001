# lab 03 — from four serial copies to one data-parallel model
LAB_03_STUDENT_C := sampler.c dscaler.c ddp.c
LAB_03_STUDENT_CU :=
LAB_03_STUDENT_H :=
LAB_03_KIT_C := kit.c outputs.c
LAB_03_LAUNCH := common/bin/dlrun -n 4
LAB_03_RUN_ARGS :=
# Kit files whose code answers this lab's tasks (the kit's own sampler and LR
# schedule, which lab 05 uses, are lab 03's tasks 1 and 5): a release staged
# for this lab or an earlier one leaves them out (tools/release-tree.sh).
LAB_03_KIT_ANSWERS := common/src/sampler.c common/src/lr.c common/tests/test_sampler.c common/tests/test_lr.c
