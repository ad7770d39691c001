#!/usr/bin/env bash
# test.sh — `make test`: the kit's own tests, in order, with a tally.
#   1 library and grader unit tests (Check) 5 mutants: every classic mistake caught by name
#   1b dl_comm under mpirun; 1c Slurm (stand-ins); 1d the emulated CUDA device;
#   1e the GPU tier on it (no GPU: common/ against the CPU, NCCL on 2 ranks, lab 05)
#   2 skeletons match the generator         5b hostile submissions get exactly their due
#   2c the labs' manifests (tools/lab.sh)
#   2d code budgets (tools/budget.sh)
#   3 grader: reference scores full marks   6 each lab's driver end to end, plots, bad input
#   4 grader: skeletons score zero, no crash 7 CUDA code compiled for the GPUs we target
#                                           8 gradebook and student release
#                                           8b tools/new-lab.sh: a new lab, end to end
#                                           9 make run's report page, rendered in chromium
#                                           9b every slide fits its window, in chromium
#                                           9c every plot's text reads at slide size
# Runs where it stands (a clone of the kit); builds were done by `make all`.
# Steps 3, 5, 5b, 6, 8, 8b, 9, 9b and 9c run in two lanes at once (see run_lanes;
# TEST_LANES=1: one after the other).
#   tools/test.sh [STEP...]   only those steps, by number (e.g. 5b 8)
set -u
unset MAKEFLAGS MFLAGS # the nested builds below are not part of the caller's jobserver
# this machine's tests, also when run in a Slurm job: dlrun would start an srun
# step over the allocation there (tools/test-slurm.sh tests that on its own)
unset SLURM_JOB_ID SLURM_JOBID
# one BLAS thread a process (and the kit's loops with it): the steps run many
# jobs side by side on a few cores, where a process's idle BLAS threads spin
# for work on cores other jobs need (about 12% of a lab 03 grading's CPU, on
# an idle machine). Nothing here measures speed; a user's own setting stands.
export OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
B=${B:-build}
export B
J=$B/tools/jsonq
failed=()
only=" $* " # tools/test.sh [STEP...]: only those steps (by number: 3 5b 8)
step() {
    local name=$1
    shift
    [ "$only" = "  " ] || [[ $only == *" ${name%% *} "* ]] || return 0
    echo
    echo "=== $name ==="
    local t0=$SECONDS c0 took me=$BASHPID
    c0=$(cpu_s "$me")
    if "$@"; then took=ok; else took=FAILED; failed+=("$name"); fi
    echo "=== $name: $took ($((SECONDS - t0)) s, cpu $(($(cpu_s "$me") - c0)) s)"
}
# cpu_s PID: CPU seconds (user + system) of the processes that shell has waited
# for: a step's work, whatever else the machine runs
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%d\n", ($16 + $17) / hz }' "/proc/$1/stat"; }

