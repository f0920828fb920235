//! The three scenarios of the seed articles, end to end through the SDK:
//!
//! (a) uniqueness on e-mail and username with UNIQ# lock items written with
//!     the account in one guarded TransactWriteItems (sign-up, e-mail change,
//!     account deletion);
//! (b) an audit event and its tenant's eventCount kept in step by one
//!     transaction guarded by a ConditionCheck that the tenant is active;
//! (c) a support desk reading 50 tickets with one BatchGetItem and archiving
//!     1,000 with BatchWriteItem chunks of 25, retrying UnprocessedItems with
//!     capped exponential backoff and full jitter while fault injection makes
//!     the server leave requests unprocessed.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::util::txn::{self, Item};
use crate::util::{self, get_n, get_s, item, n, s};
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{
    AttributeValue, KeysAndAttributes, Put, PutRequest, ReturnConsumedCapacity,
    ReturnValuesOnConditionCheckFailure, ScalarAttributeType, Select, TransactWriteItem,
    WriteRequest,
};
use aws_sdk_dynamodb::Client;

const FAILED: &str = "The conditional request failed";

// ---------------------------------------------------------------- (a) ----

async fn accounts_table(client: &Client) -> String {
    util::create_table(
        client,
        "accounts",
        &[
            ("PK", ScalarAttributeType::S),
            ("SK", ScalarAttributeType::S),
        ],
    )
    .await
}

fn account_key(id: &str) -> Item {
    item(&[("PK", s(&format!("ACCT#{id}"))), ("SK", s("PROFILE"))])
}

fn email_lock_key(email: &str) -> Item {
    item(&[("PK", s(&format!("UNIQ#EMAIL#{email}"))), ("SK", s("LOCK"))])
}

fn handle_lock_key(handle: &str) -> Item {
    item(&[
        ("PK", s(&format!("UNIQ#HANDLE#{handle}"))),
        ("SK", s("LOCK")),
    ])
}

fn with(mut key: Item, extra: &[(&str, AttributeValue)]) -> Item {
    key.extend(item(extra));
    key
}

/// The three guarded puts of a sign-up, in the seed's order: account, e-mail
/// lock, username lock.
fn sign_up_actions(table: &str, id: &str, email: &str, handle: &str) -> Vec<TransactWriteItem> {
    vec![
        txn::put_new(
            table,
            with(
                account_key(id),
                &[("email", s(email)), ("username", s(handle))],
            ),
            "PK",
        ),
        txn::put_new(
            table,
            with(email_lock_key(email), &[("owner", s(id))]),
            "PK",
        ),
        txn::put_new(
            table,
            with(handle_lock_key(handle), &[("owner", s(id))]),
            "PK",
        ),
    ]
}

async fn sign_up(
    client: &Client,
    table: &str,
    id: &str,
    email: &str,
    handle: &str,
) -> Result<
    aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsOutput,
    aws_sdk_dynamodb::error::SdkError<
        aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError,
        aws_sdk_dynamodb::config::http::HttpResponse,
    >,
> {
    client
        .transact_write_items()
        .set_transact_items(Some(sign_up_actions(table, id, email, handle)))
        .send()
        .await
}

async fn get(client: &Client, table: &str, key: Item) -> Option<Item> {
    client
        .get_item()
        .table_name(table)
        .set_key(Some(key))
        .consistent_read(true)
        .send()
        .await
        .expect("GetItem succeeds")
        .item()
        .cloned()
}

#[tokio::test]
async fn sign_up_writes_the_account_and_both_locks() {
    let client = util::client();
    let table = accounts_table(&client).await;
    sign_up(&client, &table, "a1f9c3", "ada@lovelace.io", "ada")
        .await
        .expect("the first sign-up succeeds");
    let account = get(&client, &table, account_key("a1f9c3")).await.unwrap();
    assert_eq!(get_s(&account, "email"), "ada@lovelace.io");
    assert_eq!(get_s(&account, "username"), "ada");
    let lock = get(&client, &table, email_lock_key("ada@lovelace.io"))
        .await
        .unwrap();
    assert_eq!(get_s(&lock, "owner"), "a1f9c3");
    let lock = get(&client, &table, handle_lock_key("ada")).await.unwrap();
    assert_eq!(get_s(&lock, "owner"), "a1f9c3");
    assert_eq!(util::scan_all(&client, &table, None).await.len(), 3);
}

