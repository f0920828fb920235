//! Real contention, checked for anomalies: an isolation checker (bank
//! transfers as TransactWriteItems with guarded updates and a ledger item
//! each, TransactGetItems snapshots, list_append histories) on memory and on
//! disk, and a hot item that transactions and single writes fight over.
//! Clients retry conflicts (TransactionConflictException, TransactionConflict
//! cancellation reasons), which DynamoDB's retry guidance says to do.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::util::{self, get_n, get_s, item, l, n, s, txn, ServerProcess};
use aws_sdk_dynamodb::operation::transact_get_items::TransactGetItemsError;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem};
use aws_sdk_dynamodb::Client;
use std::sync::Mutex;

const ACCOUNTS: usize = 16;
const OPENING: i64 = 1_000;
const TRANSFERRERS: usize = 64;
const TRANSFERS: usize = 10;
const READERS: usize = 6;
const APPENDERS: usize = 8;
const APPENDS: usize = 16;
const LISTS: usize = 4;

fn account(a: usize) -> HashMap<String, AttributeValue> {
    item(&[("p", s(&format!("acct{a:02}")))])
}

fn list_key(k: usize) -> HashMap<String, AttributeValue> {
    item(&[("p", s(&format!("list{k}")))])
}

/// What the clients saw, for the checks at the end.
#[derive(Default)]
struct History {
    /// Committed transfers: ledger id → (from, to, amount).
    committed: BTreeMap<String, (usize, usize, i64)>,
    /// Transfers refused by their condition (never to appear).
    refused: BTreeSet<String>,
    /// Acknowledged appends, per list, in each client's order.
    appended: BTreeMap<usize, Vec<String>>,
    /// Appends cancelled by their condition.
    cancelled_appends: BTreeSet<String>,
    /// Every read of every list.
    list_reads: BTreeMap<usize, Vec<Vec<String>>>,
    snapshots: usize,
    conflicts: usize,
}

type Shared = Arc<Mutex<History>>;

/// Whether a TransactWriteItems error is a cancellation with a
/// TransactionConflict reason (retry) or a condition failure (final).
fn write_cancellation(error: TransactWriteItemsError) -> Vec<String> {
    match error {
        TransactWriteItemsError::TransactionCanceledException(e) => {
            txn::codes(e.cancellation_reasons())
                .iter()
                .map(|c| c.to_string())
                .collect()
        }
        other => panic!("unexpected TransactWriteItems error: {other:?}"),
    }
}

/// Sends a transaction until it commits (Ok) or is refused by a condition
/// (Err with the reason codes), retrying conflicts; counts the conflicts.
async fn until_decided(
    client: &Client,
    actions: Vec<TransactWriteItem>,
    conflicts: &mut usize,
) -> Result<(), Vec<String>> {
    loop {
        let sent = client
            .transact_write_items()
            .set_transact_items(Some(actions.clone()))
            .send()
            .await;
        let Err(error) = sent else { return Ok(()) };
        let codes = write_cancellation(error.into_service_error());
        if codes.iter().any(|c| c == "TransactionConflict") {
            assert!(
                codes
                    .iter()
                    .all(|c| c == "TransactionConflict" || c == "None"),
                "a conflict cancels before any condition is evaluated: {codes:?}"
            );
            *conflicts += 1;
            tokio::time::sleep(Duration::from_micros(fastrand::u64(50..500))).await;
            continue;
        }
        return Err(codes);
    }
}

