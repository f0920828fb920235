"""Smoke test with the other official clients: boto3 and the AWS CLI against a
spawned `ferrodyn serve --in-memory` (the Rust SDK tests live in crates/ferrodyn/tests).

usage: python boto3_and_cli.py PATH_TO_FERRODYN AWS_CLI_PATH
Fails loudly (non-zero exit) on any difference from what DynamoDB answers.
"""
import decimal, json, os, subprocess, sys

import boto3
from botocore.exceptions import ClientError

binary, aws = sys.argv[1], sys.argv[2]
server = subprocess.Popen([binary, "serve", "--in-memory", "--port", "0", "--exit-on-stdin-eof"],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
line = server.stdout.readline()
endpoint = line.split()[3]
env = dict(os.environ, AWS_ACCESS_KEY_ID="x", AWS_SECRET_ACCESS_KEY="y", AWS_DEFAULT_REGION="us-east-1")
os.environ.update(env)


def cli(*args):
    out = subprocess.run([aws, "dynamodb", "--endpoint-url", endpoint, "--output", "json", *args],
                         env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"aws {' '.join(args)} failed: {out.stderr}")
    return json.loads(out.stdout) if out.stdout.strip() else None


def check(condition, what):
    if not condition:
        raise SystemExit(f"FAILED: {what}")
    print(f"ok - {what}")


# The AWS CLI: the commands of the README.
cli("create-table", "--table-name", "users", "--attribute-definitions", "AttributeName=pk,AttributeType=S",
    "--key-schema", "AttributeName=pk,KeyType=HASH", "--billing-mode", "PAY_PER_REQUEST")
cli("put-item", "--table-name", "users", "--item", '{"pk":{"S":"u1"},"n":{"N":"1"}}')
updated = cli("update-item", "--table-name", "users", "--key", '{"pk":{"S":"u1"}}',
              "--update-expression", "SET n = n + :one", "--expression-attribute-values", '{":one":{"N":"1"}}',
              "--return-values", "UPDATED_NEW")
check(updated["Attributes"]["n"] == {"N": "2"}, "aws update-item returns UPDATED_NEW")
got = cli("get-item", "--table-name", "users", "--key", '{"pk":{"S":"u1"}}')
check(got["Item"]["n"] == {"N": "2"}, "aws get-item reads the update")
check(cli("describe-table", "--table-name", "users")["Table"]["ItemCount"] == 1, "aws describe-table counts items")
check(cli("list-tables")["TableNames"] == ["users"], "aws list-tables")
cli("delete-item", "--table-name", "users", "--key", '{"pk":{"S":"u1"}}')
check("Item" not in (cli("get-item", "--table-name", "users", "--key", '{"pk":{"S":"u1"}}') or {}), "aws delete-item")

# boto3: the resource API, sets and decimals, the batch writer, conditions.
table = boto3.resource("dynamodb", endpoint_url=endpoint).Table("users")
table.put_item(Item={"pk": "b1", "tags": {"x", "y"}, "price": decimal.Decimal("19.99")})
item = table.get_item(Key={"pk": "b1"}, ConsistentRead=True)["Item"]
check(item == {"pk": "b1", "tags": {"x", "y"}, "price": decimal.Decimal("19.99")}, "boto3 round-trips sets and decimals")
with table.batch_writer() as batch:
    for i in range(60):
        batch.put_item(Item={"pk": f"k{i}"})
check(table.scan(Select="COUNT")["Count"] == 61, "boto3 batch_writer writes 60 items")
try:
    table.put_item(Item={"pk": "b1"}, ConditionExpression="attribute_not_exists(pk)")
    check(False, "a failed condition raises")
except ClientError as e:
    check(e.response["Error"]["Code"] == "ConditionalCheckFailedException", "boto3 sees ConditionalCheckFailedException")
client = boto3.client("dynamodb", endpoint_url=endpoint)
try:
    client.transact_write_items(TransactItems=[
        {"Put": {"TableName": "users", "Item": {"pk": {"S": "new"}}}},
        {"Put": {"TableName": "users", "Item": {"pk": {"S": "b1"}}, "ConditionExpression": "attribute_not_exists(pk)"}},
    ])
    check(False, "a cancelled transaction raises")
except ClientError as e:
    reasons = [r["Code"] for r in e.response["CancellationReasons"]]
    check(reasons == ["None", "ConditionalCheckFailed"], "boto3 reads CancellationReasons in order")

server.stdin.close()
server.wait(timeout=10)
print("smoke: all ok")
