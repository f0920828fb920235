//! Global and local secondary indexes: what each projection type returns,
//! sparse indexes, ConsistentRead on a GSI, index keys in LastEvaluatedKey,
//! and a GSI created with UpdateTable on a populated table while writes go
//! on (IndexStatus CREATING, then ACTIVE with every item).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::util::txn::Item;
use crate::util::{self, attr_def, get_s, item, key, n, s};
use aws_sdk_dynamodb::types::{
    BillingMode, CreateGlobalSecondaryIndexAction, GlobalSecondaryIndex,
    GlobalSecondaryIndexUpdate, IndexStatus, KeyType, LocalSecondaryIndex, Projection,
    ProjectionType, ScalarAttributeType, Select,
};
use aws_sdk_dynamodb::Client;

fn projection(ty: ProjectionType, include: &[&str]) -> Projection {
    let mut p = Projection::builder().projection_type(ty);
    for a in include {
        p = p.non_key_attributes(*a);
    }
    p.build()
}

fn gsi(name: &str, ty: ProjectionType, include: &[&str]) -> GlobalSecondaryIndex {
    GlobalSecondaryIndex::builder()
        .index_name(name)
        .key_schema(key("g", KeyType::Hash))
        .key_schema(key("gs", KeyType::Range))
        .projection(projection(ty, include))
        .build()
        .unwrap()
}

fn lsi(name: &str, ty: ProjectionType, include: &[&str]) -> LocalSecondaryIndex {
    LocalSecondaryIndex::builder()
        .index_name(name)
        .key_schema(key("p", KeyType::Hash))
        .key_schema(key("l", KeyType::Range))
        .projection(projection(ty, include))
        .build()
        .unwrap()
}

/// Table `p`/`c` with GSIs on `g`/`gs` and LSIs on `l`, one per projection
/// type, holding `count` items in partition `P`; item i has `g = "G"` only
/// when i is even (the GSIs are sparse), and `l`, `a1`, `a2` always.
async fn indexed_table(client: &Client, count: usize) -> String {
    let table = util::unique_name("idx");
    client
        .create_table()
        .table_name(&table)
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(key("p", KeyType::Hash))
        .key_schema(key("c", KeyType::Range))
        .attribute_definitions(attr_def("p", ScalarAttributeType::S))
        .attribute_definitions(attr_def("c", ScalarAttributeType::S))
        .attribute_definitions(attr_def("g", ScalarAttributeType::S))
        .attribute_definitions(attr_def("gs", ScalarAttributeType::N))
        .attribute_definitions(attr_def("l", ScalarAttributeType::S))
        .global_secondary_indexes(gsi("gsi_keys", ProjectionType::KeysOnly, &[]))
        .global_secondary_indexes(gsi("gsi_include", ProjectionType::Include, &["a1"]))
        .global_secondary_indexes(gsi("gsi_all", ProjectionType::All, &[]))
        .local_secondary_indexes(lsi("lsi_keys", ProjectionType::KeysOnly, &[]))
        .local_secondary_indexes(lsi("lsi_include", ProjectionType::Include, &["a1"]))
        .local_secondary_indexes(lsi("lsi_all", ProjectionType::All, &[]))
        .send()
        .await
        .expect("CreateTable with indexes succeeds");
    for i in 0..count {
        let mut it = item(&[
            ("p", s("P")),
            ("c", s(&format!("c{i:03}"))),
            ("l", s(&format!("l{:03}", count - i))),
            ("a1", s(&format!("one{i}"))),
            ("a2", s(&format!("two{i}"))),
        ]);
        if i % 2 == 0 {
            it.insert("g".into(), s("G"));
            it.insert("gs".into(), n(&i.to_string()));
        }
        client
            .put_item()
            .table_name(&table)
            .set_item(Some(it))
            .send()
            .await
            .unwrap();
    }
    table
}

fn names(items: &[Item]) -> BTreeSet<String> {
    items.iter().flat_map(|i| i.keys().cloned()).collect()
}

fn set(v: &[&str]) -> BTreeSet<String> {
    v.iter().map(|s| s.to_string()).collect()
}

async fn query_gsi(client: &Client, table: &str, index: &str) -> Vec<Item> {
    client
        .query()
        .table_name(table)
        .index_name(index)
        .key_condition_expression("g = :g")
        .expression_attribute_values(":g", s("G"))
        .send()
        .await
        .unwrap()
        .items()
        .to_vec()
}

async fn query_lsi(client: &Client, table: &str, index: &str) -> Vec<Item> {
    client
        .query()
        .table_name(table)
        .index_name(index)
        .key_condition_expression("p = :p")
        .expression_attribute_values(":p", s("P"))
        .send()
        .await
        .unwrap()
        .items()
        .to_vec()
}

