//! DynamoDB operations, one module each. Every module declares its request
//! shape, validates it in the order DynamoDB does (field constraints, then
//! expressions, then the table and its keys), runs it on the engine and builds
//! the response.

mod backups;
mod batch_get_item;
mod batch_write_item;
mod bulk_loads;
mod choice;
mod common;
mod conditional_write;
mod create_table;
mod delete_item;
mod delete_table;
mod describe_table;
mod exports;
mod get_item;
mod global_table_settings;
mod global_tables;
mod imports;
mod insights;
mod jobs;
mod kinesis;
mod leniency;
mod limits;
mod list_tables;
mod output;
mod partiql;
mod put_item;
mod query;
mod reads;
mod registry;
mod replicas;
mod resource_policy;
mod scan;
mod search_vectors;
mod streams;
mod table_schema;
mod tags;
mod transact_get_items;
mod transact_write_items;
mod ttl;
mod update_item;
mod update_table;
mod vector_schema;
mod wording;

use crate::faults::Faults;
use common::parse_body;
use ferrodyn_engine::usage;
use ferrodyn_engine::Engine;
use ferrodyn_types::Result;
use std::sync::Arc;

pub use registry::{Api, Handler, Kind, Operation};

/// Runs one operation on a raw JSON body, returning the JSON response body.
pub fn dispatch(
    engine: &Arc<Engine>,
    faults: &Faults,
    operation: Operation,
    body: &[u8],
) -> Result<Vec<u8>> {
    engine.requests.count(operation.name());
    // Capacity charged while the operation runs is filed under its name.
    usage::with_operation(operation.name(), || run(engine, faults, operation, body))
        .map_err(|error| wording::as_aws_words(operation, error))
}

fn run(
    engine: &Arc<Engine>,
    faults: &Faults,
    operation: Operation,
    body: &[u8],
) -> Result<Vec<u8>> {
    if faults.is_active() {
        let tables = tables_named(body);
        let tables: Vec<&str> = tables.iter().map(String::as_str).collect();
        if let Some(error) = faults.request_fault(operation, &tables) {
            return Err(error);
        }
    }
    operation.handler()(engine, faults, body)
}

/// CreateTable's request, read leniently under
/// `--accept-unused-attribute-definitions` (see [`leniency`]).
fn create_table_request(engine: &Engine, body: &[u8]) -> Result<create_table::Request> {
    let lenient = engine
        .accepts_unused_attribute_definitions()
        .then(|| leniency::without_unused_definitions(body))
        .flatten();
    parse_body(lenient.as_deref().unwrap_or(body))
}

/// DescribeEndpoints: the one endpoint is the address the client used.
pub fn describe_endpoints(host: &str) -> Vec<u8> {
    let body =
        serde_json::json!({ "Endpoints": [{ "Address": host, "CachePeriodInMinutes": 1440 }] });
    serde_json::to_vec(&body).expect("plain data always serialises")
}

/// The tables a request names (for fault rules), read loosely: a malformed
/// body is left for the operation to reject.
fn tables_named(body: &[u8]) -> Vec<String> {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(body) else {
        return Vec::new();
    };
    let mut tables = Vec::new();
    if let Some(name) = value.get("TableName").and_then(|t| t.as_str()) {
        tables.push(name.to_string());
    }
    if let Some(items) = value.get("RequestItems").and_then(|r| r.as_object()) {
        tables.extend(items.keys().cloned());
    }
    // PartiQL names its tables inside its statements.
    let batch = ["Statements", "TransactStatements"]
        .into_iter()
        .filter_map(|field| value.get(field).and_then(|s| s.as_array()))
        .flatten()
        .filter_map(|s| s.get("Statement"));
    for text in value.get("Statement").into_iter().chain(batch) {
        if let Some(parsed) = text.as_str().and_then(|t| ferrodyn_partiql::parse(t).ok()) {
            tables.push(parsed.statement.table().to_string());
        }
    }
    for action in value
        .get("TransactItems")
        .and_then(|t| t.as_array())
        .into_iter()
        .flatten()
    {
        if let Some(inner) = action.as_object().and_then(|o| o.values().next()) {
            if let Some(name) = inner.get("TableName").and_then(|t| t.as_str()) {
                tables.push(name.to_string());
            }
        }
    }
    tables
}
