//! Capacity units, computed by DynamoDB's documented rules: a write costs one
//! unit per started KB of the larger of the old and new item (at least one); a
//! strongly consistent read costs one unit per started 4 KB (at least one), and
//! an eventually consistent read half that.

use crate::index::IndexKind;
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

/// Units consumed by one request on one table.
#[derive(Clone, Debug, PartialEq)]
pub struct Consumed {
    pub table: String,
    pub read: f64,
    pub write: f64,
    /// Write units spent on secondary indexes, by index.
    pub indexes: Vec<(String, IndexKind, f64)>,
}

impl Consumed {
    pub fn read(table: &str, units: f64) -> Consumed {
        Consumed {
            table: table.to_string(),
            read: units,
            write: 0.0,
            indexes: Vec::new(),
        }
    }

    pub fn write(table: &str, units: f64) -> Consumed {
        Consumed {
            table: table.to_string(),
            read: 0.0,
            write: units,
            indexes: Vec::new(),
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

    /// The ConsumedCapacity object, or None when it was not asked for.
    /// TOTAL counts the table and its indexes; INDEXES also breaks them down.
    pub fn to_json(&self, detail: CapacityDetail) -> Option<Value> {
        let index_total: f64 = self.indexes.iter().map(|(_, _, u)| u).sum();
        let total = self.read + self.write + index_total;
        let mut out = json!({ "TableName": self.table, "CapacityUnits": total });
        let object = out.as_object_mut().expect("object literal");
        if self.read > 0.0 {
            object.insert("ReadCapacityUnits".into(), json!(self.read));
        }
        if self.write > 0.0 {
            object.insert("WriteCapacityUnits".into(), json!(self.write));
        }
        match detail {
            CapacityDetail::None => return None,
            CapacityDetail::Total => {}
            CapacityDetail::Indexes => {
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
                                json!({ "CapacityUnits": units, "WriteCapacityUnits": units }),
                            )
                        })
                        .collect();
                    if !shown.is_empty() {
                        object.insert(field.into(), Value::Object(shown));
                    }
                }
                let table_total = self.read + self.write;
                let mut table = json!({ "CapacityUnits": table_total });
                if self.read > 0.0 {
                    table["ReadCapacityUnits"] = json!(self.read);
                }
                if self.write > 0.0 {
                    table["WriteCapacityUnits"] = json!(self.write);
                }
                object.insert("Table".into(), table);
            }
        }
        Some(out)
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
}
