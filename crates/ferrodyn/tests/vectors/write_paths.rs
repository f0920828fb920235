//! Every write path keeps the vector index with its items: transactions,
//! PartiQL, Time to Live deletions, and a table restored from a backup
//! (BatchWriteItem fills the other modules' tables; PutItem, UpdateItem
//! and DeleteItem are exactness.rs's).

use super::reference::search;
use super::{vector, vector_index, vector_table};
use crate::util::{self, s};
use aws_sdk_dynamodb::types::{
    Delete, ProjectionType, Put, TimeToLiveSpecification, TransactWriteItem, Update,
    VectorDistanceFunction,
};
use aws_sdk_dynamodb::Client;
use std::collections::BTreeSet;
use std::time::Duration;

async fn table(client: &Client) -> String {
    vector_table(
        client,
        vector_index(
            2,
            VectorDistanceFunction::Euclidean,
            true,
            ProjectionType::All,
        ),
    )
    .await
}

/// The keys of partition `x`, by a search (TopK 100) from (0, 0).
async fn indexed(client: &Client, table: &str) -> BTreeSet<String> {
    let found = search(client, table, &[0.0, 0.0], 100, Some("x"), None).await;
    found.into_iter().map(|(pk, _)| pk).collect()
}

fn keys(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|k| k.to_string()).collect()
}

async fn put(client: &Client, table: &str, pk: &str, v: [f32; 2]) {
    client
        .put_item()
        .table_name(table)
        .item("pk", s(pk))
        .item("cat", s("x"))
        .item("emb", vector(&v))
        .send()
        .await
        .unwrap();
}

#[tokio::test]
async fn transactions_keep_the_vector_index() {
    let client = util::client();
    let table = table(&client).await;
    put(&client, &table, "a", [1.0, 0.0]).await;
    put(&client, &table, "b", [2.0, 0.0]).await;
    let item = |pk: &str| {
        [
            ("pk".to_string(), s(pk)),
            ("cat".to_string(), s("x")),
            ("emb".to_string(), vector(&[3.0, 0.0])),
        ]
        .into_iter()
        .collect()
    };
    let put_c = Put::builder()
        .table_name(&table)
        .set_item(Some(item("c")))
        .build()
        .unwrap();
    let drop_a = Delete::builder()
        .table_name(&table)
        .key("pk", s("a"))
        .build()
        .unwrap();
    let move_b = Update::builder()
        .table_name(&table)
        .key("pk", s("b"))
        .update_expression("SET emb = :v")
        .expression_attribute_values(":v", vector(&[0.5, 0.0]))
        .build()
        .unwrap();
    client
        .transact_write_items()
        .transact_items(TransactWriteItem::builder().put(put_c).build())
        .transact_items(TransactWriteItem::builder().delete(drop_a).build())
        .transact_items(TransactWriteItem::builder().update(move_b).build())
        .send()
        .await
        .unwrap();
    let found = search(&client, &table, &[0.0, 0.0], 10, Some("x"), None).await;
    assert_eq!(found, [("b".to_string(), 0.5), ("c".to_string(), 3.0)]);
    // A refused transaction changes nothing (the malformed vector fails it whole).
    let bad = Put::builder()
        .table_name(&table)
        .item("pk", s("d"))
        .item("cat", s("x"))
        .item("emb", vector(&[1.0]))
        .build()
        .unwrap();
    let ok = Put::builder()
        .table_name(&table)
        .item("pk", s("e"))
        .item("cat", s("x"))
        .item("emb", vector(&[1.0, 1.0]))
        .build()
        .unwrap();
    let refused = client
        .transact_write_items()
        .transact_items(TransactWriteItem::builder().put(ok).build())
        .transact_items(TransactWriteItem::builder().put(bad).build())
        .send()
        .await;
    assert!(refused.is_err());
    assert_eq!(indexed(&client, &table).await, keys(&["b", "c"]));
}

