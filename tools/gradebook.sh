#!/usr/bin/env bash
# gradebook.sh SUBMISSIONS LAB — grades every submission folder into a CSV.
#
# SUBMISSIONS/<student>/ holds that student's copies of the lab's student
# files (for lab 01: scaler.c logreg_math.h logreg.c logreg_cuda.cu), at any
# depth: of each name the copy in the lab's own folder (labs/NN-name/, a
# whole checkout handed in) or else the shallowest (tools/submission.sh: the
# same rule as Gradescope's run_autograder and tools/gradescope-import.sh),
# only as a regular file (a link there gives the status not-a-regular-file).
# A file they did not hand in (or handed in twice at one depth) is taken from
# the untouched skeleton, so it scores 0, and the status says so: "graded;
# without logreg.c+scaler.c (the skeleton's)". <student> is letters, digits
# and . _ @ + - (not first . @ + -); a folder named otherwise is not graded,
# named on stderr and at the end, and the exit status is 1.
#
# Each submission is graded on its own:
#   1. its files go into a fresh copy of the student release (no solutions/,
#      no mutants; tools/release-tree.sh), where its driver and the grader's
#      worker are built against this kit's library; the kit's part of that
#      build (no student code in it) is made once, before the first
#      submission, and every copy starts from it at the same path (the
#      compile flags name the tree), so only the submission's files compile
#      and link; that build refuses what
#      tools/check-submission.sh refuses in every build (a file included from
#      outside the submission, the lab's and kit's headers and the system's;
#      an .incbin or assembler macro; a symbol defined or referenced outside
#      the lab's rules); when it fails, the judge (--not-built) says why and
#      gives the status (the check's refusal, or build-failed): never a line
#      of the build's log as it stands (the compiler, which runs outside the
#      sandbox, may have printed anything there: a file's lines, a forged
#      refusal or score);
#   2. this kit's judge (build/grader/labNN, which holds no student code)
#      grades it, in its own session, under a time limit, student code in the
#      sandbox (see the README's instructor section), which hides this kit's
#      tree and SUBMISSIONS from it (GR_HIDE). Where no GPU answers, labs 01
#      and 02's CUDA items are graded on the emulated device, as make grade
#      grades them: the submission is built for it too (make EMU=1) and the
#      kit's emulated judge (build/emucuda/grader/labNN) grades those items.
# A build that fails, a grader that dies or times out, or results that are
# missing or invalid give that submission 0 with the reason in `status`, and
# the next one is graded. Every status comes from the judge's results.json
# (extra_data.build) or from this script's own words, never from a log. Writes, each at the end and atomically:
#   build/gradebook/labNN.csv          student,score,max_score,skipped_points,<item...>,status
#   build/gradebook/labNN/<student>/results.json   Gradescope format (score 0 and the
#                                                  reason when it could not be graded)
#   build/gradebook/labNN-similarity.{csv,html}    the pairs of submissions that share code
#                                                  beyond the skeleton (tools/similarity.sh)
# GB_TIMEOUT (seconds, default 3600) bounds one submission's grading; GB_OUT
# (default build/gradebook) is where it writes. GB_SLICE=I/K grades only
# slice I of K (0 <= I < K): the submissions whose place in SUBMISSIONS/*/
# (sorted, counted from 0) is I modulo K, so K jobs with I = 0..K-1, each
# with its own GB_OUT, grade every submission once (tools/slurm/gradebook.sbatch).
set -uo pipefail
. tools/submission.sh # submission_file, submission_name
subs=${1:-}
lab=${2:-01}
B=${B:-build}
J=$B/tools/jsonq
if [ -z "$subs" ] || [ ! -d "$subs" ]; then
    echo "usage: make gradebook SUBMISSIONS=dir LAB=NN   (dir/<student>/ holds each student's lab files)" >&2
    exit 2
fi
dir=$(bash tools/lab.sh dir "$lab") || exit 2 # names the labs there are
slice_i=0
slice_k=1
if [ -n "${GB_SLICE:-}" ]; then
    slice_i=${GB_SLICE%%/*}
    slice_k=${GB_SLICE#*/}
    case $GB_SLICE in [0-9]*/[1-9]*) ;; *) slice_k=0 ;; esac
    case $slice_i$slice_k in *[!0-9]*) slice_k=0 ;; esac
    if [ "$slice_k" -eq 0 ] || [ "$slice_i" -ge "$slice_k" ]; then
        echo "gradebook: GB_SLICE '$GB_SLICE': expected I/K with 0 <= I < K (slice I of K)" >&2
        exit 2
    fi
