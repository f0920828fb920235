//! Three Ferrodyn nodes over one PostgreSQL database (issue 13): what one
//! node writes or creates, the others see at once, and the database's
//! serializable transactions keep the same guarantees as one process.
//!
//! The tests that need PostgreSQL are ignored unless asked for:
//! `scripts/pg-tests.sh` starts a server and runs them with `--ignored` and
//! `FERRODYN_TEST_STORAGE=postgres://USER@HOST:PORT`; run without it, they
//! fail.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::util::streams::{stream_records, streams_call};
use crate::util::txn::{self, Item};
use crate::util::{self, client_for, fresh_postgres_database, item, n, s, ServerProcess};
use aws_sdk_dynamodb::types::{Get, StreamViewType, TransactGetItem};
use aws_sdk_dynamodb::Client;

/// Three nodes over a fresh database.
fn three_nodes() -> (Vec<ServerProcess>, Vec<Client>) {
    let url = fresh_postgres_database(&util::postgres_server());
    let nodes: Vec<ServerProcess> = (0..3)
        .map(|_| ServerProcess::spawn(&["--storage", &url]))
        .collect();
    let clients = nodes.iter().map(|n| client_for(n.endpoint())).collect();
    (nodes, clients)
}

async fn table_on(client: &Client) -> String {
    util::create_table(
        client,
        "cluster",
        &[("PK", aws_sdk_dynamodb::types::ScalarAttributeType::S)],
    )
    .await
}

async fn get(client: &Client, table: &str, pk: &str) -> Option<Item> {
    client
        .get_item()
        .table_name(table)
        .key("PK", s(pk))
        .consistent_read(true)
        .send()
        .await
        .expect("GetItem succeeds")
        .item()
        .cloned()
}

#[tokio::test]
#[ignore = "needs PostgreSQL: run by scripts/pg-tests.sh"]
async fn a_table_created_and_written_through_one_node_is_read_through_another() {
    let (_nodes, clients) = three_nodes();
    let (a, b, c) = (&clients[0], &clients[1], &clients[2]);
    let table = table_on(a).await;
    // Usable through B at once, and listed through C.
    b.put_item()
        .table_name(&table)
        .set_item(Some(item(&[("PK", s("k")), ("v", n("1"))])))
        .send()
        .await
        .expect("PutItem through B succeeds");
    let listed = c.list_tables().send().await.unwrap();
    assert!(listed.table_names().contains(&table));
    for round in 2..12 {
        let writer = &clients[round % 3];
        let reader = &clients[(round + 1) % 3];
        writer
            .put_item()
            .table_name(&table)
            .set_item(Some(item(&[("PK", s("k")), ("v", n(&round.to_string()))])))
            .send()
            .await
            .unwrap();
        let got = get(reader, &table, "k").await.expect("the item is there");
        assert_eq!(got["v"], n(&round.to_string()), "round {round}");
    }
    // Item count through describe (delta rows summed) on any node.
    let described = c.describe_table().table_name(&table).send().await.unwrap();
    assert_eq!(described.table().unwrap().item_count(), Some(1));
    // Deleted through C: a write through A fails at once (its commit checks
    // the catalog record); A's reads notice within its 1 s catalog reload.
    c.delete_table().table_name(&table).send().await.unwrap();
    let err = a
        .put_item()
        .table_name(&table)
        .set_item(Some(item(&[("PK", s("k2"))])))
        .send()
        .await;
    assert_eq!(util::service_error(err).code, "ResourceNotFoundException");
    util::poll_until(
        "the table is gone for A",
        Duration::from_secs(5),
        || async {
            let err = a
                .get_item()
                .table_name(&table)
                .key("PK", s("k"))
                .send()
                .await;
            err.is_err()
                .then(|| assert_eq!(util::service_error(err).code, "ResourceNotFoundException"))
        },
    )
    .await;
}

const ACCOUNTS: usize = 8;
const START_BALANCE: i64 = 100;

fn account(i: usize) -> String {
    format!("acct{i}")
}