# The long steps run in lanes, side by side (each step's jobs take their own
# sandbox users and folders), their output shown whole, in the steps' order,
# as each is done. TEST_LANES=1: one lane, the steps one after the other.
#   lane "STEP..." "STEP..." ...   (then the steps, declared with `later`)
declare -A later_cmd later_name later_after
later_order=()
later() { # [--after "STEP..."] NAME COMMAND...: a step for the lanes (run once those steps are done)
    local after=
    [ "$1" = --after ] && { after=$2; shift 2; }
    local name=$1 n=${1%% *}
    shift
    [ "$only" = "  " ] || [[ $only == *" $n "* ]] || return 0
    later_order+=("$n")
    later_name[$n]=$name
    later_cmd[$n]=$(printf '%q ' "$@")
    later_after[$n]=$after
}
run_lanes() { # LANE...: each a list of step numbers, run in order
    # (names the steps' functions do not use: they are not all local there)
    local lane_dir=$B/test/steps lanes=("$@") lane_step
    rm -rf "$lane_dir"
    mkdir -p "$lane_dir"
    [ "${TEST_LANES:-2}" = 1 ] && lanes=("${later_order[*]}")
    echo
    echo "(the next steps run in ${#lanes[@]} lane(s) at once: $(printf '[%s] ' "${lanes[@]}")— each shown when done)"
    local lane
    for lane in "${lanes[@]}"; do
        (
            failed=() # a lane's step is judged on its own run, not on the failures of the steps before the lanes
            local dep
            for lane_step in $lane; do
                [ -n "${later_cmd[$lane_step]:-}" ] || continue
                for dep in ${later_after[$lane_step]}; do # (a step of another lane it needs: wait for it)
                    [ -n "${later_cmd[$dep]:-}" ] || continue
                    while [ ! -f "$lane_dir/$dep.done" ]; do sleep 1; done
                done
                step "${later_name[$lane_step]}" eval "${later_cmd[$lane_step]}" >"$lane_dir/$lane_step.log" 2>&1 </dev/null
                [ ${#failed[@]} -eq 0 ] && echo ok >"$lane_dir/$lane_step.done" || echo FAILED >"$lane_dir/$lane_step.done"
                failed=()
            done
        ) &
    done
    for lane_step in "${later_order[@]}"; do
        while [ ! -f "$lane_dir/$lane_step.done" ] && [ -n "$(jobs -rp)" ]; do sleep 1; done
        cat "$lane_dir/$lane_step.log" 2>/dev/null
        [ "$(cat "$lane_dir/$lane_step.done" 2>/dev/null)" = ok ] || failed+=("${later_name[$lane_step]}")
    done
    wait
}

mapfile -t labs < <(bash tools/lab.sh list)
[ ${#labs[@]} -gt 0 ] || exit 2

grade_reference() {
    local status=0
    for dir in "${labs[@]}"; do
        local id=${dir%%-*}
        local out=$B/test/grade-$id-solutions.json
        mkdir -p "$B/test"
        if "$B/grader/lab$id" --impl solutions --json "$out"; then
            echo "lab $id: reference scores $($J "$out" score)/$($J "$out" extra_data.max_score) on the tiers that run here"
        else
            echo "lab $id: the reference solution lost points" >&2
            status=1
        fi
        # Gradescope's documented fields only, and no red "failed" for a skipped item
        "$J" --gradescope "$out" || { echo "lab $id: results.json is not what Gradescope documents" >&2; status=1; }
    done
    return $status
}

grade_skeletons() {
    local status=0
    mkdir -p "$B/test"
    bash tools/skeletons.sh build "$B/skeleton/src" || return 1
    for dir in "${labs[@]}"; do
        local id=${dir%%-*}
        local out=$B/test/grade-$id-skeleton.json
        make -s --no-print-directory mutant-grader mutant-driver LAB="$id" MUT_DIR="$B/skeleton/src/$id" \
            MUT_B="$B/skeleton" || { status=1; continue; }
        "$B/grader/lab$id" --code "$B/skeleton/mutant" --impl skeleton --json "$out" >"$B/test/grade-$id-skeleton.log" 2>&1
        local score n i bad=0
        "$J" --gradescope "$out" || { echo "lab $id: the skeleton's results.json is not what Gradescope documents" >&2; bad=1; }
        score=$($J "$out" score)
        n=$($J "$out" 'tests.*.name' | wc -l)
        for ((i = 0; i < n; i++)); do
            local o
            o=$($J "$out" "tests.$i.output")
            case $o in
            SKIPPED*) ;;
            *"crashed"* | *"timed out"*)
                echo "lab $id: skeleton item $($J "$out" "tests.$i.name") crashed or hung: $o" >&2
                bad=1 ;;
            *"not implemented yet"* | *"parent failed"*) ;;
            *)
                echo "lab $id: skeleton item $($J "$out" "tests.$i.name") failed without saying 'not implemented yet':" >&2
                echo "$o" | head -n 3 >&2
                bad=1 ;;
            esac
        done
        if [ "$score" != 0 ]; then
            echo "lab $id: the untouched skeleton scores $score, expected 0" >&2
            bad=1
        fi
        [ $bad -eq 0 ] && echo "lab $id: skeleton scores 0 on all $n items, each 'not implemented yet' (or its parent), no crash"
        [ $bad -eq 0 ] || status=1
    done
    return $status
}

lab_scripts() {
    local status=0
    for dir in "${labs[@]}"; do
        local id=${dir%%-*}
        if [ -f "tools/test-lab$id.sh" ]; then
            local t0=$SECONDS
            bash "tools/test-lab$id.sh" || status=1
            echo "(lab $id: $((SECONDS - t0)) s)"
        else
            echo "lab $id has no tools/test-lab$id.sh" >&2
            status=1
        fi
    done
    return $status
}

