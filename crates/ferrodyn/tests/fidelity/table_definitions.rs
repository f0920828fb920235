//! CreateTable's schema checks: index projections, unused attribute
//! definitions (and the leniency flag that drops them as DynamoDB Local does),
//! and a table keyed twice by one attribute.

use crate::util::{self, attr_def, key, raw};
use aws_sdk_dynamodb::types::{KeyType, ScalarAttributeType};

#[tokio::test]
async fn an_index_projection_without_a_type_is_refused() {
    // AWS: "Unknown ProjectionType: null" (ScyllaDB's
    // test_gsi_missing_projection_type), although the API reference calls
    // ProjectionType optional.
    let response = raw::call_json(
        "CreateTable",
        serde_json::json!({
            "TableName": util::unique_name("noproj"),
            "BillingMode": "PAY_PER_REQUEST",
            "KeySchema": [{"AttributeName": "p", "KeyType": "HASH"}],
            "AttributeDefinitions": [{"AttributeName": "p", "AttributeType": "S"}],
            "GlobalSecondaryIndexes": [{
                "IndexName": "gsi",
                "KeySchema": [{"AttributeName": "p", "KeyType": "HASH"}],
                "Projection": {}
            }]
        }),
    )
    .await;
    assert_eq!(response.status, 400);
    assert_eq!(response.error_name(), "ValidationException");
    assert_eq!(response.json()["message"], "Unknown ProjectionType: null");
}

#[tokio::test]
async fn duplicate_non_key_attributes_in_a_projection_are_refused() {
    let response = raw::call_json(
        "CreateTable",
        serde_json::json!({
            "TableName": util::unique_name("dupproj"),
            "BillingMode": "PAY_PER_REQUEST",
            "KeySchema": [{"AttributeName": "p", "KeyType": "HASH"}],
            "AttributeDefinitions": [
                {"AttributeName": "p", "AttributeType": "S"},
                {"AttributeName": "x", "AttributeType": "S"}
            ],
            "GlobalSecondaryIndexes": [{
                "IndexName": "gsi",
                "KeySchema": [{"AttributeName": "x", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["a", "a"]}
            }]
        }),
    )
    .await;
    assert_eq!(response.status, 400);
    assert_eq!(
        response.json()["message"],
        "One or more parameter values were invalid: Duplicate attribute name in NonKeyAttributes of index gsi: a"
    );
}

#[tokio::test]
async fn unused_attribute_definitions_beside_indexes_are_listed() {
    // AWS refuses definitions no key uses (moto's
    // test_create_table_with_redundant_attributes). DynamoDB Local accepts
    // them, and PynamoDB's integration tests (test_connection_integration,
    // test_table_integration) define an unused `number` beside their
    // indexes: those two tests fail here as they would on AWS.
    let response = raw::call_json(
        "CreateTable",
        serde_json::json!({
            "TableName": util::unique_name("unused"),
            "BillingMode": "PAY_PER_REQUEST",
            "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
            "AttributeDefinitions": [
                {"AttributeName": "id", "AttributeType": "S"},
                {"AttributeName": "user", "AttributeType": "S"},
                {"AttributeName": "created_at", "AttributeType": "N"}
            ],
            "GlobalSecondaryIndexes": [{
                "IndexName": "gsi_user-items",
                "KeySchema": [{"AttributeName": "user", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"}
            }]
        }),
    )
    .await;
    assert_eq!(response.status, 400);
    assert_eq!(
        response.json()["message"],
        "One or more parameter values were invalid: Some AttributeDefinitions are not used. AttributeDefinitions: [created_at, id, user], keys used: [id, user]"
    );
}

#[tokio::test]
async fn the_leniency_flag_drops_unused_definitions_as_dynamodb_local_does() {
    // PynamoDB's and ElectroDB's test setups declare attributes no key uses
    // (DynamoDB Local accepts them); --accept-unused-attribute-definitions
    // lets such a setup run here. The table is created without them.
    util::needs_own_server();
    let server =
        util::ServerProcess::spawn(&["--in-memory", "--accept-unused-attribute-definitions"]);
    let client = util::client_for(server.endpoint());
    let name = util::unique_name("lenient");
    client
        .create_table()
        .table_name(&name)
        .billing_mode(aws_sdk_dynamodb::types::BillingMode::PayPerRequest)
        .key_schema(key("id", KeyType::Hash))
        .attribute_definitions(attr_def("id", ScalarAttributeType::S))
        .attribute_definitions(attr_def("number", ScalarAttributeType::N))
        .send()
        .await
        .unwrap();
    let table = client
        .describe_table()
        .table_name(&name)
        .send()
        .await
        .unwrap();
    let defined: Vec<&str> = table
        .table()
        .unwrap()
        .attribute_definitions()
        .iter()
        .map(|d| d.attribute_name())
        .collect();
    assert_eq!(defined, vec!["id"]);
    server.terminate();
}

#[tokio::test]
async fn a_table_keyed_twice_by_one_attribute_is_refused_in_aws_words() {
    // The AWS-verified dynamodb-conformance suite (2026),
    // tier3/error-messages/createTable.test.ts.
    assert_eq!(
        super::message_of(
            "CreateTable",
            serde_json::json!({"TableName": util::unique_name("twice"),
                "BillingMode": "PAY_PER_REQUEST",
                "KeySchema": [{"AttributeName": "p", "KeyType": "HASH"},
                    {"AttributeName": "p", "KeyType": "RANGE"}],
                "AttributeDefinitions": [{"AttributeName": "p", "AttributeType": "S"}]}),
        )
        .await,
        "Invalid KeySchema: Some index key attribute have no definition"
    );
    // Three elements: echoed as AWS prints key elements.
    assert_eq!(
        super::message_of(
            "CreateTable",
            serde_json::json!({"TableName": util::unique_name("three"),
                "BillingMode": "PAY_PER_REQUEST",
                "KeySchema": [{"AttributeName": "p", "KeyType": "HASH"},
                    {"AttributeName": "s", "KeyType": "RANGE"},
                    {"AttributeName": "x", "KeyType": "RANGE"}],
                "AttributeDefinitions": [{"AttributeName": "p", "AttributeType": "S"},
                    {"AttributeName": "s", "AttributeType": "S"},
                    {"AttributeName": "x", "AttributeType": "S"}]}),
        )
        .await,
        "1 validation error detected: Value '[KeySchemaElement(attributeName=p, keyType=HASH), KeySchemaElement(attributeName=s, keyType=RANGE), KeySchemaElement(attributeName=x, keyType=RANGE)]' at 'keySchema' failed to satisfy constraint: Member must have length less than or equal to 2"
    );
}
