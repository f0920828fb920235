#!/usr/bin/env python3
"""Global tables across three servers on loopback (issue 22), one run:

- MREC write cost: PutItem throughput (wrk, 16 connections) on the origin into a
  table with two replicas (on two other servers) against the same table without
  replicas (a stream with both images, which a replica needs) and a plain table,
  alternated twice;
- MREC replication lag: a steady 1,000 PutItems a second for 15 s, then the
  origin's ReplicationLatency per target region (ms from the commit at the origin
  to the target's acknowledgement of the change, p50/p99 of the run's changes,
  GET /ferrodyn/replication);
- MRSC: PutItem latency (wrk, one connection) into a STRONG table of the three
  servers against the MREC table and the table without replicas.

    python3 bench/global_tables.py target/release/ferrodyn [--secs 5]

Python 3.11 standard library and wrk (bench/run.py's driver)."""
import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import backups  # noqa: E402  (call, wait_for)
import run  # noqa: E402

REGIONS = ["us-east-1", "us-east-2", "us-west-2"]
ITEMS = 20_000


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_servers(binary, root):
    ports = [free_port() for _ in REGIONS]
    processes = []
    for i, region in enumerate(REGIONS):
        peers = [a for j, r in enumerate(REGIONS) if j != i for a in ("--peer", f"{r}=http://127.0.0.1:{ports[j]}")]
        command = [binary, "serve", "--data-dir", os.path.join(root, region), "--port", str(ports[i]),
                   "--region", region, "--console", "off", "--exit-on-stdin-eof", *peers]
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        process.stdout.readline()
        processes.append(process)
    return processes, [f"http://127.0.0.1:{p}" for p in ports]


def tables(url):
    client = run.Client(url)
    for table in ("plain", "solo", "global", "strong"):
        run.setup_table("ferrodyn", url, table, ITEMS if table != "strong" else 1, 0)
    stream = {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
    backups.call(client, "UpdateTable", {"TableName": "solo", "StreamSpecification": stream})
    for region in REGIONS[1:]:
        backups.call(client, "UpdateTable", {"TableName": "global", "ReplicaUpdates": [{"Create": {"RegionName": region}}]})
        backups.wait_for(f"the replica in {region}", lambda: all(
            r["ReplicaStatus"] == "ACTIVE" for r in backups.call(client, "DescribeTable", {"TableName": "global"})["Table"]["Replicas"]))
    backups.call(client, "DeleteItem", {"TableName": "strong", "Key": {"PK": {"S": "user#1"}, "SK": {"S": "profile"}}})  # MRSC: empty
    backups.call(client, "UpdateTable", {"TableName": "strong", "MultiRegionConsistency": "STRONG",
                                         "ReplicaUpdates": [{"Create": {"RegionName": r}} for r in REGIONS[1:]]})


def replication_report(url, table):
    request = urllib.request.Request(f"{url}/ferrodyn/replication?table={table}", headers={
        "authorization": "AWS4-HMAC-SHA256 Credential=bench/20261204/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0"})
    with urllib.request.urlopen(request) as response:
        return json.loads(response.read())


def steady_writes(url, table, rate, secs):
    """`rate` PutItems a second from four threads, each paced; returns how many."""
    done = []

    def writer(offset):
        client, n, start = run.Client(url), 0, time.perf_counter()
        while time.perf_counter() - start < secs:
            due = start + n / (rate / 4)
            if due > time.perf_counter():
                time.sleep(due - time.perf_counter())
            key = (offset + 4 * n) % ITEMS
            backups.call(client, "PutItem", {"TableName": table, "Item": run.user_item(key, n)})
            n += 1
        done.append(n)
    threads = [threading.Thread(target=writer, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(done)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--secs", type=int, default=5)
    args = parser.parse_args()
    root = tempfile.mkdtemp(prefix="ferrodyn-global-bench-")
    processes, urls = start_servers(args.binary, root)
    try:
        origin = urls[0]
        tables(origin)
        # The lag first: the report's samples are the recent changes'.
        written = steady_writes(origin, "global", 1000, 15)
        time.sleep(1)
        lag = replication_report(origin, "global")["Targets"]
        throughput, cpu = {}, {}
        for table in ("plain", "solo", "global") * 2:
            before = run.proc_cpu_ticks(processes[0].pid)
            result = run.run_wrk(origin, "put", args.secs, 16, 2, table, ITEMS, 0)
            spent = run.proc_cpu_ticks(processes[0].pid) - before
            throughput.setdefault(table, []).append(result["rps"])
            cpu.setdefault(table, []).append(spent * 1e6 / run.CLK / result["requests"])
        backups.wait_for("the replicas to catch up", lambda: all(
            t["PendingAgeMs"] == 0 for t in replication_report(origin, "global")["Targets"]))
        latency = {t: run.run_wrk(origin, "put", args.secs, 1, 1, t, ITEMS if t != "strong" else 1000, 0)
                   for t in ("solo", "global", "strong")}
    finally:
        for p in processes:
            p.stdin.close()
            p.wait(timeout=60)
        shutil.rmtree(root, ignore_errors=True)
    print("\nPutItem throughput on the origin (req/s, 16 connections, two rounds):")
    for table, rps in throughput.items():
        print(f"  {table:8} {' '.join(f'{r:8.0f}' for r in rps)}   mean {sum(rps) / len(rps):8.0f}")
    mean = {t: sum(v) / len(v) for t, v in throughput.items()}
    print("  origin CPU per PutItem (µs): " + ", ".join(f"{t} {sum(v) / len(v):.0f}" for t, v in cpu.items()))
    print(f"  two replicas / same table without: {mean['global'] / mean['solo']:.2f}"
          f"   / plain table: {mean['global'] / mean['plain']:.2f}")
    print(f"\nReplication lag at a steady 1,000 PutItems/s ({written} writes in 15 s):")
    for target in lag:
        figures = target["ReplicationLatencyMs"]
        print(f"  to {target['RegionName']}: p50 {figures['P50']} ms, p99 {figures['P99']} ms"
              f" ({figures['Samples']} changes sampled)")
    print("\nPutItem latency, one connection (ms):")
    for table, r in latency.items():
        print(f"  {table:8} p50 {r['p50_ms']:6.2f}  p99 {r['p99_ms']:6.2f}  ({r['rps']:.0f} req/s)")


if __name__ == "__main__":
    main()
