//! CreateBackup, DescribeBackup, ListBackups, DeleteBackup,
//! RestoreTableFromBackup, and point-in-time recovery's
//! UpdateContinuousBackups, DescribeContinuousBackups and
//! RestoreTableToPointInTime: field constraints here (the service model's
//! lengths, patterns, enums and ranges), everything else in the engine
//! (`ferrodyn_engine::backups`, `::restore`, `::recovery`).

use crate::ops::common::ResponseBody;
use crate::ops::table_schema::{check_throughput, RawThroughput};
use crate::validate::Violations;
use ferrodyn_engine::backups::{BackupListing, BackupTypeFilter};
use ferrodyn_engine::recovery::RestoreTime;
use ferrodyn_engine::restore::{IndexOverride, RestoreOverrides};
use ferrodyn_engine::schema::BillingMode;
use ferrodyn_engine::Engine;
use ferrodyn_types::{DynamoError, Result};
use serde::Deserialize;
use std::sync::Arc;

/// BackupArn's length bounds in the service model.
const ARN_CHARS: (usize, usize) = (37, 1024);

/// ListBackups' Limit bounds.
const LIST_LIMIT: (i64, i64) = (1, 100);

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct CreateRequest {
    table_name: Option<String>,
    backup_name: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ArnRequest {
    backup_arn: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListRequest {
    table_name: Option<String>,
    limit: Option<i64>,
    time_range_lower_bound: Option<f64>,
    time_range_upper_bound: Option<f64>,
    exclusive_start_backup_arn: Option<String>,
    backup_type: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RestoreRequest {
    target_table_name: Option<String>,
    backup_arn: Option<String>,
    #[serde(flatten)]
    overrides: RawOverrides,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PointInTimeRequest {
    source_table_name: Option<String>,
    source_table_arn: Option<String>,
    target_table_name: Option<String>,
    use_latest_restorable_time: Option<bool>,
    restore_date_time: Option<f64>,
    #[serde(flatten)]
    overrides: RawOverrides,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct UpdateContinuousRequest {
    table_name: Option<String>,
    point_in_time_recovery_specification: Option<RecoverySpecification>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RecoverySpecification {
    point_in_time_recovery_enabled: Option<bool>,
    recovery_period_in_days: Option<i64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeContinuousRequest {
    table_name: Option<String>,
}

/// The `...Override` members both restore operations take.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RawOverrides {
    billing_mode_override: Option<String>,
    provisioned_throughput_override: Option<RawThroughput>,
    global_secondary_index_override: Option<Vec<RawIndexOverride>>,
    local_secondary_index_override: Option<Vec<RawIndexOverride>>,
    #[serde(rename = "SSESpecificationOverride")]
    sse_specification_override: Option<SseOverride>,
    on_demand_throughput_override: Option<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RawIndexOverride {
    index_name: Option<String>,
    provisioned_throughput: Option<RawThroughput>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct SseOverride {
    enabled: Option<bool>,
}

fn respond(name: &str, value: impl serde::Serialize) -> Result<Vec<u8>> {
    let mut body = ResponseBody::default();
    body.value(
        name,
        serde_json::to_value(value).expect("plain data always serialises"),
    );
    body.finish()
}

/// A BackupArn member's constraints.
fn check_arn(v: &mut Violations, arn: &Option<String>) {
    if v.not_null("backupArn", arn) {
        v.length("backupArn", arn.as_deref(), ARN_CHARS.0, ARN_CHARS.1);
    }
}

pub fn create(engine: &Arc<Engine>, request: CreateRequest) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    v.table_name_or_arn("tableName", &request.table_name);
    match &request.backup_name {
        Some(name) => v.name_rules("backupName", name, 3, 255),
        None => {
            v.not_null("backupName", &request.backup_name);
        }
    }
    let (table, name) = v.finish_with(request.table_name.zip(request.backup_name))?;
    respond("BackupDetails", engine.create_backup(&table, &name)?)
}

pub fn describe(engine: &Arc<Engine>, request: ArnRequest) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    check_arn(&mut v, &request.backup_arn);
    let arn = v.finish_with(request.backup_arn)?;
    respond("BackupDescription", engine.describe_backup(&arn)?)
}

pub fn delete(engine: &Arc<Engine>, request: ArnRequest) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    check_arn(&mut v, &request.backup_arn);
    let arn = v.finish_with(request.backup_arn)?;
    respond("BackupDescription", engine.delete_backup(&arn)?)
}

pub fn list(engine: &Arc<Engine>, request: ListRequest) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    if let Some(name) = &request.table_name {
        v.existing_table_rules("tableName", name);
    }
    v.range("limit", request.limit, LIST_LIMIT.0, Some(LIST_LIMIT.1));
    v.length(
        "exclusiveStartBackupArn",
        request.exclusive_start_backup_arn.as_deref(),
        ARN_CHARS.0,
        ARN_CHARS.1,
    );
    let types = ["USER", "SYSTEM", "AWS_BACKUP", "ALL"];
    v.one_of("backupType", request.backup_type.as_deref(), &types);
    v.finish()?;
    if let (Some(lower), Some(upper)) = (
        request.time_range_lower_bound,
        request.time_range_upper_bound,
    ) {
        if lower > upper {
            return Err(DynamoError::validation(
                "Time range lower bound must be less than or equal to upper bound",
            ));
        }
    }
    // Creation times are whole milliseconds; a bound sent as seconds in a
    // float (every SDK) can arrive a hair below the millisecond it names.
    let to_millisecond = |seconds: f64| (seconds * 1000.0).round() / 1000.0;
    let listing = BackupListing {
        table_name: request.table_name,
        created_from: request.time_range_lower_bound.map(to_millisecond),
        created_before: request.time_range_upper_bound.map(to_millisecond),
        backup_type: match request.backup_type.as_deref() {
            Some("SYSTEM") => BackupTypeFilter::System,
            Some("AWS_BACKUP") => BackupTypeFilter::AwsBackup,
            Some("ALL") => BackupTypeFilter::All,
            _ => BackupTypeFilter::User,
        },
        limit: request.limit.map_or(LIST_LIMIT.1 as usize, |l| l as usize),
        exclusive_start_arn: request.exclusive_start_backup_arn,
    };
    let (summaries, last) = engine.list_backups(&listing)?;
    let mut body = ResponseBody::default();
    body.value(
        "BackupSummaries",
        serde_json::to_value(summaries).expect("plain data always serialises"),
    );
    if let Some(last) = last {
        body.value("LastEvaluatedBackupArn", serde_json::Value::String(last));
    }
    body.finish()
}

pub fn restore(engine: &Arc<Engine>, request: RestoreRequest) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    v.table_name("targetTableName", &request.target_table_name);
    check_arn(&mut v, &request.backup_arn);
    let overrides = check_overrides(&mut v, request.overrides);
    let checked = (|| Some((request.target_table_name?, request.backup_arn?, overrides?)))();
    let (target, arn, overrides) = v.finish_with(checked)?;
    let description = engine.restore_table_from_backup(&target, &arn, overrides?)?;
    respond("TableDescription", description)
}

pub fn restore_to_point_in_time(
    engine: &Arc<Engine>,
    request: PointInTimeRequest,
) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    if let Some(name) = &request.source_table_name {
        v.existing_table_rules("sourceTableName", name);
    }
    v.table_name("targetTableName", &request.target_table_name);
    let overrides = check_overrides(&mut v, request.overrides);
    let checked = (|| Some((request.target_table_name?, overrides?)))();
    let (target, overrides) = v.finish_with(checked)?;
    let source = match (request.source_table_name, request.source_table_arn) {
        (Some(name), None) => name,
        (None, Some(arn)) => arn,
        (Some(_), Some(_)) => {
            return Err(DynamoError::validation(
                "Only one of SourceTableName or SourceTableArn may be specified",
            ))
        }
        (None, None) => {
            return Err(DynamoError::validation(
                "Either SourceTableName or SourceTableArn must be specified",
            ))
        }
    };
    let time = match (
        request.use_latest_restorable_time,
        request.restore_date_time,
    ) {
        (Some(true), Some(_)) => {
            return Err(DynamoError::validation(
                "Only one of RestoreDateTime or UseLatestRestorableTime may be specified",
            ))
        }
        (Some(true), None) => RestoreTime::Latest,
        (_, Some(at)) => RestoreTime::At((at * 1000.0).round() / 1000.0),
        (_, None) => {
            return Err(DynamoError::validation(
                "Either RestoreDateTime or UseLatestRestorableTime must be specified",
            ))
        }
    };
    let description = engine.restore_table_to_point_in_time(&source, &target, time, overrides?)?;
    respond("TableDescription", description)
}

pub fn update_continuous_backups(
    engine: &Arc<Engine>,
    request: UpdateContinuousRequest,
) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    v.table_name_or_arn("tableName", &request.table_name);
    let field = "pointInTimeRecoverySpecification";
    let spec = &request.point_in_time_recovery_specification;
    if v.not_null(field, spec) {
        let spec = spec.as_ref().expect("checked present");
        v.not_null(
            &format!("{field}.pointInTimeRecoveryEnabled"),
            &spec.point_in_time_recovery_enabled,
        );
        v.range(
            &format!("{field}.recoveryPeriodInDays"),
            spec.recovery_period_in_days,
            1,
            Some(35),
        );
    }
    let checked = (|| {
        let spec = request.point_in_time_recovery_specification?;
        Some((
            request.table_name?,
            spec.point_in_time_recovery_enabled?,
            spec.recovery_period_in_days,
        ))
    })();
    let (table, enabled, days) = v.finish_with(checked)?;
    if !enabled && days.is_some() {
        return Err(DynamoError::validation(
            "One or more parameter values were invalid: RecoveryPeriodInDays can only be specified when PointInTimeRecoveryEnabled is true",
        ));
    }
    let days = days.map(|d| d as u32);
    let description = engine.update_continuous_backups(&table, enabled, days)?;
    respond("ContinuousBackupsDescription", description)
}

pub fn describe_continuous_backups(
    engine: &Arc<Engine>,
    request: DescribeContinuousRequest,
) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    v.table_name_or_arn("tableName", &request.table_name);
    let table = v.finish_with(request.table_name)?;
    respond(
        "ContinuousBackupsDescription",
        engine.describe_continuous_backups(&table)?,
    )
}

