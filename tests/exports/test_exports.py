"""Exports to and imports from a real S3-compatible server (moto's, started
here): an export read back with boto3 and gzip as a user would, its
manifests and checksums, an ION export of an earlier instant, an export
imported back exactly (DynamoDB JSON and ION), CSV imports, skipped lines
counted, and DynamoDB's refusals. Run by scripts/s3-tests.sh."""

import base64
import datetime
import gzip
import hashlib
import http.client
import http.server
import json
import os
import socket
import subprocess
import threading
import time
import urllib.parse
from pathlib import Path

import boto3
import pytest
import zstandard
from botocore.exceptions import ClientError

ROOT = Path(__file__).resolve().parents[2]
BINARY = ROOT / "target" / "debug" / "ferrodyn"
KEYS = dict(region_name="us-east-1", aws_access_key_id="test", aws_secret_access_key="test")


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


@pytest.fixture(scope="module")
def moto():
    port = free_port()
    moto_server = Path(os.sys.executable).parent / "moto_server"
    process = subprocess.Popen([str(moto_server), "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_listening(port, process)
    yield f"http://127.0.0.1:{port}"
    process.terminate()
    process.wait(timeout=10)


def start_ferrodyn(s3_endpoint):
    port = free_port()
    process = subprocess.Popen([str(BINARY), "serve", "--in-memory", "--port", str(port), "--console", "off",
                                "--s3-endpoint", s3_endpoint], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_listening(port, process)
    return process, f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def ferrodyn(moto):
    process, endpoint = start_ferrodyn(moto)
    yield endpoint
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture
def clients(moto, ferrodyn, request):
    dynamodb = boto3.client("dynamodb", endpoint_url=ferrodyn, **KEYS)
    s3 = boto3.client("s3", endpoint_url=moto, **KEYS)
    bucket = request.node.name.replace("_", "-")[:50]
    s3.create_bucket(Bucket=bucket)
    return dynamodb, s3, bucket


def table_with_recovery(dynamodb, name, items=0):
    dynamodb.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                          KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                          AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}])
    dynamodb.update_continuous_backups(TableName=name, PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
    put(dynamodb, name, range(items))
    return dynamodb.describe_table(TableName=name)["Table"]["TableArn"]


def put(dynamodb, table, numbers):
    for i in numbers:
        dynamodb.put_item(TableName=table, Item={
            "pk": {"S": f"k{i:04}"}, "n": {"N": str(i)}, "tags": {"SS": ["a", f"t{i}"]}, "raw": {"B": bytes([i % 256])}})


def finished(dynamodb, arn, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        description = dynamodb.describe_export(ExportArn=arn)["ExportDescription"]
        if description["ExportStatus"] != "IN_PROGRESS":
            return description
        time.sleep(0.05)
    raise AssertionError(f"export {arn} still IN_PROGRESS after {timeout} s")


def read(s3, bucket, key):
    return s3.get_object(Bucket=bucket, Key=key)["Body"].read()


def data_lines(s3, bucket, summary):
    files = [json.loads(line) for line in read(s3, bucket, summary["manifestFilesS3Key"]).decode().splitlines()]
    lines = []
    for entry in files:
        body = read(s3, bucket, entry["dataFileS3Key"])
        assert base64.b64encode(hashlib.md5(body).digest()).decode() == entry["md5Checksum"]
        text = gzip.decompress(body).decode()
        assert len(text.splitlines()) == entry["itemCount"], entry
        lines += text.splitlines()
    return lines


def refusal(call, **request):
    """The (code, message) DynamoDB refuses `call(**request)` with."""
    with pytest.raises(ClientError) as refused:
        call(**request)
    return refused.value.response["Error"]["Code"], refused.value.response["Error"]["Message"]


def server_now(dynamodb, table):
    description = dynamodb.describe_continuous_backups(TableName=table)
    return description["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"]["LatestRestorableDateTime"]


def test_a_full_export_is_read_back_with_boto3_and_gzip_item_for_item(clients):
    dynamodb, s3, bucket = clients
    arn = table_with_recovery(dynamodb, "orders", items=120)
    started = dynamodb.export_table_to_point_in_time(TableArn=arn, S3Bucket=bucket, S3Prefix="nightly")["ExportDescription"]
    assert started["ExportStatus"] == "IN_PROGRESS"
    assert started["S3SseAlgorithm"] == "AES256", "DynamoDB describes the default encryption"
    assert started["ExportArn"].startswith(arn + "/export/")
    done = finished(dynamodb, started["ExportArn"])
    assert done["ExportStatus"] == "COMPLETED", done
    assert done["ItemCount"] == 120 and done["ExportFormat"] == "DYNAMODB_JSON"
    assert "ExportType" not in started and "ExportType" not in done, "DynamoDB echoes ExportType only when requested"
    folder = "nightly/AWSDynamoDB/" + done["ExportArn"].rsplit("/", 1)[1] + "/"
    assert done["ExportManifest"] == folder + "manifest-summary.json"
    keys = {o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]}
    for name in ["_started", "manifest-summary.json", "manifest-summary.md5", "manifest-files.json", "manifest-files.md5"]:
        assert folder + name in keys, (name, keys)
    summary_bytes = read(s3, bucket, done["ExportManifest"])
    # The .md5 files hold the base64 MD5, as DynamoDB writes them.
    assert read(s3, bucket, folder + "manifest-summary.md5").decode() == base64.b64encode(hashlib.md5(summary_bytes).digest()).decode()
    summary = json.loads(summary_bytes)
    assert (summary["itemCount"], summary["outputFormat"]) == (120, "DYNAMODB_JSON")
    assert not {"exportType", "outputView", "exportFromTime", "exportToTime"} & set(summary), "incremental members only"
    assert summary["tableArn"] == arn and summary["s3Bucket"] == bucket and summary["s3Prefix"] == "nightly"
    exported = sorted(json.loads(line)["Item"]["pk"]["S"] for line in data_lines(s3, bucket, summary))
    scanned = sorted(i["pk"]["S"] for page in dynamodb.get_paginator("scan").paginate(TableName="orders") for i in page["Items"])
    assert exported == scanned
    one = json.loads(data_lines(s3, bucket, summary)[0])["Item"]
    assert set(one) == {"pk", "n", "tags", "raw"} and "SS" in one["tags"] and "B" in one["raw"]


def test_an_ion_export_of_an_earlier_instant_holds_the_items_of_that_instant(clients):
    dynamodb, s3, bucket = clients
    arn = table_with_recovery(dynamodb, "ledger", items=30)
    time.sleep(0.02)
    then = server_now(dynamodb, "ledger")
    time.sleep(0.02)
    put(dynamodb, "ledger", range(30, 45))
    dynamodb.delete_item(TableName="ledger", Key={"pk": {"S": "k0000"}})
    started = dynamodb.export_table_to_point_in_time(TableArn=arn, S3Bucket=bucket, ExportTime=then, ExportFormat="ION")
    done = finished(dynamodb, started["ExportDescription"]["ExportArn"])
    assert done["ExportStatus"] == "COMPLETED", done
    assert done["ItemCount"] == 30
    summary = json.loads(read(s3, bucket, done["ExportManifest"]))
    lines = data_lines(s3, bucket, summary)
    assert lines[0].startswith("$ion_1_0 {Item:{")
    assert any('"pk":"k0000"' in line for line in lines), "the item deleted after the instant is in it"
    assert all("$dynamodb_SS::[" in line for line in lines)
    assert "ledger" in dynamodb.list_tables()["TableNames"]
    assert all(not t.startswith("export-") for t in dynamodb.list_tables()["TableNames"])


def test_exports_are_refused_as_dynamodb_refuses_them(clients):
    dynamodb, s3, bucket = clients
    dynamodb.create_table(TableName="plain", BillingMode="PAY_PER_REQUEST",
                          KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                          AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}])
    plain = dynamodb.describe_table(TableName="plain")["Table"]["TableArn"]
    with pytest.raises(ClientError) as refused:
        dynamodb.export_table_to_point_in_time(TableArn=plain, S3Bucket=bucket)
    assert refused.value.response["Error"]["Code"] == "PointInTimeRecoveryUnavailableException"
    assert refused.value.response["Error"]["Message"] == "Point in time recovery is not enabled for table 'plain'"
    arn = table_with_recovery(dynamodb, "timed", items=1)
    with pytest.raises(ClientError) as refused:
        dynamodb.export_table_to_point_in_time(TableArn=arn, S3Bucket=bucket, ExportTime=datetime.datetime(2020, 1, 1))
    assert refused.value.response["Error"]["Code"] == "InvalidExportTimeException"
    with pytest.raises(ClientError) as refused:
        dynamodb.export_table_to_point_in_time(TableArn=arn, S3Bucket=bucket, ExportType="INCREMENTAL_EXPORT")
    assert refused.value.response["Error"]["Code"] == "ValidationException"
    missing = arn + "/export/01796374227026-0000ffff"
    with pytest.raises(ClientError) as refused:
        dynamodb.describe_export(ExportArn=missing)
    assert refused.value.response["Error"] == {"Code": "ExportNotFoundException",
                                               "Message": f"Export not found: Export not found: {missing}"}