async fn transferrer(client: Client, table: String, t: usize, history: Shared) {
    let mut rng = util::Rng::with_seed(t as u64 + 1);
    let mut conflicts = 0;
    for i in 0..TRANSFERS {
        let from = rng.usize(0..ACCOUNTS);
        let to = (from + rng.usize(1..ACCOUNTS)) % ACCOUNTS;
        let amount = rng.i64(1..=400);
        let id = format!("xfer#{t:02}#{i:02}");
        let amt = [(":amt", n(&amount.to_string()))];
        let actions = vec![
            txn::update(
                &table,
                account(from),
                "SET balance = balance - :amt",
                Some("balance >= :amt"),
                &amt,
            ),
            txn::update(
                &table,
                account(to),
                "SET balance = balance + :amt",
                Some("attribute_exists(p)"),
                &amt,
            ),
            txn::put_new(
                &table,
                item(&[
                    ("p", s(&id)),
                    ("from", n(&from.to_string())),
                    ("to", n(&to.to_string())),
                    ("amount", n(&amount.to_string())),
                ]),
                "p",
            ),
        ];
        let outcome = until_decided(&client, actions, &mut conflicts).await;
        let mut history = history.lock().unwrap();
        match outcome {
            Ok(()) => {
                history.committed.insert(id, (from, to, amount));
            }
            Err(codes) => {
                assert_eq!(codes, ["ConditionalCheckFailed", "None", "None"]);
                history.refused.insert(id);
            }
        }
    }
    history.lock().unwrap().conflicts += conflicts;
}

fn strings(value: Option<&AttributeValue>) -> Vec<String> {
    match value {
        Some(AttributeValue::L(list)) => list
            .iter()
            .map(|v| v.as_s().expect("list of strings").clone())
            .collect(),
        None => Vec::new(),
        other => panic!("not a list: {other:?}"),
    }
}

/// TransactGetItems of every account and list until `done`: each snapshot
/// must hold the whole money, no negative balance.
async fn reader(client: Client, table: String, done: Arc<AtomicBool>, history: Shared) {
    let total = OPENING * ACCOUNTS as i64;
    let mut conflicts = 0;
    let mut snapshots = 0;
    while snapshots == 0 || !done.load(Ordering::SeqCst) {
        let mut request = client.transact_get_items();
        for a in 0..ACCOUNTS {
            request = request.transact_items(txn::get(&table, account(a)));
        }
        for k in 0..LISTS {
            request = request.transact_items(txn::get(&table, list_key(k)));
        }
        let out = match request.send().await {
            Ok(out) => out,
            Err(error) => match error.into_service_error() {
                TransactGetItemsError::TransactionCanceledException(e) => {
                    assert!(txn::codes(e.cancellation_reasons()).contains(&"TransactionConflict"));
                    conflicts += 1;
                    continue;
                }
                other => panic!("unexpected TransactGetItems error: {other:?}"),
            },
        };
        let responses = out.responses();
        let balances: Vec<i64> = responses[..ACCOUNTS]
            .iter()
            .map(|r| get_n(r.item().expect("accounts exist"), "balance"))
            .collect();
        assert_eq!(
            balances.iter().sum::<i64>(),
            total,
            "a snapshot saw money created or destroyed"
        );
        assert!(
            balances.iter().all(|b| *b >= 0),
            "a snapshot saw a negative balance: {balances:?}"
        );
        let mut history = history.lock().unwrap();
        for (k, response) in responses[ACCOUNTS..].iter().enumerate() {
            let read = strings(response.item().and_then(|i| i.get("l")));
            history.list_reads.entry(k).or_default().push(read);
        }
        snapshots += 1;
    }
    let mut history = history.lock().unwrap();
    history.snapshots += snapshots;
    history.conflicts += conflicts;
}

/// Appends `value` to list `k` with UpdateItem, retrying conflicts.
async fn append_single(client: &Client, table: &str, k: usize, value: &str, conflicts: &mut usize) {
    loop {
        let sent = client
            .update_item()
            .table_name(table)
            .set_key(Some(list_key(k)))
            .update_expression("SET l = list_append(if_not_exists(l, :empty), :v)")
            .expression_attribute_values(":empty", l(vec![]))
            .expression_attribute_values(":v", l(vec![s(value)]))
            .send()
            .await;
        match sent.map_err(|e| e.into_service_error()) {
            Ok(_) => return,
            Err(UpdateItemError::TransactionConflictException(_)) => *conflicts += 1,
            Err(other) => panic!("unexpected UpdateItem error: {other:?}"),
        }
    }
}

