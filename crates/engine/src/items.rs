//! Single-item reads and writes: GetItem, and the one write path shared by
//! PutItem, UpdateItem and DeleteItem (read the current item, check the
//! condition, compute the new item, commit it with the table's statistics in
//! one atomic storage batch).
//!
//! Writers are serialised by the engine's write lock, so the read-check-write
//! sequence is atomic with respect to every other write; readers never take
//! the lock and see either the old or the new item, never a mix.

use crate::capacity::{read_units, write_units};
use crate::catalog::stats_key;
use crate::table::{Table, TableStats};
use crate::Engine;
use ferrodyn_expr::{Condition, Path, UpdateExpression};
use ferrodyn_storage::WriteOp;
use ferrodyn_types::{item_size, DynamoError, ErrorKind, Item, Result, MAX_ITEM_SIZE};

/// An item as stored: a 4-byte size header, then its DynamoDB JSON.
///
/// Keeping the JSON means GetItem without a projection can send the stored
/// bytes as they are; keeping the size means capacity needs no re-parse.
pub struct StoredItem {
    pub size: usize,
    pub json: Vec<u8>,
}

impl StoredItem {
    pub fn encode(item: &Item) -> Vec<u8> {
        let size = item_size(item) as u32;
        let mut out = Vec::with_capacity(64);
        out.extend_from_slice(&size.to_be_bytes());
        serde_json::to_writer(&mut out, item).expect("items always serialise");
        out
    }

    pub fn decode(mut bytes: Vec<u8>) -> Result<StoredItem> {
        if bytes.len() < 4 {
            return Err(DynamoError::internal("corrupt item record"));
        }
        let size = u32::from_be_bytes(bytes[..4].try_into().expect("4 bytes")) as usize;
        bytes.drain(..4);
        Ok(StoredItem { size, json: bytes })
    }

    pub fn parse(&self) -> Result<Item> {
        serde_json::from_slice(&self.json)
            .map_err(|e| DynamoError::internal(format!("corrupt item record: {e}")))
    }
}

/// What a write does to the item under its key.
pub enum Mutation<'a> {
    /// Replace the item (PutItem); the item carries its key.
    Put(Item),
    /// Apply an update expression, creating the item from its key if absent.
    Update(&'a UpdateExpression),
    /// Remove the item.
    Delete,
}

/// Everything a caller needs to build the response of a write.
pub struct WriteOutcome {
    pub old: Option<Item>,
    pub new: Option<Item>,
    /// Paths an update touched, for ReturnValues UPDATED_OLD / UPDATED_NEW.
    pub updated_paths: Vec<Path>,
    pub write_units: f64,
}

/// A failed condition, carrying the current item for
/// ReturnValuesOnConditionCheckFailure=ALL_OLD.
pub fn condition_failed(old: Option<&Item>, return_old: bool) -> DynamoError {
    let error = DynamoError::new(
        ErrorKind::ConditionalCheckFailed,
        "The conditional request failed",
    );
    match old {
        Some(item) if return_old => error.with_field(
            "Item",
            serde_json::to_value(item).expect("items always serialise"),
        ),
        _ => error,
    }
}

impl Engine {
    /// Reads one item by its (validated) key.
    pub fn get_item(&self, table: &Table, key: &Item) -> Result<Option<StoredItem>> {
        let storage_key = table.schema.encode(table.id, key);
        match self
            .storage
            .get(&storage_key)
            .map_err(crate::storage_error)?
        {
            Some(bytes) => Ok(Some(StoredItem::decode(bytes)?)),
            None => Ok(None),
        }
    }

    /// Read units a GetItem of an item of this size costs.
    pub fn get_item_units(size: Option<usize>, consistent: bool) -> f64 {
        read_units(size.unwrap_or(0), consistent)
    }

    /// Conditionally writes one item. `key` must already be validated against
    /// the table's schema (for a Put it is extracted from the item).
    pub fn write_item(
        &self,
        table: &Table,
        key: &Item,
        mutation: Mutation<'_>,
        condition: Option<&Condition>,
        return_old_on_failure: bool,
    ) -> Result<WriteOutcome> {
        let storage_key = table.schema.encode(table.id, key);
        let _guard = self.write_lock.lock();
        // The table may have been deleted while we waited for the lock.
        if self
            .tables
            .read()
            .get(&table.name)
            .is_none_or(|t| t.id != table.id)
        {
            return Err(DynamoError::resource_not_found(
                "Requested resource not found",
            ));
        }
        let old = match self
            .storage
            .get(&storage_key)
            .map_err(crate::storage_error)?
        {
            Some(bytes) => Some(StoredItem::decode(bytes)?.parse()?),
            None => None,
        };
        if let Some(condition) = condition {
            if !condition.evaluate(old.as_ref())? {
                return Err(condition_failed(old.as_ref(), return_old_on_failure));
            }
        }
        let mut updated_paths = Vec::new();
        let new = match mutation {
            Mutation::Put(item) => Some(item),
            Mutation::Delete => None,
            Mutation::Update(update) => {
                let mut item = old.clone().unwrap_or_else(|| key.clone());
                updated_paths = update.apply(&mut item)?;
                Some(item)
            }
        };
        let old_size = old.as_ref().map_or(0, item_size);
        let new_size = new.as_ref().map_or(0, item_size);
        if new_size > MAX_ITEM_SIZE {
            let message = if updated_paths.is_empty() {
                "Item size has exceeded the maximum allowed size"
            } else {
                "Item size to update has exceeded the maximum allowed size"
            };
            return Err(DynamoError::validation(message));
        }
        let delta = TableStats {
            item_count: i64::from(new.is_some()) - i64::from(old.is_some()),
            size_bytes: new_size as i64 - old_size as i64,
        };
        let mut ops = Vec::with_capacity(2);
        match &new {
            Some(item) => ops.push(WriteOp::Put(storage_key, StoredItem::encode(item))),
            None if old.is_some() => ops.push(WriteOp::Delete(storage_key)),
            None => {}
        }
        if !ops.is_empty() {
            let stats = table.stats().plus(delta);
            ops.push(WriteOp::Put(
                stats_key(table.id),
                serde_json::to_vec(&stats).expect("stats serialise"),
            ));
            self.storage.write(ops).map_err(crate::storage_error)?;
            table.apply_stats_delta(delta);
        }
        Ok(WriteOutcome {
            write_units: write_units(old_size.max(new_size)),
            old,
            new,
            updated_paths,
        })
    }
}

/// Rejects an item over DynamoDB's 400 KB limit before any work is done.
pub fn check_item_size(item: &Item) -> Result<()> {
    if item_size(item) > MAX_ITEM_SIZE {
        return Err(DynamoError::validation(
            "Item size has exceeded the maximum allowed size",
        ));
    }
    Ok(())
}
