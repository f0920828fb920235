//! Capacity units, computed by DynamoDB's documented rules: a write costs one
//! unit per started KB of the larger of the old and new item (at least one); a
//! strongly consistent read costs one unit per started 4 KB (at least one), and
//! an eventually consistent read half that.

use crate::shared::IndexKind;
use serde_json::{json, Value};

const WRITE_UNIT_BYTES: usize = 1024;
const READ_UNIT_BYTES: usize = 4096;

/// What the request's ReturnConsumedCapacity asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CapacityDetail {
    #[default]
    None,
    Total,
    Indexes,
}

impl CapacityDetail {
    pub fn parse(text: Option<&str>) -> Option<CapacityDetail> {
        match text {
            None | Some("NONE") => Some(CapacityDetail::None),
            Some("TOTAL") => Some(CapacityDetail::Total),
            Some("INDEXES") => Some(CapacityDetail::Indexes),
            Some(_) => None,
        }
    }
}

pub fn write_units(item_bytes: usize) -> f64 {
    item_bytes.div_ceil(WRITE_UNIT_BYTES).max(1) as f64
}

pub fn read_units(item_bytes: usize, consistent: bool) -> f64 {
    let units = item_bytes.div_ceil(READ_UNIT_BYTES).max(1) as f64;
    if consistent {
        units
    } else {
        units / 2.0
    }
}

/// How many storage partitions DynamoDB spreads a table's partition-key hash
/// space over, as far as Scan's capacity shows: a Scan is charged per
/// partition it reads, each rounded up separately, so a full Scan of a table
/// holding one tiny item costs 4 units (2 eventually consistent) on AWS, and a
/// 1 MB page that crosses a partition boundary costs 257 (128.5).
pub const SCAN_PARTITIONS: u32 = 4;

/// The read units of a Scan page that read `item_bytes` between partition-key
/// hashes `first` and `last` (inclusive): one started 4 KB for the data, plus
/// the rounding each further partition touched adds.
pub fn scan_units(item_bytes: usize, consistent: bool, first: u64, last: u64) -> f64 {
    let partition = |hash: u64| hash / (u64::MAX / u64::from(SCAN_PARTITIONS) + 1);
    let touched = partition(last).saturating_sub(partition(first)) + 1;
    let units = (item_bytes.div_ceil(READ_UNIT_BYTES).max(1) as u64 + touched - 1) as f64;
    if consistent {
        units
    } else {
        units / 2.0
    }
}

/// Units consumed by one request on one table.
#[derive(Clone, Debug, PartialEq)]
pub struct Consumed {
    pub table: String,
    pub read: f64,
    pub write: f64,
    /// Units spent on secondary indexes, by index: write units for writes,
    /// read units for a Query or Scan of an index (see `index_reads`).
    pub indexes: Vec<(String, IndexKind, f64)>,
    /// Whether `indexes` holds read units (a read of an index) or write units.
    pub index_reads: bool,
    /// VectorWriteRequestBytes a write spent on each vector index (shown
    /// under "VectorIndexes" with INDEXES).
    pub vectors: Vec<(String, f64)>,
}

impl Consumed {
    pub fn read(table: &str, units: f64) -> Consumed {
        Consumed {
            table: table.to_string(),
            read: units,
            write: 0.0,
            indexes: Vec::new(),
            index_reads: false,
            vectors: Vec::new(),
        }
    }

    pub fn write(table: &str, units: f64) -> Consumed {
        Consumed {
            table: table.to_string(),
            read: 0.0,
            write: units,
            indexes: Vec::new(),
            index_reads: false,
            vectors: Vec::new(),
        }
    }

    /// A Query or Scan of a secondary index: DynamoDB charges the index,
    /// not the table.
    pub fn index_read(table: &str, index: &str, kind: IndexKind, units: f64) -> Consumed {
        Consumed {
            table: table.to_string(),
            read: 0.0,
            write: 0.0,
            indexes: vec![(index.to_string(), kind, units)],
            index_reads: true,
            vectors: Vec::new(),
        }
    }

    /// Units spent on the table and its indexes together.
    pub fn total(&self) -> f64 {
        self.read + self.write + self.indexes.iter().map(|(_, _, u)| u).sum::<f64>()
    }

    /// Adds the units a write spent on secondary indexes.
    pub fn with_indexes(mut self, indexes: Vec<(String, IndexKind, f64)>) -> Consumed {
        self.indexes = indexes;
        self
    }

    /// Adds the VectorWriteRequestBytes a write spent on vector indexes.
    pub fn with_vectors(mut self, vectors: Vec<(String, f64)>) -> Consumed {
        self.vectors = vectors;
        self
    }

