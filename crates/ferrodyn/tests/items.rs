//! Single-item operations: PutItem, GetItem, UpdateItem and DeleteItem, with
//! ConsistentRead, ProjectionExpression, ExpressionAttributeNames/Values
//! bookkeeping (unused or undefined ones are errors, reserved words must be
//! escaped) and ReturnValues.

use std::collections::HashMap;

use crate::util::{
    self, assert_error_one_of, assert_validation, item, l, m, n, s, sorted_sets, ss,
};
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValue};
use aws_sdk_dynamodb::Client;

async fn fixture(client: &Client) -> (String, HashMap<String, AttributeValue>) {
    let table = util::table_s(client).await;
    let full = item(&[
        ("p", s("k")),
        ("a", n("1")),
        ("name", s("reserved")),
        (
            "b",
            l(vec![s("x"), m(&[("c", s("y")), ("d", s("z"))]), n("3")]),
        ),
        (
            "m",
            m(&[("x", m(&[("y", n("5")), ("w", s("v"))])), ("q", s("r"))]),
        ),
        ("tags", ss(&["t1", "t2"])),
    ]);
    client
        .put_item()
        .table_name(&table)
        .set_item(Some(full.clone()))
        .send()
        .await
        .unwrap();
    (table, full)
}

async fn project(
    client: &Client,
    table: &str,
    projection: &str,
    names: &[(&str, &str)],
) -> HashMap<String, AttributeValue> {
    let mut req = client
        .get_item()
        .table_name(table)
        .key("p", s("k"))
        .consistent_read(true)
        .projection_expression(projection);
    for (k, v) in names {
        req = req.expression_attribute_names(*k, *v);
    }
    req.send().await.unwrap().item.unwrap_or_default()
}

#[tokio::test]
async fn put_then_get_returns_the_item() {
    let client = util::client();
    let (table, full) = fixture(&client).await;
    for consistent in [true, false] {
        let got = client
            .get_item()
            .table_name(&table)
            .key("p", s("k"))
            .consistent_read(consistent)
            .send()
            .await
            .unwrap();
        // Eventually consistent reads may lag on AWS; a single-node server is
        // always consistent, and this one was written before both reads.
        assert_eq!(sorted_sets(&got.item.unwrap()), sorted_sets(&full));
    }
}

#[tokio::test]
async fn get_of_a_missing_item_returns_no_item() {
    let client = util::client();
    let table = util::table_s(&client).await;
    let got = client
        .get_item()
        .table_name(&table)
        .key("p", s("nothing"))
        .send()
        .await
        .unwrap();
    assert!(got.item.is_none());
}

#[tokio::test]
async fn put_replaces_the_whole_item() {
    let client = util::client();
    let (table, _) = fixture(&client).await;
    client
        .put_item()
        .table_name(&table)
        .item("p", s("k"))
        .item("solo1", s("this"))
        .send()
        .await
        .unwrap();
    let got = project(&client, &table, "p, solo1, a", &[]).await;
    assert_eq!(got, item(&[("p", s("k")), ("solo1", s("this"))]));
}

#[tokio::test]
async fn delete_removes_the_item_and_is_idempotent() {
    let client = util::client();
    let (table, _) = fixture(&client).await;
    for _ in 0..2 {
        client
            .delete_item()
            .table_name(&table)
            .key("p", s("k"))
            .send()
            .await
            .unwrap();
    }
    let got = client
        .get_item()
        .table_name(&table)
        .key("p", s("k"))
        .consistent_read(true)
        .send()
        .await
        .unwrap();
    assert!(got.item.is_none());
}

#[tokio::test]
async fn update_creates_a_missing_item() {
    let client = util::client();
    let table = util::table_s(&client).await;
    client
        .update_item()
        .table_name(&table)
        .key("p", s("new"))
        .update_expression("SET a = :v")
        .expression_attribute_values(":v", n("7"))
        .send()
        .await
        .unwrap();
    let got = client
        .get_item()
        .table_name(&table)
        .key("p", s("new"))
        .consistent_read(true)
        .send()
        .await
        .unwrap();
    assert_eq!(got.item.unwrap(), item(&[("p", s("new")), ("a", n("7"))]));
}