#[tokio::test]
async fn second_sign_up_with_a_taken_email_is_cancelled_at_the_email_position() {
    let client = util::client();
    let table = accounts_table(&client).await;
    sign_up(&client, &table, "a1", "ada@lovelace.io", "ada")
        .await
        .unwrap();

    let (message, reasons) =
        txn::canceled(sign_up(&client, &table, "b2", "ada@lovelace.io", "countess").await);
    let expected = ["None", "ConditionalCheckFailed", "None"];
    assert_eq!(txn::codes(&reasons), expected);
    assert_eq!(message, txn::canceled_message(&expected));
    assert_eq!(reasons[1].message(), Some(FAILED));
    assert_eq!(reasons[0].message(), None);
    assert_eq!(reasons[1].item(), None, "no Item unless ALL_OLD is asked");

    // Nothing of the second sign-up was written; the first is intact.
    assert_eq!(get(&client, &table, account_key("b2")).await, None);
    assert_eq!(
        get(&client, &table, handle_lock_key("countess")).await,
        None
    );
    let lock = get(&client, &table, email_lock_key("ada@lovelace.io"))
        .await
        .unwrap();
    assert_eq!(get_s(&lock, "owner"), "a1");
    assert_eq!(util::scan_all(&client, &table, None).await.len(), 3);

    // Both values taken: both lock positions fail, the account does not.
    let (message, reasons) =
        txn::canceled(sign_up(&client, &table, "c3", "ada@lovelace.io", "ada").await);
    let expected = ["None", "ConditionalCheckFailed", "ConditionalCheckFailed"];
    assert_eq!(txn::codes(&reasons), expected);
    assert_eq!(message, txn::canceled_message(&expected));

    // Only the username taken: the last position.
    let (_, reasons) =
        txn::canceled(sign_up(&client, &table, "d4", "other@example.com", "ada").await);
    assert_eq!(
        txn::codes(&reasons),
        ["None", "None", "ConditionalCheckFailed"]
    );
    assert_eq!(util::scan_all(&client, &table, None).await.len(), 3);
}

#[tokio::test]
async fn cancellation_reason_carries_the_lock_holder_with_all_old() {
    let client = util::client();
    let table = accounts_table(&client).await;
    sign_up(&client, &table, "a1", "ada@lovelace.io", "ada")
        .await
        .unwrap();
    let mut actions = sign_up_actions(&table, "b2", "ada@lovelace.io", "countess");
    actions[1] = TransactWriteItem::builder()
        .put(
            Put::builder()
                .table_name(&table)
                .set_item(Some(with(
                    email_lock_key("ada@lovelace.io"),
                    &[("owner", s("b2"))],
                )))
                .condition_expression("attribute_not_exists(PK)")
                .return_values_on_condition_check_failure(
                    ReturnValuesOnConditionCheckFailure::AllOld,
                )
                .build()
                .unwrap(),
        )
        .build();
    let (_, reasons) = txn::canceled(
        client
            .transact_write_items()
            .set_transact_items(Some(actions))
            .send()
            .await,
    );
    assert_eq!(
        txn::codes(&reasons),
        ["None", "ConditionalCheckFailed", "None"]
    );
    assert_eq!(
        reasons[1].item(),
        Some(&with(
            email_lock_key("ada@lovelace.io"),
            &[("owner", s("a1"))]
        ))
    );
    assert_eq!(reasons[0].item(), None);
    assert_eq!(reasons[2].item(), None);
}

