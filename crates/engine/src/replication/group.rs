//! The replication group: which regions hold a replica, in what state.
//!
//! Every replica's catalog record holds the same group
//! ([`GlobalTable`]); the region that changes it (the one an UpdateTable
//! reached, or the region that filled a new replica) commits it in its own
//! record and pushes it to the others ([`Message::Group`]). Sends never
//! happen under the catalog lock: a region of this server handles them
//! with the same lock.
//!
//! Adding region R to a table of region O: R creates its table and takes
//! the group ([`Message::Join`]); the other replicas take it and open a
//! cursor for R at their lowest cursor (so none of their changes that O
//! has not applied yet is missed); then O commits the group with a cursor
//! for R that fills it (sender.rs). Removing R: the group marks it
//! DELETING (everyone drops its cursor), R deletes its table
//! ([`Message::Leave`]), and the group without R is pushed; a group of
//! one region is no group, and the table is a plain table again.

use super::{address_in, Address, Message};
use crate::error::RetryPolicy;
use crate::schema::{StreamSpecification, TableDescription};
use crate::shared::{GlobalTable, ReplicaState};
use crate::table::Table;
use crate::{Engine, NewTable, TableUpdate};
use ferrodyn_storage::WriteOp;
use ferrodyn_types::{DynamoError, ErrorKind, Result};
use serde_json::{Map, Value};
use std::sync::Arc;

/// The global-table version UpdateTable's ReplicaUpdates make.
pub const CURRENT_VERSION: &str = "2019.11.21";
/// The version CreateGlobalTable makes.
pub const LEGACY_VERSION: &str = "2017.11.29";
const BOTH_IMAGES: &str = "NEW_AND_OLD_IMAGES";

/// One of UpdateTable's ReplicaUpdates.
#[derive(Clone, Debug)]
pub enum ReplicaAction {
    /// A new replica, with its settings (KMSMasterKeyId,
    /// ProvisionedThroughputOverride, ...), kept and shown as given.
    Create {
        region: String,
        settings: Map<String, Value>,
    },
    Update {
        region: String,
        settings: Map<String, Value>,
    },
    Delete {
        region: String,
    },
}

/// UpdateTable's global-table parameters, checked for shape.
#[derive(Clone, Debug, Default)]
pub struct GroupUpdate {
    pub replicas: Vec<ReplicaAction>,
    /// MultiRegionConsistency STRONG (only with a Create).
    pub strong: Option<bool>,
    /// GlobalTableWitnessUpdates: (region, create?).
    pub witnesses: Vec<(String, bool)>,
}

impl Engine {
    /// UpdateTable's ReplicaUpdates and GlobalTableWitnessUpdates on the
    /// table `name` of the request's region; the table as it is after.
    pub fn update_replicas(
        self: &Arc<Self>,
        name: &str,
        update: GroupUpdate,
    ) -> Result<TableDescription> {
        let table = self.table_to_change(name)?;
        if update.strong.is_some() || !update.witnesses.is_empty() {
            return self.form_strong_group(&table, update);
        }
        let [action] = &update.replicas[..] else {
            return Err(DynamoError::validation(
                "Only one replica can be created, updated or deleted per UpdateTable request",
            ));
        };
        match action {
            ReplicaAction::Create { region, settings } => {
                self.add_replica(&table, region, settings.clone(), None)?
            }
            ReplicaAction::Update { region, settings } => {
                self.update_replica(&table, region, settings.clone())?
            }
            ReplicaAction::Delete { region } => self.remove_replica(&table, region)?,
        }
        Ok(self.table(name)?.describe())
    }

