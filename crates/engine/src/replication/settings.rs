//! A global table's settings across its regions: DescribeGlobalTableSettings
//! and UpdateGlobalTableSettings (2017.11.29 groups), and
//! DescribeTableReplicaAutoScaling and UpdateTableReplicaAutoScaling (any
//! group).
//!
//! Capacity, billing mode and table class reach each region's table as a
//! [`TableSettings`], applied by [`Engine::apply_settings`] (carried by
//! [`SettingChange::Capacity`] to a region another server holds): the one
//! path for UpdateGlobalTableSettings here and for UpdateTable's capacity
//! shared with the other replicas (shared_settings.rs).
//! Auto scaling settings are stored in the group ([`GlobalTable`]'s
//! `auto_scaling`, by region: `{"Read", "Write", "Indexes": {name: {"Read",
//! "Write"}}}` in the AutoScalingSettingsDescription shape) and shown as
//! given: Ferrodyn has no Application Auto Scaling, so nothing scales.

use super::shared_settings::SettingChange;
use super::Message;
use crate::schema::{BillingMode, TableDescription};
use crate::shared::GlobalTable;
use crate::table::Table;
use crate::{Engine, TableUpdate};
use ferrodyn_types::{DynamoError, ErrorKind, Result};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::sync::Arc;

/// UpdateGlobalTableSettings (all of it) or UpdateTableReplicaAutoScaling
/// (its auto scaling members only), checked for shape. Auto scaling values
/// are AutoScalingSettingsUpdate objects.
#[derive(Clone, Debug, Default)]
pub struct SettingsUpdate {
    pub billing_mode: Option<BillingMode>,
    /// Every replica's write capacity.
    pub write_units: Option<u64>,
    pub write_auto_scaling: Option<Value>,
    /// Global indexes' write capacity, in every replica.
    pub indexes: Vec<IndexSettings>,
    pub replicas: Vec<ReplicaSettings>,
}

/// One index's units and auto scaling (write for the whole table, read for
/// one replica).
#[derive(Clone, Debug, Default)]
pub struct IndexSettings {
    pub name: String,
    pub units: Option<u64>,
    pub auto_scaling: Option<Value>,
}

/// One replica's read capacity, read auto scaling, indexes' read settings
/// and table class.
#[derive(Clone, Debug, Default)]
pub struct ReplicaSettings {
    pub region: String,
    pub read_units: Option<u64>,
    pub read_auto_scaling: Option<Value>,
    pub indexes: Vec<IndexSettings>,
    pub table_class: Option<String>,
}

/// A capacity, billing mode or table class change to one region's table.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct TableSettings {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub billing_mode: Option<BillingMode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provisioned: Option<(u64, u64)>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub index_throughput: Vec<(String, u64, u64)>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_class: Option<String>,
    /// A change shared by UpdateTable through another replica: this
    /// replica keeps the read units it has (read capacity is each
    /// replica's own) and takes the given ones only where it has none.
    /// UpdateGlobalTableSettings gives each region its units exactly.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub keeps_read_units: bool,
}

impl TableSettings {
    /// Whether applying it to a table described as `current` changes nothing.
    fn changes_nothing(&self, current: &TableDescription) -> bool {
        let now = &current.provisioned_throughput;
        self.billing_mode
            .is_none_or(|m| m == current.billing_mode())
            && (self.provisioned)
                .is_none_or(|p| p == (now.read_capacity_units, now.write_capacity_units))
            && self.index_throughput.is_empty()
            && self.table_class.is_none()
    }
}

impl Engine {
    /// DescribeGlobalTableSettings: each region's ReplicaSettingsDescription.
    pub fn describe_global_table_settings(self: &Arc<Self>, name: &str) -> Result<Vec<Value>> {
        let (_, group) = self.legacy_group(name)?;
        let mut shown = Vec::with_capacity(group.replicas.len());
        for replica in &group.replicas {
            let table = self.described_in(name, &replica.region)?;
            let auto = group.auto_scaling.get(&replica.region);
            shown.push(replica_settings(
                &table,
                &replica.region,
                &replica.status,
                auto,
            ));
        }
        Ok(shown)
    }

