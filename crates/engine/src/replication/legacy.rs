//! Global tables version 2017.11.29 (legacy): CreateGlobalTable,
//! UpdateGlobalTable, DescribeGlobalTable and ListGlobalTables.
//!
//! A legacy global table is made of tables that exist already, one per
//! region, with the same name: CreateGlobalTable checks each (through
//! [`Message::Describe`], so a region of another server is checked the same
//! way) and joins them into one replication group of version
//! [`LEGACY_VERSION`] ([`Message::Join`] takes an existing table for such a
//! group). From there replication is the same as 2019.11.21's (sender.rs).
//! The group is found by name among this server's tables (any region of the
//! request's namespace): a server answers for the global tables it holds a
//! replica of. Removing a region (UpdateGlobalTable Delete) keeps its table,
//! as a plain regional table.

use super::group::LEGACY_VERSION;
use super::{Address, Message};
use crate::region::request_namespace;
use crate::schema::{BillingMode, IndexDescription, TableDescription};
use crate::shared::{GlobalTable, ReplicaState};
use crate::table::Table;
use crate::Engine;
use ferrodyn_types::{DynamoError, ErrorKind, Result};
use serde_json::{json, Value};
use std::sync::Arc;

/// One of UpdateGlobalTable's ReplicaUpdates: a region to add (true) or
/// remove (false).
pub type LegacyReplicaUpdate = (String, bool);

impl Engine {
    /// CreateGlobalTable: joins the tables named `name` in `regions` into a
    /// legacy global table; its GlobalTableDescription.
    pub fn create_global_table(self: &Arc<Self>, name: &str, regions: &[String]) -> Result<Value> {
        let Some(first) = regions.first() else {
            return Err(DynamoError::validation(
                "ReplicationGroup must name at least one region",
            ));
        };
        if (1..regions.len()).any(|n| regions[..n].contains(&regions[n])) {
            return Err(DynamoError::validation(
                "ReplicationGroup must not name a region twice",
            ));
        }
        if self.find_legacy(name).is_some() {
            return Err(DynamoError::new(
                ErrorKind::GlobalTableAlreadyExists,
                format!("Global table with this name already exists: {name}"),
            ));
        }
        let mut described = Vec::with_capacity(regions.len());
        for region in regions {
            let description = self.described_in(name, region)?;
            if let Some((_, first)) = described.first() {
                check_compatible(first, &description, region)?;
            } else {
                check_replica_table(&description, region)?;
            }
            described.push((region.clone(), description));
        }
        let mut group = self.new_group(first, false);
        group.version = LEGACY_VERSION.into();
        for region in &regions[1..] {
            group.replicas.push(active(region));
        }
        let mut joined: Vec<&str> = Vec::new();
        for (region, description) in &described {
            let join = Message::Join {
                to: self.legacy_address(name, region),
                description: Box::new(description.clone()),
                group: group.clone(),
            };
            if let Err(error) = self.send(&join) {
                self.undo_joins(name, &joined);
                return Err(error);
            }
            joined.push(region);
        }
        Ok(self.global_table_description(name, &group))
    }

    /// UpdateGlobalTable: adds and removes regions of the legacy global
    /// table `name`; its GlobalTableDescription after.
    pub fn update_global_table(
        self: &Arc<Self>,
        name: &str,
        updates: &[LegacyReplicaUpdate],
    ) -> Result<Value> {
        let (_, before) = self.legacy_group(name)?;
        let mut group = before.clone();
        let mut added = Vec::new();
        for (region, create) in updates {
            let present = group.replica(region).is_some();
            match (create, present) {
                (true, true) => return Err(replica_exists(name, region)),
                (false, false) => return Err(replica_missing(name, region)),
                (true, false) => {
                    let description = self.described_in(name, region)?;
                    let member = &group.replicas.first().map(|r| r.region.clone());
                    match member {
                        Some(other) => {
                            let reference = self.described_in(name, other)?;
                            check_compatible(&reference, &description, region)?;
                        }
                        None => check_replica_table(&description, region)?,
                    }
                    group.replicas.push(active(region));
                    added.push((region.clone(), description));
                }
                (false, true) => group.replicas.retain(|r| &r.region != region),
            }
        }
        for (region, description) in &added {
            self.send(&Message::Join {
                to: self.legacy_address(name, region),
                description: Box::new(description.clone()),
                group: group.clone(),
            })?;
        }
        let joined: Vec<&str> = added.iter().map(|(r, _)| r.as_str()).collect();
        let regions = (before.replicas.iter()).map(|r| r.region.as_str());
        for region in regions.filter(|r| !joined.contains(r)) {
            self.send(&Message::Group {
                to: self.legacy_address(name, region),
                group: group.clone(),
            })?;
        }
        Ok(self.global_table_description(name, &group))
    }

