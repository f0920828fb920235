//! A `ferrodyn serve --in-memory` per test binary, reached through
//! `ferrodyn-client`, plus table helpers.
#![allow(dead_code)]

use ferrodyn_client::{Client, ConnectionOptions};
use ferrodyn_patterns::DynamoApi;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root exists")
}

/// The `ferrodyn` binary, built once per test process.
pub fn server_binary() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Some(bin) = std::env::var_os("FERRODYN_BIN") {
            return PathBuf::from(bin);
        }
        let root = workspace_root();
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        let output = Command::new(cargo)
            .args(["build", "-p", "ferrodyn", "--bin", "ferrodyn"])
            .current_dir(&root)
            .output()
            .expect("cargo can be run");
        assert!(
            output.status.success(),
            "building ferrodyn failed:\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let target = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| root.join("target"));
        target.join("debug").join("ferrodyn")
    })
    .clone()
}

/// The server: kept alive for the whole test binary (its stdin pipe is held
/// here; when the process exits the pipe closes and the server exits).
struct Server {
    _child: Child,
    _stdin: ChildStdin,
    endpoint: String,
}

fn server() -> &'static Mutex<Server> {
    static SERVER: OnceLock<Mutex<Server>> = OnceLock::new();
    SERVER.get_or_init(|| {
        let mut child = Command::new(server_binary())
            .args(["serve", "--in-memory", "--port", "0", "--exit-on-stdin-eof"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("ferrodyn can be spawned");
        let stdin = child.stdin.take().expect("stdin is piped");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout is piped")).lines();
        let first = lines.next().expect("a listening line").expect("readable");
        // Keep draining stdout so the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        let endpoint = first
            .strip_prefix("ferrodyn listening on ")
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("unexpected first line: {first}"))
            .to_string();
        Mutex::new(Server {
            _child: child,
            _stdin: stdin,
            endpoint,
        })
    })
}

/// The shared server's URL.
pub fn endpoint() -> String {
    server().lock().unwrap().endpoint.clone()
}

/// A client for the shared server.
pub fn client() -> Client {
    let endpoint = server().lock().unwrap().endpoint.clone();
    Client::connect(&ConnectionOptions {
        endpoint_url: Some(endpoint),
        region: Some("us-east-1".into()),
        profile: None,
    })
    .expect("client connects")
}

/// A fresh table name per call.
pub fn table_name(prefix: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "{prefix}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Creates an on-demand table with string keys `pk` (and `sk`, if given).
pub fn create_table(api: &dyn DynamoApi, name: &str, pk: &str, sk: Option<&str>) {
    let mut defs = vec![json!({"AttributeName": pk, "AttributeType": "S"})];
    let mut schema = vec![json!({"AttributeName": pk, "KeyType": "HASH"})];
    if let Some(sk) = sk {
        defs.push(json!({"AttributeName": sk, "AttributeType": "S"}));
        schema.push(json!({"AttributeName": sk, "KeyType": "RANGE"}));
    }
    api.call(
        "CreateTable",
        &json!({
            "TableName": name,
            "AttributeDefinitions": defs,
            "KeySchema": schema,
            "BillingMode": "PAY_PER_REQUEST"
        }),
    )
    .expect("table is created");
}

/// A typed item/key from a JSON literal.
pub fn obj(v: Value) -> serde_json::Map<String, Value> {
    v.as_object().expect("an object").clone()
}

pub fn get(api: &dyn DynamoApi, table: &str, key: Value) -> Option<serde_json::Map<String, Value>> {
    ferrodyn_patterns::stage::get_item(api, table, &obj(key)).expect("GetItem works")
}
