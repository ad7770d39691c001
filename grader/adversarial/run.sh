#!/usr/bin/env bash
# run.sh — proves that hostile submissions get exactly their due, on every
# grading path, and disturb nothing else.
#
# Each grader/adversarial/NN-name.c is one attack: a header, then C code.
#     // attack: what it does
#     // lab: NN
#     // base: skeleton | reference | mutant NAME
#                                     (the files it starts from; a mutant: the reference with
#                                      grader/mutants/NAME.diff applied, an honest mistake)
#     // file: scaler.c               (the student file it changes)
#     // inject: FUNCTION             (the code's static ddplab_attack() runs first thing in FUNCTION)
#     // override: FUNCTION           (the base's FUNCTION is renamed away, unused: the code defines its
#                                      own, and the rest of the base's file stays as it is)
#     // replace: yes                 (the file becomes the code, instead of gaining it)
#     // lose: all | none | ITEM ...  (what it must score: 0, full marks, or full minus these items)
#     // expect: REGEX                (what the grader must say, in its output)
#     // status: WORD                 (the gradebook's status for it, default graded; a build
#                                      refused by tools/check-submission.sh: its STATUS, which
#                                      the judge's results.json names too, as extra_data.build;
#                                      an extended regular expression, matched whole: a|b)
#     // paths: grade gradebook       (default: both)
#     // multiplier: X                (CK_TIMEOUT_MULTIPLIER for `make grade`; attacks that hang)
#     // needs: cuda                  (only where this build compiles CUDA: a .cu file it changes)
#     // emu: yes                     (make grade grades task 5's CUDA items on the emulated device too,
#                                      where no GPU answers, as it does for a student: every attack
#                                      on a .cu file (needs: cuda) and those whose code task 5's items
#                                      reach (they train on the CPU beside the device); the others'
#                                      code never runs there, so their make grade is the CPU's
#                                      (GR_CUDA=gpu), as the gradebook path's is: its CPU items are
#                                      checked there, and step 8 checks the gradebook's emulated items)
#     // with: NAME ...               (shared attack pieces: grader/adversarial/lib/NAME.c, in
#                                     this order, stand before the attack's own code)
#     // env: VAR=VALUE ...           (the grader's environment for it, on every path: a lowered
#                                      budget, GR_BUDGET_MEMORY=1536M; the gradebook grades the
#                                      attacks of a lab that share one env together)
#     // absent: REGEX                (what must appear neither in results.json nor in the
#                                      judge's table: a reference's lines the attack reached for)
# "@KIT@" in the code stands for this checkout's absolute path, "@OTHER@" for
# another checkout's, beside it (made by this script, readable by anyone,
# holding solutions/06-sharded/zero.c with a secret in it; the secret is also
# in the grader's environment, as DDPLAB_ADV_SECRET): no attack's output, table
# or results.json may hold the secret. The pieces are
# pasted in, not #included: the grader refuses includes from outside the
# submission, and an attack must fail (or not) for its own reason.
# Paths: `make grade SRC=dir JSON=file` (the judge's table, its exit status and
# results.json) and `make gradebook` (the CSV row and its status). After each,
# no process of the sandbox users and no "ddplab-daemon" may be left. As root,
# a few attacks are graded again as an unprivileged user (the grader's
# user-namespace sandbox), when that user can read this checkout.
# The attacks' gradings and the gradebooks run ADV_JOBS (default 2) at a time,
# each in its own sandbox user: an attack that runs beside other submissions'
# gradings must not disturb them either. The forced fallback sandboxes, where
# jobs share a user, run one at a time, after.
#   grader/adversarial/run.sh [NAME ...]
set -uo pipefail
B=${B:-build}
J=$B/tools/jsonq
AB=$B/adversarial
kit=$(pwd)
pass=0
fail=0
rm -rf "$AB"
mkdir -p "$AB"
# another checkout beside this one, as a student's machine or a grading server may hold
secret=ddplab-secret-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
other=$(mktemp -d "$(dirname "$kit")/.ddplab-adv-other.XXXXXX" 2>/dev/null || mktemp -d)
trap 'rm -rf "$other"' EXIT
mkdir -p "$other/solutions/06-sharded"
echo "/* $secret: another checkout's reference */" >"$other/solutions/06-sharded/zero.c"
chmod -R a+rX "$other"
export DDPLAB_ADV_SECRET=$secret
list=("$@")
[ ${#list[@]} -eq 0 ] && list=($(ls grader/adversarial/*.c | xargs -n1 basename | sed 's/\.c$//'))

# An attack's header field (the first "// KEY: value" line of its file), read
# once per attack here: the steps below ask thousands of times
declare -A fields
for a_ in "${list[@]}"; do
    [ -f "grader/adversarial/$a_.c" ] || continue
    while IFS= read -r l_; do
        [[ $l_ =~ ^//\ ([a-z-]+):\ *(.*)$ ]] || continue
        [ -n "${fields[$a_/${BASH_REMATCH[1]}]+set}" ] || fields[$a_/${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
    done <"grader/adversarial/$a_.c"
done
field() { [ -z "${fields[$2/$1]:-}" ] || printf '%s\n' "${fields[$2/$1]}"; }
# attacks on a .cu file run only where this build compiles CUDA (without nvcc the file is not built at all)
if ! ls "$B"/obj/common/cuda/*.o >/dev/null 2>&1; then
    kept=()
    for name in "${list[@]}"; do
        if [ "$(field needs "$name")" = cuda ]; then
            echo "skip    $name: needs a build with CUDA (nvcc was not found)"
        else
            kept+=("$name")
        fi
    done
    list=("${kept[@]}")
fi
# on_path grade|gradebook NAME: whether the attack is graded on that path ("paths:", default both)
on_path() { case " $(field paths "$2") " in "  " | *" $1 "*) return 0 ;; esac; return 1; }
ok() { echo "ok      $1"; pass=$((pass + 1)); }
not_ok() { echo "not ok  $1"; fail=$((fail + 1)); }
# verdict WHAT SUMMARY LOG: ok with the summary when the caller's why[] holds no
# reason, else not ok with the reasons and where to look
verdict() {
    if [ ${#why[@]} -eq 0 ]; then
        ok "$1: $2"
    else
        not_ok "$1: $(printf '%s; ' "${why[@]}")see $3"
    fi
}

# Points of each item, from the judge: "name points tier".
points() { "$B/grader/lab$1" --list | awk '{print $1, $2, $4}'; }
# The items of a GPU tier (skipped here, whatever their name), one per line.
gpu_items() { "$B/grader/lab$1" --list | awk '$4 != "cpu" {print $1}'; }

# What is left of a grading run after it ended: the processes of the user its
# jobs ran as (from the table's "sandbox: ... as uid N"; a sandbox user is the
# run's alone while it runs), or, when they ran as a shared user, the attacks'
# daemons; only those started before the run's last line (its log's time):
# the user is free again once the run is over, and a grading beside it may
# take it next.
survivors() { # log
    local uid end hz boot
    [ -f "$1" ] || return 0 # refused before grading (an include from outside): nothing ran
    uid=$(sed -n 's/.*sandbox: .* as uid \([0-9]*\).*/\1/p' "$1" 2>/dev/null | head -n 1)
    # to the millisecond: a grading beside this one may take the user in the second this one ended
    end=$(stat -c %.3Y "$1")
    hz=$(getconf CLK_TCK)
    boot=$(awk -v now="$(date +%s.%N)" '{ printf "%.3f", now - $1 }' /proc/uptime)
    ps -eo pid=,uid=,stat=,comm= | awk -v u="${uid:--1}" '$2 == u && $3 !~ /^Z/ && (u >= 61000 || $4 == "ddplab-daemon")' |
        while read -r pid _ st comm; do
            # (the fields after the command's name: the start, in ticks since boot, is the 20th)
            sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null |
                awk -v b="$boot" -v hz="$hz" -v e="$end" -v w="$uid $st $comm" '$20 != "" && b + $20 / hz < e { print w }'
        done | head -n 5 | tr '\n' ';'
}

# What an attack reached that must not be shown: the other checkout's secret
# anywhere (why[] gets the reasons), its "absent:" in results.json or the
# judge's table (a make grade log starts with the build's own output).
reached() { # name json log
    local absent
    absent=$(field absent "$1")
    grep -qF "$secret" "$2" 2>/dev/null && why+=("results.json holds the other checkout's secret")
    grep -qF "$secret" "$3" 2>/dev/null && why+=("the output holds the other checkout's secret")
    if [ -n "$absent" ]; then
        grep -Eq "$absent" "$2" 2>/dev/null && why+=("results.json says /$absent/")
        sed -n '/^== ddplab lab/,$p' "$3" 2>/dev/null | grep -Eq "$absent" && why+=("the table says /$absent/")
    fi
}

# The attack's student files in $AB/src/NAME.
prepare() {
    local name=$1 lab base file inject override dir src
    lab=$(field lab "$name")
    base=$(field base "$name")
    file=$(field file "$name")
    inject=$(field inject "$name")
    override=$(field override "$name")
    dir=$(basename "$(ls -d labs/"$lab"-*)")
    src=$AB/src/$name
    mkdir -p "$src"
    # the base's files with their times, and its objects (built by make all and
    # make test's step 4), so that make grade compiles only the file the attack changes
    local objs gobj
    if [ "$base" = reference ] || [ "${base%% *}" = mutant ]; then
        cp -p solutions/"$dir"/* "$src"/
        objs=$B/obj/solutions/$lab
        if [ "${base%% *}" = mutant ]; then # the mutant's diff, exactly as grader/mutants/run.sh applies it
            patch -s --fuzz=0 -p3 -d "$src" <"grader/mutants/${base#mutant }.diff" ||
                { echo "the mutant ${base#mutant } does not apply to solutions/$dir" >&2; return 1; }
        fi
    else
        cp -p "$B/skeleton/src/$lab"/* "$src"/
        objs=$B/skeleton/obj/mutant/$lab
    fi
    gobj=$B/grade-src/$(realpath "$src" | tr / _)
    rm -rf "$gobj"
    mkdir -p "$gobj/obj/mutant/$lab"
    cp "$objs"/*.o "$gobj/obj/mutant/$lab/" 2>/dev/null
    local code piece pieces=()
    for piece in $(field with "$name"); do
        [ -f "grader/adversarial/lib/$piece.c" ] || { echo "no attack piece grader/adversarial/lib/$piece.c" >&2; return 1; }
        pieces+=("grader/adversarial/lib/$piece.c")
    done
    code=$({ [ ${#pieces[@]} -eq 0 ] || cat "${pieces[@]}"
        awk 'h && /^\/\/ [a-z-]+:/ { next } { h = 0; print }' h=1 "grader/adversarial/$name.c"; } |
        sed -e "s|@KIT@|$kit|g" -e "s|@OTHER@|$other|g")
    # the attacks call POSIX functions that -std=c11 hides; an injected attack is
    # a static function of the file (a student file defines only the lab's functions)
    { printf '#ifndef _GNU_SOURCE\n#define _GNU_SOURCE\n#endif\n'
      [ -n "$inject" ] && printf 'static void ddplab_attack(void);\n'
      cat "$src/$file"; } >"$src/$file.new"
    mv "$src/$file.new" "$src/$file"
    if [ "$(field replace "$name")" = yes ]; then
        printf '%s\n' "$code" >"$src/$file"
    else
        if [ -n "$override" ]; then # the definition (at a line's start), not its calls
            perl -0pi -e "s/^([A-Za-z_][^\\n;]*?)\\b$override\\(/__attribute__((unused)) static \$1ddplab_overridden_$override(/m" "$src/$file"
            grep -q "ddplab_overridden_$override(" "$src/$file" || { echo "cannot override $override in $file" >&2; return 1; }
        fi
        if [ -n "$inject" ]; then
            perl -0pi -e "s/(\\b$inject\\([^;{]*\\)\\s*\\{)/\$1\\n    ddplab_attack();/" "$src/$file"
            grep -q '^    ddplab_attack();$' "$src/$file" || { echo "cannot inject into $inject in $file" >&2; return 1; }
        fi
        printf '\n// ---- the attack ----\n%s\n' "$code" >>"$src/$file"
    fi
}

# Checks one graded run: the JSON, the table, the lost items, what was said.
check_grade() {
    local name=$1 lab=$2 json=$3 log=$4 rc=$5 path=${6:-make grade} t0=${7:-$SECONDS} lose want_rc expect
    lose=$(field lose "$name")
    expect=$(field expect "$name")
    local why=()
    if ! "$J" "$json" >/dev/null 2>&1; then
        why+=("results.json missing or invalid")
    else
        iconv -f UTF-8 -t UTF-8 "$json" >/dev/null 2>&1 || why+=("results.json is not valid UTF-8")
        local score max failed
        score=$("$J" "$json" score)
        max=$("$J" "$json" extra_data.max_score)
        # (a skipped item has no status: per test, not as two parallel lists; GPU items by their tier)
        failed=$(n=$("$J" "$json" tests); n=${n//[^0-9]/}
            for ((i = 0; i < ${n:-0}; i++)); do
                echo "$("$J" "$json" "tests.$i.name" | sed 's/:.*//') $("$J" "$json" "tests.$i.status" 2>/dev/null)"
            done | awk '$2 == "failed" { print $1 }' | grep -vxF -f <(gpu_items "$lab"; echo -) | sort | tr '\n' ' ' |
            sed 's/ $//')
        case $lose in
        all) [ "$score" = 0 ] || why+=("scored $score, expected 0") ;;
        none) [ "$score" = "$max" ] || why+=("scored $score/$max, expected full marks (lost: $failed)") ;;
        *)
            local want
            want=$(echo "$lose" | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/ $//')
            [ "$failed" = "$want" ] || why+=("lost '$failed', expected to lose '$want'") ;;
        esac
        local status build
        status=$(field status "$name")
        build=$("$J" "$json" extra_data.build 2>/dev/null)
        case $status in
        "" | graded | not-a-regular-file:*) [ "$build" = built ] || why+=("results.json says the build was '$build'") ;;
        *) grep -Eqx "$status" <<<"$build" || why+=("results.json says the build was '$build', expected '$status'") ;;
        esac
        local lines
        lines=$(grep -c '^Score: ' "$log")
        [ "$lines" = 1 ] || why+=("$lines lines start with 'Score: ' in the table (the student's prints must not)")
        grep -q "^Score: $score/$max" "$log" || why+=("the table's score is not the JSON's $score/$max")
    fi
    want_rc=1 # the judge's exit status when points are lost; make reports it as 2
    [ "$path" = "make grade" ] && want_rc=2
    [ "$lose" = none ] && want_rc=0
    [ "$rc" = "$want_rc" ] || why+=("the grader exited $rc, expected $want_rc")
    if [ -n "$expect" ] && ! grep -Eq "$expect" "$log"; then
        why+=("its output does not say /$expect/")
    fi
    reached "$name" "$json" "$log"
    local left
    left=$(survivors "$log")
    [ -z "$left" ] || why+=("processes survived: $left")
    verdict "$name ($path)" "$(grep '^Score: ' "$log" | sed 's/ *(.*//') ($((SECONDS - t0)) s)" "$log"
}

