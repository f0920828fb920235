//! UpdateTable and tagging: asking for the throughput a table or index
//! already has, no-op updates, and malformed ARNs, in AWS's words.

use crate::util::{self, attr_def, key, raw};
use aws_sdk_dynamodb::types::{KeyType, ScalarAttributeType};

#[tokio::test]
async fn asking_for_the_throughput_a_table_has_is_refused() {
    let client = util::client();
    let name = util::unique_name("samept");
    let throughput = aws_sdk_dynamodb::types::ProvisionedThroughput::builder()
        .read_capacity_units(2)
        .write_capacity_units(3)
        .build()
        .unwrap();
    client
        .create_table()
        .table_name(&name)
        .key_schema(key("p", KeyType::Hash))
        .attribute_definitions(attr_def("p", ScalarAttributeType::S))
        .provisioned_throughput(throughput.clone())
        .send()
        .await
        .unwrap();
    let result = client
        .update_table()
        .table_name(&name)
        .provisioned_throughput(throughput)
        .send()
        .await;
    util::assert_validation(
        result,
        "The provisioned throughput for the table will not change. The requested value equals the current value. Current ReadCapacityUnits provisioned for the table: 2. Requested ReadCapacityUnits: 2. Current WriteCapacityUnits provisioned for the table: 3. Requested WriteCapacityUnits: 3. Refer to the Amazon DynamoDB Developer Guide for current limits and how to request higher limits.",
    );
}

