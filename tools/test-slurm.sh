#!/usr/bin/env bash
# test-slurm.sh — the kit on a Slurm cluster, without one: dlrun inside an
# allocation (the variables set as sbatch sets them in a batch script) prints
# the srun step it would start, or mpirun over the allocation's hosts;
# stand-ins for srun and scontrol (tools/slurm/fake: they start every task
# on this machine with the variables srun gives it) show that each rank gets
# RANK/WORLD_SIZE/LOCAL_RANK/LOCAL_WORLD_SIZE, that dl_comm takes a step's
# task for one rank of several and a batch script's own process for a world
# of one, and run the sbatch scripts of tools/slurm/. Not tested here: a real
# cluster (srun's PMIx, NCCL across nodes).
set -u
# shellcheck source=tools/testlib.sh
. tools/testlib.sh
R=common/bin/dlrun
T=$B/tests/comm
FAKE=$PWD/tools/slurm/fake
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# a batch script's own environment on 2 nodes x 4 tasks (sbatch --nodes=2
# --ntasks-per-node=4): the allocation, SLURM_PROCID=0, no step id
unset SLURM_STEP_ID SLURM_STEPID SLURM_MPI_TYPE OMPI_COMM_WORLD_SIZE PMI_SIZE PMIX_RANK
batch() {
    env SLURM_JOB_ID=4242 SLURM_JOBID=4242 SLURM_JOB_NODELIST='node[01-02]' SLURM_NODELIST='node[01-02]' \
        SLURM_NNODES=2 SLURM_JOB_NUM_NODES=2 SLURM_NTASKS_PER_NODE=4 'SLURM_TASKS_PER_NODE=4(x2)' SLURM_NTASKS=8 \
        SLURM_NPROCS=8 SLURM_PROCID=0 SLURM_LOCALID=0 SLURM_NODEID=0 SLURM_SUBMIT_DIR="$PWD" "$@"
}

