//! The retry path of batch writes and reads, against a server that injects
//! faults: a share of BatchWriteItem/BatchGetItem requests is left
//! unprocessed, and one table's batches are throttled.

use super::Server;
use ferrodyn_client::backoff::RetryPolicy;
use ferrodyn_client::batch::{BatchGetter, BatchWriter};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const FAULTS: &[&str] = &[
    "--fault",
    "BatchWriteItem:faulty=unprocessed@0.3",
    "--fault",
    "BatchGetItem:faulty=unprocessed@0.3",
    "--fault",
    "BatchWriteItem:throttled=throttling@0.5",
    "--fault-seed",
    "11",
];

/// Quick retries, so the tests take milliseconds of backoff, not seconds.
fn policy(max_attempts: u32) -> RetryPolicy {
    RetryPolicy {
        base: Duration::from_millis(1),
        cap: Duration::from_millis(8),
        max_attempts,
    }
}

fn key(i: u64) -> Value {
    json!({ "pk": {"S": format!("item{i}")} })
}

/// A sleeper that records the waits instead of sleeping.
fn recorded() -> (
    Arc<Mutex<Vec<Duration>>>,
    impl FnMut(Duration) + Send + 'static,
) {
    let waits = Arc::new(Mutex::new(Vec::new()));
    let sink = waits.clone();
    (waits, move |d| sink.lock().unwrap().push(d))
}

#[test]
fn unprocessed_items_are_retried_until_every_item_is_written() {
    let server = Server::start(FAULTS);
    server.create_table("faulty", false);
    let client = server.client();
    let (waits, sleep) = recorded();
    let mut writer = BatchWriter::new(&client, "faulty")
        .with_policy(policy(30))
        .with_seed(5)
        .with_sleep(sleep);
    for i in 0..1000 {
        writer.put(key(i)).unwrap();
    }
    let report = writer.finish().unwrap();
    assert_eq!(report.written, 1000, "{report:?}");
    assert!(report.not_written.is_empty());
    assert!(
        report.unprocessed_returned > 0,
        "the server left items unprocessed"
    );
    assert!(report.retries > 0);
    assert!(report.max_attempts_used > 1);
    assert_eq!(report.calls, 40 + report.retries);
    let waits = waits.lock().unwrap();
    assert_eq!(
        waits.len() as u64,
        report.retries,
        "one wait before each retry"
    );
    assert!(
        waits.iter().all(|w| *w <= Duration::from_millis(8)),
        "waits never exceed the cap"
    );
    assert_eq!(server.all_items("faulty").len(), 1000);
}

#[test]
fn items_still_unprocessed_after_the_last_attempt_are_reported_not_dropped() {
    let server = Server::start(FAULTS);
    server.create_table("faulty", false);
    let client = server.client();
    let mut writer = BatchWriter::new(&client, "faulty").with_policy(policy(1));
    for i in 0..500 {
        writer.put(key(i)).unwrap();
    }
    let report = writer.finish().unwrap();
    assert!(
        !report.not_written.is_empty(),
        "30% unprocessed and no retries"
    );
    assert_eq!(report.written + report.not_written.len() as u64, 500);
    assert_eq!(report.retries, 0);
    assert!(report.not_written[0]
        .reason
        .contains("still unprocessed after 1 attempts"));
    // Exactly the reported items are missing.
    let stored = server.all_items("faulty");
    assert_eq!(stored.len() as u64, report.written);
    for lost in &report.not_written {
        let item = &lost.request["PutRequest"]["Item"];
        assert!(
            !stored.contains(item),
            "{item} was reported lost but is stored"
        );
    }
}

#[test]
fn throttled_batches_are_retried_with_backoff() {
    let server = Server::start(FAULTS);
    server.create_table("throttled", false);
    let client = server.client();
    let (waits, sleep) = recorded();
    let mut writer = BatchWriter::new(&client, "throttled")
        .with_policy(policy(40))
        .with_sleep(sleep);
    for i in 0..200 {
        writer.put(key(i)).unwrap();
    }
    let report = writer.finish().unwrap();
    assert_eq!(report.written, 200);
    assert!(report.retries > 0, "{report:?}");
    assert_eq!(
        report.unprocessed_returned, 0,
        "throttling rejects whole calls"
    );
    assert_eq!(waits.lock().unwrap().len() as u64, report.retries);
    assert_eq!(server.all_items("throttled").len(), 200);
}

#[test]
fn unprocessed_keys_are_retried_until_every_key_is_read() {
    let server = Server::start(FAULTS);
    server.create_table("faulty", false);
    let client = server.client();
    let mut writer = BatchWriter::new(&client, "faulty").with_policy(policy(30));
    for i in 0..300 {
        writer.put(key(i)).unwrap();
    }
    writer.finish().unwrap();
    let (waits, sleep) = recorded();
    let report = BatchGetter::new(&client)
        .with_policy(policy(30))
        .with_sleep(sleep)
        .get("faulty", (0..300).map(key).collect())
        .unwrap();
    assert_eq!(report.items.len(), 300);
    assert!(report.not_read.is_empty());
    assert!(report.unprocessed_returned > 0);
    assert!(report.retries > 0);
    assert_eq!(waits.lock().unwrap().len() as u64, report.retries);
}
