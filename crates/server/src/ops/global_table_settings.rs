//! DescribeGlobalTableSettings, UpdateGlobalTableSettings,
//! DescribeTableReplicaAutoScaling and UpdateTableReplicaAutoScaling: the
//! requests' shapes (AutoScalingSettingsUpdate included) checked here, the
//! work done by the engine (engine/src/replication/settings.rs), which
//! stores auto scaling settings and shows them: nothing scales.

use crate::ops::common::ResponseBody;
use crate::validate::Violations;
use ferrodyn_engine::replication::settings::{IndexSettings, ReplicaSettings, SettingsUpdate};
use ferrodyn_engine::schema::BillingMode;
use ferrodyn_engine::Engine;
use ferrodyn_types::{DynamoError, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;

/// AutoScalingSettingsUpdate.
#[derive(Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct RawAutoScaling {
    #[serde(skip_serializing_if = "Option::is_none")]
    minimum_units: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    maximum_units: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    auto_scaling_disabled: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    auto_scaling_role_arn: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    scaling_policy_update: Option<RawPolicy>,
}

/// AutoScalingPolicyUpdate.
#[derive(Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct RawPolicy {
    #[serde(skip_serializing_if = "Option::is_none")]
    policy_name: Option<String>,
    target_tracking_scaling_policy_configuration: Option<RawTargetTracking>,
}

/// AutoScalingTargetTrackingScalingPolicyConfigurationUpdate.
#[derive(Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct RawTargetTracking {
    #[serde(skip_serializing_if = "Option::is_none")]
    disable_scale_in: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    scale_in_cooldown: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    scale_out_cooldown: Option<i64>,
    target_value: Option<f64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeRequest {
    global_table_name: Option<String>,
}

/// GlobalTableGlobalSecondaryIndexSettingsUpdate,
/// ReplicaGlobalSecondaryIndexSettingsUpdate, and the auto scaling
/// requests' index members: one index's units and auto scaling.
#[derive(Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct RawIndex {
    index_name: Option<String>,
    #[serde(alias = "ProvisionedReadCapacityUnits")]
    provisioned_write_capacity_units: Option<i64>,
    #[serde(
        alias = "ProvisionedReadCapacityAutoScalingSettingsUpdate",
        alias = "ProvisionedWriteCapacityAutoScalingUpdate",
        alias = "ProvisionedReadCapacityAutoScalingUpdate"
    )]
    provisioned_write_capacity_auto_scaling_settings_update: Option<RawAutoScaling>,
}

/// ReplicaSettingsUpdate, and UpdateTableReplicaAutoScaling's
/// ReplicaAutoScalingUpdate.
#[derive(Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct RawReplica {
    region_name: Option<String>,
    replica_provisioned_read_capacity_units: Option<i64>,
    #[serde(alias = "ReplicaProvisionedReadCapacityAutoScalingUpdate")]
    replica_provisioned_read_capacity_auto_scaling_settings_update: Option<RawAutoScaling>,
    #[serde(alias = "ReplicaGlobalSecondaryIndexUpdates")]
    replica_global_secondary_index_settings_update: Option<Vec<RawIndex>>,
    replica_table_class: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct UpdateRequest {
    global_table_name: Option<String>,
    global_table_billing_mode: Option<String>,
    global_table_provisioned_write_capacity_units: Option<i64>,
    global_table_provisioned_write_capacity_auto_scaling_settings_update: Option<RawAutoScaling>,
    global_table_global_secondary_index_settings_update: Option<Vec<RawIndex>>,
    replica_settings_update: Option<Vec<RawReplica>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct AutoScalingRequest {
    table_name: Option<String>,
    global_secondary_index_updates: Option<Vec<RawIndex>>,
    provisioned_write_capacity_auto_scaling_update: Option<RawAutoScaling>,
    replica_updates: Option<Vec<RawReplica>>,
}

pub fn describe(engine: &Arc<Engine>, request: DescribeRequest) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    v.table_name("globalTableName", &request.global_table_name);
    let name = v.finish_with(request.global_table_name)?;
    let settings = engine.describe_global_table_settings(&name)?;
    settings_body(&name, settings)
}