    /// Adds `region` to the table's group (forming one if the table is a
    /// plain table): the table there is created and then filled by this
    /// region's sender. `strong` forms an MRSC group (strong.rs).
    pub(crate) fn add_replica(
        self: &Arc<Self>,
        table: &Arc<Table>,
        region: &str,
        settings: Map<String, Value>,
        strong: Option<&GlobalTable>,
    ) -> Result<()> {
        let own = self.region_of(&table.catalog_name).to_string();
        check_new_region(table, &own, region)?;
        self.ensure_replication_stream(table)?;
        let table = &self.table(&table.name)?;
        let mut group = match (table.global(), strong) {
            (_, Some(formed)) => formed.clone(),
            (Some(group), None) => group,
            (None, None) => self.new_group(&own, false),
        };
        if group.strong && strong.is_none() {
            return Err(DynamoError::validation(
                "Replicas cannot be added to a global table with multi-Region strong consistency",
            ));
        }
        group.replicas.push(ReplicaState {
            region: region.to_string(),
            status: "CREATING".into(),
            settings,
        });
        let description = Box::new(table.describe());
        let to = address_in(self, table, region);
        self.send(&Message::Join {
            to: to.clone(),
            description,
            group: group.clone(),
        })?;
        if let Err(error) = self.push_group(table, &group, &[&own, region]) {
            let _ = self.send(&Message::Leave { to });
            return Err(error);
        }
        self.commit_group(table, Some(group), Some(region))
    }

    /// New settings of a replica (shown by DescribeTable; Ferrodyn applies
    /// none of them: capacity is the table's own in each region).
    fn update_replica(
        self: &Arc<Self>,
        table: &Arc<Table>,
        region: &str,
        settings: Map<String, Value>,
    ) -> Result<()> {
        let mut group = self.group_of(table)?;
        let Some(replica) = group.replicas.iter_mut().find(|r| r.region == region) else {
            return Err(replica_not_found(table, region));
        };
        replica.settings.extend(settings);
        let own = self.region_of(&table.catalog_name).to_string();
        self.push_group(table, &group, &[&own])?;
        self.commit_group(table, Some(group), None)
    }

    /// Removes `region` from the table's group and deletes its replica.
    pub(crate) fn remove_replica(self: &Arc<Self>, table: &Arc<Table>, region: &str) -> Result<()> {
        let own = self.region_of(&table.catalog_name).to_string();
        let mut group = self.group_of(table)?;
        let Some(at) = group.replicas.iter().position(|r| r.region == region) else {
            return Err(replica_not_found(table, region));
        };
        super::source::check_unprotected(&group, &table.name, region)?;
        if group.strong {
            return Err(DynamoError::validation(
                "Replicas cannot be removed one at a time from a global table with multi-Region strong consistency: delete the table in each region",
            ));
        }
        group.replicas[at].status = "DELETING".into();
        self.commit_group(table, Some(group.clone()), None)?;
        self.push_group(table, &group, &[&own, region])?;
        group.replicas.remove(at);
        let remaining = (group.replicas.len() > 1).then_some(group);
        if region == own {
            // This region leaves: the others keep the group without it.
            if let Some(group) = &remaining {
                self.push_group(table, group, &[&own])?;
            }
            self.commit_group(table, None, None)?;
            self.delete_table(&table.name)?;
            return Ok(());
        }
        self.send(&Message::Leave {
            to: address_in(self, table, region),
        })?;
        if let Some(group) = &remaining {
            self.push_group(table, group, &[&own, region])?;
        }
        self.commit_group(table, remaining, None)
    }

    /// DeleteTable of a replica: the other regions keep the group without
    /// this one (called before the table is deleted).
    pub(crate) fn depart_before_delete(self: &Arc<Self>, table: &Arc<Table>) -> Result<()> {
        let Some(mut group) = table.global() else {
            return Ok(());
        };
        let own = self.region_of(&table.catalog_name).to_string();
        super::source::check_unprotected(&group, &table.name, &own)?;
        group.replicas.retain(|r| r.region != own);
        // A 2017.11.29 group keeps a single region (legacy.rs).
        if group.replicas.len() == 1 && group.version != LEGACY_VERSION {
            // The last other region keeps a plain table.
            let to = address_in(self, table, &group.replicas[0].region);
            let mut alone = group.clone();
            alone.replicas.clear();
            self.send(&Message::Group { to, group: alone })?;
        } else {
            self.push_group(table, &group, &[&own])?;
        }
        self.commit_group(table, None, None)
    }

