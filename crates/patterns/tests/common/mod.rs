//! A `ferrodyn serve --in-memory` per test binary, reached through
//! `ferrodyn-client`, plus table helpers.
#![allow(dead_code)]

use ferrodyn_client::{Client, ConnectionOptions};
use ferrodyn_patterns::DynamoApi;
use ferrodyn_testkit::ServerProcess;
use serde_json::{json, Value};
use std::sync::{Mutex, OnceLock};

#[allow(unused_imports)] // only the CLI tests run the binary
pub use ferrodyn_testkit::cli_command;

/// The server every test of this binary shares: kept alive for the whole
/// test process (when it exits, the server's stdin pipe closes and it exits).
fn server() -> &'static Mutex<ServerProcess> {
    static SERVER: OnceLock<Mutex<ServerProcess>> = OnceLock::new();
    SERVER.get_or_init(|| Mutex::new(ServerProcess::in_memory()))
}

/// The shared server's URL.
pub fn endpoint() -> String {
    server().lock().unwrap().endpoint().to_string()
}

/// A client for the shared server.
pub fn client() -> Client {
    let endpoint = server().lock().unwrap().endpoint().to_string();
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