#[tokio::test]
async fn gsi_query_returns_what_each_projection_type_projects() {
    let client = util::client();
    let table = indexed_table(&client, 10).await;
    let keys = query_gsi(&client, &table, "gsi_keys").await;
    assert_eq!(keys.len(), 5, "the sparse GSI holds the 5 items with g");
    assert_eq!(names(&keys), set(&["p", "c", "g", "gs"]));
    let include = query_gsi(&client, &table, "gsi_include").await;
    assert_eq!(names(&include), set(&["p", "c", "g", "gs", "a1"]));
    let all = query_gsi(&client, &table, "gsi_all").await;
    assert_eq!(names(&all), set(&["p", "c", "g", "gs", "l", "a1", "a2"]));
    // Ordered by the index sort key (a number): 0, 2, 4, 6, 8.
    let order: Vec<&str> = all.iter().map(|i| get_s(i, "c")).collect();
    assert_eq!(order, ["c000", "c002", "c004", "c006", "c008"]);
    // A GSI cannot fetch what it does not project.
    let err = util::service_error(
        client
            .query()
            .table_name(&table)
            .index_name("gsi_keys")
            .key_condition_expression("g = :g")
            .expression_attribute_values(":g", s("G"))
            .select(Select::AllAttributes)
            .send()
            .await,
    );
    assert_eq!(err.code, "ValidationException", "{err:?}");
}

#[tokio::test]
async fn lsi_query_returns_what_each_projection_type_projects() {
    let client = util::client();
    let table = indexed_table(&client, 10).await;
    let keys = query_lsi(&client, &table, "lsi_keys").await;
    assert_eq!(keys.len(), 10);
    assert_eq!(names(&keys), set(&["p", "c", "l"]));
    // Ordered by the LSI sort key, the reverse of the table's.
    let order: Vec<&str> = keys.iter().map(|i| get_s(i, "c")).collect();
    let expected: Vec<String> = (0..10).rev().map(|i| format!("c{i:03}")).collect();
    assert_eq!(order, expected);
    let include = query_lsi(&client, &table, "lsi_include").await;
    assert_eq!(names(&include), set(&["p", "c", "l", "a1"]));
    let all = query_lsi(&client, &table, "lsi_all").await;
    assert_eq!(names(&all), set(&["p", "c", "l", "a1", "a2", "g", "gs"]));
    // An LSI fetches unprojected attributes from the table when asked.
    let out = client
        .query()
        .table_name(&table)
        .index_name("lsi_keys")
        .key_condition_expression("p = :p")
        .expression_attribute_values(":p", s("P"))
        .select(Select::AllAttributes)
        .send()
        .await
        .unwrap();
    assert_eq!(
        names(out.items()),
        set(&["p", "c", "l", "a1", "a2", "g", "gs"])
    );
}

#[tokio::test]
async fn sparse_gsi_holds_only_items_with_its_key() {
    let client = util::client();
    let table = indexed_table(&client, 12).await;
    let scanned = util::scan_all(&client, &table, Some("gsi_all")).await;
    assert_eq!(scanned.len(), 6);
    assert!(scanned.iter().all(|i| i.contains_key("g")));
    // Removing the key attribute takes the item out of the index; adding it
    // puts it in.
    client
        .update_item()
        .table_name(&table)
        .key("p", s("P"))
        .key("c", s("c000"))
        .update_expression("REMOVE g")
        .send()
        .await
        .unwrap();
    client
        .update_item()
        .table_name(&table)
        .key("p", s("P"))
        .key("c", s("c001"))
        .update_expression("SET g = :g, gs = :n")
        .expression_attribute_values(":g", s("G"))
        .expression_attribute_values(":n", n("1"))
        .send()
        .await
        .unwrap();
    let keys: BTreeSet<String> = util::scan_all(&client, &table, Some("gsi_keys"))
        .await
        .iter()
        .map(|i| get_s(i, "c").to_string())
        .collect();
    assert_eq!(keys, set(&["c001", "c002", "c004", "c006", "c008", "c010"]));
}

