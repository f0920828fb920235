//! UpdateExpression: SET (with `+`, `-`, if_not_exists, list_append), REMOVE,
//! ADD (numbers and sets), DELETE (sets), on nested map paths and list
//! indexes, and the errors for operands of the wrong type or paths that do not
//! exist.

use std::collections::HashMap;

use crate::util::{self, assert_validation, item, l, m, n, ns, s, sorted_sets, ss};
use aws_sdk_dynamodb::types::AttributeValue;
use aws_sdk_dynamodb::Client;

/// A table holding one item `p = "k"` with `attrs`.
async fn with_item(client: &Client, attrs: &[(&str, AttributeValue)]) -> String {
    let table = util::table_s(client).await;
    let mut full = item(attrs);
    full.insert("p".into(), s("k"));
    client
        .put_item()
        .table_name(&table)
        .set_item(Some(full))
        .send()
        .await
        .unwrap();
    table
}

async fn update(
    client: &Client,
    table: &str,
    expression: &str,
    values: &[(&str, AttributeValue)],
) -> Result<(), util::ServiceError> {
    let mut req = client
        .update_item()
        .table_name(table)
        .key("p", s("k"))
        .update_expression(expression);
    for (k, v) in values {
        req = req.expression_attribute_values(*k, v.clone());
    }
    req.send()
        .await
        .map(|_| ())
        .map_err(|e| util::service_error::<(), _, _>(Err(e)))
}

async fn current(client: &Client, table: &str) -> HashMap<String, AttributeValue> {
    let mut got = client
        .get_item()
        .table_name(table)
        .key("p", s("k"))
        .consistent_read(true)
        .send()
        .await
        .unwrap()
        .item
        .unwrap();
    got.remove("p");
    sorted_sets(&got)
}

#[tokio::test]
async fn set_with_arithmetic() {
    let client = util::client();
    let table = with_item(&client, &[("a", n("10")), ("b", n("0.5"))]).await;
    update(
        &client,
        &table,
        "SET a = a + :x, b = b - :x, c = :x - a",
        &[(":x", n("3"))],
    )
    .await
    .unwrap();
    // Both sides are read before any assignment: c uses the old a.
    assert_eq!(
        current(&client, &table).await,
        item(&[("a", n("13")), ("b", n("-2.5")), ("c", n("-7"))])
    );
}

#[tokio::test]
async fn arithmetic_is_exact_at_38_digits() {
    let client = util::client();
    let table = with_item(
        &client,
        &[("a", n("9999999999999999999999999999999999999"))],
    )
    .await;
    update(&client, &table, "SET a = a + :one", &[(":one", n("1"))])
        .await
        .unwrap();
    assert_eq!(
        current(&client, &table).await["a"],
        n("10000000000000000000000000000000000000")
    );
    update(&client, &table, "SET a = a - :tiny", &[(":tiny", n("0.1"))])
        .await
        .unwrap();
    assert_eq!(
        current(&client, &table).await["a"],
        n("9999999999999999999999999999999999999.9")
    );
}

#[tokio::test]
async fn if_not_exists_and_list_append() {
    let client = util::client();
    let table = with_item(&client, &[("got1", n("1")), ("lst", l(vec![n("2")]))]).await;
    update(
        &client,
        &table,
        "SET got1 = if_not_exists(got1, :zero), fresh = if_not_exists(fresh, :zero), lst = list_append(:front, lst), lst2 = list_append(if_not_exists(lst2, :empty), :front)",
        &[
            (":zero", n("0")),
            (":front", l(vec![n("1")])),
            (":empty", l(vec![])),
        ],
    )
    .await
    .unwrap();
    assert_eq!(
        current(&client, &table).await,
        item(&[
            ("got1", n("1")),
            ("fresh", n("0")),
            ("lst", l(vec![n("1"), n("2")])),
            ("lst2", l(vec![n("1")])),
        ])
    );
}

#[tokio::test]
async fn nested_map_paths_and_list_indexes() {
    let client = util::client();
    let table = with_item(
        &client,
        &[
            ("mp", m(&[("x", m(&[("y", n("1"))]))])),
            ("lst", l(vec![s("a"), s("b"), s("c")])),
        ],
    )
    .await;
    update(
        &client,
        &table,
        "SET mp.x.y = :v, mp.x.z = :v, lst[1] = :v, lst[10] = :end REMOVE lst[0]",
        &[(":v", n("9")), (":end", s("end"))],
    )
    .await
    .unwrap();
    // An index past the end appends; REMOVE shifts the rest down.
    assert_eq!(
        current(&client, &table).await,
        item(&[
            ("mp", m(&[("x", m(&[("y", n("9")), ("z", n("9"))]))])),
            ("lst", l(vec![n("9"), s("c"), s("end")])),
        ])
    );
}

