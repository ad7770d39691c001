#!/usr/bin/env bash
# test-emu.sh — the kit's GPU tier on the emulated CUDA device (common/emu), in
# `make test`: every CUDA path of common/ runs without a GPU. It builds the
# kit for the emulated device (make EMU=1: the library, its GPU tests, dl_comm's
# test and lab 05's reference) into $EB (default $B/emucuda), then:
#   1 common/ on the emulated device against the CPU paths, as make test-gpu's
#     step 1 does on a GPU (the same tests and tolerances: test_gpu.c says why
#     they cover the emulator), and the kit's kernels under checked launches
#     (five thread and block orders, the same bits, no finding)
#   2 dl_comm on device buffers over the emulated NCCL, two ranks on two
#     emulated devices (DL_EMU_DEVICES=2; make test-gpu's step 1b), and two
#     ranks on one refused by every rank at once, as on GPUs
#   3 lab 05's NCCL path end to end: the reference on two ranks with --device
#     emu, fp32 and --amp fp16, against the same runs on the CPU; 3b lab 07's
#     (the ring of tensor parallelism and the pipeline's messages over NCCL,
#     device buffers throughout) on four emulated devices against the CPU
#   4 the device flags: auto is the CPU in the emulated build, cuda and an
#     ordinal it lacks are refused (exit 2); the normal build refuses emu
#     (exit 2), naming make EMU=1
#   5 labs 01 and 02 graded without a GPU: make grade builds the code under
#     test for the emulated device too and grades task 5's CUDA items there
#     (GR_CUDA=emu, so also where a GPU answers): the references full marks,
#     the CUDA items marked "emulated CUDA" in the table and results.json, the
#     skeletons 0 on them ("not implemented yet"); each grading timed (the
#     mistakes a GPU hides are grader/mutants/0[12]-cuda-*.diff, in the mutant
#     step)
# Speed is never checked: the emulator's times are the CPU's (timings live in
# make bench and on a GPU).
set -u
. tools/testlib.sh
unset SLURM_JOB_ID SLURM_JOBID # mpirun on this machine, also in a Slurm job
EB=${EB:-$B/emucuda}
R=common/bin/dlrun
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT

t0=$SECONDS
if ! make -s --no-print-directory EMU=1 B="$EB" -j2 "$EB/tests/gpu" "$EB/tests/comm" "$EB/solutions/lab05" \
    "$EB/solutions/lab07" \
    >"$tmp/build.log" 2>&1; then
    not_ok "the kit builds for the emulated device (make EMU=1 B=$EB)"
    tail -n 20 "$tmp/build.log" | sed 's/^/    | /'
    finish
    exit 1
fi
ok "the kit builds for the emulated device (make EMU=1 B=$EB, $((SECONDS - t0)) s)"

echo "# 1 common/ on the emulated device against the CPU"
expect_rc 0 "the GPU tier of common/ (tests/gpu) on the emulated device" -- "$EB/tests/gpu"
expect_out "^device: emu:0 \\(emulated CUDA" "it ran on the emulated device, and says so"
expect_out "Checks: 18, Failures: 0, Errors: 0" "all 18 checks ran, the checked launches of the kit's kernels included"

echo "# 2 dl_comm on device buffers over the emulated NCCL"
DL_EMU_DEVICES=2 expect_rc 0 "two ranks on two emulated devices" -- "$R" -n 2 --timeout 60 "$EB/tests/comm" cuda emu
expect_out "ok test_comm cuda: 2 rank\\(s\\), backend nccl, 0 failure" \
    "every operation exact on device buffers, over NCCL (the emulator's, on dl_comm's MPI)"