#[tokio::test]
async fn projection_selects_top_level_nested_and_indexed_paths() {
    let client = util::client();
    let (table, _) = fixture(&client).await;
    assert_eq!(
        project(&client, &table, "a, tags", &[]).await,
        item(&[("a", n("1")), ("tags", ss(&["t1", "t2"]))])
    );
    assert_eq!(
        project(&client, &table, "m.x.y", &[]).await,
        item(&[("m", m(&[("x", m(&[("y", n("5"))]))]))])
    );
    // List elements keep their relative order, renumbered from zero.
    assert_eq!(
        project(&client, &table, "b[2], b[1].c", &[]).await,
        item(&[("b", l(vec![m(&[("c", s("y"))]), n("3")]))])
    );
    assert_eq!(
        project(&client, &table, "#n, #m.q", &[("#n", "name"), ("#m", "m")]).await,
        item(&[("name", s("reserved")), ("m", m(&[("q", s("r"))]))])
    );
    // Paths that match nothing are simply absent.
    assert_eq!(
        project(&client, &table, "gone1, b[9], m.nope", &[]).await,
        item(&[])
    );
}

#[tokio::test]
async fn overlapping_projection_paths_are_rejected() {
    let client = util::client();
    let (table, _) = fixture(&client).await;
    assert_validation(
        client
            .get_item()
            .table_name(&table)
            .key("p", s("k"))
            .projection_expression("b, b[0]")
            .send()
            .await,
        "Invalid ProjectionExpression: Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [b], path two: [b, [0]]",
    );
}

#[tokio::test]
async fn reserved_word_in_an_expression_is_rejected() {
    let client = util::client();
    let (table, _) = fixture(&client).await;
    assert_validation(
        client
            .get_item()
            .table_name(&table)
            .key("p", s("k"))
            .projection_expression("name")
            .send()
            .await,
        "Invalid ProjectionExpression: Attribute name is a reserved keyword; reserved keyword: name",
    );
    assert_validation(
        client
            .update_item()
            .table_name(&table)
            .key("p", s("k"))
            .update_expression("SET name = :v")
            .expression_attribute_values(":v", n("1"))
            .send()
            .await,
        "Invalid UpdateExpression: Attribute name is a reserved keyword; reserved keyword: name",
    );
}

#[tokio::test]
async fn unused_expression_attribute_names_and_values_are_rejected() {
    let client = util::client();
    let (table, _) = fixture(&client).await;
    assert_validation(
        client
            .get_item()
            .table_name(&table)
            .key("p", s("k"))
            .projection_expression("a")
            .expression_attribute_names("#x", "y")
            .send()
            .await,
        "Value provided in ExpressionAttributeNames unused in expressions: keys: {#x}",
    );
    assert_validation(
        client
            .put_item()
            .table_name(&table)
            .item("p", s("k"))
            .condition_expression("a = :v")
            .expression_attribute_values(":v", n("1"))
            .expression_attribute_values(":w", n("2"))
            .send()
            .await,
        // Item writes prefix it, reads do not (moto's AWS-verified tests).
        "1 validation error detected: Value provided in ExpressionAttributeValues unused in expressions: keys: {:w}",
    );
    // Names or values without any expression at all.
    assert_validation(
        client
            .get_item()
            .table_name(&table)
            .key("p", s("k"))
            .expression_attribute_names("#x", "y")
            .send()
            .await,
        "ExpressionAttributeNames can only be specified when using expressions",
    );
    assert_validation(
        client
            .put_item()
            .table_name(&table)
            .item("p", s("k"))
            .expression_attribute_values(":v", n("1"))
            .send()
            .await,
        "ExpressionAttributeValues can only be specified when using expressions: ConditionExpression is null",
    );
}

