//! A null member in a string, number or binary set (`{"SS": ["a", null]}`):
//! DynamoDB reads the request and refuses it with a ValidationException in
//! every place an attribute value can appear, never a SerializationException.
//! Sentences from DynamoDB Local 2026-01-16 (SS, NS) and AWS (BS, where
//! DynamoDB Local fails internally); see CONFORMANCE.md.

use serde_json::{json, Value};

use super::message_of;
use crate::util::{self, raw};

const SS: &str = "One or more parameter values were invalid: An string set may not have a null string as a member";
const NS: &str = "A value provided cannot be converted into a number";
const BS: &str = "One or more parameter values were invalid: An AttributeValue may not contain a null or empty binary type.";

/// Each set type with a null member, and the sentence DynamoDB answers.
fn null_sets() -> [(Value, &'static str); 3] {
    [
        (json!({"SS": ["a", null]}), SS),
        (json!({"NS": ["1", null]}), NS),
        (json!({"BS": ["AQ==", null]}), BS),
    ]
}

/// Every request shape that carries an attribute value, with `v` placed in
/// it, and whether DynamoDB names the expression placeholder in its answer.
fn requests(table: &str, v: &Value) -> Vec<(&'static str, Value, bool)> {
    let item = json!({"p": {"S": "k"}, "x": v});
    let nested = json!({"p": {"S": "k"}, "x": {"L": [{"M": {"y": v}}]}});
    let condition = json!({":v": v});
    vec![
        ("PutItem", json!({"TableName": table, "Item": item}), false),
        (
            "PutItem",
            json!({"TableName": table, "Item": nested}),
            false,
        ),
        (
            "GetItem",
            json!({"TableName": table, "Key": {"p": v}}),
            false,
        ),
        (
            "DeleteItem",
            json!({"TableName": table, "Key": {"p": {"S": "k"}},
            "ConditionExpression": "x = :v", "ExpressionAttributeValues": condition}),
            true,
        ),
        (
            "UpdateItem",
            json!({"TableName": table, "Key": {"p": {"S": "k"}},
            "UpdateExpression": "SET x = :v", "ExpressionAttributeValues": condition}),
            true,
        ),
        (
            "PutItem",
            json!({"TableName": table, "Item": {"p": {"S": "k"}},
            "Expected": {"x": {"ComparisonOperator": "EQ", "AttributeValueList": [v]}}}),
            false,
        ),
        (
            "Scan",
            json!({"TableName": table, "ExclusiveStartKey": {"p": v}}),
            false,
        ),
        (
            "Query",
            json!({"TableName": table, "KeyConditionExpression": "p = :v",
            "ExpressionAttributeValues": condition}),
            true,
        ),
        (
            "BatchWriteItem",
            json!({"RequestItems": {table: [{"PutRequest": {"Item": item}}]}}),
            false,
        ),
        (
            "BatchGetItem",
            json!({"RequestItems": {table: {"Keys": [{"p": v}]}}}),
            false,
        ),
        (
            "TransactWriteItems",
            json!({"TransactItems": [{"Put": {"TableName": table, "Item": item}}]}),
            false,
        ),
        (
            "TransactWriteItems",
            json!({"TransactItems": [{"ConditionCheck": {"TableName": table,
            "Key": {"p": {"S": "k"}}, "ConditionExpression": "x = :v",
            "ExpressionAttributeValues": condition}}]}),
            true,
        ),
        (
            "ExecuteStatement",
            json!({"Statement": format!("SELECT * FROM \"{table}\" WHERE p = ?"),
            "Parameters": [v]}),
            false,
        ),
    ]
}

#[tokio::test]
async fn a_null_set_member_is_refused_as_invalid_everywhere() {
    let client = util::client();
    let table = util::table_s(&client).await;
    for (value, sentence) in null_sets() {
        for (op, body, names_placeholder) in requests(&table, &value) {
            let expected = if names_placeholder {
                format!("ExpressionAttributeValues contains invalid value: {sentence} for key :v")
            } else {
                sentence.to_string()
            };
            let response = raw::call_json(op, body.clone()).await;
            assert_eq!(response.status, 400, "{op} {body}");
            assert_eq!(response.error_name(), "ValidationException", "{op} {body}");
            assert_eq!(message_of(op, body.clone()).await, expected, "{op} {body}");
        }
    }
}

#[tokio::test]
async fn duplicates_are_reported_before_a_null_member() {
    let client = util::client();
    let table = util::table_s(&client).await;
    let body = json!({"TableName": table,
        "Item": {"p": {"S": "k"}, "x": {"SS": ["a", "a", null]}}});
    assert_eq!(
        message_of("PutItem", body).await,
        "One or more parameter values were invalid: Input collection [a, a, null] contains duplicates"
    );
}