[ -d "$B/skeleton/src" ] || bash tools/skeletons.sh build "$B/skeleton/src" >/dev/null || exit 1
for name in "${list[@]}"; do
    prepare "$name" || { not_ok "$name: cannot prepare"; continue; }
done

# The pool: each job's verdict lines go to its own file, read in order at the end.
verdicts=()
pool() { # file command...: runs the command in the background, at most ADV_JOBS at a time
    local file=$1
    shift
    verdicts+=("$file")
    "$@" >"$file" 2>&1 </dev/null &
    while [ "$(jobs -rp | wc -l)" -ge "${ADV_JOBS:-2}" ]; do wait -n; done
}

# ---- path 1: make grade SRC=dir JSON=file ----
# Each attack's grading runs as a sandbox user of its own (GR_SANDBOX_UID, 61100
# and up, outside the range the judge picks from): the survivors of a job are
# then its own processes, never those of the job that took its uid next, nor of
# another test running beside this one.
grade_path() { # name index
    local name=$1 lab mult out t0=$SECONDS cuda=gpu
    lab=$(field lab "$name")
    mult=$(field multiplier "$name")
    { [ "$(field needs "$name")" = cuda ] || [ "$(field emu "$name")" = yes ]; } && cuda=${GR_CUDA:-auto}
    out=$AB/grade/$name
    mkdir -p "$out"
    env $(field env "$name") GR_CUDA=$cuda GR_SANDBOX_UID=$((61100 + $2)) CK_TIMEOUT_MULTIPLIER=${mult:-1} \
        make -s --no-print-directory grade STRICT=1 LAB="$lab" SRC="$AB/src/$name" \
        JSON="$out/results.json" >"$out/grade.log" 2>&1 </dev/null
    check_grade "$name" "$lab" "$out/results.json" "$out/grade.log" $? "make grade" "$t0"
}

