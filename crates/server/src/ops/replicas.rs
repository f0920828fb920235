//! UpdateTable's global-table parameters: ReplicaUpdates (Create, Update,
//! Delete), MultiRegionConsistency and GlobalTableWitnessUpdates, checked
//! for shape here and carried out by the engine (engine/src/replication/).

use crate::ops::common::ResponseBody;
use crate::validate::Violations;
use ferrodyn_engine::replication::group::{GroupUpdate, ReplicaAction};
use ferrodyn_engine::Engine;
use ferrodyn_types::{DynamoError, Result};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::sync::Arc;

/// One ReplicationGroupUpdate.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RawReplicaUpdate {
    create: Option<Map<String, Value>>,
    update: Option<Map<String, Value>>,
    delete: Option<Map<String, Value>>,
}

/// One GlobalTableWitnessGroupUpdate.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RawWitnessUpdate {
    create: Option<Map<String, Value>>,
    delete: Option<Map<String, Value>>,
}

/// The global-table part of an UpdateTable request.
pub struct GlobalRequest<'a> {
    pub table_name: &'a str,
    pub replica_updates: Option<Vec<RawReplicaUpdate>>,
    pub multi_region_consistency: Option<String>,
    pub witness_updates: Option<Vec<RawWitnessUpdate>>,
}

impl GlobalRequest<'_> {
    /// Whether the request changes the table's replication at all.
    pub fn present(&self) -> bool {
        self.replica_updates.is_some()
            || self.multi_region_consistency.is_some()
            || self.witness_updates.is_some()
    }
}

/// UpdateTable's GlobalTableSettingsReplicationMode and
/// DisassociationProtectionEnabled, which change the table's group alone.
pub struct GroupFlags {
    pub settings_mode: Option<String>,
    pub disassociation_protection: Option<bool>,
}

impl GroupFlags {
    pub fn present(&self) -> bool {
        self.settings_mode.is_some() || self.disassociation_protection.is_some()
    }
}

/// Sets the [`GroupFlags`] given (one UpdateTable may give both).
pub fn set_flags(engine: &Arc<Engine>, name: &str, flags: GroupFlags) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    v.one_of(
        "globalTableSettingsReplicationMode",
        flags.settings_mode.as_deref(),
        &["ENABLED", "DISABLED", "ENABLED_WITH_OVERRIDES"],
    );
    v.finish()?;
    let mut description = None;
    if let Some(mode) = &flags.settings_mode {
        description = Some(engine.set_settings_replication_mode(name, mode)?);
    }
    if let Some(enabled) = flags.disassociation_protection {
        description = Some(engine.set_disassociation_protection(name, enabled)?);
    }
    let description = description.expect("GroupFlags::present was checked");
    let mut body = ResponseBody::default();
    let description = serde_json::to_value(description).expect("plain data always serialises");
    body.value("TableDescription", description);
    body.finish()
}

pub fn run(engine: &Arc<Engine>, request: GlobalRequest<'_>) -> Result<Vec<u8>> {
    let update = check(
        request.replica_updates,
        request.multi_region_consistency,
        request.witness_updates,
    )?;
    let description = engine.update_replicas(request.table_name, update)?;
    let mut body = ResponseBody::default();
    let description = serde_json::to_value(description).expect("plain data always serialises");
    body.value("TableDescription", description);
    body.finish()
}

fn check(
    replicas: Option<Vec<RawReplicaUpdate>>,
    consistency: Option<String>,
    witnesses: Option<Vec<RawWitnessUpdate>>,
) -> Result<GroupUpdate> {
    let mut v = Violations::default();
    v.one_of(
        "multiRegionConsistency",
        consistency.as_deref(),
        &["EVENTUAL", "STRONG"],
    );
    let mut update = GroupUpdate {
        strong: consistency.as_deref().map(|c| c == "STRONG"),
        ..GroupUpdate::default()
    };
    for (n, raw) in replicas.into_iter().flatten().enumerate() {
        let field = format!("replicaUpdates.{}.member", n + 1);
        let actions = [
            ("create", raw.create),
            ("update", raw.update),
            ("delete", raw.delete),
        ];
        let given: Vec<_> = actions
            .into_iter()
            .filter_map(|(name, a)| Some((name, a?)))
            .collect();
        let [(name, mut action)] = <[_; 1]>::try_from(given).map_err(|_| {
            DynamoError::validation("One or more parameter values were invalid: exactly one of Create, Update or Delete must be given in each ReplicaUpdates member")
        })?;
        let region = action
            .remove("RegionName")
            .and_then(|r| r.as_str().map(str::to_string));
        if !v.not_null(&format!("{field}.{name}.regionName"), &region) {
            continue;
        }
        let region = region.expect("checked above");
        update.replicas.push(match name {
            "create" => ReplicaAction::Create {
                region,
                settings: action,
            },
            "update" => ReplicaAction::Update {
                region,
                settings: action,
            },
            _ => ReplicaAction::Delete { region },
        });
    }
    for (n, raw) in witnesses.into_iter().flatten().enumerate() {
        let field = format!("globalTableWitnessUpdates.{}.member", n + 1);
        let (name, create, action) = match (raw.create, raw.delete) {
            (Some(a), None) => ("create", true, a),
            (None, Some(a)) => ("delete", false, a),
            _ => {
                return Err(DynamoError::validation(
                    "One or more parameter values were invalid: exactly one of Create or Delete must be given in each GlobalTableWitnessUpdates member",
                ))
            }
        };
        let region = action
            .get("RegionName")
            .and_then(Value::as_str)
            .map(str::to_string);
        if v.not_null(&format!("{field}.{name}.regionName"), &region) {
            update
                .witnesses
                .push((region.expect("checked above"), create));
        }
    }
    v.finish()?;
    if update.replicas.is_empty() && update.witnesses.is_empty() {
        return Err(DynamoError::validation(
            "MultiRegionConsistency can only be given with ReplicaUpdates that create replicas",
        ));
    }
    Ok(update)
}
