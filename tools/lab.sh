#!/usr/bin/env bash
# lab.sh — the labs' manifests (labs/NN-name/lab.mk), as make reads them
# (tools/manifest.mk): the one way the kit's scripts learn what a lab is.
#
#   tools/lab.sh list              every lab's folder name, in order (01-logreg ...)
#   tools/lab.sh ids               every lab's number, in order (01 02 ...)
#   tools/lab.sh dir NN            lab NN's folder name
#   tools/lab.sh get NN FIELD      a field's value, whitespace folded ("" when the lab leaves it out)
#   tools/lab.sh each FIELD        that field of every lab, in order: one line each, NN<TAB>value
#   tools/lab.sh files NN          the student files (C, CUDA, headers), one line
#   tools/lab.sh captions NN       one line per captioned plot: PLOT<TAB>TEXT
#   tools/lab.sh view NN           what make run's report shows of the lab: tools/report's flags
#                                  (--key-plot, --headline, --caption ..., --run2 ...), each
#                                  argument ended by a NUL (read with mapfile -d '')
#   tools/lab.sh check             every manifest against the rules (below)
#
# The fields are listed in tools/manifest.mk. The rules: a lab's folder is
# NN-name, its number its own; its manifest sets only its own LAB_NN_ fields,
# each one of the fields there are (a misspelt one would be ignored); it has
# TITLE, a student file, KEY_PLOT and HEADLINE; each student file is in the
# lab's folder and, where the kit has solutions/ (not a student release), there; each JUDGE_ANSWERS file is one
# of the lab's grader files but its call wrappers, there as source or as grader/prebuilt/NAME.o; a RUN2 is a plain folder name with
# RUN2_KEY_PLOT and RUN2_HEADLINE; KEY_PLOT and plot captions name plain plots. Every command checks first: a broken
# manifest, an unknown lab or field is named, exit 2.
set -uo pipefail
die() {
    echo "lab.sh: $*" >&2
    exit 2
}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
manifest=$(make -s --no-print-directory -C "$here" -f tools/manifest.mk 2>&1) || die "make cannot read the manifests: $manifest"
fields=" TITLE STUDENT_C STUDENT_CU STUDENT_H KIT_C KIT_CU DRIVER_C CFLAGS KIT_ANSWERS JUDGE_ANSWERS LAUNCH RUN_ARGS KEY_PLOT HEADLINE RUN2 \
RUN2_ARGS RUN2_KEY_PLOT RUN2_HEADLINE "

# value NN FIELD: from the printed manifest, read once into an array (a script
# may call this hundreds of times: no process per value)
declare -A values
while IFS=$'\t' read -r v_id v_dir v_field v_value; do
    [ -n "$v_field" ] && values["$v_id $v_field"]=$v_value
done <<<"$manifest"
value() { [ -z "${values["$1 $2"]+set}" ] || echo "${values["$1 $2"]}"; }
# the CAPTION_ fields of each lab, "ID NAME" (check reads them without a process)
captioned=()
for v_key in "${!values[@]}"; do [[ $v_key == *" CAPTION_"* ]] && captioned+=("$v_key"); done
dirs=$(for mk in "$here"/labs/*/lab.mk; do [ -f "$mk" ] && { mk=${mk%/lab.mk}; echo "${mk##*/}"; }; done)

