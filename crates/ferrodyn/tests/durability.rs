//! Durability: data acknowledged by a server on `--data-dir` survives a clean
//! shutdown (SIGTERM) and a crash (SIGKILL right after the responses), and is
//! read back by a new server on the same directory.
//!
//! Each test runs its own server processes, so these tests skip when the suite
//! targets an external endpoint (`FERRODYN_TEST_ENDPOINT`).

use crate::util::{self, n, s, ServerProcess};
use aws_sdk_dynamodb::types::AttributeValue;
use aws_sdk_dynamodb::Client;

const ITEMS: usize = 50;

/// Creates a table and writes `ITEMS` items plus one update, all acknowledged.
async fn write_data(client: &Client, table: &str) {
    client
        .create_table()
        .table_name(table)
        .key_schema(util::key("p", aws_sdk_dynamodb::types::KeyType::Hash))
        .attribute_definitions(util::attr_def(
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
    util::needs_own_server();
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::with_data_dir(dir.path());
    let client = util::client_for(server.endpoint());
    write_data(&client, "durable").await;
    let status = server.terminate();
    assert!(status.success(), "SIGTERM is a clean shutdown: {status:?}");

    let server = ServerProcess::with_data_dir(dir.path());
    check_data(&util::client_for(server.endpoint()), "durable").await;
}

#[tokio::test]
async fn acknowledged_data_survives_kill_9() {
    util::needs_own_server();
    let dir = tempfile::tempdir().unwrap();
    let server = ServerProcess::with_data_dir(dir.path());
    let client = util::client_for(server.endpoint());
    write_data(&client, "crashy").await;
    server.kill();

    let server = ServerProcess::with_data_dir(dir.path());
    check_data(&util::client_for(server.endpoint()), "crashy").await;
}

#[tokio::test]
async fn in_memory_server_starts_empty_each_time() {
    util::needs_own_server();
    let server = ServerProcess::in_memory();
    let client = util::client_for(server.endpoint());
    write_data(&client, "scratch").await;
    drop(server);
    let server = ServerProcess::in_memory();
    let tables = util::client_for(server.endpoint())
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

/// What the clients of one crash cycle had acknowledged.
#[derive(Default)]
struct Acknowledged {
    puts: Vec<String>,
    transfers: Vec<String>,
}

const BANK_ACCOUNTS: usize = 8;
const BANK_OPENING: i64 = 1_000;

/// Transfers (two guarded updates and a ledger item, as one transaction)
/// and plain puts until the first error (the kill), recording what was
/// acknowledged.
async fn crash_load(endpoint: String, table: String, cycle: usize, task: usize) -> Acknowledged {
    let client = util::client_for(&endpoint);
    let mut rng = util::Rng::with_seed((cycle * 100 + task) as u64);
    let mut acked = Acknowledged::default();
    for i in 0.. {
        let id = format!("c{cycle:02}-t{task:02}-{i:04}");
        if task.is_multiple_of(3) {
            let put = client
                .put_item()
                .table_name(&table)
                .item("p", s(&format!("put-{id}")));
            match put.send().await {
                Ok(_) => acked.puts.push(format!("put-{id}")),
                Err(_) => return acked,
            }
            continue;
        }
        let from = rng.usize(0..BANK_ACCOUNTS);
        let to = (from + rng.usize(1..BANK_ACCOUNTS)) % BANK_ACCOUNTS;
        let amount = n(&rng.i64(1..=50).to_string());
        let ledger = util::item(&[
            ("p", s(&format!("xfer-{id}"))),
            ("from", n(&from.to_string())),
            ("to", n(&to.to_string())),
            ("amount", amount.clone()),
        ]);
        let acct = |a: usize| util::item(&[("p", s(&format!("acct{a}")))]);
        let sent = client
            .transact_write_items()
            .transact_items(util::txn::update(
                &table,
                acct(from),
                "SET balance = balance - :a",
                Some("balance >= :a"),
                &[(":a", amount.clone())],
            ))
            .transact_items(util::txn::update(
                &table,
                acct(to),
                "SET balance = balance + :a",
                None,
                &[(":a", amount)],
            ))
            .transact_items(util::txn::put_new(&table, ledger, "p"))
            .send()
            .await;
        match sent.map_err(|e| e.into_service_error()) {
            Ok(_) => acked.transfers.push(format!("xfer-{id}")),
            // Cancelled (a conflict or too little money): nothing applied.
            Err(aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError::TransactionCanceledException(_)) => {}
            Err(_) => return acked,
        }
    }
    acked
}

/// Everything acknowledged is there, every ledger item's transfer is in
/// the balances and none is half applied, and ItemCount is exact.
async fn check_bank(client: &Client, table: &str, acked: &Acknowledged) {
    let items = util::scan_all(client, table, None).await;
    let keys: std::collections::HashSet<&str> = items.iter().map(|i| util::get_s(i, "p")).collect();
    for key in acked.puts.iter().chain(&acked.transfers) {
        assert!(keys.contains(key.as_str()), "acknowledged {key} was lost");
    }
    let mut expected = [BANK_OPENING; BANK_ACCOUNTS];
    let mut balances = [0; BANK_ACCOUNTS];
    for found in &items {
        let p = util::get_s(found, "p");
        if p.starts_with("xfer-") {
            let amount = util::get_n(found, "amount");
            expected[util::get_n(found, "from") as usize] -= amount;
            expected[util::get_n(found, "to") as usize] += amount;
        } else if let Some(a) = p.strip_prefix("acct") {
            balances[a.parse::<usize>().unwrap()] = util::get_n(found, "balance");
        }
    }
    assert_eq!(
        balances, expected,
        "balances are exactly the transfers whose ledger item exists"
    );
    let described = client
        .describe_table()
        .table_name(table)
        .send()
        .await
        .unwrap();
    let count = described.table().unwrap().item_count().unwrap();
    assert_eq!(
        count as usize,
        items.len(),
        "ItemCount is exact after the crash"
    );
}

fn bank_server(dir: &std::path::Path, cycle: usize) -> ServerProcess {
    let dir = dir.to_str().unwrap();
    let durability = if cycle.is_multiple_of(2) {
        "process"
    } else {
        "power"
    };
    ServerProcess::spawn(&["--data-dir", dir, "--durability", durability])
}

/// Thirty times: a server under concurrent transfers and puts (alternately
/// with `--durability process` and `power`) is killed with SIGKILL, and the
/// next one finds every acknowledged write and no half-applied transaction.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn kill_9_under_concurrent_load_thirty_times_loses_nothing_acknowledged() {
    util::needs_own_server();
    let dir = tempfile::tempdir().unwrap();
    let server = bank_server(dir.path(), 0);
    let client = util::client_for(server.endpoint());
    let table = util::create_table(
        &client,
        "bank",
        &[("p", aws_sdk_dynamodb::types::ScalarAttributeType::S)],
    )
    .await;
    for a in 0..BANK_ACCOUNTS {
        let opened = client
            .put_item()
            .table_name(&table)
            .item("p", s(&format!("acct{a}")));
        opened
            .item("balance", n(&BANK_OPENING.to_string()))
            .send()
            .await
            .unwrap();
    }
    let mut acked = Acknowledged::default();
    let mut server = Some(server);
    for cycle in 0..30 {
        let running = server
            .take()
            .unwrap_or_else(|| bank_server(dir.path(), cycle));
        let client = util::client_for(running.endpoint());
        check_bank(&client, &table, &acked).await;
        let tasks: Vec<_> = (0..12)
            .map(|t| {
                tokio::spawn(crash_load(
                    running.endpoint().to_string(),
                    table.clone(),
                    cycle,
                    t,
                ))
            })
            .collect();
        tokio::time::sleep(std::time::Duration::from_millis(
            100 + 10 * (cycle as u64 % 7),
        ))
        .await;
        running.kill();
        for task in tasks {
            let done = task.await.unwrap();
            acked.puts.extend(done.puts);
            acked.transfers.extend(done.transfers);
        }
    }
    let last = bank_server(dir.path(), 30);
    check_bank(&util::client_for(last.endpoint()), &table, &acked).await;
    eprintln!(
        "kill -9: {} puts and {} transfers acknowledged over 30 crashes",
        acked.puts.len(),
        acked.transfers.len()
    );
}
