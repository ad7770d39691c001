#!/usr/bin/env bash
# test-comm.sh — dl_comm and dlrun under real mpirun: every operation exact on
# 1, 2, 3 and 4 ranks (oversubscribed here), a failing rank and a stuck rank
# each stop the whole job with a non-zero status in bounded time, a rank
# that fails before its first collective stops it at once (not at the
# timeout), and dlrun's own behaviour. The time bounds below are liveness
# bounds far under DL_COMM_TIMEOUT, not speed assertions.
set -u
. tools/testlib.sh
R=common/bin/dlrun
T=$B/tests/comm
for n in 1 2 3 4; do
    expect_rc 0 "dl_comm operations on $n rank(s)" -- "$R" -n "$n" "$T" ops
    expect_out "ok test_comm ops: $n rank\\(s\\), backend mpi, 0 failure" "every result and counter exact on $n rank(s)"
done
expect_rc 0 "a program started without dlrun is a world of one" -- "$T" ops
expect_out "1 rank\\(s\\), backend self" "without a launcher: backend self"
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

expect_rc 0 "dlrun --dry-run prints the mpirun line" -- "$R" --dry-run -n 8 "$T" ops
expect_out "mpirun -np 8 --oversubscribe" "more ranks than cores: --oversubscribe"
expect_out "OPENBLAS_NUM_THREADS=1" "several ranks: one BLAS thread each"
[ "$(id -u)" -eq 0 ] && { printf '%s\n' "$T_OUT" | grep -q OMPI_ALLOW_RUN_AS_ROOT=1 && ok "as root: the run-as-root variables" || not_ok "as root, dlrun lacks OMPI_ALLOW_RUN_AS_ROOT"; }
expect_rc 0 "each rank sees RANK, WORLD_SIZE and LOCAL_RANK" -- "$R" -n 2 bash -c 'echo "R=$RANK W=$WORLD_SIZE L=$LOCAL_RANK"'
expect_out "R=1 W=2 L=1" "rank 1 of 2 sees its variables"
expect_rc 2 "dlrun -n 0" -- "$R" -n 0 "$T"
expect_out "expected a positive number of ranks" "a bad -n is named"
expect_rc 2 "dlrun with a missing hostfile" -- "$R" --hostfile /nonexistent -n 2 "$T"
expect_rc 127 "dlrun without mpirun says what to install" -- env PATH=/nonexistent /bin/bash "$R" -n 2 "$T"
expect_out "mpirun not found: install Open MPI" "the missing mpirun is named"
finish