for f in tools/slurm/*.sbatch tools/slurm/*.sh "$FAKE"/*; do
    expect_rc 0 "bash -n $f" -- bash -n "$f"
done

# ---- dlrun --dry-run in an allocation ----
expect_rc 0 "in an allocation, dlrun --dry-run prints an srun step" -- batch "$R" --dry-run "$T" ops
expect_out "^srun --nodes=2 --ntasks=8 --ntasks-per-node=4 --kill-on-bad-exit=1 --cpu-bind=none --mpi=pmix " \
    "the allocation's 2 nodes x 4 tasks, a failed task ends the step, no binding, PMIx for MPI"
expect_out "OPENBLAS_NUM_THREADS=1.*OMP_NUM_THREADS=1" "several ranks: one BLAS thread each (--export)"
# shellcheck disable=SC2016 # a pattern of the printed command, not an expansion
expect_out 'RANK=\\\$SLURM_PROCID.*WORLD_SIZE=\\\$SLURM_NTASKS.*LOCAL_RANK=\\\$SLURM_LOCALID.*LOCAL_WORLD_SIZE=\\\$SLURM_NTASKS_PER_NODE' \
    "each rank's torchrun variables come from Slurm's"
expect_out "dlrun-rank $T ops \$" "the program and its arguments last, as given"
expect_rc 0 "-n 2 --timeout 60 in an allocation" -- batch "$R" --dry-run -n 2 --timeout 60 "$T" ops
expect_out "--ntasks=4 --ntasks-per-node=2 .*DL_COMM_TIMEOUT=60" "-n is per node (2 x 2 nodes); the timeout reaches every rank"
expect_rc 0 "SLURM_MPI_TYPE chooses srun's MPI plugin" -- batch env SLURM_MPI_TYPE=pmi2 "$R" --dry-run "$T" ops
if grep -q -- --mpi= <<<"$T_OUT"; then not_ok "with SLURM_MPI_TYPE dlrun still passes --mpi"; else ok "no --mpi: srun reads SLURM_MPI_TYPE"; fi
expect_rc 0 "tasks per node from SLURM_TASKS_PER_NODE alone" -- \
    batch env -u SLURM_NTASKS_PER_NODE 'SLURM_TASKS_PER_NODE=3(x2)' "$R" --dry-run "$T" ops
expect_out "--ntasks=6 --ntasks-per-node=3 " "3(x2): 3 per node"
expect_rc 2 "nodes with different task counts need -n" -- \
    batch env -u SLURM_NTASKS_PER_NODE SLURM_TASKS_PER_NODE=4,2 "$R" --dry-run "$T" ops
expect_out "different task counts \(SLURM_TASKS_PER_NODE=4,2\): give the ranks per node with -n N" "the reason and the fix"
expect_rc 0 "-n then overrides them" -- batch env -u SLURM_NTASKS_PER_NODE SLURM_TASKS_PER_NODE=4,2 "$R" --dry-run -n 2 "$T" ops
expect_rc 0 "outside an allocation dlrun stays on mpirun" -- env -u SLURM_JOB_ID "$R" --dry-run -n 2 "$T" ops
expect_out "mpirun -np 2 .*--mca pml ob1" "mpirun on one machine, as before"

# ---- --launcher mpirun: the allocation's hosts, from scontrol ----
expect_rc 0 "--launcher mpirun lists the hosts with scontrol" -- batch env PATH="$FAKE:$PATH" "$R" --dry-run --launcher mpirun "$T" ops
expect_out "mpirun --host node01:4\\\\?,node02:4 --npernode 4 -np 8 --bind-to none" "node[01-02]: 4 slots on each of node01 and node02"
if grep -q "pml ob1" <<<"$T_OUT"; then not_ok "two nodes but --mca pml ob1 forced"; else ok "two nodes: Open MPI keeps its own interconnect choice (no pml ob1)"; fi
expect_rc 0 "--launcher mpirun on a one-node allocation" -- \
    batch env PATH="$FAKE:$PATH" SLURM_JOB_NODELIST=node07 SLURM_NNODES=1 SLURM_JOB_NUM_NODES=1 "$R" --dry-run --launcher=mpirun -n 2 "$T" ops
expect_out "mpirun --host node07:2 --npernode 2 -np 2 .*--mca pml ob1" "one node: ob1, as on any single machine"
if command -v scontrol >/dev/null 2>&1; then
    ok "# SKIP the missing-scontrol check: a real scontrol is installed"
else
    expect_rc 127 "--launcher mpirun without scontrol" -- batch "$R" --dry-run --launcher mpirun "$T" ops
    expect_out "scontrol not found" "the missing command is named"
fi

# ---- bad input ----
expect_rc 2 "--launcher with an unknown value" -- batch "$R" --launcher slurm "$T" ops
expect_out "--launcher 'slurm': expected auto, srun or mpirun" "the flag and the value are named"
expect_rc 2 "--launcher srun outside an allocation" -- env -u SLURM_JOB_ID "$R" --launcher srun "$T" ops
expect_out "not inside a Slurm allocation" "it says why"
printf 'node01\n' >"$tmp/hosts"
expect_rc 2 "--launcher srun with a hostfile" -- batch "$R" --launcher srun --hostfile "$tmp/hosts" "$T" ops
expect_out "--hostfile '.*' is mpirun's" "the conflict is named"
expect_rc 2 "a bad -n in an allocation" -- batch "$R" -n x "$T" ops
expect_out "-n 'x': expected a positive number of ranks" "the flag and the value are named"

# ---- the step itself, under the stand-in srun ----
# shellcheck disable=SC2016 # the rank's own bash expands them
expect_rc 0 "every task of the step gets its torchrun variables" -- batch env PATH="$FAKE:$PATH" "$R" -n 2 \
    bash -c 'echo "R=$RANK W=$WORLD_SIZE L=$LOCAL_RANK LW=$LOCAL_WORLD_SIZE B=$OPENBLAS_NUM_THREADS"'
for r in 0 1 2 3; do
    expect_out "R=$r W=4 L=$((r % 2)) LW=2 B=1" "rank $r of 4 (2 nodes x 2)"
done
expect_rc 0 "a batch script's own process is a world of one (SLURM_NTASKS=8, no step)" -- batch "$T" ops
expect_out "1 rank\\(s\\), backend self" "no MPI, one rank"
# srun without MPI's PMI (the stand-in has none): this Open MPI refuses by
# itself where it sees srun's SLURM_NODELIST; an MPI that would start alone
# instead is refused by dl_comm (here: Open MPI without SLURM_NODELIST)
expect_rc 1 "srun without MPI's PMI: Open MPI refuses every task" -- \
    batch env PATH="$FAKE:$PATH" SLURM_JOB_NODELIST=n1 SLURM_NODELIST=n1 SLURM_NNODES=1 SLURM_JOB_NUM_NODES=1 \
    "$R" -n 2 "$T" ops
expect_rc 1 "srun without MPI's PMI, an MPI that starts alone: dl_comm refuses every task" -- \
    batch env -u SLURM_NODELIST PATH="$FAKE:$PATH" SLURM_JOB_NODELIST=n1 SLURM_NNODES=1 SLURM_JOB_NUM_NODES=1 \
    "$R" -n 2 "$T" ops
expect_out "srun started 2 tasks, but MPI sees a world of 1: .*srun --mpi=pmix" "the reason, and srun's --mpi"
expect_cmp "$(grep -c 'srun started 2 tasks' <<<"$T_OUT")" == 2 "tasks that said so"
if [ -x "$B/labs/lab01" ]; then
    expect_rc 2 "a single-process lab started by srun -n 2 refuses" -- batch env PATH="$FAKE:$PATH" srun -n 2 "$B/labs/lab01" --epochs 1 --out "$tmp/l1"
    expect_out "this lab runs as one process, but srun started it as one of 2 tasks" "it says so"
fi

# ---- the sbatch scripts, run as sbatch would (batch environment, fake srun) ----
# (lab05.sbatch ships from the lab 05 release on: a release staged earlier has none)
if [ -f tools/slurm/lab05.sbatch ]; then
cat >"$tmp/lab05" <<'SH'
#!/usr/bin/env bash
echo "lab05 rank $RANK/$WORLD_SIZE local $LOCAL_RANK/$LOCAL_WORLD_SIZE args: $*"
SH
chmod +x "$tmp/lab05"
expect_rc 0 "tools/slurm/lab05.sbatch: 8 ranks on 2 nodes x 4" -- batch env PATH="$FAKE:$PATH" \
    FAKE_SRUN_LOG="$tmp/srun.log" DLRUN="$tmp/lab05" OUT="$tmp/out" bash tools/slurm/lab05.sbatch --epochs 1
expect_out "lab05 rank 7/8 local 3/4 args: --device cuda --out $tmp/out --epochs 1" "the last rank, its GPU flag, its output folder, extra flags"
expect_cmp "$(grep -c '^lab05 rank' <<<"$T_OUT")" == 8 "ranks started"
if grep -q -- "^--nodes=2 --ntasks=8 --ntasks-per-node=4 --kill-on-bad-exit=1" "$tmp/srun.log"; then
    ok "the script's step is one srun over the allocation"
else
    not_ok "srun was called as: $(cat "$tmp/srun.log" 2>/dev/null)"
fi

# the README shows lab05.sbatch as it is (its comments aside)
readme=$(awk '/^Lab 05 on 2 nodes/ { f = 1 } f && /^```bash$/ { g = 1; next } g && /^```$/ { exit } g' README.md)
if [ -n "$readme" ] && [ "$readme" = "$(grep -v '^#\( \|$\)' tools/slurm/lab05.sbatch)" ]; then
    ok "the README's lab05.sbatch is tools/slurm/lab05.sbatch"
else
    not_ok "the README's lab05.sbatch differs from tools/slurm/lab05.sbatch (its lines that are not comments)"
fi
fi

# (lab07.sbatch: 8 stages need 8 layers, which it asks for)
if [ -f tools/slurm/lab07.sbatch ]; then
    cat >"$tmp/lab07" <<'SH'
#!/usr/bin/env bash
echo "lab07 rank $RANK/$WORLD_SIZE local $LOCAL_RANK/$LOCAL_WORLD_SIZE args: $*"
SH
    chmod +x "$tmp/lab07"
    expect_rc 0 "tools/slurm/lab07.sbatch: 8 ranks on 2 nodes x 4" -- batch env PATH="$FAKE:$PATH" \
        FAKE_SRUN_LOG="$tmp/srun7.log" DLRUN="$tmp/lab07" OUT="$tmp/out7" bash tools/slurm/lab07.sbatch --epochs 1
    expect_out "lab07 rank 7/8 local 3/4 args: --device cuda --hidden 128,64,128,64,128,64,128 --out $tmp/out7 --epochs 1" \
        "the last rank, an 8-layer model for 8 stages, its output folder, extra flags"
fi

# gradebook.sbatch's slices, graded by a stand-in that grades like
# tools/gradebook.sh's GB_SLICE (its own slicing is checked below), then merged
mkdir -p "$tmp/subs"/{ann,bob,cy,dee,eve}
cat >"$tmp/grade" <<'SH'
#!/usr/bin/env bash
# stand-in for tools/gradebook.sh: GB_SLICE's selection, one row per student
set -eu
i=${GB_SLICE%/*} k=${GB_SLICE#*/} p=-1
mkdir -p "$GB_OUT/lab$2"
echo "student,score,max_score,status" >"$GB_OUT/lab$2.csv"
for s in "$1"/*/; do
    p=$((p + 1))
    [ $((p % k)) -eq "$i" ] || continue
    name=$(basename "$s")
    echo "$name,$((p * 10)),95,graded" >>"$GB_OUT/lab$2.csv"
    mkdir -p "$GB_OUT/lab$2/$name" && echo '{}' >"$GB_OUT/lab$2/$name/results.json"
done
SH
chmod +x "$tmp/grade"
for i in 1 2 3; do # --array=1-3: tasks 1..3, slices 0..2
    expect_rc 0 "gradebook.sbatch as array task $i of 1-3" -- batch env GB_ROOT="$tmp/gb" GRADEBOOK="$tmp/grade" \
        SLURM_ARRAY_TASK_ID=$i SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_COUNT=3 bash tools/slurm/gradebook.sbatch "$tmp/subs" 01
done
expect_rc 0 "gradebook-merge.sh: one CSV" -- env GB_ROOT="$tmp/gb" bash tools/slurm/gradebook-merge.sh 01
expect_out "3 slice\\(s\\), 5 submission\\(s\\)" "every submission once"
printf 'student,score,max_score,status\nann,0,95,graded\nbob,10,95,graded\ncy,20,95,graded\ndee,30,95,graded\neve,40,95,graded\n' >"$tmp/want.csv"
if cmp -s "$tmp/want.csv" "$tmp/gb/lab01.csv"; then ok "one header, the rows by student"; else
    not_ok "merged CSV differs:"; diff "$tmp/want.csv" "$tmp/gb/lab01.csv" | sed 's/^/    | /'; fi
expect_file "$tmp/gb/lab01/eve/results.json" "each student's folder beside the CSV"
rm "$tmp/gb/slices/lab01/1/lab01.csv"
expect_rc 1 "a slice whose task did not finish is refused" -- env GB_ROOT="$tmp/gb" bash tools/slurm/gradebook-merge.sh 01
expect_out "slice 1 has no lab01.csv" "the slice is named"
expect_rc 2 "gradebook.sh refuses a bad GB_SLICE" -- env GB_SLICE=3/3 bash tools/gradebook.sh "$tmp/subs" 01
expect_out "GB_SLICE '3/3': expected I/K with 0 <= I < K" "the variable and its value are named"
expect_rc 2 "gradebook.sbatch outside an array job" -- batch bash tools/slurm/gradebook.sbatch "$tmp/subs" 01
expect_out "not an array task: submit with sbatch --array=0-K-1" "it says how to submit it"
# the GPU gradebook: the GPU tiers only, into its own folder (tools/gradebook-fold.sh then folds it in)
printf '#!/usr/bin/env bash\necho "tiers=$GR_TIERS out=$GB_OUT args=$*"\n' >"$tmp/gpugrade"
chmod +x "$tmp/gpugrade"
expect_rc 0 "gradebook-gpu.sbatch" -- batch env -u GR_TIERS -u GB_OUT GRADEBOOK="$tmp/gpugrade" \
    bash tools/slurm/gradebook-gpu.sbatch "$tmp/subs" 05
expect_out "tiers=gpu1,gpu4 out=build/gradebook-gpu args=$tmp/subs 05" "it grades the GPU tiers into build/gradebook-gpu"
grep -q '^#SBATCH --gpus-per-node=4' tools/slurm/gradebook-gpu.sbatch && ok "it asks for 4 GPUs per node" ||
    not_ok "gradebook-gpu.sbatch asks for no GPUs"
finish
