//! Transactions under real concurrency: many SDK calls in flight at once on
//! the shared server. Racing sign-ups for one e-mail leave exactly one
//! winner; concurrent bank transfers with concurrent snapshot readers never
//! create or destroy money.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::util::{self, get_n, get_s, item, n, s, txn};
use aws_sdk_dynamodb::types::ScalarAttributeType;
use tokio::sync::Barrier;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixty_four_racing_sign_ups_for_one_email_leave_one_account_and_one_lock() {
    const RACERS: usize = 64;
    let client = util::client();
    let table = util::create_table(
        &client,
        "race",
        &[
            ("PK", ScalarAttributeType::S),
            ("SK", ScalarAttributeType::S),
        ],
    )
    .await;
    let barrier = Arc::new(Barrier::new(RACERS));
    let mut tasks = Vec::new();
    for i in 0..RACERS {
        let client = util::client();
        let table = table.clone();
        let barrier = barrier.clone();
        tasks.push(tokio::spawn(async move {
            let id = format!("acct{i:02}");
            let actions = vec![
                txn::put_new(
                    &table,
                    item(&[
                        ("PK", s(&format!("ACCT#{id}"))),
                        ("SK", s("PROFILE")),
                        ("email", s("ada@lovelace.io")),
                    ]),
                    "PK",
                ),
                txn::put_new(
                    &table,
                    item(&[
                        ("PK", s("UNIQ#EMAIL#ada@lovelace.io")),
                        ("SK", s("LOCK")),
                        ("owner", s(&id)),
                    ]),
                    "PK",
                ),
                txn::put_new(
                    &table,
                    item(&[
                        ("PK", s(&format!("UNIQ#HANDLE#user{i:02}"))),
                        ("SK", s("LOCK")),
                        ("owner", s(&id)),
                    ]),
                    "PK",
                ),
            ];
            barrier.wait().await;
            let result = client
                .transact_write_items()
                .set_transact_items(Some(actions))
                .send()
                .await;
            match result {
                Ok(_) => Some(id),
                Err(err) => {
                    let (_, reasons) = txn::canceled(Err::<(), _>(err));
                    let codes = txn::codes(&reasons);
                    // Only the e-mail lock is contended: it fails its
                    // condition, or (as DynamoDB may report under contention)
                    // conflicts with the winner's transaction.
                    assert_eq!(codes[0], "None", "{codes:?}");
                    assert_eq!(codes[2], "None", "{codes:?}");
                    assert!(
                        ["ConditionalCheckFailed", "TransactionConflict"].contains(&codes[1]),
                        "{codes:?}"
                    );
                    None
                }
            }
        }));
    }
    let mut winners = Vec::new();
    for task in tasks {
        if let Some(id) = task.await.unwrap() {
            winners.push(id);
        }
    }
    assert_eq!(winners.len(), 1, "exactly one sign-up wins: {winners:?}");
    let winner = &winners[0];
    let items = util::scan_all(&client, &table, None).await;
    let keys: BTreeSet<String> = items.iter().map(|i| get_s(i, "PK").to_string()).collect();
    let handle = format!("UNIQ#HANDLE#user{}", &winner[4..]);
    assert_eq!(
        keys,
        BTreeSet::from([
            format!("ACCT#{winner}"),
            "UNIQ#EMAIL#ada@lovelace.io".to_string(),
            handle
        ]),
        "one account and its locks, nothing of the losers"
    );
    let lock = items
        .iter()
        .find(|i| get_s(i, "PK") == "UNIQ#EMAIL#ada@lovelace.io")
        .unwrap();
    assert_eq!(get_s(lock, "owner"), winner.as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_transfers_never_create_or_destroy_money() {
    const ACCOUNTS: usize = 8;
    const OPENING: i64 = 100;
    const TRANSFERRERS: usize = 8;
    const TRANSFERS: usize = 40;
    const READERS: usize = 3;
    let client = util::client();
    let table = util::table_s(&client).await;
    for a in 0..ACCOUNTS {
        client
            .put_item()
            .table_name(&table)
            .set_item(Some(item(&[
                ("p", s(&format!("acct{a}"))),
                ("balance", n(&OPENING.to_string())),
            ])))
            .send()
            .await
            .unwrap();
    }
    let total = OPENING * ACCOUNTS as i64;
    let done = Arc::new(AtomicBool::new(false));

    let mut readers = Vec::new();
    for _ in 0..READERS {
        let client = util::client();
        let table = table.clone();
        let done = done.clone();
        readers.push(tokio::spawn(async move {
            let mut reads = 0usize;
            // At least one read even if the transfers finish first.
            while reads == 0 || !done.load(Ordering::SeqCst) {
                let mut req = client.transact_get_items();
                for a in 0..ACCOUNTS {
                    req = req
                        .transact_items(txn::get(&table, item(&[("p", s(&format!("acct{a}")))])));
                }
                match req.send().await {
                    Ok(out) => {
                        let sum: i64 = out
                            .responses()
                            .iter()
                            .map(|r| get_n(r.item().expect("every account exists"), "balance"))
                            .sum();
                        assert_eq!(sum, total, "a reader saw money created or destroyed");
                        reads += 1;
                    }
                    Err(err) => {
                        let (_, reasons) = txn::get_canceled(Err::<(), _>(err));
                        assert!(
                            txn::codes(&reasons).contains(&"TransactionConflict"),
                            "{reasons:?}"
                        );
                    }
                }
            }
            reads
        }));
    }

    let mut transferrers = Vec::new();
    for t in 0..TRANSFERRERS {
        let client = util::client();
        let table = table.clone();
        transferrers.push(tokio::spawn(async move {
            let mut rng = util::Rng::with_seed(t as u64);
            // Net effect of this task's committed transfers, per account.
            let mut delta = [0i64; ACCOUNTS];
            let mut refused = 0usize;
            for _ in 0..TRANSFERS {
                let from = rng.u64(0..=ACCOUNTS as u64 - 1) as usize;
                let to = (from + rng.u64(1..=ACCOUNTS as u64 - 1) as usize) % ACCOUNTS;
                let amount = rng.u64(1..=60) as i64;
                let result = client
                    .transact_write_items()
                    .transact_items(txn::update(
                        &table,
                        item(&[("p", s(&format!("acct{from}")))]),
                        "SET balance = balance - :amt",
                        Some("balance >= :amt"),
                        &[(":amt", n(&amount.to_string()))],
                    ))
                    .transact_items(txn::update(
                        &table,
                        item(&[("p", s(&format!("acct{to}")))]),
                        "SET balance = balance + :amt",
                        Some("attribute_exists(p)"),
                        &[(":amt", n(&amount.to_string()))],
                    ))
                    .send()
                    .await;
                match result {
                    Ok(_) => {
                        delta[from] -= amount;
                        delta[to] += amount;
                    }
                    Err(err) => {
                        let (_, reasons) = txn::canceled(Err::<(), _>(err));
                        let codes = txn::codes(&reasons);
                        assert!(
                            codes == ["ConditionalCheckFailed", "None"]
                                || codes.contains(&"TransactionConflict"),
                            "unexpected cancellation {codes:?}"
                        );
                        refused += 1;
                    }
                }
            }
            (delta, refused)
        }));
    }
    let mut expected = [OPENING; ACCOUNTS];
    for task in transferrers {
        let (delta, _) = task.await.unwrap();
        for (e, d) in expected.iter_mut().zip(delta) {
            *e += d;
        }
    }
    done.store(true, Ordering::SeqCst);
    for reader in readers {
        assert!(reader.await.unwrap() > 0);
    }
    let mut balances = [0i64; ACCOUNTS];
    for (a, balance) in balances.iter_mut().enumerate() {
        let out = client
            .get_item()
            .table_name(&table)
            .key("p", s(&format!("acct{a}")))
            .consistent_read(true)
            .send()
            .await
            .unwrap();
        *balance = get_n(out.item().unwrap(), "balance");
    }
    assert_eq!(
        balances, expected,
        "final balances are the committed transfers applied to the openings"
    );
    assert!(balances.iter().all(|b| *b >= 0), "{balances:?}");
    assert_eq!(balances.iter().sum::<i64>(), total);
}