    /// DescribeGlobalTable.
    pub fn describe_global_table(&self, name: &str) -> Result<Value> {
        let (_, group) = self.legacy_group(name)?;
        Ok(self.global_table_description(name, &group))
    }

    /// ListGlobalTables: the legacy global tables of the request's
    /// namespace by name after `start`, at most `limit`, only those with a
    /// replica in `region` if given; the last name when more remain.
    pub fn list_global_tables(
        &self,
        start: Option<&str>,
        limit: usize,
        region: Option<&str>,
    ) -> (Vec<Value>, Option<String>) {
        let mut found: std::collections::BTreeMap<String, GlobalTable> = Default::default();
        for table in self.namespace_tables() {
            let Some(group) = table.global().filter(|g| g.version == LEGACY_VERSION) else {
                continue;
            };
            if region.is_none_or(|r| group.replica(r).is_some()) {
                found.entry(table.name.clone()).or_insert(group);
            }
        }
        let after = found
            .into_iter()
            .filter(|(n, _)| start.is_none_or(|s| n.as_str() > s));
        let mut listed: Vec<Value> = after
            .take(limit + 1)
            .map(|(name, group)| {
                let regions: Vec<Value> = (group.replicas.iter())
                    .map(|r| json!({ "RegionName": r.region }))
                    .collect();
                json!({ "GlobalTableName": name, "ReplicationGroup": regions })
            })
            .collect();
        let more = listed.len() > limit;
        listed.truncate(limit);
        let last = more
            .then(|| {
                listed
                    .last()
                    .map(|g| g["GlobalTableName"].as_str().map(str::to_string))
            })
            .flatten()
            .flatten();
        (listed, last)
    }

    /// The legacy global table `name`: one of this server's replicas and
    /// the group, or GlobalTableNotFoundException.
    pub(crate) fn legacy_group(&self, name: &str) -> Result<(Arc<Table>, GlobalTable)> {
        self.find_legacy(name).ok_or_else(|| {
            DynamoError::new(
                ErrorKind::GlobalTableNotFound,
                format!("Global table not found: Global table with name: '{name}' does not exist."),
            )
        })
    }

    /// A replica of legacy global table `name` on this server: the one of
    /// the request's region if it is one, any other otherwise.
    fn find_legacy(&self, name: &str) -> Option<(Arc<Table>, GlobalTable)> {
        let legacy = |table: Arc<Table>| {
            let group = table.global().filter(|g| g.version == LEGACY_VERSION)?;
            Some((table, group))
        };
        if let Some(found) = self.lookup(name).and_then(legacy) {
            return Some(found);
        }
        let mut tables = self.namespace_tables();
        tables.retain(|t| t.name == name);
        tables.into_iter().find_map(legacy)
    }

    /// Table `name` as region `region` has it (this server or a peer), or
    /// TableNotFoundException.
    pub(crate) fn described_in(
        self: &Arc<Self>,
        name: &str,
        region: &str,
    ) -> Result<TableDescription> {
        let to = self.legacy_address(name, region);
        let answer = self.send(&Message::Describe { to })?;
        let found: Option<TableDescription> = serde_json::from_value(answer["Table"].clone())
            .map_err(|e| DynamoError::internal(format!("Malformed replica description: {e}")))?;
        found.ok_or_else(|| {
            DynamoError::new(
                ErrorKind::TableNotFound,
                format!("Table not found: Table: '{name}' not found in region: '{region}'."),
            )
        })
    }

    /// The address of table `name` in `region`, in the request's namespace.
    pub(crate) fn legacy_address(&self, name: &str, region: &str) -> Address {
        Address {
            table: name.to_string(),
            region: region.to_string(),
            namespace: request_namespace(),
        }
    }

    /// Takes the tables of `regions` out of the group a failed
    /// CreateGlobalTable joined them into (best effort: the error that
    /// stopped it is what the client hears).
    fn undo_joins(self: &Arc<Self>, name: &str, regions: &[&str]) {
        let mut none = self.new_group("", false);
        none.version = LEGACY_VERSION.into();
        none.replicas.clear();
        for region in regions {
            let to = self.legacy_address(name, region);
            let _ = self.send(&Message::Group {
                to,
                group: none.clone(),
            });
        }
    }