#[tokio::test]
async fn undefined_expression_attribute_names_and_values_are_rejected() {
    let client = util::client();
    let (table, _) = fixture(&client).await;
    assert_validation(
        client
            .get_item()
            .table_name(&table)
            .key("p", s("k"))
            .projection_expression("#x")
            .send()
            .await,
        "Invalid ProjectionExpression: An expression attribute name used in the document path is not defined; attribute name: #x",
    );
    assert_validation(
        client
            .put_item()
            .table_name(&table)
            .item("p", s("k"))
            .condition_expression("a = :v")
            .send()
            .await,
        "Invalid ConditionExpression: An expression attribute value used in expression is not defined; attribute value: :v",
    );
}

#[tokio::test]
async fn empty_projection_and_syntax_errors_are_rejected() {
    let client = util::client();
    let (table, _) = fixture(&client).await;
    assert_validation(
        client
            .get_item()
            .table_name(&table)
            .key("p", s("k"))
            .projection_expression("")
            .send()
            .await,
        "Invalid ProjectionExpression: The expression can not be empty;",
    );
    assert_validation(
        client
            .put_item()
            .table_name(&table)
            .item("p", s("k"))
            .condition_expression("a = ")
            .send()
            .await,
        "Invalid ConditionExpression: Syntax error; token: \"<EOF>\", near: \"= \"",
    );
}

#[tokio::test]
async fn put_return_values_none_and_all_old() {
    let client = util::client();
    let (table, full) = fixture(&client).await;
    let none = client
        .put_item()
        .table_name(&table)
        .item("p", s("k"))
        .item("v", n("2"))
        .return_values(ReturnValue::None)
        .send()
        .await
        .unwrap();
    assert!(none.attributes.is_none());
    let old = client
        .put_item()
        .table_name(&table)
        .item("p", s("k"))
        .item("v", n("3"))
        .return_values(ReturnValue::AllOld)
        .send()
        .await
        .unwrap();
    assert_eq!(
        old.attributes.unwrap(),
        item(&[("p", s("k")), ("v", n("2"))])
    );
    let _ = full;
    let fresh = client
        .put_item()
        .table_name(&table)
        .item("p", s("fresh"))
        .return_values(ReturnValue::AllOld)
        .send()
        .await
        .unwrap();
    assert!(fresh.attributes.is_none(), "no old item, no attributes");
}

#[tokio::test]
async fn put_and_delete_reject_return_values_other_than_none_and_all_old() {
    // DynamoDB Local: "Return values set to invalid value".
    let client = util::client();
    let table = util::table_s(&client).await;
    for rv in [
        ReturnValue::UpdatedNew,
        ReturnValue::AllNew,
        ReturnValue::UpdatedOld,
    ] {
        assert_validation(
            client
                .put_item()
                .table_name(&table)
                .item("p", s("k"))
                .return_values(rv.clone())
                .send()
                .await,
            "ReturnValues can only be ALL_OLD or NONE",
        );
        assert_validation(
            client
                .delete_item()
                .table_name(&table)
                .key("p", s("k"))
                .return_values(rv)
                .send()
                .await,
            "ReturnValues can only be ALL_OLD or NONE",
        );
    }
}

#[tokio::test]
async fn unknown_return_values_is_rejected() {
    let client = util::client();
    let table = util::table_s(&client).await;
    let result = client
        .update_item()
        .table_name(&table)
        .key("p", s("k"))
        .update_expression("SET a = :v")
        .expression_attribute_values(":v", n("1"))
        .return_values(ReturnValue::from("BOGUS"))
        .send()
        .await;
    assert_error_one_of(
        result,
        "ValidationException",
        &[
            "1 validation error detected: Value 'BOGUS' at 'returnValues' failed to satisfy constraint: Member must satisfy enum value set: [ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW]",
            "Return values set to invalid value",
        ],
    );
}

