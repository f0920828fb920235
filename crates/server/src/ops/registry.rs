//! Every operation Ferrodyn answers, declared once: its wire name, which API
//! it belongs to (DynamoDB's or the Streams API's `X-Amz-Target` prefix), its
//! kind and its handler. Dispatch, the blocking-pool decision and the fault
//! rules all read these declarations; adding an operation is one line here
//! plus its module (CONTRIBUTING.md walks through it).

use super::*;

/// The `X-Amz-Target` prefix an operation is called under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    DynamoDb,
    Streams,
}

impl Api {
    fn target_prefix(self) -> &'static str {
        match self {
            Api::DynamoDb => "DynamoDB_20120810.",
            Api::Streams => "DynamoDBStreams_20120810.",
        }
    }
}

/// What an operation touches, which decides where it runs and what it may
/// wait for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Reads items without taking locks (GetItem, Query, Scan, BatchGetItem).
    ItemRead,
    /// Writes one item under its lock (PutItem, UpdateItem, DeleteItem).
    ItemWrite,
    /// Writes several items, or reads them under item locks (batches,
    /// transactions, PartiQL statements, which may write).
    MultiItem,
    /// Reads a table's metadata.
    TableRead,
    /// Changes a table: writes the catalog, may start background work.
    TableChange,
    /// Reads a table's stream.
    StreamRead,
}

/// Runs an operation on its raw JSON request body, returning the JSON
/// response body.
pub type Handler = fn(&Arc<Engine>, &Faults, &[u8]) -> Result<Vec<u8>>;

/// Declares the [`Operation`] enum and everything derived from each
/// declaration: `Name: Kind [in Api] => handler`.
macro_rules! operations {
    ($($name:ident: $kind:ident $(in $api:ident)? => $handler:expr,)*) => {
        /// The operations Ferrodyn implements.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Operation {
            $($name,)*
        }

        impl Operation {
            /// Every declared operation, in declaration order.
            pub const ALL: &'static [Operation] = &[$(Operation::$name,)*];

            /// The operation's wire name.
            pub fn name(self) -> &'static str {
                match self {
                    $(Operation::$name => stringify!($name),)*
                }
            }

            pub fn kind(self) -> Kind {
                match self {
                    $(Operation::$name => Kind::$kind,)*
                }
            }

            pub fn api(self) -> Api {
                match self {
                    $(Operation::$name => operations!(@api $($api)?),)*
                }
            }

            pub(super) fn handler(self) -> Handler {
                match self {
                    $(Operation::$name => $handler,)*
                }
            }
        }
    };
    (@api) => { Api::DynamoDb };
    (@api $api:ident) => { Api::$api };
}