fi
judge=$(realpath "$B/grader/lab$lab")
lib=$(realpath "$B/lib/libddplab.a")
[ -x "$judge" ] && [ -f "$lib" ] || { echo "gradebook: build the kit first (make all)" >&2; exit 2; }
nocuda=
nm "$lib" | grep ' U cudaMalloc$' >/dev/null || nocuda=NO_CUDA=1 # built without CUDA
# Task 5's CUDA items where no GPU answers (labs 01 and 02), as make grade does: when the judge
# would run them on the emulated device (--which-cuda), each submission is built for it too
# (make EMU=1, the host's C++ compiler), and the kit's own emulated judge grades those items
emu_judge= emu_lib= emu_rt=
if [ "$("$judge" --which-cuda 2>/dev/null)" = emu ]; then
    if ! make -s --no-print-directory EMU=1 B="$B/emucuda" "$B/emucuda/grader/lab$lab" "$B/emucuda/lib/libddplab.a" \
        >"$B/gradebook-emu-kit.log" 2>&1; then
        echo "gradebook: the kit's emulated CUDA build fails (see $B/gradebook-emu-kit.log)" >&2
        exit 1
    fi
    emu_judge=$(realpath "$B/emucuda/grader/lab$lab")
    emu_lib=$(realpath "$B/emucuda/lib/libddplab.a")
    emu_rt=$(realpath "$B/emucuda/emu/libcudaemu.a") # the emulator's runtime, linked beside the library
fi
files=$(bash tools/lab.sh files "$lab") || exit 2
# the Fashion-MNIST the runs read: make's decompressed copy (made if need be, `make data-dir`), as
# `make gradebook` gives it; run by hand or by Gradescope's run_autograder, the gradebook asks for it
if [ -z "${DL_DATA_GZ:-}" ]; then
    data=$(make -s --no-print-directory data-dir 2>/dev/null | tail -n 1)
    [ -n "$data" ] && [ -d "$data" ] && export DL_DATA_DIR=$data
fi
items=$("$judge" --list | awk '{print $1}')
n_items=$(echo "$items" | wc -l)
zeros=$(echo "$items" | sed 's/.*/0/' | tr '\n' ',')
out=${GB_OUT:-$B/gradebook}
root=$out/lab$lab
rm -rf "$root"
mkdir -p "$root"
root=$(realpath "$root")
csv=$out/lab$lab.csv
rows=$root/rows.csv
echo "student,score,max_score,skipped_points,$(echo "$items" | tr '\n' ',')status" >"$rows"

# what the sandbox hides from each submission's code besides this kit's tree
# (the judge's own): every submission, and the gradebook's work
hide="$(realpath "$subs"):$root"
pristine=$root/.release
tree=$root/.tree
build_here() { # log: the driver and the worker of the files in $tree
    timeout 900 make -s --no-print-directory -C "$tree" B=build DL_NO_DEPS=1 LIB_PREBUILT="$lib" $nocuda \
        "build/labs/lab$lab-worker" "build/labs/lab$lab" >"$1" 2>&1
}
build_emu() { # log: the worker of the files in $tree for the emulated CUDA device (emu_judge set)
    timeout 900 make -s --no-print-directory -C "$tree" EMU=1 B=build/emucuda DL_NO_DEPS=1 LIB_PREBUILT="$emu_lib" \
        EMU_LIB="$emu_rt" "build/emucuda/labs/lab$lab-worker" >"$1" 2>&1
}
# the release staged for this lab: no later lab, and none of the kit's code that answers its tasks
bash tools/release-tree.sh "$tree" "$lab" || { echo "gradebook: cannot lay out the student release" >&2; exit 1; }
# The objects of this kit's own build that hold no student code (the lab's kit
# code, the grader's worker) start the release's build, with their times and
# their dependency files (made to name the release's build folder): make
# compiles again whatever differs there (a source, a header, the flags, the
# objects that name the tree's path), derives the lab's rules there, and
# compiles the skeleton's files against them, as it would from nothing.
seed() { # from-dir to-dir [file-name...]: those files of from-dir (default all)
    local from=$1 to=$2 pat f
    shift 2
    mkdir -p "$to"
    for pat in "${@:-*}"; do
        for f in "$from"/$pat; do
            [ -f "$f" ] || continue
            case $f in
            *.d) sed "s|^$B/obj/|build/obj/|" "$f" >"$to/${f##*/}" && touch -r "$f" "$to/${f##*/}" ;;
            *) cp -p "$f" "$to/" ;;
            esac
        done
    done
}
# The kit built with the untouched skeleton is the same for every gradebook of
# this build and lab: its build folder is kept in GB_KITS (default
# $B/gradebook-kits), by the content of the release's files, the flags, the
# library and the judge, and a later gradebook starts from it (make rebuilds
# the objects that name the tree's path, $(B)/.root, and relinks).
kits=${GB_KITS:-$B/gradebook-kits}
kit_key=$({
    (cd "$tree" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum)
    cat "$B/.flags" 2>/dev/null
    sha256sum "$lib" "$judge" ${emu_lib:+"$emu_lib"} ${emu_rt:+"$emu_rt"}
    echo "$nocuda"
} | sha256sum | cut -c1-32)
kit=$kits/lab$lab-$kit_key
if [ -d "$kit" ] && cp -a "$kit" "$tree/build" 2>/dev/null; then
    # built before, in another tree: the lab's rules name that tree's path (the
    # lab's folder, the kit's headers), made this one's with their time kept
    # (every object is newer than they are); make compiles again what names it
    # otherwise ($(B)/.root) and relinks
    old=$(cat "$tree/build/.root" 2>/dev/null)
    r=$tree/build/api/lab$lab.rules
    if [ -n "$old" ] && [ "$old" != "$tree" ] && [ -f "$r" ]; then
        while IFS= read -r line || [ -n "$line" ]; do printf '%s\n' "${line//"$old"/$tree}"; done <"$r" >"$r.new" &&
            touch -r "$r" "$r.new" && mv "$r.new" "$r"
    fi