    /// GlobalTableDescription of `group`.
    pub(crate) fn global_table_description(&self, name: &str, group: &GlobalTable) -> Value {
        let replicas: Vec<Value> = (group.replicas.iter())
            .map(|r| json!({ "RegionName": r.region, "ReplicaStatus": r.status }))
            .collect();
        let settling = group.replicas.iter().any(|r| r.status != "ACTIVE");
        json!({
            "ReplicationGroup": replicas,
            "GlobalTableArn": format!("arn:aws:dynamodb::{}:global-table/{name}", self.account),
            "CreationDateTime": group.created,
            "GlobalTableStatus": if settling { "UPDATING" } else { "ACTIVE" },
            "GlobalTableName": name,
        })
    }
}

fn active(region: &str) -> ReplicaState {
    ReplicaState {
        region: region.to_string(),
        status: "ACTIVE".into(),
        settings: Default::default(),
    }
}

fn replica_exists(name: &str, region: &str) -> DynamoError {
    DynamoError::new(
        ErrorKind::ReplicaAlreadyExists,
        format!("Replica already exists: Global table '{name}' already has a replica in region: '{region}'."),
    )
}

fn replica_missing(name: &str, region: &str) -> DynamoError {
    DynamoError::new(
        ErrorKind::ReplicaNotFound,
        format!("Replica not found: Global table '{name}' has no replica in region: '{region}'."),
    )
}

/// What a table must be to join a legacy global table: empty, with a
/// NEW_AND_OLD_IMAGES stream, and no replica of another global table.
fn check_replica_table(table: &TableDescription, region: &str) -> Result<()> {
    let name = &table.table_name;
    let refuse = |why: &str| {
        Err(DynamoError::validation(format!(
            "Table: '{name}' in region: '{region}' {why}"
        )))
    };
    if table.global_table_version.is_some() {
        return refuse("is already a replica of a global table");
    }
    let stream = table
        .stream_specification
        .as_ref()
        .filter(|s| s.stream_enabled);
    if stream.and_then(|s| s.stream_view_type.as_deref()) != Some("NEW_AND_OLD_IMAGES") {
        return refuse("must have DynamoDB Streams enabled with StreamViewType NEW_AND_OLD_IMAGES to be part of a global table");
    }
    if table.item_count > 0 {
        return refuse("is not empty: a table must hold no items to be added to a global table");
    }
    if table.is_creating() || table.table_status != "ACTIVE" {
        return refuse("is not ACTIVE");
    }
    Ok(())
}

/// `table` (of `region`) against `reference`, another replica: the checks
/// of [`check_replica_table`], the same key schema and key types, the same
/// billing mode and write capacity, and the same indexes (names, keys and,
/// for global ones, write capacity).
fn check_compatible(
    reference: &TableDescription,
    table: &TableDescription,
    region: &str,
) -> Result<()> {
    check_replica_table(table, region)?;
    let name = &table.table_name;
    let differ = |what: &str| {
        Err(DynamoError::validation(format!(
            "Table: '{name}' in region: '{region}' does not have the same {what} as the other replicas of the global table"
        )))
    };
    if reference.key_schema != table.key_schema || key_types(reference) != key_types(table) {
        return differ("key schema");
    }
    if reference.billing_mode() != table.billing_mode() {
        return differ("billing mode");
    }
    let provisioned = table.billing_mode() == BillingMode::Provisioned;
    let write = |t: &TableDescription| t.provisioned_throughput.write_capacity_units;
    if provisioned && write(reference) != write(table) {
        return differ("provisioned write capacity units");
    }
    if index_shapes(&reference.global_secondary_indexes, provisioned)
        != index_shapes(&table.global_secondary_indexes, provisioned)
    {
        return differ("global secondary indexes (names, key schemas and write capacity units)");
    }
    if index_shapes(&reference.local_secondary_indexes, false)
        != index_shapes(&table.local_secondary_indexes, false)
    {
        return differ("local secondary indexes (names and key schemas)");
    }
    Ok(())
}

/// The types of the attributes a table's keys (and its indexes' keys) use.
fn key_types(table: &TableDescription) -> Vec<String> {
    let mut types: Vec<String> = (table.attribute_definitions.iter())
        .map(|d| format!("{}:{:?}", d.attribute_name, d.attribute_type))
        .collect();
    types.sort();
    types
}

/// Indexes by name with their key schema and (when `with_write`) their
/// write capacity, for comparison.
fn index_shapes(
    indexes: &Option<Vec<IndexDescription>>,
    with_write: bool,
) -> Vec<(String, String, u64)> {
    let mut shapes: Vec<_> = (indexes.iter().flatten())
        .map(|i| {
            let write = (i.provisioned_throughput.as_ref())
                .filter(|_| with_write)
                .map_or(0, |t| t.write_capacity_units);
            (i.index_name.clone(), format!("{:?}", i.key_schema), write)
        })
        .collect();
    shapes.sort();
    shapes
}
