#!/usr/bin/env bash
# check-submission.sh — what a student's object may be made of. Every build of
# a lab's student files runs it (the Makefile's LAB_IMPL rules: `make grade`,
# `make grade SRC=`, the gradebook, Gradescope, the references, the skeletons
# and the mutants alike), so every grading path holds the same line:
#
#   include   the preprocessor read only the submission's own files (the lab's
#             student files, by name, in the directory they were taken from),
#             the lab's headers (labs/NN-*/*.h), the kit's headers
#             (common/include/) and the compiler's system include directories
#             — judged on the files it opened (its dependency output), after
#             symbolic links and "..", not on the source text;
#   embed     the assembly the compiler made has no .incbin, .include or
#             assembler macro (.macro, .irp, .rept, ...) — judged on that
#             assembly, whatever string, section name or asm statement
#             brought them (nor `;`, comment or quoting tricks that hide one);
#   define    the object's global symbols are the lab's functions: those its
#             headers (grader/api/labNN.txt: "headers") declare and the kit
#             does not provide; a .cu file's kernels too (C++ names no kit or
#             system library defines). Everything else must be static;
#   reference its undefined symbols are the lab's API (those headers), the
#             kit's calls (common/include/dl/*.h) and the system's libraries
#             (grader/api/kit.txt: "libs", and "libs-cu" for .cu files: the
#             CUDA runtime and cuBLAS), less what grader/api/kit.txt and the
#             lab's file deny (the kit's measuring and recording calls, the
#             kit's own answers to a task) and what the lab's file lists as
#             "waits" (calls that make the host wait for the device or
#             allocate on it, where its device code must only queue work),
#             plus what they allow.
#
# A refusal prints one line per problem, "refused [STATUS] SOURCE: why", and
# exits 1, which fails the build of that submission; STATUS is one of
# includes-outside-files, embeds-a-file, defines-outside-api,
# references-outside-api (the gradebook's status column, the judge's
# --not-built output).
#
#   check-submission.sh rules OUT LABDIR LIB "STUDENT FILES" KITOBJ... -- CPPFLAGS...
#       the lab's rules, derived from grader/api/{kit,labNN}.txt, the headers,
#       the kit's objects and library and the system's, into OUT
#       (environment: CC, NVCC, CUDA_LIBDIR when CUDA is built, SAN=1)
#   check-submission.sh source RULES SRCDIR SOURCE DEPFILE ASMFILE
#       before the object is assembled (for .cu, after: nvcc assembles itself)
#   check-submission.sh symbols RULES SOURCE OBJECT
set -uo pipefail
export LC_ALL=C

die() {
    echo "check-submission: $*" >&2
    exit 2
}

# ---- rules: derived once per lab ----

# The system include directories of a compiler driver for a language.
include_dirs() { # compiler lang
    "$1" -x"$2" -E -Wp,-v - </dev/null 2>&1 | sed -n 's/^ \(\/[^ ]*\).*/\1/p' | xargs -r realpath -e 2>/dev/null
}

# The names a library file defines (shared: its dynamic symbols; static: its globals).
library_names() { # path
    case $1 in
    *.a) nm -g --defined-only "$1" 2>/dev/null | awk 'NF == 3 { print $3 }' ;;
    *) nm -D --defined-only "$1" 2>/dev/null | awk 'NF == 3 { sub(/@.*/, "", $3); print $3 }' ;;
    esac
}

# Where a library named in kit.txt lives: the CUDA library directory, else the compiler's search path.
library_path() { # name
    if [ -n "${CUDA_LIBDIR:-}" ] && [ -e "$CUDA_LIBDIR/$1" ]; then
        realpath -e "$CUDA_LIBDIR/$1"
        return
    fi
    local p
    p=$("${CC:-cc}" -print-file-name="$1" 2>/dev/null)
    case $p in /*) [ -e "$p" ] && realpath -e "$p" ;; esac
}

# The functions declared in headers, as "FILE NAME" (gcc -aux-info: the compiler's own reading).
declared_functions() { # cppflags...
    local tmp
    tmp=$(mktemp -d) || return 1
    cat >"$tmp/all.c"
    # -aux-info is GCC's: another CC (clang) reads them through gcc where there is one
    if ! "${CC:-cc}" -std=c11 "$@" -aux-info "$tmp/all.aux" -fsyntax-only "$tmp/all.c" 2>"$tmp/err" &&
        ! gcc -std=c11 "$@" -aux-info "$tmp/all.aux" -fsyntax-only "$tmp/all.c" 2>>"$tmp/err"; then
        cat "$tmp/err" >&2
        rm -rf "$tmp"
        return 1
    fi
    # "/* FILE:LINE:NC */ extern RET NAME (ARGS);" — the name is the identifier before the first
    # "(" that opens a parameter list (not "(*", a returned function pointer); static ones are skipped
    sed -n 's|^/\* \(.*\):[0-9]*:[A-Z]* \*/ \(.*\)$|\1 \2|p' "$tmp/all.aux" | awk '{
        file = $1; decl = substr($0, length($1) + 2)
        if (decl ~ /^static /) next # inline helpers in headers are no object symbols
        while (match(decl, /[A-Za-z_][A-Za-z0-9_]* \(/)) {
            name = substr(decl, RSTART, RLENGTH - 2)
            rest = substr(decl, RSTART + RLENGTH)
            if (substr(rest, 1, 1) != "*") { print file, name; break }
            decl = rest
        }
    }'
    rm -rf "$tmp"
}

