//! Item collections of tables with local secondary indexes: the
//! ItemCollectionMetrics that PutItem, UpdateItem, DeleteItem, BatchWriteItem
//! and TransactWriteItems return with ReturnItemCollectionMetrics=SIZE, and
//! the item-collection size limit (10 GB in DynamoDB; lowered here with the
//! hidden `--item-collection-limit-bytes` flag so it can be reached).

use std::collections::HashMap;

use crate::util::{self, attr_def, item, key, s, txn, ServerProcess};
use aws_sdk_dynamodb::types::{
    AttributeValue, BillingMode, DeleteRequest, ItemCollectionMetrics, KeyType,
    LocalSecondaryIndex, Projection, ProjectionType, PutRequest, ReturnItemCollectionMetrics,
    ScalarAttributeType, WriteRequest,
};
use aws_sdk_dynamodb::Client;

type Item = HashMap<String, AttributeValue>;

/// A table `p`/`c` with a KEYS_ONLY LSI on `l` (or no index).
async fn table(client: &Client, with_lsi: bool) -> String {
    let name = util::unique_name(if with_lsi { "icm" } else { "icm-plain" });
    let mut request = client
        .create_table()
        .table_name(&name)
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(key("p", KeyType::Hash))
        .key_schema(key("c", KeyType::Range))
        .attribute_definitions(attr_def("p", ScalarAttributeType::S))
        .attribute_definitions(attr_def("c", ScalarAttributeType::S));
    if with_lsi {
        request = request
            .attribute_definitions(attr_def("l", ScalarAttributeType::S))
            .local_secondary_indexes(
                LocalSecondaryIndex::builder()
                    .index_name("by_l")
                    .key_schema(key("p", KeyType::Hash))
                    .key_schema(key("l", KeyType::Range))
                    .projection(
                        Projection::builder()
                            .projection_type(ProjectionType::KeysOnly)
                            .build(),
                    )
                    .build()
                    .unwrap(),
            );
    }
    request.send().await.expect("CreateTable succeeds");
    name
}

/// DynamoDB's size of an item of string attributes: names plus values.
fn size(item: &Item) -> u64 {
    item.iter()
        .map(|(name, value)| match value {
            AttributeValue::S(v) => (name.len() + v.len()) as u64,
            other => panic!("only strings here, not {other:?}"),
        })
        .sum()
}

