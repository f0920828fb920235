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
//! cannot apply it (or cannot be reached) is reported, not retried: the
//! change stands where it was made.

use super::settings::TableSettings;
use super::{address_in, Message};
use crate::schema::{AttributeDefinition, IndexDescription};
use crate::Engine;
use ferrodyn_types::Result;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::sync::Arc;

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
            let to = address_in(self, &table, &replica.region);
            let message = Message::ShareSetting {
                to,
                change: change.clone(),
            };
            if let Err(error) = self.send(&message) {
                eprintln!(
                    "ferrodyn: {name}: a setting was not shared with {}: {error}",
                    replica.region
                );
                failed.push((replica.region.clone(), error.message));
            }
        }
        failed
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
