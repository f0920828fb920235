//! Backups and restores across restarts and crashes, and a backup's one
//! instant under concurrent transactions: a backup that was AVAILABLE
//! survives a restart and restores; one cut short by kill -9 is gone after
//! the restart, never half there; a restore cut short resumes and ends with
//! every item; a backup taken while transfers run holds a balanced ledger;
//! ten kill -9 cycles during backups and both kinds of restore leave nothing
//! half done.
//! (The operations' parameters and errors: `backups.rs`.)

use crate::util::{self, n, s, ServerProcess};
use aws_sdk_dynamodb::types::{
    BillingMode, GlobalSecondaryIndex, KeyType, Projection, ProjectionType, PutRequest,
    ScalarAttributeType, WriteRequest,
};
use aws_sdk_dynamodb::Client;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(60);

/// A table keyed by `p` with a GSI `by_g` on `g`.
async fn create_table(client: &Client, table: &str) {
    client
        .create_table()
        .table_name(table)
        .key_schema(util::key("p", KeyType::Hash))
        .attribute_definitions(util::attr_def("p", ScalarAttributeType::S))
        .attribute_definitions(util::attr_def("g", ScalarAttributeType::S))
        .global_secondary_indexes(
            GlobalSecondaryIndex::builder()
                .index_name("by_g")
                .key_schema(util::key("g", KeyType::Hash))
                .projection(
                    Projection::builder()
                        .projection_type(ProjectionType::All)
                        .build(),
                )
                .build()
                .unwrap(),
        )
        .billing_mode(BillingMode::PayPerRequest)
        .send()
        .await
        .unwrap();
}

/// Writes items `p0..p{count}`, `g` cycling through g0..g9.
async fn fill(client: &Client, table: &str, count: usize) {
    let requests: Vec<WriteRequest> = (0..count)
        .map(|i| {
            let item = util::item(&[
                ("p", s(&format!("p{i}"))),
                ("g", s(&format!("g{}", i % 10))),
            ]);
            let put = PutRequest::builder().set_item(Some(item)).build().unwrap();
            WriteRequest::builder().put_request(put).build()
        })
        .collect();
    for chunk in requests.chunks(25) {
        let out = client
            .batch_write_item()
            .request_items(table, chunk.to_vec())
            .send()
            .await
            .unwrap();
        assert!(out.unprocessed_items().is_none_or(|u| u.is_empty()));
    }
}

/// Waits for the backup to be AVAILABLE.
async fn available(client: &Client, arn: &str) {
    util::poll_until("the backup to be AVAILABLE", WAIT, || async {
        let out = client
            .describe_backup()
            .backup_arn(arn)
            .send()
            .await
            .unwrap();
        let status = (out.backup_description()?.backup_details()?)
            .backup_status()
            .as_str()
            .to_string();
        (status == "AVAILABLE").then_some(())
    })
    .await
}

/// Waits for the table to be ACTIVE; returns its ItemCount.
async fn active(client: &Client, table: &str) -> i64 {
    util::poll_until("the restored table to be ACTIVE", WAIT, || async {
        let out = client
            .describe_table()
            .table_name(table)
            .send()
            .await
            .unwrap();
        let table = out.table()?;
        (table.table_status()?.as_str() == "ACTIVE").then(|| table.item_count().unwrap_or(-1))
    })
    .await
}

async fn backup(client: &Client, table: &str) -> String {
    let out = client
        .create_backup()
        .table_name(table)
        .backup_name("recovery")
        .send()
        .await
        .unwrap();
    out.backup_details().unwrap().backup_arn().to_string()
}

async fn restore(client: &Client, arn: &str, target: &str) {
    client
        .restore_table_from_backup()
        .backup_arn(arn)
        .target_table_name(target)
        .send()
        .await
        .unwrap();
}

/// Items of `g` = `value` through the restored table's GSI.
async fn gsi_count(client: &Client, table: &str, value: &str) -> i32 {
    let out = client
        .query()
        .table_name(table)
        .index_name("by_g")
        .key_condition_expression("g = :g")
        .expression_attribute_values(":g", s(value))
        .select(aws_sdk_dynamodb::types::Select::Count)
        .send()
        .await
        .unwrap();
    out.count()
}

#[tokio::test]
async fn an_available_backup_survives_a_restart_and_restores_after_it() {
    util::needs_own_server();
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::with_data_dir(dir.path());
    let client = util::client_for(server.endpoint());
    create_table(&client, "kept").await;
    fill(&client, "kept", 300).await;
    let arn = backup(&client, "kept").await;
    available(&client, &arn).await;
    assert!(server.terminate().success());

    let server = ServerProcess::with_data_dir(dir.path());
    let client = util::client_for(server.endpoint());
    available(&client, &arn).await;
    restore(&client, &arn, "kept-restored").await;
    assert_eq!(active(&client, "kept-restored").await, 300);
    assert_eq!(
        util::scan_all(&client, "kept-restored", None).await.len(),
        300
    );
    assert_eq!(gsi_count(&client, "kept-restored", "g3").await, 30);
}

