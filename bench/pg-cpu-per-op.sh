#!/usr/bin/env bash
# CPU per request of a PostgreSQL-backed Ferrodyn node and of the PostgreSQL
# server behind it, during one wrk run of a bench/ops.lua op:
#
#   bench/pg-cpu-per-op.sh NODE_URL NODE_PID POSTMASTER_PID OP [SECONDS]
#
# (POSTMASTER_PID: the first line of the data directory's postmaster.pid;
# every backend is its child.) Load the fdbench table first (bench/run.py).
# Prints requests/s and microseconds of CPU per request for the node and for
# PostgreSQL, read from /proc before and after the run.
set -euo pipefail
url=$1 node=$2 postmaster=$3 op=$4 secs=${5:-6}
ticks() { # utime + stime of the given pids, in clock ticks
    local total=0 pid fields
    for pid in "$@"; do
        fields=$(cut -d' ' -f14,15 "/proc/$pid/stat" 2>/dev/null) || continue
        total=$((total + ${fields% *} + ${fields#* }))
    done
    echo "$total"
}
postgres_ticks() { ticks $(pgrep -P "$postmaster"); }
export BENCH_OP=$op BENCH_TABLE=fdbench BENCH_KEYS=10000 BENCH_GROUPS=100
BENCH_AMZ_DATE=$(date -u +%Y%m%dT%H%M%SZ); export BENCH_AMZ_DATE
p0=$(postgres_ticks); n0=$(ticks "$node")
out=$(wrk -t1 -c16 -d"${secs}s" -s "$(dirname "$0")/ops.lua" "$url")
p1=$(postgres_ticks); n1=$(ticks "$node")
requests=$(grep -o 'requests=[0-9]*' <<<"$out" | cut -d= -f2)
rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
us_per_tick=$((1000000 / $(getconf CLK_TCK)))
echo "$op on $url: $rps req/s; CPU per request: node $(((n1 - n0) * us_per_tick / requests)) us, PostgreSQL $(((p1 - p0) * us_per_tick / requests)) us"
