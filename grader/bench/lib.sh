# lib.sh (bench) — what the benches share, sourced by grader/bench/labNN.sh.
# shellcheck shell=bash
#
# Why rounds and a "quiet" test: synchronous data parallelism runs at the pace
# of its slowest rank. With as many ranks as cores, one other busy process
# (a build, another student's job, a neighbour VM stealing time) takes a core
# share from one rank, and the whole job waits for it, while a one-rank run
# beside it still has a free core: the measured 2-rank speedup on a 2-core
# machine then drops from about 1.8x to about 1.1x, for as long as the other
# process runs. That is the "bimodal" figure seen run to run. So each bench
# runs its configurations interleaved over several rounds, measures how many
# cores *other* processes used during every run, reports the median over the
# quiet rounds with its range, and says how many rounds it left out and why.
#
# Contract
# - bench_run KEY CMD...: runs CMD (stdout and stderr to $tmp/KEY.log; $tmp
#   must exist), returns CMD's status, and sets BENCH_WALL (seconds),
#   BENCH_OTHERS (cores used by processes other than CMD and its children,
#   including time stolen by the host, averaged over the run: from
#   /proc/stat's busy time minus CMD's own CPU time). Without /proc/stat,
#   BENCH_OTHERS is 0.
# - BENCH_QUIET (default 0.25 cores, env BENCH_QUIET): a run is quiet when
#   BENCH_OTHERS is below it; bench_is_quiet X tests one figure.
# - BENCH_ROUNDS (default 5, env): how many interleaved rounds to run.
# - bench_median / bench_min / bench_max: of the numbers on stdin, one per
#   line; nothing in, "nan" out.
# - bench_begin NN [OUT]: every bench's start: sets B (env, default build),
#   out (OUT, default $B/bench; created), J (jsonq), D (the reference's lab NN
#   driver) and tmp (a new temporary directory, removed when the script exits),
#   and exports DL_DEVICE=cpu: these benches measure the CPU's scaling (the
#   GPU's ratios are tools/bench-gpu.sh's), and left to --device auto the
#   one-rank run of a one-GPU machine would take the GPU while two and four
#   ranks share the CPU, and the "speedup" would compare the two.
#   Exits 1 when no temporary directory can be made.
BENCH_ROUNDS=${BENCH_ROUNDS:-5}
BENCH_QUIET=${BENCH_QUIET:-0.25}

# shellcheck disable=SC2034 # the variables are the sourcing bench's
bench_begin() {
    B=${B:-build}
    out=${2:-$B/bench}
    J=$B/tools/jsonq
    D=$B/solutions/lab$1
    export DL_DEVICE=cpu
    mkdir -p "$out"
    tmp=$(mktemp -d) || exit 1
    trap 'rm -rf "$tmp"' EXIT
}

# Busy and total jiffies of all CPUs (user nice system irq softirq steal).
_bench_jiffies() {
    [ -r /proc/stat ] || { echo "0 0"; return; }
    awk '$1 == "cpu" { busy = $2 + $3 + $4 + $7 + $8 + $9; print busy, busy + $5 + $6; exit }' /proc/stat
}

# CPU seconds used by this shell's waited-for children so far: bash's times,
# run in this shell (in a pipeline or $(...) it would count a subshell's).
_bench_child_cpu() {
    times >"$tmp/.times"
    awk 'NR == 2 {
        s = 0
        for (i = 1; i <= 2; i++) { split($i, p, /[ms]/); s += p[1] * 60 + p[2] }
        print s
    }' "$tmp/.times"
}

bench_run() {
    local key=$1 rc
    shift
    local j0 c0 t0 j1 c1 t1
    j0=$(_bench_jiffies)
    _bench_child_cpu >"$tmp/.c0"
    t0=$(date +%s.%N)
    "$@" >"$tmp/$key.log" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    _bench_child_cpu >"$tmp/.c1"
    j1=$(_bench_jiffies)
    c0=$(cat "$tmp/.c0") c1=$(cat "$tmp/.c1")
    BENCH_WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
    local hz
    hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
    BENCH_OTHERS=$(awk -v j0="$j0" -v j1="$j1" -v c0="$c0" -v c1="$c1" -v w="$BENCH_WALL" -v hz="$hz" 'BEGIN {
        split(j0, a, " "); split(j1, b, " ")
        if (b[2] == 0 || w <= 0) { print 0; exit }
        o = ((b[1] - a[1]) / hz - (c1 - c0)) / w
        printf "%.2f", o < 0 ? 0 : o
    }')
    return $rc
}

bench_is_quiet() { awk -v o="$1" -v q="$BENCH_QUIET" 'BEGIN { exit !(o < q) }'; }

bench_median() {
    sort -g | awk '{ v[NR] = $1 } END {
        if (NR == 0) print "nan"
        else if (NR % 2) print v[(NR + 1) / 2]
        else printf "%.6g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2
    }'
}
bench_min() { sort -g | awk 'NR == 1 { print $1 } END { if (NR == 0) print "nan" }'; }
bench_max() { sort -g | awk '{ v = $1 } END { print NR ? v : "nan" }'; }
