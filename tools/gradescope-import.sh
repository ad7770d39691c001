#!/usr/bin/env bash
# gradescope-import.sh EXPORT LAB OUT — a Gradescope "Download Submissions"
# export as the gradebook's folder of submissions.
#
#   bash tools/gradescope-import.sh submissions.zip 01 build/subs-01
#   make gradebook SUBMISSIONS=build/subs-01 LAB=01
#
# EXPORT is the export's .zip or the folder it unzips to: its
# submission_metadata.yml (one entry per submission, `submission_ID:`, with its
# `:submitters:`, each with `:name:`, `:sid:` and `:email:`) and one folder
# per submission, named as its entry. Each submitter becomes OUT/<student>/,
# holding the lab's student files found in the submission (at any depth: a
# student may upload a folder or a whole checkout: the copy in the lab's own
# folder, labs/NN-name/, else the shallowest, tools/submission.sh; a name
# found twice at that depth is refused for that submission, since which one
# was meant cannot be told). <student> is the submitter's :sid:,
# else the part of the email before '@', else the submission's id, with
# every character outside A-Za-z0-9._@+- made '_'. A group submission
# gives each member a copy. Files that are not the lab's are not copied
# (the gradebook takes a missing one from the skeleton, worth 0). Also
# writes OUT/roster.csv: student,submission,name,email — who each folder is.
# Refuses to write into an OUT that exists and is not empty. Exit 2 on bad
# arguments or a missing metadata file, 1 if a submission could not be
# taken (named on stderr; the others are written), else 0.
set -uo pipefail
. tools/submission.sh # submission_file
export="${1:-}"
lab=${2:-}
out=${3:-}
if [ -z "$export" ] || [ -z "$lab" ] || [ -z "$out" ]; then
    echo "usage: tools/gradescope-import.sh EXPORT(.zip or folder) LAB OUT" >&2
    exit 2
fi
dir=$(bash tools/lab.sh dir "$lab") || exit 2
files=$(bash tools/lab.sh get "$lab" STUDENT_C)
files="$files $(bash tools/lab.sh get "$lab" STUDENT_CU) $(bash tools/lab.sh get "$lab" STUDENT_H)"
if [ -e "$out" ] && [ -n "$(ls -A "$out" 2>/dev/null)" ]; then
    echo "gradescope-import: $out exists and is not empty: give a new folder" >&2
    exit 2
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
root=$export
if [ -f "$export" ]; then
    command -v unzip >/dev/null 2>&1 || { echo "gradescope-import: unzip is not installed (apt-get install unzip)" >&2; exit 2; }
    unzip -q "$export" -d "$tmp/x" || { echo "gradescope-import: $export: not a readable zip" >&2; exit 2; }
    root=$tmp/x
fi
meta=$(find "$root" -maxdepth 3 -name submission_metadata.yml -type f | head -n 1)
if [ -z "$meta" ]; then
    echo "gradescope-import: $export has no submission_metadata.yml: is it Gradescope's \"Download Submissions\" export?" >&2
    exit 2
fi
base=$(dirname "$meta")
mkdir -p "$out" || exit 2

# one line per submitter: "ID<US>name<US>sid<US>email" (US, the unit separator: no field holds it,
# and unlike a tab it is no whitespace to `read`, so an empty field stays a field)
awk '
    function val(s) { sub(/^[^:]*:[a-z_]+:[ \t]*/, "", s); gsub(/^["\047]|["\047][ \t]*$/, "", s); return s }
    function flush() { if (sub_id != "" && have) printf "%s\037%s\037%s\037%s\n", sub_id, name, sid, email; have = 0; name = sid = email = "" }
    /^[^ \t#][^:]*:[ \t]*$/ { flush(); sub_id = $0; sub(/:[ \t]*$/, "", sub_id); insub = 0; next }
    /^[ \t]+:submitters:/ { insub = 1; next }
    insub && /^[ \t]*- :/ { flush(); have = 1; line = $0; sub(/- /, "", line); k = line; sub(/^[ \t]*:/, "", k); sub(/:.*/, "", k)
        if (k == "name") name = val(line); else if (k == "sid") sid = val(line); else if (k == "email") email = val(line); next }
    insub && /^[ \t]+:[a-z_]+:/ { k = $0; sub(/^[ \t]*:/, "", k); sub(/:.*/, "", k)
        if (k == "name") name = val($0); else if (k == "sid") sid = val($0); else if (k == "email") email = val($0)
        else if ($0 !~ /^    /) insub = 0; next }
    /^[ \t]+:[a-z_]+:/ { insub = 0 }
    END { flush() }' "$meta" >"$tmp/who"

echo "student,submission,name,email" >"$out/roster.csv"
status=0
n=0
while IFS=$'\037' read -r id name sid email; do
    [ -d "$base/$id" ] || { echo "gradescope-import: $id is in the metadata but has no folder: skipped" >&2; status=1; continue; }
    student=$sid
    [ -n "$student" ] || student=${email%%@*}
    [ -n "$student" ] || student=$id
    student=$(printf '%s' "$student" | tr -c 'A-Za-z0-9._@+-' '_')
    case $student in [._@+-]*) student=s$student ;; esac # (a name the gradebook grades)
    if [ -e "$out/$student" ]; then
        echo "gradescope-import: two submissions for '$student' ($id and another): the first kept" >&2
        status=1
        continue
    fi
    mkdir -p "$out/$student"
    for f in $files; do
        got=$(submission_file "$base/$id" "$f" "$dir") # the gradebook's rule (tools/submission.sh)
        case $? in
        0) cp "$got" "$out/$student/$f" ;;
        2) echo "gradescope-import: $id ($student) holds $f twice at the same depth: neither taken" >&2 && status=1 ;;
        3) echo "gradescope-import: $id ($student): its $f is not a regular file (a link?): not taken" >&2 && status=1 ;;
        esac
    done
    csvq() { printf '"%s"' "$(printf '%s' "$1" | sed 's/"/""/g')"; }
    echo "$student,$id,$(csvq "$name"),$(csvq "$email")" >>"$out/roster.csv"
    n=$((n + 1))
done <"$tmp/who"
echo "gradescope-import: $n submitter folder(s) in $out for lab $lab (roster: $out/roster.csv)"
exit $status
