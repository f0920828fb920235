//! Item writes' expression checks worded as DynamoDB's newer "1 validation
//! error detected" family.

use super::ONE_ERROR;
use crate::util::{self, s};

#[tokio::test]
async fn item_writes_word_expression_checks_as_one_validation_error() {
    // Messages from moto's AWS-verified tests (test_dynamodb_exceptions.py,
    // test_dynamodb_update_expressions.py).
    let client = util::client();
    let table = util::table_s(&client).await;
    let update = |expression: &str| {
        client
            .update_item()
            .table_name(&table)
            .key("p", s("k"))
            .update_expression(expression)
    };
    util::assert_validation(
        update("").send().await,
        &format!("{ONE_ERROR}Invalid UpdateExpression: The expression can not be empty;"),
    );
    for section in ["SET", "REMOVE", "ADD"] {
        let expression = match section {
            "SET" => "SET a = :v SET b = :v",
            "REMOVE" => "REMOVE a REMOVE b",
            _ => "ADD a :v ADD b :v",
        };
        let mut request = update(expression);
        if section != "REMOVE" {
            request = request.expression_attribute_values(":v", util::n("1"));
        }
        util::assert_validation(
            request.send().await,
            &format!("{ONE_ERROR}Invalid UpdateExpression: The \"{section}\" section can only be used once in an update expression;"),
        );
    }
    util::assert_validation(
        update("SET #d = :s")
            .expression_attribute_names("#d", "d")
            .set_expression_attribute_values(Some(Default::default()))
            .send()
            .await,
        &format!("{ONE_ERROR}ExpressionAttributeValues must not be empty"),
    );
    let unused = format!(
        "{ONE_ERROR}Value provided in ExpressionAttributeNames unused in expressions: keys: {{#count}}"
    );
    util::assert_validation(
        client
            .put_item()
            .table_name(&table)
            .item("p", s("k"))
            .condition_expression("attribute_not_exists(body)")
            .expression_attribute_names("#count", "count")
            .send()
            .await,
        &unused,
    );
    util::assert_validation(
        client
            .delete_item()
            .table_name(&table)
            .key("p", s("k"))
            .condition_expression("attribute_not_exists(body)")
            .expression_attribute_names("#count", "count")
            .send()
            .await,
        &unused,
    );
    // Reads keep the bare wording.
    util::assert_validation(
        client
            .get_item()
            .table_name(&table)
            .key("p", s("k"))
            .projection_expression("p")
            .expression_attribute_names("#count", "count")
            .send()
            .await,
        "Value provided in ExpressionAttributeNames unused in expressions: keys: {#count}",
    );
}

#[tokio::test]
async fn values_without_an_expression_name_every_missing_expression() {
    // DynamoDB Local 2026-01-16: the refusal names each expression the
    // operation could have used, "X and Y are null".
    let client = util::client();
    let table = util::table_s(&client).await;
    let values = serde_json::json!({":v": {"S": "x"}});
    let prefix = "ExpressionAttributeValues can only be specified when using expressions: ";
    let cases = [
        (
            "UpdateItem",
            serde_json::json!({"TableName": table, "Key": {"p": {"S": "k"}},
            "ExpressionAttributeValues": values}),
            "UpdateExpression and ConditionExpression are null",
        ),
        (
            "Query",
            serde_json::json!({"TableName": table, "ExpressionAttributeValues": values,
            "KeyConditions": {"p": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "k"}]}}}),
            "FilterExpression and KeyConditionExpression are null",
        ),
        (
            "Scan",
            serde_json::json!({"TableName": table, "ExpressionAttributeValues": values}),
            "FilterExpression is null",
        ),
        (
            "DeleteItem",
            serde_json::json!({"TableName": table, "Key": {"p": {"S": "k"}},
            "ExpressionAttributeValues": values}),
            "ConditionExpression is null",
        ),
    ];
    for (op, body, missing) in cases {
        assert_eq!(
            super::message_of(op, body).await,
            format!("{prefix}{missing}"),
            "{op}"
        );
    }
}
