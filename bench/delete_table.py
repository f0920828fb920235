#!/usr/bin/env python3
"""DeleteTable on the durable store: how long the call takes, how long the
background purge takes, and how fast a GetItem on another table stays
meanwhile. Standard library only; starts its own server.

    bench/delete_table.py --bin target/release/ferrodyn --items 50000,100000 \
        [--tables 2] [--port 9180]

For each size: a fresh data dir, `--tables` tables of N items each (written
with BatchWriteItem from 4 threads), then every table deleted at once from
parallel threads while one thread keeps reading an item of an unrelated
table. Prints a markdown row per size: DeleteTable latency (max over the
tables), time until the server reports every purge done (its stderr line
"purged table"), and the GetItem p50/p99/max during that window.
"""

import argparse
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
import urllib.request

AUTH = ("AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/dynamodb/aws4_request, "
        "SignedHeaders=host;x-amz-date;x-amz-target, Signature=0")


def call(endpoint, op, body):
    request = urllib.request.Request(endpoint, data=json.dumps(body).encode(), headers={
        "X-Amz-Target": f"DynamoDB_20120810.{op}",
        "Content-Type": "application/x-amz-json-1.0",
        "X-Amz-Date": "20260101T000000Z",
        "Authorization": AUTH,
    })
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.loads(response.read())


def create(endpoint, name):
    call(endpoint, "CreateTable", {
        "TableName": name, "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": "p", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "p", "KeyType": "HASH"}]})


def load(endpoint, name, items, threads=4):
    pad = "x" * 100

    def worker(start):
        for first in range(start * 25, items, 25 * threads):
            batch = [{"PutRequest": {"Item": {"p": {"S": f"k{i}"}, "v": {"S": pad}}}}
                     for i in range(first, min(first + 25, items))]
            pending = {name: batch}
            while pending:
                pending = call(endpoint, "BatchWriteItem",
                               {"RequestItems": pending}).get("UnprocessedItems") or {}

    workers = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()


def table_bytes(path):
    """Bytes in the store's table files (fjall preallocates its journal)."""
    total = 0
    for root, _, files in os.walk(path):
        if os.path.basename(root) == "tables":
            total += sum(os.path.getsize(os.path.join(root, f)) for f in files)
    return total


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * p))] if values else float("nan")


def measure(binary, port, items, tables, purge_log=True):
    data = tempfile.mkdtemp(prefix="fd-deltable-")
    log_path = os.path.join(data, "stderr.log")
    log = open(log_path, "w")
    server = subprocess.Popen([binary, "serve", "--data-dir", os.path.join(data, "db"),
                               "--port", str(port)], stdout=subprocess.PIPE, stderr=log, text=True)
    server.stdout.readline()
    endpoint = f"http://127.0.0.1:{port}"
    try:
        create(endpoint, "other")
        call(endpoint, "PutItem", {"TableName": "other", "Item": {"p": {"S": "a"}}})
        names = [f"big{t}" for t in range(tables)]
        for name in names:
            create(endpoint, name)
            load(endpoint, name, items)
        latencies, delete_times, stop = [], [], threading.Event()

        def reader():
            while not stop.is_set():
                t = time.perf_counter()
                call(endpoint, "GetItem", {"TableName": "other", "Key": {"p": {"S": "a"}}})
                latencies.append(time.perf_counter() - t)

        def delete(name):
            t = time.perf_counter()
            call(endpoint, "DeleteTable", {"TableName": name})
            delete_times.append(time.perf_counter() - t)

        before = table_bytes(data)
        reading = threading.Thread(target=reader)
        reading.start()
        time.sleep(0.2)
        started = time.perf_counter()
        deleters = [threading.Thread(target=delete, args=(n,)) for n in names]
        for d in deleters:
            d.start()
        for d in deleters:
            d.join()
        while purge_log and open(log_path).read().count("purged table") < tables:
            if time.perf_counter() - started > 600:
                break
            time.sleep(0.02)
        purged = time.perf_counter() - started
        stop.set()
        reading.join()
        time.sleep(1)
        return max(delete_times), purged, latencies, before, table_bytes(data)
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()
        shutil.rmtree(data, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True)
    parser.add_argument("--items", default="50000,100000,200000,300000")
    parser.add_argument("--tables", type=int, default=2)
    parser.add_argument("--port", type=int, default=9180)
    parser.add_argument("--sync-purge", action="store_true",
                        help="the server purges inside DeleteTable (builds before issue 14): no purge log to wait for")
    args = parser.parse_args()
    print("| items per table | tables | DeleteTable (max) | all purges done | GetItem p50 | p99 | max | GetItems | table files before → 1 s after |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for items in [int(n) for n in args.items.split(",")]:
        delete, purged, lat, before, after = measure(args.bin, args.port, items, args.tables, not args.sync_purge)
        ms = lambda s: f"{s * 1000:.1f} ms"
        print(f"| {items:,} | {args.tables} | {ms(delete)} | {purged:.2f} s | {ms(percentile(lat, 0.5))} "
              f"| {ms(percentile(lat, 0.99))} | {ms(max(lat) if lat else float('nan'))} | {len(lat)} "
              f"| {before / 1e6:.1f} → {after / 1e6:.1f} MB |", flush=True)


if __name__ == "__main__":
    main()