pub fn update(engine: &Arc<Engine>, request: UpdateRequest) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    v.table_name("globalTableName", &request.global_table_name);
    v.one_of(
        "globalTableBillingMode",
        request.global_table_billing_mode.as_deref(),
        &["PROVISIONED", "PAY_PER_REQUEST"],
    );
    let write_field = "globalTableProvisionedWriteCapacityUnits";
    v.range(
        write_field,
        request.global_table_provisioned_write_capacity_units,
        1,
        None,
    );
    let indexes = request.global_table_global_secondary_index_settings_update;
    let replicas = request.replica_settings_update;
    v.count(
        "globalTableGlobalSecondaryIndexSettingsUpdate",
        indexes.as_deref(),
        1,
        20,
    );
    v.count("replicaSettingsUpdate", replicas.as_deref(), 1, 50);
    let write_auto = (request.global_table_provisioned_write_capacity_auto_scaling_settings_update)
        .map(|a| {
            auto_scaling(
                &mut v,
                "globalTableProvisionedWriteCapacityAutoScalingSettingsUpdate",
                a,
            )
        });
    let update = SettingsUpdate {
        billing_mode: request
            .global_table_billing_mode
            .as_deref()
            .and_then(billing_mode),
        write_units: units(request.global_table_provisioned_write_capacity_units),
        write_auto_scaling: write_auto,
        indexes: index_settings(
            &mut v,
            "globalTableGlobalSecondaryIndexSettingsUpdate",
            indexes,
        ),
        replicas: replica_settings(&mut v, "replicaSettingsUpdate", replicas),
    };
    let name = v.finish_with(request.global_table_name)?;
    if is_empty(&update) {
        return Err(DynamoError::validation(
            "UpdateGlobalTableSettings needs at least one setting to change",
        ));
    }
    let settings = engine.update_global_table_settings(&name, update)?;
    settings_body(&name, settings)
}

pub fn describe_auto_scaling(
    engine: &Arc<Engine>,
    request: DescribeRequestByTable,
) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    v.table_name_or_arn("tableName", &request.table_name);
    let name = v.finish_with(request.table_name)?;
    auto_scaling_body(engine.describe_table_replica_auto_scaling(&name)?)
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeRequestByTable {
    table_name: Option<String>,
}

pub fn update_auto_scaling(engine: &Arc<Engine>, request: AutoScalingRequest) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    v.table_name_or_arn("tableName", &request.table_name);
    v.count(
        "globalSecondaryIndexUpdates",
        request.global_secondary_index_updates.as_deref(),
        1,
        usize::MAX,
    );
    v.count(
        "replicaUpdates",
        request.replica_updates.as_deref(),
        1,
        usize::MAX,
    );
    let write_auto = (request.provisioned_write_capacity_auto_scaling_update)
        .map(|a| auto_scaling(&mut v, "provisionedWriteCapacityAutoScalingUpdate", a));
    let update = SettingsUpdate {
        write_auto_scaling: write_auto,
        indexes: index_settings(
            &mut v,
            "globalSecondaryIndexUpdates",
            request.global_secondary_index_updates,
        ),
        replicas: replica_settings(&mut v, "replicaUpdates", request.replica_updates),
        ..SettingsUpdate::default()
    };
    let name = v.finish_with(request.table_name)?;
    if is_empty(&update) {
        return Err(DynamoError::validation(
            "UpdateTableReplicaAutoScaling needs at least one of GlobalSecondaryIndexUpdates, ProvisionedWriteCapacityAutoScalingUpdate or ReplicaUpdates",
        ));
    }
    auto_scaling_body(engine.update_table_replica_auto_scaling(&name, update)?)
}

fn billing_mode(name: &str) -> Option<BillingMode> {
    match name {
        "PROVISIONED" => Some(BillingMode::Provisioned),
        "PAY_PER_REQUEST" => Some(BillingMode::PayPerRequest),
        _ => None,
    }
}

fn units(value: Option<i64>) -> Option<u64> {
    value.and_then(|u| u64::try_from(u).ok())
}

fn is_empty(update: &SettingsUpdate) -> bool {
    update.billing_mode.is_none()
        && update.write_units.is_none()
        && update.write_auto_scaling.is_none()
        && update.indexes.is_empty()
        && update.replicas.is_empty()
}

