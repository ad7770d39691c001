#!/usr/bin/env bash
# test-instructor.sh — an instructor's path to a whole class's grade, without
# a class: a made-up Gradescope export turned into the gradebook's folders
# (tools/gradescope-import.sh), and a made-up GPU gradebook folded into a CPU
# one (tools/gradebook-fold.sh), each checked field by field; bad input
# refused. The grading itself is step 8's gradebook test.
set -u
. tools/testlib.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ---- a Gradescope "Download Submissions" export of lab 01 ----
E=$tmp/export
mkdir -p "$E/submission_101" "$E/submission_102/my lab/nested" "$E/submission_103" "$E/submission_104/a" "$E/submission_104/b"
cat >"$E/submission_metadata.yml" <<'EOF'
---
submission_101:
  :submitters:
  - :name: Ada Lovelace
    :sid: '1001'
    :email: ada@example.com
  :created_at: 2026-11-30 10:00:00.000000000 -08:00
  :score: 0.0
submission_102:
  :submitters:
  - :name: Alan Turing
    :sid: ''
    :email: alan.t@example.com
  - :name: Grace "Amazing" Hopper
    :sid: '1003'
    :email: grace@example.com
  :created_at: 2026-11-30 11:00:00.000000000 -08:00
submission_103:
  :submitters:
  - :name: No Files
    :sid: ../../etc
    :email: nf@example.com
submission_104:
  :submitters:
  - :name: Two Copies
    :sid: '1004'
    :email: two@example.com
EOF
cp solutions/01-logreg/scaler.c solutions/01-logreg/logreg.c "$E/submission_101/"
echo "junk" >"$E/submission_101/notes.txt"
cp solutions/01-logreg/scaler.c "$E/submission_102/my lab/nested/"
cp solutions/01-logreg/scaler.c "$E/submission_104/a/"
cp solutions/01-logreg/scaler.c "$E/submission_104/b/"
S=$tmp/subs
expect_rc 1 "the export becomes the gradebook's folders (one submission refused: exit 1)" -- \
    bash tools/gradescope-import.sh "$E" 01 "$S"
expect_out "submission_104 \\(1004\\) holds scaler.c twice at the same depth" "a file found twice at one depth is named, not guessed"
cmp -s "$S/1001/scaler.c" solutions/01-logreg/scaler.c && cmp -s "$S/1001/logreg.c" solutions/01-logreg/logreg.c &&
    ok "a submitter's files land under their sid" || not_ok "1001/ lacks the submission's files: $(ls "$S/1001" 2>&1)"
expect_no_file "$S/1001/notes.txt" "a file that is not the lab's is not copied"
cmp -s "$S/alan.t/scaler.c" solutions/01-logreg/scaler.c && cmp -s "$S/1003/scaler.c" solutions/01-logreg/scaler.c &&
    ok "a group submission gives each member a copy (no sid: the email's name), found in a nested folder" ||
    not_ok "the group submission's folders: $(ls "$S" 2>&1)"
[ -d "$S/.._.._etc" ] || [ -d "$S/s.._.._etc" ] && ok "a sid with slashes stays inside OUT" ||
    not_ok "the sid ../../etc became: $(ls "$S")"
grep -q '^1003,submission_102,"Grace ""Amazing"" Hopper","grace@example.com"$' "$S/roster.csv" &&
    ok "the roster names each folder (quotes escaped)" || not_ok "roster.csv: $(cat "$S/roster.csv")"
expect_rc 2 "an OUT that is not empty is refused" -- bash tools/gradescope-import.sh "$E" 01 "$S"
mkdir -p "$tmp/empty"
expect_rc 2 "a folder without submission_metadata.yml is refused" -- bash tools/gradescope-import.sh "$tmp/empty" 01 "$tmp/o2"

