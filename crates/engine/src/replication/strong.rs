//! Multi-Region strong consistency (MRSC): a group of exactly three
//! regions (three replicas, or two and a witness) in which a write is
//! acknowledged only once a majority of regions hold it, and a strongly
//! consistent read in any replica sees every acknowledged write.
//!
//! - **Writes.** The region a write reaches plans it under its item lock,
//!   then proposes it ([`Message::Propose`]) to the other regions in turn
//!   until one accepts: the change, its version, and the version the
//!   proposer overwrote. A region accepts if it can take the item's lock at
//!   once (never waiting: two regions proposing one item would wait for
//!   each other) and holds no newer version than the one overwritten, and
//!   applies the change before answering. With one acceptance the write is
//!   on two regions of three and commits here; when every region refused
//!   because of a concurrent write of the item, the write fails with
//!   ReplicatedWriteConflictException and is applied nowhere. Two writes
//!   overwriting the same version cannot both win: the region that accepts
//!   one holds a newer version when the other arrives.
//! - **Reads.** A strongly consistent read first asks one other region to
//!   send everything it has not yet sent here ([`Message::Sync`]), then
//!   reads locally: any acknowledged write is on two regions, so it is here
//!   or at the region asked. Replicas of an MRSC group send every change
//!   they apply, not only their own, so whatever a region accepted reaches
//!   the third one even if the proposer failed before committing.
//! - **What MRSC refuses**, as DynamoDB documents it: transactions, Time to
//!   Live, local secondary indexes, a table that is not empty when the group
//!   forms, replicas added or removed one at a time.
//! - **Witnesses** hold a copy that serves no request: the table in a
//!   witness region is hidden from every operation but replication's.

use super::group::{GroupUpdate, ReplicaAction};
use super::{address_in, Change, ItemVersion, Message};
use crate::items::PlannedWrite;
use crate::locks::{Holder, LockKey};
use crate::schema::TableDescription;
use crate::shared::{GlobalTable, ReplicaState};
use crate::table::Table;
use crate::Engine;
use ferrodyn_types::{DynamoError, ErrorKind, Result};
use serde_json::{json, Value};
use std::sync::Arc;

/// Regions in an MRSC group.
const MRSC_REGIONS: usize = 3;

impl Engine {
    /// UpdateTable with MultiRegionConsistency or GlobalTableWitnessUpdates:
    /// forms an MRSC group of this region, the replicas created and the
    /// witness, all in this one call.
    pub(crate) fn form_strong_group(
        self: &Arc<Self>,
        table: &Arc<Table>,
        update: GroupUpdate,
    ) -> Result<TableDescription> {
        if update.strong != Some(true) {
            if !update.witnesses.is_empty() {
                return Err(mrsc_error(
                    "GlobalTableWitnessUpdates requires MultiRegionConsistency STRONG",
                ));
            }
            // EVENTUAL, said explicitly: the usual path.
            let eventual = GroupUpdate {
                strong: None,
                ..update
            };
            return self.update_replicas(&table.name, eventual);
        }
        if table.global().is_some() {
            return Err(mrsc_error(
                "The consistency mode of an existing global table cannot be changed",
            ));
        }
        if self.shared() {
            // A read barrier sends what is readable, and shared storage
            // reads the log 2 s behind (cluster.rs): reads would be stale.
            return Err(mrsc_error(
                "Ferrodyn offers multi-Region strong consistency on its embedded storage only, not on shared (PostgreSQL) storage",
            ));
        }
        let own = self.region_of(&table.catalog_name).to_string();
        let group = self.strong_group(&own, &update)?;
        self.check_strong_candidate(table)?;
        // The table is empty: no fill; each region joins with the whole group.
        self.ensure_replication_stream(table)?;
        let table = &self.table(&table.name)?;
        let description = Box::new(table.describe());
        let others = (group.replicas.iter().chain(&group.witnesses)).filter(|r| r.region != own);
        for replica in others {
            let to = address_in(self, table, &replica.region);
            self.send(&Message::Join {
                to,
                description: description.clone(),
                group: group.clone(),
            })?;
        }
        self.commit_group(table, Some(group), None)?;
        Ok(self.table(&table.name)?.describe())
    }

    /// The MRSC group an UpdateTable asks for: this region, the replicas it
    /// creates and its witness, three regions in all.
    fn strong_group(&self, own: &str, update: &GroupUpdate) -> Result<GlobalTable> {
        let mut group = self.new_group(own, true);
        let member = |region: &str, settings| ReplicaState {
            region: region.to_string(),
            status: "ACTIVE".into(),
            settings,
        };
        for action in &update.replicas {
            let ReplicaAction::Create { region, settings } = action else {
                return Err(mrsc_error(
                    "Only replica Create actions can be given with MultiRegionConsistency",
                ));
            };
            group.replicas.push(member(region, settings.clone()));
        }
        for (region, create) in &update.witnesses {
            if !create || !group.witnesses.is_empty() {
                return Err(mrsc_error("A global table with multi-Region strong consistency has at most one witness, created with it"));
            }
            group.witnesses.push(member(region, Default::default()));
        }
        if group.replicas.len() + group.witnesses.len() != MRSC_REGIONS {
            return Err(mrsc_error("A global table with multi-Region strong consistency spans exactly three regions: three replicas, or two replicas and a witness"));
        }
        Ok(group)
    }

