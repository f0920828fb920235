//! Capacity actually consumed since the server started, per table and
//! operation: what `ferrodyn usage` reports (and prices), so a workload run
//! against Ferrodyn tells what it would cost on DynamoDB.
//!
//! Every operation charges its table's capacity in one place
//! ([`Table::charge`](crate::table::Table::charge)); the operation's name is
//! set for the current thread by the server's dispatcher (operations run
//! synchronously on one thread), so the ledger can file the units under it.

use crate::throughput::Capacity;
use parking_lot::Mutex;
use serde::Serialize;
use std::cell::Cell;
use std::collections::BTreeMap;

thread_local! {
    static OPERATION: Cell<&'static str> = const { Cell::new("Unknown") };
}

/// Runs `f` with `operation` as the thread's current operation.
pub fn with_operation<T>(operation: &'static str, f: impl FnOnce() -> T) -> T {
    let previous = OPERATION.with(|o| o.replace(operation));
    let result = f();
    OPERATION.with(|o| o.set(previous));
    result
}

/// Units one operation consumed on one table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Usage {
    pub read_capacity_units: f64,
    pub write_capacity_units: f64,
}

/// Units by operation name, for one table.
#[derive(Default)]
pub struct UsageLedger {
    by_operation: Mutex<BTreeMap<&'static str, Usage>>,
}

impl UsageLedger {
    /// Files `units` under the thread's current operation.
    pub fn record(&self, kind: Capacity, units: f64) {
        let operation = OPERATION.with(Cell::get);
        let mut map = self.by_operation.lock();
        let usage = map.entry(operation).or_default();
        match kind {
            Capacity::Read => usage.read_capacity_units += units,
            Capacity::Write => usage.write_capacity_units += units,
        }
    }

    pub fn snapshot(&self) -> Vec<(&'static str, Usage)> {
        self.by_operation
            .lock()
            .iter()
            .map(|(op, usage)| (*op, *usage))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_filed_under_the_current_operation() {
        let ledger = UsageLedger::default();
        with_operation("PutItem", || ledger.record(Capacity::Write, 2.0));
        with_operation("PutItem", || ledger.record(Capacity::Write, 1.0));
        with_operation("GetItem", || ledger.record(Capacity::Read, 0.5));
        let snapshot = ledger.snapshot();
        assert_eq!(snapshot.len(), 2);
        assert_eq!(
            snapshot[0],
            (
                "GetItem",
                Usage {
                    read_capacity_units: 0.5,
                    write_capacity_units: 0.0
                }
            )
        );
        assert_eq!(snapshot[1].1.write_capacity_units, 3.0);
    }
}

/// Requests served, by operation name.
#[derive(Default)]
pub struct RequestCounter {
    by_operation: Mutex<BTreeMap<&'static str, u64>>,
}

impl RequestCounter {
    pub fn count(&self, operation: &'static str) {
        *self.by_operation.lock().entry(operation).or_default() += 1;
    }

    pub fn snapshot(&self) -> BTreeMap<&'static str, u64> {
        self.by_operation.lock().clone()
    }
}

impl crate::Engine {
    /// The usage report `GET /ferrodyn/usage` serves: requests by operation
    /// and, for each live table, the units each operation consumed.
    pub fn usage_report(&self) -> serde_json::Value {
        let mut tables: Vec<serde_json::Value> = Vec::new();
        let mut live: Vec<_> = self.tables.read().values().cloned().collect();
        live.sort_by(|a, b| a.name.cmp(&b.name));
        for table in live {
            for (operation, usage) in table.usage.snapshot() {
                tables.push(serde_json::json!({
                    "TableName": table.name,
                    "Operation": operation,
                    "ReadCapacityUnits": usage.read_capacity_units,
                    "WriteCapacityUnits": usage.write_capacity_units,
                }));
            }
        }
        serde_json::json!({
            "Since": self.started,
            "Requests": self.requests.snapshot(),
            "Consumed": tables,
            "ChangeLogs": self.change_log_sizes(),
            "Replication": self.replication_latencies(),
        })
    }

    /// The change log each table with recovery or a stream keeps on disk
    /// (records and their bytes, keys included): what point-in-time
    /// recovery's history costs. Counted by reading the log, so only on
    /// request.
    fn change_log_sizes(&self) -> Vec<serde_json::Value> {
        let mut logs = Vec::new();
        let mut live: Vec<_> = self.tables.read().values().cloned().collect();
        live.sort_by(|a, b| a.name.cmp(&b.name));
        for table in live {
            let Ok((records, bytes)) = self.change_log_size(table.id) else {
                continue;
            };
            if records > 0 {
                logs.push(serde_json::json!({
                    "TableName": table.name,
                    "Records": records,
                    "Bytes": bytes,
                }));
            }
        }
        logs
    }
}
