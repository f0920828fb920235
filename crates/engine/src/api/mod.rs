//! The engine's front door for item operations: one method per DynamoDB
//! operation (GetItem, PutItem/UpdateItem/DeleteItem, Query, Scan,
//! BatchGetItem (per table), BatchWriteItem, TransactGetItems, TransactWriteItems), each taking the
//! checked request in typed form and doing everything between it and the
//! answer: provisioned-throughput admission, the read or write, capacity
//! charging (throughput buckets and usage accounting), idempotency tokens.
//! The server's operations decode the wire request, call one of these, and
//! encode what comes back; they never admit or charge themselves.
//!
//! The methods call the engine's internal paths (`items.rs` write_item,
//! `transactions.rs` transact_write/transact_get/batch_write, `read.rs`
//! pages) without changing them. Table operations (create, describe,
//! update, delete, indexes, tags, TTL) are the catalog's methods on
//! [`Engine`] already, and table metadata changes only through them.

mod multi;
mod pages;

pub use multi::{BatchGetTable, BatchWriteOutput, TransactGetOutput, TransactWriteOutput};
pub use pages::{PageOutput, PageRead};

use crate::capacity::{read_units, Consumed};
use crate::items::{Mutation, StoredItem, WriteOutcome};
use crate::table::Table;
use crate::throughput::Capacity;
use crate::Engine;
use ferrodyn_expr::Condition;
use ferrodyn_types::{Item, Result};
use std::sync::Arc;

/// The front door: borrowed from [`Engine::api`].
pub struct Api<'e> {
    engine: &'e Engine,
}

impl Engine {
    /// The engine's per-operation API.
    pub fn api(&self) -> Api<'_> {
        Api { engine: self }
    }
}

/// GetItem's answer: the stored item (if any), its table, and the units
/// the read cost (already charged).
pub struct GetItemOutput {
    pub table: Arc<Table>,
    pub item: Option<StoredItem>,
    pub consumed: Consumed,
}

/// One checked single-item write (PutItem, UpdateItem or DeleteItem).
pub struct SingleWrite<'a> {
    pub table: &'a Arc<Table>,
    /// The item's key, validated against the table's schema.
    pub key: &'a Item,
    pub mutation: Mutation<'a>,
    pub condition: Option<&'a Condition>,
    /// ReturnValuesOnConditionCheckFailure ALL_OLD.
    pub return_old_on_failure: bool,
}

/// A single write's answer: what the write did and what it cost (charged).
pub struct SingleWriteOutput {
    pub outcome: WriteOutcome,
    pub consumed: Consumed,
}

impl Api<'_> {
    /// GetItem: the table (it must exist and be usable), the key checked
    /// against its schema, the table's read capacity, the read, its units.
    pub fn get_item(
        &self,
        table_name: &str,
        key: &Item,
        consistent: bool,
    ) -> Result<GetItemOutput> {
        let table = self.engine.table_for_items(table_name)?;
        table.schema.validate_key(key)?;
        if let Err(refused) = table.throughput.admit(Capacity::Read) {
            self.engine.count_throttled(&table, key);
            return Err(refused);
        }
        self.engine.admit_key(&table, key, Capacity::Read)?;
        if consistent {
            self.engine.read_barrier(&table)?; // MRSC (replication/strong.rs)
        }
        let item = self.engine.get_item(&table, key)?;
        let units = read_units(item.as_ref().map_or(0, |s| s.size), consistent);
        table.charge(Capacity::Read, units);
        self.engine.charge_key_read(&table, key, units);
        let consumed = Consumed::read(&table.name, units);
        Ok(GetItemOutput {
            table,
            item,
            consumed,
        })
    }

    /// PutItem, UpdateItem or DeleteItem (by the write's mutation): the
    /// table's and its GSIs' write capacity, the conditional write, its
    /// units charged to the table and to each GSI.
    pub fn write_item(&self, write: SingleWrite<'_>) -> Result<SingleWriteOutput> {
        let table = write.table;
        if let Err(refused) = table.admit_write() {
            self.engine.count_throttled(table, write.key);
            return Err(refused);
        }
        // Partition limits: the item's partition here, its global index
        // partitions between planning and commit (items.rs), which also
        // charges them.
        self.engine.admit_key(table, write.key, Capacity::Write)?;
        let outcome = self.engine.write_item(
            table,
            write.key,
            write.mutation,
            write.condition,
            write.return_old_on_failure,
        )?;
        let consumed = Consumed::write(&table.name, outcome.write_units)
            .with_indexes(outcome.index_units.clone())
            .with_vectors(outcome.vector_units.clone());
        table.charge_write(consumed.write, &consumed.indexes);
        Ok(SingleWriteOutput { outcome, consumed })
    }
}