elif [ -f "$B/.flags" ] && [ -d "$B/obj/kit/$lab" ] && [ -d "$B/obj/grader" ]; then
    rm -rf "$tree/build"
    mkdir -p "$tree/build"
    cp -p "$B/.flags" "$tree/build/.flags"
    seed "$B/obj/kit/$lab" "$tree/build/obj/kit/$lab"
    seed "$B/obj/grader" "$tree/build/obj/grader" 'worker.[od]' 'items.[od]' 'replay.[od]' 'sandbox.[od]' \
        'drivers.[od]' "lab$lab.[od]" "lab${lab}_*.[od]"
    # but not the judge's answers: the release has their objects, not their source (which the
    # dependency files name), and its build links the objects it ships (tools/release-tree.sh)
    for f in $(bash tools/lab.sh get "$lab" JUDGE_ANSWERS); do
        f=${f##*/}
        rm -f "$tree/build/obj/grader/${f%.c}.o" "$tree/build/obj/grader/${f%.c}.d"
    done
fi
# built once with its untouched skeleton: the kit's objects, the grader's and the
# lab's API rules; a submission's files, copied in later, are newer than all of it
build_here "$root/kit-build.log" ||
    { echo "gradebook: the kit does not build in the student release (see $root/kit-build.log)" >&2; exit 1; }
[ -z "$emu_judge" ] || build_emu "$root/kit-build-emu.log" ||
    { echo "gradebook: the kit does not build for the emulated device in the student release (see $root/kit-build-emu.log)" >&2; exit 1; }
if [ ! -d "$kit" ] && mkdir -p "$kits" && cp -a "$tree/build" "$kit.tmp.$$" 2>/dev/null; then
    mv -T "$kit.tmp.$$" "$kit" 2>/dev/null || rm -rf "$kit.tmp.$$" # (another gradebook kept it first)
    find "$kits" -mindepth 1 -maxdepth 1 -mtime +1 -exec rm -rf {} + 2>/dev/null # (kits of builds long gone)
fi
cp -a "$tree" "$pristine"

zero_row() { # name status: a 0 in the CSV, and a results.json that says why (in this script's words only)
    echo "$1,0,,,${zeros}$2" >>"$rows"
    echo "$1: 0 ($2)"
    local why="this submission was not graded: $2"
    case $2 in
    build-failed) why="$why (your files do not build with the lab's header; the compiler said:)" ;;
    includes-outside-files) why="$why (it includes a file from outside your lab's files, the lab's and the kit's headers and the system's)" ;;
    not-a-regular-file:*) why="$why (hand in plain files, not links)" ;;
    embeds-a-file) why="$why (.incbin, .include and assembler macros are not allowed)" ;;
    defines-outside-api) why="$why (it defines a symbol that is not one of the lab's functions: make helpers static)" ;;
    references-outside-api) why="$why (it calls a function that is not on the lab's list: its API, the kit's calls, the C library functions grader/api/kit.txt names)" ;;
    uses-line-directive) why="$why (a #line directive or line marker: the file names and lines the compiler reports are not a student file's to set)" ;;
    runs-at-load-or-exit) why="$why (code that runs when the program loads or exits: a constructor, a destructor, atexit)" ;;
    enters-the-kernel) why="$why (an instruction that enters the kernel, or bytes spelled as data among the code)" ;;
    static-over-cap) why="$why (more static storage than the lab allows: keep state where the lab's code allocates it)" ;;
    esac
    printf '{\n  "score": 0,\n  "output": "%s",\n  "tests": [],\n  "extra_data": {"lab": "%s", "status": "%s"}\n}\n' \
        "$why" "$lab" "$2" >"$root/$1/results.json.tmp"
    mv "$root/$1/results.json.tmp" "$root/$1/results.json"
}