#[tokio::test]
async fn consistent_read_on_a_gsi_is_a_validation_error() {
    let client = util::client();
    let table = indexed_table(&client, 2).await;
    let result = client
        .query()
        .table_name(&table)
        .index_name("gsi_all")
        .key_condition_expression("g = :g")
        .expression_attribute_values(":g", s("G"))
        .consistent_read(true)
        .send()
        .await;
    util::assert_validation(
        result,
        "Consistent reads are not supported on global secondary indexes",
    );
    let result = client
        .scan()
        .table_name(&table)
        .index_name("gsi_keys")
        .consistent_read(true)
        .send()
        .await;
    util::assert_validation(
        result,
        "Consistent reads are not supported on global secondary indexes",
    );
    // On an LSI it is allowed.
    client
        .query()
        .table_name(&table)
        .index_name("lsi_all")
        .key_condition_expression("p = :p")
        .expression_attribute_values(":p", s("P"))
        .consistent_read(true)
        .send()
        .await
        .expect("ConsistentRead on an LSI is allowed");
}

#[tokio::test]
async fn index_keys_appear_in_last_evaluated_key() {
    let client = util::client();
    let table = indexed_table(&client, 10).await;
    // GSI: the table key plus the index key.
    let mut start: Option<Item> = None;
    let mut seen = Vec::new();
    loop {
        let out = client
            .query()
            .table_name(&table)
            .index_name("gsi_keys")
            .key_condition_expression("g = :g")
            .expression_attribute_values(":g", s("G"))
            .limit(2)
            .set_exclusive_start_key(start.take())
            .send()
            .await
            .unwrap();
        seen.extend(out.items().iter().map(|i| get_s(i, "c").to_string()));
        match out.last_evaluated_key() {
            Some(key) => {
                assert_eq!(
                    key.keys().cloned().collect::<BTreeSet<_>>(),
                    set(&["p", "c", "g", "gs"])
                );
                let last = out.items().last().unwrap();
                assert_eq!(key.get("gs"), last.get("gs"));
                assert_eq!(key.get("c"), last.get("c"));
                start = Some(key.clone());
            }
            None => break,
        }
    }
    assert_eq!(seen, ["c000", "c002", "c004", "c006", "c008"]);

    // LSI: the table key plus the LSI sort key.
    let out = client
        .query()
        .table_name(&table)
        .index_name("lsi_keys")
        .key_condition_expression("p = :p")
        .expression_attribute_values(":p", s("P"))
        .limit(3)
        .send()
        .await
        .unwrap();
    let key = out.last_evaluated_key().expect("a full page has a key");
    assert_eq!(
        key.keys().cloned().collect::<BTreeSet<_>>(),
        set(&["p", "c", "l"])
    );
    // Scan on a GSI too.
    let out = client
        .scan()
        .table_name(&table)
        .index_name("gsi_include")
        .limit(1)
        .send()
        .await
        .unwrap();
    let key = out.last_evaluated_key().expect("a full page has a key");
    assert_eq!(
        key.keys().cloned().collect::<BTreeSet<_>>(),
        set(&["p", "c", "g", "gs"])
    );
}

