//! How deep a value may be nested. DynamoDB stores an item whose attributes
//! nest up to 31 map or list levels (the item itself counts as the 32nd),
//! but a request may carry a value of 32 levels wherever it is only
//! compared: condition values, legacy Expected, a ConditionCheck. Answers
//! recorded from DynamoDB Local 2026-01-16 (CONFORMANCE.md, "Nesting").

use serde_json::{json, Value};

use super::message_of;
use crate::util::{self, raw};

const IN_ITEM: &str = "Nesting Levels have exceeded supported limits: Attributes in the item have nested levels beyond supported limit";

/// A map nested `levels` deep around a string.
fn nested(levels: usize) -> Value {
    (0..levels).fold(json!({"S": "x"}), |v, _| json!({"M": {"a": v}}))
}

async fn status_of(op: &str, body: Value) -> u16 {
    raw::call_json(op, body).await.status
}

#[tokio::test]
async fn a_condition_may_compare_a_value_one_level_deeper_than_an_item_holds() {
    let client = util::client();
    let t = util::table_s(&client).await;
    let deepest = nested(32);
    let compared = [
        (
            "PutItem",
            json!({"TableName": t, "Item": {"p": {"S": "c"}},
            "ConditionExpression": "attribute_not_exists(x) OR x = :v",
            "ExpressionAttributeValues": {":v": deepest}}),
        ),
        (
            "PutItem",
            json!({"TableName": t, "Item": {"p": {"S": "e"}},
            "Expected": {"x": {"ComparisonOperator": "NE", "AttributeValueList": [deepest]}}}),
        ),
        (
            "TransactWriteItems",
            json!({"TransactItems": [{"ConditionCheck": {"TableName": t,
            "Key": {"p": {"S": "c"}}, "ConditionExpression": "x <> :v",
            "ExpressionAttributeValues": {":v": deepest}}}]}),
        ),
    ];
    for (op, body) in compared {
        assert_eq!(status_of(op, body.clone()).await, 200, "{op} {body}");
    }
    let too_deep = nested(33);
    let body = json!({"TableName": t, "Item": {"p": {"S": "c"}},
        "ConditionExpression": "x = :v", "ExpressionAttributeValues": {":v": too_deep}});
    assert_eq!(
        message_of("PutItem", body).await,
        format!("ExpressionAttributeValues contains invalid value: {IN_ITEM} for key :v")
    );
}

#[tokio::test]
async fn a_stored_item_may_not_reach_the_request_limit() {
    let client = util::client();
    let t = util::table_s(&client).await;
    let ok = json!({"TableName": t, "Item": {"p": {"S": "ok"}, "x": nested(31)}});
    assert_eq!(status_of("PutItem", ok).await, 200);
    let item = json!({"p": {"S": "deep"}, "x": nested(32)});
    let puts = [
        ("PutItem", json!({"TableName": t, "Item": item})),
        (
            "BatchWriteItem",
            json!({"RequestItems": {t.clone(): [{"PutRequest": {"Item": item}}]}}),
        ),
    ];
    for (op, body) in puts {
        let response = raw::call_json(op, body.clone()).await;
        assert_eq!(response.error_name(), "ValidationException", "{op}");
        assert_eq!(response.json()["message"], IN_ITEM, "{op}");
    }
    let update = json!({"TableName": t, "Key": {"p": {"S": "u"}},
        "UpdateExpression": "SET y = :v", "ExpressionAttributeValues": {":v": nested(32)}});
    assert_eq!(
        message_of("UpdateItem", update).await,
        "Nesting Levels have exceeded supported limits"
    );
    // An update that deepens a stored map past the limit is refused too.
    let base = json!({"TableName": t, "Item": {"p": {"S": "grow"}, "x": nested(31)}});
    assert_eq!(status_of("PutItem", base).await, 200);
    let path = format!("x{}", ".a".repeat(31));
    let grow = json!({"TableName": t, "Key": {"p": {"S": "grow"}},
        "UpdateExpression": format!("SET {path} = :v"),
        "ExpressionAttributeValues": {":v": {"M": {"b": {"S": "y"}}}}});
    assert_eq!(
        message_of("UpdateItem", grow).await,
        "Nesting Levels have exceeded supported limits"
    );
}
