"""Kinesis streaming destinations delivering to a real Kinesis server
(moto's, started here), read back with boto3 GetRecords over every shard as
a consumer would. Ferrodyn reaches moto through a TCP proxy this module
runs, so a test can cut the destination and restore it (restarting moto
would lose its in-memory streams): writes during the outage, the
destination still ACTIVE as on AWS, Ferrodyn's report showing the error and
a growing lag, and every change delivered once the stream is back, in order
per item. Also: the record DynamoDB puts into Kinesis, both precisions,
ENABLE_FAILED for a missing stream, DISABLE, and kill -9 of Ferrodyn while
it delivers. Run by scripts/kinesis-tests.sh."""

import json
import os
import re
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import boto3
import pytest
from botocore.exceptions import ClientError

ROOT = Path(__file__).resolve().parents[2]
BINARY = ROOT / "target" / "debug" / "ferrodyn"
KEYS = dict(region_name="us-east-1", aws_access_key_id="test", aws_secret_access_key="test")
UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port, process):
    for _ in range(200):
        if process.poll() is not None:
            raise RuntimeError(f"process on :{port} exited")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on :{port}")


class Proxy:
    """A TCP proxy to moto that can be cut (connections closed, new ones
    dropped at once) and restored."""

    def __init__(self, target_port):
        self.target_port = target_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.up = True
        self.open = []
        self.lock = threading.Lock()
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            client, _ = self.listener.accept()
            if not self.up:
                client.close()
                continue
            try:
                upstream = socket.create_connection(("127.0.0.1", self.target_port))
            except OSError:
                client.close()
                continue
            with self.lock:
                self.open += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self.pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def pipe(source, sink):
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self):
        self.up = False
        with self.lock:
            for s in self.open:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()
            self.open = []

    def restore(self):
        self.up = True


@pytest.fixture(scope="module")
def moto():
    port = free_port()
    moto_server = Path(os.sys.executable).parent / "moto_server"
    process = subprocess.Popen([str(moto_server), "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_listening(port, process)
    yield port
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture(scope="module")
def proxy(moto):
    return Proxy(moto)


def start_ferrodyn(proxy, data_dir, *extra):
    port = free_port()
    log = open(Path(data_dir).parent / f"ferrodyn-{port}.log", "w")
    process = subprocess.Popen(
        [str(BINARY), "serve", "--data-dir", str(data_dir), "--port", str(port), "--console", "off",
         "--kinesis-endpoint", f"http://127.0.0.1:{proxy.port}", *extra], stdout=log, stderr=log)
    wait_listening(port, process)
    return process, f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def ferrodyn(proxy):
    with tempfile.TemporaryDirectory() as scratch:
        process, endpoint = start_ferrodyn(proxy, Path(scratch) / "data")
        yield endpoint
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture
def kinesis(moto):
    return boto3.client("kinesis", endpoint_url=f"http://127.0.0.1:{moto}", **KEYS)


def new_stream(kinesis, name, shards=2):
    kinesis.create_stream(StreamName=name, ShardCount=shards)
    return kinesis.describe_stream_summary(StreamName=name)["StreamDescriptionSummary"]["StreamARN"]


def new_table(dynamodb, name):
    dynamodb.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                          KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                          AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}])


def destination(dynamodb, table, arn):
    entries = dynamodb.describe_kinesis_streaming_destination(TableName=table)["KinesisDataStreamDestinations"]
    return next(d for d in entries if d["StreamArn"] == arn)


def wait_status(dynamodb, table, arn, status, timeout=20):
    deadline = time.time() + timeout
    while time.time() < deadline:
        entry = destination(dynamodb, table, arn)
        if entry["DestinationStatus"] == status:
            return entry
        time.sleep(0.05)
    raise AssertionError(f"{arn} not {status} after {timeout} s: {entry}")


def enable(dynamodb, table, arn, **configuration):
    extra = {"EnableKinesisStreamingConfiguration": configuration} if configuration else {}
    answer = dynamodb.enable_kinesis_streaming_destination(TableName=table, StreamArn=arn, **extra)
    assert answer["DestinationStatus"] == "ENABLING"
    return wait_status(dynamodb, table, arn, "ACTIVE")