# "KEY value..." lines of a rules table (comments and blank lines dropped).
table() { # file key
    [ -f "$1" ] || return 0
    sed -e 's/#.*//' "$1" | awk -v k="$2" '$1 == k { for (i = 2; i <= NF; i++) print $i }'
}

rules() {
    local out=$1 labdir=$2 lib=$3 student=$4
    shift 4
    local kitobjs=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        kitobjs+=("$1")
        shift
    done
    [ "${1:-}" = -- ] && shift
    local id kit lab
    id=$(basename "$labdir" | cut -d- -f1)
    kit=grader/api/kit.txt
    lab=grader/api/lab$id.txt
    [ -f "$kit" ] || die "no $kit"
    [ -f "$lab" ] || die "no $lab: every lab states what its student files may define and call"
    local tmp
    tmp=$(mktemp -d) || die "no temporary directory"
    trap 'rm -rf "$tmp"' RETURN
    {
        # where the submission may include from
        echo "labdir $(realpath -e "$labdir")"
        for f in $student; do echo "student $f"; done
        for h in "$labdir"/*.h; do [ -f "$h" ] && echo "file $(realpath -e "$h")"; done
        echo "kitdir $(realpath -e common/include)"
        for d in $(include_dirs "${CC:-cc}" c); do echo "dir-c $d"; done
        if [ -n "${NVCC:-}" ]; then
            local cuda_home
            cuda_home=$(dirname "$(dirname "$(realpath -e "$NVCC")")")
            for d in $(include_dirs "${CC:-cc}" c++) $(realpath -e "$cuda_home"/include "$cuda_home"/targets/*/include 2>/dev/null); do
                echo "dir-cu $d"
            done
        fi
        # what the kit defines (its library and the lab's kit objects): never the submission's
        local o
        for o in "$lib" "${kitobjs[@]}"; do
            nm -g --defined-only "$o" 2>/dev/null | awk 'NF == 3 { print "taken", $3 }'
        done
    } >"$tmp/rules"
    # the system's libraries: what a C file may call, and a .cu file too
    local libs_c libs_cu name path
    libs_c=$(table "$kit" libs)
    [ "${SAN:-0}" = 1 ] && libs_c="$libs_c $(table "$kit" libs-san)"
    libs_cu=$([ -n "${NVCC:-}" ] && table "$kit" libs-cu)
    for name in $libs_c; do
        path=$(library_path "$name") || true
        [ -n "$path" ] || continue
        library_names "$path" | awk '{ print "ref", $1; print "taken", $1 }'
    done >>"$tmp/rules"
    for name in $libs_cu; do
        path=$(library_path "$name") || true
        [ -n "$path" ] || continue
        library_names "$path" | awk '{ print "ref-cu", $1; print "taken", $1 }'
    done >>"$tmp/rules"
    # the lab's API and the kit's calls, from the headers
    local headers h
    headers=$(table "$lab" headers)
    [ -n "$headers" ] || die "$lab names no headers"
    {
        for h in "$(realpath -e common/include)"/dl/*.h; do echo "#include \"$h\""; done
        for h in $headers; do
            [ -f "$labdir/$h" ] || die "$lab: no header $labdir/$h"
            echo "#include \"$(realpath -e "$labdir/$h")\""
        done
    } | declared_functions -I"$(realpath -e common/include)" -I"$(realpath -e "$labdir")" "$@" >"$tmp/decl" ||
        die "cannot read the headers' declarations"
    local api_files="" kitinc
    kitinc=$(realpath -e common/include)
    for h in $headers; do api_files="$api_files $(realpath -e "$labdir/$h")"; done
    {
        table "$kit" deny | awk -v f="$kit" '{ print "deny", $1, f }'
        table "$lab" deny | awk -v f="$lab" '{ print "deny", $1, f }'
        table "$lab" waits | awk -v f="$lab" '{ print "deny", $1, f, "waits" }'
        table "$kit" allow | awk '{ print "ref", $1 }'
        table "$lab" allow | awk '{ print "ref", $1 }'
        awk -v api="$api_files" -v kitinc="$kitinc/" '
            BEGIN { n = split(api, a, " "); for (i = 1; i <= n; i++) isapi[a[i]] = 1 }
            isapi[$1] { print "ref", $2; print "api", $2; next }
            index($1, kitinc) == 1 { print "ref", $2 }' "$tmp/decl"
    } >>"$tmp/rules"
    # the lab's functions: declared by its headers, not defined by the kit; denied names are no one's
    awk '
        $1 == "taken" { taken[$2] = 1 }
        $1 == "api" { api[$2] = 1 }
        $1 == "deny" { deny[++nd] = $2 }
        $1 != "api" { print }
        END {
            for (name in api) {
                if (name in taken) continue
                bad = 0
                for (i = 1; i <= nd; i++) if (glob(name, deny[i])) bad = 1
                if (!bad) print "define", name
            }
        }
        function glob(s, p,   r) { r = p; gsub(/[.+^$(){}|\[\]\\]/, "\\\\&", r); gsub(/\*/, ".*", r); gsub(/\?/, ".", r); return s ~ ("^" r "$") }
    ' "$tmp/rules" | sort -u >"$out.tmp" && mv "$out.tmp" "$out"
}

