//! Query: key conditions (=, <, <=, >, >=, BETWEEN, begins_with), sort order
//! (numbers by value, strings by bytes), ScanIndexForward, Limit (which
//! counts evaluated items, before the filter), pagination with
//! LastEvaluatedKey, Count/ScannedCount and Select COUNT.

use crate::util::txn::Item;
use crate::util::{self, get_n, get_s, item, n, s};
use aws_sdk_dynamodb::types::{AttributeValue, ScalarAttributeType, Select};
use aws_sdk_dynamodb::Client;

async fn put(client: &Client, table: &str, item: Item) {
    client
        .put_item()
        .table_name(table)
        .set_item(Some(item))
        .send()
        .await
        .unwrap();
}

/// Partition `a` with 100 items `c = 000..099`, `v = i`, `even`; partitions
/// `b` and `z` around it, which a query on `a` must never return.
async fn hundred(client: &Client) -> String {
    let table = util::table_ss(client).await;
    for i in 0..100 {
        put(
            client,
            &table,
            item(&[
                ("p", s("a")),
                ("c", s(&format!("{i:03}"))),
                ("v", n(&i.to_string())),
                ("even", AttributeValue::Bool(i % 2 == 0)),
            ]),
        )
        .await;
    }
    for p in ["b", "z"] {
        for i in 0..5 {
            put(
                client,
                &table,
                item(&[
                    ("p", s(p)),
                    ("c", s(&format!("{i:03}"))),
                    ("even", AttributeValue::Bool(true)),
                ]),
            )
            .await;
        }
    }
    table
}

#[tokio::test]
async fn query_pages_through_a_filtered_partition() {
    let client = util::client();
    let table = hundred(&client).await;
    let mut seen = Vec::new();
    let mut start: Option<Item> = None;
    let mut pages = 0;
    loop {
        let out = client
            .query()
            .table_name(&table)
            .key_condition_expression("p = :p")
            .filter_expression("even = :t")
            .expression_attribute_values(":p", s("a"))
            .expression_attribute_values(":t", AttributeValue::Bool(true))
            .limit(15)
            .set_exclusive_start_key(start.take())
            .send()
            .await
            .unwrap();
        let first = pages * 15;
        let scanned = 15.min(100 - first);
        assert_eq!(out.scanned_count(), scanned, "page {pages}");
        let evens = (first..first + scanned).filter(|i| i % 2 == 0).count();
        assert_eq!(out.count(), evens as i32, "page {pages}");
        assert_eq!(out.items().len(), evens);
        seen.extend(out.items().iter().map(|i| get_n(i, "v")));
        pages += 1;
        match out.last_evaluated_key() {
            Some(key) => {
                // The last item evaluated, even when the filter dropped it.
                let last = first + 14;
                assert_eq!(
                    key,
                    &item(&[("p", s("a")), ("c", s(&format!("{last:03}")))])
                );
                start = Some(key.clone());
            }
            None => break,
        }
        assert!(pages < 20);
    }
    assert_eq!(pages, 7);
    assert_eq!(seen, (0..100).step_by(2).collect::<Vec<i64>>());
}

#[tokio::test]
async fn a_page_ending_exactly_at_the_limit_still_has_a_last_evaluated_key() {
    let client = util::client();
    let table = hundred(&client).await;
    let mut start: Option<Item> = None;
    let mut counts = Vec::new();
    loop {
        let out = client
            .query()
            .table_name(&table)
            .key_condition_expression("p = :p")
            .expression_attribute_values(":p", s("a"))
            .limit(25)
            .set_exclusive_start_key(start.take())
            .send()
            .await
            .unwrap();
        counts.push(out.count());
        match out.last_evaluated_key() {
            Some(key) => start = Some(key.clone()),
            None => break,
        }
    }
    // DynamoDB stops at the Limit without looking further, so the fourth
    // page carries a LastEvaluatedKey and a fifth, empty page ends the query.
    assert_eq!(counts, [25, 25, 25, 25, 0]);
}

#[tokio::test]
async fn limit_counts_evaluated_items_not_matches() {
    let client = util::client();
    let table = hundred(&client).await;
    let out = client
        .query()
        .table_name(&table)
        .key_condition_expression("p = :p")
        .filter_expression("v >= :big")
        .expression_attribute_values(":p", s("a"))
        .expression_attribute_values(":big", n("98"))
        .limit(5)
        .send()
        .await
        .unwrap();
    assert_eq!((out.count(), out.scanned_count()), (0, 5));
    assert!(out.items().is_empty());
    assert_eq!(
        out.last_evaluated_key(),
        Some(&item(&[("p", s("a")), ("c", s("004"))]))
    );
    let out = client
        .query()
        .table_name(&table)
        .key_condition_expression("p = :p")
        .filter_expression("v >= :big")
        .expression_attribute_values(":p", s("a"))
        .expression_attribute_values(":big", n("98"))
        .select(Select::Count)
        .send()
        .await
        .unwrap();
    assert_eq!((out.count(), out.scanned_count()), (2, 100));
    assert!(out.items().is_empty());
}

