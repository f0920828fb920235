//! The `ferrodyn-client` library and the `ferrodyn` client commands
//! (tables, items, `sql`, `import`/`export`/`convert`) against a real
//! server: a `ferrodyn serve` per test (in memory, on a free port, gone when
//! the test ends), a library client pointed at it, and the binary run as a
//! user would run it.

mod batch_retry;
mod cli_backups;
mod cli_commands;
mod cli_replicas;
mod cli_sql;
mod cli_transfer;
mod cli_vectors;
mod library;

use crate::util::ServerProcess;
use ferrodyn_client::config::Environment;
use ferrodyn_client::{Client, ConnectionOptions};
use serde_json::{json, Value};
use std::process::{Command, Output, Stdio};

/// A spawned server (through the shared harness); dropping it stops the
/// process.
pub struct Server {
    _process: ServerProcess,
    pub endpoint: String,
}

impl Server {
    /// `ferrodyn serve --in-memory --port 0` plus `extra` (fault rules...).
    pub fn start(extra: &[&str]) -> Server {
        let mut args = vec!["--in-memory"];
        args.extend_from_slice(extra);
        let process = ServerProcess::spawn(&args);
        Server {
            endpoint: process.endpoint().to_string(),
            _process: process,
        }
    }

    /// A library client for this server, independent of the user's AWS setup.
    pub fn client(&self) -> Client {
        Client::connect_with_env(
            &ConnectionOptions {
                endpoint_url: Some(self.endpoint.clone()),
                ..Default::default()
            },
            &Environment::default(),
        )
        .expect("connects")
    }

    /// Runs `ferrodyn ARGS --endpoint-url <this server>`.
    pub fn cli(&self, args: &[&str]) -> Output {
        self.cli_with_stdin(args, "")
    }

    pub fn cli_with_stdin(&self, args: &[&str], stdin: &str) -> Output {
        let mut command = cli_command();
        command.args(args).args(["--endpoint-url", &self.endpoint]);
        run_with_stdin(command, stdin)
    }

    /// Runs the CLI and asserts it succeeded; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let output = self.cli(args);
        assert_success(&output, args);
        String::from_utf8(output.stdout).expect("stdout is UTF-8")
    }

    /// Creates a table keyed by `pk` (S), and `sk` (N) when `sort`.
    pub fn create_table(&self, name: &str, sort: bool) {
        let mut request = json!({
            "TableName": name,
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
            "BillingMode": "PAY_PER_REQUEST",
        });
        if sort {
            request["KeySchema"]
                .as_array_mut()
                .unwrap()
                .push(json!({"AttributeName": "sk", "KeyType": "RANGE"}));
            request["AttributeDefinitions"]
                .as_array_mut()
                .unwrap()
                .push(json!({"AttributeName": "sk", "AttributeType": "N"}));
        }
        self.client()
            .call("CreateTable", &request)
            .expect("table created");
    }

    /// Every item of a table, by a paginated Scan.
    pub fn all_items(&self, table: &str) -> Vec<Value> {
        let client = self.client();
        ferrodyn_client::paginate::scan(&client, json!({ "TableName": table }))
            .items()
            .collect::<Result<_, _>>()
            .expect("scan works")
    }
}

pub use crate::util::cli_command;

pub fn run_with_stdin(mut command: Command, stdin: &str) -> Output {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ferrodyn runs");
    {
        use std::io::Write;
        let mut pipe = child.stdin.take().expect("stdin is piped");
        pipe.write_all(stdin.as_bytes())
            .expect("stdin accepts input");
    }
    child.wait_with_output().expect("ferrodyn finishes")
}

pub fn assert_success(output: &Output, args: &[&str]) {
    assert!(
        output.status.success(),
        "`ferrodyn {}` failed ({}):\nstdout: {}\nstderr: {}",
        args.join(" "),
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Parses JSON lines.
pub fn lines(text: &str) -> Vec<Value> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?}: {e}")))
        .collect()
}
