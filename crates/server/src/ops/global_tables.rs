//! The 2017.11.29 (legacy) global-table operations: CreateGlobalTable,
//! UpdateGlobalTable, DescribeGlobalTable and ListGlobalTables, checked
//! for shape here and carried out by the engine
//! (engine/src/replication/legacy.rs); and CreateTable's
//! GlobalTableSourceArn (engine/src/replication/source.rs).

use crate::ops::common::ResponseBody;
use crate::validate::Violations;
use ferrodyn_engine::Engine;
use ferrodyn_types::{DynamoError, Result};
use serde::Deserialize;
use serde_json::Value;
use std::sync::Arc;

/// A Replica, CreateReplicaAction or DeleteReplicaAction: a region.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RawRegion {
    region_name: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct CreateRequest {
    global_table_name: Option<String>,
    replication_group: Option<Vec<RawRegion>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RawReplicaUpdate {
    create: Option<RawRegion>,
    delete: Option<RawRegion>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct UpdateRequest {
    global_table_name: Option<String>,
    replica_updates: Option<Vec<RawReplicaUpdate>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeRequest {
    global_table_name: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListRequest {
    exclusive_start_global_table_name: Option<String>,
    limit: Option<i64>,
    region_name: Option<String>,
}

/// ListGlobalTables' Limit when none is given (AWS's documented default).
const DEFAULT_LIST_LIMIT: usize = 100;

pub fn create(engine: &Arc<Engine>, request: CreateRequest) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    v.table_name("globalTableName", &request.global_table_name);
    v.not_null("replicationGroup", &request.replication_group);
    let regions = regions_of(&mut v, "replicationGroup", request.replication_group);
    let name = v.finish_with(request.global_table_name)?;
    let description = engine.create_global_table(&name, &regions)?;
    respond(description)
}

pub fn update(engine: &Arc<Engine>, request: UpdateRequest) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    v.table_name("globalTableName", &request.global_table_name);
    v.not_null("replicaUpdates", &request.replica_updates);
    let mut updates = Vec::new();
    for (n, raw) in request.replica_updates.into_iter().flatten().enumerate() {
        let field = format!("replicaUpdates.{}.member", n + 1);
        let (action, create, region) = match (raw.create, raw.delete) {
            (Some(action), None) => ("create", true, action.region_name),
            (None, Some(action)) => ("delete", false, action.region_name),
            _ => {
                return Err(DynamoError::validation(
                    "One or more parameter values were invalid: exactly one of Create or Delete must be given in each ReplicaUpdates member",
                ))
            }
        };
        if v.not_null(&format!("{field}.{action}.regionName"), &region) {
            updates.push((region.expect("checked above"), create));
        }
    }
    let name = v.finish_with(request.global_table_name)?;
    if updates.is_empty() {
        return Err(DynamoError::validation(
            "ReplicaUpdates must hold at least one Create or Delete",
        ));
    }
    respond(engine.update_global_table(&name, &updates)?)
}

pub fn describe(engine: &Arc<Engine>, request: DescribeRequest) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    v.table_name("globalTableName", &request.global_table_name);
    let name = v.finish_with(request.global_table_name)?;
    respond(engine.describe_global_table(&name)?)
}

pub fn list(engine: &Arc<Engine>, request: ListRequest) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    if let Some(start) = &request.exclusive_start_global_table_name {
        v.name_rules("exclusiveStartGlobalTableName", start, 3, 255);
    }
    v.range("limit", request.limit, 1, None);
    v.finish()?;
    let limit = request.limit.map_or(DEFAULT_LIST_LIMIT, |l| l as usize);
    let (tables, last) = engine.list_global_tables(
        request.exclusive_start_global_table_name.as_deref(),
        limit,
        request.region_name.as_deref(),
    );
    let mut body = ResponseBody::default();
    body.value("GlobalTables", Value::Array(tables));
    if let Some(last) = last {
        body.value("LastEvaluatedGlobalTableName", Value::String(last));
    }
    body.finish()
}

/// The RegionName of each member of a list of Replica objects.
fn regions_of(v: &mut Violations, field: &str, list: Option<Vec<RawRegion>>) -> Vec<String> {
    let mut regions = Vec::new();
    for (n, raw) in list.into_iter().flatten().enumerate() {
        let member = format!("{field}.{}.member.regionName", n + 1);
        if v.not_null(&member, &raw.region_name) {
            regions.push(raw.region_name.expect("checked above"));
        }
    }
    regions
}

fn respond(description: Value) -> Result<Vec<u8>> {
    let mut body = ResponseBody::default();
    body.value("GlobalTableDescription", description);
    body.finish()
}

/// CreateTable's GlobalTableSourceArn and GlobalTableSettingsReplicationMode.
pub struct SourceRequest {
    pub table_name: Option<String>,
    pub source_arn: Option<String>,
    pub mode: Option<String>,
    /// Whether the request has any other parameter than these three.
    pub others: bool,
}

/// CreateTable with GlobalTableSourceArn: a new replica of the source
/// table's group, with the source's schema and settings; None when the
/// request is a plain CreateTable.
pub fn create_from_source(engine: &Arc<Engine>, request: SourceRequest) -> Option<Result<Vec<u8>>> {
    let (source, mode) = match (request.source_arn, request.mode) {
        (None, None) => return None,
        (None, Some(_)) => {
            return Some(Err(DynamoError::validation(
                "GlobalTableSettingsReplicationMode can only be given with GlobalTableSourceArn: Ferrodyn keeps it in a global table's replication group (UpdateTable sets it on an existing replica)",
            )))
        }
        (Some(source), mode) => (source, mode),
    };
    Some(create_replica(
        engine,
        request.table_name,
        source,
        mode,
        request.others,
    ))
}

fn create_replica(
    engine: &Arc<Engine>,
    table_name: Option<String>,
    source: String,
    mode: Option<String>,
    others: bool,
) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    v.table_name("tableName", &table_name);
    v.length("globalTableSourceArn", Some(&source), 1, 1024);
    v.one_of(
        "globalTableSettingsReplicationMode",
        mode.as_deref(),
        &["ENABLED", "DISABLED", "ENABLED_WITH_OVERRIDES"],
    );
    let name = v.finish_with(table_name)?;
    if mode.as_deref() != Some("ENABLED") {
        return Err(DynamoError::validation(
            "GlobalTableSettingsReplicationMode must be ENABLED when GlobalTableSourceArn is given",
        ));
    }
    if others {
        return Err(DynamoError::validation(
            "A replica created with GlobalTableSourceArn takes its key schema, indexes and settings from the source table: Ferrodyn accepts only TableName, GlobalTableSourceArn and GlobalTableSettingsReplicationMode with it",
        ));
    }
    let description = engine.create_replica_from_source(&name, &source, "ENABLED")?;
    let mut body = ResponseBody::default();
    let description = serde_json::to_value(description).expect("plain data always serialises");
    body.value("TableDescription", description);
    body.finish()
}
