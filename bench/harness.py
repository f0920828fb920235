#!/usr/bin/env python3
"""The test-harness features timed (issue: where tests run):

1. a 10,000-item table (with a GSI) saved as a snapshot, restored, and the
   namespace reset (DELETE /ferrodyn/data), each the median of several runs;
2. a suite of 200 small tests (create a table, write 5 items, read them
   back) run three ways: each test in a fresh namespace, each test deleting
   and recreating its table in one shared namespace, and each test restoring
   a snapshot of 1,000 seeded items instead of re-seeding them.

Needs boto3 and the ferrodyn Python package (the wheel scripts/package.sh
builds; scripts/package-tests.sh leaves a venv with both in
target/package-tests/venv). usage: bench/harness.py [--data-dir DIR]
"""
import statistics
import sys
import time

from ferrodyn import start

args = sys.argv[1:] if len(sys.argv) > 1 else []
storage = ["--data-dir", args[1]] if args[:1] == ["--data-dir"] else []


def timed(action):
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1000


def create(client, name, gsi=False):
    extra = {}
    definitions = [{"AttributeName": "pk", "AttributeType": "S"}]
    if gsi:
        definitions.append({"AttributeName": "g", "AttributeType": "S"})
        extra["GlobalSecondaryIndexes"] = [{
            "IndexName": "by_g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"}}]
    client.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                        AttributeDefinitions=definitions, **extra)


def seed(resource, name, count):
    with resource.Table(name).batch_writer() as batch:
        for i in range(count):
            batch.put_item(Item={"pk": f"item-{i:06d}", "g": f"g{i % 100}", "body": "x" * 80})


def snapshot_figures(server):
    ns = server.namespace("bench-snapshot")
    create(ns.client(), "big", gsi=True)
    seed(ns.resource(), "big", 10_000)
    save = statistics.median(timed(lambda: ns.snapshot("big")) for _ in range(5))
    restore = statistics.median(timed(lambda: ns.restore("big")) for _ in range(10))
    count = ns.client().describe_table(TableName="big")["Table"]["ItemCount"]
    assert count == 10_000, count
    resets = []
    for _ in range(5):
        ns.restore("big")
        resets.append(timed(ns.reset))
    print(f"10,000 items + GSI: snapshot {save:.1f} ms, restore {restore:.1f} ms, "
          f"DELETE /ferrodyn/data {statistics.median(resets):.1f} ms (medians)")


def small_test(client, table):
    for i in range(5):
        client.put_item(TableName=table, Item={"pk": {"S": f"k{i}"}})
    assert client.get_item(TableName=table, Key={"pk": {"S": "k4"}})["Item"]


def suite_figures(server):
    def fresh_namespaces():
        for _ in range(200):
            client = server.namespace().client()
            create(client, "tbl")
            small_test(client, "tbl")

    shared = server.namespace("bench-shared").client()
    create(shared, "tbl")

    def recreate_tables():
        for _ in range(200):
            shared.delete_table(TableName="tbl")
            create(shared, "tbl")
            small_test(shared, "tbl")

    seeded = server.namespace("bench-seeded")
    create(seeded.client(), "tbl")
    seed(seeded.resource(), "tbl", 1_000)
    seeded.snapshot("seeded")
    seeded_client = seeded.client()

    def restore_per_test():
        for _ in range(200):
            seeded.restore("seeded")
            small_test(seeded_client, "tbl")

    def reseed_per_test():
        for _ in range(20):  # 200 would take minutes; scaled below
            seeded_client.delete_table(TableName="tbl")
            create(seeded_client, "tbl")
            seed(seeded.resource(), "tbl", 1_000)
            small_test(seeded_client, "tbl")

    def clients_only():
        for _ in range(200):
            server.namespace().client()

    print(f"200 tests, fresh namespace each: {timed(fresh_namespaces) / 1000:.2f} s "
          f"(of which creating 200 boto3 clients: {timed(clients_only) / 1000:.2f} s)")
    print(f"200 tests, delete + create table each: {timed(recreate_tables) / 1000:.2f} s")
    print(f"200 tests over 1,000 seeded items, snapshot restore each: "
          f"{timed(restore_per_test) / 1000:.2f} s")
    print(f"200 tests over 1,000 seeded items, re-seed each (20 run, x10): "
          f"{timed(reseed_per_test) * 10 / 1000:.2f} s")


with start(clock="wall", args=["--console", "off", *storage]) as server:
    print(f"server: {server.endpoint} ({'durable ' + storage[1] if storage else 'in memory'})")
    snapshot_figures(server)
    suite_figures(server)
