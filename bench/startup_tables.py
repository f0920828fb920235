"""Start-up time of a durable data directory holding many tables (issue 24:
2,000 tables under one second): creates N on-demand tables with one GSI each
in a fresh --data-dir, stops the server, then starts it three times and
reports the time to its "listening" line and to a DescribeTable of the last
table answered.

    cargo build --release -p ferrodyn
    python3 bench/startup_tables.py [--tables 2000] [--binary target/release/ferrodyn]
"""

import argparse
import concurrent.futures
import json
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.request

AUTH = "AWS4-HMAC-SHA256 Credential=a/20261204/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=" + "0" * 64


def call(base, operation, body):
    request = urllib.request.Request(base, data=json.dumps(body).encode(), headers={
        "X-Amz-Target": f"DynamoDB_20120810.{operation}", "Content-Type": "application/x-amz-json-1.0", "Authorization": AUTH})
    for _ in range(200):
        try:
            return json.loads(urllib.request.urlopen(request).read())
        except urllib.error.HTTPError as e:
            text = e.read().decode()
            if "LimitExceeded" not in text:  # too many table operations at once: wait
                raise RuntimeError(text)
            time.sleep(0.2)
    raise RuntimeError("still LimitExceeded")


def start(binary, data_dir):
    process = subprocess.Popen([binary, "serve", "--data-dir", data_dir, "--port", "0", "--console", "off",
                                "--max-tables", "100000", "--exit-on-stdin-eof"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    return process, process.stdout.readline().split()[3]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tables", type=int, default=2000)
    parser.add_argument("--binary", default="target/release/ferrodyn")
    args = parser.parse_args()
    data_dir = tempfile.mkdtemp(prefix="ferrodyn-startup-")
    try:
        process, base = start(args.binary, data_dir)
        table = lambda i: {
            "TableName": f"t{i:05}", "BillingMode": "PAY_PER_REQUEST",
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}],
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "GlobalSecondaryIndexes": [{"IndexName": "gsi1", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                        "Projection": {"ProjectionType": "ALL"}}]}
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda i: call(base, "CreateTable", table(i)), range(args.tables)))
        process.stdin.close()
        process.wait()
        last = f"t{args.tables - 1:05}"
        for _ in range(3):
            started = time.perf_counter()
            process, base = start(args.binary, data_dir)
            listening = (time.perf_counter() - started) * 1000
            status = call(base, "DescribeTable", {"TableName": last})["Table"]["TableStatus"]
            answered = (time.perf_counter() - started) * 1000
            process.stdin.close()
            process.wait()
            print(f"{args.tables} tables: listening after {listening:.0f} ms, DescribeTable {last} {status} after {answered:.0f} ms")
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