    /// UpdateGlobalTableSettings: capacity, billing mode and table class
    /// applied in every region, auto scaling stored; the settings after.
    pub fn update_global_table_settings(
        self: &Arc<Self>,
        name: &str,
        update: SettingsUpdate,
    ) -> Result<Vec<Value>> {
        let (table, mut group) = self.legacy_group(name)?;
        for replica in &update.replicas {
            if group.replica(&replica.region).is_none() {
                return Err(DynamoError::new(
                    ErrorKind::ReplicaNotFound,
                    format!(
                        "Replica not found: Global table '{name}' has no replica in region: '{}'.",
                        replica.region
                    ),
                ));
            }
        }
        check_index_names(&table.describe(), &update, ErrorKind::IndexNotFound)?;
        let mut changes = Vec::new();
        for replica in &group.replicas {
            let current = self.described_in(name, &replica.region)?;
            let change = table_settings(&current, &replica.region, &update)?;
            changes.push((replica.region.clone(), change));
        }
        // Every check before the first change: nothing is half applied.
        let auto_scaling = store_auto_scaling(&mut group, name, &update)?;
        for (region, change) in changes
            .into_iter()
            .filter(|(_, c)| *c != TableSettings::default())
        {
            let to = self.legacy_address(name, &region);
            let change = SettingChange::Capacity(change);
            self.send(&Message::ShareSetting { to, change })?;
        }
        if auto_scaling {
            self.share_group(&table, &group)?;
        }
        self.describe_global_table_settings(name)
    }

    /// DescribeTableReplicaAutoScaling: the TableAutoScalingDescription of
    /// table `name` of the request's region.
    pub fn describe_table_replica_auto_scaling(&self, name: &str) -> Result<Value> {
        let table = self.table(name)?;
        let description = table.describe();
        let own = self.region_of(&table.catalog_name).to_string();
        let group = table.global();
        let regions: Vec<(String, String)> = match &group {
            Some(g) => (g.replicas.iter())
                .map(|r| (r.region.clone(), r.status.clone()))
                .collect(),
            None => vec![(own, "ACTIVE".into())],
        };
        let replicas: Vec<Value> = regions
            .iter()
            .map(|(region, status)| {
                let auto = group.as_ref().and_then(|g| g.auto_scaling.get(region));
                replica_auto_scaling(&description, region, status, auto)
            })
            .collect();
        Ok(json!({
            "TableName": description.table_name,
            "TableStatus": description.table_status,
            "Replicas": replicas,
        }))
    }

    /// UpdateTableReplicaAutoScaling: stores the auto scaling settings in
    /// the group of table `name` (which must be a provisioned global table).
    pub fn update_table_replica_auto_scaling(
        self: &Arc<Self>,
        name: &str,
        update: SettingsUpdate,
    ) -> Result<Value> {
        let table = self.table_to_change(name)?;
        let description = table.describe();
        let Some(mut group) = table.global() else {
            return Err(DynamoError::validation(format!(
                "Table {name} is not a global table: Ferrodyn keeps replica auto scaling settings in a global table's replication group"
            )));
        };
        if description.billing_mode() != BillingMode::Provisioned {
            return Err(DynamoError::validation(format!(
                "Auto scaling settings need a table in PROVISIONED billing mode: table {name} is PAY_PER_REQUEST"
            )));
        }
        for replica in &update.replicas {
            if group.replica(&replica.region).is_none() {
                return Err(DynamoError::validation(format!(
                    "Replica in region {} of table {name} does not exist",
                    replica.region
                )));
            }
        }
        check_index_names(&description, &update, ErrorKind::ResourceNotFound)?;
        store_auto_scaling(&mut group, name, &update)?;
        self.share_group(&table, &group)?;
        self.describe_table_replica_auto_scaling(name)
    }

    /// The one way a capacity, billing mode or table class change reaches a
    /// region's table, whichever operation made it ([`SettingChange::Capacity`]).
    pub(crate) fn apply_settings(&self, name: &str, mut change: TableSettings) -> Result<()> {
        let current = self.replica_table(name)?.describe();
        if change.keeps_read_units {
            let kept = |read: u64, given: u64| if read > 0 { read } else { given };
            let read = current.provisioned_throughput.read_capacity_units;
            change.provisioned = (change.provisioned).map(|(given, w)| (kept(read, given), w));
            let indexes = current.global_secondary_indexes.iter().flatten();
            for (name, given, _) in &mut change.index_throughput {
                let own = (indexes.clone()).find(|i| &i.index_name == name);
                let read = own.and_then(|i| i.provisioned_throughput.as_ref());
                *given = kept(read.map_or(0, |t| t.read_capacity_units), *given);
            }
        }
        if change.changes_nothing(&current) {
            return Ok(());
        }
        let update = TableUpdate {
            billing_mode: change.billing_mode,
            provisioned: change.provisioned,
            stream: None,
            deletion_protection: None,
            table_class: change.table_class,
            index_throughput: change.index_throughput,
        };
        self.update_table(name, update)?;
        Ok(())
    }