#[tokio::test]
async fn asking_for_the_throughput_an_index_has_or_provisioned_mode_alone_is_refused() {
    // Recorded against AWS (ack-api-quirks DDB-TABLE-164, 2026-10-08).
    let response = raw::call_json(
        "CreateTable",
        serde_json::json!({
            "TableName": util::unique_name("samegsi"),
            "KeySchema": [{"AttributeName": "p", "KeyType": "HASH"}],
            "AttributeDefinitions": [
                {"AttributeName": "p", "AttributeType": "S"},
                {"AttributeName": "x", "AttributeType": "S"}
            ],
            "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
            "GlobalSecondaryIndexes": [{
                "IndexName": "gsi1",
                "KeySchema": [{"AttributeName": "x", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
                "ProvisionedThroughput": {"ReadCapacityUnits": 2, "WriteCapacityUnits": 2}
            }]
        }),
    )
    .await;
    let name = response.json()["TableDescription"]["TableName"]
        .as_str()
        .unwrap()
        .to_string();
    let update = |index_throughput: (u64, u64)| {
        raw::call_json(
            "UpdateTable",
            serde_json::json!({"TableName": name, "GlobalSecondaryIndexUpdates": [{"Update": {
                "IndexName": "gsi1",
                "ProvisionedThroughput": {
                    "ReadCapacityUnits": index_throughput.0,
                    "WriteCapacityUnits": index_throughput.1
                }
            }}]}),
        )
    };
    let same = update((2, 2)).await;
    assert_eq!(same.status, 400);
    assert_eq!(
        same.json()["message"],
        "The provisioned throughput for the index gsi1 will not change. The requested value equals the current value. Current ReadCapacityUnits provisioned for index gsi1: 2. Requested ReadCapacityUnits: 2. Current WriteCapacityUnits provisioned for index gsi1: 2. Requested WriteCapacityUnits: 2. Refer to the Amazon DynamoDB Developer Guide for current limits and how to request higher limits."
    );
    // Changing one of the two is accepted.
    assert_eq!(update((2, 3)).await.status, 200);
    let ghost = raw::call_json(
        "UpdateTable",
        serde_json::json!({"TableName": name, "GlobalSecondaryIndexUpdates": [{"Update": {
            "IndexName": "ghost",
            "ProvisionedThroughput": {"ReadCapacityUnits": 2, "WriteCapacityUnits": 2}
        }}]}),
    )
    .await;
    assert_eq!(
        ghost.json()["message"],
        format!("Requested resource not found: Index ghost for table {name}")
    );
    let alone = raw::call_json(
        "UpdateTable",
        serde_json::json!({"TableName": name, "BillingMode": "PROVISIONED"}),
    )
    .await;
    assert_eq!(alone.status, 400);
    assert_eq!(
        alone.json()["message"],
        "One or more parameter values were invalid: ProvisionedThroughput must be specified when BillingMode is PROVISIONED"
    );
    // On demand, an index's provisioned throughput cannot be updated.
    let on_demand = raw::call_json(
        "UpdateTable",
        serde_json::json!({"TableName": name, "BillingMode": "PAY_PER_REQUEST"}),
    )
    .await;
    assert_eq!(on_demand.status, 200, "{:?}", on_demand.json());
    assert_eq!(
        update((3, 3)).await.json()["message"],
        "One or more parameter values were invalid: The only Updates for index: gsi1 when TableThroughputMode is PAY_PER_REQUEST can be to OnDemandThroughput, WarmThroughput"
    );
}

#[tokio::test]
async fn no_op_table_updates_are_refused_in_aws_words() {
    // Recorded live against AWS in 2026-10 (ack-api-quirks DDB-TABLE-442).
    let client = util::client();
    let table = util::table_s(&client).await;
    let call = |op: &'static str, body: serde_json::Value| raw::call_json(op, body);
    let message = |r: &raw::Response| r.json()["message"].as_str().unwrap_or("").to_string();
    let nothing = call("UpdateTable", serde_json::json!({"TableName": table})).await;
    assert_eq!(
        message(&nothing),
        "At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, GlobalSecondaryIndexUpdates, SSESpecification, ReplicaUpdates, MultiAccountReplicaReady, ReplicaTransitRoleArn, MultiRegionConsistency, DeletionProtectionEnabled, OnDemandThroughput, WarmThroughput or TableClass is required"
    );
    let no_stream = call(
        "UpdateTable",
        serde_json::json!({"TableName": table, "StreamSpecification": {"StreamEnabled": false}}),
    )
    .await;
    assert_eq!(
        message(&no_stream),
        format!("Table has no stream to disable: TableName: {table}")
    );
    let enable = serde_json::json!({"TableName": table, "StreamSpecification": {
        "StreamEnabled": true, "StreamViewType": "KEYS_ONLY"}});
    assert_eq!(call("UpdateTable", enable.clone()).await.status, 200);
    assert_eq!(
        message(&call("UpdateTable", enable).await),
        format!("Table already has an enabled stream: TableName: {table}")
    );
    let ttl = |attribute: &str, enabled: bool| {
        call(
            "UpdateTimeToLive",
            serde_json::json!({"TableName": table, "TimeToLiveSpecification": {
                "AttributeName": attribute, "Enabled": enabled}}),
        )
    };
    assert_eq!(
        message(&ttl("exp", false).await),
        "TimeToLive is already disabled"
    );
    assert_eq!(ttl("exp", true).await.status, 200);
    assert_eq!(
        message(&ttl("exp", true).await),
        "TimeToLive is already enabled"
    );
    let other = "TimeToLive is active on a different AttributeName: current AttributeName is exp";
    assert_eq!(message(&ttl("other", true).await), other);
    assert_eq!(message(&ttl("other", false).await), other);
}

#[tokio::test]
async fn tagging_a_malformed_arn_is_a_validation_error() {
    let client = util::client();
    let tag = aws_sdk_dynamodb::types::Tag::builder()
        .key("k")
        .value("v")
        .build()
        .unwrap();
    util::assert_validation(
        client
            .tag_resource()
            .resource_arn("I_do_not_exist")
            .tags(tag)
            .send()
            .await,
        "One or more parameter values were invalid: ARNs must start with 'arn:': I_do_not_exist",
    );
    let arn = |table: &str| format!("arn:aws:dynamodb:us-east-1:000000000000:table/{table}");
    let table = util::table_s(&client).await;
    let empty_tags = raw::call_json(
        "TagResource",
        serde_json::json!({"ResourceArn": arn(&table), "Tags": []}),
    )
    .await;
    assert_eq!(
        empty_tags.json()["message"],
        "Atleast one Tag needs to be provided as Input."
    );
    let empty_keys = raw::call_json(
        "UntagResource",
        serde_json::json!({"ResourceArn": arn(&table), "TagKeys": []}),
    )
    .await;
    assert_eq!(
        empty_keys.json()["message"],
        "Atleast one Tag Key needs to be provided as Input."
    );
}

#[tokio::test]
async fn switching_to_provisioned_gives_every_index_its_throughput_in_the_same_call() {
    let name = util::unique_name("switchgsi");
    let created = raw::call_json(
        "CreateTable",
        serde_json::json!({
            "TableName": name,
            "BillingMode": "PAY_PER_REQUEST",
            "KeySchema": [{"AttributeName": "p", "KeyType": "HASH"}],
            "AttributeDefinitions": [
                {"AttributeName": "p", "AttributeType": "S"},
                {"AttributeName": "x", "AttributeType": "S"}
            ],
            "GlobalSecondaryIndexes": [{
                "IndexName": "gsi1",
                "KeySchema": [{"AttributeName": "x", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"}
            }]
        }),
    )
    .await;
    assert_eq!(created.status, 200, "{:?}", created.json());
    let units =
        |r: u64, w: u64| serde_json::json!({"ReadCapacityUnits": r, "WriteCapacityUnits": w});
    let switch = |indexes: serde_json::Value| {
        let mut body = serde_json::json!({"TableName": name, "BillingMode": "PROVISIONED", "ProvisionedThroughput": units(4, 5)});
        if !indexes.is_null() {
            body["GlobalSecondaryIndexUpdates"] = indexes;
        }
        raw::call_json("UpdateTable", body)
    };
    // Without the index's throughput the switch is refused, not half made.
    let alone = switch(serde_json::Value::Null).await;
    assert_eq!(alone.status, 400);
    assert_eq!(
        alone.json()["message"],
        "One or more parameter values were invalid: ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is PROVISIONED (for index gsi1)"
    );
    let unknown = switch(serde_json::json!([{"Update": {"IndexName": "nope", "ProvisionedThroughput": units(1, 1)}}])).await;
    assert_eq!(unknown.status, 400);
    assert!(unknown.json()["__type"]
        .as_str()
        .unwrap()
        .ends_with("ResourceNotFoundException"));
    let both = switch(serde_json::json!([{"Update": {"IndexName": "gsi1", "ProvisionedThroughput": units(2, 3)}}])).await;
    assert_eq!(both.status, 200, "{:?}", both.json());
    let table = util::client()
        .describe_table()
        .table_name(&name)
        .send()
        .await
        .unwrap()
        .table
        .unwrap();
    assert_eq!(
        table
            .billing_mode_summary
            .unwrap()
            .billing_mode
            .unwrap()
            .as_str(),
        "PROVISIONED"
    );
    let t = table.provisioned_throughput.unwrap();
    assert_eq!(
        (t.read_capacity_units, t.write_capacity_units),
        (Some(4), Some(5))
    );
    let g = table.global_secondary_indexes.unwrap()[0]
        .provisioned_throughput
        .clone()
        .unwrap();
    assert_eq!(
        (g.read_capacity_units, g.write_capacity_units),
        (Some(2), Some(3))
    );
    // An index Create or Delete with a capacity change is refused by name.
    let create = raw::call_json(
        "UpdateTable",
        serde_json::json!({"TableName": name, "BillingMode": "PAY_PER_REQUEST",
            "GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": "gsi1"}}]}),
    )
    .await;
    assert_eq!(create.status, 400);
    assert!(create.json()["message"]
        .as_str()
        .unwrap()
        .contains("as two UpdateTable calls"));
    // Back to on demand: the index's units go to zero with the table's.
    let back = raw::call_json(
        "UpdateTable",
        serde_json::json!({"TableName": name, "BillingMode": "PAY_PER_REQUEST"}),
    )
    .await;
    assert_eq!(back.status, 200, "{:?}", back.json());
    let gsi =
        &back.json()["TableDescription"]["GlobalSecondaryIndexes"][0]["ProvisionedThroughput"];
    assert_eq!(
        (
            gsi["ReadCapacityUnits"].as_u64(),
            gsi["WriteCapacityUnits"].as_u64()
        ),
        (Some(0), Some(0))
    );
}
