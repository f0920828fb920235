//! Settings the replicas of a global table share: a change made through
//! one replica (Time to Live, billing mode and write capacity, a global
//! index created or deleted) is made in every other region too, as
//! DynamoDB does for version 2019.11.21, unless the group's
//! GlobalTableSettingsReplicationMode is DISABLED (2017.11.29 groups share
//! none: UpdateGlobalTableSettings sets theirs, settings.rs). Read capacity stays each
//! replica's own (ProvisionedThroughputOverride), as do deletion
//! protection and the table class.
//!
//! The server's operations call [`Engine::share_setting`] once their change
//! is made here; each other region applies it through the same engine call
//! ([`Message::ShareSetting`]), which shares nothing further. A region that
//! cannot apply it now (down, cut off, or refusing) gets it later: the
//! change waits in a durable outbox per region (`'k' | table id |
//! settings/<region>/<number>`), which the replication thread delivers in
//! order, at most once every [`RETRY_EVERY`] per region, beside the data
//! (a setting that keeps failing never holds the items back; the report
//! shows it). While a region's outbox is not empty, new changes for it
//! queue behind, so every region applies a table's changes in the order
//! they were made.

use super::settings::TableSettings;
use super::{address_in, Message};
use crate::keyspace;
use crate::schema::{AttributeDefinition, IndexDescription};
use crate::table::Table;
use crate::Engine;
use ferrodyn_storage::WriteOp;
use ferrodyn_types::Result;
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::ops::Bound;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The least time between two deliveries of one region's outbox.
const RETRY_EVERY: Duration = Duration::from_secs(1);

/// One region's outbox as last tried: when, and why its first change
/// failed then (None: all delivered).
type Tried = (Instant, Option<String>);

/// Per (table id, region): the outbox as last tried.
#[derive(Default)]
pub(crate) struct OutboxState {
    tried: Mutex<HashMap<(u64, String), Tried>>,
}

/// One shared setting change.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "Kind")]
pub enum SettingChange {
    TimeToLive {
        enabled: bool,
        attribute: String,
    },
    /// A billing mode and, for PROVISIONED, the write units (with
    /// `keeps_read_units`: each replica keeps its read units, or takes
    /// these where it has none); applied by settings.rs, which
    /// UpdateGlobalTableSettings sends through this change too.
    Capacity(TableSettings),
    CreateIndex {
        index: Box<IndexDescription>,
        definitions: Vec<AttributeDefinition>,
    },
    DeleteIndex {
        name: String,
    },
}

impl Engine {
    /// Makes `change`, made here on table `name`, in the group's other
    /// regions; returns the regions that could not make it, with why.
    pub fn share_setting(
        self: &Arc<Self>,
        name: &str,
        change: SettingChange,
    ) -> Vec<(String, String)> {
        let Ok(table) = self.table(name) else {
            return Vec::new();
        };
        let Some(group) = table.global() else {
            return Vec::new();
        };
        // 2017.11.29 groups share no settings: UpdateGlobalTableSettings
        // sets them (settings.rs).
        let legacy = group.version == super::group::LEGACY_VERSION;
        if legacy || group.settings_mode.as_deref() == Some("DISABLED") {
            return Vec::new();
        }
        let own = self.region_of(&table.catalog_name).to_string();
        let mut failed = Vec::new();
        for replica in group.replicas.iter().filter(|r| r.region != own) {
            let region = &replica.region;
            let applied = match self.outbox(table.id, region) {
                Ok(waiting) if waiting.is_empty() => {
                    let to = address_in(self, &table, region);
                    let message = Message::ShareSetting {
                        to,
                        change: change.clone(),
                    };
                    self.send(&message).map(drop).map_err(|e| e.message)
                }
                Ok(_) => Err("queued behind earlier changes for this region".to_string()),
                Err(error) => Err(error.message),
            };
            if let Err(why) = applied {
                if let Err(lost) = self.enqueue_setting(table.id, region, &change) {
                    eprintln!("ferrodyn: {name}: a setting for {region} was lost: {lost}");
                }
                failed.push((region.clone(), why));
            }
        }
        failed
    }

    /// The changes waiting for `region`, oldest first, with their keys.
    fn outbox(&self, table_id: u64, region: &str) -> Result<Vec<(Vec<u8>, SettingChange)>> {
        let prefix = keyspace::cursor_key(table_id, &format!("settings/{region}/"));
        let end = keyspace::prefix_end(&prefix);
        let end = end.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
        let found = (self
            .storage
            .scan(Bound::Included(&prefix), end, false, usize::MAX))
        .map_err(crate::storage_error)?;
        (found.into_iter())
            .map(|(key, value)| {
                let change = serde_json::from_slice(&value).map_err(crate::storage_error)?;
                Ok((key, change))
            })
            .collect()
    }

    fn enqueue_setting(&self, table_id: u64, region: &str, change: &SettingChange) -> Result<()> {
        let number = self.allocate_sequence();
        let key = keyspace::cursor_key(table_id, &format!("settings/{region}/{number:020}"));
        let value = serde_json::to_vec(change).expect("plain data always serialises");
        Ok(self.write_retrying_conflicts(vec![WriteOp::Put(key, value)])?)
    }

    /// Sends `region` the changes waiting for it, in order, each removed
    /// once applied there; stops at the first that fails (tried again
    /// after [`RETRY_EVERY`]). The replication thread calls it each round.
    pub(crate) fn deliver_settings(self: &Arc<Self>, table: &Table, region: &str) -> Result<()> {
        let key = (table.id, region.to_string());
        let tried = self.replication.outbox.tried.lock().get(&key).cloned();
        if tried.is_some_and(|(at, _)| at.elapsed() < RETRY_EVERY) {
            return Ok(());
        }
        let mut failure = None;
        for (record, change) in self.outbox(table.id, region)? {
            let to = address_in(self, table, region);
            if let Err(error) = self.send(&Message::ShareSetting { to, change }) {
                failure = Some(error.message);
                break;
            }
            self.write_retrying_conflicts(vec![WriteOp::Delete(record)])?;
        }
        (self.replication.outbox.tried.lock()).insert(key, (Instant::now(), failure));
        Ok(())
    }

    /// How many changes wait for `region`, and why the first failed last.
    pub(crate) fn settings_waiting(
        &self,
        table: &Table,
        region: &str,
    ) -> Result<(usize, Option<String>)> {
        let waiting = self.outbox(table.id, region)?.len();
        let tried = self.replication.outbox.tried.lock();
        let why = (tried.get(&(table.id, region.to_string()))).and_then(|(_, why)| why.clone());
        Ok((waiting, why.filter(|_| waiting > 0)))
    }

    /// [`Message::ShareSetting`]: another region's change, made here.
    pub(crate) fn apply_setting(
        self: &Arc<Self>,
        name: &str,
        change: SettingChange,
    ) -> Result<Value> {
        let table = self.replica_table(name)?;
        match change {
            SettingChange::TimeToLive { enabled, attribute } => {
                if table.ttl_attribute().as_deref() != enabled.then_some(attribute.as_str()) {
                    self.update_ttl(name, enabled, &attribute)?;
                }
            }
            SettingChange::Capacity(change) => {
                self.apply_settings(name, change)?;
            }
            SettingChange::CreateIndex { index, definitions } => {
                if table.index(&index.index_name).is_none() {
                    self.create_global_index(name, *index, definitions)?;
                }
            }
            SettingChange::DeleteIndex { name: index } => {
                if table.index(&index).is_some() {
                    self.delete_global_index(name, &index)?;
                }
            }
        }
        Ok(json!({}))
    }
}
