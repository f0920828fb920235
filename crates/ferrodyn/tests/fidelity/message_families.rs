//! The validation messages whose wording depends on the operation, end to
//! end: item writes prefix the write family ("1 validation error detected:
//! "), reads report it bare; Query and Scan prefix the Select family,
//! GetItem does not; PartiQL names no index. Each family is raised by its
//! check (`ferrodyn_types::Family`), never recognised by its text.

use crate::util::{self, raw};
use serde_json::{json, Value};

const PREFIX: &str = "1 validation error detected: ";

async fn message(op: &str, body: Value) -> String {
    let response = raw::call_json(op, body).await;
    assert_eq!(response.status, 400, "{op}: {:?}", response.json());
    response.json()["message"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

#[tokio::test]
async fn item_writes_prefix_the_write_family_and_reads_do_not() {
    let table = util::table_s(&util::client()).await;
    let key = json!({"pk": {"S": "k"}});
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "UpdateItem",
            json!({"TableName": table, "Key": key, "UpdateExpression": "SET a = :a", "ExpressionAttributeValues": {":a": {"S": "x"}}, "ExpressionAttributeNames": {}}),
            "ExpressionAttributeNames must not be empty",
        ),
        (
            "UpdateItem",
            json!({"TableName": table, "Key": key, "UpdateExpression": ""}),
            "Invalid UpdateExpression: The expression can not be empty;",
        ),
        (
            "UpdateItem",
            json!({"TableName": table, "Key": key, "UpdateExpression": "SET a = :a SET b = :a", "ExpressionAttributeValues": {":a": {"S": "x"}}}),
            "Invalid UpdateExpression: The \"SET\" section can only be used once in an update expression;",
        ),
        (
            "PutItem",
            json!({"TableName": table, "Item": {"pk": {"S": "k"}, "s": {"SS": []}}}),
            "One or more parameter values were invalid: An string set  may not be empty",
        ),
        (
            "DeleteItem",
            json!({"TableName": table, "Key": key, "ConditionExpression": "attribute_exists(a)", "ExpressionAttributeNames": {"#u": "u"}}),
            "Value provided in ExpressionAttributeNames unused in expressions: keys: {#u}",
        ),
    ];
    for (op, body, bare) in cases {
        assert_eq!(message(op, body).await, format!("{PREFIX}{bare}"), "{op}");
    }
    // The same checks through a read are bare.
    let unused = message(
        "GetItem",
        json!({"TableName": table, "Key": key, "ProjectionExpression": "a", "ExpressionAttributeNames": {"#u": "u"}}),
    )
    .await;
    assert_eq!(
        unused,
        "Value provided in ExpressionAttributeNames unused in expressions: keys: {#u}"
    );
    let empty = message(
        "Scan",
        json!({"TableName": table, "ExpressionAttributeNames": {}, "ProjectionExpression": "a"}),
    )
    .await;
    assert_eq!(empty, "ExpressionAttributeNames must not be empty");
}

#[tokio::test]
async fn query_and_scan_prefix_the_select_family() {
    let table = util::table_s(&util::client()).await;
    let scan = message(
        "Scan",
        json!({"TableName": table, "Select": "SPECIFIC_ATTRIBUTES"}),
    )
    .await;
    assert_eq!(
        scan,
        format!("{PREFIX}Must specify the AttributesToGet or ProjectionExpression when choosing to get SPECIFIC_ATTRIBUTES")
    );
    let query = message(
        "Query",
        json!({"TableName": table, "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "k"}}, "Select": "ALL_PROJECTED_ATTRIBUTES"}),
    )
    .await;
    assert_eq!(
        query,
        format!(
            "{PREFIX}ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName"
        )
    );
    let unknown = message("Scan", json!({"TableName": table, "IndexName": "byEmail"})).await;
    assert_eq!(
        unknown,
        "The table does not have the specified index: byEmail"
    );
    let partiql = message(
        "ExecuteStatement",
        json!({"Statement": format!("SELECT * FROM \"{table}\".\"byEmail\"")}),
    )
    .await;
    assert_eq!(partiql, "The table does not have the specified index");
}