fn change_email_actions(table: &str, id: &str, old: &str, new: &str) -> Vec<TransactWriteItem> {
    vec![
        txn::put_new(table, with(email_lock_key(new), &[("owner", s(id))]), "PK"),
        txn::delete(
            table,
            email_lock_key(old),
            Some("#owner = :me"),
            &[(":me", s(id))],
        ),
        txn::update(
            table,
            account_key(id),
            "SET email = :new",
            Some("email = :old"),
            &[(":new", s(new)), (":old", s(old))],
        ),
    ]
}

#[tokio::test]
async fn email_change_moves_the_lock_in_one_transaction() {
    let client = util::client();
    let table = accounts_table(&client).await;
    sign_up(&client, &table, "a1", "ada@lovelace.io", "ada")
        .await
        .unwrap();
    client
        .transact_write_items()
        .set_transact_items(Some(change_email_actions(
            &table,
            "a1",
            "ada@lovelace.io",
            "ada@analytical.engine",
        )))
        .send()
        .await
        .expect("the e-mail change succeeds");
    assert_eq!(
        get(&client, &table, email_lock_key("ada@lovelace.io")).await,
        None,
        "the old lock is released"
    );
    let lock = get(&client, &table, email_lock_key("ada@analytical.engine"))
        .await
        .expect("the new lock is held");
    assert_eq!(get_s(&lock, "owner"), "a1");
    let account = get(&client, &table, account_key("a1")).await.unwrap();
    assert_eq!(get_s(&account, "email"), "ada@analytical.engine");
    assert_eq!(util::scan_all(&client, &table, None).await.len(), 3);

    // The released address can be taken by someone else; the new one cannot.
    sign_up(&client, &table, "b2", "ada@lovelace.io", "byron")
        .await
        .expect("the released e-mail is free again");
    let (_, reasons) =
        txn::canceled(sign_up(&client, &table, "c3", "ada@analytical.engine", "charles").await);
    assert_eq!(
        txn::codes(&reasons),
        ["None", "ConditionalCheckFailed", "None"]
    );
}

#[tokio::test]
async fn email_change_to_a_taken_address_changes_nothing() {
    let client = util::client();
    let table = accounts_table(&client).await;
    sign_up(&client, &table, "a1", "ada@lovelace.io", "ada")
        .await
        .unwrap();
    sign_up(&client, &table, "b2", "byron@example.com", "byron")
        .await
        .unwrap();
    let before = util::scan_all(&client, &table, None).await;
    let (message, reasons) = txn::canceled(
        client
            .transact_write_items()
            .set_transact_items(Some(change_email_actions(
                &table,
                "a1",
                "ada@lovelace.io",
                "byron@example.com",
            )))
            .send()
            .await,
    );
    let expected = ["ConditionalCheckFailed", "None", "None"];
    assert_eq!(txn::codes(&reasons), expected);
    assert_eq!(message, txn::canceled_message(&expected));
    // A stale view of the old address (someone else's lock) fails at the
    // delete and the update, and again nothing moves.
    let (_, reasons) = txn::canceled(
        client
            .transact_write_items()
            .set_transact_items(Some(change_email_actions(
                &table,
                "a1",
                "byron@example.com",
                "new@example.com",
            )))
            .send()
            .await,
    );
    assert_eq!(
        txn::codes(&reasons),
        ["None", "ConditionalCheckFailed", "ConditionalCheckFailed"]
    );
    let mut after = util::scan_all(&client, &table, None).await;
    let mut before = before;
    let order = |a: &Item, b: &Item| get_s(a, "PK").cmp(get_s(b, "PK"));
    before.sort_by(order);
    after.sort_by(order);
    assert_eq!(before, after);
}

