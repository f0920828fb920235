//! The multi-item operations through the front door: BatchWriteItem
//! (admitted writes committed, the rest left for the caller to retry),
//! TransactGetItems and TransactWriteItems (twice the units of the same
//! plain reads and writes, ClientRequestToken idempotency).

use super::Api;
use crate::capacity::read_units;
use crate::idempotency::Claim;
use crate::items::{Mutation, PlannedWrite, StoredItem};
use crate::table::Table;
use crate::throughput::Capacity;
use crate::transactions::TransactWrite;
use ferrodyn_types::{DynamoError, Item, Result};
use std::sync::Arc;

/// BatchWriteItem's answer.
pub struct BatchWriteOutput {
    /// The committed writes (charged), in request order.
    pub planned: Vec<PlannedWrite>,
    /// Positions, in the request, of the writes left unprocessed.
    pub unprocessed: Vec<usize>,
}

/// TransactWriteItems' answer, with the units per table (charged).
pub enum TransactWriteOutput {
    /// A retry of a completed request: nothing written; DynamoDB reports
    /// the original units as read capacity.
    Replayed { units: Vec<(String, f64)> },
    Committed {
        writes: Vec<PlannedWrite>,
        units: Vec<(String, f64)>,
    },
}

/// One table's part of a BatchGetItem.
pub struct BatchGetTable {
    pub table: Arc<Table>,
    /// The items found, in key order.
    pub found: Vec<StoredItem>,
    /// Positions of the keys left unprocessed.
    pub left: Vec<usize>,
    /// Keys read (found or not).
    pub processed: usize,
    /// Whether a key was left for want of read capacity.
    pub throttled: bool,
    /// The first refusal by a key's partition (partition limits): the
    /// answer when no key of the request could be read.
    pub refusal: Option<DynamoError>,
    /// The units the reads cost (charged).
    pub units: f64,
}

/// TransactGetItems' answer, with the units per table (charged).
pub struct TransactGetOutput {
    pub found: Vec<Option<StoredItem>>,
    pub units: Vec<(String, f64)>,
}

