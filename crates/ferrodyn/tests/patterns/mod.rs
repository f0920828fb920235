//! `ferrodyn-patterns` (staged edits, uniqueness constraints) and the
//! `ferrodyn stage|unique|expr|cost` subcommands against the server the test
//! binary shares, reached through `ferrodyn-client`, plus table helpers.

mod cli;
mod follow;
mod stage;
mod unique;

use ferrodyn_client::{Client, ConnectionOptions};
use ferrodyn_patterns::DynamoApi;
use serde_json::{json, Value};

pub use crate::util::{cli_command, unique_name};

/// The shared server's URL.
pub fn endpoint() -> String {
    crate::util::endpoint().to_string()
}

/// A library client for the shared server.
pub fn client() -> Client {
    Client::connect(&ConnectionOptions {
        endpoint_url: Some(endpoint()),
        region: Some("us-east-1".into()),
        profile: None,
    })
    .expect("client connects")
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