    /// Gives `group` to every region of it (this one included).
    pub(crate) fn share_group(self: &Arc<Self>, table: &Table, group: &GlobalTable) -> Result<()> {
        for replica in &group.replicas {
            let to = super::address_in(self, table, &replica.region);
            self.send(&Message::Group {
                to,
                group: group.clone(),
            })?;
        }
        Ok(())
    }
}

/// Every index the update names must be a global index of `table`.
fn check_index_names(
    table: &TableDescription,
    update: &SettingsUpdate,
    kind: ErrorKind,
) -> Result<()> {
    let names: Vec<&str> = (table.global_secondary_indexes.iter().flatten())
        .map(|i| i.index_name.as_str())
        .collect();
    let named = (update.indexes.iter()).chain(update.replicas.iter().flat_map(|r| &r.indexes));
    for index in named {
        if !names.contains(&index.name.as_str()) {
            return Err(DynamoError::new(
                kind,
                format!(
                    "Index not found: table {} has no global secondary index named {}",
                    table.table_name, index.name
                ),
            ));
        }
    }
    Ok(())
}

/// The change to one region's table that `update` makes, checked against
/// the billing mode the table has and will have.
fn table_settings(
    current: &TableDescription,
    region: &str,
    update: &SettingsUpdate,
) -> Result<TableSettings> {
    let replica = update.replicas.iter().find(|r| r.region == region);
    let replica_indexes = replica.map(|r| r.indexes.as_slice()).unwrap_or_default();
    let read = replica.and_then(|r| r.read_units);
    let any_units = update.write_units.is_some()
        || read.is_some()
        || (update.indexes.iter())
            .chain(replica_indexes)
            .any(|i| i.units.is_some());
    let mut change = TableSettings {
        billing_mode: update.billing_mode.filter(|m| *m != current.billing_mode()),
        table_class: replica.and_then(|r| r.table_class.clone()),
        ..TableSettings::default()
    };
    if update.billing_mode.unwrap_or(current.billing_mode()) == BillingMode::PayPerRequest {
        if any_units {
            return Err(DynamoError::validation(format!(
                "Provisioned capacity units cannot be set for the replica in region {region}: its billing mode is PAY_PER_REQUEST"
            )));
        }
        return Ok(change);
    }
    let units = Units {
        region,
        switching: current.billing_mode() == BillingMode::PayPerRequest,
    };
    let now = &current.provisioned_throughput;
    let write = units.needed(
        update.write_units,
        now.write_capacity_units,
        "GlobalTableProvisionedWriteCapacityUnits",
    )?;
    let read = units.needed(
        read,
        now.read_capacity_units,
        "ReplicaProvisionedReadCapacityUnits",
    )?;
    if units.switching || (read, write) != (now.read_capacity_units, now.write_capacity_units) {
        change.provisioned = Some((read, write));
    }
    for index in current.global_secondary_indexes.iter().flatten() {
        let old = index.provisioned_throughput.clone().unwrap_or_default();
        let name = &index.index_name;
        let write = units.needed(
            units_of(&update.indexes, name),
            old.write_capacity_units,
            "Every global index's ProvisionedWriteCapacityUnits",
        )?;
        let read = units.needed(
            units_of(replica_indexes, name),
            old.read_capacity_units,
            "Every global index's ProvisionedReadCapacityUnits",
        )?;
        if units.switching || (read, write) != (old.read_capacity_units, old.write_capacity_units) {
            change.index_throughput.push((name.clone(), read, write));
        }
    }
    Ok(change)
}

/// The provisioned units one region's table gets.
struct Units<'a> {
    region: &'a str,
    /// The table switches from PAY_PER_REQUEST: every unit must be given.
    switching: bool,
}

impl Units<'_> {
    /// The units given, else the table's `old` ones (which a switch to
    /// PROVISIONED does not have: then `what` must be given).
    fn needed(&self, given: Option<u64>, old: u64, what: &str) -> Result<u64> {
        match given {
            Some(units) => Ok(units),
            None if !self.switching => Ok(old),
            None => Err(DynamoError::validation(format!(
                "{what} must be given to switch the replica in region {} to PROVISIONED billing mode",
                self.region
            ))),
        }
    }
}

/// The units `list` gives index `name`.
fn units_of(list: &[IndexSettings], name: &str) -> Option<u64> {
    list.iter().find(|i| i.name == name).and_then(|i| i.units)
}