impl Api<'_> {
    /// One table of a BatchGetItem: the table (it must exist), its keys
    /// checked against its schema and unique, then read while the table has
    /// read capacity and the response stays under `max_bytes` (counted in
    /// `response_bytes` across tables); keys past either, and keys `leave`
    /// picks, are left for the caller to retry.
    pub fn batch_get_table(
        &self,
        table_name: &str,
        keys: &[Item],
        consistent: bool,
        (response_bytes, max_bytes): (&mut usize, usize),
        mut leave: impl FnMut() -> bool,
    ) -> Result<BatchGetTable> {
        let table = self.engine.table_for_items(table_name)?;
        if consistent {
            self.engine.read_barrier(&table)?; // MRSC (replication/strong.rs)
        }
        let mut seen: Vec<Vec<u8>> = Vec::with_capacity(keys.len());
        for key in keys {
            table.schema.validate_key(key)?;
            let encoded = table.schema.encode(table.id, key);
            if seen.contains(&encoded) {
                return Err(DynamoError::validation(
                    "Provided list of item keys contains duplicates",
                ));
            }
            seen.push(encoded);
        }
        let mut out = BatchGetTable {
            table: Arc::clone(&table),
            found: Vec::new(),
            left: Vec::new(),
            processed: 0,
            throttled: false,
            refusal: None,
            units: 0.0,
        };
        for (position, key) in keys.iter().enumerate() {
            let full = *response_bytes >= max_bytes;
            let capacity = !full && table.throughput.has_capacity(Capacity::Read);
            let refused = capacity
                .then(|| self.engine.admit_key(&table, key, Capacity::Read).err())
                .flatten();
            if !full && !capacity {
                self.engine.count_throttled(&table, key);
            }
            if full || !capacity || refused.is_some() || leave() {
                out.throttled |= !full && (!capacity || refused.is_some());
                out.refusal = out.refusal.take().or(refused);
                out.left.push(position);
                continue;
            }
            let stored = self.engine.get_item(&table, key)?;
            let units = read_units(stored.as_ref().map_or(0, |s| s.size), consistent);
            self.engine.charge_key_read(&table, key, units);
            out.units += units;
            out.processed += 1;
            if let Some(stored) = stored {
                *response_bytes += stored.json.len();
                out.found.push(stored);
            }
        }
        table.charge(Capacity::Read, out.units);
        Ok(out)
    }

    /// BatchWriteItem: writes whose table (or a GSI of it) has no write
    /// capacity now, and writes `leave` picks, are left unprocessed; when
    /// none is admitted because of capacity, the whole call is throttled.
    /// On shared storage, writes still meeting other nodes' writers after
    /// the engine's retries are left unprocessed too: DynamoDB returns
    /// writes it could not do for internal reasons in UnprocessedItems,
    /// which every SDK's batch loop retries (embedded storage never
    /// conflicts here: a batch waits for the items it needs).
    pub fn batch_write_item(
        &self,
        writes: Vec<(Arc<Table>, Item, Mutation<'_>)>,
        mut leave: impl FnMut(&Table) -> bool,
    ) -> Result<BatchWriteOutput> {
        let total = writes.len();
        let mut unprocessed = Vec::new();
        let mut admitted = Vec::with_capacity(total);
        let mut throttled = false;
        let mut refusal = None;
        for (position, (table, key, mutation)) in writes.into_iter().enumerate() {
            let no_capacity = !table.has_write_capacity();
            let refused = (!no_capacity)
                .then(|| self.engine.admit_key(&table, &key, Capacity::Write).err())
                .flatten();
            throttled |= no_capacity || refused.is_some();
            if no_capacity {
                self.engine.count_throttled(&table, &key);
            }
            if no_capacity || refused.is_some() || leave(&table) {
                refusal = refusal.or(refused);
                unprocessed.push(position);
            } else {
                admitted.push((position, (table, key, mutation)));
            }
        }
        if admitted.is_empty() && throttled {
            return Err(refusal.unwrap_or_else(crate::throughput::exceeded));
        }
        let (positions, admitted): (Vec<usize>, Vec<_>) = admitted.into_iter().unzip();
        let planned = match self.engine.batch_write_admitting(admitted) {
            // Every write was either left out above or admitted and failed.
            Err(crate::error::EngineError::Conflict) => {
                unprocessed = (0..total).collect();
                Vec::new()
            }
            other => {
                let (planned, refused) = other?;
                if planned.is_empty() && !refused.is_empty() {
                    // Nothing done, every write refused by a global index's partition.
                    return Err(refused.into_iter().next().expect("one").1);
                }
                unprocessed.extend(refused.into_iter().map(|(at, _)| positions[at]));
                unprocessed.sort_unstable();
                planned
            }
        };
        for write in &planned {
            write
                .table
                .charge_write(write.write_units, &write.index_units());
            self.engine.charge_write_partitions(write, 1.0);
        }
        Ok(BatchWriteOutput {
            planned,
            unprocessed,
        })
    }

    /// TransactGetItems: every table's read capacity, then one consistent
    /// snapshot of the items. Each Get costs twice a strongly consistent
    /// read, a missing item too.
    pub fn transact_get_items(&self, gets: &[(Arc<Table>, Item)]) -> Result<TransactGetOutput> {
        for (table, _) in gets {
            self.engine.check_not_strong(table, "TransactGetItems")?;
        }
        for (table, key) in gets {
            if let Err(refused) = table.throughput.admit(Capacity::Read) {
                self.engine.count_throttled(table, key);
                return Err(refused);
            }
            self.engine.admit_key(table, key, Capacity::Read)?;
        }
        let found = self.engine.transact_get(gets)?;
        let mut units: Vec<(String, f64)> = Vec::new();
        for ((table, key), stored) in gets.iter().zip(&found) {
            let cost = 2.0 * read_units(stored.as_ref().map_or(0, |s| s.size), true);
            self.engine.charge_key_read(table, key, cost);
            add_units(&mut units, &table.name, cost);
        }
        for (name, total) in &units {
            if let Some((table, _)) = gets.iter().find(|(t, _)| t.name == *name) {
                table.charge(Capacity::Read, *total);
            }
        }
        Ok(TransactGetOutput { found, units })
    }

    /// TransactWriteItems. With a token (and the request's fingerprint), a
    /// retry of a completed request is answered without writing;
    /// `before_commit` may still fail the request (the server's fault
    /// injection). Each action then needs its table's write capacity (else
    /// that action's ProvisionedThroughputExceeded reason); the actions
    /// commit together or not at all, at twice the units of plain writes.
    /// A failed request frees its token for a retry. `hold` keeps the
    /// items locked that long before committing (fault injection: a wider
    /// window for conflicts).
    pub fn transact_write_items<'a>(
        &self,
        actions: Vec<Result<TransactWrite<'a>>>,
        token: Option<(&str, u64)>,
        before_commit: impl FnOnce() -> Result<()>,
        hold: Option<std::time::Duration>,
    ) -> Result<TransactWriteOutput> {
        for action in actions.iter().flatten() {
            (self.engine).check_not_strong(&action.table, "TransactWriteItems")?;
        }
        if let Some((token, fingerprint)) = token {
            if let Claim::Replay(units) = self.engine.tokens.claim(token, fingerprint)? {
                return Ok(TransactWriteOutput::Replayed { units });
            }
        }
        let release = || {
            if let Some((token, _)) = token {
                self.engine.tokens.release(token);
            }
        };
        if let Err(error) = before_commit() {
            release();
            return Err(error);
        }
        let actions = actions
            .into_iter()
            .map(|action| {
                let action = action?;
                if let Err(refused) = action.table.admit_write() {
                    self.engine.count_throttled(&action.table, &action.key);
                    return Err(refused);
                }
                self.engine
                    .admit_key(&action.table, &action.key, Capacity::Write)?;
                Ok(action)
            })
            .collect();
        let writes = match self.engine.transact_write_holding(actions, hold) {
            Ok(writes) => writes,
            Err(error) => {
                release();
                return Err(error);
            }
        };
        let mut units: Vec<(String, f64)> = Vec::new();
        for write in &writes {
            add_units(&mut units, &write.table.name, 2.0 * write.write_units);
        }
        for write in &writes {
            write
                .table
                .charge_write(2.0 * write.write_units, &write.index_units());
            self.engine.charge_write_partitions(write, 2.0);
        }
        if let Some((token, _)) = token {
            self.engine.tokens.complete(token, units.clone());
        }
        Ok(TransactWriteOutput::Committed { writes, units })
    }
}

/// Adds `cost` to the units of table `name`, keeping first-seen order.
fn add_units(units: &mut Vec<(String, f64)>, name: &str, cost: f64) {
    match units.iter_mut().find(|(t, _)| t == name) {
        Some((_, total)) => *total += cost,
        None => units.push((name.to_string(), cost)),
    }
}