/// An AutoScalingSettingsUpdate checked, as the JSON the engine stores.
fn auto_scaling(v: &mut Violations, field: &str, raw: RawAutoScaling) -> Value {
    v.range(&format!("{field}.minimumUnits"), raw.minimum_units, 1, None);
    v.range(&format!("{field}.maximumUnits"), raw.maximum_units, 1, None);
    v.length(
        &format!("{field}.autoScalingRoleArn"),
        raw.auto_scaling_role_arn.as_deref(),
        1,
        1600,
    );
    if let Some(policy) = &raw.scaling_policy_update {
        let field = format!("{field}.scalingPolicyUpdate");
        v.length(
            &format!("{field}.policyName"),
            policy.policy_name.as_deref(),
            1,
            256,
        );
        let target = &policy.target_tracking_scaling_policy_configuration;
        let target_field = format!("{field}.targetTrackingScalingPolicyConfiguration");
        if v.not_null(&target_field, target) {
            let value = target.as_ref().map(|t| t.target_value);
            v.not_null(&format!("{target_field}.targetValue"), &value.flatten());
        }
    }
    serde_json::to_value(raw).expect("plain data always serialises")
}

fn index_settings(
    v: &mut Violations,
    field: &str,
    list: Option<Vec<RawIndex>>,
) -> Vec<IndexSettings> {
    let mut checked = Vec::new();
    for (n, raw) in list.into_iter().flatten().enumerate() {
        let field = format!("{field}.{}.member", n + 1);
        v.table_name(&format!("{field}.indexName"), &raw.index_name);
        v.range(
            &format!("{field}.provisionedCapacityUnits"),
            raw.provisioned_write_capacity_units,
            1,
            None,
        );
        let auto = (raw.provisioned_write_capacity_auto_scaling_settings_update)
            .map(|a| auto_scaling(v, &format!("{field}.autoScalingSettingsUpdate"), a));
        checked.push(IndexSettings {
            name: raw.index_name.unwrap_or_default(),
            units: units(raw.provisioned_write_capacity_units),
            auto_scaling: auto,
        });
    }
    checked
}

fn replica_settings(
    v: &mut Violations,
    field: &str,
    list: Option<Vec<RawReplica>>,
) -> Vec<ReplicaSettings> {
    let mut checked = Vec::new();
    for (n, raw) in list.into_iter().flatten().enumerate() {
        let field = format!("{field}.{}.member", n + 1);
        v.not_null(&format!("{field}.regionName"), &raw.region_name);
        let read_field = format!("{field}.replicaProvisionedReadCapacityUnits");
        v.range(
            &read_field,
            raw.replica_provisioned_read_capacity_units,
            1,
            None,
        );
        v.one_of(
            &format!("{field}.replicaTableClass"),
            raw.replica_table_class.as_deref(),
            &["STANDARD", "STANDARD_INFREQUENT_ACCESS"],
        );
        let auto = (raw.replica_provisioned_read_capacity_auto_scaling_settings_update).map(|a| {
            auto_scaling(
                v,
                &format!("{field}.replicaProvisionedReadCapacityAutoScalingSettingsUpdate"),
                a,
            )
        });
        let index_field = format!("{field}.replicaGlobalSecondaryIndexSettingsUpdate");
        checked.push(ReplicaSettings {
            region: raw.region_name.unwrap_or_default(),
            read_units: units(raw.replica_provisioned_read_capacity_units),
            read_auto_scaling: auto,
            indexes: index_settings(
                v,
                &index_field,
                raw.replica_global_secondary_index_settings_update,
            ),
            table_class: raw.replica_table_class,
        });
    }
    checked
}

fn settings_body(name: &str, settings: Vec<Value>) -> Result<Vec<u8>> {
    let mut body = ResponseBody::default();
    body.value("GlobalTableName", Value::String(name.to_string()));
    body.value("ReplicaSettings", Value::Array(settings));
    body.finish()
}

fn auto_scaling_body(description: Value) -> Result<Vec<u8>> {
    let mut body = ResponseBody::default();
    body.value("TableAutoScalingDescription", description);
    body.finish()
}