/// The override members' constraints; the overrides, or the first rule
/// between them that fails (outer None: a member is unusable).
fn check_overrides(v: &mut Violations, raw: RawOverrides) -> Option<Result<RestoreOverrides>> {
    let modes = ["PROVISIONED", "PAY_PER_REQUEST"];
    v.one_of(
        "billingModeOverride",
        raw.billing_mode_override.as_deref(),
        &modes,
    );
    let provisioned = check_throughput(
        v,
        "provisionedThroughputOverride",
        raw.provisioned_throughput_override.as_ref(),
    );
    let gsis = index_overrides(
        v,
        "globalSecondaryIndexOverride",
        raw.global_secondary_index_override,
    );
    let lsis = index_overrides(
        v,
        "localSecondaryIndexOverride",
        raw.local_secondary_index_override,
    );
    let (provisioned, global_indexes, local_indexes) = (provisioned?, gsis?, lsis?);
    if raw.sse_specification_override.and_then(|s| s.enabled) == Some(true) {
        return Some(Err(DynamoError::validation(
            "Server-side encryption with KMS keys is not supported by Ferrodyn (SSESpecificationOverride.Enabled=true)",
        )));
    }
    if raw.on_demand_throughput_override.is_some() {
        return Some(Err(DynamoError::validation(
            "OnDemandThroughputOverride is not supported by Ferrodyn: on-demand tables have no maximum throughput here",
        )));
    }
    Some(Ok(RestoreOverrides {
        billing_mode: match raw.billing_mode_override.as_deref() {
            Some("PROVISIONED") => Some(BillingMode::Provisioned),
            Some(_) => Some(BillingMode::PayPerRequest),
            None => None,
        },
        provisioned,
        global_indexes,
        local_indexes,
    }))
}

/// An index override list's constraints: each member names an index and
/// may give throughput. None when a member is unusable.
fn index_overrides(
    v: &mut Violations,
    field: &str,
    list: Option<Vec<RawIndexOverride>>,
) -> Option<Option<Vec<IndexOverride>>> {
    let Some(list) = list else { return Some(None) };
    let mut out = Some(Vec::with_capacity(list.len()));
    for (i, index) in list.into_iter().enumerate() {
        let member = format!("{field}.{}.member", i + 1);
        v.table_name(&format!("{member}.indexName"), &index.index_name);
        let units = check_throughput(
            v,
            &format!("{member}.provisionedThroughput"),
            index.provisioned_throughput.as_ref(),
        );
        match (index.index_name, units, out.as_mut()) {
            (Some(name), Some(provisioned), Some(list)) => {
                list.push(IndexOverride { name, provisioned })
            }
            _ => out = None,
        }
    }
    out.map(Some)
}