# ---- folding a GPU gradebook into a CPU gradebook (lab 05: gpu1 and gpu4 items) ----
hdr=$(printf 'student,score,max_score,skipped_points,%s,status' "$("$B/grader/lab05" --list | awk '{ print $1 }' | paste -sd,)")
mk_row() { # student score max skipped status item=pts...
    local s=$1 sc=$2 mx=$3 sk=$4 st=$5 row
    shift 5
    row=$(echo "$hdr" | tr ',' '\n' | sed '1,4d;$d' | while read -r item; do
        v=0
        for kv in "$@"; do [ "${kv%%=*}" = "$item" ] && v=${kv#*=}; done
        printf '%s,' "$v"
    done)
    echo "$s,$sc,$mx,$sk,$row$st"
}
results() { # file item=score/max...: a results.json with those tests
    local file=$1
    shift
    {
        echo '{"score": 0, "tests": ['
        local first=1 kv
        for kv in "$@"; do
            [ $first = 1 ] || echo ","
            first=0
            local item=${kv%%=*} v=${kv#*=}
            printf '{"name": "%s: title", "score": %s, "max_score": %s}' "$item" "${v%/*}" "${v#*/}"
        done
        echo ']}'
    } >"$file"
}
C=$tmp/cpu G=$tmp/gpu
mkdir -p "$C/lab05/ann" "$C/lab05/bob" "$C/lab05/cyd" "$G/lab05/ann" "$G/lab05/bob"
{
    echo "$hdr"
    mk_row ann 100 165 20 graded buckets=20 equivalence=25
    mk_row bob 0 165 20 build-failed
    mk_row cyd 165 165 20 graded buckets=20
} >"$C/lab05.csv"
{
    echo "$hdr"
    mk_row ann 70 70 0 graded equivalence=25 gpu_one_rank=5 gpu4_measured=0 amp_gpu=5
    mk_row bob 0 0 0 build-failed
} >"$G/lab05.csv"
echo '{}' >"$C/lab05/ann/results.json"
results "$G/lab05/ann/results.json" equivalence=25/25 gpu_one_rank=5/5 gpu4_measured=0/0 amp_gpu=5/5
expect_rc 0 "a GPU gradebook folds into the CPU one" -- bash tools/gradebook-fold.sh 05 "$C" "$G" "$tmp/final"
F=$tmp/final/lab05.csv
col() { awk -F, -v s="$1" -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) n[$i] = i; next } $1 == s { print $(n[c]) }' "$F"; }
[ "$(col ann score),$(col ann max_score),$(col ann skipped_points)" = "110,175,10" ] &&
    ok "ann: the two 1-GPU items that ran (10 points) move from skipped into her score and maximum" ||
    not_ok "ann: score,max,skipped = $(col ann score),$(col ann max_score),$(col ann skipped_points), expected 110,175,10"
[ "$(col ann gpu_one_rank),$(col ann amp_gpu),$(col ann gpu4_measured),$(col ann equivalence)" = "5,5,0,25" ] &&
    ok "ann: GPU columns from the GPU run, the 4-GPU item it skipped left alone, CPU columns from the CPU run" ||
    not_ok "ann's columns: $(grep '^ann,' "$F")"
[ "$(col bob status)" = "build-failed; gpu: build-failed" ] && [ "$(col cyd status)" = "graded; gpu: missing" ] &&
    [ "$(col cyd score),$(col cyd skipped_points)" = "165,20" ] &&
    ok "a GPU grading that failed or is missing is said, and its points stay skipped" ||
    not_ok "bob/cyd: $(grep -E '^(bob|cyd),' "$F")"
expect_file "$tmp/final/lab05/ann/gpu-results.json" "the GPU results.json is kept beside the CPU one"
# a "GPU" gradebook graded where no GPU answered: every GPU item skipped (max_score 0)
G2=$tmp/gpu2
mkdir -p "$G2/lab05/ann" "$G2/lab05/cyd"
{
    echo "$hdr"
    mk_row ann 0 0 20 graded
    mk_row cyd 0 0 20 graded
} >"$G2/lab05.csv"
results "$G2/lab05/ann/results.json" equivalence=25/25 gpu_one_rank=0/0 gpu4_measured=0/0 amp_gpu=0/0
results "$G2/lab05/cyd/results.json" gpu_one_rank=0/0
expect_rc 1 "a GPU gradebook in which no GPU item ran is not folded silently (exit 1)" -- \
    bash tools/gradebook-fold.sh 05 "$C" "$G2" "$tmp/final2"
expect_out "without running a GPU item" "… and says why"
F=$tmp/final2/lab05.csv
[ "$(col ann status)" = "graded; gpu: no GPU item ran" ] && [ "$(col ann score),$(col ann skipped_points)" = "100,20" ] &&
    ok "… each such row says so, its GPU points left skipped" || not_ok "ann: $(grep '^ann,' "$F")"

# lab 01 with no GPU: the CPU gradebook graded task 5's CUDA items on the emulated device; a
# GPU's result replaces the emulated one (the maximum unchanged), and a "GPU" grading's own
# emulated result is not taken
hdr=$(printf 'student,score,max_score,skipped_points,%s,status' "$("$B/grader/lab01" --list | awk '{ print $1 }' | paste -sd,)")
C1=$tmp/cpu1 G1=$tmp/gpu1
mkdir -p "$C1/lab01/ann" "$G1/lab01/ann"
{ echo "$hdr"; mk_row ann 105 110 0 graded scaler_stats=10 gpu_loss_grad=5 gpu_train=5; } >"$C1/lab01.csv"
{ echo "$hdr"; mk_row ann 10 15 0 graded gpu_loss_grad=10; } >"$G1/lab01.csv"
cat >"$C1/lab01/ann/results.json" <<'EOF'
{"score": 105, "tests": [{"name": "gpu_loss_grad: t [emulated CUDA]", "score": 5, "max_score": 10, "tags": ["gpu1", "emulated-cuda"]},
 {"name": "gpu_train: t [emulated CUDA]", "score": 5, "max_score": 5, "tags": ["gpu1", "emulated-cuda"]}]}
EOF
cat >"$G1/lab01/ann/results.json" <<'EOF'
{"score": 10, "tests": [{"name": "gpu_loss_grad: t", "score": 10, "max_score": 10, "tags": ["gpu1"]},
 {"name": "gpu_train: t [emulated CUDA]", "score": 0, "max_score": 5, "tags": ["gpu1", "emulated-cuda"]}]}
EOF
expect_rc 0 "lab 01: a GPU gradebook folds into a CPU one that graded the CUDA items emulated" -- \
    bash tools/gradebook-fold.sh 01 "$C1" "$G1" "$tmp/final1"
F=$tmp/final1/lab01.csv
[ "$(col ann score),$(col ann max_score),$(col ann skipped_points),$(col ann gpu_loss_grad),$(col ann gpu_train)" = \
    "110,110,0,10,5" ] && ok "… the GPU's score replaces the emulated one, the maximum unchanged; an emulated one is not the GPU's" ||
    not_ok "lab 01 fold: $(grep '^ann,' "$F") (expected score 110, max 110, skipped 0, gpu_loss_grad 10, gpu_train 5)"

# ---- one rule for a submission's files and names (tools/submission.sh) ----
. tools/submission.sh
U=$tmp/up
mkdir -p "$U/a/labs/01-logreg" "$U/a/old" "$U/b/x" "$U/b/y" "$U/c"
touch "$U/a/labs/01-logreg/scaler.c" "$U/a/old/logreg.c" "$U/a/logreg.c" "$U/b/x/scaler.c" "$U/b/y/scaler.c"
ln -s /etc/passwd "$U/c/scaler.c"
[ "$(submission_file "$U/a" scaler.c)" = "$U/a/labs/01-logreg/scaler.c" ] && [ "$(submission_file "$U/a" logreg.c)" = "$U/a/logreg.c" ] &&
    ok "a submission's file: the shallowest copy, at any depth" || not_ok "submission_file took $(submission_file "$U/a" logreg.c)"
submission_file "$U/b" scaler.c >/dev/null
expect_cmp "$?" == 2 "two copies at one depth: neither (status 2)"
submission_file "$U/c" scaler.c >/dev/null
expect_cmp "$?" == 3 "a link: not a regular file (status 3)"
submission_file "$U/c" logreg.c >/dev/null
expect_cmp "$?" == 1 "none: status 1"
# a whole checkout handed in: lab 02's split.c beside common/src/split.c, one depth: the lab's own folder's
mkdir -p "$U/w/labs/02-evaluation" "$U/w/common/src"
echo mine >"$U/w/labs/02-evaluation/split.c"
echo kit >"$U/w/common/src/split.c"
[ "$(submission_file "$U/w/" split.c 02-evaluation)" = "$U/w/labs/02-evaluation/split.c" ] &&
    ok "a whole checkout: the copy in the lab's own folder, not the kit's of the same name and depth" ||
    not_ok "submission_file took '$(submission_file "$U/w/" split.c 02-evaluation)' from a whole checkout"
# a folder whose name holds a newline and a path: it names no file outside the submission
mkdir -p "$U/n/x"$'\n'"0 f solutions/01-logreg"
touch "$U/n/x"$'\n'"0 f solutions/01-logreg/scaler.c"
[ "$(submission_file "$U/n" scaler.c)" = "$U/n/x"$'\n'"0 f solutions/01-logreg/scaler.c" ] &&
    ok "a folder's name with a newline poses as no other path (the reference's stays out)" ||
    not_ok "a newline in a folder's name gave '$(submission_file "$U/n" scaler.c)'"
bad_names=0
for n in "$S"/*/; do submission_name "$(basename "$n")" || bad_names=$((bad_names + 1)); done
expect_cmp "$bad_names" == 0 "every folder the import makes is a name the gradebook grades"
for n in bob.oneil+cs101 a@b.c 1001 _x; do submission_name "$n" || not_ok "'$n' refused as a student's folder"; done
for n in .x "judy smith" "o'brien" -x "a,b"; do submission_name "$n" && not_ok "'$n' taken as a student's folder"; done
ok "folder names: letters, digits and . _ @ + -, not first . @ + -"

echo "student,score" >"$tmp/bad.csv"
mkdir -p "$tmp/bad" && cp "$tmp/bad.csv" "$tmp/bad/lab05.csv"
expect_rc 2 "a CSV that is not a gradebook's is refused" -- bash tools/gradebook-fold.sh 05 "$C" "$tmp/bad" "$tmp/f2"
finish