    /// Sends `group` to every replica region except `skip`.
    pub(crate) fn push_group(
        self: &Arc<Self>,
        table: &Table,
        group: &GlobalTable,
        skip: &[&str],
    ) -> Result<()> {
        let regions = (group.replicas.iter()).chain(&group.witnesses);
        for replica in regions.filter(|r| !skip.contains(&r.region.as_str())) {
            let to = address_in(self, table, &replica.region);
            self.send(&Message::Group {
                to,
                group: group.clone(),
            })?;
        }
        Ok(())
    }

    /// Sets one replica's status here and everywhere.
    pub(crate) fn set_replica_status(
        self: &Arc<Self>,
        table: &Arc<Table>,
        region: &str,
        status: &str,
    ) -> Result<()> {
        let group = self.group_of(table)?;
        // Each region changes only that status in the group it holds (a
        // whole group pushed here could undo a change made meanwhile).
        for member in group.replicas.iter().chain(&group.witnesses) {
            let to = address_in(self, table, &member.region);
            let (region, status) = (region.to_string(), status.to_string());
            self.send(&Message::Status { to, region, status })?;
        }
        Ok(())
    }

    /// [`Message::Status`]: one replica's status, set in the group here.
    pub(crate) fn take_status(
        self: &Arc<Self>,
        name: &str,
        region: &str,
        status: &str,
    ) -> Result<Value> {
        let table = self.replica_table(name)?;
        let mut group = self.group_of(&table)?;
        if let Some(replica) = group.replicas.iter_mut().find(|r| r.region == region) {
            replica.status = status.to_string();
            self.commit_group(&table, Some(group), None)?;
        }
        Ok(serde_json::json!({}))
    }

    /// A table's group, or the error for a table that has none.
    pub(crate) fn group_of(&self, table: &Table) -> Result<GlobalTable> {
        table.global().ok_or_else(|| {
            DynamoError::validation(format!(
                "Table {} is not a global table: it has no replicas",
                table.name
            ))
        })
    }

    pub(crate) fn new_group(&self, own: &str, strong: bool) -> GlobalTable {
        GlobalTable {
            version: CURRENT_VERSION.into(),
            strong,
            replicas: vec![ReplicaState {
                region: own.to_string(),
                status: "ACTIVE".into(),
                settings: Map::new(),
            }],
            witnesses: Vec::new(),
            settings_mode: None,
            source_arn: None,
            disassociation_protected: Vec::new(),
            auto_scaling: Default::default(),
            created: self.now_seconds(),
        }
    }

    /// A replica's stream: NEW_AND_OLD_IMAGES, enabled here if the table had
    /// none (DynamoDB does the same); another view type is refused.
    pub(crate) fn ensure_replication_stream(&self, table: &Table) -> Result<()> {
        let current = table
            .describe()
            .stream_specification
            .filter(|s| s.stream_enabled);
        match current.and_then(|s| s.stream_view_type) {
            Some(view) if view == BOTH_IMAGES => Ok(()),
            Some(view) => Err(DynamoError::validation(format!(
                "Table {} has a stream of view type {view}: a global table's replicas need NEW_AND_OLD_IMAGES",
                table.name
            ))),
            None => {
                let stream = StreamSpecification {
                    stream_enabled: true,
                    stream_view_type: Some(BOTH_IMAGES.into()),
                };
                let update = TableUpdate {
                    stream: Some(stream),
                    ..TableUpdate::default()
                };
                self.update_table(&table.name, update).map(|_| ())
            }
        }
    }

