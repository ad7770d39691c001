# labs/04-ring-allreduce/lab.mk — lab 04's manifest: what the kit needs to know of it (the fields: tools/manifest.mk)
LAB_04_TITLE := the ring AllReduce by hand, measured like nccl-tests
LAB_04_STUDENT_C := naive.c ring.c chunked.c
LAB_04_STUDENT_CU :=
LAB_04_STUDENT_H :=
LAB_04_KIT_C := kit.c outputs.c
# The grader's files whose code answers this lab's tasks (its segment arithmetic, lab04_dump.c):
# no release holds their source, only their objects (tools/release-tree.sh).
# The kit's own ring (dl/ring.h, lab 07 moves activations with it) is tasks 2 to 4: a release
# staged for this lab or an earlier one ships its object only (tools/release-tree.sh).
LAB_04_KIT_ANSWERS := common/src/ring.c
LAB_04_JUDGE_ANSWERS := grader/lab04_dump.c
LAB_04_LAUNCH := common/bin/dlrun -n 4
LAB_04_RUN_ARGS := -b 8 -e 16M -f 4

# make run's report: the lab's headline (placeholders filled from summary.json; the syntax:
# tools/report.c) and its key plot, then what to see in each plot
LAB_04_KEY_PLOT := busbw
define LAB_04_HEADLINE
The ring allreduce on {ranks} ranks ({backend}, {device}) moves {algos.ring.large_busbw_gbs:g} GB/s of bus
bandwidth on the large messages (median), {algos.ring.large_busbw_gbs/algos.library.large_busbw_gbs:pct} of
the library's {algos.library.large_busbw_gbs:g} GB/s; the naive allreduce moves
{algos.naive.large_busbw_gbs:g} GB/s. The correctness pass: {result}, {wrong} wrong.
endef
define LAB_04_CAPTION_busbw
Bus bandwidth by message size for each algorithm (points: measured) and the α–β model fitted to each (dashed,
over every size: where it leaves the points, one latency and one bandwidth do not describe the algorithm);
the key gives the large messages' measured busbw.
endef
define LAB_04_CAPTION_time
Time per call by message size, log–log: flat where latency dominates, rising with a slope of one where
bandwidth does.
endef
