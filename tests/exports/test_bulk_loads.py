"""Bulk puts from a real S3-compatible server (moto's) into existing tables:
StartBulkPutItems through the write path (indexes kept), per-item
conditions and their report, a bad unit abandoning the rest of its object,
MaxWriteRequestUnits as a rate, cancellation, ClientToken, paging, the
refusals, and a kill -9 in the middle. Run by scripts/s3-tests.sh."""

import gzip
import json
import subprocess
import time
import urllib.request

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from test_exports import BINARY, KEYS, clients, creation, ferrodyn, free_port, moto, scanned, wait_listening  # noqa: F401


def line(pk, **extra):
    unit = {"Item": {"pk": {"S": pk}, "n": {"N": str(len(pk))}, "body": {"S": "x" * 10}}}
    unit.update(extra)
    return json.dumps(unit) + "\n"


def upload(s3, bucket, key, lines, compress=False):
    body = "".join(lines).encode()
    s3.put_object(Bucket=bucket, Key=key, Body=gzip.compress(body) if compress else body)
    return len(gzip.compress(body)) if compress else len(body)


def start(dynamodb, table, bucket, prefix, **options):
    request = dict(TableName=table, InputS3Configuration={"S3Bucket": bucket, "S3KeyPrefix": prefix, "InputFormat": "DYNAMODB_JSON"},
                   OutputS3Configuration={"S3Bucket": bucket, "S3KeyPrefix": "reports", "OutputType": ["ERROR", "CONDITION_CHECK_FAILURE"]})
    request.update(options)
    return dynamodb.start_bulk_put_items(**request)["BulkOperationDescription"]