    /// Commits `group` as the table's (None: no longer replicated) with the
    /// cursors it needs, in one catalog write; the table keeps its old group
    /// if that fails.
    pub(crate) fn commit_group(
        self: &Arc<Self>,
        table: &Table,
        group: Option<GlobalTable>,
        fill_for: Option<&str>,
    ) -> Result<()> {
        {
            let _catalog = self.catalog_lock.lock();
            let current = self.tables.read().get(&table.catalog_name).cloned();
            if current.is_none_or(|t| t.id != table.id) {
                return Err(DynamoError::resource_not_found(format!(
                    "Requested resource not found: Table: {} not found",
                    table.name
                )));
            }
            let _writes = table.exclusive();
            let own = self.region_of(&table.catalog_name).to_string();
            // A 2017.11.29 group may hold one region (CreateGlobalTable of
            // one table, or UpdateGlobalTable's Deletes down to one).
            let group = group.filter(|g| {
                g.replicas.len() > 1 || !g.witnesses.is_empty() || g.version == LEGACY_VERSION
            });
            let previous = table.global();
            table.set_global(group.clone(), &own);
            // Shared storage: a conflict (the log's readers, a fold) retries
            // on the record as stored now; the group is ours to set.
            let committed = self.retry(RetryPolicy::Ddl, |retry| {
                if retry > 0 {
                    let key = crate::keyspace::catalog_key(&table.catalog_name);
                    let stored = self.storage.get(&key)?;
                    *table.catalog_bytes.write() = stored.unwrap_or_default();
                }
                let mut ops = self.reconcile_cursors(table, group.as_ref(), &own, fill_for)?;
                let record = crate::catalog::CatalogRecord::of(table);
                let bytes = serde_json::to_vec(&record).map_err(crate::storage_error)?;
                let key = crate::keyspace::catalog_key(&table.catalog_name);
                ops.push(WriteOp::Put(key, bytes.clone()));
                let _reload = self.reload_guard();
                self.commit_catalog(vec![self.catalog_check(table)], ops)?;
                *table.catalog_bytes.write() = bytes;
                Ok(())
            });
            if let Err(error) = committed {
                table.set_global(previous, &own);
                return Err(error.into());
            }
        }
        self.note_strong_groups();
        self.start_replication_worker_if_needed();
        Ok(())
    }

    /// [`Message::Join`]: creates the replica here like `description`, or
    /// takes an existing table (2017.11.29 groups are made of tables that
    /// exist already), and takes the group.
    pub(crate) fn join_group(
        self: &Arc<Self>,
        to: &Address,
        description: &TableDescription,
        group: GlobalTable,
    ) -> Result<Value> {
        match self.lookup(&to.table) {
            Some(table)
                if table.is_replicated() || group.version == super::group::LEGACY_VERSION =>
            {
                self.commit_group(&table, Some(group), None)?;
            }
            Some(_) => {
                return Err(DynamoError::validation(format!(
                    "Failed to create a the new replica of table with name: '{}' because one or more replicas already existed as tables.",
                    to.table
                )));
            }
            None => {
                self.create_table(replica_of(description, &group, &to.region))?;
                let table = self.table(&to.table)?;
                self.commit_group(&table, Some(group), None)?;
            }
        }
        Ok(serde_json::json!({}))
    }

    /// [`Message::Group`]: the group as another region changed it.
    pub(crate) fn take_group(
        self: &Arc<Self>,
        name: &str,
        mut group: GlobalTable,
    ) -> Result<Value> {
        // A witness's hidden copy takes groups too.
        let table = self.lookup(name).ok_or_else(|| {
            DynamoError::resource_not_found(format!(
                "Requested resource not found: Table: {name} not found"
            ))
        })?;
        let own = self.region_of(&table.catalog_name).to_string();
        // A replica's CREATING → ACTIVE is set field by field (Status); a
        // whole group pushed meanwhile by a settings change must not undo it.
        if let Some(current) = table.global() {
            for replica in &mut group.replicas {
                let active = current
                    .replica(&replica.region)
                    .is_some_and(|r| r.status == "ACTIVE");
                if active && replica.status == "CREATING" {
                    replica.status = "ACTIVE".into();
                }
            }
        }
        let member = group
            .replicas
            .iter()
            .chain(&group.witnesses)
            .any(|r| r.region == own);
        self.commit_group(&table, member.then_some(group), None)?;
        Ok(serde_json::json!({}))
    }