# ---- path 2: the gradebook, one run per lab (and env) with every attack as a submission ----
# (the attacks on the other submissions, the machine or the gradebook's own
# files; those marked "paths: grade" only fool the judge, which is the same
# program on both paths)
gradebook_path() { # lab env group
    local lab=$1 env=$2 g=$3 subs out mult names name m csv header row lose status why got_status item pts tier col got want left
    local t0=$SECONDS
    subs=$AB/subs-$g
    out=$AB/gradebook # (its depth: 01-include-relative climbs from the submission's tree to the kit)
    [ -z "$env" ] || out=$AB/gradebook-$g
    mult=1
    names=()
    for name in "${list[@]}"; do
        [ "$(field lab "$name")" = "$lab" ] && [ "$(field env "$name")" = "$env" ] && on_path gradebook "$name" || continue
        mkdir -p "$subs/$name"
        cp "$AB/src/$name"/* "$subs/$name/"
        names+=("$name")
        m=$(field multiplier "$name")
        [ -n "$m" ] && mult=$m
    done
    [ ${#names[@]} -gt 0 ] || return 0
    # (the CPU items are what this path checks: task 5's, on the emulated device, are make grade's
    # to check here, and step 8's for the gradebook)
    env $env GR_CUDA=gpu GB_OUT="$out" CK_TIMEOUT_MULTIPLIER=$mult bash tools/gradebook.sh "$subs" "$lab" >"$AB/gradebook-$g.log" 2>&1 </dev/null
    csv=$out/lab$lab.csv
    header=$(head -n 1 "$csv")
    for name in "${names[@]}"; do
        row=$(grep "^$name," "$csv")
        lose=$(field lose "$name")
        status=$(field status "$name")
        why=()
        [ -n "$row" ] || why+=("no row in $csv")
        got_status=${row##*,}
        grep -Eqx "${status:-graded}" <<<"$got_status" || why+=("status '$got_status', expected '${status:-graded}'")
        case $got_status in
        not-a-regular-file:*) ;; # refused before the judge saw it
        *) [[ "$(echo "$row" | cut -d, -f3)" =~ ^[1-9][0-9]*$ ]] || why+=("no max_score in its row") ;;
        esac
        while read -r item pts tier; do
            col=$(echo "$header" | tr ',' '\n' | grep -nx "$item" | cut -d: -f1)
            got=$(echo "$row" | cut -d, -f"$col")
            [ "$tier" = cpu ] || continue
            want=$pts
            case " $lose " in " all " | *" $item "*) want=0 ;; esac
            [ "$got" = "$want" ] || why+=("$item: $got points, expected $want")
        done < <(points "$lab")
        reached "$name" "$out/lab$lab/$name/results.json" "$out/lab$lab/$name/grade.log"
        left=$(survivors "$out/lab$lab/$name/grade.log")
        [ -z "$left" ] || why+=("processes survived: $left")
        verdict "$name (gradebook)" "$(echo "$row" | cut -d, -f2,3 | tr , /) ${got_status} (the gradebook of ${#names[@]}: $((SECONDS - t0)) s)" "$AB/gradebook-$g.log"
    done
}

# the judges first (shared by every job of a lab), so that the jobs build only their own files
for lab in $(for n in "${list[@]}"; do field lab "$n"; done | sort -u); do
    make -s --no-print-directory "$B/grader/lab$lab" >/dev/null || exit 1
done
# the gradebooks first (the longest jobs): one per lab and env, then every attack's make grade
groups=$(for n in "${list[@]}"; do on_path gradebook "$n" && echo "$(field lab "$n") $(field env "$n")"; done | sort -u)
k=0
while read -r lab env; do
    [ -n "$lab" ] || continue
    g=$lab
    [ -z "$env" ] || g=$lab-env$((k += 1))
    pool "$AB/verdicts-gradebook-$g" gradebook_path "$lab" "$env" "$g"
done <<<"$groups"
for i in "${!list[@]}"; do
    name=${list[$i]}
    on_path grade "$name" || continue
    pool "$AB/verdicts-grade-$name" grade_path "$name" "$i"
done
wait
for file in "${verdicts[@]}"; do
    cat "$file"
    grep -Eq '^(not )?ok ' "$file" || { echo "not ok  $(basename "$file"): the job gave no verdict"; fail=$((fail + 1)); }
    pass=$((pass + $(grep -c '^ok ' "$file")))
    fail=$((fail + $(grep -vc '^ok ' "$file")))
done

# ---- the fallback sandboxes, forced: a sandbox user without namespaces, and a
# process group (in which the grader could be signalled: only attacks that do
# not try). Without a namespace the host's files are as readable as their
# permissions say (the other checkout is readable by anyone: no attack here
# reads it); what holds is the job's user, its process tree, its own run
# folder and the budgets ----
fb=0
for mode in uid pgroup; do
    [ "$mode" = uid ] && [ "$(id -u)" != 0 ] && continue
    [ "$mode" = uid ] && names="01-kill-the-grader 01-daemon 01-fork-bomb 03-planted-cache 03-memory-spread" ||
        names="01-exit-in-task 01-daemon"
    for name in $names; do
        [ -d "$AB/src/$name" ] || continue
        lab=$(field lab "$name")
        code=$B/grade-src/$(realpath "$AB/src/$name" | tr / _)/mutant
        if [ ! -x "$code/lab$lab-worker" ]; then # refused at build: its make grade verdict says so, nothing runs
            echo "skip    $name (GR_SANDBOX=$mode): not built ($("$J" "$AB/grade/$name/results.json" extra_data.build 2>/dev/null))"
            continue
        fi
        mult=$(field multiplier "$name")
        t0=$SECONDS
        fb=$((fb + 1)) # a sandbox user of its own (61200 and up): its survivors are its own (see grade_path)
        env $(field env "$name") GR_SANDBOX=$mode GR_SANDBOX_UID=$((61200 + fb)) CK_TIMEOUT_MULTIPLIER=${mult:-1} \
            "$B/grader/lab$lab" --code "$code" \
            --impl "$name" --json "$AB/$mode-$name.json" >"$AB/$mode-$name.log" 2>&1 </dev/null
        rc=$?
        grep -q "sandbox: own session per job" "$AB/$mode-$name.log" || echo "note: GR_SANDBOX=$mode gave: $(grep 'sandbox:' "$AB/$mode-$name.log")"
        check_grade "$name" "$lab" "$AB/$mode-$name.json" "$AB/$mode-$name.log" $rc "GR_SANDBOX=$mode" "$t0"
    done
done

# ---- as an unprivileged user: the user-namespace sandbox ----
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    as_user() { setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/tmp TMPDIR=/tmp "$@"; }
    if as_user test -x "$B/grader/lab01" && as_user test -r "$kit/datasets/breast_cancer.csv"; then
        for name in 01-kill-the-grader 01-daemon 01-exit-in-task 01-exec-solutions 01-read-home 01-other-checkout; do
            [ -d "$AB/src/$name" ] || continue
            code=$B/grade-src/$(realpath "$AB/src/$name" | tr / _)/mutant
            if [ ! -x "$code/lab01-worker" ]; then
                echo "skip    $name (as uid 65534): not built ($("$J" "$AB/grade/$name/results.json" extra_data.build 2>/dev/null))"
                continue
            fi
            out=$(as_user mktemp -d)
            t0=$SECONDS
            as_user "$B/grader/lab01" --code "$code" --impl "$name" --json "$out/results.json" \
                >"$AB/user-$name.log" 2>&1 </dev/null
            rc=$?
            cp "$out/results.json" "$AB/user-$name.json" 2>/dev/null
            rm -rf "$out"
            grep -q 'sandbox: PID+mount+IPC+user namespace' "$AB/user-$name.log" ||
                echo "note: as an unprivileged user the sandbox is: $(grep 'sandbox:' "$AB/user-$name.log")"
            check_grade "$name" 01 "$AB/user-$name.json" "$AB/user-$name.log" $rc "as uid 65534" "$t0"
        done
    else
        echo "skip    unprivileged runs: uid 65534 cannot read $kit (the checkout's directories are private)"
    fi
fi

echo "adversarial: $pass ok, $fail not"
[ $fail -eq 0 ]
