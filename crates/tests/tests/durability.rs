//! Durability: data acknowledged by a server on `--data-dir` survives a clean
//! shutdown (SIGTERM) and a crash (SIGKILL right after the responses), and is
//! read back by a new server on the same directory.
//!
//! Each test runs its own server processes, so these tests skip when the suite
//! targets an external endpoint (`FERRODYN_TEST_ENDPOINT`).

mod common;

use aws_sdk_dynamodb::types::AttributeValue;
use aws_sdk_dynamodb::Client;
use common::{n, s, ServerProcess};

const ITEMS: usize = 50;

/// Creates a table and writes `ITEMS` items plus one update, all acknowledged.
async fn write_data(client: &Client, table: &str) {
    client
        .create_table()
        .table_name(table)
        .key_schema(common::key("p", aws_sdk_dynamodb::types::KeyType::Hash))
        .attribute_definitions(common::attr_def(
            "p",
            aws_sdk_dynamodb::types::ScalarAttributeType::S,
        ))
        .billing_mode(aws_sdk_dynamodb::types::BillingMode::PayPerRequest)
        .send()
        .await
        .unwrap();
    for i in 0..ITEMS {
        client
            .put_item()
            .table_name(table)
            .item("p", s(&format!("item-{i}")))
            .item("n", n(&i.to_string()))
            .send()
            .await
            .unwrap();
    }
    client
        .update_item()
        .table_name(table)
        .key("p", s("item-0"))
        .update_expression("SET n = n + :one")
        .expression_attribute_values(":one", n("100"))
        .send()
        .await
        .unwrap();
    client
        .delete_item()
        .table_name(table)
        .key("p", s("item-1"))
        .send()
        .await
        .unwrap();
}

/// Checks that everything `write_data` did is visible.
async fn check_data(client: &Client, table: &str) {
    let described = client
        .describe_table()
        .table_name(table)
        .send()
        .await
        .unwrap();
    assert_eq!(described.table().and_then(|t| t.table_name()), Some(table));
    for i in 0..ITEMS {
        let got = client
            .get_item()
            .table_name(table)
            .key("p", s(&format!("item-{i}")))
            .consistent_read(true)
            .send()
            .await
            .unwrap()
            .item;
        match i {
            0 => assert_eq!(got.unwrap()["n"], n("100")),
            1 => assert!(got.is_none(), "deleted item stays deleted"),
            _ => assert_eq!(
                got.unwrap_or_else(|| panic!("item-{i} survived")).get("n"),
                Some(&AttributeValue::N(i.to_string()))
            ),
        }
    }
}

#[tokio::test]
async fn data_survives_a_clean_shutdown() {
    if common::is_external() {
        eprintln!("skipped: needs its own server process");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::with_data_dir(dir.path());
    let client = common::client_for(server.endpoint());
    write_data(&client, "durable").await;
    let status = server.terminate();
    assert!(status.success(), "SIGTERM is a clean shutdown: {status:?}");

    let server = ServerProcess::with_data_dir(dir.path());
    check_data(&common::client_for(server.endpoint()), "durable").await;
}

#[tokio::test]
async fn acknowledged_data_survives_kill_9() {
    if common::is_external() {
        eprintln!("skipped: needs its own server process");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::with_data_dir(dir.path());
    let client = common::client_for(server.endpoint());
    write_data(&client, "crashy").await;
    server.kill();

    let server = ServerProcess::with_data_dir(dir.path());
    check_data(&common::client_for(server.endpoint()), "crashy").await;
}

#[tokio::test]
async fn in_memory_server_starts_empty_each_time() {
    if common::is_external() {
        eprintln!("skipped: needs its own server process");
        return;
    }
    let server = ServerProcess::in_memory();
    let client = common::client_for(server.endpoint());
    write_data(&client, "scratch").await;
    drop(server);
    let server = ServerProcess::in_memory();
    let tables = common::client_for(server.endpoint())
        .list_tables()
        .send()
        .await
        .unwrap();
    assert!(
        tables.table_names().is_empty(),
        "{:?}",
        tables.table_names()
    );
}
