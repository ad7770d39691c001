# submission.sh — sourced: which file of a submission is the lab's file NAME,
# one rule for the gradebook (tools/gradebook.sh), Gradescope's run_autograder
# and the import of a Gradescope export (tools/gradescope-import.sh); and
# which folder names a student may have.
#
#   submission_file DIR NAME [LABDIR]
#       the copy of NAME that counts, at any depth (a student may upload a
#       folder, or a whole checkout of the kit): the one at labs/LABDIR/NAME
#       (the lab's own folder, wherever it lies) when there is exactly one
#       such, else the shallowest; links are not followed. Prints the path
#       (inside DIR), status 0; 1: there is none; 2: two stand at that depth
#       (which one was meant cannot be told); 3: the copy that counts is not
#       a regular file (a link, a folder). Every name is read whole, newlines
#       and all: a folder's name cannot pose as another path.
#   submission_name NAME
#       status 0 when NAME may name a student's folder: letters, digits and
#       . _ @ + -, not first . @ + -
submission_file() {
    local dir=$1 name=$2 lab=${3:-} rec d t p best= best_t= depth=-1 ties=0 own= own_t= owns=0
    while [[ $dir == ?*/ ]]; do dir=${dir%/}; done # (find names its hits from DIR as given: subs/alice/ too)
    while IFS= read -r -d '' rec; do
        d=${rec%% *} rec=${rec#* } t=${rec%% *} p=${rec#* }
        [[ $p == "$dir"/* ]] || continue # (find names every hit below DIR: anything else is no hit)
        if [ -n "$lab" ] && [[ $p == */labs/"$lab/$name" ]]; then
            own=$p own_t=$t owns=$((owns + 1))
        fi
        if [ "$depth" -lt 0 ] || [ "$d" -lt "$depth" ]; then
            depth=$d best=$p best_t=$t ties=0
        elif [ "$d" -eq "$depth" ]; then
            ties=$((ties + 1))
        fi
    done < <(find "$dir" -mindepth 1 -name "$name" -printf '%d %y %p\0' 2>/dev/null)
    if [ "$owns" -eq 1 ]; then
        best=$own best_t=$own_t ties=0
    fi
    [ -n "$best" ] || return 1
    [ "$ties" -eq 0 ] || return 2
    [ "$best_t" = f ] || return 3
    printf '%s\n' "$best"
}
submission_name() {
    [[ $1 =~ ^[A-Za-z0-9_][A-Za-z0-9._@+-]*$ ]]
}