def test_a_client_token_repeats_an_export_and_conflicts_with_other_parameters(clients):
    dynamodb, s3, bucket = clients
    arn = table_with_recovery(dynamodb, "tokened", items=3)
    first = dynamodb.export_table_to_point_in_time(TableArn=arn, S3Bucket=bucket, ClientToken="nightly-1")
    again = dynamodb.export_table_to_point_in_time(TableArn=arn, S3Bucket=bucket, ClientToken="nightly-1")
    assert again["ExportDescription"]["ExportArn"] == first["ExportDescription"]["ExportArn"]
    with pytest.raises(ClientError) as refused:
        dynamodb.export_table_to_point_in_time(TableArn=arn, S3Bucket=bucket, ClientToken="nightly-1", S3Prefix="other")
    assert refused.value.response["Error"]["Code"] == "ExportConflictException"
    finished(dynamodb, first["ExportDescription"]["ExportArn"])
    second = dynamodb.export_table_to_point_in_time(TableArn=arn, S3Bucket=bucket)["ExportDescription"]["ExportArn"]
    page = dynamodb.list_exports(TableArn=arn, MaxResults=1)
    assert len(page["ExportSummaries"]) == 1 and "NextToken" in page
    rest = dynamodb.list_exports(TableArn=arn, MaxResults=1, NextToken=page["NextToken"])
    assert [s["ExportArn"] for s in page["ExportSummaries"] + rest["ExportSummaries"]] == \
        [second, first["ExportDescription"]["ExportArn"]], "newest first"
    finished(dynamodb, second)