#[tokio::test]
async fn account_deletion_releases_both_locks() {
    let client = util::client();
    let table = accounts_table(&client).await;
    sign_up(&client, &table, "a1", "ada@lovelace.io", "ada")
        .await
        .unwrap();
    sign_up(&client, &table, "b2", "byron@example.com", "byron")
        .await
        .unwrap();
    let owned = "#owner = :me";
    let delete_account = |id: &str, email: &str, handle: &str| {
        vec![
            txn::delete(&table, account_key(id), Some("attribute_exists(PK)"), &[]),
            txn::delete(
                &table,
                email_lock_key(email),
                Some(owned),
                &[(":me", s(id))],
            ),
            txn::delete(
                &table,
                handle_lock_key(handle),
                Some(owned),
                &[(":me", s(id))],
            ),
        ]
    };
    // Deleting with someone else's lock is refused as a whole.
    let (_, reasons) = txn::canceled(
        client
            .transact_write_items()
            .set_transact_items(Some(delete_account("a1", "ada@lovelace.io", "byron")))
            .send()
            .await,
    );
    assert_eq!(
        txn::codes(&reasons),
        ["None", "None", "ConditionalCheckFailed"]
    );
    assert_eq!(util::scan_all(&client, &table, None).await.len(), 6);

    client
        .transact_write_items()
        .set_transact_items(Some(delete_account("a1", "ada@lovelace.io", "ada")))
        .send()
        .await
        .expect("the account deletion succeeds");
    let left: BTreeSet<String> = util::scan_all(&client, &table, None)
        .await
        .iter()
        .map(|i| get_s(i, "PK").to_string())
        .collect();
    assert_eq!(
        left,
        BTreeSet::from([
            "ACCT#b2".to_string(),
            "UNIQ#EMAIL#byron@example.com".to_string(),
            "UNIQ#HANDLE#byron".to_string()
        ])
    );
    sign_up(&client, &table, "c3", "ada@lovelace.io", "ada")
        .await
        .expect("both released values can be registered again");
}

#[tokio::test]
async fn three_put_registration_consumes_six_write_units() {
    let client = util::client();
    let table = accounts_table(&client).await;
    let out = client
        .transact_write_items()
        .set_transact_items(Some(sign_up_actions(
            &table,
            "a1f9c3",
            "ada@lovelace.io",
            "ada",
        )))
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .unwrap();
    let consumed = out.consumed_capacity();
    assert_eq!(consumed.len(), 1, "one entry per table: {consumed:?}");
    assert_eq!(consumed[0].table_name(), Some(table.as_str()));
    // Each transactional write costs twice the 1 unit of a sub-1 KB put (AWS);
    // DynamoDB Local reports 2.0 here.
    assert_eq!(consumed[0].capacity_units(), Some(6.0));
}

// ---------------------------------------------------------------- (b) ----

async fn audit_table(client: &Client, tenant: &str, status: &str) -> String {
    let table = util::create_table(
        client,
        "audit",
        &[
            ("PK", ScalarAttributeType::S),
            ("SK", ScalarAttributeType::S),
        ],
    )
    .await;
    client
        .put_item()
        .table_name(&table)
        .set_item(Some(item(&[
            ("PK", s(&format!("TENANT#{tenant}"))),
            ("SK", s("PROFILE")),
            ("status", s(status)),
        ])))
        .send()
        .await
        .unwrap();
    table
}

/// Event append + counter, guarded by the tenant being active.
fn append_actions(table: &str, tenant: &str, event: &str) -> Vec<TransactWriteItem> {
    let pk = format!("TENANT#{tenant}");
    vec![
        txn::check(
            table,
            item(&[("PK", s(&pk)), ("SK", s("PROFILE"))]),
            "#status = :active",
            &[(":active", s("active"))],
        ),
        txn::put_new(
            table,
            item(&[
                ("PK", s(&pk)),
                ("SK", s(&format!("EVENT#{event}"))),
                ("action", s("login")),
            ]),
            "SK",
        ),
        txn::update(
            table,
            item(&[("PK", s(&pk)), ("SK", s("COUNTER"))]),
            "ADD eventCount :one",
            None,
            &[(":one", n("1"))],
        ),
    ]
}