operations! {
    CreateTable: TableChange => |engine, _, body| create_table::run(engine, create_table_request(engine, body)?),
    DescribeTable: TableRead => |engine, _, body| describe_table::run(engine, parse_body(body)?),
    ListTables: TableRead => |engine, _, body| list_tables::run(engine, parse_body(body)?),
    DescribeLimits: TableRead => |_, _, body| { parse_body::<serde_json::Value>(body)?; limits::describe() },
    DeleteTable: TableChange => |engine, _, body| delete_table::run(engine, parse_body(body)?),
    UpdateTable: TableChange => |engine, _, body| update_table::run(engine, parse_body(body)?),
    PutItem: ItemWrite => |engine, _, body| put_item::run(engine, parse_body(body)?),
    GetItem: ItemRead => |engine, _, body| get_item::run(engine, parse_body(body)?),
    UpdateItem: ItemWrite => |engine, _, body| update_item::run(engine, parse_body(body)?),
    DeleteItem: ItemWrite => |engine, _, body| delete_item::run(engine, parse_body(body)?),
    Query: ItemRead => |engine, _, body| query::run(engine, parse_body(body)?),
    Scan: ItemRead => |engine, _, body| scan::run(engine, parse_body(body)?),
    SearchVectors: ItemRead => |engine, _, body| search_vectors::run(engine, parse_body(body)?),
    BatchGetItem: ItemRead => |engine, faults, body| batch_get_item::run(engine, faults, parse_body(body)?),
    BatchWriteItem: MultiItem => |engine, faults, body| batch_write_item::run(engine, faults, parse_body(body)?),
    TransactGetItems: MultiItem => |engine, faults, body| transact_get_items::run(engine, faults, parse_body(body)?),
    TransactWriteItems: MultiItem => |engine, faults, body| {
        transact_write_items::run(engine, faults, parse_body(body)?, body.len())
    },
    TagResource: TableChange => |engine, _, body| tags::tag(engine, parse_body(body)?),
    UntagResource: TableChange => |engine, _, body| tags::untag(engine, parse_body(body)?),
    ListTagsOfResource: TableRead => |engine, _, body| tags::list(engine, parse_body(body)?),
    PutResourcePolicy: TableChange => |engine, _, body| resource_policy::put(engine, parse_body(body)?),
    GetResourcePolicy: TableRead => |engine, _, body| resource_policy::get(engine, parse_body(body)?),
    DeleteResourcePolicy: TableChange => |engine, _, body| resource_policy::delete(engine, parse_body(body)?),
    ListStreams: StreamRead in Streams => |engine, _, body| streams::list_streams(engine, parse_body(body)?),
    DescribeStream: StreamRead in Streams => |engine, _, body| streams::describe_stream(engine, parse_body(body)?),
    GetShardIterator: StreamRead in Streams => |engine, _, body| streams::get_shard_iterator(engine, parse_body(body)?),
    GetRecords: StreamRead in Streams => |engine, _, body| streams::get_records(engine, parse_body(body)?),
    UpdateTimeToLive: TableChange => |engine, _, body| ttl::update(engine, parse_body(body)?),
    DescribeTimeToLive: TableRead => |engine, _, body| ttl::describe(engine, parse_body(body)?),
    DescribeContinuousBackups: TableRead => |engine, _, body| backups::describe_continuous_backups(engine, parse_body(body)?),
    UpdateContinuousBackups: TableChange => |engine, _, body| backups::update_continuous_backups(engine, parse_body(body)?),
    RestoreTableToPointInTime: TableChange => |engine, _, body| backups::restore_to_point_in_time(engine, parse_body(body)?),
    CreateBackup: TableChange => |engine, _, body| backups::create(engine, parse_body(body)?),
    DescribeBackup: TableRead => |engine, _, body| backups::describe(engine, parse_body(body)?),
    ListBackups: TableRead => |engine, _, body| backups::list(engine, parse_body(body)?),
    DeleteBackup: TableChange => |engine, _, body| backups::delete(engine, parse_body(body)?),
    RestoreTableFromBackup: TableChange => |engine, _, body| backups::restore(engine, parse_body(body)?),
    ExportTableToPointInTime: TableChange => |engine, _, body| exports::export(engine, parse_body(body)?),
    DescribeExport: TableRead => |engine, _, body| exports::describe(engine, parse_body(body)?),
    ListExports: TableRead => |engine, _, body| exports::list(engine, parse_body(body)?),
    ImportTable: TableChange => |engine, _, body| imports::import(engine, parse_body(body)?),
    DescribeImport: TableRead => |engine, _, body| imports::describe(engine, parse_body(body)?),
    ListImports: TableRead => |engine, _, body| imports::list(engine, parse_body(body)?),
    StartBulkPutItems: TableChange => |engine, _, body| bulk_loads::start(engine, parse_body(body)?),
    DescribeBulkOperation: TableRead => |engine, _, body| bulk_loads::describe(engine, parse_body(body)?),
    ListBulkOperations: TableRead => |engine, _, body| bulk_loads::list(engine, parse_body(body)?),
    CancelBulkOperation: TableChange => |engine, _, body| bulk_loads::cancel(engine, parse_body(body)?),
    EnableKinesisStreamingDestination: TableChange => |engine, _, body| kinesis::enable(engine, parse_body(body)?),
    DisableKinesisStreamingDestination: TableChange => |engine, _, body| kinesis::disable(engine, parse_body(body)?),
    UpdateKinesisStreamingDestination: TableChange => |engine, _, body| kinesis::update(engine, parse_body(body)?),
    DescribeKinesisStreamingDestination: TableRead => |engine, _, body| kinesis::describe(engine, parse_body(body)?),
    ExecuteStatement: MultiItem => |engine, _, body| partiql::execute::run(engine, parse_body(body)?),
    BatchExecuteStatement: MultiItem => |engine, _, body| partiql::batch::run(engine, parse_body(body)?),
    ExecuteTransaction: MultiItem => |engine, faults, body| {
        partiql::transaction::run(engine, faults, parse_body(body)?)
    },
    UpdateContributorInsights: TableChange => |engine, _, body| insights::update(engine, parse_body(body)?),
    DescribeContributorInsights: TableRead => |engine, _, body| insights::describe(engine, parse_body(body)?),
    ListContributorInsights: TableRead => |engine, _, body| insights::list(engine, parse_body(body)?),
    CreateGlobalTable: TableChange => |engine, _, body| global_tables::create(engine, parse_body(body)?),
    UpdateGlobalTable: TableChange => |engine, _, body| global_tables::update(engine, parse_body(body)?),
    DescribeGlobalTable: TableRead => |engine, _, body| global_tables::describe(engine, parse_body(body)?),
    ListGlobalTables: TableRead => |engine, _, body| global_tables::list(engine, parse_body(body)?),
    // Reads, but on the blocking pool: it asks the regions of --peer servers.
    DescribeGlobalTableSettings: TableChange => |engine, _, body| global_table_settings::describe(engine, parse_body(body)?),
    UpdateGlobalTableSettings: TableChange => |engine, _, body| global_table_settings::update(engine, parse_body(body)?),
    DescribeTableReplicaAutoScaling: TableRead => |engine, _, body| global_table_settings::describe_auto_scaling(engine, parse_body(body)?),
    UpdateTableReplicaAutoScaling: TableChange => |engine, _, body| global_table_settings::update_auto_scaling(engine, parse_body(body)?),
}