def ended(dynamodb, arn, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        description = dynamodb.describe_bulk_operation(BulkOperationArn=arn)["BulkOperationDescription"]
        if description["BulkOperationStatus"] not in ("IN_PROGRESS", "CANCELLING"):
            return description
        time.sleep(0.05)
    raise AssertionError(f"bulk operation {arn} still running after {timeout} s")


def report_lines(s3, bucket, arn, kind):
    folder = f"reports/AWSDynamoDB/BulkOperation/{arn.rsplit('/', 1)[1]}/{kind}/"
    listed = s3.list_objects_v2(Bucket=bucket, Prefix=folder).get("Contents", [])
    return [json.loads(text) for o in listed
            for text in s3.get_object(Bucket=bucket, Key=o["Key"])["Body"].read().decode().splitlines()]


def test_a_bulk_put_writes_every_object_into_the_table_and_its_index(clients):
    dynamodb, s3, bucket = clients
    dynamodb.create_table(**creation("bulk_target", gsi=True))
    dynamodb.put_item(TableName="bulk_target", Item={"pk": {"S": "p0001"}, "old": {"S": "replaced"}})
    sizes = [upload(s3, bucket, f"in/part-{part}.json.gz", [line(f"p{part}{i:03}") for i in range(100)], compress=True)
             for part in range(3)]
    started = start(dynamodb, "bulk_target", bucket, "in/", InputS3Configuration={
        "S3Bucket": bucket, "S3KeyPrefix": "in/", "InputFormat": "DYNAMODB_JSON", "InputCompressionType": "GZIP"})
    table = dynamodb.describe_table(TableName="bulk_target")["Table"]
    assert started["BulkOperationStatus"] == "IN_PROGRESS"
    assert started["BulkOperationArn"].startswith(table["TableArn"] + "/bulk-operation/")
    assert started["TableDetails"] == [{"TableName": "bulk_target", "TableId": table["TableId"]}]
    assert started["PerformanceTier"] == "STANDARD" and started["InputS3Configuration"]["InputCompressionType"] == "GZIP"
    done = ended(dynamodb, started["BulkOperationArn"])
    assert done["BulkOperationStatus"] == "COMPLETED", done
    assert (done["ProcessedItemCount"], done["FailedItemCount"]) == (300, 0)
    assert done["ProcessedInputBytes"] == done["TotalInputBytes"] == sum(sizes)
    usage = done["BulkOperationUsage"][0]
    assert usage["BulkPutBytes"] == usage["Table"]["BulkPutBytes"] == 300 * (2 + 5 + 1 + 2 + 4 + 10)
    assert usage["GlobalSecondaryIndexes"]["by_n"]["BulkPutBytes"] == usage["BulkPutBytes"]
    items = scanned(dynamodb, "bulk_target")
    assert len(items) == 300 and "old" not in items[1] and items[1]["pk"]["S"] == "p0001"
    by_n = dynamodb.query(TableName="bulk_target", IndexName="by_n", KeyConditionExpression="n = :n",
                          ExpressionAttributeValues={":n": {"N": "5"}})
    assert by_n["Count"] == 300
    assert report_lines(s3, bucket, done["BulkOperationArn"], "errors") == []
    usage = urllib.request.urlopen(dynamodb.meta.endpoint_url + "/ferrodyn/usage").read().decode()
    assert "StartBulkPutItems" in usage


def test_conditions_are_checked_against_the_stored_item_and_reported(clients):
    dynamodb, s3, bucket = clients
    dynamodb.create_table(**creation("bulk_conditions"))
    dynamodb.put_item(TableName="bulk_conditions", Item={"pk": {"S": "taken"}, "v": {"N": "1"}})
    absent = dict(ConditionExpression="attribute_not_exists(pk)")
    upload(s3, bucket, "cond/a.json", [
        line("taken", **absent),
        line("free", **absent),
        line("versioned", ConditionExpression="attribute_not_exists(#v) OR #v < :v",
             ExpressionAttributeNames={"#v": "v"}, ExpressionAttributeValues={":v": {"N": "2"}}),
        line("unused", ConditionExpression="attribute_not_exists(pk)", ExpressionAttributeValues={":x": {"S": "y"}}),
        line("after"),
    ])
    done = ended(dynamodb, start(dynamodb, "bulk_conditions", bucket, "cond/")["BulkOperationArn"])
    # A failed condition is processed, not failed; the unused value is a failed item.
    assert (done["BulkOperationStatus"], done["ProcessedItemCount"], done["FailedItemCount"]) == ("COMPLETED_WITH_ERRORS", 5, 1)
    assert {i["pk"]["S"] for i in scanned(dynamodb, "bulk_conditions")} == {"taken", "free", "versioned", "after"}
    assert dynamodb.get_item(TableName="bulk_conditions", Key={"pk": {"S": "taken"}})["Item"]["v"] == {"N": "1"}
    failures = report_lines(s3, bucket, done["BulkOperationArn"], "condition-check-failures")
    assert [(f["Item"]["pk"], f["ExistingItem"], f["InputObjectKey"]) for f in failures] == [
        ({"S": "taken"}, {"pk": {"S": "taken"}, "v": {"N": "1"}}, "cond/a.json")]
    errors = report_lines(s3, bucket, done["BulkOperationArn"], "errors")
    assert len(errors) == 1 and "unused" in errors[0]["Error"] and errors[0]["Record"]["Item"]["pk"] == {"S": "unused"}, errors


def test_a_bad_unit_abandons_the_rest_of_its_object_only(clients):
    dynamodb, s3, bucket = clients
    dynamodb.create_table(**creation("bulk_bad"))
    upload(s3, bucket, "bad/1.json", [line("a1"), line("a2"), '{"Item": {"other": {"S": "no key"}}}\n', line("a4")])
    upload(s3, bucket, "bad/2.json", [line("b1"), "not json at all\n"])
    upload(s3, bucket, "bad/3.json", [line("c1"), line("c2")])
    done = ended(dynamodb, start(dynamodb, "bulk_bad", bucket, "bad/")["BulkOperationArn"])
    assert (done["BulkOperationStatus"], done["ProcessedItemCount"], done["FailedItemCount"]) == ("COMPLETED_WITH_ERRORS", 7, 2)
    assert {i["pk"]["S"] for i in scanned(dynamodb, "bulk_bad")} == {"a1", "a2", "b1", "c1", "c2"}
    errors = report_lines(s3, bucket, done["BulkOperationArn"], "errors")
    assert sorted(e["InputObjectKey"] for e in errors) == ["bad/1.json", "bad/2.json"]


def test_max_write_request_units_paces_and_cancel_keeps_what_was_written(clients):
    dynamodb, s3, bucket = clients
    dynamodb.create_table(**creation("bulk_paced"))
    upload(s3, bucket, "paced/all.json", [line(f"k{i:05}") for i in range(3000)])
    paced = start(dynamodb, "bulk_paced", bucket, "paced/", MaxWriteRequestUnits=1024)
    assert paced["MaxWriteRequestUnits"] == 1024
    done = ended(dynamodb, paced["BulkOperationArn"])
    assert (done["BulkOperationStatus"], done["ProcessedItemCount"]) == ("COMPLETED", 3000)
    # 3,000 one-unit writes at 1,024 units a second take close to three seconds.
    assert (done["EndTime"] - done["StartTime"]).total_seconds() >= 2.5, done

    dynamodb.create_table(**creation("bulk_cancelled"))
    running = start(dynamodb, "bulk_cancelled", bucket, "paced/", MaxWriteRequestUnits=1024)["BulkOperationArn"]
    time.sleep(0.8)
    midway = dynamodb.describe_bulk_operation(BulkOperationArn=running)["BulkOperationDescription"]
    assert midway["ProcessedItemCount"] > 0
    # One object: the bytes processed follow the units read within it.
    assert 0 < midway["ProcessedInputBytes"] < midway["TotalInputBytes"], midway
    cancelled = dynamodb.cancel_bulk_operation(BulkOperationArn=running)
    assert (cancelled["BulkOperationArn"], cancelled["BulkOperationStatus"]) == (running, "CANCELLING")
    done = ended(dynamodb, running)
    assert done["BulkOperationStatus"] == "CANCELLED" and 0 < done["ProcessedItemCount"] < 3000, done
    assert dynamodb.describe_table(TableName="bulk_cancelled")["Table"]["ItemCount"] == done["ProcessedItemCount"]
    again = dynamodb.cancel_bulk_operation(BulkOperationArn=running)
    assert again["BulkOperationStatus"] == "CANCELLED"


def test_client_tokens_listing_and_refusals(clients):
    dynamodb, s3, bucket = clients
    dynamodb.create_table(**creation("bulk_listed"))
    upload(s3, bucket, "few/one.json", [line("only")])
    first = start(dynamodb, "bulk_listed", bucket, "few/", ClientToken="token-1")
    assert start(dynamodb, "bulk_listed", bucket, "few/", ClientToken="token-1")["BulkOperationArn"] == first["BulkOperationArn"]
    with pytest.raises(ClientError) as mismatch:
        start(dynamodb, "bulk_listed", bucket, "other/", ClientToken="token-1")
    assert mismatch.value.response["Error"]["Code"] == "IdempotentParameterMismatchException"
    arns = [start(dynamodb, "bulk_listed", bucket, "few/")["BulkOperationArn"] for _ in range(3)]
    page = dynamodb.list_bulk_operations(MaxResults=2)
    assert [s["BulkOperationArn"] for s in page["BulkOperationsSummaryList"]] == [arns[2], arns[1]]
    assert len(page["NextToken"]) == 16
    rest = dynamodb.list_bulk_operations(MaxResults=25, NextToken=page["NextToken"])["BulkOperationsSummaryList"]
    assert [s["BulkOperationArn"] for s in rest][:2] == [arns[0], first["BulkOperationArn"]]

    unchecked = boto3.client("dynamodb", endpoint_url=dynamodb.meta.endpoint_url, config=Config(parameter_validation=False), **KEYS)

    def refused(code, text, **request):
        with pytest.raises(ClientError) as error:
            start(unchecked, **request)
        assert error.value.response["Error"]["Code"] == code
        assert text in error.value.response["Error"]["Message"], error.value.response["Error"]["Message"]

    refused("ValidationException", "Member must have value greater than or equal to 1024",
            table="bulk_listed", bucket=bucket, prefix="few/", MaxWriteRequestUnits=10)
    refused("ResourceNotFoundException", "Table: no_such_table not found", table="no_such_table", bucket=bucket, prefix="few/")
    refused("ValidationException", "Member must satisfy regular expression pattern",
            table="bulk_listed", bucket="-bad-", prefix="few/")
    with pytest.raises(ClientError) as missing:
        dynamodb.describe_bulk_operation(BulkOperationArn=first["BulkOperationArn"][:-4] + "ffff")
    assert missing.value.response["Error"]["Code"] == "ResourceNotFoundException"


def test_a_missing_bucket_fails_the_operation_saying_why(clients):
    dynamodb, _, bucket = clients
    dynamodb.create_table(**creation("bulk_nowhere"))
    done = ended(dynamodb, start(dynamodb, "bulk_nowhere", "no-such-bucket-here", "x/",
                                 OutputS3Configuration={"OutputType": ["ERROR"]})["BulkOperationArn"])
    assert done["BulkOperationStatus"] == "FAILED" and done["FailureCode"] == "S3NoSuchBucket", done


def test_ten_kill_9_cycles_in_the_middle_resume_and_lose_nothing(moto, tmp_path):
    """kill -9 ten times while a paced bulk put runs (progress is saved per
    object): after the last restart it completes with every item, counted
    once."""
    s3 = boto3.client("s3", endpoint_url=moto, **KEYS)
    s3.create_bucket(Bucket="bulk-resume")
    for part in range(24):  # a quarter of a second each at 1,024 units a second
        upload(s3, "bulk-resume", f"r/{part:02}.json", [line(f"r{part:02}-{i:03}") for i in range(256)])
    data_dir = str(tmp_path / "data")

    def serve():
        port = free_port()
        process = subprocess.Popen([str(BINARY), "serve", "--data-dir", data_dir, "--port", str(port), "--console", "off",
                                    "--s3-endpoint", moto], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_listening(port, process)
        return process, boto3.client("dynamodb", endpoint_url=f"http://127.0.0.1:{port}", **KEYS)

    process, dynamodb = serve()
    try:
        dynamodb.create_table(**creation("bulk_resumed"))
        arn = start(dynamodb, "bulk_resumed", "bulk-resume", "r/", MaxWriteRequestUnits=1024)["BulkOperationArn"]
        processed = 0
        for cycle in range(10):
            time.sleep(0.3 + 0.05 * (cycle % 5))
            midway = dynamodb.describe_bulk_operation(BulkOperationArn=arn)["BulkOperationDescription"]
            assert midway["BulkOperationStatus"] == "IN_PROGRESS", (cycle, midway)
            processed = max(processed, midway["ProcessedItemCount"])
            process.kill()
            process.wait()
            process, dynamodb = serve()
        assert 0 < processed
        done = ended(dynamodb, arn)
        assert done["BulkOperationStatus"] == "COMPLETED" and done["ProcessedItemCount"] == 6144, done
        assert dynamodb.describe_table(TableName="bulk_resumed")["Table"]["ItemCount"] == 6144
        assert len(scanned(dynamodb, "bulk_resumed")) == 6144
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_the_cli_puts_lists_describes_and_cancels(clients, ferrodyn):
    dynamodb, s3, bucket = clients
    dynamodb.create_table(**creation("bulk_cli"))
    upload(s3, bucket, "cli/items.json.gz", [line(f"c{i:03}") for i in range(40)], compress=True)

    def cli(*args, ok=True):
        result = subprocess.run([str(BINARY), "s3", *args, "--endpoint-url", ferrodyn, "-o", "json"], capture_output=True, text=True)
        assert (result.returncode == 0) == ok, result.stderr
        return json.loads(result.stdout) if ok else result.stderr

    done = cli("put", "bulk_cli", "--bucket", bucket, "--prefix", "cli/", "--compression", "gzip", "--max-units", "1024", "--wait")
    assert (done["BulkOperationStatus"], done["ProcessedItemCount"], done["MaxWriteRequestUnits"]) == ("COMPLETED", 40, 1024)
    assert len(scanned(dynamodb, "bulk_cli")) == 40
    assert cli("describe", done["BulkOperationArn"])["BulkOperationStatus"] == "COMPLETED"
    listed = cli("list", "bulk_cli")["Jobs"]
    assert [j["BulkOperationArn"] for j in listed] == [done["BulkOperationArn"]]
    assert cli("cancel", done["BulkOperationArn"])["BulkOperationStatus"] == "COMPLETED"
    assert "Member must have value greater than or equal to 1024" in cli("put", "bulk_cli", "--bucket", bucket, "--max-units", "5", ok=False)


def test_ion_input_puts_items_and_checks_conditions(clients):
    dynamodb, s3, bucket = clients
    dynamodb.create_table(**creation("bulk_ion"))
    dynamodb.put_item(TableName="bulk_ion", Item={"pk": {"S": "taken"}, "v": {"N": "5"}})
    s3.put_object(Bucket=bucket, Key="ion/part.ion", Body=gzip.compress(b"""$ion_1_0
{Item:{pk:"i1", n:1.50, tags:$dynamodb_SS::["a","b"], raw:{{aGk=}}, deep:{l:[true, null]}}}
{Item:{pk:"i2"}, ConditionExpression:"attribute_not_exists(pk)"}
{Item:{pk:"taken", v:1}, ConditionExpression:"#v < :v", ExpressionAttributeNames:{'#v':"v"}, ExpressionAttributeValues:{':v':3}}
{Item:{pk:"bad"}, ConditionExpression:sym}
{Item:{pk:"i3"}}
"""))
    done = ended(dynamodb, start(dynamodb, "bulk_ion", bucket, "ion/", InputS3Configuration={
        "S3Bucket": bucket, "S3KeyPrefix": "ion/", "InputFormat": "ION", "InputCompressionType": "GZIP"})["BulkOperationArn"])
    assert (done["BulkOperationStatus"], done["ProcessedItemCount"], done["FailedItemCount"]) == ("COMPLETED_WITH_ERRORS", 5, 1), done
    items = {i["pk"]["S"]: i for i in scanned(dynamodb, "bulk_ion")}
    assert set(items) == {"i1", "i2", "i3", "taken"}
    assert items["i1"] == {"pk": {"S": "i1"}, "n": {"N": "1.5"}, "tags": {"SS": ["a", "b"]}, "raw": {"B": b"hi"},
                           "deep": {"M": {"l": {"L": [{"BOOL": True}, {"NULL": True}]}}}}
    assert items["taken"]["v"] == {"N": "5"}
    failures = report_lines(s3, bucket, done["BulkOperationArn"], "condition-check-failures")
    assert [f["Item"]["pk"]["S"] for f in failures] == ["taken"]