#[tokio::test]
async fn scan_index_forward_false_pages_in_descending_order() {
    let client = util::client();
    let table = hundred(&client).await;
    let mut seen = Vec::new();
    let mut start: Option<Item> = None;
    loop {
        let out = client
            .query()
            .table_name(&table)
            .key_condition_expression("p = :p AND c < :c")
            .expression_attribute_values(":p", s("a"))
            .expression_attribute_values(":c", s("050"))
            .scan_index_forward(false)
            .limit(12)
            .set_exclusive_start_key(start.take())
            .send()
            .await
            .unwrap();
        seen.extend(out.items().iter().map(|i| get_n(i, "v")));
        match out.last_evaluated_key() {
            Some(key) => start = Some(key.clone()),
            None => break,
        }
    }
    assert_eq!(seen, (0..50).rev().collect::<Vec<i64>>());
}

async fn sort_keys(
    client: &Client,
    table: &str,
    condition: &str,
    values: &[(&str, AttributeValue)],
) -> Vec<String> {
    let mut req = client
        .query()
        .table_name(table)
        .key_condition_expression(condition)
        .expression_attribute_values(":p", s("f"));
    for (k, v) in values {
        req = req.expression_attribute_values(*k, v.clone());
    }
    let out = req.send().await.unwrap();
    out.items()
        .iter()
        .map(|i| match &i["c"] {
            AttributeValue::S(v) | AttributeValue::N(v) => v.clone(),
            other => panic!("{other:?}"),
        })
        .collect()
}

#[tokio::test]
async fn begins_with_between_and_comparisons_on_a_string_sort_key() {
    let client = util::client();
    let table = util::table_ss(&client).await;
    for c in [
        "apple",
        "apricot",
        "banana",
        "blueberry",
        "c",
        "cherry",
        "Zebra",
    ] {
        put(&client, &table, item(&[("p", s("f")), ("c", s(c))])).await;
    }
    let q = |cond: &'static str, vals: Vec<(&'static str, AttributeValue)>| {
        let client = client.clone();
        let table = table.clone();
        async move { sort_keys(&client, &table, cond, &vals).await }
    };
    assert_eq!(
        q("p = :p AND begins_with(c, :x)", vec![(":x", s("ap"))]).await,
        ["apple", "apricot"]
    );
    assert_eq!(
        q(
            "p = :p AND c BETWEEN :lo AND :hi",
            vec![(":lo", s("b")), (":hi", s("c"))]
        )
        .await,
        ["banana", "blueberry", "c"]
    );
    // Byte order: upper case sorts before lower case.
    assert_eq!(
        q("p = :p AND c < :x", vec![(":x", s("apricot"))]).await,
        ["Zebra", "apple"]
    );
    assert_eq!(
        q("p = :p AND c <= :x", vec![(":x", s("apricot"))]).await,
        ["Zebra", "apple", "apricot"]
    );
    assert_eq!(
        q("p = :p AND c > :x", vec![(":x", s("c"))]).await,
        ["cherry"]
    );
    assert_eq!(
        q("p = :p AND c >= :x", vec![(":x", s("c"))]).await,
        ["c", "cherry"]
    );
    assert_eq!(
        q("p = :p AND c = :x", vec![(":x", s("banana"))]).await,
        ["banana"]
    );
}

#[tokio::test]
async fn numeric_sort_keys_order_by_value() {
    let client = util::client();
    let table = util::create_table(
        &client,
        "num",
        &[("p", ScalarAttributeType::S), ("c", ScalarAttributeType::N)],
    )
    .await;
    for c in ["10", "-5", "2", "100", "-0.5", "1.5", "0", "-100", "1E+2"] {
        put(&client, &table, item(&[("p", s("f")), ("c", n(c))])).await;
    }
    // "1E+2" is 100: it overwrote the item "100".
    assert_eq!(
        sort_keys(&client, &table, "p = :p", &[]).await,
        ["-100", "-5", "-0.5", "0", "1.5", "2", "10", "100"]
    );
    assert_eq!(
        sort_keys(
            &client,
            &table,
            "p = :p AND c BETWEEN :lo AND :hi",
            &[(":lo", n("-5")), (":hi", n("10"))]
        )
        .await,
        ["-5", "-0.5", "0", "1.5", "2", "10"]
    );
    assert_eq!(
        sort_keys(&client, &table, "p = :p AND c > :x", &[(":x", n("2"))]).await,
        ["10", "100"]
    );
}

#[tokio::test]
async fn query_returns_only_the_partition_asked_for() {
    let client = util::client();
    let table = hundred(&client).await;
    let out = client
        .query()
        .table_name(&table)
        .key_condition_expression("p = :p")
        .expression_attribute_values(":p", s("b"))
        .send()
        .await
        .unwrap();
    assert_eq!(out.count(), 5);
    assert!(out.items().iter().all(|i| get_s(i, "p") == "b"));
    assert!(out.last_evaluated_key().is_none());
    let out = client
        .query()
        .table_name(&table)
        .key_condition_expression("p = :p")
        .expression_attribute_values(":p", s("nothing"))
        .send()
        .await
        .unwrap();
    assert_eq!((out.count(), out.scanned_count()), (0, 0));
}