for c in "2 emu:0" "3 emu"; do
    n=${c%% *} spec=${c#* }
    start=$SECONDS
    DL_EMU_DEVICES=2 expect_rc 2 "$n ranks with --device $spec on 2 emulated devices are refused" -- \
        "$R" -n "$n" --timeout 60 "$EB/tests/comm" cuda "$spec"
    expect_out "ranks [0-9]+ and [0-9]+ (would )?both use emulated GPU [0-9]+ on host .*DL_EMU_DEVICES=$n" \
        "the refusal names both ranks, the emulated GPU, the host and DL_EMU_DEVICES=$n"
    expect_cmp "$((SECONDS - start))" '<' 20 "every rank refused at once, not at the timeout (seconds)"
done

echo "# 3 lab 05 on two emulated devices: NCCL, against the CPU"
small="--data fashion_mnist:train=7000,test=500 --hidden 64,64,64 --batch-size 128 --epochs 2 --base-batch 128"
for amp in "" "--amp fp16"; do
    tag=${amp:+-fp16}
    # shellcheck disable=SC2086
    DL_EMU_DEVICES=2 expect_rc 0 "lab 05's reference on 2 ranks, --device emu ${amp:-fp32}" -- \
        "$R" -n 2 "$EB/solutions/lab05" $small $amp --device emu --plot none --quiet --out "$tmp/emu$tag"
    # shellcheck disable=SC2086
    expect_rc 0 "the same on the CPU" -- "$R" -n 2 "$EB/solutions/lab05" $small $amp --device cpu --plot none --quiet \
        --out "$tmp/cpu$tag"
    E=$tmp/emu$tag/summary.json C=$tmp/cpu$tag/summary.json
    if [ -s "$E" ] && [ -s "$C" ]; then
        [ "$($J "$E" backend)/$($J "$E" device_kind)" = nccl/emu ] && ok "backend nccl on the emulated device" ||
            not_ok "backend $($J "$E" backend), device kind $($J "$E" device_kind): expected nccl on emu"
        case $($J "$E" device) in "emu:0 (emulated CUDA"*) ok "summary.json says emulated CUDA" ;;
        *) not_ok "summary.json's device is '$($J "$E" device)'" ;; esac
        # the same step on both: the element-wise kernels are the CPU's functions, the GEMMs the
        # CPU's BLAS in another order, so the loss agrees to float rounding, not bit for bit
        le=$($J "$E" final_loss) lc=$($J "$C" final_loss)
        expect_cmp "$(awk -v a="$le" -v b="$lc" 'BEGIN { d = a - b; print (d < 0 ? -d : d) / b }')" '<=' 1e-5 \
            "final loss on emu $le, on the CPU $lc: within 1e-5 relative"
        ae=$($J "$E" test_accuracy) ac=$($J "$C" test_accuracy)
        expect_cmp "$(awk -v a="$ae" -v b="$ac" 'BEGIN { d = a - b; print d < 0 ? -d : d }')" '<=' 0.004 \
            "test accuracy on emu $ae, on the CPU $ac: within 2 of 500 rows (a near tie may flip)"
        expect_cmp "$($J "$E" param_diff_across_ranks)" == 0 "the replicas on the two emulated devices are equal"
        expect_cmp "$($J "$E" device_io.per_step.allocs)" == 0 "a step allocates nothing on the device"
        expect_cmp "$($J "$E" device_io.per_step.syncs)" '<=' 1 "a step waits for the device at most once"
    else
        not_ok "no summary.json from the emu or the CPU run"
    fi
done

echo "# 3b lab 07 on four emulated devices: the ring and the pipeline's messages over NCCL, against the CPU"
small7="--data fashion_mnist:train=1000,test=200 --epochs 2 --plot none --quiet"
# shellcheck disable=SC2086
DL_EMU_DEVICES=4 expect_rc 0 "lab 07's reference on 4 ranks, --device emu (both parts)" -- \
    "$R" -n 4 "$EB/solutions/lab07" $small7 --device emu --out "$tmp/emu7"
# shellcheck disable=SC2086
expect_rc 0 "the same on the CPU" -- "$R" -n 4 "$EB/solutions/lab07" $small7 --device cpu --out "$tmp/cpu7"
E=$tmp/emu7/summary.json C=$tmp/cpu7/summary.json
if [ -s "$E" ] && [ -s "$C" ]; then
    expect_cmp "$($J "$E" backend)/$($J "$E" device | cut -c1-5)" == nccl/emu:0 "backend nccl on the emulated devices"
    expect_cmp "$($J "$E" tp.max_abs_diff)" '<=' 1e-5 "tensor parallelism on emu: within 1e-5 of the one-rank model"
    expect_cmp "$($J "$E" tp.bytes_per_step)" == "$($J "$C" tp.bytes_per_step)" "… moving the CPU run's bytes a step"
    # the loss and the count of right rows at the logits, on the device (dl_layer_xent, dl_layer_right)
    expect_cmp "$(awk -v e="$($J "$E" loss)" -v c="$($J "$C" loss)" \
        'BEGIN { d = e - c; print (e + 0 > 0 && c + 0 > 0) ? (d < 0 ? -d : d) / c : "no-loss" }')" \
        '<=' 1e-5 "… its loss within 1e-5 of the CPU's, relative"
    expect_cmp "$($J "$E" test_accuracy)" == "$($J "$C" test_accuracy)" "… the CPU's test accuracy"
    for sc in gpipe 1f1b; do
        expect_cmp "$($J "$E" "schedules.$sc.max_abs_diff")" '<=' 1e-5 "$sc on emu: the one-rank model's step"
        expect_cmp "$($J "$E" "schedules.$sc.bubble_measured")" == "$($J "$C" "schedules.$sc.bubble_measured")" \
            "… the CPU's bubble"
        expect_cmp "$($J "$E" "schedules.$sc.peak_slots")" == "$($J "$C" "schedules.$sc.peak_slots")" "… and peak"
    done
