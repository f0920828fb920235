//! ConditionExpression: every comparator, BETWEEN, IN, AND/OR/NOT with their
//! precedence, the functions (attribute_exists, attribute_not_exists,
//! attribute_type, begins_with, contains, size), nested paths, and what a
//! failed condition returns (ConditionalCheckFailedException, optionally with
//! the old item).
//!
//! Each case is a condition on a fixed item; a case "holds" when an UpdateItem
//! guarded by it succeeds, and "fails" when it is refused with
//! ConditionalCheckFailedException.

use crate::util::{self, assert_error, assert_validation, b, item, l, m, n, s, ss};
use aws_sdk_dynamodb::operation::delete_item::DeleteItemError;
use aws_sdk_dynamodb::operation::put_item::PutItemError;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValuesOnConditionCheckFailure};
use aws_sdk_dynamodb::Client;

const FAILED: &str = "The conditional request failed";

fn fixture_item() -> std::collections::HashMap<String, AttributeValue> {
    item(&[
        ("p", s("k")),
        ("num", n("5")),
        ("str", s("hello")),
        ("bin", b(b"\x01\x02\x03")),
        ("yes", AttributeValue::Bool(true)),
        ("nul", AttributeValue::Null(true)),
        ("lst", l(vec![n("1"), n("2"), s("three")])),
        (
            "mp",
            m(&[("a", n("1")), ("nest1", m(&[("leaf1", s("x"))]))]),
        ),
        ("tagset", ss(&["a", "b"])),
    ])
}

async fn fixture(client: &Client) -> String {
    let table = util::table_s(client).await;
    client
        .put_item()
        .table_name(&table)
        .set_item(Some(fixture_item()))
        .send()
        .await
        .unwrap();
    table
}

/// Values the cases refer to.
fn values() -> Vec<(&'static str, AttributeValue)> {
    vec![
        (":one", n("1")),
        (":two", n("2")),
        (":three", n("3")),
        (":four", n("4")),
        (":five", n("5")),
        (":six", n("6")),
        (":hello", s("hello")),
        (":hellp", s("hellp")),
        (":he", s("he")),
        (":lo", s("lo")),
        (":ell", s("ell")),
        (":a", s("a")),
        (":z", s("z")),
        (":tN", s("N")),
        (":tS", s("S")),
        (":tL", s("L")),
        (":tM", s("M")),
        (":tSS", s("SS")),
        (":tB", s("B")),
        (":tBOOL", s("BOOL")),
        (":tNULL", s("NULL")),
        (":b01", b(b"\x01")),
        (":b02", b(b"\x02")),
    ]
}

/// Whether `condition` holds on the fixture item (by attempting a guarded
/// no-op update), panicking on any error other than a failed condition.
async fn holds(client: &Client, table: &str, condition: &str) -> bool {
    let used: Vec<_> = values()
        .into_iter()
        .filter(|(k, _)| {
            condition
                .match_indices(k)
                .any(|(i, _)| !condition[i + k.len()..].starts_with(char::is_alphanumeric))
        })
        .collect();
    let mut req = client
        .update_item()
        .table_name(table)
        .key("p", s("k"))
        .update_expression("SET touched = :touched")
        .expression_attribute_values(":touched", n("1"))
        .condition_expression(condition);
    for (k, v) in used {
        req = req.expression_attribute_values(k, v);
    }
    match req.send().await {
        Ok(_) => true,
        Err(err) => match err.into_service_error() {
            UpdateItemError::ConditionalCheckFailedException(e) => {
                assert_eq!(e.message(), Some(FAILED));
                false
            }
            other => panic!("condition {condition:?}: {other:?}"),
        },
    }
}