    /// [`Message::Leave`]: this replica is removed from its group.
    pub(crate) fn leave_group(self: &Arc<Self>, name: &str) -> Result<Value> {
        let table = self.table(name)?;
        self.commit_group(&table, None, None)?;
        self.delete_table(name)?;
        Ok(serde_json::json!({}))
    }

    /// [`Message::Describe`]: the table here, if any.
    pub(crate) fn describe_for_peer(&self, name: &str) -> Result<Value> {
        let found = self.lookup(name).map(|t| t.describe());
        Ok(serde_json::json!({ "Table": found }))
    }
}

/// The checks of a new replica's region.
fn check_new_region(table: &Table, own: &str, region: &str) -> Result<()> {
    if region == own {
        return Err(DynamoError::validation(format!(
            "Cannot add replica: the table {} already lives in region {region}",
            table.name
        )));
    }
    if table.global().is_some_and(|g| g.replica(region).is_some()) {
        return Err(DynamoError::new(
            ErrorKind::Validation,
            format!("Failed to create a the new replica of table with name: '{}' because one or more replicas already existed as tables.", table.name),
        ));
    }
    Ok(())
}

fn replica_not_found(table: &Table, region: &str) -> DynamoError {
    DynamoError::validation(format!(
        "Replica in region {region} of table {} does not exist",
        table.name
    ))
}

/// The table a replica in `region` starts as: the source's keys, indexes,
/// billing and stream (NEW_AND_OLD_IMAGES); a ProvisionedThroughputOverride
/// sets its read capacity, a TableClassOverride its class.
fn replica_of(source: &TableDescription, group: &GlobalTable, region: &str) -> NewTable {
    let settings = (group.replica(region))
        .map(|r| r.settings.clone())
        .unwrap_or_default();
    let read_override = (settings.get("ProvisionedThroughputOverride"))
        .and_then(|o| o["ReadCapacityUnits"].as_u64());
    let billing_mode = source.billing_mode();
    let provisioned = (billing_mode == crate::schema::BillingMode::Provisioned).then(|| {
        let t = &source.provisioned_throughput;
        (
            read_override.unwrap_or(t.read_capacity_units),
            t.write_capacity_units,
        )
    });
    let clean = |list: &Option<Vec<crate::schema::IndexDescription>>| {
        let mut list = list.clone().unwrap_or_default();
        for index in &mut list {
            index.item_count = 0;
            index.index_size_bytes = 0;
            index.index_status = None;
            index.backfilling = None;
        }
        list
    };
    let class = settings.get("TableClassOverride").and_then(Value::as_str);
    NewTable {
        name: source.table_name.clone(),
        key_schema: source.key_schema.clone(),
        attribute_definitions: source.attribute_definitions.clone(),
        billing_mode,
        provisioned,
        global_secondary_indexes: clean(&source.global_secondary_indexes),
        local_secondary_indexes: clean(&source.local_secondary_indexes),
        stream: Some(StreamSpecification {
            stream_enabled: true,
            stream_view_type: Some(BOTH_IMAGES.into()),
        }),
        deletion_protection: false,
        table_class: class.map(str::to_string).or_else(|| {
            let summary = source.table_class_summary.as_ref()?;
            summary["TableClass"].as_str().map(str::to_string)
        }),
        tags: Vec::new(),
        resource_policy: None,
        // The source's vector indexes, empty here: filled with the items.
        vector_indexes: (source
            .vector_indexes
            .clone()
            .unwrap_or_default()
            .into_iter())
        .map(|mut index| {
            index.index_status = None;
            index.backfilling = None;
            index.item_count = 0;
            index.index_size_bytes = 0;
            index
        })
        .collect(),
    }
}