cuda_compiled() {
    if ! ls "$B"/obj/common/cuda/*.o >/dev/null 2>&1; then
        echo "nvcc not found: the CUDA paths were not compiled (CPU-only kit)"
        return 0
    fi
    local status=0 o
    for o in "$B"/obj/common/cuda/*.o "$B"/obj/solutions/*/*cuda*.o "$B"/obj/labs/*/*cuda*.o; do
        [ -f "$o" ] || continue
        local archs
        # the device code (cubins for each sm_XX) lives in the .nv_fatbin section
        archs=$(objcopy -O binary --only-section=.nv_fatbin "$o" /dev/stdout 2>/dev/null | strings |
            grep -o 'sm_[0-9]*' | sort -u | tr '\n' ' ')
        echo "$o: device code for ${archs:-nothing}"
        case $o in *obj/common/cuda/device_cuda.o) ;; *)
            [ -n "$archs" ] || { echo "$o has no device code" >&2; status=1; } ;;
        esac
    done
    for o in "$B"/obj/solutions/*/*cuda*.o; do
        if ! nm "$o" | grep -q '_kernel'; then
            echo "$o has no kernel" >&2
            status=1
        fi
    done
    nm "$B/lib/libddplab.a" | grep -q ' T dl_cuda_gemm_' || { echo "the library lacks the CUDA backend" >&2; status=1; }
    return $status
}