/// Checks every case and reports all the ones that disagree at once.
async fn check(cases: &[(&str, bool)]) {
    let client = util::client();
    let table = fixture(&client).await;
    let mut wrong = Vec::new();
    for (condition, expected) in cases {
        if holds(&client, &table, condition).await != *expected {
            wrong.push(format!("{condition:?} should be {expected}"));
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[tokio::test]
async fn comparators_on_numbers_strings_and_binaries() {
    check(&[
        ("num = :five", true),
        ("num = :four", false),
        ("num <> :four", true),
        ("num <> :five", false),
        ("num < :six", true),
        ("num < :five", false),
        ("num <= :five", true),
        ("num <= :four", false),
        ("num > :four", true),
        ("num > :five", false),
        ("num >= :five", true),
        ("num >= :six", false),
        ("str = :hello", true),
        ("str < :hellp", true),
        ("str > :he", true),
        ("bin > :b01", true),
        ("bin < :b02", true),
        (":four < num", true),
        ("lst[0] = mp.a", true),
    ])
    .await;
}

#[tokio::test]
async fn comparisons_across_types_or_with_missing_attributes_are_false() {
    check(&[
        ("num = :hello", false),
        ("num <> :hello", true),
        ("num < :hello", false),
        ("num > :hello", false),
        ("nosuch = :five", false),
        ("nosuch <> :five", true),
        ("nosuch < :five", false),
        ("nosuch >= :five", false),
    ])
    .await;
}

#[tokio::test]
async fn between_and_in() {
    check(&[
        ("num BETWEEN :four AND :six", true),
        ("num BETWEEN :five AND :five", true),
        ("num BETWEEN :one AND :four", false),
        ("str BETWEEN :he AND :hellp", true),
        ("num IN (:four, :five, :six)", true),
        ("num IN (:one, :two)", false),
        ("str IN (:hello)", true),
        ("nosuch IN (:one)", false),
    ])
    .await;
}

#[tokio::test]
async fn and_or_not_with_precedence() {
    check(&[
        ("num = :five AND str = :hello", true),
        ("num = :five AND str = :he", false),
        ("num = :four OR str = :hello", true),
        ("num = :four OR str = :he", false),
        ("NOT num = :four", true),
        ("NOT num = :five", false),
        // AND binds tighter than OR; NOT tighter than AND.
        ("num = :five OR num = :four AND str = :he", true),
        ("(num = :five OR num = :four) AND str = :he", false),
        ("NOT num = :four AND num = :five", true),
        ("NOT (num = :five AND str = :hello)", false),
    ])
    .await;
}

#[tokio::test]
async fn existence_and_type_functions() {
    check(&[
        ("attribute_exists(num)", true),
        ("attribute_exists(nosuch)", false),
        ("attribute_not_exists(nosuch)", true),
        ("attribute_not_exists(num)", false),
        ("attribute_exists(mp.nest1.leaf1)", true),
        ("attribute_exists(mp.nope)", false),
        ("attribute_exists(lst[2])", true),
        ("attribute_exists(lst[3])", false),
        ("attribute_type(num, :tN)", true),
        ("attribute_type(num, :tS)", false),
        ("attribute_type(str, :tS)", true),
        ("attribute_type(lst, :tL)", true),
        ("attribute_type(mp, :tM)", true),
        ("attribute_type(tagset, :tSS)", true),
        ("attribute_type(bin, :tB)", true),
        ("attribute_type(yes, :tBOOL)", true),
        ("attribute_type(nul, :tNULL)", true),
        ("attribute_type(nosuch, :tS)", false),
    ])
    .await;
}

#[tokio::test]
async fn begins_with_and_contains() {
    check(&[
        ("begins_with(str, :he)", true),
        ("begins_with(str, :lo)", false),
        ("begins_with(bin, :b01)", true),
        ("begins_with(bin, :b02)", false),
        ("begins_with(num, :he)", false),
        ("contains(str, :ell)", true),
        ("contains(str, :z)", false),
        ("contains(tagset, :a)", true),
        ("contains(tagset, :z)", false),
        ("contains(lst, :two)", true),
        ("contains(lst, :three)", false),
        ("contains(nosuch, :a)", false),
    ])
    .await;
}

#[tokio::test]
async fn size_of_each_kind_of_value() {
    check(&[
        ("size(str) = :five", true),
        ("size(bin) = :three", true),
        ("size(lst) = :three", true),
        ("size(mp) = :two", true),
        ("size(tagset) = :two", true),
        ("size(str) > :four", true),
        ("size(nosuch) = :one", false),
        ("size(mp.nest1) = :one", true),
    ])
    .await;
}

#[tokio::test]
async fn failed_put_leaves_the_item_unchanged() {
    let client = util::client();
    let table = fixture(&client).await;
    let result = client
        .put_item()
        .table_name(&table)
        .item("p", s("k"))
        .condition_expression("attribute_not_exists(p)")
        .send()
        .await;
    assert_error(result, "ConditionalCheckFailedException", FAILED);
    let got = client
        .get_item()
        .table_name(&table)
        .key("p", s("k"))
        .consistent_read(true)
        .send()
        .await
        .unwrap();
    assert_eq!(
        util::sorted_sets(&got.item.unwrap()),
        util::sorted_sets(&fixture_item())
    );
}

#[tokio::test]
async fn conditions_on_a_missing_item_see_no_attributes() {
    let client = util::client();
    let table = util::table_s(&client).await;
    client
        .put_item()
        .table_name(&table)
        .item("p", s("new"))
        .condition_expression("attribute_not_exists(p)")
        .send()
        .await
        .unwrap();
    assert_error(
        client
            .delete_item()
            .table_name(&table)
            .key("p", s("absent"))
            .condition_expression("attribute_exists(p)")
            .send()
            .await,
        "ConditionalCheckFailedException",
        FAILED,
    );
}

#[tokio::test]
async fn failed_condition_can_return_the_old_item() {
    let client = util::client();
    let table = fixture(&client).await;
    let err = client
        .put_item()
        .table_name(&table)
        .item("p", s("k"))
        .condition_expression("attribute_not_exists(p)")
        .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    let PutItemError::ConditionalCheckFailedException(e) = err else {
        panic!("{err:?}");
    };
    assert_eq!(
        util::sorted_sets(e.item().expect("the old item comes with the error")),
        util::sorted_sets(&fixture_item())
    );

    let err = client
        .update_item()
        .table_name(&table)
        .key("p", s("k"))
        .update_expression("SET num = :one")
        .condition_expression("num = :one")
        .expression_attribute_values(":one", n("1"))
        .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    let UpdateItemError::ConditionalCheckFailedException(e) = err else {
        panic!("{err:?}");
    };
    assert_eq!(e.item().unwrap()["num"], n("5"));

    // NONE (and leaving it out) returns no item.
    let err = client
        .delete_item()
        .table_name(&table)
        .key("p", s("k"))
        .condition_expression("attribute_not_exists(p)")
        .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::None)
        .send()
        .await
        .unwrap_err()
        .into_service_error();
    let DeleteItemError::ConditionalCheckFailedException(e) = err else {
        panic!("{err:?}");
    };
    assert!(e.item().is_none());
}

#[tokio::test]
async fn invalid_conditions_are_validation_errors() {
    let client = util::client();
    let table = fixture(&client).await;
    assert_validation(
        client
            .put_item()
            .table_name(&table)
            .item("p", s("k"))
            .condition_expression("foo(num)")
            .send()
            .await,
        "Invalid ConditionExpression: Invalid function name; function: foo",
    );
    assert_validation(
        client
            .put_item()
            .table_name(&table)
            .item("p", s("k"))
            .condition_expression("num = num")
            .send()
            .await,
        "Invalid ConditionExpression: The first operand must be distinct from the remaining operands for this operator or function; operator: =, first operand: [num]",
    );
    assert_validation(
        client
            .put_item()
            .table_name(&table)
            .item("p", s("k"))
            .condition_expression("attribute_type(num, :t)")
            .expression_attribute_values(":t", s("XX"))
            .send()
            .await,
        "Invalid ConditionExpression: Invalid attribute type name found; type: XX, valid types: {N,BS,L,B,NULL,M,S,SS,NS,BOOL}",
    );
    assert_validation(
        client
            .put_item()
            .table_name(&table)
            .item("p", s("k"))
            .condition_expression("num = :v")
            .expression_attribute_values(":v", AttributeValue::Ns(vec![]))
            .send()
            .await,
        // AWS's current wording for item writes (moto's AWS-verified
        // test_update_item_unused_attributes); DynamoDB Local still says
        // "ExpressionAttributeValues contains invalid value: ... for key :v".
        "1 validation error detected: One or more parameter values were invalid: An number set  may not be empty",
    );
}