#[tokio::test]
async fn remove_top_level_and_nested() {
    let client = util::client();
    let table = with_item(
        &client,
        &[
            ("a", n("1")),
            ("b", n("2")),
            ("mp", m(&[("x", n("1")), ("y", n("2"))])),
        ],
    )
    .await;
    update(&client, &table, "REMOVE a, mp.x, nosuch", &[])
        .await
        .unwrap();
    assert_eq!(
        current(&client, &table).await,
        item(&[("b", n("2")), ("mp", m(&[("y", n("2"))]))])
    );
}

#[tokio::test]
async fn add_to_numbers_and_sets() {
    let client = util::client();
    let table = with_item(&client, &[("cnt", n("5")), ("tags", ss(&["a"]))]).await;
    update(
        &client,
        &table,
        "ADD cnt :two, tags :tags, newcnt :two, newset :nums",
        &[
            (":two", n("2")),
            (":tags", ss(&["a", "b"])),
            (":nums", ns(&["1", "2"])),
        ],
    )
    .await
    .unwrap();
    assert_eq!(
        current(&client, &table).await,
        sorted_sets(&item(&[
            ("cnt", n("7")),
            ("tags", ss(&["a", "b"])),
            ("newcnt", n("2")),
            ("newset", ns(&["1", "2"])),
        ]))
    );
}

#[tokio::test]
async fn delete_from_sets_and_removing_the_last_member_removes_the_attribute() {
    let client = util::client();
    let table = with_item(
        &client,
        &[("tags", ss(&["a", "b", "c"])), ("nums", ns(&["1"]))],
    )
    .await;
    update(
        &client,
        &table,
        "DELETE tags :gone, nums :one",
        &[(":gone", ss(&["a", "c", "zz"])), (":one", ns(&["1"]))],
    )
    .await
    .unwrap();
    assert_eq!(
        current(&client, &table).await,
        item(&[("tags", ss(&["b"]))])
    );
}

#[tokio::test]
async fn operands_of_the_wrong_type_are_rejected() {
    let client = util::client();
    let table = with_item(&client, &[("a", n("1")), ("lst", l(vec![]))]).await;
    let cases: [(&str, AttributeValue, &str); 4] = [
        (
            "SET a = a + :v",
            s("1"),
            "Invalid UpdateExpression: Incorrect operand type for operator or function; operator or function: +, operand type: S",
        ),
        (
            "ADD a :v",
            s("1"),
            "Invalid UpdateExpression: Incorrect operand type for operator or function; operator: ADD, operand type: STRING, typeSet: ALLOWED_FOR_ADD_OPERAND",
        ),
        (
            "DELETE a :v",
            n("1"),
            "Invalid UpdateExpression: Incorrect operand type for operator or function; operator: DELETE, operand type: NUMBER, typeSet: ALLOWED_FOR_DELETE_OPERAND",
        ),
        (
            "SET lst = list_append(lst, :v)",
            n("1"),
            "Invalid UpdateExpression: Incorrect operand type for operator or function; operator or function: list_append, operand type: N",
        ),
    ];
    for (expression, value, message) in cases {
        let err = update(&client, &table, expression, &[(":v", value)])
            .await
            .unwrap_err();
        assert_eq!(
            (err.code.as_str(), err.message.as_str()),
            ("ValidationException", message),
            "{expression}"
        );
    }
}

#[tokio::test]
async fn paths_that_do_not_exist_are_rejected() {
    let client = util::client();
    let table = with_item(&client, &[("lst", l(vec![s("x")]))]).await;
    let err = update(&client, &table, "SET z = z + :v", &[(":v", n("1"))])
        .await
        .unwrap_err();
    assert_eq!(
        err.message,
        "The provided expression refers to an attribute that does not exist in the item"
    );
    for expression in ["SET nosuch.q = :v", "SET lst[0].q = :v"] {
        let err = update(&client, &table, expression, &[(":v", n("1"))])
            .await
            .unwrap_err();
        assert_eq!(
            (err.code.as_str(), err.message.as_str()),
            (
                "ValidationException",
                "The document path provided in the update expression is invalid for update"
            ),
            "{expression}"
        );
    }
}

#[tokio::test]
async fn overlapping_paths_are_rejected() {
    let client = util::client();
    let table = with_item(&client, &[("a", m(&[("b", n("1"))]))]).await;
    assert_validation(
        client
            .update_item()
            .table_name(&table)
            .key("p", s("k"))
            .update_expression("SET a = :v REMOVE a.b")
            .expression_attribute_values(":v", n("1"))
            .send()
            .await,
        "1 validation error detected: Invalid UpdateExpression: Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [a], path two: [a, b]",
    );
}