impl Operation {
    /// Whether the operation runs on the blocking pool rather than inline on
    /// an async worker: table changes do (they write the catalog and start
    /// background work under the catalog lock, and wait for a table's
    /// in-flight writes). Item reads and writes stay inline: the hop to the
    /// pool costs GetItem two thirds of its throughput and PutItem a third
    /// (measured, BENCHMARKS.md), while reads take no lock and writes hold
    /// their items' locks for microseconds (unless writes may block, see
    /// [`Operation::writes_items`]).
    pub fn runs_on_blocking_pool(self) -> bool {
        self.kind() == Kind::TableChange
    }

    /// Whether the operation writes items, or reads them under item locks
    /// (TransactGetItems): it may wait for other requests' items.
    pub fn writes_items(self) -> bool {
        matches!(self.kind(), Kind::ItemWrite | Kind::MultiItem)
    }

    /// Whether the operation reads or writes items (every kind that may
    /// wait for another region of an MRSC global table).
    pub fn serves_items(self) -> bool {
        matches!(
            self.kind(),
            Kind::ItemRead | Kind::ItemWrite | Kind::MultiItem
        )
    }

    /// The operation an `X-Amz-Target` header names: DynamoDB's own
    /// operations, or the Streams API's under its separate prefix.
    pub fn from_target(target: &str) -> Option<Operation> {
        Operation::ALL.iter().copied().find(|operation| {
            target
                .strip_prefix(operation.api().target_prefix())
                .is_some_and(|name| name == operation.name())
        })
    }

    /// The operation of DynamoDB's own API with this name, if we implement it.
    pub fn from_name(name: &str) -> Option<Operation> {
        Operation::ALL
            .iter()
            .copied()
            .find(|operation| operation.api() == Api::DynamoDb && operation.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_is_found_by_its_target_and_only_under_its_api() {
        for &operation in Operation::ALL {
            let target = format!("{}{}", operation.api().target_prefix(), operation.name());
            assert_eq!(Operation::from_target(&target), Some(operation));
            let other = match operation.api() {
                Api::DynamoDb => Api::Streams,
                Api::Streams => Api::DynamoDb,
            };
            let wrong = format!("{}{}", other.target_prefix(), operation.name());
            assert_eq!(Operation::from_target(&wrong), None, "{wrong}");
        }
        assert_eq!(Operation::from_target("DynamoDB_20120810.Nope"), None);
        assert_eq!(Operation::from_target("PutItem"), None);
    }

    #[test]
    fn only_table_changes_run_on_the_blocking_pool() {
        let pooled: Vec<&str> = Operation::ALL
            .iter()
            .filter(|op| op.runs_on_blocking_pool())
            .map(|op| op.name())
            .collect();
        assert_eq!(
            pooled,
            [
                "CreateTable",
                "DeleteTable",
                "UpdateTable",
                "TagResource",
                "UntagResource",
                "PutResourcePolicy",
                "DeleteResourcePolicy",
                "UpdateTimeToLive",
                "UpdateContinuousBackups",
                "RestoreTableToPointInTime",
                "CreateBackup",
                "DeleteBackup",
                "RestoreTableFromBackup",
                "ExportTableToPointInTime",
                "ImportTable",
                "StartBulkPutItems",
                "CancelBulkOperation",
                "EnableKinesisStreamingDestination",
                "DisableKinesisStreamingDestination",
                "UpdateKinesisStreamingDestination",
                "UpdateContributorInsights",
                "CreateGlobalTable",
                "UpdateGlobalTable",
                "DescribeGlobalTableSettings",
                "UpdateGlobalTableSettings",
                "UpdateTableReplicaAutoScaling"
            ]
        );
        assert!(Operation::TransactGetItems.writes_items());
        assert!(!Operation::Query.writes_items());
    }
}
