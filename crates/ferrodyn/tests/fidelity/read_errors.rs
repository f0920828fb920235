//! Query and Scan validation: start keys, Select conflicts, segments, Limit,
//! and the order in which a request's problems are reported.

use super::ONE_ERROR;
use crate::util::{self, raw, s};

#[tokio::test]
async fn a_query_start_key_on_a_table_without_sort_key_is_invalid() {
    // AWS (ScyllaDB's test_query_no_sort_key_exclusive_start_key): a
    // partition of such a table holds one item, so no start key makes sense.
    let client = util::client();
    let table = util::table_s(&client).await;
    let result = client
        .query()
        .table_name(&table)
        .key_condition_expression("p = :p")
        .expression_attribute_values(":p", s("k1"))
        .exclusive_start_key("p", s("k1"))
        .send()
        .await;
    util::assert_validation(
        result,
        "The provided exclusive start key is invalid: ExclusiveStartKey: {p=AttributeValue: {S:k1}}",
    );
}

#[tokio::test]
async fn select_conflicts_are_prefixed_by_query_and_scan() {
    // moto 5.2.5's AWS-verified test_dynamodb_select.py (5.2.3 recorded
    // Scan's bare; AWS has since moved Scan to its newer validation).
    let client = util::client();
    let table = util::table_s(&client).await;
    let message = "Cannot specify the ProjectionExpression when choosing to get only the Count";
    let query = client
        .query()
        .table_name(&table)
        .key_condition_expression("p = :p")
        .expression_attribute_values(":p", s("k"))
        .select(aws_sdk_dynamodb::types::Select::Count)
        .projection_expression("p")
        .send()
        .await;
    util::assert_validation(query, &format!("{ONE_ERROR}{message}"));
    let scan = client
        .scan()
        .table_name(&table)
        .select(aws_sdk_dynamodb::types::Select::Count)
        .projection_expression("p")
        .send()
        .await;
    util::assert_validation(scan, &format!("{ONE_ERROR}{message}"));
}

#[tokio::test]
async fn a_segment_past_the_total_is_refused_without_echoing_either() {
    // moto 5.2.5's AWS-verified TestParallelScan.
    let client = util::client();
    let table = util::table_s(&client).await;
    let scan = client
        .scan()
        .table_name(&table)
        .segment(3)
        .total_segments(3)
        .send()
        .await;
    util::assert_validation(
        scan,
        "The Segment parameter is zero-based and must be less than parameter TotalSegments",
    );
}

#[tokio::test]
async fn query_reports_empty_expressions_and_unused_names_before_key_condition_rules() {
    // DynamoDB Local's order, and AWS's (moto's AWS-verified
    // test_query_unused_attribute_name): empty FilterExpression, then empty
    // ProjectionExpression, then syntax, then unused names, then the rules
    // of key conditions.
    let client = util::client();
    let table = util::table_s(&client).await;
    let query = |extra: serde_json::Value| {
        let mut body = serde_json::json!({"TableName": table});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        async move { raw::call_json("Query", body).await.json()["message"].clone() }
    };
    assert_eq!(
        query(serde_json::json!({
            "KeyConditionExpression": "p = :p AND",
            "FilterExpression": "",
            "ExpressionAttributeValues": {":p": {"S": "x"}}
        }))
        .await,
        "Invalid FilterExpression: The expression can not be empty;"
    );
    assert_eq!(
        query(serde_json::json!({
            "KeyConditionExpression": "p = :p AND",
            "ProjectionExpression": "",
            "ExpressionAttributeValues": {":p": {"S": "x"}}
        }))
        .await,
        "Invalid ProjectionExpression: The expression can not be empty;"
    );
    assert_eq!(
        query(serde_json::json!({
            "KeyConditionExpression": "#0 = x",
            "ExpressionAttributeNames": {"#0": "p", "#count": "count"}
        }))
        .await,
        "Value provided in ExpressionAttributeNames unused in expressions: keys: {#count}"
    );
    assert_eq!(
        query(serde_json::json!({
            "KeyConditionExpression": "#0 = x",
            "ExpressionAttributeNames": {"#0": "p"}
        }))
        .await,
        "Invalid condition in KeyConditionExpression: Multiple attribute names used in one condition"
    );
}