    /// Adds another request's units on the same table (batches and
    /// transactions report one entry per table).
    pub fn absorb(&mut self, other: &Consumed) {
        self.read += other.read;
        self.write += other.write;
        for (name, kind, units) in &other.indexes {
            match self.indexes.iter_mut().find(|(n, _, _)| n == name) {
                Some((_, _, total)) => *total += units,
                None => self.indexes.push((name.clone(), *kind, *units)),
            }
        }
        for (name, bytes) in &other.vectors {
            match self.vectors.iter_mut().find(|(n, _)| n == name) {
                Some((_, total)) => *total += bytes,
                None => self.vectors.push((name.clone(), *bytes)),
            }
        }
    }

    /// Sums per-request units into one entry per table, in first-seen order.
    pub fn per_table(all: impl IntoIterator<Item = Consumed>) -> Vec<Consumed> {
        let mut tables: Vec<Consumed> = Vec::new();
        for consumed in all {
            match tables.iter_mut().find(|t| t.table == consumed.table) {
                Some(entry) => entry.absorb(&consumed),
                None => tables.push(consumed),
            }
        }
        tables
    }

    /// The ConsumedCapacity object, or None when it was not asked for.
    /// TOTAL counts the table and its indexes; INDEXES also breaks them down.
    pub fn to_json(&self, detail: CapacityDetail) -> Option<Value> {
        if detail == CapacityDetail::None {
            return None;
        }
        let index_total: f64 = self.indexes.iter().map(|(_, _, u)| u).sum();
        let (reads, writes) = if self.index_reads {
            (self.read + index_total, self.write)
        } else {
            (self.read, self.write + index_total)
        };
        let mut out = json!({ "TableName": self.table, "CapacityUnits": self.total() });
        let object = out.as_object_mut().expect("object literal");
        if reads > 0.0 {
            object.insert("ReadCapacityUnits".into(), json!(reads));
        }
        if writes > 0.0 {
            object.insert("WriteCapacityUnits".into(), json!(writes));
        }
        if detail == CapacityDetail::Indexes {
            self.insert_breakdown(object);
        }
        Some(out)
    }

    /// INDEXES: the table's own units under "Table" and each index's under
    /// "GlobalSecondaryIndexes" / "LocalSecondaryIndexes".
    fn insert_breakdown(&self, object: &mut serde_json::Map<String, Value>) {
        let index_field = if self.index_reads {
            "ReadCapacityUnits"
        } else {
            "WriteCapacityUnits"
        };
        for (kind, field) in [
            (IndexKind::Global, "GlobalSecondaryIndexes"),
            (IndexKind::Local, "LocalSecondaryIndexes"),
        ] {
            let shown: serde_json::Map<String, Value> = self
                .indexes
                .iter()
                .filter(|(_, k, _)| *k == kind)
                .map(|(name, _, units)| {
                    (
                        name.clone(),
                        json!({ "CapacityUnits": units, index_field: units }),
                    )
                })
                .collect();
            if !shown.is_empty() {
                object.insert(field.into(), Value::Object(shown));
            }
        }
        if !self.vectors.is_empty() {
            let shown: serde_json::Map<String, Value> = (self.vectors.iter())
                .map(|(name, bytes)| (name.clone(), json!({ "VectorWriteRequestBytes": bytes })))
                .collect();
            object.insert("VectorIndexes".into(), Value::Object(shown));
        }
        let mut table = json!({ "CapacityUnits": self.read + self.write });
        if self.read > 0.0 {
            table["ReadCapacityUnits"] = json!(self.read);
        }
        if self.write > 0.0 {
            table["WriteCapacityUnits"] = json!(self.write);
        }
        object.insert("Table".into(), table);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_round_up_per_started_unit() {
        assert_eq!(write_units(0), 1.0);
        assert_eq!(write_units(1024), 1.0);
        assert_eq!(write_units(1025), 2.0);
        assert_eq!(read_units(4096, true), 1.0);
        assert_eq!(read_units(5 * 1024, true), 2.0);
        assert_eq!(read_units(5 * 1024, false), 1.0);
        assert_eq!(read_units(10, false), 0.5);
    }

    #[test]
    fn a_scan_pays_for_each_partition_it_reads() {
        assert_eq!(scan_units(10, true, 0, u64::MAX), 4.0);
        assert_eq!(scan_units(10, false, 0, u64::MAX), 2.0);
        // One segment of four: one partition.
        assert_eq!(scan_units(10, true, 0, u64::MAX / 4), 1.0);
        assert_eq!(
            scan_units(1024 * 1024, false, u64::MAX / 4, u64::MAX / 2),
            128.5
        );
    }
}
