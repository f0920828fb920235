//! DynamoDB operations, one module each. Every module declares its request
//! shape, validates it in the order DynamoDB does (field constraints, then
//! expressions, then the table and its keys), runs it on the engine and builds
//! the response.

mod batch_get_item;
mod batch_write_item;
mod common;
mod conditional_write;
mod create_table;
mod delete_item;
mod delete_table;
mod describe_table;
mod get_item;
mod leniency;
mod list_tables;
mod partiql;
mod put_item;
mod query;
mod reads;
mod resource_policy;
mod scan;
mod streams;
mod tags;
mod transact_get_items;
mod transact_write_items;
mod ttl;
mod update_item;
mod update_table;
mod wording;

use crate::faults::Faults;
use ferrodyn_engine::usage;
use ferrodyn_engine::Engine;
use ferrodyn_types::Result;
use std::sync::Arc;

/// The operations Ferrodyn implements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    CreateTable,
    DescribeTable,
    ListTables,
    DeleteTable,
    UpdateTable,
    PutItem,
    GetItem,
    UpdateItem,
    DeleteItem,
    Query,
    Scan,
    BatchGetItem,
    BatchWriteItem,
    TransactGetItems,
    TransactWriteItems,
    TagResource,
    UntagResource,
    ListTagsOfResource,
    PutResourcePolicy,
    GetResourcePolicy,
    DeleteResourcePolicy,
    ListStreams,
    DescribeStream,
    GetShardIterator,
    GetRecords,
    UpdateTimeToLive,
    DescribeTimeToLive,
    DescribeContinuousBackups,
    ExecuteStatement,
    BatchExecuteStatement,
    ExecuteTransaction,
}