# A student file compiles once per kit: the objects of a submission's files
# (with what the build check read of them, .d and .s) are kept beside the kit
# (GB_KITS), by the file's content and the submission's headers (all that
# differs between the builds: the tree, the flags and the rules stay), and a
# later submission with the same file, in this gradebook or another of the
# same kit, starts from them (nvcc takes seconds a file; a class hands in many
# unchanged files). Only a build that succeeded gives its objects: a file the
# check refused is compiled, and refused, again.
objs=$tree/build/obj/labs/$lab
cache=$kit.objects
headers=$(for f in $files; do case $f in *.h) echo "$f" ;; esac; done)
obj_key() { # file: its key, from its content and the submission's headers
    { echo "$1"; cat "$tree/labs/$dir/$1"; for h in $headers; do echo "$h"; cat "$tree/labs/$dir/$h"; done; } |
        sha256sum | cut -c1-32
}
reuse_objects() { # file...: those compiled before start from their objects, newer than what they depend on
    local f k reused=()
    for f in "$@"; do
        k=$(obj_key "$f")
        [ -f "$cache/$k/${f%.*}.o" ] && reused+=("$cache/$k/${f%.*}")
    done
    [ ${#reused[@]} -gt 0 ] || return 0
    # (the lab's rules, derived from the submission's headers too, first: an object is newer than they are)
    timeout 300 make -s --no-print-directory -C "$tree" B=build DL_NO_DEPS=1 LIB_PREBUILT="$lib" $nocuda \
        "build/api/lab$lab.rules" >/dev/null 2>&1 || return 0
    for f in "${reused[@]}"; do
        cp "$f".* "$objs/"
    done
}
keep_objects() { # file...: the objects of a build that succeeded
    local f k
    for f in "$@"; do
        k=$(obj_key "$f")
        [ -f "$cache/$k/${f%.*}.o" ] && continue
        # (whole or not at all: gradebooks of one kit may run at once)
        mkdir -p "$cache/$k.tmp.$$"
        cp -p "$objs/${f%.*}".o "$objs/${f%.*}".d "$cache/$k.tmp.$$/" 2>/dev/null
        [ -f "$objs/${f%.*}.s" ] && cp -p "$objs/${f%.*}.s" "$cache/$k.tmp.$$/"
        mv -T "$cache/$k.tmp.$$" "$cache/$k" 2>/dev/null || rm -rf "$cache/$k.tmp.$$"
    done
}

n=0
place=-1
not_named=() # folders whose names are not a student's
lacking=()   # "student (files)" of the submissions graded with skeleton files
for s in "$subs"/*/; do
    name=$(basename "$s")
    place=$((place + 1))
    [ $((place % slice_k)) -eq "$slice_i" ] || continue # another slice's (GB_SLICE)
    if ! submission_name "$name"; then
        echo "gradebook: not graded: '$name' (a folder's name is letters, digits and . _ @ + -, not first . @ + -: rename it)" >&2
        not_named+=("'$name'")
        continue
    fi
    n=$((n + 1))
    work=$root/$name
    mkdir -p "$work"
    rm -rf "$tree"
    cp -a "$pristine" "$tree"
    bad=
    own=()     # the submission's sources that differ from the skeleton's
    without=() # the lab's files it lacks (the skeleton's are graded)
    for f in $files; do
        got=$(submission_file "$s" "$f" "$dir")
        case $? in
        0) if ! cmp -s "$got" "$tree/labs/$dir/$f"; then
            # (a file the same as the skeleton's keeps the object built from it)
            cp "$got" "$tree/labs/$dir/$f"
            case $f in *.h) ;; *) own+=("$f") ;; esac
        fi ;;
        2) without+=("$f") && echo "gradebook: $name holds $f twice at one depth: neither taken" >&2 ;;
        3) bad="not-a-regular-file:$f" ;;
        *) without+=("$f") ;;
        esac
    done
    graded=graded
    note=() # the judge's line to the student about it (results.json's output)
    if [ ${#without[@]} -gt 0 ]; then
        graded="graded; without $(IFS=+; echo "${without[*]}") (the skeleton's)"
        lacking+=("$name (${without[*]})")
        note=(--note "your submission has no $(IFS=,; echo "${without[*]}" | sed 's/,/, /g') (or has one twice at one depth): the skeleton's was graded in its place, worth 0; hand in the lab's files by their names: $(echo $files)")
    fi
    if [ -n "$bad" ]; then
        zero_row "$name" "$bad"
        continue
    fi
    reuse_objects "${own[@]}"
    if build_here "$work/build.log"; then
        keep_objects "${own[@]}"
    else
        # the judge's own word on it (--not-built: nothing of the submission runs):
        # every item 0, the status and the reason it reads, sanitized, and the lab's maximum
        if "$judge" --impl "$name" --not-built "$work/build.log" "${note[@]}" --json "$work/results.json" \
            </dev/null >"$work/grade.log" 2>&1 || [ $? -eq 1 ]; then
            why=$("$J" "$work/results.json" extra_data.build 2>/dev/null)
            if [[ $why =~ ^[a-z][a-z0-9-]*$ ]] && [ "$why" != built ] &&
                [ "$("$J" "$work/results.json" 'tests.*.score' 2>/dev/null | wc -l)" = "$n_items" ]; then
                row="$name,0,$("$J" "$work/results.json" extra_data.max_score),$("$J" "$work/results.json" extra_data.skipped_points)"
                echo "$row,${zeros}$why" >>"$rows"
                echo "$name: 0 ($why)"
                rm -rf "$tree"
                continue
            fi
        fi
        zero_row "$name" "grader-failed(not-built)"
        continue
    fi
    emu=() # the judge's flags for the emulated device's items
    if [ -n "$emu_judge" ]; then
        emu=(--emu-judge "$emu_judge" --emu-code "$tree/build/emucuda/labs")
        build_emu "$work/build-emu.log" || emu=(--emu-judge "$emu_judge" --emu-not-built "$work/build-emu.log")
    fi
    # its own session: nothing the grading does reaches this loop
    GR_HIDE="$hide" setsid -w timeout -k 10 "${GB_TIMEOUT:-3600}" "$judge" --code "$tree/build/labs" --impl "$name" \
        "${emu[@]}" "${note[@]}" --json "$work/results.json" </dev/null >"$work/grade.log" 2>&1
    rc=$?
    if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then
        case $rc in 124 | 137) why=grader-timed-out ;; *) why="grader-failed(exit-$rc)" ;; esac
        zero_row "$name" "$why"
        continue
    fi
    if ! "$J" "$work/results.json" >/dev/null 2>&1 ||
        [ "$("$J" "$work/results.json" 'tests.*.score' 2>/dev/null | wc -l)" != "$n_items" ]; then
        zero_row "$name" invalid-results
        continue
    fi
    score=$("$J" "$work/results.json" score)
    max=$("$J" "$work/results.json" extra_data.max_score)
    row="$name,$score,$max,$("$J" "$work/results.json" extra_data.skipped_points)"
    row="$row,$("$J" "$work/results.json" 'tests.*.score' | tr '\n' ',')$graded"
    echo "$row" >>"$rows"
    lacks=
    [ ${#without[@]} -eq 0 ] || lacks=" (without ${without[*]}: the skeleton's graded)"
    echo "$name: $score/$max$lacks"
    rm -rf "$tree" # the build is large; its logs and results stay
done
mv "$rows" "$csv.tmp.$$" && mv "$csv.tmp.$$" "$csv"
rm -rf "$pristine" "$tree"
echo "gradebook: $n submission(s) -> $csv"
[ ${#lacking[@]} -eq 0 ] ||
    echo "gradebook: ${#lacking[@]} graded with the skeleton's files for those they lack: ${lacking[*]}" >&2
# the pairs of submissions that share code beyond the kit's (tools/similarity.sh; a slice of a
# Slurm gradebook, GB_SLICE, sees only its own submissions: run it once on the whole folder)
if [ -z "${GB_SLICE:-}" ]; then
    bash tools/similarity.sh "$subs" "$lab" "$out" || echo "gradebook: no similarity report (see above)" >&2
fi
if [ ${#not_named[@]} -gt 0 ]; then
    echo "gradebook: ${#not_named[@]} folder(s) not graded for their names: ${not_named[*]}" >&2
    exit 1
fi
