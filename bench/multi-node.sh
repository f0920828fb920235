#!/bin/bash
# usage: bench/multi-node.sh OP N — N wrk processes at once, one per node on
# ports 8404.., 24 connections in total; prints the summed requests/s.
# (Load the fdbench table first, e.g. with bench/run.py against one node.)
op=$1; n=$2; c=$((24 / n)); pids=""
for i in $(seq 4 $((3 + n))); do
  BENCH_TABLE=fdbench BENCH_OP=$op wrk -t1 -c$c -d6s -s "$(dirname "$0")/ops.lua" http://127.0.0.1:840$i > "${TMPDIR:-/tmp}"/multi-$op-$n-$i.txt 2>&1 &
  pids="$pids $!"
done
wait $pids
total=0
for i in $(seq 4 $((3 + n))); do
  r=$(grep "Requests/sec" "${TMPDIR:-/tmp}"/multi-$op-$n-$i.txt | awk '{print $2}'); bad=$(grep -c Non-2xx "${TMPDIR:-/tmp}"/multi-$op-$n-$i.txt)
  total=$(python3 -c "print($total + $r)"); echo "  node $i: $r req/s (non-2xx lines: $bad)"
done
echo "$op with $n node(s): $total req/s"