def read_all(kinesis, arn):
    """Every record of every shard: (partition key, decoded JSON), in shard order."""
    out = []
    for shard in kinesis.list_shards(StreamARN=arn)["Shards"]:
        iterator = kinesis.get_shard_iterator(StreamARN=arn, ShardId=shard["ShardId"],
                                              ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        while iterator:
            page = kinesis.get_records(ShardIterator=iterator, StreamARN=arn, Limit=10000)
            out += [(r["PartitionKey"], json.loads(r["Data"])) for r in page["Records"]]
            if not page["Records"]:
                break
            iterator = page.get("NextShardIterator")
    return out


def wait_records(kinesis, arn, count, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        records = read_all(kinesis, arn)
        if len({r["eventID"] for _, r in records}) >= count:
            return records
        time.sleep(0.2)
    raise AssertionError(f"{len(records)} records in {arn} after {timeout} s, wanted {count}")


def report(endpoint, table):
    with urllib.request.urlopen(f"{endpoint}/ferrodyn/destinations?table={table}") as answer:
        return json.loads(answer.read())["Destinations"][0]


def assert_in_order_per_item(records, items, changes):
    """After dropping redeliveries (same eventID), each item's counter runs
    0..changes-1 in Kinesis order, and one item always has one partition key."""
    seen, counters, keys = set(), {}, {}
    for partition_key, record in records:
        if record["eventID"] in seen:
            continue
        seen.add(record["eventID"])
        pk = record["dynamodb"]["Keys"]["pk"]["S"]
        keys.setdefault(pk, set()).add(partition_key)
        counters.setdefault(pk, []).append(int(record["dynamodb"]["NewImage"]["n"]["N"]))
    assert sorted(counters) == sorted(f"item{i}" for i in range(items))
    for pk, values in counters.items():
        assert values == list(range(changes)), f"{pk}: {values}"
        assert len(keys[pk]) == 1


@pytest.fixture
def dynamodb(ferrodyn):
    return boto3.client("dynamodb", endpoint_url=ferrodyn, **KEYS)


def test_changes_arrive_as_dynamodb_writes_them(dynamodb, kinesis):
    arn = new_stream(kinesis, "shape")
    new_table(dynamodb, "shape")
    entry = enable(dynamodb, "shape", arn)
    assert "ApproximateCreationDateTimePrecision" not in entry
    before = time.time()
    dynamodb.put_item(TableName="shape", Item={"pk": {"S": "a"}, "v": {"N": "1"}})
    dynamodb.put_item(TableName="shape", Item={"pk": {"S": "a"}, "v": {"N": "2"}})
    dynamodb.delete_item(TableName="shape", Key={"pk": {"S": "a"}})
    records = wait_records(kinesis, arn, 3)
    assert [r["eventName"] for _, r in records] == ["INSERT", "MODIFY", "REMOVE"]
    insert, modify, remove = (r for _, r in records)
    assert set(insert) == {"awsRegion", "eventID", "eventName", "userIdentity", "recordFormat", "tableName",
                           "dynamodb", "eventSource"}
    assert (insert["awsRegion"], insert["recordFormat"], insert["tableName"], insert["eventSource"]) == \
        ("us-east-1", "application/json", "shape", "aws:dynamodb")
    assert insert["userIdentity"] is None
    assert all(UUID.match(r["eventID"]) for _, r in records)
    assert modify["dynamodb"]["OldImage"] == {"pk": {"S": "a"}, "v": {"N": "1"}}
    assert modify["dynamodb"]["NewImage"] == {"pk": {"S": "a"}, "v": {"N": "2"}}
    assert remove["dynamodb"]["Keys"] == {"pk": {"S": "a"}} and "NewImage" not in remove["dynamodb"]
    assert "ApproximateCreationDateTimePrecision" not in insert["dynamodb"]
    created = insert["dynamodb"]["ApproximateCreationDateTime"]
    assert isinstance(created, int) and before * 1000 - 1000 <= created <= time.time() * 1000 + 1000
    assert modify["dynamodb"]["SizeBytes"] > insert["dynamodb"]["SizeBytes"] > 0
    keys = {key for key, _ in records}
    assert len(keys) == 1 and re.match(r"^[0-9A-F]{32}$", keys.pop())


def test_microsecond_precision_after_an_update(dynamodb, kinesis):
    arn = new_stream(kinesis, "micro", shards=1)
    new_table(dynamodb, "micro")
    enable(dynamodb, "micro", arn)
    updated = dynamodb.update_kinesis_streaming_destination(
        TableName="micro", StreamArn=arn,
        UpdateKinesisStreamingConfiguration={"ApproximateCreationDateTimePrecision": "MICROSECOND"})
    assert updated["DestinationStatus"] == "UPDATING"
    assert updated["UpdateKinesisStreamingConfiguration"] == {"ApproximateCreationDateTimePrecision": "MICROSECOND"}
    entry = wait_status(dynamodb, "micro", arn, "ACTIVE")
    assert entry["ApproximateCreationDateTimePrecision"] == "MICROSECOND"
    with pytest.raises(ClientError) as refused:
        dynamodb.update_kinesis_streaming_destination(
            TableName="micro", StreamArn=arn,
            UpdateKinesisStreamingConfiguration={"ApproximateCreationDateTimePrecision": "MICROSECOND"})
    table_id = dynamodb.describe_table(TableName="micro")["Table"]["TableId"]
    assert refused.value.response["Error"]["Message"] == \
        f"Invalid Request: Precision is already set to the desired value of MICROSECOND for tableId: {table_id}, kdsArn: {arn}"
    before = time.time()
    dynamodb.put_item(TableName="micro", Item={"pk": {"S": "b"}})
    (_, record), = wait_records(kinesis, arn, 1)
    created = record["dynamodb"]["ApproximateCreationDateTime"]
    assert before * 1e6 - 1e6 <= created <= time.time() * 1e6 + 1e6
    assert record["dynamodb"]["ApproximateCreationDateTimePrecision"] == "MICROSECOND"


def test_enable_of_a_missing_stream_fails(dynamodb, kinesis):
    new_table(dynamodb, "missing")
    arn = "arn:aws:kinesis:us-east-1:123456789012:stream/not-there"
    dynamodb.enable_kinesis_streaming_destination(TableName="missing", StreamArn=arn)
    entry = wait_status(dynamodb, "missing", arn, "ENABLE_FAILED")
    assert entry["DestinationStatusDescription"] == "User does not have a permission to use kinesis stream"


def test_disabled_destination_receives_nothing_more(dynamodb, kinesis):
    arn = new_stream(kinesis, "off", shards=1)
    new_table(dynamodb, "off")
    enable(dynamodb, "off", arn)
    dynamodb.put_item(TableName="off", Item={"pk": {"S": "before"}})
    wait_records(kinesis, arn, 1)
    answer = dynamodb.disable_kinesis_streaming_destination(TableName="off", StreamArn=arn)
    assert answer["DestinationStatus"] == "DISABLING"
    wait_status(dynamodb, "off", arn, "DISABLED")
    dynamodb.put_item(TableName="off", Item={"pk": {"S": "after"}})
    time.sleep(1)
    assert [r["dynamodb"]["Keys"]["pk"]["S"] for _, r in read_all(kinesis, arn)] == ["before"]
    dynamodb.delete_table(TableName="off")


def test_an_outage_delays_changes_but_loses_none(dynamodb, kinesis, proxy, ferrodyn):
    arn = new_stream(kinesis, "outage", shards=3)
    new_table(dynamodb, "outage")
    enable(dynamodb, "outage", arn)
    proxy.cut()
    try:
        items, changes = 10, 12
        for n in range(changes):
            for i in range(items):
                dynamodb.put_item(TableName="outage", Item={"pk": {"S": f"item{i}"}, "n": {"N": str(n)}})
        time.sleep(0.5)
        first = report(ferrodyn, "outage")
        time.sleep(0.5)
        second = report(ferrodyn, "outage")
        # AWS keeps the destination ACTIVE; Ferrodyn's own report says why.
        assert destination(dynamodb, "outage", arn)["DestinationStatus"] == "ACTIVE"
        assert second["LastError"] and "Kinesis" in second["LastError"], second
        assert second["AgeOfOldestUnreplicatedRecord"] > first["AgeOfOldestUnreplicatedRecord"] > 0
        assert second["DeliveredRecordCount"] == 0
        assert read_all(kinesis, arn) == []
    finally:
        proxy.restore()
    records = wait_records(kinesis, arn, items * changes)
    assert_in_order_per_item(records, items, changes)
    deadline = time.time() + 10
    while report(ferrodyn, "outage")["AgeOfOldestUnreplicatedRecord"] != 0:
        assert time.time() < deadline, "the lag did not fall back to 0"
        time.sleep(0.1)
    assert report(ferrodyn, "outage")["DeliveredRecordCount"] == items * changes
    # DeleteTable is accepted with the destination ACTIVE, as on AWS.
    assert dynamodb.delete_table(TableName="outage")["TableDescription"]["TableStatus"] == "DELETING"


def test_kill_9_while_delivering_loses_nothing(kinesis, proxy):
    arn = new_stream(kinesis, "crash", shards=2)
    with tempfile.TemporaryDirectory() as scratch:
        data = Path(scratch) / "data"
        process, endpoint = start_ferrodyn(proxy, data)
        dynamodb = boto3.client("dynamodb", endpoint_url=endpoint, **KEYS)
        new_table(dynamodb, "crash")
        enable(dynamodb, "crash", arn)
        items, changes = 50, 40
        proxy.cut()
        try:
            with dynamodb_batch(dynamodb) as put:
                for n in range(changes):
                    for i in range(items):
                        put({"pk": {"S": f"item{i}"}, "n": {"N": str(n)}})
        finally:
            proxy.restore()
        # Let delivery start, then kill it mid-way.
        deadline = time.time() + 20
        while not read_all(kinesis, arn):
            assert time.time() < deadline, "nothing was delivered"
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
        delivered = len(read_all(kinesis, arn))
        assert 0 < delivered < items * changes, "kill -9 came after delivery ended: nothing tested"
        process, endpoint = start_ferrodyn(proxy, data)
        try:
            records = wait_records(kinesis, arn, items * changes)
            assert_in_order_per_item(records, items, changes)
        finally:
            process.terminate()
            process.wait(timeout=10)


class dynamodb_batch:
    """BatchWriteItem in 25s, in order (each item's writes keep their order:
    one batch holds at most one write per item)."""

    def __init__(self, dynamodb):
        self.dynamodb, self.pending = dynamodb, []

    def __enter__(self):
        return self.add

    def add(self, item):
        self.pending.append({"PutRequest": {"Item": item}})
        if len(self.pending) == 25:
            self.flush()

    def flush(self):
        requests = {"crash": self.pending}
        while requests:
            answer = self.dynamodb.batch_write_item(RequestItems=requests)
            requests = answer.get("UnprocessedItems") or {}
        self.pending = []

    def __exit__(self, *exc):
        if self.pending:
            self.flush()


def test_recovery_s_trim_keeps_what_a_destination_has_not_delivered(kinesis, proxy):
    """Point-in-time recovery drops log history older than its period; a
    destination whose stream is down must still get those changes."""
    arn = new_stream(kinesis, "kept", shards=1)
    with tempfile.TemporaryDirectory() as scratch:
        process, endpoint = start_ferrodyn(proxy, Path(scratch) / "data", "--clock", "manual")
        try:
            dynamodb = boto3.client("dynamodb", endpoint_url=endpoint, **KEYS)
            new_table(dynamodb, "kept")
            dynamodb.update_continuous_backups(TableName="kept", PointInTimeRecoverySpecification={
                "PointInTimeRecoveryEnabled": True, "RecoveryPeriodInDays": 1})
            enable(dynamodb, "kept", arn)
            proxy.cut()
            try:
                for i in range(20):
                    dynamodb.put_item(TableName="kept", Item={"pk": {"S": f"item{i}"}, "n": {"N": "0"}})
                # Three half-periods: a new base each time, then the oldest
                # base and the log before the next one are dropped.
                for hours in ("13h", "12h", "13h"):
                    request = urllib.request.Request(f"{endpoint}/ferrodyn/clock", method="POST",
                                                     data=json.dumps({"advance": hours}).encode())
                    urllib.request.urlopen(request).read()
            finally:
                proxy.restore()
            records = wait_records(kinesis, arn, 20)
            assert_in_order_per_item(records, 20, 1)
        finally:
            process.terminate()
            process.wait(timeout=10)
