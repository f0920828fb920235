//! TransactWriteItems and TransactGetItems rules: limits, one action per
//! item, atomicity across tables, ClientRequestToken idempotency, snapshot
//! reads, and TransactionConflict on demand through fault injection.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::util::txn::{self, Item};
use crate::util::{self, get_n, item, n, s};
use aws_sdk_dynamodb::types::{ReturnConsumedCapacity, TransactWriteItem};
use aws_sdk_dynamodb::Client;

async fn get(client: &Client, table: &str, p: &str) -> Option<Item> {
    client
        .get_item()
        .table_name(table)
        .key("p", s(p))
        .consistent_read(true)
        .send()
        .await
        .unwrap()
        .item()
        .cloned()
}

#[tokio::test]
async fn more_than_100_actions_is_a_validation_error() {
    let client = util::client();
    let table = util::table_s(&client).await;
    let actions = |count: usize| -> Vec<TransactWriteItem> {
        (0..count)
            .map(|i| txn::put(&table, item(&[("p", s(&format!("k{i}")))]), None, &[]))
            .collect()
    };
    let err = util::service_error(
        client
            .transact_write_items()
            .set_transact_items(Some(actions(101)))
            .send()
            .await,
    );
    assert_eq!(err.code, "ValidationException", "{err:?}");
    assert!(
        err.message.starts_with("1 validation error detected: Value ")
            && err.message.contains(
                "at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to 100"
            ),
        "{err:?}"
    );
    assert_eq!(util::scan_all(&client, &table, None).await.len(), 0);
    // 100 is allowed.
    client
        .transact_write_items()
        .set_transact_items(Some(actions(100)))
        .send()
        .await
        .expect("100 actions are allowed");
    assert_eq!(util::scan_all(&client, &table, None).await.len(), 100);
}

#[tokio::test]
async fn two_actions_on_one_item_is_a_validation_error() {
    let client = util::client();
    let table = util::table_s(&client).await;
    let result = client
        .transact_write_items()
        .transact_items(txn::put(&table, item(&[("p", s("other"))]), None, &[]))
        .transact_items(txn::put(&table, item(&[("p", s("k"))]), None, &[]))
        .transact_items(txn::update(
            &table,
            item(&[("p", s("k"))]),
            "SET v = :one",
            None,
            &[(":one", n("1"))],
        ))
        .send()
        .await;
    util::assert_validation(
        result,
        "Transaction request cannot include multiple operations on one item",
    );
    // A ConditionCheck on an item another action writes is no exception.
    let result = client
        .transact_write_items()
        .transact_items(txn::check(
            &table,
            item(&[("p", s("k"))]),
            "attribute_not_exists(p)",
            &[],
        ))
        .transact_items(txn::delete(&table, item(&[("p", s("k"))]), None, &[]))
        .send()
        .await;
    util::assert_validation(
        result,
        "Transaction request cannot include multiple operations on one item",
    );
    assert_eq!(util::scan_all(&client, &table, None).await.len(), 0);
}

#[tokio::test]
async fn a_failed_condition_in_one_table_writes_nothing_in_another() {
    let client = util::client();
    let orders = util::table_s(&client).await;
    let stock = util::table_s(&client).await;
    client
        .put_item()
        .table_name(&stock)
        .set_item(Some(item(&[("p", s("widget")), ("qty", n("1"))])))
        .send()
        .await
        .unwrap();
    let order = |id: &str| {
        vec![
            txn::put(&orders, item(&[("p", s(id))]), None, &[]),
            txn::update(
                &stock,
                item(&[("p", s("widget"))]),
                "SET qty = qty - :one",
                Some("qty >= :one"),
                &[(":one", n("1"))],
            ),
        ]
    };
    client
        .transact_write_items()
        .set_transact_items(Some(order("o1")))
        .send()
        .await
        .unwrap();
    let (_, reasons) = txn::canceled(
        client
            .transact_write_items()
            .set_transact_items(Some(order("o2")))
            .send()
            .await,
    );
    assert_eq!(txn::codes(&reasons), ["None", "ConditionalCheckFailed"]);
    assert!(get(&client, &orders, "o1").await.is_some());
    assert_eq!(get(&client, &orders, "o2").await, None);
    assert_eq!(
        get_n(&get(&client, &stock, "widget").await.unwrap(), "qty"),
        0
    );
}

fn add_one(table: &str, p: &str) -> Vec<TransactWriteItem> {
    vec![txn::update(
        table,
        item(&[("p", s(p))]),
        "ADD hits :one",
        None,
        &[(":one", n("1"))],
    )]
}