#[tokio::test]
async fn query_and_scan_word_a_bad_limit_and_start_key_differently() {
    // An AWS-characterised conformance suite (verified against AWS, 2026):
    // Query names `Limit` without its value and gives a short start-key
    // error; Scan reports the generic constraint and the key's reason.
    let client = util::client();
    let table = util::table_ss(&client).await;
    let query = || {
        client
            .query()
            .table_name(&table)
            .key_condition_expression("p = :v")
            .expression_attribute_values(":v", s("v"))
    };
    util::assert_validation(
        query().limit(0).send().await,
        "1 validation error detected: Value at 'Limit' failed to satisfy constraint: Member must have value greater than or equal to 1",
    );
    util::assert_validation(
        client.scan().table_name(&table).limit(0).send().await,
        "1 validation error detected: Value '0' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1",
    );
    util::assert_validation(
        query().exclusive_start_key("bad", s("p")).send().await,
        "The provided starting key is invalid",
    );
    util::assert_validation(
        query()
            .exclusive_start_key("p", util::n("7"))
            .exclusive_start_key("c", s("x"))
            .send()
            .await,
        "The provided key element does not match the schema",
    );
    util::assert_validation(
        client
            .scan()
            .table_name(&table)
            .exclusive_start_key("bad", s("p"))
            .send()
            .await,
        "The provided starting key is invalid: The provided key element does not match the schema",
    );
}

#[tokio::test]
async fn a_key_condition_reports_its_first_problem_in_written_order() {
    // Verified against AWS by the same suite: an undefined value and an
    // operand of the wrong type, whichever is written first.
    let client = util::client();
    let table = util::table_ss(&client).await;
    let query = |expression: &str| {
        client
            .query()
            .table_name(&table)
            .key_condition_expression(expression)
            .expression_attribute_values(":n", util::n("1"))
            .send()
    };
    let undefined = "Invalid KeyConditionExpression: An expression attribute value used in expression is not defined; attribute value: :missing";
    let operand = "Invalid KeyConditionExpression: Incorrect operand type for operator or function; operator or function: begins_with, operand type: N";
    util::assert_validation(
        query("p = :missing AND begins_with(c, :n)").await,
        undefined,
    );
    util::assert_validation(query("begins_with(c, :n) AND p = :missing").await, operand);
}

#[tokio::test]
async fn an_index_start_key_naming_other_attributes_is_invalid_without_a_reason() {
    // DynamoDB Local 2026-01-16 and the AWS-checked outside suites: on an
    // index, Query and Scan word a start key with missing or extra
    // attributes alike; a key attribute of the wrong type also says why.
    let client = util::client();
    let table = super::table_with_gsi(&client).await;
    let bare = "The provided starting key is invalid";
    let typed =
        "The provided starting key is invalid: The provided key element does not match the schema";
    let query = || {
        client
            .query()
            .table_name(&table)
            .index_name("gsi")
            .key_condition_expression("x = :v")
            .expression_attribute_values(":v", s("a"))
    };
    let scan = || client.scan().table_name(&table).index_name("gsi");
    util::assert_validation(query().exclusive_start_key("p", s("k")).send().await, bare);
    util::assert_validation(scan().exclusive_start_key("x", s("k")).send().await, bare);
    let extra = scan()
        .exclusive_start_key("p", s("k"))
        .exclusive_start_key("x", s("k"))
        .exclusive_start_key("y", s("k"));
    util::assert_validation(extra.send().await, bare);
    let wrong_type = query()
        .exclusive_start_key("p", s("k"))
        .exclusive_start_key("x", util::n("1"));
    util::assert_validation(wrong_type.send().await, typed);
    let valid = scan()
        .exclusive_start_key("p", s("k"))
        .exclusive_start_key("x", s("k"));
    valid
        .send()
        .await
        .expect("a start key of the index's and the table's keys is valid");
}