def test_export_type_is_echoed_only_when_requested_and_always_listed(clients):
    """DDB-EXPORT-017: an ExportDescription carries ExportType only when the
    request gave it; ListExports' summaries always carry it."""
    dynamodb, s3, bucket = clients
    arn = table_with_recovery(dynamodb, "typed", items=2)
    plain = dynamodb.export_table_to_point_in_time(TableArn=arn, S3Bucket=bucket)["ExportDescription"]["ExportArn"]
    typed = dynamodb.export_table_to_point_in_time(TableArn=arn, S3Bucket=bucket, ExportType="FULL_EXPORT")
    assert typed["ExportDescription"]["ExportType"] == "FULL_EXPORT"
    typed = typed["ExportDescription"]["ExportArn"]
    assert "ExportType" not in finished(dynamodb, plain)
    assert finished(dynamodb, typed)["ExportType"] == "FULL_EXPORT"
    listed = dynamodb.list_exports(TableArn=arn)["ExportSummaries"]
    assert listed == [{"ExportArn": typed, "ExportStatus": "COMPLETED", "ExportType": "FULL_EXPORT"},
                      {"ExportArn": plain, "ExportStatus": "COMPLETED", "ExportType": "FULL_EXPORT"}]


def test_a_missing_bucket_fails_the_export_within_seconds_saying_why(clients):
    dynamodb, s3, bucket = clients
    arn = table_with_recovery(dynamodb, "nowhere", items=2)
    started = time.time()
    arn = dynamodb.export_table_to_point_in_time(TableArn=arn, S3Bucket="no-such-bucket")["ExportDescription"]["ExportArn"]
    done = finished(dynamodb, arn, timeout=20)
    assert done["ExportStatus"] == "FAILED"
    assert done["FailureCode"] == "S3NoSuchBucket" and "no-such-bucket" in done["FailureMessage"], done
    assert time.time() - started < 20


def test_an_unreachable_store_fails_the_export_within_seconds():
    process, endpoint = start_ferrodyn(f"http://127.0.0.1:{free_port()}")
    try:
        dynamodb = boto3.client("dynamodb", endpoint_url=endpoint, **KEYS)
        arn = table_with_recovery(dynamodb, "offline", items=1)
        started = time.time()
        arn = dynamodb.export_table_to_point_in_time(TableArn=arn, S3Bucket="any")["ExportDescription"]["ExportArn"]
        done = finished(dynamodb, arn, timeout=30)
        assert done["ExportStatus"] == "FAILED" and done["FailureCode"] == "S3Unavailable" and done["FailureMessage"], done
        assert time.time() - started < 30
    finally:
        process.terminate()
        process.wait(timeout=10)


# ---------------------------------------------------------------- imports

def imported(dynamodb, arn, timeout=30):
    deadline = time.time() + timeout
    while time.time() < deadline:
        description = dynamodb.describe_import(ImportArn=arn)["ImportTableDescription"]
        if description["ImportStatus"] != "IN_PROGRESS":
            return description
        time.sleep(0.05)
    raise AssertionError(f"import {arn} still IN_PROGRESS after {timeout} s")


def creation(name, gsi=False):
    parameters = {"TableName": name, "BillingMode": "PAY_PER_REQUEST",
                  "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                  "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}
    if gsi:
        parameters["AttributeDefinitions"].append({"AttributeName": "n", "AttributeType": "N"})
        parameters["GlobalSecondaryIndexes"] = [{"IndexName": "by_n", "KeySchema": [{"AttributeName": "n", "KeyType": "HASH"}],
                                                 "Projection": {"ProjectionType": "ALL"}}]
    return parameters


def scanned(dynamodb, table):
    items = [i for page in dynamodb.get_paginator("scan").paginate(TableName=table) for i in page["Items"]]
    return sorted(items, key=lambda i: i["pk"]["S"])


def test_an_export_imports_back_exactly_with_its_index(clients):
    dynamodb, s3, bucket = clients
    arn = table_with_recovery(dynamodb, "source", items=250)
    done = finished(dynamodb, dynamodb.export_table_to_point_in_time(TableArn=arn, S3Bucket=bucket)["ExportDescription"]["ExportArn"])
    data = done["ExportManifest"].rsplit("/", 1)[0] + "/data/"
    started = dynamodb.import_table(S3BucketSource={"S3Bucket": bucket, "S3KeyPrefix": data}, InputFormat="DYNAMODB_JSON",
                                    InputCompressionType="GZIP", TableCreationParameters=creation("copy", gsi=True))
    description = started["ImportTableDescription"]
    assert description["ImportStatus"] == "IN_PROGRESS" and description["ImportArn"].startswith(description["TableArn"] + "/import/")
    done = imported(dynamodb, description["ImportArn"])
    assert done["ImportStatus"] == "COMPLETED", done
    assert (done["ProcessedItemCount"], done["ImportedItemCount"], done["ErrorCount"]) == (250, 250, 0)
    assert done["ProcessedSizeBytes"] > 0
    assert dynamodb.describe_table(TableName="copy")["Table"]["TableStatus"] == "ACTIVE"
    assert scanned(dynamodb, "copy") == scanned(dynamodb, "source")
    by_n = dynamodb.query(TableName="copy", IndexName="by_n", KeyConditionExpression="n = :n",
                          ExpressionAttributeValues={":n": {"N": "7"}})["Items"]
    assert [i["pk"]["S"] for i in by_n] == ["k0007"]
    listed = dynamodb.list_imports(TableArn=description["TableArn"])["ImportSummaryList"]
    assert [i["ImportArn"] for i in listed] == [description["ImportArn"]]


