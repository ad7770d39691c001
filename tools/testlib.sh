# testlib.sh — tiny assertion helpers for the kit's shell tests (sourced).
# Each check prints "ok - what" or "not ok - what" with the evidence, and
# counts; `finish` prints the tally and sets the exit status.
T_PASS=0
T_FAIL=0
B=${B:-build}
J=$B/tools/jsonq

ok() { T_PASS=$((T_PASS + 1)); echo "ok - $*"; }
not_ok() { T_FAIL=$((T_FAIL + 1)); echo "not ok - $*"; }

# expect_rc WANT WHAT -- command...   (stdout+stderr kept in $T_OUT)
expect_rc() {
    local want=$1 what=$2
    shift 3
    T_OUT=$("$@" 2>&1)
    local rc=$?
    if [ "$rc" = "$want" ]; then ok "$what (exit $rc)"; else
        not_ok "$what: exit $rc, expected $want"
        printf '%s\n' "$T_OUT" | tail -n 8 | sed 's/^/    | /'
    fi
}

# expect_out PATTERN WHAT — the last expect_rc output matches an extended regex
expect_out() {
    if grep -Eq -- "$1" <<<"$T_OUT"; then ok "$2"; else
        not_ok "$2: output lacks /$1/"
        printf '%s\n' "$T_OUT" | tail -n 8 | sed 's/^/    | /'
    fi
}

expect_file() { if [ -s "$1" ]; then ok "$2"; else not_ok "$2: $1 missing or empty"; fi; }
expect_no_file() { if [ ! -e "$1" ]; then ok "$2"; else not_ok "$2: $1 exists"; fi; }

# expect_cmp A OP B WHAT — numeric comparison with awk (OP: < <= > >= ==)
expect_cmp() {
    if awk -v a="$1" -v b="$3" "BEGIN { exit !(a $2 b) }"; then ok "$4 ($1 $2 $3)"; else
        not_ok "$4: $1 $2 $3 is false"
    fi
}

finish() {
    echo "# $T_PASS passed, $T_FAIL failed"
    [ "$T_FAIL" -eq 0 ]
}
