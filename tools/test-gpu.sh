#!/usr/bin/env bash
# test-gpu.sh — `make test-gpu`: the whole GPU tier in one command, under five
# minutes on one GPU. Exits 77 (skipped) where no CUDA GPU answers: it never
# pretends to have passed.
#   1 common/ on CUDA against the CPU (build/tests/gpu)
#   1b dl_comm on GPU buffers over NCCL, one rank per GPU; two ranks on one GPU
#      refused by every rank at once (as --device cuda and as cuda:0)
#   2 each lab's gpu1/gpu4 grader items on the reference solution (with the
#     cpu items they need, run first: grader/plan.h)
#   3 each lab's driver on --device cuda, end to end
# Without a GPU, steps 1 and 1b (and lab 05's NCCL path) run on the emulated
# CUDA device instead: tools/test-emu.sh, `make test-gpu-emu`, part of `make test`.
set -u
B=${B:-build}
J=$B/tools/jsonq
out=$B/test-gpu
mkdir -p "$out"
if ! ls "$B"/obj/common/cuda/*.o >/dev/null 2>&1; then
    echo "make test-gpu: this build has no CUDA (nvcc was not found); nothing to test" >&2
    echo "(make test-gpu-emu runs the GPU tier of common/ on the emulated CUDA device, without nvcc or a GPU)" >&2
    exit 77
fi
if ls "$B"/obj/common/cuda/*.cu.cc >/dev/null 2>&1; then # (cu2cc's rewrites: built for the emulated device)
    echo "make test-gpu: $B is the emulated-CUDA build (make EMU=1): its GPU tier is make test-gpu-emu" >&2
    exit 77
fi
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L 2>/dev/null | grep -q GPU; then
    echo "make test-gpu: SKIPPED — no CUDA GPU answers here (nvidia-smi lists none)." >&2
    echo "The GPU tier runs where a GPU exists; its points are shown as SKIPPED by the grader." >&2
    echo "(make test-gpu-emu runs its common/ part and lab 05's NCCL path on the emulated CUDA device.)" >&2
    exit 77
fi
nvidia-smi -L
failed=()
echo "=== 1 common/ CUDA vs CPU ==="
"$B/tests/gpu" || failed+=("common gpu tests")
ngpu=$(nvidia-smi -L | grep -c GPU)
echo "=== 1b dl_comm on GPU buffers (NCCL), $ngpu rank(s) ==="
common/bin/dlrun -n "$ngpu" "$B/tests/comm" cuda || failed+=("comm on cuda")
# Two ranks on one GPU, on any number of GPUs: cuda:0 on two ranks, and
# --device cuda (cuda:LOCAL_RANK) with one rank more than there are GPUs. Every
# rank must refuse at once (dl_rank_device agrees on the devices before any is
# opened), naming both ranks, the GPU and the host; the 60 s timeout must not
# be what ends it (the bound below is liveness, not speed).
for c in "2 cuda:0" "$((ngpu + 1)) cuda"; do
    n=${c%% *} spec=${c#* }
    t0=$SECONDS
    msg=$(common/bin/dlrun -n "$n" --timeout 60 "$B/tests/comm" cuda "$spec" 2>&1) # not $out: that is the output directory
    rc=$? secs=$((SECONDS - t0))
    said=$(printf '%s\n' "$msg" | grep -m1 -Eo 'ranks [0-9]+ and [0-9]+ (would )?both use GPU [0-9]+ on host [^:]*')
    if [ "$rc" -ne 0 ] && [ -n "$said" ] && [ "$secs" -lt 20 ]; then
        echo "ok: $n ranks with --device $spec refused in $secs s (exit $rc): $said"
    else
        echo "$n ranks with --device $spec were not refused clearly and at once (exit $rc after $secs s):" >&2
        printf '%s\n' "$msg" | tail -5 >&2
        failed+=("two ranks on one GPU ($spec)")
    fi
done
echo "=== 2 grader gpu tiers on the reference ==="
for dir in $(bash tools/lab.sh list); do
    id=${dir%%-*}
    [ -x "$B/grader/lab$id" ] || continue
    GR_TIERS=gpu1,gpu4 "$B/grader/lab$id" --impl solutions --json "$out/grade-$id.json" \
        || failed+=("lab $id gpu grader")
done
# The lessons' truth on the GPU, from a driver's summary.json device_io (the
# kit's counters): the rows went up once, an epoch uploads less than they
# are (its order), and a step waits for the device at most once and
# allocates nothing. A summary without device_io is not checked here.
device_io() { # SUMMARY LABEL
    local S=$1 what=$2 up ep st al
    up=$($J "$S" device_io.setup.h2d_bytes 2>/dev/null) || return 0
    ep=$($J "$S" device_io.per_epoch.h2d_bytes) st=$($J "$S" device_io.per_step.syncs 2>/dev/null || echo 0)
    al=$($J "$S" device_io.per_step.allocs 2>/dev/null || echo 0)
    if awk -v u="$up" -v e="$ep" -v s="$st" -v a="$al" 'BEGIN { exit !(u > 0 && e < u && s <= 1 && a == 0) }'; then
        echo "ok: $what: data uploaded once ($up bytes), $ep bytes an epoch, $st host wait(s) and $al allocations a step"
    else
        echo "$what: setup $up bytes, $ep an epoch, $st host wait(s) a step (at most 1), $al allocations (0)" >&2
        failed+=("$what device_io")
    fi
}
echo "=== 3 drivers on the GPU ==="
for dir in $(bash tools/lab.sh list); do
    id=${dir%%-*}
    run_args=$(bash tools/lab.sh get "$id" RUN_ARGS)
    launcher=$(bash tools/lab.sh get "$id" LAUNCH)
    [ -n "$launcher" ] && launcher="common/bin/dlrun -n $ngpu" # one rank per GPU here
    # shellcheck disable=SC2086
    if $launcher "$B/solutions/lab$id" --device cuda --out "$out/$dir" --plot png --quiet $run_args; then
        S=$out/$dir/summary.json
        echo "lab $id on $($J "$S" device): $($J "$S" test_accuracy >/dev/null 2>&1 && echo "test accuracy $($J "$S" test_accuracy)" || echo "result $($J "$S" result)")"
        device_io "$S" "lab $id on cuda"
    else
        failed+=("lab $id driver on cuda")
    fi
    # a lab's second run (make run's LAB_NN_RUN2, e.g. lab 05's --amp fp16), on the GPU too
    sub=$(bash tools/lab.sh get "$id" RUN2)
    [ -n "$sub" ] || continue
    run2_args=$(bash tools/lab.sh get "$id" RUN2_ARGS)
    # shellcheck disable=SC2086
    if $launcher "$B/solutions/lab$id" --device cuda --out "$out/$dir/$sub" --plot png --quiet $run2_args; then
        echo "lab $id ($sub) on $($J "$out/$dir/$sub/summary.json" device): test accuracy $($J "$out/$dir/$sub/summary.json" test_accuracy)"
        device_io "$out/$dir/$sub/summary.json" "lab $id ($sub) on cuda"
    else
        failed+=("lab $id $sub driver on cuda")
    fi
done
# lab 01's mini-batches: gathered on the device by index, one wait a step
# (its default run is full batch, one step an epoch)
if [ -x "$B/solutions/lab01" ]; then
    if "$B/solutions/lab01" --device cuda --out "$out/01-logreg-batch32" --plot none --quiet --batch-size 32 \
        --epochs 20 --tol 0; then
        device_io "$out/01-logreg-batch32/summary.json" "lab 01 --batch-size 32 on cuda"
    else
        failed+=("lab 01 --batch-size 32 on cuda")
    fi
fi
if [ ${#failed[@]} -eq 0 ]; then
    echo "make test-gpu: all passed"
else
    echo "make test-gpu: FAILED: ${failed[*]}"
    exit 1
fi