def test_a_csv_import_types_its_keys_and_quotes_fields(clients):
    dynamodb, s3, bucket = clients
    rows = 'pk,city,visits\nu1,Oslo,3\nu2,"Lima, Peru",7\n'
    s3.put_object(Bucket=bucket, Key="csv/users.csv", Body=rows.encode())
    s3.put_object(Bucket=bucket, Key="csv/more.csv", Body=b"pk;city\nu4;Kyiv\n")
    started = dynamodb.import_table(S3BucketSource={"S3Bucket": bucket, "S3KeyPrefix": "csv/"}, InputFormat="CSV",
                                    InputFormatOptions={"Csv": {"Delimiter": ";"}}, TableCreationParameters=creation("users"))
    done = imported(dynamodb, started["ImportTableDescription"]["ImportArn"])
    # users.csv read with ';' is one column "pk,city,visits": no key, so an
    # error that abandons that object; more.csv imports.
    assert (done["ProcessedItemCount"], done["ImportedItemCount"], done["ErrorCount"]) == (2, 1, 1), done
    assert [i["pk"]["S"] for i in scanned(dynamodb, "users")] == ["u4"]
    started = dynamodb.import_table(S3BucketSource={"S3Bucket": bucket, "S3KeyPrefix": "csv/users"}, InputFormat="CSV",
                                    TableCreationParameters=creation("users_comma"))
    done = imported(dynamodb, started["ImportTableDescription"]["ImportArn"])
    assert (done["ImportStatus"], done["ImportedItemCount"]) == ("COMPLETED", 2), done
    items = {i["pk"]["S"]: i for i in scanned(dynamodb, "users_comma")}
    assert items["u2"]["city"] == {"S": "Lima, Peru"} and items["u2"]["visits"] == {"S": "7"}


def test_a_bad_unit_abandons_the_rest_of_its_object_and_fails_the_import_keeping_the_valid_items(clients):
    dynamodb, s3, bucket = clients
    good = '{"Item":{"pk":{"S":"a"}}}\n\n{"Item":{"pk":{"S":"b"}}}{"Item":{"pk":{"S":"c"}}}\n'
    bad = '{"Item":{"pk":{"S":"d"}}}\n{"Item":{"pk":{"N":"1"}}}\n{"Item":{"pk":{"S":"never"}}}\n'
    s3.put_object(Bucket=bucket, Key="json/1-good.json.gz", Body=gzip.compress(good.encode()))
    s3.put_object(Bucket=bucket, Key="json/2-bad.json.gz", Body=gzip.compress(bad.encode()))
    s3.put_object(Bucket=bucket, Key="json/3-plain.json", Body=b'{"Item":{"pk":{"S":"e"}}}')
    started = dynamodb.import_table(S3BucketSource={"S3Bucket": bucket, "S3KeyPrefix": "json/"}, InputFormat="DYNAMODB_JSON",
                                    InputCompressionType="GZIP", TableCreationParameters=creation("partly"))
    done = imported(dynamodb, started["ImportTableDescription"]["ImportArn"])
    assert (done["ImportStatus"], done["FailureCode"]) == ("FAILED", "ItemValidationError"), done
    # three from the good object, one before the bad unit, and the
    # uncompressed object under GZIP counts as one more error.
    assert (done["ProcessedItemCount"], done["ImportedItemCount"], done["ErrorCount"]) == (6, 4, 2), done
    assert dynamodb.describe_table(TableName="partly")["Table"]["TableStatus"] == "ACTIVE"
    assert [i["pk"]["S"] for i in scanned(dynamodb, "partly")] == ["a", "b", "c", "d"]


EVERY_TYPE = [
    {"pk": {"S": "every"}, "s": {"S": 'quote " backslash \\ newline \n tab \t é 🦀'}, "empty": {"S": ""},
     "n": {"N": "12345678901234567890123456789012345678"}, "small": {"N": "-0.000000000000000000000000000000000000000001"},
     "big": {"N": "9.9E+125"}, "neg": {"N": "-17.25"}, "int": {"N": "42"},
     "b": {"B": bytes(range(256))}, "t": {"BOOL": True}, "f": {"BOOL": False}, "z": {"NULL": True},
     "ss": {"SS": ["x", "y", "needs \"quoting\""]}, "ns": {"NS": ["1", "2.5", "-3E+10"]}, "bs": {"BS": [b"\x00", b"\xff\x01"]},
     "l": {"L": [{"S": "a"}, {"N": "1"}, {"L": []}, {"M": {}}, {"NULL": True}, {"SS": ["in a list"]}]},
     "m": {"M": {"nested": {"M": {"deeper": {"L": [{"B": b"\x02"}]}}}, "a.b c'd": {"BOOL": True}}},
     "name with spaces/dots.and'quotes\"": {"S": "odd names"}},
    {"pk": {"S": "plain"}, "n": {"N": "0"}},
]


def test_an_ion_export_of_every_type_imports_back_as_ion_exactly(clients):
    dynamodb, s3, bucket = clients
    arn = table_with_recovery(dynamodb, "every_type")
    for item in EVERY_TYPE:
        dynamodb.put_item(TableName="every_type", Item=item)
    exported = dynamodb.export_table_to_point_in_time(TableArn=arn, S3Bucket=bucket, ExportFormat="ION")
    done = finished(dynamodb, exported["ExportDescription"]["ExportArn"])
    assert (done["ExportStatus"], done["ItemCount"]) == ("COMPLETED", 2), done
    data = done["ExportManifest"].rsplit("/", 1)[0] + "/data/"
    assert all(o["Key"].endswith(".ion.gz") for o in s3.list_objects_v2(Bucket=bucket, Prefix=data)["Contents"])
    started = dynamodb.import_table(S3BucketSource={"S3Bucket": bucket, "S3KeyPrefix": data}, InputFormat="ION",
                                    InputCompressionType="GZIP", TableCreationParameters=creation("every_type_copy"))
    assert started["ImportTableDescription"]["InputFormat"] == "ION"
    done = imported(dynamodb, started["ImportTableDescription"]["ImportArn"])
    assert (done["ImportStatus"], done["ProcessedItemCount"], done["ImportedItemCount"], done["ErrorCount"]) == \
        ("COMPLETED", 2, 2, 0), done
    assert scanned(dynamodb, "every_type_copy") == scanned(dynamodb, "every_type")
    assert scanned(dynamodb, "every_type_copy")[0]["n"] == {"N": "12345678901234567890123456789012345678"}


