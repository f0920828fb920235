"""S3 transfers on shared PostgreSQL storage: two `ferrodyn serve` nodes
over one database; the node that accepted a bulk put, an export and an
import is killed (kill -9) while they run, and the other node takes them up
(transfers.rs: heartbeats, taken up by the lease holder) and finishes each
exactly. Needs FERRODYN_TEST_POSTGRES (scripts/pg-tests.sh runs this file
through scripts/s3-tests.sh); without it the test fails, never passes."""

import json
import os
import subprocess
import time
import uuid

import boto3

from test_bulk_loads import ended, line, start, upload
from test_exports import BINARY, KEYS, creation, data_lines, finished, free_port, imported, moto, read, wait_listening  # noqa: F401


def fresh_database(server):
    """An empty database on `server` (postgres://USER@HOST:PORT), by psql."""
    name = f"ferrodyn_s3_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    subprocess.run(["psql", f"{server.rstrip('/')}/postgres", "-q", "-c", f"CREATE DATABASE {name}"], check=True)
    return f"{server.rstrip('/')}/{name}"


def node(storage, s3_endpoint):
    port = free_port()
    process = subprocess.Popen([str(BINARY), "serve", "--storage", storage, "--port", str(port), "--console", "off",
                                "--s3-endpoint", s3_endpoint], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_listening(port, process)
    return process, boto3.client("dynamodb", endpoint_url=f"http://127.0.0.1:{port}", **KEYS)


def test_jobs_of_a_killed_node_are_finished_by_another(moto):
    server = os.environ.get("FERRODYN_TEST_POSTGRES")
    assert server, "FERRODYN_TEST_POSTGRES must name the PostgreSQL server (scripts/pg-tests.sh sets it)"
    storage = fresh_database(server)
    s3 = boto3.client("s3", endpoint_url=moto, **KEYS)
    bucket = f"shared-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=bucket)
    for part in range(24):  # a quarter of a second each at 1,024 units a second
        upload(s3, bucket, f"in/{part:02}.json", [line(f"s{part:02}-{i:03}") for i in range(256)])
    suffix = uuid.uuid4().hex[:8]
    first, a = node(storage, moto)
    second, b = node(storage, moto)
    try:
        loaded, source, copy = f"loaded_{suffix}", f"source_{suffix}", f"copy_{suffix}"
        a.create_table(**creation(loaded))
        a.create_table(**creation(source))
        a.update_continuous_backups(TableName=source, PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
        for at in range(0, 500, 25):
            a.batch_write_item(RequestItems={source: [
                {"PutRequest": {"Item": {"pk": {"S": f"e{i:04}"}}}} for i in range(at, at + 25)]})
        bulk = start(a, loaded, bucket, "in/", MaxWriteRequestUnits=1024)["BulkOperationArn"]
        arn = a.describe_table(TableName=source)["Table"]["TableArn"]
        export = a.export_table_to_point_in_time(TableArn=arn, S3Bucket=bucket, S3Prefix="out")["ExportDescription"]["ExportArn"]
        load = a.import_table(S3BucketSource={"S3Bucket": bucket, "S3KeyPrefix": "in/"}, InputFormat="DYNAMODB_JSON",
                              TableCreationParameters=creation(copy))["ImportTableDescription"]["ImportArn"]
        time.sleep(1.0)
        midway = b.describe_bulk_operation(BulkOperationArn=bulk)["BulkOperationDescription"]
        assert midway["BulkOperationStatus"] == "IN_PROGRESS", midway
        first.kill()
        first.wait()
        done = ended(b, bulk, timeout=90)
        assert (done["BulkOperationStatus"], done["ProcessedItemCount"]) == ("COMPLETED", 6144), done
        assert b.describe_table(TableName=loaded)["Table"]["ItemCount"] == 6144
        exported = finished(b, export, timeout=90)
        assert (exported["ExportStatus"], exported["ItemCount"]) == ("COMPLETED", 500), exported
        assert len(data_lines(s3, bucket, json.loads(read(s3, bucket, exported["ExportManifest"])))) == 500
        copied = imported(b, load, timeout=90)
        assert (copied["ImportStatus"], copied["ImportedItemCount"]) == ("COMPLETED", 6144), copied
    finally:
        for process in (first, second):
            if process.poll() is None:
                process.terminate()
                process.wait(timeout=10)