impl Operation {
    /// The operation's wire name.
    pub fn name(self) -> &'static str {
        match self {
            Operation::CreateTable => "CreateTable",
            Operation::DescribeTable => "DescribeTable",
            Operation::ListTables => "ListTables",
            Operation::DeleteTable => "DeleteTable",
            Operation::UpdateTable => "UpdateTable",
            Operation::PutItem => "PutItem",
            Operation::GetItem => "GetItem",
            Operation::UpdateItem => "UpdateItem",
            Operation::DeleteItem => "DeleteItem",
            Operation::Query => "Query",
            Operation::Scan => "Scan",
            Operation::BatchGetItem => "BatchGetItem",
            Operation::BatchWriteItem => "BatchWriteItem",
            Operation::TransactGetItems => "TransactGetItems",
            Operation::TransactWriteItems => "TransactWriteItems",
            Operation::TagResource => "TagResource",
            Operation::UntagResource => "UntagResource",
            Operation::ListTagsOfResource => "ListTagsOfResource",
            Operation::PutResourcePolicy => "PutResourcePolicy",
            Operation::GetResourcePolicy => "GetResourcePolicy",
            Operation::DeleteResourcePolicy => "DeleteResourcePolicy",
            Operation::ListStreams => "ListStreams",
            Operation::DescribeStream => "DescribeStream",
            Operation::GetShardIterator => "GetShardIterator",
            Operation::GetRecords => "GetRecords",
            Operation::UpdateTimeToLive => "UpdateTimeToLive",
            Operation::DescribeTimeToLive => "DescribeTimeToLive",
            Operation::DescribeContinuousBackups => "DescribeContinuousBackups",
            Operation::ExecuteStatement => "ExecuteStatement",
            Operation::BatchExecuteStatement => "BatchExecuteStatement",
            Operation::ExecuteTransaction => "ExecuteTransaction",
        }
    }

    /// Whether the operation runs on the blocking pool rather than inline on
    /// an async worker: table-level changes do (they write the catalog and
    /// start background work under the catalog lock, and wait for a table's
    /// in-flight writes). Item reads and writes stay inline: the hop to the
    /// pool costs GetItem two thirds of its throughput and PutItem a third
    /// (measured, BENCHMARKS.md), while reads take no lock and writes hold
    /// their items' locks for microseconds (unless writes may block, see
    /// [`Operation::writes_items`]).
    pub fn runs_on_blocking_pool(self) -> bool {
        matches!(
            self,
            Operation::CreateTable
                | Operation::DeleteTable
                | Operation::UpdateTable
                | Operation::UpdateTimeToLive
                | Operation::TagResource
                | Operation::UntagResource
                | Operation::PutResourcePolicy
                | Operation::DeleteResourcePolicy
        )
    }

    /// Whether the operation writes items, or reads them under item locks
    /// (TransactGetItems): it may wait for other requests' items.
    pub fn writes_items(self) -> bool {
        matches!(
            self,
            Operation::PutItem
                | Operation::UpdateItem
                | Operation::DeleteItem
                | Operation::BatchWriteItem
                | Operation::TransactWriteItems
                | Operation::TransactGetItems
                | Operation::ExecuteStatement
                | Operation::BatchExecuteStatement
                | Operation::ExecuteTransaction
        )
    }

    /// The operation an `X-Amz-Target` header names: DynamoDB's own
    /// operations, or the Streams API's under its separate prefix.
    pub fn from_target(target: &str) -> Option<Operation> {
        if let Some(name) = target.strip_prefix("DynamoDB_20120810.") {
            return Operation::from_name(name);
        }
        Some(match target.strip_prefix("DynamoDBStreams_20120810.")? {
            "ListStreams" => Operation::ListStreams,
            "DescribeStream" => Operation::DescribeStream,
            "GetShardIterator" => Operation::GetShardIterator,
            "GetRecords" => Operation::GetRecords,
            _ => return None,
        })
    }

    /// The operation named by the `X-Amz-Target` suffix, if we implement it.
    pub fn from_name(name: &str) -> Option<Operation> {
        Some(match name {
            "CreateTable" => Operation::CreateTable,
            "DescribeTable" => Operation::DescribeTable,
            "ListTables" => Operation::ListTables,
            "DeleteTable" => Operation::DeleteTable,
            "UpdateTable" => Operation::UpdateTable,
            "PutItem" => Operation::PutItem,
            "GetItem" => Operation::GetItem,
            "UpdateItem" => Operation::UpdateItem,
            "DeleteItem" => Operation::DeleteItem,
            "Query" => Operation::Query,
            "Scan" => Operation::Scan,
            "BatchGetItem" => Operation::BatchGetItem,
            "BatchWriteItem" => Operation::BatchWriteItem,
            "TransactGetItems" => Operation::TransactGetItems,
            "TransactWriteItems" => Operation::TransactWriteItems,
            "TagResource" => Operation::TagResource,
            "UntagResource" => Operation::UntagResource,
            "ListTagsOfResource" => Operation::ListTagsOfResource,
            "PutResourcePolicy" => Operation::PutResourcePolicy,
            "GetResourcePolicy" => Operation::GetResourcePolicy,
            "DeleteResourcePolicy" => Operation::DeleteResourcePolicy,
            "UpdateTimeToLive" => Operation::UpdateTimeToLive,
            "DescribeTimeToLive" => Operation::DescribeTimeToLive,
            "DescribeContinuousBackups" => Operation::DescribeContinuousBackups,
            "ExecuteStatement" => Operation::ExecuteStatement,
            "BatchExecuteStatement" => Operation::BatchExecuteStatement,
            "ExecuteTransaction" => Operation::ExecuteTransaction,
            _ => return None,
        })
    }
}

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
        if let Some(error) = faults.request_fault(operation.name(), &tables) {
            return Err(error);
        }
    }
    match operation {
        Operation::CreateTable => {
            let lenient = engine
                .accepts_unused_attribute_definitions()
                .then(|| leniency::without_unused_definitions(body))
                .flatten();
            create_table::run(
                engine,
                common::parse_body(lenient.as_deref().unwrap_or(body))?,
            )
        }
        Operation::DescribeTable => describe_table::run(engine, common::parse_body(body)?),
        Operation::ListTables => list_tables::run(engine, common::parse_body(body)?),
        Operation::DeleteTable => delete_table::run(engine, common::parse_body(body)?),
        Operation::UpdateTable => update_table::run(engine, common::parse_body(body)?),
        Operation::PutItem => put_item::run(engine, common::parse_body(body)?),
        Operation::GetItem => get_item::run(engine, common::parse_body(body)?),
        Operation::UpdateItem => update_item::run(engine, common::parse_body(body)?),
        Operation::DeleteItem => delete_item::run(engine, common::parse_body(body)?),
        Operation::Query => query::run(engine, common::parse_body(body)?),
        Operation::Scan => scan::run(engine, common::parse_body(body)?),
        Operation::BatchGetItem => batch_get_item::run(engine, faults, common::parse_body(body)?),
        Operation::BatchWriteItem => {
            batch_write_item::run(engine, faults, common::parse_body(body)?)
        }
        Operation::TransactGetItems => {
            transact_get_items::run(engine, faults, common::parse_body(body)?)
        }
        Operation::TransactWriteItems => {
            transact_write_items::run(engine, faults, common::parse_body(body)?, body.len())
        }
        Operation::TagResource => tags::tag(engine, common::parse_body(body)?),
        Operation::UntagResource => tags::untag(engine, common::parse_body(body)?),
        Operation::ListTagsOfResource => tags::list(engine, common::parse_body(body)?),
        Operation::PutResourcePolicy => resource_policy::put(engine, common::parse_body(body)?),
        Operation::GetResourcePolicy => resource_policy::get(engine, common::parse_body(body)?),
        Operation::DeleteResourcePolicy => {
            resource_policy::delete(engine, common::parse_body(body)?)
        }
        Operation::ListStreams => streams::list_streams(engine, common::parse_body(body)?),
        Operation::DescribeStream => streams::describe_stream(engine, common::parse_body(body)?),
        Operation::GetShardIterator => {
            streams::get_shard_iterator(engine, common::parse_body(body)?)
        }
        Operation::GetRecords => streams::get_records(engine, common::parse_body(body)?),
        Operation::UpdateTimeToLive => ttl::update(engine, common::parse_body(body)?),
        Operation::DescribeTimeToLive => ttl::describe(engine, common::parse_body(body)?),
        Operation::DescribeContinuousBackups => {
            describe_table::continuous_backups(engine, common::parse_body(body)?)
        }
        Operation::ExecuteStatement => partiql::execute::run(engine, common::parse_body(body)?),
        Operation::BatchExecuteStatement => partiql::batch::run(engine, common::parse_body(body)?),
        Operation::ExecuteTransaction => {
            partiql::transaction::run(engine, faults, common::parse_body(body)?)
        }
    }
}

/// DescribeEndpoints: the one endpoint is the address the client used.
pub fn describe_endpoints(host: &str) -> Vec<u8> {
    let body =
        serde_json::json!({ "Endpoints": [{ "Address": host, "CachePeriodInMinutes": 1440 }] });
    serde_json::to_vec(&body).expect("serialisable")
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