else
    not_ok "no summary.json from lab 07's emu or CPU run"
fi

echo "# 4 the device flags"
L5="$EB/solutions/lab05 $small --epochs 1 --plot none --quiet"
# shellcheck disable=SC2086
expect_rc 0 "--device auto in the emulated build" -- $L5 --device auto --out "$tmp/auto"
[ "$($J "$tmp/auto/summary.json" device_kind 2>/dev/null)" = cpu ] && ok "auto is the CPU there (the emulator runs only when named)" ||
    not_ok "auto ran on '$($J "$tmp/auto/summary.json" device_kind 2>/dev/null)', expected the CPU"
# shellcheck disable=SC2086
expect_rc 2 "--device cuda in the emulated build" -- $L5 --device cuda --out "$tmp/cuda"
expect_out "emulated-CUDA build.*--device emu" "it says this build has no GPU and names --device emu"
# shellcheck disable=SC2086
expect_rc 2 "--device emu:3 with one emulated ordinal" -- $L5 --device emu:3 --out "$tmp/emu3"
expect_out "DL_EMU_DEVICES=N" "it names DL_EMU_DEVICES"
# shellcheck disable=SC2086
DL_EMU_DEVICES=two expect_rc 2 "DL_EMU_DEVICES=two" -- $L5 --device emu --out "$tmp/two"
expect_out "DL_EMU_DEVICES='two': expected the number" "it names the variable and its value"
N=$B/solutions/lab01
if [ -x "$N" ]; then
    expect_rc 2 "--device emu in the normal build" -- "$N" --device emu --out "$tmp/normal" --plot none
    expect_out "no emulated CUDA device.*make EMU=1" "it says how to get the emulated build"
    DL_DEVICE=emu expect_rc 2 "DL_DEVICE=emu in the normal build" -- "$N" --out "$tmp/normal" --plot none
    expect_out "DL_DEVICE 'emu'" "it names the variable"
else
    not_ok "no $N (make all builds it)"
fi

echo "# 5 labs 01 and 02's CUDA items graded on the emulated device"
for lab in 01 02; do
    for impl in solutions labs; do
        start=$SECONDS
        js=$tmp/grade-$lab-$impl.json
        want=2 # STRICT=1: points lost fail make's recipe (make exits 2)
        [ $impl = solutions ] && want=0
        GR_CUDA=emu expect_rc $want "make grade LAB=$lab IMPL=$impl, GR_CUDA=emu" -- \
            make -s --no-print-directory grade LAB=$lab IMPL=$impl B="$B" STRICT=1 JSON="$js"
        took=$((SECONDS - start))
        expect_cmp "$(grep -c '\[emulated CUDA\]$' <<<"$T_OUT")" == 2 \
            "lab $lab ($impl): both CUDA items graded on the emulated device, and marked so"
        if [ $impl = solutions ]; then
            expect_cmp "$(grep -c '^\[PASS\].*\[emulated CUDA\]$' <<<"$T_OUT")" == 2 "the reference passes both"
            expect_out "^Score: ([0-9]+)/\\1$" "full marks, nothing skipped"
            [ "$($J "$js" extra_data.cuda 2>/dev/null)" = emulated ] && ok "results.json: extra_data.cuda is emulated" ||
                not_ok "results.json: extra_data.cuda is '$($J "$js" extra_data.cuda 2>/dev/null)'"
            expect_cmp "$(grep -c '"emulated-cuda"' "$js")" == 2 "results.json: both items tagged emulated-cuda"
        else
            expect_cmp "$(grep -Ec '^\[(FAIL|----)\].*\[emulated CUDA\]$' <<<"$T_OUT")" \
                == 2 "the skeleton scores 0 on both (the first fails, the second says parent failed)"
            expect_out "not implemented yet: lab$lab task 5" "and says why"
        fi
        expect_cmp "$took" '<' 60 "lab $lab ($impl) graded in under 60 s, its emulated build included (seconds)"
    done
done
finish
