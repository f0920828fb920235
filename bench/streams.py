#!/usr/bin/env python3
"""Streams with shards per partition: PutItem into a table with a stream
(NEW_AND_OLD_IMAGES, four shards: a new on-demand table) against the same
table without one, for two builds side by side (an A/B of the write path),
and how fast a consumer drains 100,000 records shard by shard, parents
before children (the after build only).

    python3 bench/streams.py /tmp/ferrodyn-before target/release/ferrodyn [--secs 5]

Python 3.11 standard library and wrk (bench/run.py's driver)."""
import argparse
import json
import os
import shutil
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import backups  # noqa: E402  (start, call, puts)
import run  # noqa: E402

STREAM = {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}


def streams_call(url, op, body):
    request = urllib.request.Request(url + "/", data=json.dumps(body).encode(), headers={
        "x-amz-target": f"DynamoDBStreams_20120810.{op}", "content-type": "application/x-amz-json-1.0",
        "authorization": "AWS4-HMAC-SHA256 Credential=bench/20261204/us-east-1/dynamodb/aws4_request, "
                         "SignedHeaders=host, Signature=0"})
    with urllib.request.urlopen(request) as response:
        return json.loads(response.read())


def with_stream(url, table):
    client = run.Client(url)
    answer = backups.call(client, "UpdateTable", {"TableName": table, "StreamSpecification": STREAM})
    return answer["TableDescription"]["LatestStreamArn"]


def measure_puts(binary, secs, results):
    data_dir = tempfile.mkdtemp(prefix="ferrodyn-streams-ab-")
    process, url = backups.start(binary, data_dir, None)
    try:
        for table in ("stream_off", "stream_on"):
            run.setup_table("ferrodyn", url, table, 20_000, 0)
        with_stream(url, "stream_on")
        for table in ("stream_off", "stream_on", "stream_off", "stream_on"):
            results.setdefault((binary, table), []).append(backups.puts(url, secs, 20_000, table)["rps"])
    finally:
        process.stdin.close()
        process.wait(timeout=60)
        shutil.rmtree(data_dir, ignore_errors=True)


def drain(binary, records):
    """Seconds to read `records` changes through every shard, KCL-style."""
    data_dir = tempfile.mkdtemp(prefix="ferrodyn-streams-drain-")
    process, url = backups.start(binary, data_dir, None)
    try:
        run.setup_table("ferrodyn", url, "drained", 10, 0)
        arn = with_stream(url, "drained")
        client = run.Client(url)
        # Keys the 10 seeded items do not have: rewriting one unchanged
        # would make no record.
        items = [run.user_item(10**6 + k, k) for k in range(records)]
        for start in range(0, len(items), 25):
            batch = [{"PutRequest": {"Item": item}} for item in items[start:start + 25]]
            backups.call(client, "BatchWriteItem", {"RequestItems": {"drained": batch}})
        t0 = time.perf_counter()
        shards = streams_call(url, "DescribeStream", {"StreamArn": arn})["StreamDescription"]["Shards"]
        read = 0
        for shard in shards:
            it = streams_call(url, "GetShardIterator", {"StreamArn": arn, "ShardId": shard["ShardId"],
                                                        "ShardIteratorType": "TRIM_HORIZON"})["ShardIterator"]
            while it:
                page = streams_call(url, "GetRecords", {"ShardIterator": it, "Limit": 1000})
                read += len(page["Records"])
                it = page.get("NextShardIterator") if page["Records"] else None
        secs = time.perf_counter() - t0
        if read != records:
            sys.exit(f"drained {read} records of {records}")
        return len(shards), secs
    finally:
        process.stdin.close()
        process.wait(timeout=60)
        shutil.rmtree(data_dir, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--secs", type=int, default=5)
    parser.add_argument("--records", type=int, default=100_000)
    args = parser.parse_args()
    results = {}
    for _ in range(2):
        for binary in (args.before, args.after):
            measure_puts(binary, args.secs, results)
    print("| binary | PutItem, no stream | PutItem, stream on | on / off |\n|---|---|---|---|")
    for binary in (args.before, args.after):
        off, on = (sum(results[(binary, t)]) / len(results[(binary, t)]) for t in ("stream_off", "stream_on"))
        print(f"| {binary} | {off:,.0f} req/s | {on:,.0f} req/s | {on / off:.0%} |")
    shards, secs = drain(args.after, args.records)
    print(f"\ndrain: {args.records:,} records from {shards} shards in {secs:.2f} s = {args.records / secs:,.0f} records/s")


if __name__ == "__main__":
    main()