/// What an item adds to its collection: itself, plus its KEYS_ONLY entry
/// (p, c, l) when it has `l`.
fn collection_share(item: &Item) -> u64 {
    let entry: Item = item
        .iter()
        .filter(|(k, _)| ["p", "c", "l"].contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    size(item)
        + if item.contains_key("l") {
            size(&entry)
        } else {
            0
        }
}

fn row(p: &str, c: &str, l: Option<&str>, data: &str) -> Item {
    let mut it = item(&[("p", s(p)), ("c", s(c)), ("d", s(data))]);
    if let Some(l) = l {
        it.insert("l".into(), s(l));
    }
    it
}

fn assert_metrics(metrics: Option<&ItemCollectionMetrics>, p: &str) {
    let metrics = metrics.expect("ItemCollectionMetrics returned");
    assert_eq!(
        metrics.item_collection_key(),
        Some(&item(&[("p", s(p))])),
        "the collection is named by its partition key"
    );
    assert_eq!(metrics.size_estimate_range_gb(), &[0.0, 1.0]);
}

#[tokio::test]
async fn single_writes_report_the_collection_of_tables_with_an_lsi() {
    let client = util::client();
    let table = table(&client, true).await;
    let size = ReturnItemCollectionMetrics::Size;

    let out = client
        .put_item()
        .table_name(&table)
        .set_item(Some(row("P", "1", Some("x"), "data")))
        .return_item_collection_metrics(size.clone())
        .send()
        .await
        .unwrap();
    assert_metrics(out.item_collection_metrics(), "P");

    let out = client
        .update_item()
        .table_name(&table)
        .set_key(Some(item(&[("p", s("P")), ("c", s("2"))])))
        .update_expression("SET d = :d")
        .expression_attribute_values(":d", s("new"))
        .return_item_collection_metrics(size.clone())
        .send()
        .await
        .unwrap();
    assert_metrics(out.item_collection_metrics(), "P");

    let out = client
        .delete_item()
        .table_name(&table)
        .set_key(Some(item(&[("p", s("P")), ("c", s("1"))])))
        .return_item_collection_metrics(size.clone())
        .send()
        .await
        .unwrap();
    assert_metrics(out.item_collection_metrics(), "P");

    // NONE, or nothing asked: no metrics.
    for asked in [Some(ReturnItemCollectionMetrics::None), None] {
        let out = client
            .put_item()
            .table_name(&table)
            .set_item(Some(row("P", "3", None, "d")))
            .set_return_item_collection_metrics(asked)
            .send()
            .await
            .unwrap();
        assert!(out.item_collection_metrics().is_none());
    }

    // A table without an LSI has no item collections to report.
    let plain = self::table(&client, false).await;
    let out = client
        .put_item()
        .table_name(&plain)
        .set_item(Some(row("P", "1", None, "d")))
        .return_item_collection_metrics(size)
        .send()
        .await
        .unwrap();
    assert!(out.item_collection_metrics().is_none());
}

fn put_request(item: Item) -> WriteRequest {
    WriteRequest::builder()
        .put_request(PutRequest::builder().set_item(Some(item)).build().unwrap())
        .build()
}

fn delete_request(p: &str, c: &str) -> WriteRequest {
    WriteRequest::builder()
        .delete_request(
            DeleteRequest::builder()
                .set_key(Some(item(&[("p", s(p)), ("c", s(c))])))
                .build()
                .unwrap(),
        )
        .build()
}

#[tokio::test]
async fn batches_and_transactions_list_metrics_per_table() {
    let client = util::client();
    let indexed = table(&client, true).await;
    let plain = table(&client, false).await;

    let out = client
        .batch_write_item()
        .request_items(
            &indexed,
            vec![
                put_request(row("A", "1", Some("x"), "d")),
                put_request(row("B", "1", None, "d")),
                delete_request("A", "9"),
            ],
        )
        .request_items(&plain, vec![put_request(row("A", "1", None, "d"))])
        .return_item_collection_metrics(ReturnItemCollectionMetrics::Size)
        .send()
        .await
        .unwrap();
    let metrics = out.item_collection_metrics().expect("metrics returned");
    assert_eq!(
        metrics.keys().collect::<Vec<_>>(),
        [&indexed],
        "only tables with an LSI are listed"
    );
    let partitions: Vec<_> = metrics[&indexed]
        .iter()
        .map(|m| m.item_collection_key().unwrap()["p"].clone())
        .collect();
    assert_eq!(partitions, [s("A"), s("B"), s("A")], "one entry per write");
    assert_metrics(metrics[&indexed].first(), "A");

    // Without SIZE, none.
    let out = client
        .batch_write_item()
        .request_items(&indexed, vec![put_request(row("C", "1", None, "d"))])
        .send()
        .await
        .unwrap();
    assert!(out.item_collection_metrics().is_none());

    let out = client
        .transact_write_items()
        .transact_items(txn::put(&indexed, row("T", "1", Some("x"), "d"), None, &[]))
        .transact_items(txn::update(
            &indexed,
            item(&[("p", s("U")), ("c", s("1"))]),
            "SET d = :d",
            None,
            &[(":d", s("v"))],
        ))
        .transact_items(txn::check(
            &indexed,
            item(&[("p", s("A")), ("c", s("1"))]),
            "attribute_exists(p)",
            &[],
        ))
        .transact_items(txn::put(&plain, row("T", "1", None, "d"), None, &[]))
        .return_item_collection_metrics(ReturnItemCollectionMetrics::Size)
        .send()
        .await
        .unwrap();
    let metrics = out.item_collection_metrics().expect("metrics returned");
    assert_eq!(metrics.keys().collect::<Vec<_>>(), [&indexed]);
    let partitions: Vec<_> = metrics[&indexed]
        .iter()
        .map(|m| m.item_collection_key().unwrap()["p"].clone())
        .collect();
    assert_eq!(
        partitions,
        [s("T"), s("U")],
        "the writes, not the ConditionCheck"
    );
    assert_metrics(metrics[&indexed].first(), "T");
}

const LIMIT: u64 = 300;
const LIMIT_FLAG: [&str; 2] = ["--item-collection-limit-bytes", "300"];
const EXCEEDED: &str = "Item collection size limit exceeded";

#[tokio::test]
async fn writes_that_grow_a_collection_past_the_limit_fail() {
    let (_server, client) = util::own_server(&LIMIT_FLAG);
    let table = table(&client, true).await;
    // Fill partition P up to the byte: items with an LSI entry, then one
    // sized to land exactly on the limit.
    let mut used = 0;
    for i in 0..3 {
        let it = row("P", &format!("{i}"), Some("lsi"), &"x".repeat(40));
        used += collection_share(&it);
        client
            .put_item()
            .table_name(&table)
            .set_item(Some(it))
            .send()
            .await
            .unwrap();
    }
    let base = collection_share(&row("P", "f", None, ""));
    let filler = row("P", "f", None, &"y".repeat((LIMIT - used - base) as usize));
    assert_eq!(used + collection_share(&filler), LIMIT);
    let out = client
        .put_item()
        .table_name(&table)
        .set_item(Some(filler))
        .return_item_collection_metrics(ReturnItemCollectionMetrics::Size)
        .send()
        .await
        .expect("a collection exactly at the limit is allowed");
    assert_metrics(out.item_collection_metrics(), "P");

    // One byte more is refused, and nothing is written.
    let result = client
        .put_item()
        .table_name(&table)
        .set_item(Some(row("P", "g", None, "")))
        .send()
        .await;
    util::assert_error(result, "ItemCollectionSizeLimitExceededException", EXCEEDED);
    let result = client
        .update_item()
        .table_name(&table)
        .set_key(Some(item(&[("p", s("P")), ("c", s("0"))])))
        .update_expression("SET l2 = :v")
        .expression_attribute_values(":v", s("z"))
        .send()
        .await;
    util::assert_error(result, "ItemCollectionSizeLimitExceededException", EXCEEDED);
    let got = client
        .get_item()
        .table_name(&table)
        .set_key(Some(item(&[("p", s("P")), ("c", s("g"))])))
        .send()
        .await
        .unwrap();
    assert!(got.item().is_none());

    // Writes that shrink the collection, and other partitions, go through.
    client
        .update_item()
        .table_name(&table)
        .set_key(Some(item(&[("p", s("P")), ("c", s("0"))])))
        .update_expression("REMOVE l")
        .send()
        .await
        .expect("dropping an LSI entry shrinks the collection");
    client
        .put_item()
        .table_name(&table)
        .set_item(Some(row("Q", "1", Some("lsi"), "d")))
        .send()
        .await
        .unwrap();
    // Removing `l` freed the attribute and the LSI entry (p, c, l): exactly
    // that much fits again, and not a byte more.
    let freed = size(&item(&[("l", s("lsi"))]))
        + size(&item(&[("p", s("P")), ("c", s("0")), ("l", s("lsi"))]));
    let fits = row("P", "h", None, &"w".repeat((freed - base) as usize));
    client
        .put_item()
        .table_name(&table)
        .set_item(Some(fits))
        .send()
        .await
        .expect("the freed bytes can be used again");
    let result = client
        .put_item()
        .table_name(&table)
        .set_item(Some(row("P", "i", None, "")))
        .send()
        .await;
    util::assert_error(result, "ItemCollectionSizeLimitExceededException", EXCEEDED);

    // BatchWriteItem: the whole request fails.
    let result = client
        .batch_write_item()
        .request_items(
            &table,
            vec![
                put_request(row("R", "1", None, "d")),
                put_request(row("P", "j", None, "d")),
            ],
        )
        .send()
        .await;
    util::assert_error(result, "ItemCollectionSizeLimitExceededException", EXCEEDED);

    // TransactWriteItems: that action's reason, and nothing is written.
    let result = client
        .transact_write_items()
        .transact_items(txn::put(&table, row("R", "1", None, "d"), None, &[]))
        .transact_items(txn::put(&table, row("P", "k", None, "d"), None, &[]))
        .send()
        .await;
    let (message, reasons) = txn::canceled(result);
    let codes = txn::codes(&reasons);
    assert_eq!(codes, ["None", "ItemCollectionSizeLimitExceeded"]);
    assert_eq!(message, txn::canceled_message(&codes));
    assert_eq!(reasons[1].message(), Some("Collection size exceeded"));
    let got = client
        .get_item()
        .table_name(&table)
        .set_key(Some(item(&[("p", s("R")), ("c", s("1"))])))
        .send()
        .await
        .unwrap();
    assert!(got.item().is_none());

    // Deleting from a full collection always works; then there is room.
    client
        .delete_item()
        .table_name(&table)
        .set_key(Some(item(&[("p", s("P")), ("c", s("f"))])))
        .send()
        .await
        .unwrap();
    client
        .put_item()
        .table_name(&table)
        .set_item(Some(row("P", "g", None, "")))
        .send()
        .await
        .unwrap();

    // Tables without an LSI have no item-collection limit.
    let plain = self::table(&client, false).await;
    for i in 0..3 {
        client
            .put_item()
            .table_name(&plain)
            .set_item(Some(row("P", &i.to_string(), None, &"x".repeat(200))))
            .send()
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn collection_sizes_survive_a_restart() {
    util::needs_own_server();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap();
    let args = ["--data-dir", path, LIMIT_FLAG[0], LIMIT_FLAG[1]];
    let server = ServerProcess::spawn(&args);
    let client = util::client_for(server.endpoint());
    let table = table(&client, true).await;
    let it = row("P", "1", Some("l"), "");
    let full = row(
        "P",
        "1",
        Some("l"),
        &"x".repeat((LIMIT - collection_share(&it)) as usize),
    );
    client
        .put_item()
        .table_name(&table)
        .set_item(Some(full))
        .send()
        .await
        .unwrap();
    server.terminate();

    let server = ServerProcess::spawn(&args);
    let client = util::client_for(server.endpoint());
    let result = client
        .put_item()
        .table_name(&table)
        .set_item(Some(row("P", "2", None, "")))
        .send()
        .await;
    util::assert_error(result, "ItemCollectionSizeLimitExceededException", EXCEEDED);
    client
        .put_item()
        .table_name(&table)
        .set_item(Some(row("Q", "2", None, "")))
        .send()
        .await
        .expect("another collection has room");
}