check() {
    local d id bad=0 f plot seen=" "
    for d in $dirs; do
        id=${d%%-*}
        mk="labs/$d/lab.mk"
        [[ $d =~ ^[0-9][0-9]-[a-z0-9][a-z0-9-]*$ ]] ||
            { echo "lab.sh: labs/$d: a lab's folder is NN-name (two digits, a dash, a lowercase name)" >&2; bad=1; continue; }
        if [[ $seen == *" $id "* ]]; then
            echo "lab.sh: labs/$d: lab $id is also $(echo "$dirs" | grep "^$id-" | head -n 1): one folder per number" >&2
            bad=1
            continue
        fi
        seen="$seen$id "
        # what the file sets (a lint of its text; the values are make's): its own fields, known ones
        local v line sets=() lint=0
        while IFS= read -r line || [ -n "$line" ]; do # (bash's own regex: no process per manifest line)
            [[ $line =~ ^[[:space:]]*(define[[:space:]]+|override[[:space:]]+)?(LAB_[0-9]{2}_[A-Za-z0-9_]+) ]] &&
                sets+=("${BASH_REMATCH[2]}")
        done <"$here/$mk"
        for v in "${sets[@]}"; do
            f=${v#LAB_??_}
            [ "${v:4:2}" = "$id" ] && [[ $fields == *" $f "* || $f =~ ^CAPTION_[A-Za-z0-9_-]+$ ]] || lint=1
        done
        [ $lint = 0 ] || for v in $(printf '%s\n' "${sets[@]}" | sort -u); do # the findings, each once, in order
            f=${v#LAB_??_}
            if [ "${v:4:2}" != "$id" ]; then
                echo "lab.sh: $mk sets $v, a field of lab ${v:4:2}: a manifest sets only its own lab's (LAB_${id}_$f?)" >&2
                bad=1
            elif [[ $fields != *" $f "* && ! $f =~ ^CAPTION_[A-Za-z0-9_-]+$ ]]; then
                echo "lab.sh: $mk: LAB_${id}_$f is not a manifest field (misspelt? the fields:$fields CAPTION_<plot>)" >&2
                bad=1
            fi
        done
        for f in ${values["$id STUDENT_C"]-} ${values["$id STUDENT_CU"]-} ${values["$id STUDENT_H"]-}; do
            [ -f "$here/labs/$d/$f" ] || { echo "lab.sh: $mk names the student file $f, but labs/$d/$f is missing" >&2; bad=1; }
            # (a student release has no solutions/ at all)
            [ ! -d "$here/solutions" ] || [ -f "$here/solutions/$d/$f" ] ||
                { echo "lab.sh: $mk names the student file $f, but solutions/$d/$f (its reference) is missing" >&2; bad=1; }
        done
        # a judge answer: one of the lab's own grader files (not its call wrappers, compiled twice), there as
        # source (this kit) or as its object (a student release: grader/prebuilt/)
        for f in ${values["$id JUDGE_ANSWERS"]-}; do
            if ! [[ $f =~ ^grader/lab${id}(_[a-z0-9_]+)?\.c$ ]] || [ "$f" = "grader/lab${id}_calls.c" ]; then
                echo "lab.sh: $mk: LAB_${id}_JUDGE_ANSWERS names $f: expected one of lab $id's grader files," \
                    "grader/lab$id.c or grader/lab${id}_NAME.c (not its call wrappers)" >&2
                bad=1
            elif [ ! -f "$here/$f" ] && [ ! -f "$here/grader/prebuilt/$(basename "${f%.c}").o" ]; then
                echo "lab.sh: $mk: LAB_${id}_JUDGE_ANSWERS names $f, but neither it nor its object" \
                    "grader/prebuilt/$(basename "${f%.c}").o is there" >&2
                bad=1
            fi
        done
        for f in TITLE KEY_PLOT HEADLINE; do
            [ -n "${values["$id $f"]-}" ] || { echo "lab.sh: $mk: LAB_${id}_$f is missing or empty" >&2; bad=1; }
        done
        [ -n "${values["$id STUDENT_C"]-}${values["$id STUDENT_CU"]-}" ] ||
            { echo "lab.sh: $mk: LAB_${id}_STUDENT_C names no student file: a lab has at least one task" >&2; bad=1; }
        local run2
        run2=${values["$id RUN2"]-}
        if [ -n "$run2" ]; then
            [[ $run2 =~ ^[A-Za-z0-9_-]+$ ]] ||
                { echo "lab.sh: $mk: LAB_${id}_RUN2 '$run2': expected a plain folder name (letters, digits, - and _)" >&2; bad=1; }
            for f in RUN2_KEY_PLOT RUN2_HEADLINE; do
                [ -n "${values["$id $f"]-}" ] || { echo "lab.sh: $mk: LAB_${id}_RUN2 is set but LAB_${id}_$f is missing" >&2; bad=1; }
            done
        fi
        local plots=("${values["$id KEY_PLOT"]-}" "${values["$id RUN2_KEY_PLOT"]-}")
        for v in ${captioned[@]+"${captioned[@]}"}; do
            [[ $v == "$id CAPTION_"* ]] && plots+=("${v#"$id CAPTION_"}")
        done
        for plot in "${plots[@]}"; do
            [ -z "$plot" ] || [[ $plot =~ ^[A-Za-z0-9_-]+$ ]] ||
                { echo "lab.sh: $mk: plot '$plot': expected a plot's name without extension (letters, digits, - and _)" >&2; bad=1; }
        done
    done
    [ -n "$dirs" ] || { echo "lab.sh: no labs/*/lab.mk under $here" >&2; bad=1; }
    return $bad
}
lab_dir() {
    [[ ${1:-} =~ ^[0-9][0-9]$ ]] || die "'${1:-}': expected a lab's number (01, 02, ...)"
    local d
    for d in $dirs; do [ "${d%%-*}" = "$1" ] && { echo "$d"; return; }; done
    die "no lab $1 in labs/ (the labs: $(echo $dirs | tr '\n' ' '))"
}

check || exit 2
case ${1:-} in
list) echo "$dirs" ;;
ids) for d in $dirs; do echo "${d%%-*}"; done ;;
dir) lab_dir "${2:-}" ;;
get)
    lab_dir "${2:-}" >/dev/null
    f=${3:-}
    [[ $fields == *" $f "* || $f =~ ^CAPTION_[A-Za-z0-9_-]+$ ]] || die "'$f': not a manifest field (the fields:$fields)"
    value "$2" "$f" ;;
