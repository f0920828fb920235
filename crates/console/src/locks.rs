//! The uniqueness-lock view: `ferrodyn unique locks` and `repair` for the
//! page. Each UNIQ# marker comes back beside its owner with its status
//! (held, orphan, stale) and owners missing a marker are listed; repair
//! fixes each finding in its own guarded transaction.

use crate::api::{required, text, ApiFailure, ApiResult};
use ferrodyn_client::Client;
use ferrodyn_patterns::unique::locks::LocksOptions;
use ferrodyn_patterns::unique::{
    self, Constraint, LocksReport, MarkerLayout, MarkerStatus, UniqueError, UniqueSpec,
};
use serde_json::{json, Value};

fn failure(e: UniqueError) -> ApiFailure {
    match e {
        UniqueError::Api(e) => e.into(),
        other => ApiFailure::invalid(other.to_string()),
    }
}

/// Loads the constraint `{table, entity, attributes: [..] | "a,b"}` and
/// lists its markers (`scanOwners`: also Scan owners with that key prefix).
fn load(client: &Client, request: &Value) -> Result<(Constraint, LocksReport), ApiFailure> {
    let attributes: Vec<String> = match &request["attributes"] {
        Value::Array(list) => list
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        Value::String(text) => text
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    };
    if attributes.is_empty() {
        return Err(ApiFailure::invalid("name at least one unique attribute"));
    }
    let layout = match text(request, "layout") {
        None | Some("per-value") => MarkerLayout::PerValue,
        Some("grouped") => MarkerLayout::Grouped,
        Some(other) => {
            return Err(ApiFailure::invalid(format!(
                "unknown marker layout `{other}`: per-value or grouped"
            )))
        }
    };
    let spec = UniqueSpec {
        table: required(request, "table")?.into(),
        entity: required(request, "entity")?.into(),
        attributes,
        layout,
    };
    let constraint = Constraint::load(client, spec).map_err(failure)?;
    let options = LocksOptions {
        value_prefix: text(request, "valuePrefix").map(str::to_string),
        scan_owners: text(request, "scanOwners").map(str::to_string),
    };
    let report = unique::locks::locks(client, &constraint, &options).map_err(failure)?;
    Ok((constraint, report))
}

fn report_json(report: &LocksReport) -> Value {
    let markers: Vec<Value> = report
        .markers
        .iter()
        .map(|m| {
            let (status, current, why) = match &m.status {
                MarkerStatus::Held => ("held", None, None),
                MarkerStatus::Orphan => ("orphan", None, None),
                MarkerStatus::Stale { current } => ("stale", current.clone(), None),
                MarkerStatus::Unreadable { why } => ("unreadable", None, Some(why)),
            };
            json!({
                "attribute": m.attribute, "name": m.name, "value": m.value,
                "owner": m.owner, "status": status, "current": current, "why": why,
                "claimant": m.claimant,
            })
        })
        .collect();
    let missing: Vec<Value> = report
        .missing
        .iter()
        .map(|m| json!({ "owner": m.owner, "attribute": m.attribute, "value": m.value, "heldBy": m.held_by }))
        .collect();
    json!({
        "markers": markers,
        "missing": missing,
        "ownersScanned": report.owners_scanned,
        "listedBy": report.listed_by,
        "healthy": report.is_healthy(),
    })
}

pub fn inspect(client: &Client, request: &Value) -> ApiResult {
    let (_, report) = load(client, request)?;
    Ok(report_json(&report))
}

/// `{table}` → the constraints the table's markers show (layout, entity,
/// attributes, owners' key prefix) and what finding them and scanning the
/// owners cost: the Locks view fills its form from this.
pub fn discover(client: &Client, request: &Value) -> ApiResult {
    let table = required(request, "table")?;
    let found = unique::discover::discover(client, table).map_err(failure)?;
    let described = client.call("DescribeTable", &json!({ "TableName": table }))?;
    let bytes = described["Table"]["TableSizeBytes"].as_u64().unwrap_or(0);
    Ok(json!({
        "layout": match found.layout { MarkerLayout::PerValue => "per-value", MarkerLayout::Grouped => "grouped" },
        "entity": found.entity,
        "attributes": found.attributes,
        "ownerPrefix": found.owner_prefix,
        "markers": found.markers,
        "scanned": found.scanned,
        "readUnits": found.read_units,
        "complete": found.complete,
        // An eventually consistent Scan of the whole table: half a unit per 4 KB.
        "ownerScanUnits": (bytes as f64 / 4096.0 / 2.0).ceil(),
    }))
}

/// Re-reads the markers, repairs what is wrong (only the finding named by
/// `only` — `{marker}` or `{owner, attribute}` — when given), and answers
/// the fixes and the markers as they are afterwards.
pub fn repair(client: &Client, request: &Value) -> ApiResult {
    let (constraint, mut report) = load(client, request)?;
    if let Some(only) = request.get("only").filter(|o| o.is_object()) {
        report
            .markers
            .retain(|m| only["marker"].as_str() == Some(m.name.as_str()));
        report.missing.retain(|m| {
            only["attribute"].as_str() == Some(m.attribute.as_str())
                && only["owner"].as_object() == Some(&m.owner)
        });
    }
    let repaired = unique::locks::repair(client, &constraint, &report).map_err(failure)?;
    let (_, after) = load(client, request)?;
    Ok(json!({
        "fixed": repaired.fixed,
        "skipped": repaired.skipped,
        "after": report_json(&after),
    }))
}
