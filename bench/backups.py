#!/usr/bin/env python3
"""Backups and point-in-time recovery against issue 20's speed targets, on one
durable server (the default `--data-dir` storage) driven by wrk:

- CreateBackup of a table of --items items (default 1,000,000) answers in under
  100 ms, and PutItem throughput while the backup copies is within 20 % of the
  throughput before it;
- the copy's and a restore's items per second (against a full Scan's);
- PutItem throughput on a table with point-in-time recovery on, against one
  with it off, alternated twice (target: no more than 25 % lower), and the
  change log's size per retained write (GET /ferrodyn/usage's ChangeLogs: the
  records' bytes, before the store's compression).

    cargo build --release -p ferrodyn
    python3 bench/backups.py [--items 1000000] [--secs 6] [--binary target/release/ferrodyn]
        [--s3-endpoint http://127.0.0.1:8103]

With --s3-endpoint, also an export of the whole table to that store, an
import of it back and a bulk put of it into an empty table, each with the
server's peak resident memory (boto3 needed for the bucket). Prints markdown. Python 3.11
standard library, plus wrk (bench/run.py's driver) and boto3 for the S3 part.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

try:
    import boto3
except ImportError:  # only the S3 figures need it
    boto3 = None

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402  (bench/run.py: Client, setup_table, run_wrk)

TABLE = "bench"


def start(binary, data_dir, s3_endpoint):
    extra = ["--s3-endpoint", s3_endpoint] if s3_endpoint else []
    process = subprocess.Popen([binary, "serve", "--data-dir", data_dir, "--port", "0", "--console", "off",
                                "--exit-on-stdin-eof", *extra], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    return process, process.stdout.readline().split()[3]


def call(client, op, body):
    status, answer = client.call(op, body)
    if status >= 300:
        sys.exit(f"{op} failed: {status} {answer}")
    return answer


def wait_for(what, check, timeout=1800):
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        if check():
            return time.perf_counter() - started
        time.sleep(0.02)
    sys.exit(f"timed out waiting for {what}")


def puts(url, secs, items, table=TABLE):
    return run.run_wrk(url, "put", secs, 16, 2, table, items, 0)


def status_of(client, arn):
    return call(client, "DescribeBackup", {"BackupArn": arn})["BackupDescription"]["BackupDetails"]["BackupStatus"]


def backup_figures(client, url, args):
    base = puts(url, args.secs, args.items)["rps"]
    t0 = time.perf_counter()
    details = call(client, "CreateBackup", {"TableName": TABLE, "BackupName": "bench"})["BackupDetails"]
    answered_ms = (time.perf_counter() - t0) * 1000
    arn = details["BackupArn"]
    copied = {}

    def watch():  # when the copy ends, seen from another connection
        watcher = run.Client(url)
        while status_of(watcher, arn) != "AVAILABLE":
            time.sleep(0.01)
        copied["secs"] = time.perf_counter() - t0
    watcher = threading.Thread(target=watch)
    watcher.start()
    during = puts(url, args.secs, args.items)["rps"]
    watcher.join()
    copy_secs = copied["secs"]
    t0 = time.perf_counter()
    call(client, "RestoreTableFromBackup", {"TargetTableName": "restored", "BackupArn": arn})
    restore_secs = wait_for("the restore", lambda: call(client, "DescribeTable", {"TableName": "restored"})
                            ["Table"]["TableStatus"] == "ACTIVE")
    t0 = time.perf_counter()
    scanned, start = 0, None
    while True:
        body = {"TableName": TABLE, **({"ExclusiveStartKey": start} if start else {})}
        page = call(client, "Scan", body)
        scanned += page["Count"]
        start = page.get("LastEvaluatedKey")
        if not start:
            break
    scan_secs = time.perf_counter() - t0
    overlap = "copy ended during the PutItem run" if copy_secs < args.secs else "copy outlasted the PutItem run"
    print(f"| CreateBackup answered | {answered_ms:.1f} ms | under 100 ms |")
    print(f"| PutItem before / during the copy | {base:,.0f} / {during:,.0f} req/s ({during / base:.0%}; {overlap}) | at least 80 % |")
    print(f"| backup copy (beside the PutItem load) | {args.items / copy_secs:,.0f} items/s ({copy_secs:.1f} s) | |")
    print(f"| restore | {args.items / restore_secs:,.0f} items/s ({restore_secs:.1f} s) | |")
    print(f"| full Scan (one client) | {scanned / scan_secs:,.0f} items/s ({scan_secs:.1f} s) | |")


def recovery_figures(client, url, data_dir, args):
    """PutItem on two tables of the same size on one server, one with
    recovery on, alternated twice so that background noise hits both."""
    items = min(args.items, 100_000)
    for table in ("log_off", "log_on"):
        run.setup_table("ferrodyn", url, table, items, 0)
    call(client, "UpdateContinuousBackups", {"TableName": "log_on", "PointInTimeRecoverySpecification":
                                             {"PointInTimeRecoveryEnabled": True}})
    wait_for("the recovery base", lambda: all(
        b["BackupStatus"] == "AVAILABLE" for b in call(client, "ListBackups", {"BackupType": "ALL"})["BackupSummaries"]))
    rps = {"log_off": [], "log_on": []}
    for _ in range(2):
        for table in ("log_off", "log_on"):
            rps[table].append(puts(url, args.secs, items, table)["rps"])
    off, on = sum(rps["log_off"]) / 2, sum(rps["log_on"]) / 2
    with urllib.request.urlopen(url + "/ferrodyn/usage") as answer:
        logs = {log["TableName"]: log for log in json.load(answer)["ChangeLogs"]}
    log = logs["log_on"]
    print(f"| PutItem with PITR off / on ({items:,}-item tables) | {off:,.0f} / {on:,.0f} req/s ({on / off:.0%}) | at least 75 % |")
    print(f"| change log (GET /ferrodyn/usage) | {log['Bytes'] / log['Records']:,.0f} bytes per retained write of a ~100-byte item ({log['Records']:,} records, {log['Bytes'] / 2**20:,.1f} MiB, before compression) | reported |")


def transfer_figures(client, url, args):
    """An export of the whole table to --s3-endpoint's bucket, then an
    import of it back: items per second, against the Scan above and
    `ferrodyn import` (31,500 items/s, BENCHMARKS.md "Scale")."""
    s3 = boto3.client("s3", endpoint_url=args.s3_endpoint, region_name="us-east-1",
                      aws_access_key_id="bench", aws_secret_access_key="bench")
    bucket = f"bench-{int(time.time())}"
    memory = PeakMemory(args.server_pid)
    print(f"| server's resident memory before the export | {memory.rss() / 2**20:,.0f} MiB | |")
    s3.create_bucket(Bucket=bucket)
    call(client, "UpdateContinuousBackups", {"TableName": TABLE, "PointInTimeRecoverySpecification":
                                             {"PointInTimeRecoveryEnabled": True}})
    arn = call(client, "DescribeTable", {"TableName": TABLE})["Table"]["TableArn"]
    t0 = time.perf_counter()
    export = call(client, "ExportTableToPointInTime", {"TableArn": arn, "S3Bucket": bucket})["ExportDescription"]
    state = {}

    def exported():
        state["d"] = call(client, "DescribeExport", {"ExportArn": export["ExportArn"]})["ExportDescription"]
        return state["d"]["ExportStatus"] != "IN_PROGRESS"
    export_secs = wait_for("the export", exported)
    export_peak = memory.peak_and_reset()
    done = state["d"]
    if done["ExportStatus"] != "COMPLETED":
        sys.exit(f"export failed: {done}")
    data = done["ExportManifest"].rsplit("/", 1)[0] + "/data/"
    t0 = time.perf_counter()
    started = call(client, "ImportTable", {
        "S3BucketSource": {"S3Bucket": bucket, "S3KeyPrefix": data}, "InputFormat": "DYNAMODB_JSON",
        "InputCompressionType": "GZIP", "TableCreationParameters": {
            "TableName": "imported", "BillingMode": "PAY_PER_REQUEST",
            "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
            "AttributeDefinitions": [{"AttributeName": "PK", "AttributeType": "S"}, {"AttributeName": "SK", "AttributeType": "S"}]}})
    arn = started["ImportTableDescription"]["ImportArn"]

    def imported():
        state["i"] = call(client, "DescribeImport", {"ImportArn": arn})["ImportTableDescription"]
        return state["i"]["ImportStatus"] != "IN_PROGRESS"
    import_secs = wait_for("the import", imported)
    import_peak = memory.peak_and_reset()
    bulk_secs, bulk = bulk_put_figures(client, bucket, data)
    bulk_peak = memory.peak_and_reset()
    items = done["ItemCount"]
    print(f"| export to S3 ({args.s3_endpoint}) | {items / export_secs:,.0f} items/s ({items:,} items, {export_secs:.1f} s); server's peak RSS {export_peak} | at least half of the Scan's; memory bounded |")
    print(f"| import from S3 | {state['i']['ImportedItemCount'] / import_secs:,.0f} items/s ({import_secs:.1f} s, {state['i']['ErrorCount']} errors); peak RSS {import_peak} | at least `ferrodyn import`'s 31,500; memory bounded |")
    print(f"| bulk put from S3 (StartBulkPutItems, the export's data into an existing table) | {bulk['ProcessedItemCount'] / bulk_secs:,.0f} items/s ({bulk_secs:.1f} s, {bulk['FailedItemCount']} failed); peak RSS {bulk_peak} | (none set) |")


def bulk_put_figures(client, bucket, data):
    """StartBulkPutItems of the export's data files into a new, empty table."""
    call(client, "CreateTable", {
        "TableName": "bulk", "BillingMode": "PAY_PER_REQUEST",
        "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
        "AttributeDefinitions": [{"AttributeName": "PK", "AttributeType": "S"}, {"AttributeName": "SK", "AttributeType": "S"}]})
    t0 = time.perf_counter()
    arn = call(client, "StartBulkPutItems", {
        "TableName": "bulk", "InputS3Configuration": {"S3Bucket": bucket, "S3KeyPrefix": data, "InputFormat": "DYNAMODB_JSON",
                                                      "InputCompressionType": "GZIP"},
        "OutputS3Configuration": {"OutputType": ["ERROR"]}})["BulkOperationDescription"]["BulkOperationArn"]
    state = {}

    def finished():
        state["d"] = call(client, "DescribeBulkOperation", {"BulkOperationArn": arn})["BulkOperationDescription"]
        return state["d"]["BulkOperationStatus"] not in ("IN_PROGRESS", "CANCELLING")
    secs = wait_for("the bulk put", finished)
    if state["d"]["BulkOperationStatus"] != "COMPLETED":
        sys.exit(f"bulk put failed: {state['d']}")
    return secs, state["d"]


