//! Failover under load (issue 13): a node writes to a PostgreSQL primary
//! with two synchronous standbys; the primary is stopped with an immediate
//! shutdown and a standby promoted. Writes fail fast (500s) meanwhile, the
//! node reconnects by itself (its connection string lists every host with
//! target_session_attrs=read-write), and every write it acknowledged is on
//! the promoted standby.
//!
//! Ignored unless asked for: `scripts/pg-tests.sh` runs it with `--ignored`
//! and `FERRODYN_TEST_FAILOVER_PORT` (three free ports from it on; the
//! cluster is started and stopped here with `scripts/pg-cluster.sh`); run
//! without the variable, it fails.

use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::util::{self, client_for, item, s, workspace_root, ServerProcess};

struct Cluster {
    dir: String,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let script = workspace_root().join("scripts/pg-cluster.sh");
        let _ = Command::new(script).args(["stop", &self.dir]).status();
    }
}

fn as_postgres(args: &[&str]) -> std::process::Output {
    let root = unsafe_is_root();
    let mut command = if root {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]);
        c
    } else {
        Command::new(args[0])
    };
    let args = if root { args } else { &args[1..] };
    command.args(args).output().expect("PostgreSQL tools run")
}

fn unsafe_is_root() -> bool {
    let out = Command::new("id").arg("-u").output().expect("id runs");
    String::from_utf8_lossy(&out.stdout).trim() == "0"
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs PostgreSQL: run by scripts/pg-tests.sh"]
async fn acknowledged_writes_survive_promoting_a_standby() {
    let port: u16 = std::env::var("FERRODYN_TEST_FAILOVER_PORT")
        .expect("FERRODYN_TEST_FAILOVER_PORT is set: this test needs PostgreSQL (run scripts/pg-tests.sh)")
        .parse()
        .expect("a port number");
    let dir = format!("/tmp/ferrodyn-failover-{}", std::process::id());
    let script = workspace_root().join("scripts/pg-cluster.sh");
    let started = Command::new(&script)
        .args(["start", &dir, &port.to_string(), "--standbys", "2"])
        .output()
        .expect("pg-cluster.sh runs");
    let _cluster = Cluster { dir: dir.clone() };
    assert!(
        started.status.success(),
        "{}",
        String::from_utf8_lossy(&started.stderr)
    );
    let env = String::from_utf8_lossy(&started.stdout).to_string();
    let url = env
        .lines()
        .find_map(|l| l.strip_prefix("FERRODYN_STORAGE="))
        .expect("the script prints the connection string");
    let bindir = env
        .lines()
        .find_map(|l| l.strip_prefix("PG_BINDIR="))
        .unwrap()
        .to_string();
    let node = ServerProcess::spawn(&["--storage", url]);
    let client = client_for(node.endpoint());
    let table = util::create_table(
        &client,
        "failover",
        &[("PK", aws_sdk_dynamodb::types::ScalarAttributeType::S)],
    )
    .await;

    // The load: sequential puts, remembering which were acknowledged.
    let acked = Arc::new(Mutex::new(Vec::new()));
    let (load_client, load_table, load_acked) = (client.clone(), table.clone(), acked.clone());
    let stop_at = Instant::now() + Duration::from_secs(40);
    let load = tokio::spawn(async move {
        // Until 200 writes succeed after the first failure (or 40 s).
        let (mut errors, mut after, mut i) = (0, 0, 0);
        let mut slowest_error = Duration::ZERO;
        while Instant::now() < stop_at && after < 200 {
            let key = format!("k{i}");
            let sent = Instant::now();
            let put = load_client
                .put_item()
                .table_name(&load_table)
                .set_item(Some(item(&[("PK", s(&key))])))
                .send()
                .await;
            match put {
                Ok(_) => {
                    load_acked.lock().unwrap().push(key);
                    after += usize::from(errors > 0);
                }
                Err(e) => {
                    errors += 1;
                    slowest_error = slowest_error.max(sent.elapsed());
                    let code = util::service_error(Err::<(), _>(e)).code;
                    assert_eq!(code, "InternalServerError", "an outage is a 500");
                }
            }
            i += 1;
        }
        (errors, slowest_error)
    });
    tokio::time::sleep(Duration::from_secs(2)).await;
    let before = acked.lock().unwrap().len();
    assert!(before > 20, "the load is running ({before} writes)");
    let primary = format!("{dir}/primary");
    let stopped = as_postgres(&[
        &format!("{bindir}/pg_ctl"),
        "-D",
        &primary,
        "-m",
        "immediate",
        "-w",
        "stop",
    ]);
    assert!(stopped.status.success(), "{stopped:?}");
    let promoted = as_postgres(&[
        &format!("{bindir}/pg_ctl"),
        "-D",
        &format!("{dir}/s1"),
        "-w",
        "promote",
    ]);
    assert!(promoted.status.success(), "{promoted:?}");
    // s1 inherited the primary's synchronous-standby setting; with no
    // standby following it yet, commits would wait forever.
    let s1 = format!("postgres://127.0.0.1:{}/postgres", port + 1);
    let reset = as_postgres(&[
        "psql",
        &s1,
        "-c",
        "ALTER SYSTEM SET synchronous_standby_names = ''",
        "-c",
        "SELECT pg_reload_conf()",
    ]);
    assert!(reset.status.success(), "{reset:?}");
    let (errors, slowest_error) = load.await.unwrap();
    // Failing fast: within the backend's 5 s bound (and the SDK's retries
    // are off), never a hang.
    assert!(
        slowest_error < Duration::from_secs(7),
        "an error took {slowest_error:?}"
    );
    let acked = acked.lock().unwrap().clone();
    assert!(errors > 0, "the outage was seen");
    assert!(
        acked.len() > before + 100,
        "writes resumed after the failover ({} vs {before})",
        acked.len()
    );
    eprintln!(
        "{} writes acknowledged, {errors} failed during the failover (slowest error {slowest_error:?})",
        acked.len()
    );
    for key in &acked {
        let got = client
            .get_item()
            .table_name(&table)
            .key("PK", s(key))
            .consistent_read(true)
            .send()
            .await
            .unwrap();
        assert!(got.item().is_some(), "acknowledged write {key} is lost");
    }
}