def test_a_bad_ion_unit_abandons_the_rest_of_its_object_and_fails_the_import(clients):
    dynamodb, s3, bucket = clients
    good = '$ion_1_0 {Item:{pk:"a",n:1.50}}\n$ion_1_0 {Item:{pk:"b",price:2d3}} {Item:{pk:"c"}}\n'
    bad = '$ion_1_0 {Item:{pk:"d"}}\n$ion_1_0 {Item:{pk:"e",tags:$dynamodb_SS::[]}}\n$ion_1_0 {Item:{pk:"never"}}\n'
    s3.put_object(Bucket=bucket, Key="ion/1-good.ion", Body=good.encode())
    s3.put_object(Bucket=bucket, Key="ion/2-bad.ion", Body=bad.encode())
    s3.put_object(Bucket=bucket, Key="ion/3-json.json", Body=b'{"Item":{"pk":{"S":"f"}}}')
    started = dynamodb.import_table(S3BucketSource={"S3Bucket": bucket, "S3KeyPrefix": "ion/"}, InputFormat="ION",
                                    TableCreationParameters=creation("ion_partly"))
    done = imported(dynamodb, started["ImportTableDescription"]["ImportArn"])
    assert (done["ImportStatus"], done["FailureCode"]) == ("FAILED", "ItemValidationError"), done
    # three from the good object, one before the empty set, and DynamoDB
    # JSON read as Ion (valid Ion) holds its key as a map: one more error.
    assert (done["ProcessedItemCount"], done["ImportedItemCount"], done["ErrorCount"]) == (6, 4, 2), done
    assert dynamodb.describe_table(TableName="ion_partly")["Table"]["TableStatus"] == "ACTIVE"
    items = scanned(dynamodb, "ion_partly")
    assert [i["pk"]["S"] for i in items] == ["a", "b", "c", "d"]
    assert (items[0]["n"], items[1]["price"]) == ({"N": "1.5"}, {"N": "2000"})


def test_imports_are_refused_or_fail_as_dynamodb_does(clients):
    dynamodb, s3, bucket = clients
    for field, value in [("InputFormat", "XML"), ("InputCompressionType", "BZIP2")]:
        request = dict(S3BucketSource={"S3Bucket": bucket}, InputFormat="DYNAMODB_JSON", TableCreationParameters=creation("never"))
        request[field] = value
        with pytest.raises(ClientError) as refused:
            dynamodb.import_table(**request)
        assert refused.value.response["Error"]["Code"] == "ValidationException"
    missing = "arn:aws:dynamodb:us-east-1:000000000000:table/xyz/import/01796374227026-0000ffff"
    with pytest.raises(ClientError) as refused:
        dynamodb.describe_import(ImportArn=missing)
    assert refused.value.response["Error"] == {"Code": "ImportNotFoundException",
                                               "Message": f"Import not found: Import not found: {missing}"}
    started = dynamodb.import_table(S3BucketSource={"S3Bucket": "no-such-bucket"}, InputFormat="DYNAMODB_JSON",
                                    TableCreationParameters=creation("orphan"))
    done = imported(dynamodb, started["ImportTableDescription"]["ImportArn"])
    assert done["ImportStatus"] == "FAILED" and "no-such-bucket" in done["FailureMessage"], done
    assert "orphan" not in dynamodb.list_tables()["TableNames"], "a failed import removes its table"


def test_describe_export_and_import_check_the_arn_as_dynamodb_does(clients, ferrodyn):
    """DDB-EXPORT-006, DDB-IMPORT-010: a well-formed ARN of nothing is not
    found (an id of 0 is well-formed); a table ARN, the other kind's ARN,
    junk or a bad table name is `Invalid Export ARN`; another region's ARN,
    or a real one through another region, is `Invalid export arn`; another
    account's is AccessDeniedException."""
    dynamodb, s3, bucket = clients
    arn = table_with_recovery(dynamodb, "described", items=1)
    export_arn = dynamodb.export_table_to_point_in_time(TableArn=arn, S3Bucket=bucket)["ExportDescription"]["ExportArn"]
    finished(dynamodb, export_arn)
    import_arn = dynamodb.import_table(S3BucketSource={"S3Bucket": bucket, "S3KeyPrefix": "nothing/"}, InputFormat="DYNAMODB_JSON",
                                       TableCreationParameters=creation("described_copy"))["ImportTableDescription"]["ImportArn"]
    imported(dynamodb, import_arn)
    account = arn.split(":")[4]
    for describe, word, own, other in [(dynamodb.describe_export, "export", export_arn, import_arn),
                                       (dynamodb.describe_import, "import", import_arn, export_arn)]:
        title, member = word.capitalize(), word.capitalize() + "Arn"
        assert describe(**{member: own})
        missing = f"{arn}/{word}/0"
        assert refusal(describe, **{member: missing}) == (f"{title}NotFoundException", f"{title} not found: {title} not found: {missing}")
        short_name = arn.rsplit("/", 1)[0] + f"/xy/{word}/01796374227026-0000ffff"
        for junk in [arn, other, "x" * 40, short_name]:
            assert refusal(describe, **{member: junk}) == ("ValidationException", f"Invalid {title} ARN"), junk
        elsewhere = own.replace(":us-east-1:", ":us-west-2:")
        assert refusal(describe, **{member: elsewhere}) == (f"{title}NotFoundException", f"{title} not found: Invalid {word} arn")
        foreign = own.replace(f":{account}:", ":111111111111:")
        assert refusal(describe, **{member: foreign}) == ("AccessDeniedException", "Access is denied")
    west = boto3.client("dynamodb", endpoint_url=ferrodyn, **{**KEYS, "region_name": "us-west-2"})
    assert refusal(west.describe_export, ExportArn=export_arn) == ("ExportNotFoundException", "Export not found: Invalid export arn")


