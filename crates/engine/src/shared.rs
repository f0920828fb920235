//! Plain data the engine's modules share, kept apart from the modules that
//! act on it so that they need not import each other: a module that only
//! needs an index's kind, a table's statistics or a stream's identity takes
//! it from here instead of from index.rs, table.rs or streams.rs (which
//! re-export these). Nothing here imports another engine module's
//! behaviour; `scripts/module_cycles.py` checks the engine's import graph.

use serde::{Deserialize, Serialize};

/// Whether an index is a GSI or an LSI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexKind {
    Global,
    Local,
}

/// A table's point-in-time recovery (recovery.rs): its window, and the bases
/// its restores start from, oldest first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PitrSettings {
    pub recovery_days: u32,
    pub bases: Vec<PitrBase>,
}

/// One base of a table's recovery: a backup of the table at `time`, after
/// which the change log holds every write, from sequence number `log_from`
/// on (replaying a change the base already holds is harmless: each record
/// carries the item's whole new image).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PitrBase {
    /// When it was taken (seconds).
    pub time: f64,
    pub backup: u64,
    pub log_from: u64,
}

/// The changes a point-in-time restore replays after copying the base.
#[derive(Clone, Serialize, Deserialize)]
pub struct Replay {
    /// The table whose log is replayed.
    pub source_table: u64,
    /// Records before this sequence number are in the base.
    pub from_seq: u64,
    /// Only changes committed at or before this instant (ms since the epoch).
    pub until_ms: u64,
    /// The next record to replay (a crash resumes here).
    pub next_seq: u64,
}

/// Item count and total item bytes of a table (or a change to them).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TableStats {
    pub item_count: i64,
    pub size_bytes: i64,
}

impl TableStats {
    pub fn plus(self, other: TableStats) -> TableStats {
        TableStats {
            item_count: self.item_count + other.item_count,
            size_bytes: self.size_bytes + other.size_bytes,
        }
    }
}

/// One stream of a table, current or disabled.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct StreamInfo {
    pub arn: String,
    pub label: String,
    pub view_type: String,
    /// First sequence number that belongs to this stream.
    pub start_seq: u64,
    /// Last sequence number, once the stream is disabled.
    pub end_seq: Option<u64>,
    pub created: f64,
}

impl StreamInfo {
    /// Whether sequence number `seq` lies in this stream's range.
    pub fn covers(&self, seq: u64) -> bool {
        seq >= self.start_seq && self.end_seq.is_none_or(|end| seq <= end)
    }
}

impl StreamInfo {
    pub fn enabled(&self) -> bool {
        self.end_seq.is_none()
    }

    /// The stream's single shard id, in DynamoDB's shape.
    pub fn shard_id(&self) -> String {
        let millis = (self.created * 1000.0) as u64;
        let tag = crate::keys::partition_hash(&ferrodyn_types::AttributeValue::S(self.arn.clone()));
        format!("shardId-{millis:020}-{:08x}", tag as u32)
    }
}

/// Who made a change, when it was not an application (TTL expiry).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum ChangeSource {
    Application,
    TimeToLive,
}

/// Now, in seconds since the epoch, to the millisecond (as DynamoDB reports
/// timestamps).
pub fn now_seconds() -> f64 {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    // Millisecond precision, as DynamoDB reports timestamps.
    (now.as_millis() as f64) / 1000.0
}

/// A Kinesis streaming destination of a table (kinesis.rs), as its catalog
/// record keeps it. Entries are kept after they end (DISABLED,
/// ENABLE_FAILED), as DynamoDB lists them; at most one is live.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct KinesisDestination {
    pub stream_arn: String,
    pub status: DestinationStatus,
    /// DestinationStatusDescription (why an enable failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// ApproximateCreationDateTimePrecision as set by the client; None
    /// (never set) delivers milliseconds and is not shown, as on AWS.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<String>,
    /// The name of its delivery cursor (`kinesis/<n>`, keyspace `'k'`).
    pub consumer: String,
    /// When the status last changed (seconds, engine clock).
    pub since: f64,
}

/// DestinationStatus.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum DestinationStatus {
    Enabling,
    Active,
    Disabling,
    Disabled,
    EnableFailed,
    Updating,
}

impl DestinationStatus {
    /// Whether the destination is live (DynamoDB allows one per table).
    pub fn live(self) -> bool {
        !matches!(
            self,
            DestinationStatus::Disabled | DestinationStatus::EnableFailed
        )
    }

    /// Whether changes are delivered (and so logged and kept) in this state.
    pub fn delivers(self) -> bool {
        matches!(
            self,
            DestinationStatus::Enabling | DestinationStatus::Active | DestinationStatus::Updating
        )
    }

    /// The wire name.
    pub fn name(self) -> &'static str {
        match self {
            DestinationStatus::Enabling => "ENABLING",
            DestinationStatus::Active => "ACTIVE",
            DestinationStatus::Disabling => "DISABLING",
            DestinationStatus::Disabled => "DISABLED",
            DestinationStatus::EnableFailed => "ENABLE_FAILED",
            DestinationStatus::Updating => "UPDATING",
        }
    }
}
