//! The legacy (pre-expression) parameters: Expected with ConditionalOperator,
//! AttributeUpdates and AttributesToGet, and the rule that they cannot be
//! mixed with their expression counterparts.

use crate::util::{self, assert_error, assert_validation, item, n, s, sorted_sets, ss};
use aws_sdk_dynamodb::types::{
    AttributeAction, AttributeValueUpdate, ComparisonOperator, ConditionalOperator,
    ExpectedAttributeValue,
};
use aws_sdk_dynamodb::Client;

const FAILED: &str = "The conditional request failed";

async fn fixture(client: &Client) -> String {
    let table = util::table_s(client).await;
    client
        .put_item()
        .table_name(&table)
        .set_item(Some(item(&[
            ("p", s("k")),
            ("a", n("5")),
            ("b", s("x")),
            ("tags", ss(&["t1", "t2"])),
        ])))
        .send()
        .await
        .unwrap();
    table
}

fn expect_value(v: aws_sdk_dynamodb::types::AttributeValue) -> ExpectedAttributeValue {
    ExpectedAttributeValue::builder().value(v).build()
}

fn expect_absent() -> ExpectedAttributeValue {
    ExpectedAttributeValue::builder().exists(false).build()
}

fn expect_op(
    op: ComparisonOperator,
    values: Vec<aws_sdk_dynamodb::types::AttributeValue>,
) -> ExpectedAttributeValue {
    ExpectedAttributeValue::builder()
        .comparison_operator(op)
        .set_attribute_value_list(Some(values))
        .build()
}

#[tokio::test]
async fn expected_value_and_exists() {
    let client = util::client();
    let table = fixture(&client).await;
    let put = |expected: Vec<(&str, ExpectedAttributeValue)>| {
        let mut req = client.put_item().table_name(&table).set_item(Some(item(&[
            ("p", s("k")),
            ("a", n("5")),
            ("b", s("x")),
        ])));
        for (k, v) in expected {
            req = req.expected(k, v);
        }
        req.send()
    };
    put(vec![("a", expect_value(n("5")))]).await.unwrap();
    put(vec![("zz", expect_absent())]).await.unwrap();
    assert_error(
        put(vec![("a", expect_value(n("6")))]).await,
        "ConditionalCheckFailedException",
        FAILED,
    );
    assert_error(
        put(vec![("a", expect_absent())]).await,
        "ConditionalCheckFailedException",
        FAILED,
    );
}

#[tokio::test]
async fn expected_comparison_operators_with_and_or() {
    let client = util::client();
    let table = fixture(&client).await;
    let delete = |conditions: Vec<(&str, ExpectedAttributeValue)>,
                  op: Option<ConditionalOperator>| {
        let mut req = client
            .update_item()
            .table_name(&table)
            .key("p", s("k"))
            .set_conditional_operator(op);
        for (k, v) in conditions {
            req = req.expected(k, v);
        }
        req.send()
    };
    delete(
        vec![("a", expect_op(ComparisonOperator::Gt, vec![n("4")]))],
        None,
    )
    .await
    .unwrap();
    delete(
        vec![(
            "a",
            expect_op(ComparisonOperator::Between, vec![n("1"), n("5")]),
        )],
        None,
    )
    .await
    .unwrap();
    delete(
        vec![("b", expect_op(ComparisonOperator::In, vec![s("y"), s("x")]))],
        None,
    )
    .await
    .unwrap();
    delete(
        vec![(
            "tags",
            expect_op(ComparisonOperator::Contains, vec![s("t1")]),
        )],
        None,
    )
    .await
    .unwrap();
    delete(
        vec![("zz", expect_op(ComparisonOperator::Null, vec![]))],
        None,
    )
    .await
    .unwrap();
    // AND (the default) needs both; OR needs either.
    let both = || {
        vec![
            ("a", expect_op(ComparisonOperator::Lt, vec![n("5")])),
            ("b", expect_op(ComparisonOperator::BeginsWith, vec![s("x")])),
        ]
    };
    assert_error(
        delete(both(), None).await,
        "ConditionalCheckFailedException",
        FAILED,
    );
    assert_error(
        delete(both(), Some(ConditionalOperator::And)).await,
        "ConditionalCheckFailedException",
        FAILED,
    );
    delete(both(), Some(ConditionalOperator::Or)).await.unwrap();
}