#[tokio::test]
async fn client_request_token_replay_succeeds_without_applying_again() {
    let client = util::client();
    let table = util::table_s(&client).await;
    let token = util::unique_name("tok");
    let first = client
        .transact_write_items()
        .set_transact_items(Some(add_one(&table, "k")))
        .client_request_token(&token)
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .expect("the first call succeeds");
    assert_eq!(first.consumed_capacity()[0].capacity_units(), Some(2.0));
    assert_eq!(
        first.consumed_capacity()[0].write_capacity_units(),
        Some(2.0)
    );
    assert_eq!(get_n(&get(&client, &table, "k").await.unwrap(), "hits"), 1);

    for _ in 0..2 {
        let replay = client
            .transact_write_items()
            .set_transact_items(Some(add_one(&table, "k")))
            .client_request_token(&token)
            .return_consumed_capacity(ReturnConsumedCapacity::Total)
            .send()
            .await
            .expect("a replay with the same token succeeds");
        // A replay reads rather than writes (DynamoDB reports read units).
        let cc = &replay.consumed_capacity()[0];
        assert!(cc.read_capacity_units().unwrap_or(0.0) > 0.0, "{cc:?}");
        assert_eq!(cc.write_capacity_units(), None, "{cc:?}");
        assert_eq!(
            get_n(&get(&client, &table, "k").await.unwrap(), "hits"),
            1,
            "the replay did not apply the ADD again"
        );
    }

    // Without a token the same request applies again.
    client
        .transact_write_items()
        .set_transact_items(Some(add_one(&table, "k")))
        .send()
        .await
        .unwrap();
    assert_eq!(get_n(&get(&client, &table, "k").await.unwrap(), "hits"), 2);

    // The same token with different parameters.
    let err = util::service_error(
        client
            .transact_write_items()
            .set_transact_items(Some(add_one(&table, "other")))
            .client_request_token(&token)
            .send()
            .await,
    );
    assert_eq!(err.code, "IdempotentParameterMismatchException", "{err:?}");
    assert_eq!(get(&client, &table, "other").await, None);
    assert_eq!(get_n(&get(&client, &table, "k").await.unwrap(), "hits"), 2);
}

#[tokio::test]
async fn transact_get_items_returns_items_in_request_order() {
    let client = util::client();
    let a = util::table_s(&client).await;
    let b = util::table_s(&client).await;
    client
        .put_item()
        .table_name(&a)
        .set_item(Some(item(&[("p", s("x")), ("v", n("1")), ("w", s("big"))])))
        .send()
        .await
        .unwrap();
    client
        .put_item()
        .table_name(&b)
        .set_item(Some(item(&[("p", s("y")), ("v", n("2"))])))
        .send()
        .await
        .unwrap();
    let projected = aws_sdk_dynamodb::types::TransactGetItem::builder()
        .get(
            aws_sdk_dynamodb::types::Get::builder()
                .table_name(&a)
                .key("p", s("x"))
                .projection_expression("v")
                .build()
                .unwrap(),
        )
        .build();
    let out = client
        .transact_get_items()
        .transact_items(txn::get(&b, item(&[("p", s("y"))])))
        .transact_items(txn::get(&a, item(&[("p", s("missing"))])))
        .transact_items(projected)
        .send()
        .await
        .unwrap();
    let responses = out.responses();
    assert_eq!(responses.len(), 3);
    assert_eq!(
        responses[0].item(),
        Some(&item(&[("p", s("y")), ("v", n("2"))]))
    );
    assert_eq!(responses[1].item(), None);
    assert_eq!(responses[2].item(), Some(&item(&[("v", n("1"))])));
}

