//! Scan: pagination with a filter (Limit counts evaluated items), and
//! parallel scan whose segments are disjoint, complete, and stable while
//! items are deleted.

use std::collections::{BTreeMap, BTreeSet};

use crate::util::txn::Item;
use crate::util::{self, get_n, get_s, item, n, s};
use aws_sdk_dynamodb::types::{
    AttributeValue, PutRequest, ScalarAttributeType, Select, WriteRequest,
};
use aws_sdk_dynamodb::Client;

/// A table of `count` items `p = item-NNNN`, `v = N`, loaded with batches.
async fn table_of(client: &Client, count: usize) -> String {
    let table = util::create_table(client, "scan", &[("p", ScalarAttributeType::S)]).await;
    let requests: Vec<WriteRequest> = (0..count)
        .map(|i| {
            WriteRequest::builder()
                .put_request(
                    PutRequest::builder()
                        .set_item(Some(item(&[
                            ("p", s(&format!("item-{i:04}"))),
                            ("v", n(&i.to_string())),
                        ])))
                        .build()
                        .unwrap(),
                )
                .build()
        })
        .collect();
    for chunk in requests.chunks(25) {
        let out = client
            .batch_write_item()
            .request_items(&table, chunk.to_vec())
            .send()
            .await
            .unwrap();
        assert!(out.unprocessed_items().is_none_or(|u| u.is_empty()));
    }
    table
}

#[tokio::test]
async fn scan_pages_with_a_filter_return_every_match_once() {
    let client = util::client();
    let table = table_of(&client, 230).await;
    let mut seen = Vec::new();
    let mut start: Option<Item> = None;
    let mut scanned_total = 0;
    let mut pages = 0;
    loop {
        let out = client
            .scan()
            .table_name(&table)
            .filter_expression("v < :max")
            .expression_attribute_values(":max", n("100"))
            .limit(40)
            .set_exclusive_start_key(start.take())
            .send()
            .await
            .unwrap();
        pages += 1;
        assert!(out.scanned_count() <= 40);
        assert_eq!(out.count() as usize, out.items().len());
        assert!(out.count() <= out.scanned_count());
        scanned_total += out.scanned_count();
        seen.extend(out.items().iter().map(|i| get_n(i, "v")));
        match out.last_evaluated_key() {
            Some(key) => {
                assert_eq!(out.scanned_count(), 40, "a page with a key is full");
                assert_eq!(key.len(), 1, "the table key only: {key:?}");
                assert!(key.contains_key("p"));
                start = Some(key.clone());
            }
            None => break,
        }
        assert!(pages < 20);
    }
    assert_eq!(scanned_total, 230);
    assert!(pages >= 6);
    let unique: BTreeSet<i64> = seen.iter().copied().collect();
    assert_eq!(unique.len(), seen.len(), "an item came back twice");
    assert_eq!(unique, (0..100).collect());
    // Select COUNT over the whole table.
    let out = client
        .scan()
        .table_name(&table)
        .select(Select::Count)
        .send()
        .await
        .unwrap();
    assert_eq!((out.count(), out.scanned_count()), (230, 230));
    assert!(out.items().is_empty());
}

/// Every item of one segment, paged with a small Limit.
async fn segment(client: &Client, table: &str, seg: i32, total: i32) -> Vec<String> {
    let mut keys = Vec::new();
    let mut start: Option<Item> = None;
    loop {
        let out = client
            .scan()
            .table_name(table)
            .segment(seg)
            .total_segments(total)
            .limit(37)
            .set_exclusive_start_key(start.take())
            .send()
            .await
            .unwrap();
        keys.extend(out.items().iter().map(|i| get_s(i, "p").to_string()));
        match out.last_evaluated_key() {
            Some(key) => start = Some(key.clone()),
            None => return keys,
        }
    }
}

async fn parallel_scan(client: &Client, table: &str, total: i32) -> BTreeMap<String, i32> {
    let tasks: Vec<_> = (0..total)
        .map(|seg| {
            let client = client.clone();
            let table = table.to_string();
            tokio::spawn(async move { (seg, segment(&client, &table, seg, total).await) })
        })
        .collect();
    let mut owner = BTreeMap::new();
    for task in tasks {
        let (seg, keys) = task.await.unwrap();
        for key in keys {
            if let Some(other) = owner.insert(key.clone(), seg) {
                panic!("{key} returned by segments {other} and {seg}");
            }
        }
    }
    owner
}

#[tokio::test]
async fn parallel_scan_with_four_segments_returns_every_item_exactly_once() {
    let client = util::client();
    let table = table_of(&client, 400).await;
    let owner = parallel_scan(&client, &table, 4).await;
    let all: BTreeSet<String> = (0..400).map(|i| format!("item-{i:04}")).collect();
    assert_eq!(owner.keys().cloned().collect::<BTreeSet<_>>(), all);
    // Items are spread by hash: every segment has a fair share.
    for seg in 0..4 {
        let count = owner.values().filter(|s| **s == seg).count();
        assert!(
            (40..=160).contains(&count),
            "segment {seg} has {count} of 400 items"
        );
    }
    // One segment of one is the whole table.
    assert_eq!(segment(&client, &table, 0, 1).await.len(), 400);
}

#[tokio::test]
async fn parallel_scan_segments_are_stable_after_deletes() {
    let client = util::client();
    let table = table_of(&client, 300).await;
    let before = parallel_scan(&client, &table, 4).await;
    for i in (0..300).step_by(3) {
        client
            .delete_item()
            .table_name(&table)
            .key("p", s(&format!("item-{i:04}")))
            .send()
            .await
            .unwrap();
    }
    let after = parallel_scan(&client, &table, 4).await;
    assert_eq!(after.len(), 200);
    for (key, seg) in &after {
        assert_eq!(
            before.get(key),
            Some(seg),
            "{key} moved to another segment after deletes"
        );
        let i: usize = key[5..].parse().unwrap();
        assert_ne!(i % 3, 0, "deleted {key} still returned");
    }
}

#[tokio::test]
async fn scan_filter_sees_every_attribute_type() {
    let client = util::client();
    let table = util::table_s(&client).await;
    for (p, v) in [
        ("s", s("x")),
        ("n", n("1")),
        ("bool", AttributeValue::Bool(true)),
        ("null", AttributeValue::Null(true)),
    ] {
        client
            .put_item()
            .table_name(&table)
            .set_item(Some(item(&[("p", s(p)), ("v", v)])))
            .send()
            .await
            .unwrap();
    }
    let out = client
        .scan()
        .table_name(&table)
        .filter_expression("attribute_type(v, :t)")
        .expression_attribute_values(":t", s("N"))
        .send()
        .await
        .unwrap();
    assert_eq!(out.count(), 1);
    assert_eq!(out.scanned_count(), 4);
    assert_eq!(get_s(&out.items()[0], "p"), "n");
}