async fn event_count(client: &Client, table: &str, tenant: &str) -> (i64, Option<i64>) {
    let events = client
        .query()
        .table_name(table)
        .key_condition_expression("PK = :pk AND begins_with(SK, :event)")
        .expression_attribute_values(":pk", s(&format!("TENANT#{tenant}")))
        .expression_attribute_values(":event", s("EVENT#"))
        .select(Select::Count)
        .consistent_read(true)
        .send()
        .await
        .unwrap();
    assert!(events.last_evaluated_key().is_none());
    let counter = get(
        client,
        table,
        item(&[("PK", s(&format!("TENANT#{tenant}"))), ("SK", s("COUNTER"))]),
    )
    .await
    .map(|c| get_n(&c, "eventCount"));
    (events.count() as i64, counter)
}

#[tokio::test]
async fn audit_append_writes_the_event_and_the_count_together() {
    let client = util::client();
    let table = audit_table(&client, "acme", "active").await;
    for event in ["e1", "e2", "e3"] {
        client
            .transact_write_items()
            .set_transact_items(Some(append_actions(&table, "acme", event)))
            .send()
            .await
            .unwrap();
    }
    assert_eq!(event_count(&client, &table, "acme").await, (3, Some(3)));

    // A retried append of an existing event is refused at the Put and does
    // not count twice.
    let (_, reasons) = txn::canceled(
        client
            .transact_write_items()
            .set_transact_items(Some(append_actions(&table, "acme", "e2")))
            .send()
            .await,
    );
    assert_eq!(
        txn::codes(&reasons),
        ["None", "ConditionalCheckFailed", "None"]
    );
    assert_eq!(event_count(&client, &table, "acme").await, (3, Some(3)));
}

#[tokio::test]
async fn audit_append_for_an_inactive_tenant_writes_nothing() {
    let client = util::client();
    let table = audit_table(&client, "acme", "suspended").await;
    let (message, reasons) = txn::canceled(
        client
            .transact_write_items()
            .set_transact_items(Some(append_actions(&table, "acme", "e1")))
            .send()
            .await,
    );
    let expected = ["ConditionalCheckFailed", "None", "None"];
    assert_eq!(txn::codes(&reasons), expected);
    assert_eq!(message, txn::canceled_message(&expected));
    assert_eq!(reasons[0].message(), Some(FAILED));
    assert_eq!(event_count(&client, &table, "acme").await, (0, None));
    assert_eq!(util::scan_all(&client, &table, None).await.len(), 1);
    // A tenant that does not exist is not active either.
    let (_, reasons) = txn::canceled(
        client
            .transact_write_items()
            .set_transact_items(Some(append_actions(&table, "ghost", "e1")))
            .send()
            .await,
    );
    assert_eq!(txn::codes(&reasons), expected);
    assert_eq!(util::scan_all(&client, &table, None).await.len(), 1);
}