    /// What a table must be to form an MRSC group: empty, without an LSI
    /// or Time to Live.
    fn check_strong_candidate(&self, table: &Table) -> Result<()> {
        let description = table.describe();
        if description.item_count > 0 {
            return Err(mrsc_error("A table must be empty to become a global table with multi-Region strong consistency"));
        }
        if description.local_secondary_indexes.is_some() {
            return Err(mrsc_error("Global tables with multi-Region strong consistency do not support local secondary indexes"));
        }
        if table.ttl_attribute().is_some() {
            return Err(mrsc_error(
                "Global tables with multi-Region strong consistency do not support Time to Live",
            ));
        }
        Ok(())
    }

    /// Proposes each local write of an MRSC replica to the other regions
    /// until one accepts (called with the writes' locks held, before they
    /// commit here).
    pub(crate) fn propose_strongly(&self, writes: &[PlannedWrite]) -> Result<()> {
        for write in writes {
            let Some(version) = &write.version else {
                continue;
            };
            if version.replicated || !write.changes_item() {
                continue;
            }
            if !write.table.is_strong() {
                continue;
            }
            let Some(group) = write.table.global() else {
                continue;
            };
            let own = self.region_of(&write.table.catalog_name).to_string();
            let image = write
                .old
                .as_ref()
                .or(write.new.as_ref())
                .expect("a changed item has an image");
            let change = Change {
                key: write.table.schema.extract(image),
                image: write.new.clone(),
                version: version.new.clone(),
                committed_ms: self.clock.now_millis(),
            };
            let mut refusals = Vec::new();
            let others = group
                .replicas
                .iter()
                .chain(&group.witnesses)
                .filter(|r| r.region != own);
            let mut accepted = false;
            for region in others {
                let to = address_in(self, &write.table, &region.region);
                let message = Message::Propose {
                    to,
                    change: change.clone(),
                    expected: version.stored.clone(),
                };
                match self.me().send(&message) {
                    Ok(answer) if answer["Accepted"] == json!(true) => {
                        accepted = true;
                        break;
                    }
                    Ok(_) => refusals.push(None),
                    Err(error) => refusals.push(Some(error)),
                }
            }
            if accepted {
                continue;
            }
            if refusals.iter().any(Option::is_none) {
                return Err(DynamoError::new(
                    ErrorKind::ReplicatedWriteConflict,
                    "One or more items in this request are being modified by a request in another Region.",
                ));
            }
            return Err(DynamoError::internal(
                "No other region of this global table with multi-Region strong consistency could be reached: the write was not made",
            ));
        }
        Ok(())
    }

    /// [`Message::Propose`]: applies another region's write if the item is
    /// free and holds no version newer than the one the write overwrote.
    pub(crate) fn accept_proposal(
        &self,
        name: &str,
        change: Change,
        expected: Option<ItemVersion>,
    ) -> Result<Value> {
        let table = self.replica_table(name)?;
        let storage_key = table.schema.encode(table.id, &change.key);
        let mut keys: Vec<LockKey> = Vec::with_capacity(2);
        self.push_write_keys(&table, &change.key, &mut keys);
        let Ok(_held) = self.locks.acquire(Holder::Proposal, &keys) else {
            return Ok(json!({ "Accepted": false }));
        };
        let _writers = table.writers();
        let stored = self.stored_version(&storage_key)?;
        if stored.as_ref() > expected.as_ref() {
            return Ok(json!({ "Accepted": false }));
        }
        self.apply_held(&table, vec![(storage_key, change)])?;
        Ok(json!({ "Accepted": true }))
    }

    /// [`Message::Sync`]: sends everything not yet sent to `region`.
    pub(crate) fn sync_to(self: &Arc<Self>, name: &str, region: &str) -> Result<Value> {
        let table = self.replica_table(name)?;
        self.send_pending(&table, region)?;
        Ok(json!({}))
    }

    /// Before a strongly consistent read of an MRSC replica: one other
    /// region sends what it has not sent here yet.
    pub fn read_barrier(&self, table: &Table) -> Result<()> {
        if !table.is_strong() {
            return Ok(());
        }
        let Some(group) = table.global() else {
            return Ok(());
        };
        let own = self.region_of(&table.catalog_name).to_string();
        let mut last_error = None;
        for region in group
            .replicas
            .iter()
            .chain(&group.witnesses)
            .filter(|r| r.region != own)
        {
            let to = address_in(self, table, &region.region);
            match self.me().send(&Message::Sync {
                to,
                region: own.clone(),
            }) {
                Ok(_) => return Ok(()),
                Err(error) => last_error = Some(error),
            }
        }
        Err(last_error.unwrap_or_else(|| DynamoError::internal("no other region")))
    }

    /// Refuses what MRSC does not support on `table` (transactions, TTL).
    pub fn check_not_strong(&self, table: &Table, what: &str) -> Result<()> {
        if table.is_strong() {
            return Err(mrsc_error(&format!(
                "{what} is not supported on global tables with multi-Region strong consistency"
            )));
        }
        Ok(())
    }
}

fn mrsc_error(message: &str) -> DynamoError {
    DynamoError::validation(message)
}
