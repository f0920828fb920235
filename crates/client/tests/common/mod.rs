//! Test harness: a real `ferrodyn serve` per test (in memory, on a free
//! port, gone when the test ends), a library client pointed at it, and the
//! `ferrodyn` binary run as a user would run it.
//!
//! The binary is `<workspace>/target/debug/ferrodyn` (or `$FERRODYN_BIN`),
//! built once per test process with `cargo build -p ferrodyn --bin ferrodyn`.
//! Each test binary uses part of this module, hence `dead_code`.
#![allow(dead_code)]

use ferrodyn_client::config::Environment;
use ferrodyn_client::{Client, ConnectionOptions};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root exists")
}

/// The `ferrodyn` binary, built once per test process.
pub fn binary() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(bin) = std::env::var_os("FERRODYN_BIN") {
            return PathBuf::from(bin);
        }
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let output = Command::new(cargo)
            .args(["build", "-p", "ferrodyn", "--bin", "ferrodyn"])
            .current_dir(workspace_root())
            .output()
            .expect("cargo runs");
        assert!(
            output.status.success(),
            "building ferrodyn failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| workspace_root().join("target"));
        target.join("debug").join("ferrodyn")
    })
}

/// A spawned server; dropping it stops the process.
pub struct Server {
    child: Child,
    _stdin: ChildStdin,
    pub endpoint: String,
}

impl Server {
    /// `ferrodyn serve --in-memory --port 0` plus `extra` (fault rules...).
    pub fn start(extra: &[&str]) -> Server {
        let mut child = Command::new(binary())
            .args(["serve", "--in-memory", "--port", "0", "--exit-on-stdin-eof"])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the server starts");
        let stdin = child.stdin.take().expect("stdin is piped");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout is piped"))
            .read_line(&mut line)
            .expect("the server prints its address");
        let endpoint = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_string();
        Server {
            child,
            _stdin: stdin,
            endpoint,
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

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `ferrodyn` binary with the user's AWS settings removed, so tests do
/// not depend on who runs them.
pub fn cli_command() -> Command {
    let mut command = Command::new(binary());
    for (name, _) in std::env::vars() {
        if name.starts_with("AWS_") {
            command.env_remove(name);
        }
    }
    command.env(
        "HOME",
        std::env::temp_dir().join("ferrodyn-client-tests-home"),
    );
    command
}

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

/// A tiny pause used only where a test waits for something asynchronous.
pub fn pause() {
    std::thread::sleep(Duration::from_millis(20));
}