#[tokio::test]
async fn concurrent_audit_appends_never_drift_from_the_count() {
    const TASKS: usize = 16;
    const PER_TASK: usize = 20;
    let client = util::client();
    let table = audit_table(&client, "acme", "active").await;
    let appended = Arc::new(AtomicUsize::new(0));
    let conflicts = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for t in 0..TASKS {
        let client = util::client();
        let table = table.clone();
        let appended = appended.clone();
        let conflicts = conflicts.clone();
        tasks.push(tokio::spawn(async move {
            for i in 0..PER_TASK {
                let event = format!("{t:02}-{i:03}");
                // Retry only transaction conflicts (contention on the counter,
                // as DynamoDB reports it); the Put's guard makes it safe.
                loop {
                    let result = client
                        .transact_write_items()
                        .set_transact_items(Some(append_actions(&table, "acme", &event)))
                        .send()
                        .await;
                    match result {
                        Ok(_) => {
                            appended.fetch_add(1, Ordering::SeqCst);
                            break;
                        }
                        Err(err) => {
                            let (_, reasons) = txn::canceled(Err::<(), _>(err));
                            let codes = txn::codes(&reasons);
                            if codes.contains(&"TransactionConflict") {
                                conflicts.fetch_add(1, Ordering::SeqCst);
                                continue;
                            }
                            // Suspended mid-run: nothing of this append exists.
                            assert_eq!(codes, ["ConditionalCheckFailed", "None", "None"]);
                            return;
                        }
                    }
                }
            }
        }));
    }
    // Suspend the tenant while appends are in flight.
    let watcher = {
        let client = util::client();
        let table = table.clone();
        let appended = appended.clone();
        tokio::spawn(async move {
            util::poll_until("100 appends", Duration::from_secs(60), || {
                let done = appended.load(Ordering::SeqCst) >= TASKS * PER_TASK / 2;
                async move { done.then_some(()) }
            })
            .await;
            // The profile is read by every append's ConditionCheck, so this
            // single write can meet one in flight: DynamoDB answers
            // TransactionConflictException and says to retry.
            loop {
                let result = client
                    .update_item()
                    .table_name(&table)
                    .key("PK", s("TENANT#acme"))
                    .key("SK", s("PROFILE"))
                    .update_expression("SET #s = :s")
                    .expression_attribute_names("#s", "status")
                    .expression_attribute_values(":s", s("suspended"))
                    .send()
                    .await;
                let conflict = matches!(
                    result.as_ref().map_err(|e| e.as_service_error()),
                    Err(Some(UpdateItemError::TransactionConflictException(_)))
                );
                if !conflict {
                    result.expect("the tenant is suspended");
                    break;
                }
            }
        })
    };
    for task in tasks {
        task.await.unwrap();
    }
    watcher.await.unwrap();
    let appended = appended.load(Ordering::SeqCst) as i64;
    let (events, counter) = event_count(&client, &table, "acme").await;
    assert_eq!(
        (events, counter),
        (appended, Some(appended)),
        "events and eventCount agree with the acknowledged appends ({} conflicts retried)",
        conflicts.load(Ordering::SeqCst)
    );
    assert!(appended >= (TASKS * PER_TASK / 2) as i64);
}

// ---------------------------------------------------------------- (c) ----

/// Capped exponential backoff with full jitter: a random delay in
/// [0, min(cap, base * 2^attempt)].
fn backoff(attempt: u32, rng: &mut util::Rng) -> Duration {
    const BASE_MS: u64 = 2;
    const CAP_MS: u64 = 64;
    let ceiling = CAP_MS.min(BASE_MS << attempt.min(16));
    Duration::from_millis(rng.u64(0..=ceiling))
}

/// Statistics of a batch writer run.
#[derive(Default, Debug)]
struct Retries {
    calls: usize,
    unprocessed: usize,
}

/// Writes `requests` in chunks of 25, resending only what comes back in
/// UnprocessedItems, with backoff and jitter, until everything is written.
async fn batch_write_all(
    client: &Client,
    table: &str,
    requests: Vec<WriteRequest>,
    rng: &mut util::Rng,
    stats: &mut Retries,
) {
    for chunk in requests.chunks(25) {
        let mut pending: HashMap<String, Vec<WriteRequest>> =
            HashMap::from([(table.to_string(), chunk.to_vec())]);
        let mut attempt = 0;
        loop {
            let out = client
                .batch_write_item()
                .set_request_items(Some(pending))
                .send()
                .await
                .expect("BatchWriteItem succeeds");
            stats.calls += 1;
            pending = out.unprocessed_items().cloned().unwrap_or_default();
            pending.retain(|_, v| !v.is_empty());
            if pending.is_empty() {
                break;
            }
            stats.unprocessed += pending.values().map(Vec::len).sum::<usize>();
            attempt += 1;
            assert!(attempt < 30, "a chunk stayed unprocessed for 30 attempts");
            tokio::time::sleep(backoff(attempt, rng)).await;
        }
    }
}

fn ticket(i: usize, status: &str) -> Item {
    item(&[
        ("ticketId", s(&format!("T-{i:04}"))),
        ("subject", s(&format!("printer {i} is on fire"))),
        ("status", s(status)),
        ("priority", n(&(i % 5).to_string())),
    ])
}

