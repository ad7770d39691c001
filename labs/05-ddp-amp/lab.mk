# lab 05 — DDP as PyTorch builds it: gradient buckets overlapped with backward
LAB_05_STUDENT_C := buckets.c reducer.c scaler.c amp.c checkpoint.c
LAB_05_STUDENT_CU :=
LAB_05_STUDENT_H :=
LAB_05_KIT_C := kit.c outputs.c
LAB_05_LAUNCH := common/bin/dlrun -n 4
LAB_05_RUN_ARGS := --bucket-mb 1
# make run's second run (the report's second headline and plot, amp.svg): part 2's fp16 with the loss scaler
# on the same 4 ranks, into run/05-ddp-amp/amp/. fp16 is emulated on the CPU (an fp16 step about 3x an fp32
# one; the underflow probe adds two more passes), so it trains 12 epochs (36 steps), not the fp32 run's 30, and
# probes every third step: 94 s on 4 ranks on the kit's 2-core test machine (about 2 minutes is the budget);
# make run's --quick: one epoch (3 steps), 8.5 s.
LAB_05_RUN2 := amp
LAB_05_RUN2_ARGS := --amp fp16 --bucket-mb 1 --epochs 12 --probe-every 3