def test_listings_run_newest_first_ten_to_a_page_and_exports_follow_the_current_table(clients):
    """DDB-IMPORT-016: newest first, 10 a page; DDB-EXPORT-006: a token of
    the other listing, or junk, is refused; DDB-EXPORT-020: after DeleteTable
    or a re-create under the same name, ListExports(TableArn) lists none of
    the old exports (DescribeExport still works), while ListImports(TableArn)
    still lists an import whose table is gone (DDB-IMPORT-008)."""
    dynamodb, s3, bucket = clients
    arn = table_with_recovery(dynamodb, "listed")
    exports = [dynamodb.export_table_to_point_in_time(TableArn=arn, S3Bucket=bucket, S3Prefix=f"e{i}")["ExportDescription"]["ExportArn"]
               for i in range(12)]
    for export in exports:
        finished(dynamodb, export)
    page = dynamodb.list_exports(TableArn=arn)
    assert [s["ExportArn"] for s in page["ExportSummaries"]] == exports[::-1][:10]
    rest = dynamodb.list_exports(TableArn=arn, NextToken=page["NextToken"])
    assert [s["ExportArn"] for s in rest["ExportSummaries"]] == exports[::-1][10:] and "NextToken" not in rest
    imports = [dynamodb.import_table(S3BucketSource={"S3Bucket": bucket, "S3KeyPrefix": "none/"}, InputFormat="DYNAMODB_JSON",
                                     TableCreationParameters=creation(f"listed_{i}"))["ImportTableDescription"]["ImportArn"]
               for i in range(11)]
    for arn_of_import in imports:
        imported(dynamodb, arn_of_import)
    first = dynamodb.list_imports()
    assert [s["ImportArn"] for s in first["ImportSummaryList"]] == imports[::-1][:10]
    # botocore sends ListImports a token only of at least 112 characters.
    after = dynamodb.list_imports(PageSize=25, NextToken=first["NextToken"])["ImportSummaryList"]
    assert after[0]["ImportArn"] == imports[0]
    for listing, token in [(dynamodb.list_imports, page["NextToken"]), (dynamodb.list_exports, first["NextToken"]),
                           (dynamodb.list_exports, "bogus")]:
        assert refusal(listing, NextToken=token) == ("ValidationException", f"Invalid Request: Provided nextToken is invalid: {token}")
    dynamodb.delete_table(TableName="listed")
    assert dynamodb.list_exports(TableArn=arn)["ExportSummaries"] == []
    assert dynamodb.describe_export(ExportArn=exports[0])["ExportDescription"]["ExportStatus"] == "COMPLETED"
    assert table_with_recovery(dynamodb, "listed") == arn
    assert dynamodb.list_exports(TableArn=arn)["ExportSummaries"] == []
    anew = dynamodb.export_table_to_point_in_time(TableArn=arn, S3Bucket=bucket)["ExportDescription"]["ExportArn"]
    assert [s["ExportArn"] for s in dynamodb.list_exports(TableArn=arn)["ExportSummaries"]] == [anew]
    finished(dynamodb, anew)
    gone = dynamodb.describe_import(ImportArn=imports[0])["ImportTableDescription"]["TableArn"]
    dynamodb.delete_table(TableName="listed_0")
    assert [s["ImportArn"] for s in dynamodb.list_imports(TableArn=gone)["ImportSummaryList"]] == [imports[0]]


class GatedS3:
    """A proxy in front of moto's S3 that holds every GET of an object under
    `gated/` until `release` is set: an import stays IN_PROGRESS for as long
    as a test needs it to."""

    def __init__(self, upstream):
        self.release = threading.Event()
        target, release = urllib.parse.urlsplit(upstream), self.release

        class Relay(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def relay(self):
                if self.command == "GET" and "/gated/" in urllib.parse.urlsplit(self.path).path:
                    release.wait(60)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
                upstream = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
                upstream.request(self.command, self.path, body=body, headers=headers)
                answer = upstream.getresponse()
                data = answer.read()
                self.send_response(answer.status)
                for name, value in answer.getheaders():
                    if name.lower() not in ("transfer-encoding", "content-length", "connection"):
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                upstream.close()

            do_GET = do_PUT = do_POST = do_DELETE = relay

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Relay)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"