fn put_request(item: Item) -> WriteRequest {
    WriteRequest::builder()
        .put_request(PutRequest::builder().set_item(Some(item)).build().unwrap())
        .build()
}

#[tokio::test]
async fn support_desk_reads_50_tickets_and_archives_1000_despite_unprocessed_items() {
    let (_server, client) = util::own_server(&[
        "--fault",
        "BatchWriteItem=unprocessed@0.3",
        "--fault-seed",
        "7",
    ]);
    let tickets =
        util::create_table(&client, "tickets", &[("ticketId", ScalarAttributeType::S)]).await;
    let archive =
        util::create_table(&client, "archive", &[("ticketId", ScalarAttributeType::S)]).await;
    let mut rng = util::Rng::with_seed(7);
    let mut load = Retries::default();
    batch_write_all(
        &client,
        &tickets,
        (0..1000).map(|i| put_request(ticket(i, "open"))).collect(),
        &mut rng,
        &mut load,
    )
    .await;
    assert_eq!(util::scan_all(&client, &tickets, None).await.len(), 1000);

    // The desk's first screen: 50 tickets in one BatchGetItem.
    let keys: Vec<Item> = (0..50)
        .map(|i| item(&[("ticketId", s(&format!("T-{:04}", i * 20)))]))
        .collect();
    let mut got: Vec<Item> = Vec::new();
    let mut request = Some(HashMap::from([(
        tickets.clone(),
        KeysAndAttributes::builder()
            .set_keys(Some(keys))
            .consistent_read(true)
            .build()
            .unwrap(),
    )]));
    let mut calls = 0;
    while let Some(items) = request.take() {
        let out = client
            .batch_get_item()
            .set_request_items(Some(items))
            .send()
            .await
            .unwrap();
        calls += 1;
        got.extend(out.responses().unwrap()[&tickets].iter().cloned());
        request = out.unprocessed_keys().filter(|u| !u.is_empty()).cloned();
        assert!(calls < 30);
    }
    let mut expected: Vec<Item> = (0..50).map(|i| ticket(i * 20, "open")).collect();
    let order = |a: &Item, b: &Item| get_s(a, "ticketId").cmp(get_s(b, "ticketId"));
    got.sort_by(order);
    expected.sort_by(order);
    assert_eq!(got, expected);

    // Archive all 1,000: copy to the archive table, then delete the originals.
    let mut archive_stats = Retries::default();
    batch_write_all(
        &client,
        &archive,
        (0..1000)
            .map(|i| put_request(ticket(i, "archived")))
            .collect(),
        &mut rng,
        &mut archive_stats,
    )
    .await;
    batch_write_all(
        &client,
        &tickets,
        (0..1000)
            .map(|i| {
                WriteRequest::builder()
                    .delete_request(
                        aws_sdk_dynamodb::types::DeleteRequest::builder()
                            .key("ticketId", s(&format!("T-{i:04}")))
                            .build()
                            .unwrap(),
                    )
                    .build()
            })
            .collect(),
        &mut rng,
        &mut archive_stats,
    )
    .await;

    let archived = util::scan_all(&client, &archive, None).await;
    assert_eq!(archived.len(), 1000);
    let ids: BTreeSet<&str> = archived.iter().map(|i| get_s(i, "ticketId")).collect();
    assert_eq!(ids.len(), 1000);
    assert!(archived.iter().all(|i| get_s(i, "status") == "archived"));
    assert_eq!(util::scan_all(&client, &tickets, None).await.len(), 0);

    // The fault rule really left requests unprocessed, and the loop retried.
    for (what, stats) in [("load", &load), ("archive", &archive_stats)] {
        assert!(
            stats.unprocessed > 0,
            "{what}: no request came back unprocessed: {stats:?}"
        );
        assert!(
            stats.calls > if what == "load" { 40 } else { 80 },
            "{what}: no chunk was retried: {stats:?}"
        );
    }
}