#[tokio::test]
async fn partiql_statements_keep_the_vector_index() {
    let client = util::client();
    let table = table(&client).await;
    let run = |statement: String| client.execute_statement().statement(statement).send();
    run(format!(
        "INSERT INTO \"{table}\" VALUE {{'pk': 'a', 'cat': 'x', 'emb': [1, 1]}}"
    ))
    .await
    .unwrap();
    run(format!(
        "INSERT INTO \"{table}\" VALUE {{'pk': 'b', 'cat': 'x', 'emb': [2, 2]}}"
    ))
    .await
    .unwrap();
    run(format!(
        "UPDATE \"{table}\" SET emb = [0, 1] WHERE pk = 'b'"
    ))
    .await
    .unwrap();
    run(format!("DELETE FROM \"{table}\" WHERE pk = 'a'"))
        .await
        .unwrap();
    let found = search(&client, &table, &[0.0, 0.0], 10, Some("x"), None).await;
    assert_eq!(found, [("b".to_string(), 1.0)]);
    let bad = run(format!(
        "INSERT INTO \"{table}\" VALUE {{'pk': 'c', 'cat': 'x', 'emb': [1]}}"
    ))
    .await;
    assert!(
        bad.is_err(),
        "a malformed vector is refused through PartiQL too"
    );
}

fn expired_an_hour_ago() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    (now - 3600).to_string()
}

#[tokio::test]
async fn time_to_live_deletions_leave_the_vector_index() {
    let client = util::client();
    let table = table(&client).await;
    client
        .update_time_to_live()
        .table_name(&table)
        .time_to_live_specification(
            TimeToLiveSpecification::builder()
                .enabled(true)
                .attribute_name("expires")
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    put(&client, &table, "keep", [1.0, 0.0]).await;
    client
        .put_item()
        .table_name(&table)
        .item("pk", s("gone"))
        .item("cat", s("x"))
        .item("emb", vector(&[0.0, 1.0]))
        .item("expires", util::n(&expired_an_hour_ago()))
        .send()
        .await
        .unwrap();
    util::poll_until("the TTL deletion", Duration::from_secs(30), || async {
        let item = client
            .get_item()
            .table_name(&table)
            .key("pk", s("gone"))
            .send()
            .await
            .unwrap();
        item.item().is_none().then_some(())
    })
    .await;
    assert_eq!(indexed(&client, &table).await, keys(&["keep"]));
    assert_eq!(
        super::api::describe_vix(&client, &table).await.item_count(),
        Some(1)
    );
}

#[tokio::test]
async fn a_restored_table_has_its_vector_index() {
    let client = util::client();
    let table = table(&client).await;
    for (i, pk) in ["a", "b", "c"].iter().enumerate() {
        put(&client, &table, pk, [i as f32, 0.0]).await;
    }
    let backup = client
        .create_backup()
        .table_name(&table)
        .backup_name("vec")
        .send()
        .await
        .unwrap();
    let arn = backup.backup_details().unwrap().backup_arn().to_string();
    util::poll_until("the backup", Duration::from_secs(30), || async {
        let d = client
            .describe_backup()
            .backup_arn(&arn)
            .send()
            .await
            .unwrap();
        let status = d
            .backup_description()?
            .backup_details()?
            .backup_status()
            .clone();
        (status == aws_sdk_dynamodb::types::BackupStatus::Available).then_some(())
    })
    .await;
    let restored = util::unique_name("vec-restored");
    client
        .restore_table_from_backup()
        .target_table_name(&restored)
        .backup_arn(&arn)
        .send()
        .await
        .unwrap();
    let described = util::restores::wait_active(&client, &restored).await;
    let vix = &described.vector_indexes()[0];
    assert!(vix
        .index_arn()
        .unwrap()
        .contains(&format!("table/{restored}/index/vix")));
    let found = search(&client, &restored, &[0.0, 0.0], 10, Some("x"), None).await;
    assert_eq!(
        found,
        [
            ("a".to_string(), 0.0),
            ("b".to_string(), 1.0),
            ("c".to_string(), 2.0)
        ]
    );
    // The restored table's index follows its own writes.
    client
        .delete_item()
        .table_name(&restored)
        .key("pk", s("a"))
        .send()
        .await
        .unwrap();
    assert_eq!(indexed(&client, &restored).await, keys(&["b", "c"]));
    assert_eq!(indexed(&client, &table).await, keys(&["a", "b", "c"]));
}