/// What the GSI on `k` should hold: item key `id` → its `k` value.
fn expected_index(items: &[Item]) -> BTreeMap<String, String> {
    items
        .iter()
        .filter(|i| i.contains_key("k"))
        .map(|i| (get_s(i, "id").to_string(), get_s(i, "k").to_string()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn gsi_created_on_a_populated_table_backfills_while_writes_continue() {
    let client = util::client();
    let table = util::create_table(&client, "backfill", &[("id", ScalarAttributeType::S)]).await;
    for chunk in 0..20 {
        let requests = (chunk * 25..(chunk + 1) * 25)
            .map(|i| {
                aws_sdk_dynamodb::types::WriteRequest::builder()
                    .put_request(
                        aws_sdk_dynamodb::types::PutRequest::builder()
                            .set_item(Some(item(&[
                                ("id", s(&format!("old{i:04}"))),
                                ("k", s(&format!("K{}", i % 7))),
                                ("payload", s("x")),
                            ])))
                            .build()
                            .unwrap(),
                    )
                    .build()
            })
            .collect();
        client
            .batch_write_item()
            .request_items(&table, requests)
            .send()
            .await
            .unwrap();
    }

    // A writer adds items, re-keys old ones and deletes some while the index
    // is built.
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let client = util::client();
        let table = table.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            let mut n = 0usize;
            while !stop.load(Ordering::SeqCst) || n < 30 {
                client
                    .put_item()
                    .table_name(&table)
                    .set_item(Some(item(&[
                        ("id", s(&format!("new{n:04}"))),
                        ("k", s(&format!("K{}", n % 7))),
                    ])))
                    .send()
                    .await
                    .unwrap();
                client
                    .update_item()
                    .table_name(&table)
                    .key("id", s(&format!("old{:04}", (n * 7) % 500)))
                    .update_expression("SET k = :k")
                    .expression_attribute_values(":k", s("MOVED"))
                    .send()
                    .await
                    .unwrap();
                client
                    .delete_item()
                    .table_name(&table)
                    .key("id", s(&format!("old{:04}", (n * 11 + 3) % 500)))
                    .send()
                    .await
                    .unwrap();
                n += 1;
            }
            n
        })
    };

    let out = client
        .update_table()
        .table_name(&table)
        .attribute_definitions(attr_def("k", ScalarAttributeType::S))
        .global_secondary_index_updates(
            GlobalSecondaryIndexUpdate::builder()
                .create(
                    CreateGlobalSecondaryIndexAction::builder()
                        .index_name("by_k")
                        .key_schema(key("k", KeyType::Hash))
                        .projection(projection(ProjectionType::All, &[]))
                        .build()
                        .unwrap(),
                )
                .build(),
        )
        .send()
        .await
        .expect("UpdateTable creating a GSI succeeds");
    let described = out.table_description().unwrap();
    let index = described
        .global_secondary_indexes()
        .iter()
        .find(|i| i.index_name() == Some("by_k"))
        .expect("the new index is described");
    assert_eq!(index.index_status(), Some(&IndexStatus::Creating));

    let status = util::poll_until("the GSI to become ACTIVE", Duration::from_secs(60), || {
        let client = client.clone();
        let table = table.clone();
        async move {
            let out = client
                .describe_table()
                .table_name(&table)
                .send()
                .await
                .unwrap();
            let index = out
                .table()
                .unwrap()
                .global_secondary_indexes()
                .iter()
                .find(|i| i.index_name() == Some("by_k"))
                .cloned()
                .expect("the index stays described");
            match index.index_status() {
                Some(IndexStatus::Active) => Some(index),
                Some(IndexStatus::Creating) => None,
                other => panic!("unexpected IndexStatus {other:?}"),
            }
        }
    })
    .await;
    assert_eq!(status.index_status(), Some(&IndexStatus::Active));
    stop.store(true, Ordering::SeqCst);
    let written = writer.await.unwrap();
    assert!(written >= 30);

    // GSIs are eventually consistent: poll until the index matches the table.
    let base = util::scan_all(&client, &table, None).await;
    let expected = expected_index(&base);
    assert!(expected.keys().any(|k| k.starts_with("new")));
    assert!(expected.values().any(|k| k == "MOVED"));
    let mut last = BTreeMap::new();
    let matched = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            last = expected_index(&util::scan_all(&client, &table, Some("by_k")).await);
            if last == expected {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await;
    assert!(
        matched.is_ok(),
        "the index never matched the table: {} entries expected, {} found; missing {:?}; extra {:?}",
        expected.len(),
        last.len(),
        expected
            .iter()
            .filter(|(k, v)| last.get(*k) != Some(v))
            .take(10)
            .collect::<Vec<_>>(),
        last.iter()
            .filter(|(k, v)| expected.get(*k) != Some(v))
            .take(10)
            .collect::<Vec<_>>()
    );
    // And a Query on it finds a re-keyed item.
    let out = client
        .query()
        .table_name(&table)
        .index_name("by_k")
        .key_condition_expression("k = :k")
        .expression_attribute_values(":k", s("MOVED"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        out.count() as usize,
        expected.values().filter(|v| *v == "MOVED").count()
    );
}

#[tokio::test]
async fn index_entries_commit_and_cancel_with_the_transaction() {
    let client = util::client();
    let table = indexed_table(&client, 0).await;
    let row = |c: &str| {
        item(&[
            ("p", s("P")),
            ("c", s(c)),
            ("g", s("T")),
            ("gs", n("1")),
            ("l", s("l")),
        ])
    };
    client
        .transact_write_items()
        .transact_items(util::txn::put(&table, row("in"), None, &[]))
        .send()
        .await
        .unwrap();
    let (_, reasons) = util::txn::canceled(
        client
            .transact_write_items()
            .transact_items(util::txn::put(&table, row("out"), None, &[]))
            .transact_items(util::txn::put_new(&table, row("in"), "p"))
            .send()
            .await,
    );
    assert_eq!(
        util::txn::codes(&reasons),
        ["None", "ConditionalCheckFailed"]
    );
    let in_gsi: Vec<String> = util::scan_all(&client, &table, Some("gsi_all"))
        .await
        .iter()
        .map(|i| get_s(i, "c").to_string())
        .collect();
    assert_eq!(in_gsi, ["in"]);
    let in_lsi: Vec<String> = query_lsi(&client, &table, "lsi_keys")
        .await
        .iter()
        .map(|i| get_s(i, "c").to_string())
        .collect();
    assert_eq!(in_lsi, ["in"]);
}