class PeakMemory:
    """The server's peak resident memory, sampled every 50 ms (Linux /proc)."""

    def __init__(self, pid):
        self.pid, self.peak, self.stopped = pid, 0, False
        threading.Thread(target=self.sample, daemon=True).start()

    def rss(self):
        with open(f"/proc/{self.pid}/status") as status:
            return next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmRSS:"))

    def sample(self):
        while not self.stopped:
            try:
                self.peak = max(self.peak, self.rss())
            except (OSError, StopIteration):
                return
            time.sleep(0.05)

    def peak_and_reset(self):
        peak, self.peak = self.peak, 0
        return f"{peak / 2**20:,.0f} MiB"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=1_000_000)
    parser.add_argument("--secs", type=int, default=6)
    parser.add_argument("--binary", default="target/release/ferrodyn")
    parser.add_argument("--s3-endpoint", help="an S3-compatible store for the export and import figures "
                        "(moto's server, for instance); without it they are not measured")
    args = parser.parse_args()
    data_dir = tempfile.mkdtemp(prefix="ferrodyn-backups-")
    process, url = start(args.binary, data_dir, args.s3_endpoint)
    try:
        method, loaded, secs = run.setup_table("ferrodyn", url, TABLE, args.items, 0)
        client = run.Client(url)
        print(f"{loaded:,} items loaded by {method} in {secs:.1f} s\n")
        print("| measure | result | target |\n|---|---|---|")
        backup_figures(client, url, args)
        if args.s3_endpoint:
            args.server_pid = process.pid
            transfer_figures(client, url, args)
        recovery_figures(client, url, data_dir, args)
    finally:
        process.stdin.close()
        process.wait(timeout=60)
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