/// Merges the update's auto scaling members into `group`; whether any was
/// given.
fn store_auto_scaling(
    group: &mut GlobalTable,
    table: &str,
    update: &SettingsUpdate,
) -> Result<bool> {
    let mut changed = false;
    let regions: Vec<String> = group.replicas.iter().map(|r| r.region.clone()).collect();
    for region in &regions {
        let entry = group
            .auto_scaling
            .entry(region.clone())
            .or_insert_with(|| json!({}));
        if let Some(given) = &update.write_auto_scaling {
            merge_into(entry, &["Write"], given, "Write", table)?;
            changed = true;
        }
        changed |= merge_index_scaling(entry, &update.indexes, "Write", table)?;
        for replica in update.replicas.iter().filter(|r| &r.region == region) {
            if let Some(given) = &replica.read_auto_scaling {
                merge_into(entry, &["Read"], given, "Read", table)?;
                changed = true;
            }
            changed |= merge_index_scaling(entry, &replica.indexes, "Read", table)?;
        }
    }
    group
        .auto_scaling
        .retain(|_, v| v.as_object().is_some_and(|o| !o.is_empty()));
    Ok(changed)
}

/// Merges AutoScalingSettingsUpdate `given` into the description at `path`
/// of `entry`.
/// Merges each index's auto scaling given in `indexes` into the entry's
/// `Indexes.<name>.<dimension>`; whether any was given.
fn merge_index_scaling(
    entry: &mut Value,
    indexes: &[IndexSettings],
    dimension: &str,
    table: &str,
) -> Result<bool> {
    let mut any = false;
    for index in indexes {
        if let Some(given) = &index.auto_scaling {
            let path = ["Indexes", index.name.as_str(), dimension];
            merge_into(entry, &path, given, dimension, table)?;
            any = true;
        }
    }
    Ok(any)
}

