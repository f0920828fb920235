#!/usr/bin/env python3
"""PutItem on PostgreSQL storage into a table without a stream and into one
with a stream (each write then also inserts a change-log record), in
alternating rounds, with the transactions PostgreSQL rolled back meanwhile
(pg_stat_database: serialization failures the engine retried). One node,
a fresh database.

usage: bench/postgres_log_writes.py target/release/ferrodyn postgres://USER@HOST:PORT
           [--clients 8] [--seconds 6] [--rounds 2]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from vectors import Conn, hammer  # noqa: E402
from vectors_postgres import fresh_database, start_node  # noqa: E402


def psql_args(server):
    user, host_port = server.split("://", 1)[1].split("@", 1)
    host, port = host_port.rsplit(":", 1)
    return ["psql", "-h", host, "-p", port, "-U", user, "-d", "postgres", "-tAc"]


def transactions(server, database):
    """(committed, rolled back) so far in `database`."""
    query = f"SELECT xact_commit, xact_rollback FROM pg_stat_database WHERE datname = '{database}'"
    out = subprocess.run(psql_args(server) + [query], capture_output=True, text=True, check=True)
    committed, rolled_back = out.stdout.strip().split("|")
    return int(committed), int(rolled_back)


def create(conn, name, stream):
    body = {"TableName": name, "BillingMode": "PAY_PER_REQUEST",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}
    if stream:
        body["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"}
    conn.call("CreateTable", body)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("binary")
    p.add_argument("server")
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--seconds", type=float, default=6)
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args()
    url = fresh_database(args.server)
    database = url.rsplit("/", 1)[1]
    node, port = start_node(args.binary, url, tempfile.mkdtemp(prefix="pg-log-writes-"))
    try:
        conn = Conn(port)
        create(conn, "plain", False)
        create(conn, "streamed", True)
        time.sleep(1)
        rates = {"plain": [], "streamed": []}
        for _ in range(args.rounds):
            for table in ("plain", "streamed"):
                def request(worker, n, table=table):
                    item = {"pk": {"S": f"{table}-{worker}-{n}-{time.time_ns()}"}, "v": {"S": "x" * 100}}
                    return json.dumps({"TableName": table, "Item": item}).encode()
                before = transactions(args.server, database)
                rate, p50, p99 = hammer(port, request, "PutItem", args.clients, args.seconds)
                time.sleep(0.5)  # the statistics collector catches up
                after = transactions(args.server, database)
                rates[table].append(rate)
                print(f"{table:9} {rate:7.0f} writes/s  p50 {p50:.1f} ms  p99 {p99:.1f} ms  "
                      f"transactions committed {after[0] - before[0]}, rolled back {after[1] - before[1]}",
                      flush=True)
        ratio = sum(rates["streamed"]) / sum(rates["plain"])
        print(f"streamed/plain throughput: {ratio:.2f}x")
    finally:
        node.terminate()
        node.wait(30)


if __name__ == "__main__":
    main()
