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
    /// The stream's shards in creation order, parents before children
    /// (shards.rs). Empty for a stream enabled before shards followed
    /// partitions: it has the one shard [`StreamInfo::shards`] makes up.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub shards: Vec<Shard>,
}

impl StreamInfo {
    /// Whether sequence number `seq` lies in this stream's range.
    pub fn covers(&self, seq: u64) -> bool {
        seq >= self.start_seq && self.end_seq.is_none_or(|end| seq <= end)
    }

    pub fn enabled(&self) -> bool {
        self.end_seq.is_none()
    }

    /// The stream's shards, oldest first. A stream from before shards
    /// followed partitions has one, over every key and the whole stream,
    /// under the id it always had.
    pub fn shards(&self) -> Vec<Shard> {
        if !self.shards.is_empty() {
            return self.shards.clone();
        }
        let millis = (self.created * 1000.0) as u64;
        vec![Shard {
            id: shard_id(millis, &self.arn),
            partition: 0,
            lo: 0,
            hi: u64::MAX,
            start_seq: self.start_seq,
            end_seq: self.end_seq,
            parent: None,
            created_ms: millis,
            closed_ms: self.end_seq.map(|_| millis),
        }]
    }
}

/// A shard id in DynamoDB's shape: `shardId-`, the creation time in epoch
/// milliseconds on 20 digits, `-` and 8 hex digits (DynamoDB's derivation
/// of those is not published; ours is a hash of `tag`).
pub fn shard_id(created_ms: u64, tag: &str) -> String {
    let hash = crate::keys::partition_hash(&ferrodyn_types::AttributeValue::S(tag.to_string()));
    format!("shardId-{created_ms:020}-{:08x}", hash as u32)
}

/// One shard of a stream: the changes of the items whose [`placement`]
/// lies in `lo..=hi` (one partition of the table) with sequence numbers from
/// `start_seq` on, up to `end_seq` once closed.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Shard {
    pub id: String,
    /// The table partition it follows.
    pub partition: u32,
    pub lo: u64,
    pub hi: u64,
    pub start_seq: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_seq: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    pub created_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub closed_ms: Option<u64>,
}

impl Shard {
    /// Whether the change of an item with this partition hash (as stored in
    /// its key) and sequence number belongs here.
    pub fn holds(&self, hash: u64, seq: u64) -> bool {
        let at = placement(hash);
        self.lo <= at && at <= self.hi && self.covers(seq)
    }

    /// Whether sequence number `seq` lies in the shard's range (a record
    /// written before keys carried their hash: its stream had one shard).
    pub fn covers(&self, seq: u64) -> bool {
        seq >= self.start_seq && self.end_seq.is_none_or(|end| seq <= end)
    }

    pub fn is_open(&self) -> bool {
        self.end_seq.is_none()
    }
}

/// A table's partitions (partitions.rs): the table's and each global
/// index's ranges of the 64-bit partition hash, and the ids they came from.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct PartitionMap {
    pub table: Vec<Partition>,
    /// Global secondary indexes' partitions, by index name.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub indexes: std::collections::BTreeMap<String, Vec<Partition>>,
    /// The id the next partition gets.
    pub next_id: u32,
}

/// Where an item lies in the partition space: its stored partition hash
/// (FNV-1a, which keys that differ only in their last characters leave
/// close together in its high bits), mixed by a bijection (SplitMix64's
/// finaliser) so that `user-1` .. `user-999` spread over a table's
/// partitions as DynamoDB's hashing spreads them. Partition and shard
/// ranges are ranges of this value.
pub fn placement(hash: u64) -> u64 {
    let mut x = hash;
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// One partition: the items whose [`placement`] lies in `lo..=hi`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Partition {
    pub id: u32,
    pub lo: u64,
    pub hi: u64,
    /// The partition it was split from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<u32>,
    pub created_ms: u64,
}

impl Partition {
    /// Whether an item with this stored partition hash lies here.
    pub fn holds(&self, hash: u64) -> bool {
        let at = placement(hash);
        self.lo <= at && at <= self.hi
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

/// One table's or index's setting, as the catalog keeps it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct InsightsState {
    /// ENABLING, ENABLED, DISABLING, DISABLED or FAILED.
    pub status: String,
    /// ACCESSED_AND_THROTTLED_KEYS or THROTTLED_KEYS.
    pub mode: String,
    /// The rules' creation time (ms), part of their names.
    pub rule_ms: u64,
    /// LastUpdateDateTime (seconds).
    pub updated: f64,
    /// Why it FAILED (exception name, description).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<(String, String)>,
    /// An ENABLE past the quota: FAILED once it settles.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub over_quota: bool,
}

impl InsightsState {
    /// Whether traffic is counted (the rules exist).
    pub fn counting(&self) -> bool {
        matches!(self.status.as_str(), "ENABLING" | "ENABLED")
    }