#[tokio::test]
async fn a_backup_cut_short_by_kill_9_is_all_there_or_gone_after_the_restart() {
    util::needs_own_server();
    let _heavy = util::heavy_test().await;
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::with_data_dir(dir.path());
    let client = util::client_for(server.endpoint());
    create_table(&client, "cut").await;
    fill(&client, "cut", 20_000).await;
    let arn = backup(&client, "cut").await;
    server.kill();

    let server = ServerProcess::with_data_dir(dir.path());
    let client = util::client_for(server.endpoint());
    let described = client.describe_backup().backup_arn(&arn).send().await;
    let listed = client
        .list_backups()
        .table_name("cut")
        .send()
        .await
        .unwrap();
    match described {
        Err(err) => {
            let err = util::service_error::<(), _, _>(Err(err));
            assert_eq!(err.code, "BackupNotFoundException", "{err:?}");
            assert!(
                listed.backup_summaries().is_empty(),
                "an abandoned backup is not listed"
            );
        }
        Ok(out) => {
            // The copy had finished before the kill: it must be whole.
            let source = out
                .backup_description()
                .unwrap()
                .source_table_details()
                .unwrap();
            assert_eq!(source.item_count(), Some(20_000));
            restore(&client, &arn, "cut-restored").await;
            assert_eq!(active(&client, "cut-restored").await, 20_000);
        }
    }
    // The source is untouched either way.
    let source = client
        .describe_table()
        .table_name("cut")
        .send()
        .await
        .unwrap();
    assert_eq!(source.table().unwrap().item_count(), Some(20_000));
}

#[tokio::test]
async fn a_restore_cut_short_by_kill_9_resumes_and_ends_with_every_item() {
    util::needs_own_server();
    let _heavy = util::heavy_test().await;
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::with_data_dir(dir.path());
    let client = util::client_for(server.endpoint());
    create_table(&client, "whole").await;
    fill(&client, "whole", 20_000).await;
    let arn = backup(&client, "whole").await;
    available(&client, &arn).await;
    restore(&client, &arn, "whole-restored").await;
    server.kill();

    let server = ServerProcess::with_data_dir(dir.path());
    let client = util::client_for(server.endpoint());
    assert_eq!(active(&client, "whole-restored").await, 20_000);
    let items = util::scan_all(&client, "whole-restored", None).await;
    assert_eq!(items.len(), 20_000);
    assert_eq!(gsi_count(&client, "whole-restored", "g7").await, 2_000);
    // The backup is free again: it can be deleted.
    client
        .delete_backup()
        .backup_arn(&arn)
        .send()
        .await
        .unwrap();
}

const ACCOUNTS: usize = 10;
const OPENING: i64 = 1_000;

/// Moves random amounts between accounts (each move one transaction) until
/// `stop` is set; returns how many committed.
async fn transfers(
    client: Client,
    table: String,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> usize {
    let mut rng = util::Rng::with_seed(7);
    let mut done = 0;
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        let from = rng.usize(0..ACCOUNTS);
        let to = (from + rng.usize(1..ACCOUNTS)) % ACCOUNTS;
        let amount = n(&rng.i64(1..=20).to_string());
        let acct = |a: usize| util::item(&[("p", s(&format!("acct{a}")))]);
        let sent = client
            .transact_write_items()
            .transact_items(util::txn::update(
                &table,
                acct(from),
                "SET balance = balance - :a",
                None,
                &[(":a", amount.clone())],
            ))
            .transact_items(util::txn::update(
                &table,
                acct(to),
                "SET balance = balance + :a",
                None,
                &[(":a", amount)],
            ))
            .send()
            .await;
        done += usize::from(sent.is_ok());
    }
    done
}