/// Appends by UpdateItem and by transactions guarded by an account's
/// balance (some are refused), reading the list back after each.
async fn appender(client: Client, table: String, c: usize, history: Shared) {
    let mut rng = util::Rng::with_seed(1_000 + c as u64);
    let mut conflicts = 0;
    for i in 0..APPENDS {
        let k = rng.usize(0..LISTS);
        let value = format!("c{c}-{i:02}");
        let applied = if i.is_multiple_of(2) {
            append_single(&client, &table, k, &value, &mut conflicts).await;
            true
        } else {
            let min = [(":min", n(&rng.i64(0..=1_500).to_string()))];
            let append = [(":empty", l(vec![])), (":v", l(vec![s(&value)]))];
            let actions = vec![
                txn::update(
                    &table,
                    list_key(k),
                    "SET l = list_append(if_not_exists(l, :empty), :v)",
                    None,
                    &append,
                ),
                txn::check(
                    &table,
                    account(rng.usize(0..ACCOUNTS)),
                    "balance >= :min",
                    &min,
                ),
            ];
            until_decided(&client, actions, &mut conflicts)
                .await
                .is_ok()
        };
        let read = client
            .get_item()
            .table_name(&table)
            .set_key(Some(list_key(k)))
            .consistent_read(true)
            .send()
            .await
            .unwrap();
        let read = strings(read.item().and_then(|i| i.get("l")));
        let mut history = history.lock().unwrap();
        assert_eq!(
            read.contains(&value),
            applied,
            "{value} after its append: {read:?}"
        );
        if applied {
            history.appended.entry(k).or_default().push(value);
        } else {
            history.cancelled_appends.insert(value);
        }
        history.list_reads.entry(k).or_default().push(read);
    }
    history.lock().unwrap().conflicts += conflicts;
}

async fn open_accounts(client: &Client) -> String {
    let table = util::table_s(client).await;
    for a in 0..ACCOUNTS {
        let mut opened = account(a);
        opened.insert("balance".into(), n(&OPENING.to_string()));
        client
            .put_item()
            .table_name(&table)
            .set_item(Some(opened))
            .send()
            .await
            .unwrap();
    }
    table
}

/// Runs every client at once against `endpoint` and checks the history.
async fn isolation_check(endpoint: &str) {
    let client = util::client_for(endpoint);
    let table = open_accounts(&client).await;
    let history: Shared = Arc::default();
    let done = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..READERS)
        .map(|_| {
            let run = reader(
                util::client_for(endpoint),
                table.clone(),
                done.clone(),
                history.clone(),
            );
            tokio::spawn(run)
        })
        .collect();
    let mut writers = Vec::new();
    for t in 0..TRANSFERRERS {
        let run = transferrer(
            util::client_for(endpoint),
            table.clone(),
            t,
            history.clone(),
        );
        writers.push(tokio::spawn(run));
    }
    for c in 0..APPENDERS {
        let run = appender(
            util::client_for(endpoint),
            table.clone(),
            c,
            history.clone(),
        );
        writers.push(tokio::spawn(run));
    }
    for writer in writers {
        writer.await.unwrap();
    }
    done.store(true, Ordering::SeqCst);
    for reader in readers {
        reader.await.unwrap();
    }
    let history = Arc::try_unwrap(history).ok().unwrap().into_inner().unwrap();
    check_money(&client, &table, &history).await;
    check_lists(&client, &table, &history).await;
    eprintln!(
        "isolation: {} transfers committed, {} refused, {} snapshots, {} conflicts retried",
        history.committed.len(),
        history.refused.len(),
        history.snapshots,
        history.conflicts
    );
}

/// Final balances are the committed transfers applied to the openings, and
/// the ledger holds exactly the committed transfers.
async fn check_money(client: &Client, table: &str, history: &History) {
    let mut expected = [OPENING; ACCOUNTS];
    for (from, to, amount) in history.committed.values() {
        expected[*from] -= amount;
        expected[*to] += amount;
    }
    let items = util::scan_all(client, table, None).await;
    let mut balances = [i64::MIN; ACCOUNTS];
    let mut ledger = BTreeSet::new();
    for found in &items {
        let p = get_s(found, "p");
        if let Some(a) = p.strip_prefix("acct") {
            balances[a.parse::<usize>().unwrap()] = get_n(found, "balance");
        } else if p.starts_with("xfer#") {
            ledger.insert(p.to_string());
        }
    }
    assert_eq!(
        balances, expected,
        "balances are the committed transfers, each once"
    );
    assert!(balances.iter().all(|b| *b >= 0));
    let committed: BTreeSet<String> = history.committed.keys().cloned().collect();
    assert_eq!(
        ledger, committed,
        "the ledger holds exactly the committed transfers"
    );
    assert!(history.refused.is_disjoint(&ledger));
}

