#!/usr/bin/env python3
"""What a vector index costs on PostgreSQL storage (issue 25), one run:

PutItem of DIMS-dimension items from CLIENTS clients to node A, for SECONDS,
into a table without a vector index and into the same table with one, each
measured twice: node A alone over the database, then with node B serving the
same database (B's follower reads every vector write from the change log and
re-reads the item: vector_ops/follow.rs). For each run: throughput, and CPU
per write of node A, node B and the PostgreSQL backends (from /proc). At the
end B must find, by SearchVectors, an item written through A.

usage: bench/vectors_postgres.py target/release/ferrodyn postgres://USER@HOST:PORT
           --postmaster PID [--dims 128] [--clients 8] [--seconds 8]
(PID: the first line of the cluster's postmaster.pid; every backend is its
child. A fresh database is created for the run.)
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from vectors import Conn, create, free_port, hammer, number, search_body  # noqa: E402

TICK_US = 1_000_000 / os.sysconf("SC_CLK_TCK")


def ticks(pids):
    """utime + stime of `pids`, in clock ticks (processes gone count 0)."""
    total = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except OSError:
            pass
    return total


def backends(postmaster):
    out = subprocess.run(["pgrep", "-P", str(postmaster)], capture_output=True, text=True)
    return [int(pid) for pid in out.stdout.split()]


def start_node(binary, url, log_dir):
    port = free_port()
    log = open(os.path.join(log_dir, f"node-{port}.log"), "w")
    process = subprocess.Popen([binary, "serve", "--port", str(port), "--storage", url],
                               stdout=log, stderr=subprocess.STDOUT)
    deadline = time.time() + 60
    while True:
        try:
            Conn(port).call("ListTables", {})
            return process, port
        except (OSError, RuntimeError):
            if process.poll() is not None or time.time() > deadline:
                raise SystemExit(f"node did not start: see {log.name}")
            time.sleep(0.05)


def fresh_database(server):
    name = f"ferrodyn_vbench_{int(time.time())}"
    host_port = server.split("@", 1)[1]
    host, port = host_port.rsplit(":", 1)
    user = server.split("://", 1)[1].split("@", 1)[0]
    subprocess.run(["psql", "-h", host, "-p", port, "-U", user, "-d", "postgres", "-qc",
                    f"CREATE DATABASE {name}"], check=True)
    return f"{server}/{name}"


def writes(port, table, dims, clients, seconds, pids, postmaster, tag):
    rng = random.Random(tag)
    vectors = [[number(rng.uniform(-1, 1)) for _ in range(dims)] for _ in range(256)]

    def request(worker, n):
        item = {"pk": {"S": f"{tag}-{worker}-{n}"}, "emb": {"L": vectors[(worker * 31 + n) % 256]}}
        return json.dumps({"TableName": table, "Item": item}).encode()
    nodes0 = [ticks([pid]) for pid in pids]
    pg0 = ticks(backends(postmaster))
    rate, p50, p99 = hammer(port, request, "PutItem", clients, seconds)
    nodes1 = [ticks([pid]) for pid in pids]
    pg1 = ticks(backends(postmaster))
    count = rate * seconds
    per_write = [(b - a) * TICK_US / count for a, b in zip(nodes0, nodes1)]
    return rate, p50, p99, per_write, (pg1 - pg0) * TICK_US / count


def main():
    p = argparse.ArgumentParser()
    p.add_argument("binary")
    p.add_argument("server")
    p.add_argument("--postmaster", type=int, required=True)
    p.add_argument("--dims", type=int, default=128)
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--seconds", type=float, default=8)
    args = p.parse_args()
    url = fresh_database(args.server)
    logs = tempfile.mkdtemp(prefix="vbench-pg-")
    a, port_a = start_node(args.binary, url, logs)
    conn = Conn(port_a)
    create(conn, "plain", args.dims, with_index=False)
    create(conn, "indexed", args.dims, with_index=True)
    time.sleep(1)
    rows = []
    b = None
    try:
        for nodes in ("A alone", "A + B following"):
            if nodes == "A + B following":
                b, port_b = start_node(args.binary, url, logs)
                time.sleep(2)
            pids = [a.pid] + ([b.pid] if b else [])
            for table in ("plain", "indexed"):
                tag = f"{table}{len(rows)}"
                rate, p50, p99, per_write, pg = writes(port_a, table, args.dims, args.clients,
                                                       args.seconds, pids, args.postmaster, tag)
                rows.append((nodes, table, rate, p50, p99, per_write, pg))
                node_cpu = " / ".join(f"{x:.0f}" for x in per_write)
                print(f"{nodes:16} {table:8} {rate:8.0f} writes/s  p50 {p50:6.1f} ms  p99 {p99:6.1f} ms  "
                      f"CPU per write: node(s) {node_cpu} us, PostgreSQL {pg:.0f} us", flush=True)
        # B finds what A wrote (the follower's ~2 s delay, then some slack).
        probe = [0.5] * args.dims
        Conn(port_a).call("PutItem", {"TableName": "indexed",
                                      "Item": {"pk": {"S": "probe"}, "emb": {"L": [number(x) for x in probe]}}})
        deadline = time.time() + 30
        while time.time() < deadline:
            found = Conn(port_b).call("SearchVectors", search_body("indexed", probe))["SearchResults"]
            if found and found[0]["Item"]["pk"]["S"] == "probe":
                print(f"node B found A's probe first, {30 - (deadline - time.time()):.1f} s after it was written")
                break
            time.sleep(0.2)
        else:
            raise SystemExit("node B never found A's probe")
    finally:
        for node in (a, b):
            if node:
                node.terminate()
                node.wait(30)
    for nodes in ("A alone", "A + B following"):
        plain = next(r for r in rows if r[0] == nodes and r[1] == "plain")
        indexed = next(r for r in rows if r[0] == nodes and r[1] == "indexed")
        print(f"{nodes}: indexed/plain throughput {indexed[2] / plain[2]:.2f}x")


if __name__ == "__main__":
    main()
