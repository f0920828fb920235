#!/usr/bin/env python3
"""PutItem with point-in-time recovery off and on, for two builds side by side
(an A/B of a change to the write path or the change log): each binary serves
a fresh durable database in turn, twice, with two 20,000-item tables, one with
recovery on, and wrk puts into each twice for --secs seconds. Prints the
averages and the on/off ratio per binary.

    python3 bench/pitr_ab.py /tmp/ferrodyn-before target/release/ferrodyn [--secs 5]

Python 3.11 standard library and wrk (bench/run.py's driver)."""
import argparse
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import backups  # noqa: E402  (start, call, puts)
import run  # noqa: E402


def measure(binary, secs, results):
    data_dir = tempfile.mkdtemp(prefix="ferrodyn-pitr-ab-")
    process, url = backups.start(binary, data_dir, None)
    try:
        client = run.Client(url)
        for table in ("log_off", "log_on"):
            run.setup_table("ferrodyn", url, table, 20_000, 0)
        backups.call(client, "UpdateContinuousBackups", {"TableName": "log_on", "PointInTimeRecoverySpecification":
                                                         {"PointInTimeRecoveryEnabled": True}})
        time.sleep(2)  # the recovery base of 20,000 items
        for table in ("log_off", "log_on", "log_off", "log_on"):
            results.setdefault((binary, table), []).append(backups.puts(url, secs, 20_000, table)["rps"])
    finally:
        process.stdin.close()
        process.wait(timeout=60)
        shutil.rmtree(data_dir, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--secs", type=int, default=5)
    args = parser.parse_args()
    results = {}
    for _ in range(2):
        for binary in (args.before, args.after):
            measure(binary, args.secs, results)
    print("| binary | PutItem, recovery off | PutItem, recovery on | on / off |\n|---|---|---|---|")
    for binary in (args.before, args.after):
        off, on = (sum(results[(binary, t)]) / len(results[(binary, t)]) for t in ("log_off", "log_on"))
        print(f"| {binary} | {off:,.0f} req/s | {on:,.0f} req/s | {on / off:.0%} |")


if __name__ == "__main__":
    main()