each)
    f=${2:-}
    [[ $fields == *" $f "* || $f =~ ^CAPTION_[A-Za-z0-9_-]+$ ]] || die "'$f': not a manifest field (the fields:$fields)"
    for d in $dirs; do printf '%s\t%s\n' "${d%%-*}" "${values["${d%%-*} $f"]-}"; done ;;
files)
    lab_dir "${2:-}" >/dev/null
    # shellcheck disable=SC2046 # each field is a word list: one line of words
    echo $(value "$2" STUDENT_C) $(value "$2" STUDENT_CU) $(value "$2" STUDENT_H) ;;
captions)
    lab_dir "${2:-}" >/dev/null
    awk -F'\t' -v id="$2" '$1 == id && $3 ~ /^CAPTION_/ { sub(/^CAPTION_/, "", $3); print $3 "\t" $4 }' <<<"$manifest" ;;
view)
    lab_dir "${2:-}" >/dev/null
    {
        printf '%s\0' --key-plot "$(value "$2" KEY_PLOT)" --headline "$(value "$2" HEADLINE)"
        awk -F'\t' -v id="$2" '$1 == id && $3 ~ /^CAPTION_/ { sub(/^CAPTION_/, "", $3); printf "--caption%c%s%c%s%c", 0, $3, 0, $4, 0 }' <<<"$manifest"
        run2=$(value "$2" RUN2)
        [ -z "$run2" ] || printf '%s\0' --run2 "$run2" --key-plot "$(value "$2" RUN2_KEY_PLOT)" \
            --headline "$(value "$2" RUN2_HEADLINE)"
    } ;;
check) ;;
*) die "usage: tools/lab.sh list | ids | dir NN | get NN FIELD | each FIELD | files NN | captions NN | view NN | check" ;;
esac