/// Each list holds every acknowledged append once, in each client's order,
/// and no cancelled one; any two reads of a list are prefix-consistent.
async fn check_lists(client: &Client, table: &str, history: &History) {
    for k in 0..LISTS {
        let out = client
            .get_item()
            .table_name(table)
            .set_key(Some(list_key(k)))
            .consistent_read(true)
            .send()
            .await
            .unwrap();
        let last = strings(out.item().and_then(|i| i.get("l")));
        let acknowledged = history.appended.get(&k).cloned().unwrap_or_default();
        let mut sorted_last = last.clone();
        sorted_last.sort();
        let mut sorted_acked = acknowledged.clone();
        sorted_acked.sort();
        assert_eq!(
            sorted_last, sorted_acked,
            "list{k} holds each acknowledged append once"
        );
        let position = |v: &String| last.iter().position(|x| x == v).unwrap();
        for client in 0..APPENDERS {
            let mine: Vec<&String> = acknowledged
                .iter()
                .filter(|v| v.starts_with(&format!("c{client}-")))
                .collect();
            assert!(
                mine.windows(2).all(|w| position(w[0]) < position(w[1])),
                "list{k} keeps c{client}'s order"
            );
        }
        assert!(last.iter().all(|v| !history.cancelled_appends.contains(v)));
        let mut reads = history.list_reads.get(&k).cloned().unwrap_or_default();
        reads.push(last);
        reads.sort_by_key(Vec::len);
        for pair in reads.windows(2) {
            assert!(
                pair[1].starts_with(&pair[0]),
                "list{k}: {:?} is not a prefix of {:?}",
                pair[0],
                pair[1]
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn transfers_snapshots_and_appends_show_no_anomaly_in_memory() {
    let _heavy = util::heavy_test().await;
    let (server, _) = util::own_server(&[]);
    isolation_check(server.endpoint()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn transfers_snapshots_and_appends_show_no_anomaly_on_disk() {
    let _heavy = util::heavy_test().await;
    util::needs_own_server();
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::with_data_dir(dir.path());
    isolation_check(server.endpoint()).await;
}

/// 32 clients run transactions on one hot counter (each also writing a
/// ledger item of its own) while 4 update the same item directly; a hold
/// fault on a few transactions widens their window. Both kinds of conflict
/// happen, and the counter equals the committed transactions exactly.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hot_item_meets_real_conflicts_and_counts_exactly() {
    let _heavy = util::heavy_test().await;
    let fault = ["--fault", "TransactWriteItems=hold:2ms@0.05"];
    let (server, client) = util::own_server(&fault);
    let table = util::table_s(&client).await;
    let hot = || item(&[("p", s("hot"))]);
    let txn_conflicts = Arc::new(AtomicUsize::new(0));
    let single_conflicts = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for t in 0..32 {
        let (client, table) = (util::client_for(server.endpoint()), table.clone());
        let conflicts = txn_conflicts.clone();
        tasks.push(tokio::spawn(async move {
            let mut mine = 0;
            for i in 0..15 {
                let actions = vec![
                    txn::update(&table, hot(), "ADD n :one", None, &[(":one", n("1"))]),
                    txn::put_new(&table, item(&[("p", s(&format!("t{t}-{i}")))]), "p"),
                ];
                until_decided(&client, actions, &mut mine)
                    .await
                    .expect("no condition can fail");
            }
            conflicts.fetch_add(mine, Ordering::SeqCst);
        }));
    }
    for w in 0..4 {
        let (client, table) = (util::client_for(server.endpoint()), table.clone());
        let conflicts = single_conflicts.clone();
        tasks.push(tokio::spawn(async move {
            let mut mine = 0;
            for i in 0..60 {
                let value = format!("w{w}-{i}");
                loop {
                    let sent = client
                        .update_item()
                        .table_name(&table)
                        .set_key(Some(hot()))
                        .update_expression("SET touched = :v")
                        .expression_attribute_values(":v", s(&value))
                        .send()
                        .await;
                    match sent.map_err(|e| e.into_service_error()) {
                        Ok(_) => break,
                        Err(UpdateItemError::TransactionConflictException(_)) => mine += 1,
                        Err(other) => panic!("unexpected UpdateItem error: {other:?}"),
                    }
                }
            }
            conflicts.fetch_add(mine, Ordering::SeqCst);
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let out = client
        .get_item()
        .table_name(&table)
        .set_key(Some(hot()))
        .consistent_read(true)
        .send()
        .await
        .unwrap();
    assert_eq!(
        get_n(out.item().unwrap(), "n"),
        32 * 15,
        "one increment per committed transaction"
    );
    let (txn_conflicts, single_conflicts) = (
        txn_conflicts.load(Ordering::SeqCst),
        single_conflicts.load(Ordering::SeqCst),
    );
    eprintln!("hot item: {txn_conflicts} TransactionConflict cancellations, {single_conflicts} TransactionConflictException");
    assert!(txn_conflicts > 0, "transactions on a hot item conflict");
    assert!(
        single_conflicts > 0,
        "single writes of a held item conflict"
    );
}

/// Starts a TransactWriteItems setting the hot item's `n` to 1 (the server
/// holds it per its hold fault), then, once it is in flight, updates the
/// same item directly; returns the direct update's outcome and how long it
/// took.
async fn update_during_held_transaction(
    endpoint: &str,
) -> (Result<(), UpdateItemError>, Duration, Client, String) {
    let client = util::client_for(endpoint);
    let table = util::table_s(&client).await;
    let hot = item(&[("p", s("hot"))]);
    let transaction = client
        .transact_write_items()
        .transact_items(txn::update(
            &table,
            hot.clone(),
            "SET n = :one",
            None,
            &[(":one", n("1"))],
        ))
        .send();
    let in_flight = tokio::spawn(transaction);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let started = std::time::Instant::now();
    let direct = client
        .update_item()
        .table_name(&table)
        .set_key(Some(hot))
        .update_expression("SET n = n + :ten")
        .expression_attribute_values(":ten", n("10"))
        .send()
        .await
        .map(|_| ())
        .map_err(|e| e.into_service_error());
    let elapsed = started.elapsed();
    in_flight
        .await
        .unwrap()
        .expect("the held transaction commits");
    (direct, elapsed, client, table)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_write_to_an_item_a_transaction_holds_fails_with_transaction_conflict() {
    let fault = ["--fault", "TransactWriteItems=hold:400ms@1"];
    let (server, _) = util::own_server(&fault);
    let (direct, elapsed, _, _) = update_during_held_transaction(server.endpoint()).await;
    match direct {
        Err(UpdateItemError::TransactionConflictException(e)) => {
            assert_eq!(e.message(), Some("Transaction is ongoing for the item"));
        }
        other => panic!("expected TransactionConflictException, got {other:?}"),
    }
    assert!(
        elapsed < Duration::from_millis(250),
        "rejected at once, not queued: {elapsed:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn with_conflicts_queue_the_write_waits_for_the_transaction() {
    let flags = [
        "--conflicts",
        "queue",
        "--fault",
        "TransactWriteItems=hold:400ms@1",
    ];
    let (server, _) = util::own_server(&flags);
    let (direct, elapsed, client, table) = update_during_held_transaction(server.endpoint()).await;
    direct.expect("queued, not rejected");
    assert!(
        elapsed >= Duration::from_millis(150),
        "it waited: {elapsed:?}"
    );
    let out = client
        .get_item()
        .table_name(&table)
        .key("p", s("hot"))
        .consistent_read(true)
        .send()
        .await
        .unwrap();
    assert_eq!(
        get_n(out.item().unwrap(), "n"),
        11,
        "the transaction first, then the update"
    );
}