def test_an_import_client_token_conflicts_only_on_the_table_name_and_yields_to_the_table_check(moto):
    """DDB-IMPORT-017, [ScyI] point 1: while the import runs, a replay gets it
    back whatever its source says, and only another TableName conflicts;
    once it has ended, the table check comes first (ResourceInUseException);
    once its table is deleted, the token gives the old import back and
    creates nothing."""
    proxy = GatedS3(moto)
    process, endpoint = start_ferrodyn(proxy.endpoint)
    try:
        dynamodb = boto3.client("dynamodb", endpoint_url=endpoint, **KEYS)
        s3 = boto3.client("s3", endpoint_url=moto, **KEYS)
        s3.create_bucket(Bucket="tokens")
        s3.put_object(Bucket="tokens", Key="gated/data.json", Body=b'{"Item":{"pk":{"S":"a"}}}\n')
        request = dict(ClientToken="import-1", S3BucketSource={"S3Bucket": "tokens", "S3KeyPrefix": "gated/"},
                       InputFormat="DYNAMODB_JSON", TableCreationParameters=creation("tokened"))
        first = dynamodb.import_table(**request)["ImportTableDescription"]
        assert dynamodb.import_table(**request)["ImportTableDescription"]["ImportArn"] == first["ImportArn"]
        for change in [{"S3BucketSource": {"S3Bucket": "other-bucket", "S3KeyPrefix": "elsewhere/"}},
                       {"InputFormat": "CSV"}, {"InputCompressionType": "GZIP"}]:
            replay = dynamodb.import_table(**{**request, **change})["ImportTableDescription"]
            assert replay["ImportArn"] == first["ImportArn"], change
            assert (replay["S3BucketSource"], replay["InputFormat"], replay["InputCompressionType"]) == \
                (first["S3BucketSource"], "DYNAMODB_JSON", "NONE"), change
        conflict = ("ImportConflictException", "Import conflict: Duplicate request detected with conflicting parameters")
        assert refusal(dynamodb.import_table, **{**request, "TableCreationParameters": creation("elsewhere")}) == conflict
        # Another token for the name: Ferrodyn reserves it at once (AWS lets
        # the second import run and fail TableAlreadyExists; §4).
        taken = ("ResourceInUseException", "Table already exists: tokened")
        assert refusal(dynamodb.import_table, **{**request, "ClientToken": "import-2"}) == taken
        assert dynamodb.describe_import(ImportArn=first["ImportArn"])["ImportTableDescription"]["ImportStatus"] == "IN_PROGRESS"
        proxy.release.set()
        assert imported(dynamodb, first["ImportArn"])["ImportStatus"] == "COMPLETED"
        assert refusal(dynamodb.import_table, **request) == taken
        dynamodb.delete_table(TableName="tokened")
        again = dynamodb.import_table(**request)["ImportTableDescription"]
        assert (again["ImportArn"], again["ImportStatus"]) == (first["ImportArn"], "COMPLETED")
        assert "tokened" not in dynamodb.list_tables()["TableNames"]
        assert refusal(dynamodb.import_table, **{**request, "TableCreationParameters": creation("elsewhere")}) == conflict
        assert dynamodb.list_tables()["TableNames"] == []
    finally:
        proxy.release.set()
        process.terminate()
        process.wait(timeout=10)
        proxy.server.shutdown()


def test_a_zstd_compressed_object_imports(clients):
    dynamodb, s3, bucket = clients
    lines = "".join(f'{{"Item":{{"pk":{{"S":"z{i}"}}}}}}\n' for i in range(40))
    s3.put_object(Bucket=bucket, Key="zstd/part.json.zst", Body=zstandard.ZstdCompressor().compress(lines.encode()))
    started = dynamodb.import_table(S3BucketSource={"S3Bucket": bucket, "S3KeyPrefix": "zstd/"}, InputFormat="DYNAMODB_JSON",
                                    InputCompressionType="ZSTD", TableCreationParameters=creation("zstd"))
    done = imported(dynamodb, started["ImportTableDescription"]["ImportArn"])
    assert (done["ImportStatus"], done["ImportedItemCount"], done["ErrorCount"]) == ("COMPLETED", 40, 0), done