fn merge_into(
    entry: &mut Value,
    path: &[&str],
    given: &Value,
    dimension: &str,
    table: &str,
) -> Result<()> {
    let mut at = entry;
    for step in path {
        if at.get(*step).is_none() {
            at[*step] = json!({});
        }
        at = &mut at[*step];
    }
    for member in [
        "MinimumUnits",
        "MaximumUnits",
        "AutoScalingDisabled",
        "AutoScalingRoleArn",
    ] {
        if let Some(value) = given.get(member) {
            at[member] = value.clone();
        }
    }
    if let Some(policy) = given.get("ScalingPolicyUpdate") {
        let name = (policy.get("PolicyName").and_then(Value::as_str)).map_or_else(
            || format!("DynamoDB{dimension}CapacityUtilization:table/{table}"),
            str::to_string,
        );
        let shown = json!({
            "PolicyName": name,
            "TargetTrackingScalingPolicyConfiguration": policy["TargetTrackingScalingPolicyConfiguration"],
        });
        let policies = at["ScalingPolicies"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let mut kept: Vec<Value> = policies
            .into_iter()
            .filter(|p| p["PolicyName"] != name.as_str())
            .collect();
        kept.push(shown);
        at["ScalingPolicies"] = Value::Array(kept);
    }
    let (min, max) = (at["MinimumUnits"].as_u64(), at["MaximumUnits"].as_u64());
    if let (Some(min), Some(max)) = (min, max) {
        if min > max {
            return Err(DynamoError::validation(format!(
                "Auto scaling MinimumUnits ({min}) cannot be greater than MaximumUnits ({max})"
            )));
        }
    }
    Ok(())
}

/// One region's ReplicaSettingsDescription.
fn replica_settings(
    table: &TableDescription,
    region: &str,
    status: &str,
    auto: Option<&Value>,
) -> Value {
    let auto = auto.cloned().unwrap_or_default();
    let units = &table.provisioned_throughput;
    let mut summary = json!({ "BillingMode": mode_name(table.billing_mode()) });
    if let Some(when) = (table.billing_mode_summary.as_ref())
        .and_then(|s| s.last_update_to_pay_per_request_date_time)
    {
        summary["LastUpdateToPayPerRequestDateTime"] = json!(when);
    }
    let mut shown = json!({
        "RegionName": region,
        "ReplicaStatus": status,
        "ReplicaBillingModeSummary": summary,
        "ReplicaProvisionedReadCapacityUnits": units.read_capacity_units,
        "ReplicaProvisionedWriteCapacityUnits": units.write_capacity_units,
    });
    copy_both(&mut shown, "ReplicaProvisioned", &auto);
    let provisioned = table.billing_mode() == BillingMode::Provisioned;
    let indexes = indexes_shown(table, &auto, provisioned);
    if !indexes.is_empty() {
        shown["ReplicaGlobalSecondaryIndexSettings"] = Value::Array(indexes);
    }
    if let Some(class) = &table.table_class_summary {
        shown["ReplicaTableClassSummary"] = class.clone();
    }
    shown
}

/// One region's ReplicaAutoScalingDescription.
fn replica_auto_scaling(
    table: &TableDescription,
    region: &str,
    status: &str,
    auto: Option<&Value>,
) -> Value {
    let auto = auto.cloned().unwrap_or_default();
    let mut shown = json!({ "RegionName": region, "ReplicaStatus": status });
    copy_both(&mut shown, "ReplicaProvisioned", &auto);
    shown["GlobalSecondaryIndexes"] = Value::Array(indexes_shown(table, &auto, false));
    shown
}

/// Each global index's name, status and auto scaling settings, and with
/// `units` its provisioned units (ReplicaGlobalSecondaryIndexSettings, or
/// ReplicaAutoScalingDescription's GlobalSecondaryIndexes).
fn indexes_shown(table: &TableDescription, auto: &Value, units: bool) -> Vec<Value> {
    (table.global_secondary_indexes.iter().flatten())
        .map(|index| {
            let mut one = json!({
                "IndexName": index.index_name,
                "IndexStatus": index.index_status.as_deref().unwrap_or("ACTIVE"),
            });
            let throughput = index.provisioned_throughput.as_ref();
            if let Some(t) = throughput.filter(|_| units) {
                one["ProvisionedReadCapacityUnits"] = json!(t.read_capacity_units);
                one["ProvisionedWriteCapacityUnits"] = json!(t.write_capacity_units);
            }
            copy_both(&mut one, "Provisioned", &auto["Indexes"][&index.index_name]);
            one
        })
        .collect()
}

/// The stored read and write auto scaling settings of `auto` as
/// `<prefix>ReadCapacityAutoScalingSettings` and `<prefix>Write...`.
fn copy_both(into: &mut Value, prefix: &str, auto: &Value) {
    for dimension in ["Read", "Write"] {
        if auto[dimension].is_object() {
            let member = format!("{prefix}{dimension}CapacityAutoScalingSettings");
            into[member] = auto[dimension].clone();
        }
    }
}

fn mode_name(mode: BillingMode) -> &'static str {
    match mode {
        BillingMode::Provisioned => "PROVISIONED",
        BillingMode::PayPerRequest => "PAY_PER_REQUEST",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(name: Option<&str>, target: f64) -> Value {
        let mut update =
            json!({ "TargetTrackingScalingPolicyConfiguration": { "TargetValue": target } });
        if let Some(name) = name {
            update["PolicyName"] = json!(name);
        }
        json!({ "MinimumUnits": 1, "ScalingPolicyUpdate": update })
    }

    #[test]
    fn an_update_merges_members_and_replaces_the_policy_of_its_name() {
        let mut entry = json!({});
        merge_into(
            &mut entry,
            &["Write"],
            &policy(Some("p"), 50.0),
            "Write",
            "T",
        )
        .unwrap();
        let more = json!({ "MaximumUnits": 9, "ScalingPolicyUpdate": policy(Some("p"), 70.0)["ScalingPolicyUpdate"] });
        merge_into(&mut entry, &["Write"], &more, "Write", "T").unwrap();
        let write = &entry["Write"];
        assert_eq!(
            (
                write["MinimumUnits"].as_u64(),
                write["MaximumUnits"].as_u64()
            ),
            (Some(1), Some(9))
        );
        let policies = write["ScalingPolicies"].as_array().unwrap();
        assert_eq!(policies.len(), 1);
        assert_eq!(
            policies[0]["TargetTrackingScalingPolicyConfiguration"]["TargetValue"],
            70.0
        );
    }

    #[test]
    fn a_policy_without_a_name_gets_the_dimension_and_table() {
        let mut entry = json!({});
        let path = ["Indexes", "byDate", "Read"];
        merge_into(&mut entry, &path, &policy(None, 40.0), "Read", "Orders").unwrap();
        let shown = &entry["Indexes"]["byDate"]["Read"]["ScalingPolicies"][0]["PolicyName"];
        assert_eq!(shown, "DynamoDBReadCapacityUtilization:table/Orders");
    }

    #[test]
    fn a_minimum_above_the_maximum_is_refused() {
        let mut entry = json!({ "Read": { "MaximumUnits": 5 } });
        let error = merge_into(
            &mut entry,
            &["Read"],
            &json!({ "MinimumUnits": 6 }),
            "Read",
            "T",
        );
        let error = error.unwrap_err();
        assert_eq!(
            error.message,
            "Auto scaling MinimumUnits (6) cannot be greater than MaximumUnits (5)"
        );
    }
}