instructor_tools() {
    local status=0 subs=$B/test/submissions
    rm -rf "$subs"
    for dir in "${labs[@]}"; do
        local id=${dir%%-*}
        mkdir -p "$subs/ref-$id" "$subs/skel-$id" "$subs/broken-$id"
        cp solutions/"$dir"/* "$subs/ref-$id/"
        cp solutions/"$dir"/* "$subs/broken-$id/"
        # lab 01 also: a copy of the reference (compiled once), one uploaded as a folder under a
        # name with + and @ (its files found below), and a folder whose name is no student's
        [ "$id" = 01 ] && { mkdir -p "$subs/same-$id" "$subs/up+load@x-$id/labs/$dir" "$subs/judy smith"; cp solutions/"$dir"/* "$subs/same-$id/"; cp solutions/"$dir"/* "$subs/up+load@x-$id/labs/$dir/"; }
        local first rc=0 want=0
        first=$(ls "$subs/broken-$id"/*.c | head -n 1)
        echo "this line is not C" >>"$first"
        bash tools/gradebook.sh "$subs" "$id" >"$B/test/gradebook-$id.log" 2>&1 || rc=$?
        local csv=$B/gradebook/lab$id.csv
        if [ "$id" = 01 ]; then
            want=1 # the folder 'judy smith' was not graded
            rm -rf "$subs/up+load@x-$id" "$subs/judy smith"
            if ! grep -q "not graded: 'judy smith'" "$B/test/gradebook-$id.log" || grep -q '^judy' "$csv" ||
                [ "$(grep "^up+load@x-$id," "$csv" | cut -d, -f2-)" != "$(grep "^ref-$id," "$csv" | cut -d, -f2-)" ] ||
                ! grep -q "^skel-$id,0,.*,graded; without .*scaler.c.* (the skeleton's)$" "$csv" ||
                ! "$J" "$B/gradebook/lab$id/skel-$id/results.json" output | grep -q "your submission has no scaler.c"; then
                echo "lab $id gradebook: a folder upload, an unnamed folder or the skeleton's files said wrong (see $B/test/gradebook-$id.log, $csv)" >&2
                status=1
            fi
        fi
        [ "$rc" = "$want" ] || { echo "lab $id gradebook: exit $rc, expected $want" >&2; status=1; }
        # where no GPU answers, task 5's CUDA items are graded on the emulated device, as make grade's are
        if [ "$("$B/grader/lab$id" --which-cuda)" = emu ] &&
            ! grep -q '"emulated-cuda"' "$B/gradebook/lab$id/ref-$id/results.json"; then
            echo "lab $id gradebook: the reference's CUDA items were not graded on the emulated device" >&2
            status=1
        fi
        local ref skel broken
        ref=$(grep "^ref-$id," "$csv" | cut -d, -f2,3)
        skel=$(grep "^skel-$id," "$csv" | cut -d, -f2)
        broken=$(grep "^broken-$id," "$csv" | awk -F, '{print $NF}')
        if ! "$J" "$B/gradebook/lab$id/broken-$id/results.json" >/dev/null 2>&1 ||
            [ "$("$J" "$B/gradebook/lab$id/broken-$id/results.json" score)" != 0 ]; then
            echo "lab $id gradebook: no valid results.json with score 0 for the broken submission" >&2
            status=1
        fi
        # a file handed in again compiles once: the second copy of the reference only links,
        # and scores what the first did
        if [ "$id" = 01 ]; then
            local same
            same=$(grep "^same-$id," "$csv" | cut -d, -f2-)
            if [ "$same" != "$(grep "^ref-$id," "$csv" | cut -d, -f2-)" ] ||
                grep -Eq '^ +(CC|NVCC|EMU) ' "$B/gradebook/lab$id/same-$id/build.log" ||
                ! grep -q 'LD' "$B/gradebook/lab$id/same-$id/build.log"; then
                echo "lab $id gradebook: a copy of the reference compiled again or scored otherwise: '$same' (see $B/gradebook/lab$id/same-$id/build.log)" >&2
                status=1
            fi
        fi
        if [ "${ref%,*}" = "${ref#*,}" ] && [ "$skel" = 0 ] && [ "$broken" = build-failed ]; then
            echo "lab $id gradebook: reference $ref, skeleton $skel, broken submission: $broken"
        else
            echo "lab $id gradebook is wrong: reference '$ref', skeleton '$skel', broken '$broken'" >&2
            status=1
        fi
        rm -rf "$subs"/*
    done
    bash tools/test-similarity.sh || status=1 # the gradebook's report of code shared between submissions
    bash tools/test-instructor.sh || status=1 # a Gradescope export imported, a GPU gradebook folded in
    if git rev-parse --is-inside-work-tree >/dev/null 2>&1 && git rev-parse HEAD >/dev/null 2>&1; then
        bash tools/student-release.sh || return 1
        local rel=$B/test/release
        rm -rf "$rel"
        mkdir -p "$rel"
        tar -xzf "$B/ddplab-student.tar.gz" -C "$rel"
        # (the hostile submissions carry copies of the reference's code, as the mutants do)
        if [ -e "$rel/ddplab/solutions" ] || [ -e "$rel/ddplab/grader/mutants" ] ||
            [ -e "$rel/ddplab/grader/adversarial" ]; then
            echo "the student release contains solutions, mutants or the hostile submissions" >&2
            status=1
        fi
        # each lab's staged release: no later lab, none of the kit's code that answers its tasks or a later lab's
        local id answers later f bad=0
        for dir in "${labs[@]}"; do
            id=${dir%%-*}
            local list
            list=$(tar -tzf "$B/ddplab-student-lab$id.tar.gz" 2>/dev/null) || { echo "no staged release for lab $id" >&2; bad=1; continue; }
            for d2 in "${labs[@]}"; do
                later=${d2%%-*}
                [ "$((10#$later))" -ge "$((10#$id))" ] || continue
                answers=$(bash tools/lab.sh get "$later" KIT_ANSWERS)
                for f in $answers; do
                    grep -qx "ddplab/$f" <<<"$list" && { echo "lab $id's release holds $f, which answers lab $later" >&2; bad=1; }
                done
                # a later lab's files, wherever they lie: labs/NN-name/, slides/NN-name.md, grader/labNN*,
                # grader/api/labNN.txt, grader/prebuilt/labNN_*.o, tools/test-labNN.sh, tools/slurm/labNN.sbatch
                if [ "$later" != "$id" ]; then
                    local leak
                    leak=$(grep -v '/$' <<<"$list" | grep -E "(^|/|[^0-9a-z])(lab$later|$d2)([^0-9]|$)")
                    [ -n "$leak" ] && { echo "lab $id's release holds files of the later lab $d2:" $leak >&2; bad=1; }
                fi
            done
            grep -q "^ddplab/labs/$dir/lab.mk\$" <<<"$list" || { echo "lab $id's release lacks its own lab" >&2; bad=1; }
            # the kit's answers of this lab and the earlier ones: never as source (a student behind on an
            # earlier lab reads no answer to it), as objects where they are library files (tools/release-tree.sh)
            for d2 in "${labs[@]}"; do
                later=${d2%%-*}
                for f in $(bash tools/lab.sh get "$later" KIT_ANSWERS); do
                    grep -qx "ddplab/$f" <<<"$list" && { echo "lab $id's release holds $f, which answers lab $later" >&2; bad=1; }
                    if [ "$((10#$later))" -le "$((10#$id))" ] && [[ $f == common/src/*.c ]]; then
                        grep -qx "ddplab/common/prebuilt/$(basename "${f%.c}").o" <<<"$list" ||
                            { echo "lab $id's release lacks common/prebuilt/$(basename "${f%.c}").o (for $f)" >&2; bad=1; }
                    fi
                done
            done
            # the judge's answers (JUDGE_ANSWERS): never the source; the object for each lab in the release
            for d2 in "${labs[@]}"; do
                later=${d2%%-*}
                for f in $(bash tools/lab.sh get "$later" JUDGE_ANSWERS); do
                    local o=ddplab/grader/prebuilt/$(basename "${f%.c}").o
                    grep -qx "ddplab/$f" <<<"$list" && { echo "lab $id's release holds $f, the judge's answer" >&2; bad=1; }
                    if [ "$((10#$later))" -le "$((10#$id))" ]; then
                        grep -qx "$o" <<<"$list" || { echo "lab $id's release lacks $o (for $f)" >&2; bad=1; }
                    else
                        grep -qx "$o" <<<"$list" && { echo "lab $id's release holds $o, of the later lab $later" >&2; bad=1; }
                    fi
                done
            done
        done
        [ $bad -eq 0 ] && echo "each lab's staged release holds no file of a later lab, none of the kit's answers to its" \
            "tasks (the library's as objects), and the judge's answers as objects only"
        [ $bad -eq 0 ] || status=1
        # the whole kit (every lab open): no lab's kit answers as source, the library's as objects
        local whole kitobjs=() o
        bad=0
        whole=$(tar -tzf "$B/ddplab-student.tar.gz")
        for d2 in "${labs[@]}"; do
            for f in $(bash tools/lab.sh get "${d2%%-*}" KIT_ANSWERS); do
                grep -qx "ddplab/$f" <<<"$whole" && { echo "the whole kit's release holds $f, which answers lab ${d2%%-*}" >&2; bad=1; }
                if [[ $f == common/src/*.c ]]; then
                    o=common/prebuilt/$(basename "${f%.c}").o
                    kitobjs+=("$o")
                    grep -qx "ddplab/$o" <<<"$whole" || { echo "the whole kit's release lacks $o (for $f)" >&2; bad=1; }
                fi
            done
        done
        [ $bad -eq 0 ] && echo "the whole kit's release holds no lab's kit answers as source (${kitobjs[*]#common/prebuilt/}:" \
            "objects)"
        [ $bad -eq 0 ] || status=1
        # the release builds on its own and grades its skeletons (CPU build, to stay quick)
        if make -s -C "$rel/ddplab" NO_CUDA=1 DL_NO_DEPS=1 B=build build/grader/lab01 build/labs/lab01-worker \
            build/labs/lab01 >"$B/test/release-build.log" 2>&1; then
            "$rel/ddplab/build/grader/lab01" >"$B/test/release-grade.log" 2>&1
            grep -q '^Score: 0/' "$B/test/release-grade.log" && echo "student release builds without solutions/ and grades its skeleton 0" \
                || { echo "the student release's grader did not score its skeleton 0" >&2; status=1; }
            # make run there runs the student's code: the skeleton's tasks not done yet, then the reference's files
            bash tools/test-release-run.sh "$rel/ddplab" solutions || status=1
            # its judge, built from the prebuilt answers, gives the reference full marks there
            cp solutions/01-logreg/* "$rel/ddplab/labs/01-logreg/"
            if make -s -C "$rel/ddplab" NO_CUDA=1 DL_NO_DEPS=1 B=build build/labs/lab01-worker build/labs/lab01 \
                >>"$B/test/release-build.log" 2>&1 && "$rel/ddplab/build/grader/lab01" >"$B/test/release-grade-ref.log" 2>&1 &&
                grep -qE '^Score: ([0-9]+)/\1 ' "$B/test/release-grade-ref.log"; then
                echo "... and, with the reference's files, full marks ($(grep '^Score:' "$B/test/release-grade-ref.log" | cut -d' ' -f2)):" \
                    "its judge's prebuilt answers are right"
            else
                echo "the student release's judge (prebuilt answers) did not give the reference full marks" \
                    "(see $B/test/release-grade-ref.log)" >&2
                status=1
            fi
            # a later lab's driver there, which calls an open lab's kit answers (lab 05: lab 03's sampler and
            # schedule, objects only), on the reference's files: two steps
            local d5
            d5=$(bash tools/lab.sh list | grep '^05-')
            cp solutions/"$d5"/* "$rel/ddplab/labs/$d5/"
            if make -s -C "$rel/ddplab" NO_CUDA=1 DL_NO_DEPS=1 B=build build/labs/lab05 >>"$B/test/release-build.log" 2>&1 &&
                "$rel/ddplab/build/labs/lab05" --data fashion_mnist:train=6400,test=200 --hidden 32 --batch-size 64 \
                    --epochs 1 --max-steps 2 --plot none --out "$rel/run05" >"$B/test/release-lab05.log" 2>&1 &&
                [ -f "$rel/run05/summary.json" ]; then
                echo "... and lab 05's driver builds there, with lab 03's sampler and schedule as objects, and runs"
            else
                echo "lab 05's driver does not build or run in the whole kit's release, where lab 03's sampler and" \
                    "schedule are objects (see $B/test/release-build.log, $B/test/release-lab05.log)" >&2
                status=1
            fi
        else
            echo "the student release does not build (see $B/test/release-build.log)" >&2
            status=1
        fi
        gradescope_flow || status=1
    else
        echo "not a git checkout: student release not tested"
    fi
    return $status
}

# The Gradescope autograder end to end, with /autograder moved to a temporary
# directory: its build (what setup.sh runs, less apt-get), then run_autograder
# on the reference's files and on files that do not build.
gradescope_flow() {
    local ag=$B/test/autograder J2
    rm -rf "$ag"
    bash tools/gradescope.sh 01 >/dev/null || return 1
    mkdir -p "$ag/submission"
    cp -a "$B/gradescope/lab01" "$ag/source"
    # (setup.sh's builds: the autograder, and where no GPU answers the emulated device's judge)
    local cuda=none full=95
    if make -s -C "$ag/source" NO_CUDA=1 B=build/nocuda DL_NO_DEPS=1 -j2 autograder >"$B/test/gradescope-build.log" 2>&1; then
        cuda=$("$ag/source/build/nocuda/grader/lab01" --which-cuda)
    else
        cuda=failed
    fi
    # (full marks: 95, and 110 where task 5's CUDA items are graded on the emulated device)
    if [ "$cuda" = emu ]; then
        full=110
        make -s -C "$ag/source" EMU=1 B=build/nocuda/emucuda DL_NO_DEPS=1 -j2 build/nocuda/emucuda/grader/lab01 \
            build/nocuda/emucuda/lib/libddplab.a >>"$B/test/gradescope-build.log" 2>&1 || cuda=failed
    fi
    if [ "$cuda" = failed ]; then
        echo "the Gradescope autograder does not build (see $B/test/gradescope-build.log)" >&2
        return 1
    fi
    J2=$(realpath "$J")
    cp solutions/01-logreg/* "$ag/submission/"
    # (as Gradescope runs it: not under make, whose DL_DATA_DIR the gradebook then asks make for)
    env -u DL_DATA_DIR -u DL_DATA_GZ AUTOGRADER_ROOT="$(realpath "$ag")" B= bash "$ag/source/run_autograder" \
        >"$B/test/gradescope-run.log" 2>&1
    local good bad
    good=$("$J2" "$ag/results/results.json" score 2>/dev/null)/$("$J2" "$ag/results/results.json" extra_data.max_score 2>/dev/null)
    echo "not C" >>"$ag/submission/scaler.c"
    AUTOGRADER_ROOT=$(realpath "$ag") B= bash "$ag/source/run_autograder" >>"$B/test/gradescope-run.log" 2>&1
    bad=$("$J2" "$ag/results/results.json" score 2>/dev/null)
    if [ "$good" = $full/$full ] && [ "$bad" = 0 ] && grep -q "build-failed" "$ag/results/results.json"; then
        echo "Gradescope autograder (lab 01): the reference scores $good, files that do not build 0 (build-failed)"
    else
        echo "Gradescope autograder (lab 01): reference '$good', broken '$bad' (see $B/test/gradescope-run.log)" >&2
        return 1
    fi
}

# Every step runs in one of two lanes (run_lanes, below). The kit for the
# emulated CUDA device ($B/emucuda) is built by 1e and used by 3, 4, 5 and 5b;
# step 4's skeletons by 5b and 6: a step in one lane waits for those of the
# other it needs (--after). 1b and 1c start MPI jobs that must fail in given
# ways (singletons among them): no other MPI job runs beside them.
later "1 unit tests of common/" "$B/tests/unit"
later "1a unit tests of the grader (its run plan)" "$B/tests/grader"
later "1b dl_comm and dlrun under mpirun (1-4 ranks, failures)" bash tools/test-comm.sh
later "1c on a Slurm cluster, without one: dlrun's srun step, rank variables, the sbatch scripts" bash tools/test-slurm.sh
later "1d the emulated CUDA device (common/emu): barriers, shuffles, atomics, 16-bit rounding, races, bounds" \
    make -s --no-print-directory emu-test
later "1e the GPU tier on the emulated CUDA device: common/ against the CPU, checked launches, NCCL on 2 ranks, lab 05" \
    bash tools/test-emu.sh
later "2 skeletons match the generator" bash tools/skeletons.sh check
later "2b handouts' item tables match the graders" bash tools/check-handouts.sh
later "2c the labs' manifests: read as make reads them, broken ones refused" bash tools/test-manifest.sh
later "2d code budgets: file sizes, comm.c, the graders, the engine's drivers, no module loop" bash tools/budget.sh
later --after "1e" "3 grader: reference solutions score full marks" grade_reference
later --after "1e" "4 grader: untouched skeletons score zero without crashing" grade_skeletons
later --after "1e 4" "5 mutants: every classic mistake caught by name" bash grader/mutants/run.sh
later --after "1e 4" "5b adversarial submissions: exactly their due on every grading path" bash grader/adversarial/run.sh
later --after "4" "6 drivers end to end, plots, bad input" lab_scripts
later "7 CUDA compiled and linked" cuda_compiled
later --after "1b 1c" "8 instructor tools: gradebook and student release" instructor_tools
# the decks built from step 9's quick run (its plots), every slide at two window sizes
slides_fit() {
    local runs=$B/test/report-check/quick/run args=() rc
    [ -d "$runs" ] && args=(--runs "$runs")
    # every number a deck gives of a run is that run's (deck 06 joins when its numbers are filled)
    [ -d "$runs" ] && { bash tools/check-decks.sh --runs "$runs" slides/0[1-6]-*.md || return 1; }
    bash tools/check-slides.sh "${args[@]}"
    rc=$?
    [ $rc -eq 77 ] && return 0 # SKIPPED, and it said why
    return $rc
}

later "8b a new lab (tools/new-lab.sh) works with nothing else edited" bash tools/test-new-lab.sh
later "9 report page: headlines, runs that went wrong, rendering in chromium (SKIPPED without it)" bash tools/check-report.sh
later --after "9" "9b slides: every slide shows all of its content at 1280x720 and 1920x1080 (SKIPPED without chromium or pandoc)" slides_fit
later --after "9" "9c plots: every text of every plot at least 16 px on the 960-px canvas, and on it" bash tools/check-plots.sh
# about the same time in each lane (seconds in CI on a 2-core machine, the
# lanes side by side, with lab 07: 1, 1a, 1b, 1c, 2-2c and 7 about 17 together,
# 1d 7, 1e 38 (the emulated build included), 3 19, 4 14, 5 210, 5b 225, 6 79,
# 8 188, 8b 23, 9 46, 9b 15, 9c 0: about 460 s and 420 s; a slower 2-core
# machine took about 620 s a lane before lab 07, in the same proportions); 9b
# and 9c read 9's run
run_lanes "1b 1c 1d 1e 3 4 5 6 9 9b 9c 8b" "1 1a 2 2b 2c 2d 7 8 5b"
echo
if [ ${#failed[@]} -eq 0 ]; then
    echo "make test: all steps passed"
else
    echo "make test: FAILED: ${failed[*]}"
    exit 1
fi