/// One transfer of `amount` between two accounts, guarded by the balance.
async fn transfer(client: &Client, table: &str, from: usize, to: usize, amount: i64) -> bool {
    let amount = n(&amount.to_string());
    let actions = vec![
        txn::update(
            table,
            item(&[("PK", s(&account(from)))]),
            "SET balance = balance - :a",
            Some("balance >= :a"),
            &[(":a", amount.clone())],
        ),
        txn::update(
            table,
            item(&[("PK", s(&account(to)))]),
            "SET balance = balance + :a",
            None,
            &[(":a", amount)],
        ),
    ];
    let sent = client
        .transact_write_items()
        .set_transact_items(Some(actions))
        .send()
        .await;
    match sent {
        Ok(_) => true,
        Err(e) => {
            let error = util::service_error(Err::<(), _>(e));
            assert_eq!(
                error.code, "TransactionCanceledException",
                "{}",
                error.message
            );
            false
        }
    }
}

/// The sum of every balance, read as one TransactGetItems snapshot.
async fn snapshot_total(client: &Client, table: &str) -> Option<i64> {
    let gets = (0..ACCOUNTS).map(|i| {
        let get = Get::builder()
            .table_name(table)
            .key("PK", s(&account(i)))
            .build()
            .unwrap();
        TransactGetItem::builder().get(get).build()
    });
    let answer = client
        .transact_get_items()
        .set_transact_items(Some(gets.collect()))
        .send()
        .await
        .ok()?; // a conflict cancels a snapshot: that is no anomaly
    Some(
        answer
            .responses()
            .iter()
            .map(|r| util::get_n(r.item().unwrap(), "balance"))
            .sum(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs PostgreSQL: run by scripts/pg-tests.sh"]
async fn bank_transfers_over_three_nodes_conserve_the_total() {
    let (_nodes, clients) = three_nodes();
    let table = table_on(&clients[0]).await;
    for i in 0..ACCOUNTS {
        clients[i % 3]
            .put_item()
            .table_name(&table)
            .set_item(Some(item(&[
                ("PK", s(&account(i))),
                ("balance", n(&START_BALANCE.to_string())),
            ])))
            .send()
            .await
            .unwrap();
    }
    let (committed, snapshots) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let deadline = Instant::now() + Duration::from_secs(8);
    let mut workers = Vec::new();
    for w in 0..6usize {
        let (client, table) = (clients[w % 3].clone(), table.clone());
        let (committed, snapshots) = (committed.clone(), snapshots.clone());
        workers.push(tokio::spawn(async move {
            let mut anomalies = Vec::new();
            let mut step = w;
            while Instant::now() < deadline {
                step = (step * 7 + 3) % 1_000_003;
                if w % 3 == 2 {
                    if let Some(total) = snapshot_total(&client, &table).await {
                        snapshots.fetch_add(1, Ordering::Relaxed);
                        if total != START_BALANCE * ACCOUNTS as i64 {
                            anomalies.push(total);
                        }
                    }
                    continue;
                }
                let (from, to) = (step % ACCOUNTS, (step / ACCOUNTS + 1 + step) % ACCOUNTS);
                if from != to && transfer(&client, &table, from, to, (step % 30) as i64 + 1).await {
                    committed.fetch_add(1, Ordering::Relaxed);
                }
            }
            anomalies
        }));
    }
    let mut anomalies = Vec::new();
    for worker in workers {
        anomalies.extend(worker.await.unwrap());
    }
    let mut total = 0;
    for i in 0..ACCOUNTS {
        let item = get(&clients[i % 3], &table, &account(i)).await.unwrap();
        let balance = util::get_n(&item, "balance");
        assert!(balance >= 0, "{} went negative: {balance}", account(i));
        total += balance;
    }
    let (committed, snapshots) = (
        committed.load(Ordering::Relaxed),
        snapshots.load(Ordering::Relaxed),
    );
    eprintln!("{committed} transfers committed, {snapshots} snapshots, anomalies: {anomalies:?}");
    assert_eq!(total, START_BALANCE * ACCOUNTS as i64);
    assert!(anomalies.is_empty(), "snapshots saw totals {anomalies:?}");
    assert!(
        committed > 10 && snapshots > 3,
        "{committed} transfers, {snapshots} snapshots"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs PostgreSQL: run by scripts/pg-tests.sh"]
async fn sixty_four_sign_ups_for_one_email_over_three_nodes_make_one_account() {
    let (_nodes, clients) = three_nodes();
    let table = table_on(&clients[0]).await;
    let email = "ada@example.com";
    let mut tries = Vec::new();
    for i in 0..64usize {
        let (client, table) = (clients[i % 3].clone(), table.clone());
        tries.push(tokio::spawn(async move {
            // The seeds' uniqueness pattern: the account and its UNIQ#
            // markers, each put only if absent, in one transaction.
            let id = format!("user{i}");
            let actions = vec![
                txn::put_new(
                    &table,
                    item(&[("PK", s(&format!("ACCOUNT#{id}"))), ("email", s(email))]),
                    "PK",
                ),
                txn::put_new(
                    &table,
                    item(&[("PK", s(&format!("UNIQ#EMAIL#{email}"))), ("owner", s(&id))]),
                    "PK",
                ),
                txn::put_new(
                    &table,
                    item(&[("PK", s(&format!("UNIQ#HANDLE#ada{i}"))), ("owner", s(&id))]),
                    "PK",
                ),
            ];
            client
                .transact_write_items()
                .set_transact_items(Some(actions))
                .send()
                .await
                .is_ok()
        }));
    }
    let mut won = 0;
    for t in tries {
        won += usize::from(t.await.unwrap());
    }
    assert_eq!(won, 1, "exactly one sign-up commits");
    let items = util::scan_all(&clients[1], &table, None).await;
    let accounts = items
        .iter()
        .filter(|i| util::get_s(i, "PK").starts_with("ACCOUNT#"))
        .count();
    let markers: Vec<&str> = items
        .iter()
        .map(|i| util::get_s(i, "PK"))
        .filter(|pk| pk.starts_with("UNIQ#"))
        .collect();
    assert_eq!(accounts, 1, "{items:?}");
    assert_eq!(
        markers.len(),
        2,
        "one e-mail and one handle marker: {markers:?}"
    );
    let owner = get(&clients[2], &table, &format!("UNIQ#EMAIL#{email}"))
        .await
        .unwrap();
    let account = format!("ACCOUNT#{}", util::get_s(&owner, "owner"));
    assert!(get(&clients[0], &table, &account).await.is_some());
}

/// A new on-demand table (hash key PK) with a stream of `view`, created
/// through `client`: its name and stream ARN.
async fn stream_table(client: &Client, prefix: &str, view: StreamViewType) -> (String, String) {
    let table = util::unique_name(prefix);
    let spec = aws_sdk_dynamodb::types::StreamSpecification::builder()
        .stream_enabled(true)
        .stream_view_type(view)
        .build()
        .unwrap();
    let created = client
        .create_table()
        .table_name(&table)
        .billing_mode(aws_sdk_dynamodb::types::BillingMode::PayPerRequest)
        .key_schema(util::key("PK", aws_sdk_dynamodb::types::KeyType::Hash))
        .attribute_definitions(util::attr_def(
            "PK",
            aws_sdk_dynamodb::types::ScalarAttributeType::S,
        ))
        .stream_specification(spec)
        .send()
        .await
        .expect("CreateTable with a stream succeeds");
    let description = created.table_description().unwrap();
    let arn = description.latest_stream_arn().unwrap().to_string();
    (table, arn)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs PostgreSQL: run by scripts/pg-tests.sh"]
async fn stream_records_written_through_three_nodes_are_unique_and_ordered_per_item() {
    let (nodes, clients) = three_nodes();
    let (table, arn) = stream_table(&clients[0], "stream", StreamViewType::NewImage).await;
    // Three writers per item, one per node, each setting v to its next
    // version under a condition, so the item's versions are a total order.
    let mut writers = Vec::new();
    for (w, client) in clients.iter().enumerate() {
        let (client, table) = (client.clone(), table.clone());
        writers.push(tokio::spawn(async move {
            for round in 0..10 {
                for item_no in 0..3 {
                    let _ = client
                        .update_item()
                        .table_name(&table)
                        .key("PK", s(&format!("item{item_no}")))
                        .update_expression("ADD v :one SET w = :w")
                        .expression_attribute_values(":one", n("1"))
                        .expression_attribute_values(":w", s(&format!("{w}-{round}")))
                        .send()
                        .await
                        .expect("UpdateItem succeeds (conflicts are retried inside)");
                }
            }
        }));
    }
    for w in writers {
        w.await.unwrap();
    }
    // Readers on shared storage see a record once its number has settled
    // (a write may commit up to two seconds after taking it).
    let endpoint = nodes[1].endpoint();
    let records = util::poll_until("every record", Duration::from_secs(10), || async {
        let records = stream_records(endpoint, &arn).await;
        (records.len() >= 90).then_some(records)
    })
    .await;
    assert_eq!(records.len(), 90, "one record per committed write");
    let mut seqs: Vec<u128> = records
        .iter()
        .map(|r| {
            r["dynamodb"]["SequenceNumber"]
                .as_str()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect();
    let mut by_item: std::collections::HashMap<String, Vec<(u128, i64)>> = Default::default();
    for (record, seq) in records.iter().zip(&seqs) {
        let image = &record["dynamodb"]["NewImage"];
        let pk = image["PK"]["S"].as_str().unwrap().to_string();
        let v: i64 = image["v"]["N"].as_str().unwrap().parse().unwrap();
        by_item.entry(pk).or_default().push((*seq, v));
    }
    seqs.sort_unstable();
    seqs.dedup();
    assert_eq!(seqs.len(), 90, "sequence numbers are unique");
    for (pk, mut versions) in by_item {
        versions.sort_unstable();
        let order: Vec<i64> = versions.iter().map(|(_, v)| *v).collect();
        assert_eq!(
            order,
            (1..=30).collect::<Vec<_>>(),
            "{pk}: records in sequence order carry versions 1..30"
        );
    }
}

#[test]
fn bad_storage_settings_are_named_at_start_up() {
    let cases = [
        (
            "postgres://me@127.0.0.1:notaport/db",
            "invalid --storage connection string",
        ),
        (
            "postgres://me@127.0.0.1:1/db",
            "cannot reach PostgreSQL at postgres://me@127.0.0.1:1/db",
        ),
        ("mysql://me@127.0.0.1/db", "--storage takes a postgres://"),
    ];
    let binary = util::server_binary();
    for (url, expected) in cases {
        let started = Instant::now();
        let output = std::process::Command::new(binary)
            .args(["serve", "--storage", url, "--port", "0"])
            .output()
            .expect("ferrodyn runs");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{url}");
        assert!(stderr.contains(expected), "{url}: {stderr}");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{url} answered quickly"
        );
    }
}

/// Adds the GSI `by_k` (hash key `k`, all attributes) to `table`.
async fn create_index_by_k(client: &Client, table: &str) {
    use aws_sdk_dynamodb::types::{
        CreateGlobalSecondaryIndexAction, GlobalSecondaryIndexUpdate, KeyType, Projection,
        ProjectionType, ScalarAttributeType,
    };
    let create = CreateGlobalSecondaryIndexAction::builder()
        .index_name("by_k")
        .key_schema(util::key("k", KeyType::Hash))
        .projection(
            Projection::builder()
                .projection_type(ProjectionType::All)
                .build(),
        )
        .build()
        .unwrap();
    client
        .update_table()
        .table_name(table)
        .attribute_definitions(util::attr_def("k", ScalarAttributeType::S))
        .global_secondary_index_updates(
            GlobalSecondaryIndexUpdate::builder().create(create).build(),
        )
        .send()
        .await
        .expect("UpdateTable adding by_k succeeds");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs PostgreSQL: run by scripts/pg-tests.sh"]
async fn a_gsi_created_through_one_node_is_backfilled_and_kept_by_all() {
    use aws_sdk_dynamodb::types::IndexStatus;
    let (_nodes, clients) = three_nodes();
    let table = table_on(&clients[0]).await;
    put_spread(&clients, &table, "old", 60).await;
    create_index_by_k(&clients[1], &table).await;
    // Writes through every node while the lease holder backfills: each
    // commit checks the catalog record, so each maintains the new index.
    put_spread(&clients, &table, "new", 30).await;
    let c = clients[2].clone();
    util::poll_until(
        "the GSI to become ACTIVE on C",
        Duration::from_secs(60),
        || {
            let (c, table) = (c.clone(), table.clone());
            async move {
                let out = c.describe_table().table_name(&table).send().await.unwrap();
                let gsis = out.table().unwrap().global_secondary_indexes().to_vec();
                let index = gsis.iter().find(|i| i.index_name() == Some("by_k"))?;
                (index.index_status() == Some(&IndexStatus::Active)).then_some(())
            }
        },
    )
    .await;
    // Every node's reads see the index ACTIVE within its 1 s catalog reload.
    let mut found = 0;
    for g in 0..6 {
        let client = clients[g % 3].clone();
        let table = table.clone();
        found += util::poll_until(
            "the index readable on every node",
            Duration::from_secs(5),
            || {
                let (client, table) = (client.clone(), table.clone());
                async move {
                    let out = client
                        .query()
                        .table_name(&table)
                        .index_name("by_k")
                        .key_condition_expression("k = :k")
                        .expression_attribute_values(":k", s(&format!("g{g}")))
                        .send()
                        .await
                        .ok()?;
                    Some(out.count())
                }
            },
        )
        .await;
    }
    assert_eq!(found, 90, "every item is in the index once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs PostgreSQL: run by scripts/pg-tests.sh"]
async fn background_work_moves_to_another_node_when_the_lease_holder_dies() {
    let url = fresh_postgres_database(&util::postgres_server());
    // The first node alone for two upkeep rounds: it takes the lease.
    let first = ServerProcess::spawn(&["--storage", &url]);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let others: Vec<ServerProcess> = (0..2)
        .map(|_| ServerProcess::spawn(&["--storage", &url]))
        .collect();
    first.kill();
    let b = client_for(others[0].endpoint());
    let table = table_on(&b).await;
    b.update_time_to_live()
        .table_name(&table)
        .time_to_live_specification(
            aws_sdk_dynamodb::types::TimeToLiveSpecification::builder()
                .enabled(true)
                .attribute_name("expires")
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    // Expired a minute ago (DynamoDB ignores times over five years old).
    let past = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
        - 60;
    for i in 0..5 {
        let it = item(&[
            ("PK", s(&format!("gone{i}"))),
            ("expires", n(&past.to_string())),
        ]);
        b.put_item()
            .table_name(&table)
            .set_item(Some(it))
            .send()
            .await
            .unwrap();
    }
    // The dead node's lease runs out (5 s); a survivor takes it and sweeps.
    let c = client_for(others[1].endpoint());
    util::poll_until(
        "expired items swept by a surviving node",
        Duration::from_secs(30),
        || {
            let (c, table) = (c.clone(), table.clone());
            async move {
                util::scan_all(&c, &table, None)
                    .await
                    .is_empty()
                    .then_some(())
            }
        },
    )
    .await;
}

/// Puts `count` items into `table` through `client`, 25 to a BatchWriteItem
/// (each item leaves a statistics delta row for the lease holder to fold),
/// keys prefixed with `prefix`.
async fn fill(client: Client, table: String, prefix: String, count: usize) {
    for chunk in 0..count.div_ceil(25) {
        let requests: Vec<_> = (0..25)
            .map(|i| {
                let it = item(&[("PK", s(&format!("{prefix}{chunk}-{i}"))), ("v", n("1"))]);
                let put = aws_sdk_dynamodb::types::PutRequest::builder()
                    .set_item(Some(it))
                    .build()
                    .unwrap();
                aws_sdk_dynamodb::types::WriteRequest::builder()
                    .put_request(put)
                    .build()
            })
            .collect();
        // Concurrent inserts into a small table can meet PostgreSQL's
        // page-level SERIALIZABLE conflicts past the retries inside; those
        // writes come back unprocessed, and a client resends them (as every
        // SDK's batch loop does; not what this test is about).
        let mut pending = requests;
        for _ in 0..20 {
            let written = (client.batch_write_item())
                .request_items(&table, pending)
                .send()
                .await
                .expect("BatchWriteItem succeeds");
            pending = (written.unprocessed_items())
                .and_then(|u| u.get(&table).cloned())
                .unwrap_or_default();
            if pending.is_empty() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        assert!(pending.is_empty(), "every write lands after resends");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs PostgreSQL: run by scripts/pg-tests.sh"]
async fn tables_deleted_while_the_lease_holder_folds_their_statistics_are_deleted() {
    let (_nodes, clients) = three_nodes();
    // Six writers through the three nodes leave deltas faster than the
    // lease holder folds them (a fold round per second, in batches of a
    // thousand), so the DeleteTable right after meets a fold in flight.
    // DDL must not fail because of the cluster's own background work.
    for round in 0..4 {
        let table = table_on(&clients[round % 3]).await;
        let fillers: Vec<_> = (0..6)
            .map(|w| {
                let client = clients[w % 3].clone();
                tokio::spawn(fill(client, table.clone(), format!("w{w}-"), 600))
            })
            .collect();
        for filler in fillers {
            filler.await.unwrap();
        }
        let deleter = &clients[(round + 1) % 3];
        deleter
            .delete_table()
            .table_name(&table)
            .send()
            .await
            .unwrap_or_else(|e| panic!("round {round}: DeleteTable failed: {e:?}"));
        let err = deleter.describe_table().table_name(&table).send().await;
        assert_eq!(util::service_error(err).code, "ResourceNotFoundException");
    }
}

/// Runs `sql` on the database `url` with psql; its output, unaligned.
fn psql(url: &str, sql: &str) -> String {
    let output = std::process::Command::new("psql")
        .arg(url)
        .args(["-qAt", "-v", "ON_ERROR_STOP=1", "-c", sql])
        .output()
        .expect("psql can be run (PostgreSQL's client)");
    assert!(
        output.status.success(),
        "{sql}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs PostgreSQL: run by scripts/pg-tests.sh"]
async fn index_keys_a_dead_node_did_not_purge_are_swept_by_the_next_lease_holder() {
    use aws_sdk_dynamodb::types::{
        DeleteGlobalSecondaryIndexAction, GlobalSecondaryIndexUpdate, IndexStatus,
    };
    let url = fresh_postgres_database(&util::postgres_server());
    let first = ServerProcess::spawn(&["--storage", &url]);
    let a = client_for(first.endpoint());
    let table = table_on(&a).await;
    a.put_item()
        .table_name(&table)
        .set_item(Some(item(&[("PK", s("p")), ("k", s("g"))])))
        .send()
        .await
        .unwrap();
    create_index_by_k(&a, &table).await;
    util::poll_until(
        "the index is backfilled",
        Duration::from_secs(30),
        || async {
            let described = a.describe_table().table_name(&table).send().await.unwrap();
            let index = &described.table().unwrap().global_secondary_indexes()[0];
            (index.index_status() == Some(&IndexStatus::Active)).then_some(())
        },
    )
    .await;
    let delete = DeleteGlobalSecondaryIndexAction::builder()
        .index_name("by_k")
        .build()
        .unwrap();
    a.update_table()
        .table_name(&table)
        .global_secondary_index_updates(
            GlobalSecondaryIndexUpdate::builder().delete(delete).build(),
        )
        .send()
        .await
        .unwrap();
    // What the index's purge leaves when its node dies part way: an entry
    // ('x' table index ...) and a statistics delta ('q' table index n) of
    // the deleted index (id 1, the table's first).
    let leftovers = "(SELECT substring(k from 2 for 8) AS t FROM ferrodyn_kv \
                     WHERE get_byte(k, 0) = 105 LIMIT 1)";
    tokio::time::sleep(Duration::from_millis(500)).await; // the node's own purge is over
    psql(
        &url,
        &format!(
            "INSERT INTO ferrodyn_kv (k, v) \
             SELECT '\\x78'::bytea || t || '\\x0000000101'::bytea, '\\x00'::bytea FROM {leftovers} l \
             UNION ALL \
             SELECT '\\x71'::bytea || t || '\\x000000010000000000000001'::bytea, '\\x00'::bytea FROM {leftovers} l"
        ),
    );
    let orphans = "SELECT count(*) FROM ferrodyn_kv WHERE get_byte(k, 0) IN (113, 120)";
    assert_eq!(psql(&url, orphans), "2");
    // The lease holder dies; the node that takes the lease over sweeps.
    first.kill();
    let second = ServerProcess::spawn(&["--storage", &url]);
    util::poll_until(
        "the orphaned index keys are swept",
        Duration::from_secs(30),
        || async { (psql(&url, orphans) == "0").then_some(()) },
    )
    .await;
    // The table and its item are untouched.
    let b = client_for(second.endpoint());
    assert!(get(&b, &table, "p").await.is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs PostgreSQL: run by scripts/pg-tests.sh"]
async fn a_disabled_stream_read_to_its_end_has_no_next_iterator() {
    let (nodes, clients) = three_nodes();
    let (table, arn) = stream_table(&clients[0], "closed", StreamViewType::KeysOnly).await;
    let endpoint = nodes[1].endpoint();
    let described = streams_call(
        endpoint,
        "DescribeStream",
        serde_json::json!({ "StreamArn": arn }),
    )
    .await;
    let mut latest = Vec::new();
    for shard in described["StreamDescription"]["Shards"].as_array().unwrap() {
        let request = serde_json::json!({ "StreamArn": arn, "ShardId": shard["ShardId"], "ShardIteratorType": "LATEST" });
        latest.push(
            streams_call(endpoint, "GetShardIterator", request).await["ShardIterator"].clone(),
        );
    }
    // One write (and its statistics delta: both take sequence numbers of
    // the hybrid clock), then the stream is disabled through another node.
    clients[2]
        .put_item()
        .table_name(&table)
        .set_item(Some(item(&[("PK", s("k"))])))
        .send()
        .await
        .unwrap();
    let off = aws_sdk_dynamodb::types::StreamSpecification::builder()
        .stream_enabled(false)
        .build()
        .unwrap();
    clients[0]
        .update_table()
        .table_name(&table)
        .stream_specification(off)
        .send()
        .await
        .unwrap();
    // Node B's catalog catches up within its one-second reload, and the
    // closed shards' last numbers settle within two seconds.
    let records = util::poll_until(
        "every shard is closed for B",
        Duration::from_secs(10),
        || {
            let latest = latest.clone();
            async move {
                let mut records = 0;
                for iterator in latest {
                    let page = streams_call(
                        endpoint,
                        "GetRecords",
                        serde_json::json!({ "ShardIterator": iterator }),
                    )
                    .await;
                    if page.get("NextShardIterator").is_some() {
                        return None;
                    }
                    records += page["Records"].as_array().unwrap().len();
                }
                Some(records)
            }
        },
    )
    .await;
    assert_eq!(records, 1, "the one write, in the shard of its partition");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "needs PostgreSQL: run by scripts/pg-tests.sh"]
async fn shards_roll_over_and_split_through_two_nodes_and_a_kcl_reader_misses_nothing() {
    let url = fresh_postgres_database(&util::postgres_server());
    let flags = [
        "--storage",
        &url,
        "--stream-shard-lifetime",
        "2",
        "--partition-split-size",
        "65536",
        "--on-demand-partitions",
        "2",
    ];
    let nodes: Vec<ServerProcess> = (0..2).map(|_| ServerProcess::spawn(&flags)).collect();
    let clients: Vec<Client> = nodes.iter().map(|n| client_for(n.endpoint())).collect();
    let (table, arn) = stream_table(&clients[0], "lineage", StreamViewType::NewImage).await;
    const ITEMS: usize = 320;
    const ROUNDS: i64 = 6;
    let conflicts = Arc::new(AtomicU64::new(0));
    let mut writers = Vec::new();
    for writer in 0..8 {
        let (client, table) = (clients[writer % 2].clone(), table.clone());
        let conflicts = Arc::clone(&conflicts);
        writers.push(tokio::spawn(async move {
            for round in 0..ROUNDS {
                for i in (writer..ITEMS).step_by(8) {
                    let it = item(&[
                        ("PK", s(&format!("item-{i:04}"))),
                        ("v", n(&round.to_string())),
                        ("pad", s(&"x".repeat(700))),
                    ]);
                    // PostgreSQL's serializable checks may fail a write
                    // that met others on the same index page: the
                    // conflict is retried, as DynamoDB advises for it.
                    let mut tries = 0;
                    while let Err(e) = client
                        .put_item()
                        .table_name(&table)
                        .set_item(Some(it.clone()))
                        .send()
                        .await
                    {
                        tries += 1;
                        let conflict = e
                            .as_service_error()
                            .is_some_and(|e| e.is_transaction_conflict_exception());
                        assert!(conflict && tries < 20, "{e:?}");
                        conflicts.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        }));
    }
    let mut consumer = util::streams::ShardConsumer::with_key("PK");
    while !writers.iter().all(|w| w.is_finished()) {
        consumer.pass(nodes[1].endpoint(), &arn).await;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    for writer in writers {
        writer.await.unwrap();
    }
    // Every shard rolls over within its lifetime (by the lease holder, on
    // either node), and its numbers settle: then everything is read.
    let deadline = Instant::now() + Duration::from_secs(30);
    while consumer.read.values().map(Vec::len).sum::<usize>() < ITEMS * ROUNDS as usize
        && Instant::now() < deadline
    {
        consumer.pass(nodes[1].endpoint(), &arn).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    assert_eq!(consumer.read.len(), ITEMS, "every item's changes were read");
    for (item, values) in &consumer.read {
        assert_eq!(
            values,
            &(0..ROUNDS).collect::<Vec<_>>(),
            "{item}: every change once, in order"
        );
    }
    eprintln!(
        "writes retried after a conflict: {}",
        conflicts.load(Ordering::Relaxed)
    );
    // The lineage has both kinds of hand-over (the reader may have read
    // everything before the last shards closed: wait for the listing).
    let endpoint = nodes[0].endpoint();
    util::poll_until(
        "a split and a rollover",
        Duration::from_secs(15),
        || async {
            let shards = util::streams::list_shards(endpoint, &arn, 100).await;
            let children = |id: &serde_json::Value| {
                shards.iter().filter(|s| &s["ParentShardId"] == id).count()
            };
            let counts: Vec<usize> = shards.iter().map(|s| children(&s["ShardId"])).collect();
            (counts.contains(&1) && counts.contains(&2)).then_some(())
        },
    )
    .await;
}

/// Puts `count` items (`PK` = prefix + i, `k` one of six values) through
/// the nodes in turn.
async fn put_spread(clients: &[Client], table: &str, prefix: &str, count: usize) {
    for i in 0..count {
        let it = item(&[
            ("PK", s(&format!("{prefix}{i}"))),
            ("k", s(&format!("g{}", i % 6))),
        ]);
        clients[i % clients.len()]
            .put_item()
            .table_name(table)
            .set_item(Some(it))
            .send()
            .await
            .unwrap();
    }
}