    /// Whether accessed keys are counted, not only throttled ones.
    pub fn counts_accessed(&self) -> bool {
        self.mode == "ACCESSED_AND_THROTTLED_KEYS"
    }
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

/// A global table's replication group (replication/), as every replica's
/// catalog record keeps it: the same group in each region, pushed to the
/// others by the region that changes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GlobalTable {
    /// GlobalTableVersion: "2019.11.21", or "2017.11.29" for groups made
    /// by CreateGlobalTable.
    pub version: String,
    /// MultiRegionConsistency STRONG (MRSC) rather than EVENTUAL.
    #[serde(default)]
    pub strong: bool,
    /// Every region that holds a replica, this one included, in the order
    /// they joined.
    pub replicas: Vec<ReplicaState>,
    /// MRSC witnesses: regions that hold the replication log, not a table.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub witnesses: Vec<ReplicaState>,
    /// GlobalTableSettingsReplicationMode (None: ENABLED, the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings_mode: Option<String>,
    /// CreateTable's GlobalTableSourceArn, on a replica made that way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_arn: Option<String>,
    /// UpdateTable's DisassociationProtectionEnabled: the regions whose
    /// replica may not be removed or deleted while it is set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disassociation_protected: Vec<String>,
    /// Auto scaling settings as UpdateTableReplicaAutoScaling and
    /// UpdateGlobalTableSettings gave them, by region (replication/settings.rs:
    /// stored and shown, never acted on).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub auto_scaling: std::collections::BTreeMap<String, serde_json::Value>,
    /// When the group was formed (seconds).
    pub created: f64,
}

/// One region of a replication group.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplicaState {
    pub region: String,
    /// ReplicaStatus (or WitnessStatus): CREATING, ACTIVE, UPDATING, DELETING.
    pub status: String,
    /// Per-replica settings as the client gave them (KMSMasterKeyId,
    /// ProvisionedThroughputOverride, OnDemandThroughputOverride,
    /// GlobalSecondaryIndexes, TableClassOverride), shown by DescribeTable.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub settings: serde_json::Map<String, serde_json::Value>,
}

impl GlobalTable {
    /// The group's entry for `region`.
    pub fn replica(&self, region: &str) -> Option<&ReplicaState> {
        self.replicas.iter().find(|r| r.region == region)
    }
}

/// Fills DescribeTable's global-table members from `group`, as the replica
/// in `own` region shows them: Replicas lists the other regions.
pub fn describe_global(
    description: &mut crate::schema::TableDescription,
    group: &GlobalTable,
    own: &str,
) {
    use serde_json::{json, Value};
    let replicas: Vec<Value> = (group.replicas.iter())
        .filter(|r| r.region != own)
        .map(|r| {
            // The replica's table ARN: this one's in the replica's region.
            let mut arn: Vec<&str> = description.table_arn.splitn(6, ':').collect();
            if arn.len() == 6 {
                arn[3] = &r.region;
            }
            let mut shown = json!({
                "RegionName": r.region,
                "ReplicaStatus": r.status,
                "ReplicaArn": arn.join(":"),
            });
            for (name, value) in &r.settings {
                shown[name] = value.clone();
            }
            shown
        })
        .collect();
    description.replicas = Some(replicas);
    description.global_table_version = Some(group.version.clone());
    let mode = if group.strong { "STRONG" } else { "EVENTUAL" };
    description.multi_region_consistency = Some(mode.into());
    if !group.witnesses.is_empty() {
        let witnesses = (group.witnesses.iter())
            .map(|w| json!({ "RegionName": w.region, "WitnessStatus": w.status }))
            .collect();
        description.global_table_witnesses = Some(witnesses);
    }
    description.global_table_settings_replication_mode = group.settings_mode.clone();
    if !group.strong && group.version != "2017.11.29" {
        let protected = group.disassociation_protected.iter().any(|r| r == own);
        description.disassociation_protection_enabled = Some(protected);
    }
}

/// Item versions of global tables (replication/versions.rs says how they
/// are made and compared).
/// One change's version: its time (µs) and its region.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ItemVersion {
    pub micros: u64,
    pub origin: String,
}

/// How a planned write changes its item's version.
#[derive(Clone, Debug)]
pub struct VersionChange {
    /// The version key (`'v'`).
    pub key: Vec<u8>,
    /// The version stored before the write (None: the item never had one).
    pub stored: Option<ItemVersion>,
    /// The version the write stores.
    pub new: ItemVersion,
    /// A replicated change: its version is stored even when the item's
    /// image does not change, so every replica ends with the same one.
    pub replicated: bool,
}

impl ItemVersion {
    /// The stored form: µs (8 bytes, big-endian), a tombstone flag, the region.
    pub fn encode(&self, deleted: bool) -> Vec<u8> {
        let mut out = Vec::with_capacity(9 + self.origin.len());
        out.extend_from_slice(&self.micros.to_be_bytes());
        out.push(u8::from(deleted));
        out.extend_from_slice(self.origin.as_bytes());
        out
    }

    /// A stored version (and whether it is a tombstone).
    pub fn decode(bytes: &[u8]) -> Option<(ItemVersion, bool)> {
        let micros = u64::from_be_bytes(bytes.get(..8)?.try_into().ok()?);
        let deleted = *bytes.get(8)? == 1;
        let origin = String::from_utf8(bytes.get(9..)?.to_vec()).ok()?;
        Some((ItemVersion { micros, origin }, deleted))
    }
}

/// Item equality for "did anything change": sets compare as sets.
pub fn same_item(a: &ferrodyn_types::Item, b: &ferrodyn_types::Item) -> bool {
    a.len() == b.len()
        && a.iter()
            .all(|(k, v)| b.get(k).is_some_and(|w| v.dynamo_eq(w)))
}
