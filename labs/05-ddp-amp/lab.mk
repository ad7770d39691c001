# labs/05-ddp-amp/lab.mk — lab 05's manifest: what the kit needs to know of it (the fields: tools/manifest.mk)
LAB_05_TITLE := DDP as PyTorch builds it: gradient buckets overlapped with backward
LAB_05_STUDENT_C := buckets.c reducer.c scaler.c amp.c checkpoint.c
LAB_05_STUDENT_CU :=
LAB_05_STUDENT_H :=
LAB_05_KIT_C := kit.c
LAB_05_DRIVER_C := outputs.c train.c project.c
# The grader's files whose code answers this lab's tasks (its buckets, its loss scaler's update,
# lab05_ref.c; the checkpoint format's checks, lab05_ckpt.c): no release holds their source, only
# their objects (tools/release-tree.sh).
LAB_05_JUDGE_ANSWERS := grader/lab05_ref.c grader/lab05_ckpt.c
LAB_05_LAUNCH := common/bin/dlrun -n 4
LAB_05_RUN_ARGS := --bucket-mb 1
# make run's second run (the report's second headline and plot, amp.svg): part 2's fp16 with the loss scaler
# on the same 4 ranks, into run/05-ddp-amp/amp/. fp16 is emulated on the CPU (an fp16 step about 3x an fp32
# one; the underflow probe adds two more passes), so it trains 12 epochs (36 steps), not the fp32 run's 30, and
# probes every third step: 94 s on 4 ranks on the kit's 2-core test machine (about 2 minutes is the budget);
# make run's --quick: one epoch (3 steps), 8.5 s. --growth-interval 4: the scaler doubles the scale after 4
# good steps in a row (PyTorch's default, 2000, would never grow it in 36 steps: a flat line at 2^16 that hides
# the dynamic scaling the lab teaches), and an overflow halves it again.
LAB_05_RUN2 := amp
LAB_05_RUN2_ARGS := --amp fp16 --bucket-mb 1 --epochs 12 --probe-every 3 --growth-interval 4

# make run's report: the lab's headline (placeholders filled from summary.json; the syntax:
# tools/report.c) and its key plot, then what to see in each plot
LAB_05_KEY_PLOT := speedup
define LAB_05_HEADLINE
{buckets} gradient buckets, each allreduced while backward runs ({mode}, {ranks} ranks). Projected on
{projection.gpus} GPUs of {projection.profile}, the step runs at {projection.bucketed.speedup:x} the speed of
one GPU, with {projection.bucketed.exposed_share:pct} of it waiting for communication; one allreduce after
backward reaches {projection.ddp-flat.speedup:x}, and one per parameter {projection.per-param.speedup:x}. Test
accuracy {test_accuracy:pct} after {config.epochs:#epoch}.
endef
LAB_05_RUN2_KEY_PLOT := amp
define LAB_05_RUN2_HEADLINE
Part 2, mixed precision: --amp {amp} on {ranks} ranks for {steps:#step}. The loss scaler skipped
{amp_stats.skipped_steps} of them for an inf or NaN, and the loss scale ended at {amp_stats.final_scale:pow2}.
Over the {amp_stats.probed_steps:#step} probed, a mean {amp_stats.mean_underflow_share:pctg} of the gradient's
nonzero elements flushed to zero in fp16 and {amp_stats.mean_subnormal_share:pctg} were subnormal. Projected
on {projection.gpus} GPUs of {projection.profile}, the bucketed step runs at {projection.bucketed.speedup:x}
the speed of one fp16 GPU and {projection.bucketed.speedup_vs_one_fp32_gpu:x} that of one fp32 GPU. Test
accuracy {test_accuracy:pct} after {config.epochs:#epoch} (the fp32 run above: {^test_accuracy:pct} after
{^config.epochs:#epoch}).
endef
define LAB_05_CAPTION_speedup
Projected speedup over one GPU for the three ways to synchronise gradients, against the ideal; the key gives
each one's speedup and exposed communication at the most GPUs.
endef
define LAB_05_CAPTION_timeline
One steady step, twice. Top, projected on the profile's GPUs: each bucket's allreduce runs on the
communication stream from when backward has produced it; what runs past the end of backward (shaded) is the
exposed communication the step waits for. Bottom, measured on this machine's rank 0: when each allreduce was
launched (triangle) and when the wait for it returned (square).
endef
define LAB_05_CAPTION_sweep
Projected step time by bucket cap: small caps pay the ring's latency per bucket, one huge bucket starts only
after backward; the shaded caps are within 1% of the best.
endef
define LAB_05_CAPTION_training
Training loss and validation accuracy per epoch.
endef
define LAB_05_CAPTION_amp
The loss scale per step (doubled after 4 good steps in a row, halved at a skip), with any skipped step in red; below, at the probed steps and on a log axis, the
shares of the gradient that fp16 flushes to zero or keeps only as a subnormal, and their means (dashed).
endef
