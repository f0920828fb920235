"""The wheel's pytest plugin as a user meets it: nothing imported from
ferrodyn, fixtures by name only. scripts/package-tests.sh installs the wheel
into a fresh virtual environment and runs this file, also under xdist."""

import datetime

import boto3
import pytest


def create_orders(client, name="orders"):
    client.create_table(
        TableName=name,
        BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
    )


# Two tests creating the same table: each has a namespace of its own.
@pytest.mark.parametrize("run", [1, 2])
def test_each_test_starts_empty_and_owns_its_tables(dynamodb_client, run):
    assert dynamodb_client.list_tables()["TableNames"] == []
    create_orders(dynamodb_client)
    dynamodb_client.put_item(TableName="orders", Item={"id": {"S": f"o{run}"}})
    got = dynamodb_client.get_item(TableName="orders", Key={"id": {"S": f"o{run}"}})
    assert got["Item"]["id"]["S"] == f"o{run}"


def test_sdk_clients_built_from_the_environment_land_in_the_namespace(ferrodyn, dynamodb_client):
    create_orders(dynamodb_client)
    from_env = boto3.client("dynamodb")  # AWS_ENDPOINT_URL_DYNAMODB and the key
    assert from_env.list_tables()["TableNames"] == ["orders"]
    assert ferrodyn.env()["AWS_ACCESS_KEY_ID"] == ferrodyn.access_key


def test_a_snapshot_restores_the_tables_exactly(ferrodyn, dynamodb_resource):
    create_orders(ferrodyn.client())
    table = dynamodb_resource.Table("orders")
    for i in range(100):
        table.put_item(Item={"id": f"o{i}", "n": i})
    assert ferrodyn.snapshot("seeded")["tables"] == 1
    table.delete_item(Key={"id": "o1"})
    table.put_item(Item={"id": "o1000"})
    ferrodyn.restore("seeded")
    items = table.scan()["Items"]
    assert sorted(item["id"] for item in items) == sorted(f"o{i}" for i in range(100))
    assert ferrodyn.reset() == 1
    assert ferrodyn.client().list_tables()["TableNames"] == []


def test_the_clock_makes_ttl_expire_without_waiting(ferrodyn, dynamodb_client):
    create_orders(dynamodb_client)
    dynamodb_client.update_time_to_live(
        TableName="orders",
        TimeToLiveSpecification={"Enabled": True, "AttributeName": "exp"},
    )
    now = ferrodyn.now()
    in_an_hour = int((now + datetime.timedelta(hours=1)).timestamp())
    dynamodb_client.put_item(
        TableName="orders", Item={"id": {"S": "s"}, "exp": {"N": str(in_an_hour)}}
    )
    assert ferrodyn.advance("30m") == 0
    assert ferrodyn.advance(datetime.timedelta(minutes=31)) == 1
    assert "Item" not in dynamodb_client.get_item(TableName="orders", Key={"id": {"S": "s"}})
    assert ferrodyn.now() - now == datetime.timedelta(minutes=61)


def test_faults_last_one_test(ferrodyn, dynamodb_client):
    create_orders(dynamodb_client)
    ferrodyn.faults(["BatchWriteItem=unprocessed@1.0"], seed=1)
    answer = dynamodb_client.batch_write_item(
        RequestItems={"orders": [{"PutRequest": {"Item": {"id": {"S": "x"}}}}]}
    )
    assert len(answer["UnprocessedItems"]["orders"]) == 1


def test_faults_from_the_last_test_are_gone(dynamodb_client):
    create_orders(dynamodb_client)
    answer = dynamodb_client.batch_write_item(
        RequestItems={"orders": [{"PutRequest": {"Item": {"id": {"S": "x"}}}}]}
    )
    assert answer["UnprocessedItems"] == {}