#[tokio::test]
async fn delete_returns_the_old_item() {
    let client = util::client();
    let (table, full) = fixture(&client).await;
    let deleted = client
        .delete_item()
        .table_name(&table)
        .key("p", s("k"))
        .return_values(ReturnValue::AllOld)
        .send()
        .await
        .unwrap();
    assert_eq!(
        sorted_sets(&deleted.attributes.unwrap()),
        sorted_sets(&full)
    );
    let again = client
        .delete_item()
        .table_name(&table)
        .key("p", s("k"))
        .return_values(ReturnValue::AllOld)
        .send()
        .await
        .unwrap();
    assert!(again.attributes.is_none());
}

#[tokio::test]
async fn update_return_values_cover_each_mode() {
    let client = util::client();
    let table = util::table_s(&client).await;
    client
        .put_item()
        .table_name(&table)
        .item("p", s("k"))
        .item("a", n("1"))
        .item("b", s("keep"))
        .item("c", s("gone"))
        .send()
        .await
        .unwrap();
    let update = |rv: ReturnValue, a: &str| {
        client
            .update_item()
            .table_name(&table)
            .key("p", s("k"))
            .update_expression("SET a = :a, d = :d REMOVE c")
            .expression_attribute_values(":a", n(a))
            .expression_attribute_values(":d", s("new"))
            .return_values(rv)
            .send()
    };
    let none = update(ReturnValue::None, "2").await.unwrap();
    assert!(none.attributes.is_none());

    client
        .put_item()
        .table_name(&table)
        .item("p", s("k"))
        .item("a", n("1"))
        .item("b", s("keep"))
        .item("c", s("gone"))
        .send()
        .await
        .unwrap();
    let updated_old = update(ReturnValue::UpdatedOld, "2").await.unwrap();
    // Only attributes that were updated and existed before: a and c.
    assert_eq!(
        updated_old.attributes.unwrap(),
        item(&[("a", n("1")), ("c", s("gone"))])
    );
    let updated_new = update(ReturnValue::UpdatedNew, "3").await.unwrap();
    // Only attributes that were updated and exist after: a and d.
    assert_eq!(
        updated_new.attributes.unwrap(),
        item(&[("a", n("3")), ("d", s("new"))])
    );
    let all_old = update(ReturnValue::AllOld, "4").await.unwrap();
    assert_eq!(
        all_old.attributes.unwrap(),
        item(&[
            ("p", s("k")),
            ("a", n("3")),
            ("b", s("keep")),
            ("d", s("new"))
        ])
    );
    let all_new = update(ReturnValue::AllNew, "5").await.unwrap();
    assert_eq!(
        all_new.attributes.unwrap(),
        item(&[
            ("p", s("k")),
            ("a", n("5")),
            ("b", s("keep")),
            ("d", s("new"))
        ])
    );
}

#[tokio::test]
async fn updated_new_of_a_nested_path_returns_only_that_path() {
    // AWS returns just the updated leaf inside its parents (ScyllaDB's
    // AWS-verified test_update_item_returnvalues_nested); DynamoDB Local
    // returns the whole top-level attribute.
    let client = util::client();
    let table = util::table_s(&client).await;
    client
        .put_item()
        .table_name(&table)
        .item("p", s("k"))
        .item("m", m(&[("x", n("1")), ("y", n("2"))]))
        .send()
        .await
        .unwrap();
    let out = client
        .update_item()
        .table_name(&table)
        .key("p", s("k"))
        .update_expression("SET m.x = :v")
        .expression_attribute_values(":v", n("9"))
        .return_values(ReturnValue::UpdatedNew)
        .send()
        .await
        .unwrap();
    assert_eq!(out.attributes.unwrap(), item(&[("m", m(&[("x", n("9"))]))]));
}

#[tokio::test]
async fn key_attributes_cannot_be_updated() {
    let client = util::client();
    let table = util::table_s(&client).await;
    assert_validation(
        client
            .update_item()
            .table_name(&table)
            .key("p", s("k"))
            .update_expression("SET p = :v")
            .expression_attribute_values(":v", s("other"))
            .send()
            .await,
        "One or more parameter values were invalid: Cannot update attribute p. This attribute is part of the key",
    );
}