# ---- source: what the preprocessor read, what the assembler will do ----

source_check() {
    local rules=$1 srcdir=$2 src=$3 dep=$4 asm=$5 status=0 kind=c
    [ -f "$rules" ] || die "no rules file $rules"
    case $src in *.cu) kind=cu ;; esac
    local srcreal
    srcreal=$(realpath -e "$srcdir") || die "no directory $srcdir"
    # the first rule of the dependency file: "target: prerequisites", continued by backslashes
    local deps
    deps=$(awk '{ cont = sub(/\\$/, ""); printf "%s ", $0; if (!cont) exit }' "$dep" |
        sed -e 's/\\ /\x01/g' -e 's/^[^:]*:[[:space:]]//' | tr -s ' \t' '\n\n' | sed '/^$/d')
    [ -n "$deps" ] || die "no dependencies in $dep"
    local list=() p
    while IFS= read -r p; do list+=("${p//$'\x01'/ }"); done <<<"$deps"
    paste -d '\t' <(printf '%s\n' "${list[@]}") <(realpath -m -- "${list[@]}") |
        awk -F'\t' -v rules="$rules" -v srcdir="$srcreal" -v kind="$kind" -v src="$src" '
        BEGIN {
            while ((getline line < rules) > 0) {
                split(line, w, " ")
                if (w[1] == "student") ok[srcdir "/" w[2]] = 1
                else if (w[1] == "file") ok[w[2]] = 1
                else if (w[1] == "kitdir") dirs[++nd] = w[2]
                else if (w[1] == "dir-" kind) dirs[++nd] = w[2]
                else if (w[1] == "labdir") labdir = w[2]
            }
        }
        {
            path = $1; real = $2; good = 0
            if (path !~ /^\/(proc|dev|sys)(\/|$)/ && real !~ /^\/(proc|dev|sys)(\/|$)/) {
                if (real in ok) good = 1
                for (i = 1; i <= nd && !good; i++) if (index(real, dirs[i] "/") == 1) good = 1
            }
            if (!good) {
                printf "refused [includes-outside-files] %s: the compiler read %s%s: a student file may include only the lab'"'"'s student files (from the directory it came from), the lab'"'"'s headers (%s/*.h), the kit'"'"'s headers (common/include/dl/) and the system'"'"'s\n", src, path, (real != path ? " (that is, " real ")" : ""), labdir
                bad = 1
            }
        }
        END { exit bad }' || status=1
    [ -f "$asm" ] || die "no assembly $asm"
    assembly_check "$src" "$asm" || status=1
    return $status
}

