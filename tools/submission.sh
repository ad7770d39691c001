# submission.sh — sourced: which file of a submission is the lab's file NAME,
# one rule for the gradebook (tools/gradebook.sh), Gradescope's run_autograder
# and the import of a Gradescope export (tools/gradescope-import.sh): the
# shallowest entry of that name, at any depth (a student may upload a folder:
# labs/01-logreg/scaler.c), links not followed; and which folder names a
# student may have.
#
#   submission_file DIR NAME   prints the path, status 0; 1: there is none;
#                              2: two stand at the shallowest depth (which one
#                              was meant cannot be told); 3: the shallowest is
#                              not a regular file (a link, a folder)
#   submission_name NAME       status 0 when NAME may name a student's folder:
#                              letters, digits and . _ @ + -, not first . @ + -
submission_file() {
    local hits depth
    hits=$(find "$1" -mindepth 1 -name "$2" -printf '%d %y %p\n' 2>/dev/null | sort -n -s -k1,1)
    [ -n "$hits" ] || return 1
    depth=${hits%% *}
    [ "$(printf '%s\n' "$hits" | awk -v d="$depth" '$1 == d' | wc -l)" -eq 1 ] || return 2
    hits=$(printf '%s\n' "$hits" | head -n 1)
    [ "$(echo "$hits" | cut -d' ' -f2)" = f ] || return 3
    printf '%s\n' "$hits" | cut -d' ' -f3-
}
submission_name() {
    [[ $1 =~ ^[A-Za-z0-9_][A-Za-z0-9._@+-]*$ ]]
}