def test_ten_kill_9_cycles_during_exports_and_imports_leave_each_finished_or_redone(moto, tmp_path):
    """kill -9 while an export and an import run: after the restart each
    completes in full (an export's manifest lists every item, an import's
    table holds every line), never a half result listed as done."""
    s3 = boto3.client("s3", endpoint_url=moto, **KEYS)
    s3.create_bucket(Bucket="cycles")
    lines = "".join(f'{{"Item":{{"pk":{{"S":"i{i:05}"}}}}}}\n' for i in range(5000))
    s3.put_object(Bucket="cycles", Key="in/part.json", Body=lines.encode())
    data_dir = str(tmp_path / "data")

    def start():
        port = free_port()
        process = subprocess.Popen([str(BINARY), "serve", "--data-dir", data_dir, "--port", str(port), "--console", "off",
                                    "--s3-endpoint", moto], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_listening(port, process)
        return process, boto3.client("dynamodb", endpoint_url=f"http://127.0.0.1:{port}", **KEYS)

    process, dynamodb = start()
    arn = table_with_recovery(dynamodb, "cycled")
    for start_at in range(0, 2000, 25):
        dynamodb.batch_write_item(RequestItems={"cycled": [
            {"PutRequest": {"Item": {"pk": {"S": f"k{i:05}"}}}} for i in range(start_at, start_at + 25)]})
    pending = []
    for cycle in range(10):
        export = dynamodb.export_table_to_point_in_time(TableArn=arn, S3Bucket="cycles", S3Prefix=f"c{cycle}")
        imported_arn = dynamodb.import_table(S3BucketSource={"S3Bucket": "cycles", "S3KeyPrefix": "in/"},
                                             InputFormat="DYNAMODB_JSON", TableCreationParameters=creation(f"in-{cycle}"))
        pending.append((export["ExportDescription"]["ExportArn"], imported_arn["ImportTableDescription"]["ImportArn"], cycle))
        time.sleep(0.005 * (cycle % 5))
        process.kill()
        process.wait()
        process, dynamodb = start()
    try:
        for export_arn, import_arn, cycle in pending:
            done = finished(dynamodb, export_arn)
            assert (done["ExportStatus"], done.get("ItemCount")) == ("COMPLETED", 2000), (cycle, done.get("FailureCode"), done.get("FailureMessage"))
            summary = json.loads(read(s3, "cycles", done["ExportManifest"]))
            assert len(data_lines(s3, "cycles", summary)) == 2000
            done = imported(dynamodb, import_arn)
            assert (done["ImportStatus"], done["ImportedItemCount"]) == ("COMPLETED", 5000), (cycle, done)
            assert dynamodb.describe_table(TableName=f"in-{cycle}")["Table"]["ItemCount"] == 5000
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_the_cli_exports_a_table_and_imports_the_export_back(clients, ferrodyn):
    dynamodb, s3, bucket = clients
    table_with_recovery(dynamodb, "cli_source", items=12)

    def cli(*args):
        result = subprocess.run([str(BINARY), *args, "--endpoint-url", ferrodyn, "-o", "json"], capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)

    export = cli("s3", "export", "cli_source", "--bucket", bucket, "--prefix", "cli", "--wait")
    assert (export["ExportStatus"], export["ItemCount"]) == ("COMPLETED", 12)
    data = export["ExportManifest"].rsplit("/", 1)[0] + "/data/"
    imported_table = cli("s3", "import", "cli_copy", "--pk", "pk", "--bucket", bucket, "--prefix", data,
                         "--compression", "gzip", "--wait")
    assert (imported_table["ImportStatus"], imported_table["ImportedItemCount"]) == ("COMPLETED", 12)
    assert scanned(dynamodb, "cli_copy") == scanned(dynamodb, "cli_source")
    jobs = cli("s3", "list")["Jobs"]
    assert {export["ExportArn"], imported_table["ImportArn"]} <= {j.get("ExportArn") or j.get("ImportArn") for j in jobs}


def test_an_incremental_export_holds_each_changed_item_once_compacted_over_its_window(moto):
    """With a manual clock: changes at the window's start are in it, those
    at its end are not; an item inserted and deleted inside it is absent."""
    port = free_port()
    process = subprocess.Popen([str(BINARY), "serve", "--in-memory", "--port", str(port), "--console", "off", "--clock", "manual",
                                "--s3-endpoint", moto], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_listening(port, process)
    endpoint = f"http://127.0.0.1:{port}"

    def advance(by):
        subprocess.run([str(BINARY), "clock", "--advance", by, "--endpoint-url", endpoint], check=True, capture_output=True)
    try:
        dynamodb = boto3.client("dynamodb", endpoint_url=endpoint, **KEYS)
        s3 = boto3.client("s3", endpoint_url=moto, **KEYS)
        s3.create_bucket(Bucket="incremental")
        arn = table_with_recovery(dynamodb, "changes")
        item = lambda k, **more: {"pk": {"S": k}, **{n: {"S": v} for n, v in more.items()}}  # noqa: E731
        for k in ["a1", "a2"]:
            dynamodb.put_item(TableName="changes", Item=item(k, state="old"))
        advance("1m")
        start = server_now(dynamodb, "changes")
        dynamodb.put_item(TableName="changes", Item=item("b1", state="new"))
        dynamodb.put_item(TableName="changes", Item=item("a1", state="changed"))
        dynamodb.delete_item(TableName="changes", Key={"pk": {"S": "a2"}})
        dynamodb.put_item(TableName="changes", Item=item("c1"))
        dynamodb.delete_item(TableName="changes", Key={"pk": {"S": "c1"}})
        advance("20m")
        end = server_now(dynamodb, "changes")
        dynamodb.put_item(TableName="changes", Item=item("d1"))
        with pytest.raises(ClientError) as refused:
            dynamodb.export_table_to_point_in_time(TableArn=arn, S3Bucket="incremental", ExportType="INCREMENTAL_EXPORT",
                                                   IncrementalExportSpecification={"ExportFromTime": start,
                                                                                   "ExportToTime": start + datetime.timedelta(minutes=10)})
        assert refused.value.response["Error"]["Code"] == "InvalidExportTimeException"
        assert "less than 15 minutes" in refused.value.response["Error"]["Message"]
        with pytest.raises(ClientError) as refused:
            dynamodb.export_table_to_point_in_time(TableArn=arn, S3Bucket="incremental",
                                                   IncrementalExportSpecification={"ExportFromTime": start})
        assert refused.value.response["Error"]["Message"].startswith("Invalid Request: Export Type expected to be Incremental")
        lines = {}
        for view in ["NEW_AND_OLD_IMAGES", "NEW_IMAGE"]:
            started = dynamodb.export_table_to_point_in_time(
                TableArn=arn, S3Bucket="incremental", S3Prefix=view, ExportType="INCREMENTAL_EXPORT",
                IncrementalExportSpecification={"ExportFromTime": start, "ExportToTime": end, "ExportViewType": view})
            done = finished(dynamodb, started["ExportDescription"]["ExportArn"])
            assert (done["ExportStatus"], done["ExportType"], done["ItemCount"]) == ("COMPLETED", "INCREMENTAL_EXPORT", 3), done
            summary = json.loads(read(s3, "incremental", done["ExportManifest"]))
            assert summary["exportType"] == "INCREMENTAL_EXPORT" and summary["outputView"] == view
            assert summary["exportFromTime"] and summary["exportToTime"]
            lines[view] = {json.loads(line)["Keys"]["pk"]["S"]: json.loads(line) for line in data_lines(s3, "incremental", summary)}
        both = lines["NEW_AND_OLD_IMAGES"]
        assert sorted(both) == ["a1", "a2", "b1"]
        assert both["a1"]["OldImage"]["state"] == {"S": "old"} and both["a1"]["NewImage"]["state"] == {"S": "changed"}
        assert "NewImage" not in both["a2"] and both["a2"]["OldImage"]["state"] == {"S": "old"}
        assert "OldImage" not in both["b1"]
        assert int(both["b1"]["Metadata"]["WriteTimestampMicros"]["N"]) >= int(start.timestamp() * 1_000_000) - 1000
        new_only = lines["NEW_IMAGE"]
        assert set(new_only["a2"]) == {"Metadata", "Keys"}, "a deleted item: its keys alone"
        assert "OldImage" not in new_only["a1"]
    finally:
        process.terminate()
        process.wait(timeout=10)
