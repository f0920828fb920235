//! Time to Live: a table may name a number attribute holding an expiry time
//! (seconds since the epoch); items past it are deleted by a background
//! sweeper, each deletion committed like any other (indexes updated, a
//! stream REMOVE record written with DynamoDB's service identity).
//!
//! As in DynamoDB, values more than five years in the past are ignored
//! (they are usually milliseconds or mistakes), as are non-numbers.

use crate::items::{Mutation, StoredItem};
use crate::keyspace::table_items;
use crate::locks::{Holder, LockKey};
use crate::read::Walk;
use crate::streams::ChangeSource;
use crate::table::Table;
use crate::Engine;
use ferrodyn_types::{AttributeValue, DynamoError, Item, Result};
use std::sync::Arc;
use std::time::Duration;

/// Items examined per sweep step (their locks held together).
const SWEEP_CHUNK: usize = 256;
/// Expiry times older than this are ignored.
const IGNORED_AFTER_SECONDS: f64 = 5.0 * 365.0 * 86_400.0;

impl Engine {
    /// UpdateTimeToLive: enables or disables expiry on `attribute`.
    pub fn update_ttl(&self, table_name: &str, enabled: bool, attribute: &str) -> Result<()> {
        let _guard = self.catalog_lock.lock();
        let table = self.table_to_change(table_name)?;
        if enabled {
            self.check_not_strong(&table, "Time to Live")?;
        }
        self.check_table_operations()?;
        // AWS's wording, as recorded live in 2026-10 (ack-api-quirks
        // DDB-TABLE-442): enabling again is "already enabled", naming another
        // attribute while enabled is "active on a different AttributeName".
        match (table.ttl_attribute(), enabled) {
            (Some(current), true) if current == attribute => {
                return Err(DynamoError::validation("TimeToLive is already enabled"))
            }
            (None, false) => return Err(DynamoError::validation("TimeToLive is already disabled")),
            (Some(current), _) if current != attribute => {
                return Err(DynamoError::validation(format!(
                    "TimeToLive is active on a different AttributeName: current AttributeName is {current}"
                )))
            }
            _ => {}
        }
        table.set_ttl_attribute(enabled.then(|| attribute.to_string()));
        Ok(self.save_catalog_record(&table)?)
    }

    /// DescribeTimeToLive: the attribute expiry is enabled on, if any.
    pub fn describe_ttl(&self, table_name: &str) -> Result<Option<String>> {
        Ok(self.table(table_name)?.ttl_attribute())
    }

    /// Starts the background sweeper that deletes expired items every
    /// `interval`.
    pub fn start_ttl_sweeper(self: &Arc<Self>, interval: Duration) {
        self.run_periodically("ferrodyn-ttl", interval, "TTL sweep", |engine| {
            if !engine.runs_background_work() {
                return Ok(()); // shared storage: the lease holder sweeps
            }
            let swept = engine.expire_items(engine.now_seconds()).map(drop);
            // SYSTEM backups expire by time too, and recovery's history
            // beyond its period goes (recovery.rs).
            if let Err(error) = engine.expire_backups(engine.now_seconds()) {
                eprintln!("ferrodyn: expiring backups failed: {error}");
            }
            if let Err(error) = engine.maintain_recovery(engine.now_seconds()) {
                eprintln!("ferrodyn: keeping recovery's history failed: {error}");
            }
            swept
        });
    }

    /// Deletes every item whose expiry time is before `now`; returns how
    /// many were deleted.
    pub fn expire_items(&self, now: f64) -> Result<usize> {
        let tables: Vec<Arc<Table>> = self.tables.read().values().cloned().collect();
        let mut deleted = 0;
        for table in tables {
            let Some(attribute) = table.ttl_attribute() else {
                continue;
            };
            deleted += self.expire_table(&table, &attribute, now)?;
        }
        Ok(deleted)
    }

    fn expire_table(&self, table: &Arc<Table>, attribute: &str, now: f64) -> Result<usize> {
        let mut deleted = 0;
        self.walk_prefix(&table_items(table.id), SWEEP_CHUNK, |chunk| {
            let mut candidates = Vec::new();
            for (_, value) in chunk {
                let item = StoredItem::decode(value.clone())?.parse()?;
                if expired(&item, attribute, now) {
                    candidates.push(table.schema.extract(&item));
                }
            }
            if candidates.is_empty() {
                return Ok(Walk::Continue);
            }
            let _writers = table.writers();
            let mut keys: Vec<LockKey> = Vec::with_capacity(candidates.len());
            for key in &candidates {
                self.push_write_keys(table, key, &mut keys);
            }
            let _held = self
                .locks
                .acquire(Holder::Batch, &keys)
                .expect("batch requests are never rejected");
            let storage_keys = keys.into_iter().filter(|k| k.item).map(|k| k.key);
            let mut planned = Vec::new();
            for (key, storage_key) in candidates.into_iter().zip(storage_keys) {
                // Re-check under the locks: the item may have changed.
                let Some(current) = self.get_stored(&storage_key)? else {
                    continue;
                };
                if expired(&current.parse()?, attribute, now) {
                    if planned.is_empty() {
                        self.check_table_live(table)?;
                    }
                    let delete = Mutation::Delete;
                    planned.push(self.plan_write(table, &key, storage_key, delete, None, false)?);
                }
            }
            deleted += planned.len();
            self.commit_from(&mut planned, ChangeSource::TimeToLive)?;
            Ok(Walk::Continue)
        })?;
        Ok(deleted)
    }
}

/// True if the item's expiry attribute is a number of seconds before `now`
/// (and not absurdly far in the past).
fn expired(item: &Item, attribute: &str, now: f64) -> bool {
    match item.get(attribute) {
        Some(AttributeValue::N(n)) => {
            let at = n.to_f64_lossy();
            at < now && at > now - IGNORED_AFTER_SECONDS
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrodyn_types::Number;

    #[test]
    fn expiry_follows_dynamodb_rules() {
        let mut item = Item::new();
        let now = 2_000_000_000.0;
        item.insert("exp".into(), AttributeValue::N(Number::from(1_999_999_000)));
        assert!(expired(&item, "exp", now));
        item.insert("exp".into(), AttributeValue::N(Number::from(2_000_000_500)));
        assert!(!expired(&item, "exp", now));
        // Milliseconds by mistake: far in the future, never expires.
        item.insert(
            "exp".into(),
            AttributeValue::N(Number::from(1_999_999_000_000)),
        );
        assert!(!expired(&item, "exp", now));
        // More than five years ago: ignored.
        item.insert("exp".into(), AttributeValue::N(Number::from(1_000)));
        assert!(!expired(&item, "exp", now));
        item.insert("exp".into(), AttributeValue::S("1".into()));
        assert!(!expired(&item, "exp", now));
    }
}