#[tokio::test]
async fn attribute_updates_put_add_and_delete() {
    let client = util::client();
    let table = fixture(&client).await;
    let action = |a: AttributeAction, v: Option<aws_sdk_dynamodb::types::AttributeValue>| {
        AttributeValueUpdate::builder()
            .action(a)
            .set_value(v)
            .build()
    };
    client
        .update_item()
        .table_name(&table)
        .key("p", s("k"))
        .attribute_updates("b", action(AttributeAction::Put, Some(s("y"))))
        .attribute_updates("a", action(AttributeAction::Add, Some(n("2"))))
        .attribute_updates("tags", action(AttributeAction::Delete, Some(ss(&["t1"]))))
        .attribute_updates("c", action(AttributeAction::Add, Some(ss(&["new"]))))
        .send()
        .await
        .unwrap();
    client
        .update_item()
        .table_name(&table)
        .key("p", s("k"))
        .attribute_updates("b", action(AttributeAction::Delete, None))
        .send()
        .await
        .unwrap();
    let got = client
        .get_item()
        .table_name(&table)
        .key("p", s("k"))
        .consistent_read(true)
        .send()
        .await
        .unwrap()
        .item
        .unwrap();
    assert_eq!(
        sorted_sets(&got),
        item(&[
            ("p", s("k")),
            ("a", n("7")),
            ("tags", ss(&["t2"])),
            ("c", ss(&["new"])),
        ])
    );
}

#[tokio::test]
async fn attributes_to_get_selects_top_level_attributes() {
    let client = util::client();
    let table = fixture(&client).await;
    let got = client
        .get_item()
        .table_name(&table)
        .key("p", s("k"))
        .attributes_to_get("a")
        .attributes_to_get("tags")
        .attributes_to_get("nosuch")
        .send()
        .await
        .unwrap()
        .item
        .unwrap();
    assert_eq!(
        sorted_sets(&got),
        item(&[("a", n("5")), ("tags", ss(&["t1", "t2"]))])
    );
}

#[tokio::test]
async fn legacy_and_expression_parameters_cannot_be_mixed() {
    let client = util::client();
    let table = fixture(&client).await;
    assert_validation(
        client
            .get_item()
            .table_name(&table)
            .key("p", s("k"))
            .attributes_to_get("a")
            .projection_expression("a")
            .send()
            .await,
        "Can not use both expression and non-expression parameters in the same request: Non-expression parameters: {AttributesToGet} Expression parameters: {ProjectionExpression}",
    );
    assert_validation(
        client
            .put_item()
            .table_name(&table)
            .item("p", s("k"))
            .expected("a", expect_absent())
            .condition_expression("attribute_exists(a)")
            .send()
            .await,
        "Can not use both expression and non-expression parameters in the same request: Non-expression parameters: {Expected} Expression parameters: {ConditionExpression}",
    );
    assert_validation(
        client
            .update_item()
            .table_name(&table)
            .key("p", s("k"))
            .update_expression("SET a = :v")
            .expression_attribute_values(":v", n("1"))
            .attribute_updates(
                "b",
                AttributeValueUpdate::builder()
                    .action(AttributeAction::Put)
                    .value(n("1"))
                    .build(),
            )
            .send()
            .await,
        "Can not use both expression and non-expression parameters in the same request: Non-expression parameters: {AttributeUpdates} Expression parameters: {UpdateExpression}",
    );
}

#[tokio::test]
async fn conditional_operator_without_expected_is_rejected() {
    let client = util::client();
    let table = fixture(&client).await;
    assert_validation(
        client
            .put_item()
            .table_name(&table)
            .item("p", s("k"))
            .conditional_operator(ConditionalOperator::Or)
            .send()
            .await,
        "ConditionalOperator cannot be used without Filter or Expected",
    );
}