/// A writer keeps two items (in two tables) equal with transactions while
/// readers check with TransactGetItems that they never see one without the
/// other.
#[tokio::test]
async fn transact_get_items_never_sees_half_a_transaction() {
    let client = util::client();
    let a = util::table_s(&client).await;
    let b = util::table_s(&client).await;
    let set = |v: usize| {
        vec![
            txn::put(
                &a,
                item(&[("p", s("pair")), ("v", n(&v.to_string()))]),
                None,
                &[],
            ),
            txn::put(
                &b,
                item(&[("p", s("pair")), ("v", n(&v.to_string()))]),
                None,
                &[],
            ),
        ]
    };
    client
        .transact_write_items()
        .set_transact_items(Some(set(0)))
        .send()
        .await
        .unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let mut readers = Vec::new();
    for _ in 0..4 {
        let client = util::client();
        let (a, b, done) = (a.clone(), b.clone(), done.clone());
        readers.push(tokio::spawn(async move {
            let (mut reads, mut cancelled) = (0usize, 0usize);
            while !done.load(Ordering::SeqCst) {
                let result = client
                    .transact_get_items()
                    .transact_items(txn::get(&a, item(&[("p", s("pair"))])))
                    .transact_items(txn::get(&b, item(&[("p", s("pair"))])))
                    .send()
                    .await;
                match result {
                    Ok(out) => {
                        let r = out.responses();
                        let va = get_n(r[0].item().unwrap(), "v");
                        let vb = get_n(r[1].item().unwrap(), "v");
                        assert_eq!(va, vb, "TransactGetItems saw half a transaction");
                        reads += 1;
                    }
                    Err(err) => {
                        // DynamoDB cancels a read that conflicts with a write
                        // in progress; that is allowed, a torn read is not.
                        let (_, reasons) = txn::get_canceled(Err::<(), _>(err));
                        assert!(
                            txn::codes(&reasons).contains(&"TransactionConflict"),
                            "{reasons:?}"
                        );
                        cancelled += 1;
                    }
                }
            }
            (reads, cancelled)
        }));
    }
    for v in 1..=150 {
        client
            .transact_write_items()
            .set_transact_items(Some(set(v)))
            .send()
            .await
            .unwrap();
    }
    done.store(true, Ordering::SeqCst);
    let mut total = 0;
    for r in readers {
        total += r.await.unwrap().0;
    }
    assert!(total > 0, "no read completed");
}

#[tokio::test]
async fn injected_conflict_cancels_with_a_transaction_conflict_reason() {
    let (_server, client) = util::own_server(&["--fault", "TransactWriteItems=conflict@1"]);
    let table = util::table_s(&client).await;
    let (message, reasons) = txn::canceled(
        client
            .transact_write_items()
            .transact_items(txn::put(&table, item(&[("p", s("a"))]), None, &[]))
            .transact_items(txn::put(&table, item(&[("p", s("b"))]), None, &[]))
            .transact_items(txn::put(&table, item(&[("p", s("c"))]), None, &[]))
            .send()
            .await,
    );
    let codes = txn::codes(&reasons);
    assert_eq!(codes.len(), 3);
    assert_eq!(
        codes
            .iter()
            .filter(|c| **c == "TransactionConflict")
            .count(),
        1,
        "{codes:?}"
    );
    assert!(
        codes
            .iter()
            .all(|c| *c == "TransactionConflict" || *c == "None"),
        "{codes:?}"
    );
    assert_eq!(message, txn::canceled_message(&codes));
    let conflict = reasons
        .iter()
        .find(|r| r.code() == Some("TransactionConflict"))
        .unwrap();
    assert_eq!(
        conflict.message(),
        Some("Transaction is ongoing for the item")
    );
    assert_eq!(util::scan_all(&client, &table, None).await.len(), 0);
    // The rule names TransactWriteItems only: a single put goes through.
    client
        .put_item()
        .table_name(&table)
        .item("p", s("single"))
        .send()
        .await
        .unwrap();
    assert_eq!(util::scan_all(&client, &table, None).await.len(), 1);
}

#[tokio::test]
async fn transactional_capacity_is_twice_the_standard_units() {
    let client = util::client();
    let table = util::table_s(&client).await;
    let big = item(&[("p", s("big")), ("d", s(&"x".repeat(2900)))]);
    client
        .put_item()
        .table_name(&table)
        .set_item(Some(big))
        .send()
        .await
        .unwrap();
    client
        .put_item()
        .table_name(&table)
        .item("p", s("small"))
        .send()
        .await
        .unwrap();
    // Deleting the ~3 KB item (3 units) and checking a small one (1 unit),
    // both doubled: 8.
    let out = client
        .transact_write_items()
        .transact_items(txn::delete(&table, item(&[("p", s("big"))]), None, &[]))
        .transact_items(txn::check(
            &table,
            item(&[("p", s("small"))]),
            "attribute_exists(p)",
            &[],
        ))
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .unwrap();
    assert_eq!(out.consumed_capacity()[0].capacity_units(), Some(8.0));
    // Transactional reads: 2 units per started 4 KB, per item.
    let out = client
        .transact_get_items()
        .transact_items(txn::get(&table, item(&[("p", s("small"))])))
        .transact_items(txn::get(&table, item(&[("p", s("missing"))])))
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .unwrap();
    let cc = &out.consumed_capacity()[0];
    assert_eq!(cc.table_name(), Some(table.as_str()));
    assert_eq!(cc.capacity_units(), Some(4.0));
}