# Every statement of the assembly, as the assembler will read it: strings
# ("..." with escapes) and character constants ('c) skipped, # comments
# dropped, statements split at ';', labels stripped; a directive that reads a
# file or makes new directives is refused, and so is anything this reading
# could get wrong (a C comment, a backslash or a control character outside a
# string, an unterminated string).
assembly_check() { # source asm
    awk -v src="$1" '
    function refuse(why) {
        if (shown < 3) printf "refused [embeds-a-file] %s: its assembly (line %d: %s) %s: .incbin, .include and assembler macros are not allowed in a student file\n", src, NR, substr(raw, 1, 120), why
        shown++; bad = 1
    }
    function statement(s,   d) {
        sub(/^[ \t]+/, "", s)
        while (match(s, /^([A-Za-z0-9_.$@]+|\x02)[ \t]*:/)) { s = substr(s, RLENGTH + 1); sub(/^[ \t]+/, "", s) }
        if (substr(s, 1, 1) != ".") return
        match(s, /^\.[A-Za-z0-9_.]*/)
        d = tolower(substr(s, 1, RLENGTH))
        if (d in forbidden) refuse("has " d)
    }
    BEGIN {
        split(".incbin .include .macro .endm .exitm .purgem .irp .irpc .rept .endr .altmacro .noaltmacro .mri", f, " ")
        for (i in f) forbidden[f[i]] = 1
    }
    {
        raw = $0; line = $0; out = ""; n = length(line); i = 1; instr = 0
        while (i <= n) {
            c = substr(line, i, 1)
            if (instr) {
                if (c == "\\") i++
                else if (c == "\"") { instr = 0; out = out "\x02" }
            } else if (c == "\"") instr = 1
            else if (c == "#") break
            else if (c == "'"'"'") { i++; if (substr(line, i, 1) == "\\") i++ }
            else if (c == "\\") { refuse("has a backslash outside a string"); break }
            else if (c == "/" && substr(line, i + 1, 1) == "*") { refuse("has a C comment"); break }
            else if (c ~ /[\001-\010\013-\037\177]/) { refuse("has a control character"); break }
            else out = out c
            i++
        }
        if (instr) refuse("has an unterminated string")
        k = split(out, st, ";")
        for (j = 1; j <= k; j++) statement(st[j])
    }
    END { exit bad }' "$2"
}

# ---- symbols: what the object defines and refers to ----

symbols_check() {
    local rules=$1 src=$2 obj=$3 kind=c
    [ -f "$rules" ] || die "no rules file $rules"
    [ -f "$obj" ] || die "no object $obj"
    case $src in *.cu) kind=cu ;; esac
    nm -P "$obj" | awk -v rules="$rules" -v kind="$kind" -v src="$src" -v obj="$obj" '
    function glob(s, p,   r) { r = p; gsub(/[.+^$(){}|\[\]\\]/, "\\\\&", r); gsub(/\*/, ".*", r); gsub(/\?/, ".", r); return s ~ ("^" r "$") }
    function refuse(status, why) {
        if (shown < 8) printf "refused [%s] %s (%s): %s\n", status, src, obj, why
        shown++; bad = 1
    }
    BEGIN {
        while ((getline line < rules) > 0) {
            split(line, w, " ")
            if (w[1] == "define") def[w[2]] = 1
            else if (w[1] == "ref" || (w[1] == "ref-cu" && kind == "cu")) ref[w[2]] = 1
            else if (w[1] == "taken") taken[w[2]] = 1
            else if (w[1] == "deny") { nd++; deny[nd] = w[2]; denyfile[nd] = w[3]; denywhy[nd] = w[4] }
        }
    }
    {
        name = $1; type = $2
        if (type == "U" || type == "w" || type == "v") {
            for (i = 1; i <= nd; i++) if (glob(name, deny[i])) break
            if (i <= nd && denywhy[i] == "waits")
                refuse("references-outside-api", "it refers to " name ", which makes the host wait for the device or allocates on it: this lab'"'"'s device code queues its work and returns, the kit reads the results back (" denyfile[i] ")")
            else if (i <= nd)
                refuse("references-outside-api", "it refers to " name ", which only the kit may call (" denyfile[i] ")")
            else if (!(name in ref))
                refuse("references-outside-api", "it refers to " name ", which is neither the lab'"'"'s API, the kit'"'"'s (common/include/dl/) nor the system'"'"'s" (kind == "cu" ? " (C, C++, CUDA runtime, cuBLAS)" : " (C library)"))
        } else if (type ~ /^[A-Z]$/ && type != "N" || type == "u" || type == "i") {
            if (name in def) next
            if (kind == "cu" && name ~ /^_Z/ && !(name in taken)) next # a kernel and its launch stub
            if (kind == "cu" && name ~ /^DW\.ref\./ && (type == "V" || type == "W")) next # C++ exception tables
            if (name in taken)
                refuse("defines-outside-api", "it defines " name ", which the kit or a system library defines: a submission may not replace it")
            else
                refuse("defines-outside-api", "it defines " name ", which is not one of the lab'"'"'s functions: make it static (a helper of one file) or drop it")
        }
    }
    END { exit bad }'
}

cmd=${1:-}
shift || true
case $cmd in
rules) rules "$@" ;;
source) source_check "$@" ;;
symbols) symbols_check "$@" ;;
*) die "usage: check-submission.sh rules|source|symbols ... (see its header)" ;;
esac
