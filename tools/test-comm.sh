#!/usr/bin/env bash
# test-comm.sh — dl_comm and dlrun under real mpirun: every operation exact on
# 1, 2, 3 and 4 ranks (oversubscribed here), a failing rank and a stuck rank
# each stop the whole job with a non-zero status in bounded time, a rank
# that fails before its first collective stops it at once (not at the
# timeout), two ranks on one GPU are refused by every rank together (a
# simulated GPU count stands in for the GPU here), and dlrun's own behaviour.
# The time bounds below are liveness bounds far under DL_COMM_TIMEOUT, not
# speed assertions.
set -u
. tools/testlib.sh
unset SLURM_JOB_ID SLURM_JOBID # mpirun on this machine, also in a Slurm job (test-slurm.sh tests srun)
R=common/bin/dlrun
T=$B/tests/comm
for n in 1 2 3 4; do
    expect_rc 0 "dl_comm operations on $n rank(s)" -- "$R" -n "$n" "$T" ops
    expect_out "ok test_comm ops: $n rank\\(s\\), backend mpi, 0 failure" "every result and counter exact on $n rank(s)"
done
expect_rc 0 "a program started without dlrun is a world of one" -- "$T" ops
expect_out "1 rank\\(s\\), backend self" "without a launcher: backend self"
# a launcher the kit cannot join (torchrun's WORLD_SIZE): MPI sees one rank, and says so instead of training alone
expect_rc 1 "a rank started by a launcher MPI does not know is refused" -- env WORLD_SIZE=2 "$T" ops
expect_out "started as one of 2 ranks \\(WORLD_SIZE=2\\), but MPI sees a world of 1" "… naming the variable"
start=$(date +%s)
expect_rc 3 "a rank that exits with status 3 stops the job with its status" -- "$R" -n 3 "$T" fail
expect_out "rank 1: failing on purpose" "the failing rank says so"
expect_cmp "$(($(date +%s) - start))" '<' 60 "the others did not hang (seconds)"
start=$(date +%s)
expect_rc 124 "a rank that stops answering: the others time out and stop the job" -- "$R" -n 3 --timeout 3 "$T" hang
expect_out "timed out after 3 s waiting for the other ranks" "the timeout names the call and the reason"
expect_cmp "$(($(date +%s) - start))" '<' 60 "the hang was bounded (seconds)"
# the way a driver stops (dl_rank_exit) before any collective: the others are
# already waiting in one, and must be stopped at once, not by the 120 s timeout
start=$(date +%s)
expect_rc 2 "a rank failing before its first collective stops the job with its status" -- "$R" -n 3 --timeout 120 "$T" early
expect_out "rank 2: fatal: test_comm early: rank 2: failing on purpose before the first collective" \
    "the failing rank's message reaches the output"
expect_cmp "$(($(date +%s) - start))" '<' 20 "it ended long before the 120 s timeout (seconds)"

# one device per rank, agreed before any opens (dl_rank_device). Here no GPU
# answers, so DL_TEST_SIMULATED_GPUS (a test hook, read only where no GPU
# answers) gives this machine GPUs to claim; opening one still fails.
expect_rc 0 "three ranks on the CPU agree" -- "$R" -n 3 --timeout 120 "$T" claim cpu
expect_out "ok test_comm claim: rank 2 on cpu" "every rank opened the CPU"
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q GPU; then
    ok "# SKIP the simulated-GPU checks: a GPU answers here (tools/test-gpu.sh refuses two ranks on it)"
else
    for spec in cuda cuda:0; do
        start=$(date +%s)
        expect_rc 2 "two ranks on one GPU (--device $spec, 1 simulated GPU) are refused" -- \
            env DL_TEST_SIMULATED_GPUS=1 "$R" -n 2 --timeout 120 "$T" claim "$spec"
        expect_out "rank [01]: fatal: test_comm claim: ranks 0 and 1 (would )?both use GPU 0 on host .*NCCL needs one GPU per rank" \
            "the refusal names both ranks, the GPU and the host ($spec)"
        expect_cmp "$(($(date +%s) - start))" '<' 20 "refused at once, not at the 120 s timeout (seconds)"
    done
    expect_rc 2 "three ranks on two GPUs (--device cuda) are refused" -- \
        env DL_TEST_SIMULATED_GPUS=2 "$R" -n 3 --timeout 120 "$T" claim cuda
    expect_out "ranks 0 and 2 would both use GPU 0 on host .*: it has 2 GPU\(s\) for 3 ranks" "which two ranks, which GPU"
    # shellcheck disable=SC2016 # $RANK and $@ are the rank's, expanded by its own bash
    expect_rc 2 "ranks split between a GPU and the CPU are refused" -- env DL_TEST_SIMULATED_GPUS=1 "$R" -n 2 \
        --timeout 120 bash -c 'if [ "$RANK" = 0 ]; then d=cpu; else d=cuda:0; fi; exec "$0" claim "$d"' "$T"
    expect_out "rank 1 uses cuda:0 but rank 0 the CPU" "the split is named"
    start=$(date +%s)
    expect_rc 2 "one simulated GPU per rank passes the check; opening it fails on every rank" -- \
        env DL_TEST_SIMULATED_GPUS=2 "$R" -n 2 --timeout 120 "$T" claim cuda
    expect_out "fatal: test_comm claim: --device cuda: (no CUDA GPU answers|this build has no CUDA)" \
        "the failure to open is each rank's own, and says why"
    expect_cmp "$(($(date +%s) - start))" '<' 20 "the job stopped at once (seconds)"
fi

expect_rc 0 "dlrun --dry-run prints the mpirun line" -- "$R" --dry-run -n 8 "$T" ops
expect_out "mpirun -np 8 --oversubscribe" "more ranks than cores: --oversubscribe"
expect_out "OPENBLAS_NUM_THREADS=1" "several ranks: one BLAS thread each"
[ "$(id -u)" -eq 0 ] && { grep -q OMPI_ALLOW_RUN_AS_ROOT=1 <<<"$T_OUT" && ok "as root: the run-as-root variables" || not_ok "as root, dlrun lacks OMPI_ALLOW_RUN_AS_ROOT"; }
expect_rc 0 "each rank sees RANK, WORLD_SIZE and LOCAL_RANK" -- "$R" -n 2 bash -c 'echo "R=$RANK W=$WORLD_SIZE L=$LOCAL_RANK"'
expect_out "R=1 W=2 L=1" "rank 1 of 2 sees its variables"
expect_rc 2 "dlrun -n 0" -- "$R" -n 0 "$T"
expect_out "expected a positive number of ranks" "a bad -n is named"
expect_rc 2 "dlrun with a missing hostfile" -- "$R" --hostfile /nonexistent -n 2 "$T"
expect_rc 127 "dlrun without mpirun says what to install" -- env PATH=/nonexistent /bin/bash "$R" -n 2 "$T"
expect_out "mpirun not found: install Open MPI" "the missing mpirun is named"
finish
