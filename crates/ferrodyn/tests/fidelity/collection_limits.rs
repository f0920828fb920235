//! Length limits on request collections (TransactItems, a batch's
//! RequestItems, BatchGetItem's Keys): which constraint is reported and how
//! the collection is echoed.

use crate::util::{self, raw};

#[tokio::test]
async fn length_errors_echo_the_collection_not_its_size() {
    let response = raw::call_json(
        "TransactWriteItems",
        serde_json::json!({"TransactItems": []}),
    )
    .await;
    assert_eq!(
        response.json()["message"],
        "1 validation error detected: Value '[]' at 'transactItems' failed to satisfy constraint: Member must have length greater than or equal to 1"
    );
}

#[tokio::test]
async fn a_batch_write_list_out_of_bounds_is_one_map_value_violation() {
    // AWS's wording, as clients have recorded it (2016-2025): one violation
    // for RequestItems, the map echoed as {table=[...]}, both bounds named.
    let client = util::client();
    let table = util::table_s(&client).await;
    let response = raw::call_json(
        "BatchWriteItem",
        serde_json::json!({"RequestItems": {table.clone(): []}}),
    )
    .await;
    assert_eq!(
        response.json()["message"],
        format!("1 validation error detected: Value '{{{table}=[]}}' at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: [Member must have length less than or equal to 25, Member must have length greater than or equal to 1]")
    );
    let puts: Vec<serde_json::Value> = (0..26)
        .map(|i| serde_json::json!({"PutRequest": {"Item": {"p": {"S": format!("k{i}")}}}}))
        .collect();
    let response = raw::call_json(
        "BatchWriteItem",
        serde_json::json!({"RequestItems": {table.clone(): puts}}),
    )
    .await;
    let message = response.json()["message"].as_str().unwrap().to_string();
    assert!(
        message.starts_with(&format!(
            "1 validation error detected: Value '{{{table}=[{{\"PutRequest\":{{\"Item\":{{\"p\":{{\"S\":\"k0\"}}}}}}}}, "
        )),
        "{message}"
    );
    assert!(
        message.ends_with("}]}' at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: [Member must have length less than or equal to 25, Member must have length greater than or equal to 1]"),
        "{message}"
    );
}

#[tokio::test]
async fn over_100_keys_for_one_table_are_reported_without_the_keys() {
    // AWS (the AWS-verified dynamodb-conformance suite, 2026,
    // tier3/error-messages/batchGetItem.test.ts): capitalized field, no echo.
    let client = util::client();
    let table = util::table_s(&client).await;
    let keys: Vec<serde_json::Value> = (0..101)
        .map(|i| serde_json::json!({"p": {"S": format!("k{i}")}}))
        .collect();
    assert_eq!(
        super::message_of(
            "BatchGetItem",
            serde_json::json!({"RequestItems": {table.clone(): {"Keys": keys}}}),
        )
        .await,
        format!("1 validation error detected: Value at 'RequestItems.{table}.member.Keys' failed to satisfy constraint: Member must have length less than or equal to 100")
    );
    // Within 100 per table but over 100 in all: the request-level limit.
    let half = |from: usize| -> Vec<serde_json::Value> {
        (from..from + 60)
            .map(|i| serde_json::json!({"p": {"S": format!("k{i}")}}))
            .collect()
    };
    let other = util::table_s(&client).await;
    assert_eq!(
        super::message_of(
            "BatchGetItem",
            serde_json::json!({"RequestItems": {table: {"Keys": half(0)}, other: {"Keys": half(60)}}}),
        )
        .await,
        "Too many items requested for the BatchGetItem call"
    );
}