#[tokio::test]
async fn a_backup_taken_during_transfers_holds_a_balanced_ledger() {
    let client = util::client();
    let table = util::unique_name("ledger");
    create_table(&client, &table).await;
    for a in 0..ACCOUNTS {
        let account = util::item(&[
            ("p", s(&format!("acct{a}"))),
            ("balance", n(&OPENING.to_string())),
        ]);
        client
            .put_item()
            .table_name(&table)
            .set_item(Some(account))
            .send()
            .await
            .unwrap();
    }
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writers: Vec<_> = (0..3)
        .map(|_| tokio::spawn(transfers(client.clone(), table.clone(), stop.clone())))
        .collect();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let arn = backup(&client, &table).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut committed = 0;
    for writer in writers {
        committed += writer.await.unwrap();
    }
    assert!(
        committed > 0,
        "no transfer committed: the test tested nothing"
    );
    available(&client, &arn).await;
    let restored = util::unique_name("ledger-restored");
    restore(&client, &arn, &restored).await;
    active(&client, &restored).await;
    let balances: i64 = (util::scan_all(&client, &restored, None).await.iter())
        .map(|item| util::get_n(item, "balance"))
        .sum();
    assert_eq!(
        balances,
        OPENING * ACCOUNTS as i64,
        "a torn transaction in the backup"
    );
}

/// What ten kill -9 cycles must leave: every backup listed is whole once
/// AVAILABLE, every table restored from a backup is eventually ACTIVE with
/// every item, every point-in-time restore too unless its base was still
/// being copied (then it is cleaned up), recovery stays on, and the source
/// is untouched.
#[tokio::test]
async fn ten_kill_9_cycles_during_backups_and_restores_leave_nothing_half_done() {
    util::needs_own_server();
    let _heavy = util::heavy_test().await;
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::with_data_dir(dir.path());
    let client = util::client_for(server.endpoint());
    create_table(&client, "cycled").await;
    fill(&client, "cycled", 5_000).await;
    client
        .update_continuous_backups()
        .table_name("cycled")
        .point_in_time_recovery_specification(
            aws_sdk_dynamodb::types::PointInTimeRecoverySpecification::builder()
                .point_in_time_recovery_enabled(true)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let first = backup(&client, "cycled").await;
    available(&client, &first).await;
    let mut server = server;
    let mut rng = util::Rng::with_seed(11);
    for cycle in 0..10 {
        let client = util::client_for(server.endpoint());
        backup(&client, "cycled").await;
        restore(&client, &first, &format!("from-backup-{cycle}")).await;
        client
            .restore_table_to_point_in_time()
            .source_table_name("cycled")
            .target_table_name(format!("to-point-{cycle}"))
            .use_latest_restorable_time(true)
            .send()
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(rng.u64(0..40))).await;
        server.kill();
        server = ServerProcess::with_data_dir(dir.path());
        let client = util::client_for(server.endpoint());
        let from_backup = format!("from-backup-{cycle}");
        assert_eq!(
            active(&client, &from_backup).await,
            5_000,
            "{from_backup} after cycle {cycle}"
        );
        // A point-in-time restore whose base was still being copied when the
        // process died is cleaned up (the table removed, recovery re-based);
        // otherwise it resumes.
        let to_point = format!("to-point-{cycle}");
        match client.describe_table().table_name(&to_point).send().await {
            Ok(_) => assert_eq!(active(&client, &to_point).await, 5_000, "{to_point}"),
            Err(err) => {
                let err = util::service_error::<(), _, _>(Err(err));
                assert_eq!(err.code, "ResourceNotFoundException", "{to_point}: {err:?}");
            }
        }
        let recovery = client
            .describe_continuous_backups()
            .table_name("cycled")
            .send()
            .await
            .unwrap();
        let status = (recovery.continuous_backups_description())
            .and_then(|d| d.point_in_time_recovery_description())
            .and_then(|d| d.point_in_time_recovery_status())
            .map(|s| s.as_str().to_string());
        assert_eq!(
            status.as_deref(),
            Some("ENABLED"),
            "recovery survives every cycle"
        );
        // The first restore of a backup ends before the next can start.
        for summary in client
            .list_backups()
            .table_name("cycled")
            .send()
            .await
            .unwrap()
            .backup_summaries()
        {
            let arn = summary.backup_arn().unwrap();
            available(&client, arn).await;
            let described = client
                .describe_backup()
                .backup_arn(arn)
                .send()
                .await
                .unwrap();
            let source = described
                .backup_description()
                .unwrap()
                .source_table_details()
                .unwrap();
            assert_eq!(
                source.item_count(),
                Some(5_000),
                "backup {arn} after cycle {cycle}"
            );
        }
    }
    let client = util::client_for(server.endpoint());
    // Recovery still restores after all of it.
    client
        .restore_table_to_point_in_time()
        .source_table_name("cycled")
        .target_table_name("to-point-final")
        .use_latest_restorable_time(true)
        .send()
        .await
        .unwrap();
    assert_eq!(active(&client, "to-point-final").await, 5_000);
    let items = util::scan_all(&client, "to-point-final", None).await;
    assert_eq!(items.len(), 5_000);
    let source = client
        .describe_table()
        .table_name("cycled")
        .send()
        .await
        .unwrap();
    assert_eq!(source.table().unwrap().item_count(), Some(5_000));
}
