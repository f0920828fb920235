//! A table's partitions as the console, the CLI and `GET
//! /ferrodyn/partitions` show them: the table's and its global indexes'
//! partitions (ranges, lineage, sizes), their heat while partition limits
//! are on (units and throttles per second and minute, partition_limits.rs),
//! and the stream's shards. Read-only: nothing here changes a table.

use crate::partition_limits::{PartitionLimits, Second};
use crate::shared::Partition;
use crate::table::Table;
use crate::Engine;
use ferrodyn_types::Result;
use serde::Serialize;
use std::collections::BTreeMap;

/// One partition's traffic, by the engine's clock.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionHeat {
    /// Units served in the last whole second.
    pub read_units_last_second: f64,
    pub write_units_last_second: f64,
    /// Units served in the last minute (whole seconds and the current one).
    pub read_units_last_minute: f64,
    pub write_units_last_minute: f64,
    /// Requests refused in the last minute, and since the partition began.
    pub throttles_last_minute: u64,
    pub throttles_total: u64,
}

/// One partition and what is known of it.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionEntry {
    pub id: u32,
    /// The first and last partition hash it holds, 16 hex digits.
    pub lo: String,
    pub hi: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<u32>,
    /// When it was made, epoch milliseconds (0: when the table began).
    pub created: u64,
    /// Items and bytes (table partitions only: measured by a scan).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub items: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// Present while partition limits are on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub heat: Option<PartitionHeat>,
}

/// One shard of the table's current stream.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ShardEntry {
    pub shard_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_shard_id: Option<String>,
    pub partition: u32,
    pub lo: String,
    pub hi: String,
    pub starting_sequence_number: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ending_sequence_number: Option<String>,
    pub open: bool,
    pub created: u64,
}

/// What `GET /ferrodyn/partitions?table=T` answers.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PartitionReport {
    pub table: String,
    pub partition_limits: bool,
    pub partitions: Vec<PartitionEntry>,
    /// Global secondary indexes' partitions, by index name.
    pub indexes: BTreeMap<String, Vec<PartitionEntry>>,
    /// The current stream's shards, parents before children (none without a stream).
    pub shards: Vec<ShardEntry>,
}

fn hex(hash: u64) -> String {
    format!("{hash:016x}")
}

fn entry(p: &Partition) -> PartitionEntry {
    PartitionEntry {
        id: p.id,
        lo: hex(p.lo),
        hi: hex(p.hi),
        parent: p.parent,
        created: p.created_ms,
        items: None,
        bytes: None,
        heat: None,
    }
}

/// Heat from one partition's counted seconds, as of clock second `now`.
fn heat_of(current: &Second, history: &[&Second], throttles_total: u64, now: u64) -> PartitionHeat {
    let mut heat = PartitionHeat {
        throttles_total,
        ..PartitionHeat::default()
    };
    for second in history.iter().copied().chain([current]) {
        if second.at + 60 <= now {
            continue;
        }
        heat.read_units_last_minute += second.units[0];
        heat.write_units_last_minute += second.units[1];
        heat.throttles_last_minute += second.throttles.iter().sum::<u64>();
        if second.at + 1 == now {
            heat.read_units_last_second = second.units[0];
            heat.write_units_last_second = second.units[1];
        }
    }
    heat
}

impl PartitionLimits {
    /// Heat per (global index id, partition id) of table `table_id`.
    fn heat_of_table(
        &self,
        table_id: u64,
        now_ms: u64,
    ) -> BTreeMap<(Option<u32>, u32), PartitionHeat> {
        let mut out = BTreeMap::new();
        self.each_of_table(table_id, now_ms, |index, partition, state| {
            let history: Vec<&Second> = state.history.iter().collect();
            let heat = heat_of(
                &state.current,
                &history,
                state.throttles_total,
                now_ms / 1000,
            );
            out.insert((index, partition), heat);
        });
        out
    }
}

impl Engine {
    /// The heat of each partition of `table` (empty while partition limits
    /// are off), keyed by global index name (None: the table) and partition
    /// id. A partition no request has reached yet has none.
    pub fn partition_heat(&self, table: &Table) -> BTreeMap<(Option<String>, u32), PartitionHeat> {
        if !self.partition_limits.on {
            return BTreeMap::new();
        }
        let heat = (self.partition_limits).heat_of_table(table.id, self.clock.now_millis());
        let indexes = table.indexes();
        let name = |id: u32| indexes.iter().find(|i| i.id == id).map(|i| i.name.clone());
        heat.into_iter()
            .filter_map(|((index, partition), heat)| match index {
                None => Some(((None, partition), heat)),
                Some(id) => name(id).map(|n| ((Some(n), partition), heat)),
            })
            .collect()
    }

    /// Table `name`'s partitions, sizes, heat and stream shards.
    pub fn partition_report(&self, name: &str) -> Result<PartitionReport> {
        let table = self.table_for_items(name)?;
        let map = table.partitions();
        let mut heat = self.partition_heat(&table);
        let limits = self.partition_limits.on;
        let mut partitions = Vec::with_capacity(map.table.len());
        for (partition, size) in self.partition_sizes(&table)? {
            let mut e = entry(&partition);
            (e.items, e.bytes) = (Some(size.items), Some(size.bytes));
            e.heat = limits.then(|| heat.remove(&(None, partition.id)).unwrap_or_default());
            partitions.push(e);
        }
        let mut indexes = BTreeMap::new();
        for (index, list) in &map.indexes {
            let entries = (list.iter())
                .map(|p| PartitionEntry {
                    heat: limits
                        .then(|| (heat.remove(&(Some(index.clone()), p.id))).unwrap_or_default()),
                    ..entry(p)
                })
                .collect();
            indexes.insert(index.clone(), entries);
        }
        Ok(PartitionReport {
            table: table.name.clone(),
            partition_limits: limits,
            partitions,
            indexes,
            shards: shards_of(&table),
        })
    }
}

fn shards_of(table: &Table) -> Vec<ShardEntry> {
    let Some(stream) = table.current_stream() else {
        return Vec::new();
    };
    (stream.shards().into_iter())
        .map(|s| ShardEntry {
            open: s.is_open(),
            starting_sequence_number: crate::streams::format_sequence(s.start_seq),
            ending_sequence_number: s.end_seq.map(crate::streams::format_sequence),
            lo: hex(s.lo),
            hi: hex(s.hi),
            partition: s.partition,
            parent_shard_id: s.parent,
            shard_id: s.id,
            created: s.created_ms,
        })
        .collect()
}
