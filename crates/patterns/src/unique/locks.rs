//! Inspecting and repairing the markers.
//!
//! `locks` lists every marker — grouped markers with one Query per unique
//! attribute; per-value markers with a Query of the sparse `uniq_attr` index
//! when the table has one, else with a Scan of the table (the report says
//! which) — reads the owners they name (BatchGetItem), and
//! classifies each marker: held by its owner, orphaned (the owner is gone),
//! or stale (the owner now has another value). Owners seen through any
//! marker are also checked for a missing marker on their other unique
//! attributes. An owner with no marker at all is invisible to Query; finding
//! those needs the owners themselves listed, which [`LocksOptions::scan_owners`]
//! does, explicitly, with a Scan filtered on the owners' key prefix.
//!
//! `repair` fixes each finding in its own transaction whose conditions
//! re-check the finding, so a repair never undoes a concurrent legitimate
//! write: an orphan is deleted only if its owner is still gone, a missing
//! marker is put only if the value is still free and still the owner's.
//!
//! A repair never loses a constraint:
//! - a marker is deleted only when it is proved that no item holds its
//!   value: its owner is gone (or has another value) *and* the owners were
//!   listed ([`LocksOptions::scan_owners`]) and none of them holds it.
//!   Without the owner listing there is no proof, and the marker stays;
//! - a marker whose value another owner holds is handed to that owner in
//!   one transaction (its owner attribute updated in place, every other
//!   attribute of the marker kept), never deleted and re-added, so the value
//!   is protected at every instant;
//! - a marker that does not name its owner the way this library writes
//!   markers ([`MarkerStatus::Unreadable`]) is reported and left alone: it
//!   may belong to other code that reads it differently.

use super::ops::Transaction;
use super::{
    value_text, Constraint, MarkerLayout, UniqueError, ATTR_ATTR, OWNER_ATTR, PREFIX, VALUE_ATTR,
};
use crate::api::DynamoApi;
use crate::cancel::ActionLabel;
use crate::expr::{Builder, Kind};
use crate::reads::{batch_get, key_id};
use crate::table::display_key;
use crate::typed;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::fmt;

/// What is true of one marker.
#[derive(Debug, Clone, PartialEq)]
pub enum MarkerStatus {
    /// Its owner exists and has this value.
    Held,
    /// Its owner does not exist (or the marker names none).
    Orphan,
    /// Its owner exists but now has `current` (or no value).
    Stale { current: Option<Value> },
    /// It names no owner this library can read (no `uniq_owner` map, or no
    /// `uniq_value`): reported, never repaired.
    Unreadable { why: String },
}

/// One marker found by Query.
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    pub attribute: String,
    /// The key attribute carrying the value, e.g. `UNIQ#EMAIL#ada@lovelace.io`.
    pub name: String,
    pub value: Option<Value>,
    pub owner: Option<Map<String, Value>>,
    pub status: MarkerStatus,
    /// Another owner (not the one it names) seen holding its value: the
    /// owner an orphaned or stale marker is handed to by `repair`.
    pub claimant: Option<Map<String, Value>>,
}

/// An owner whose unique value has no marker.
#[derive(Debug, Clone, PartialEq)]
pub struct MissingMarker {
    pub owner: Map<String, Value>,
    pub attribute: String,
    pub value: Value,
    /// Another owner's marker already holds the value: a real duplicate that
    /// needs a person to decide, not a repair.
    pub held_by: Option<Map<String, Value>>,
}

/// Everything `locks` found.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LocksReport {
    pub markers: Vec<Marker>,
    pub missing: Vec<MissingMarker>,
    /// Whether owners were also listed by Scan (otherwise owners without any
    /// marker cannot have been seen).
    pub owners_scanned: bool,
    /// How the markers were read, per attribute ("Query of partition ...",
    /// "Query of index ...", "Scan of table ..."): what the listing cost.
    pub listed_by: Vec<String>,
    /// Key attribute names (for display).
    key_order: Vec<String>,
    table: String,
}

/// How far `locks` looks.
#[derive(Debug, Clone, Default)]
pub struct LocksOptions {
    /// Only markers whose value starts with this.
    pub value_prefix: Option<String>,
    /// Also Scan for owners whose partition key starts with this prefix
    /// (e.g. `ACCT#`) to find owners that have no marker at all.
    pub scan_owners: Option<String>,
}

impl LocksReport {
    /// Markers that are not held by their owner.
    pub fn problems(&self) -> impl Iterator<Item = &Marker> {
        self.markers
            .iter()
            .filter(|m| m.status != MarkerStatus::Held)
    }

    /// Whether every marker is held and no owner lacks one.
    pub fn is_healthy(&self) -> bool {
        self.problems().next().is_none() && self.missing.is_empty()
    }

    fn show(&self, key: &Map<String, Value>) -> String {
        let order: Vec<&str> = self.key_order.iter().map(String::as_str).collect();
        display_key(&self.table, &order, key)
    }
}

impl fmt::Display for LocksReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for m in &self.markers {
            let owner = m
                .owner
                .as_ref()
                .map_or_else(|| "(no owner)".to_string(), |o| self.show(o));
            let status = match &m.status {
                MarkerStatus::Held => "ok".to_string(),
                MarkerStatus::Orphan => "ORPHAN: owner is gone".to_string(),
                MarkerStatus::Stale { current: Some(v) } => {
                    format!("STALE: owner's {} is now {}", m.attribute, typed::render(v))
                }
                MarkerStatus::Stale { current: None } => {
                    format!("STALE: owner has no {}", m.attribute)
                }
                MarkerStatus::Unreadable { why } => format!("UNREADABLE: {why}; left alone"),
            };
            writeln!(f, "{}  owner {}  {}", m.name, owner, status)?;
        }
        for missing in &self.missing {
            let what = match &missing.held_by {
                None => "has no marker".to_string(),
                Some(other) => format!(
                    "DUPLICATE: the marker belongs to {}, fix by hand",
                    self.show(other)
                ),
            };
            writeln!(
                f,
                "MISSING: {} {} {} {}",
                self.show(&missing.owner),
                missing.attribute,
                typed::render(&missing.value),
                what
            )?;
        }
        for how in &self.listed_by {
            writeln!(f, "markers read by {how}")?;
        }
        let problems = self.problems().count();
        write!(
            f,
            "{} markers, {} orphaned or stale, {} owners missing a marker",
            self.markers.len(),
            problems,
            self.missing.len()
        )?;
        if !self.owners_scanned {
            write!(
                f,
                " (only owners seen through a marker were checked; --scan-owners PREFIX checks all)"
            )?;
        }
        Ok(())
    }
}

/// Lists and classifies the markers of `c`.
pub fn locks(
    api: &dyn DynamoApi,
    c: &Constraint,
    options: &LocksOptions,
) -> Result<LocksReport, UniqueError> {
    let (raw, listed_by) = read_markers(api, c, options)?;
    let owners = read_owners(api, c, options, &raw)?;
    let (mut markers, held) = classify_markers(c, raw, &owners);
    find_claimants(c, &mut markers, &owners);
    let missing = missing_markers(c, options, &owners, &held);
    Ok(LocksReport {
        markers,
        missing,
        owners_scanned: options.scan_owners.is_some(),
        listed_by,
        key_order: c
            .schema
            .attributes()
            .iter()
            .map(|s| s.to_string())
            .collect(),
        table: c.spec.table.clone(),
    })
}

/// Markers read, each with the attribute it is for.
type RawMarkers = Vec<(String, Map<String, Value>)>;
/// (attribute, value text) → the owner holding that marker.
type Held = BTreeMap<(String, String), Map<String, Value>>;

/// Every marker of every attribute (under the value prefix, if any), and
/// how each attribute's markers were listed.
fn read_markers(
    api: &dyn DynamoApi,
    c: &Constraint,
    options: &LocksOptions,
) -> Result<(RawMarkers, Vec<String>), UniqueError> {
    let mut raw = Vec::new();
    let mut listed_by = Vec::new();
    for attribute in &c.spec.attributes {
        let prefix = format!(
            "{}{}",
            c.marker_prefix(attribute),
            options.value_prefix.as_deref().unwrap_or("")
        );
        let (items, how) = list_markers(api, c, attribute, &prefix)?;
        listed_by.push(format!("{how} ({attribute})"));
        for item in items {
            raw.push((attribute.clone(), item));
        }
    }
    Ok((raw, listed_by))
}

/// The owners the markers name, plus (optionally) every owner by Scan, by
/// key id.
fn read_owners(
    api: &dyn DynamoApi,
    c: &Constraint,
    options: &LocksOptions,
    raw: &RawMarkers,
) -> Result<BTreeMap<String, Map<String, Value>>, UniqueError> {
    let mut owner_keys: Vec<Map<String, Value>> =
        raw.iter().filter_map(|(_, m)| owner_of(m)).collect();
    let mut scanned = Vec::new();
    if let Some(prefix) = &options.scan_owners {
        scanned = scan_owners(api, c, prefix)?;
        owner_keys.extend(
            scanned
                .iter()
                .map(|o| c.schema.key_of(o).unwrap_or_default()),
        );
    }
    let mut owners = batch_get(api, &c.spec.table, &owner_keys)?;
    for owner in scanned {
        let key = c.schema.key_of(&owner).unwrap_or_default();
        owners.entry(key_id(&key)).or_insert(owner);
    }
    Ok(owners)
}

/// Each marker's status against its owner (held, stale, orphan), and which
/// owner holds each marked value.
fn classify_markers(
    c: &Constraint,
    raw: RawMarkers,
    owners: &BTreeMap<String, Map<String, Value>>,
) -> (Vec<Marker>, Held) {
    let mut markers = Vec::new();
    let mut held = Held::new();
    for (attribute, item) in raw {
        let owner = owner_of(&item);
        let value = item.get(VALUE_ATTR).cloned();
        let unreadable = match (&owner, &value) {
            (None, _) => Some(format!("it names no owner in {OWNER_ATTR}")),
            (Some(_), None) => Some(format!("it holds no {VALUE_ATTR}")),
            (Some(o), Some(_)) if c.schema.key_of(o).is_err() => {
                Some(format!("its {OWNER_ATTR} is not a key of {}", c.spec.table))
            }
            _ => None,
        };
        let status = match owner.as_ref().and_then(|o| owners.get(&key_id(o))) {
            _ if unreadable.is_some() => MarkerStatus::Unreadable {
                why: unreadable.unwrap_or_default(),
            },
            None => MarkerStatus::Orphan,
            Some(found) => match (found.get(&attribute), &value) {
                (Some(current), Some(v)) if typed::same(current, v) => MarkerStatus::Held,
                (current, _) => MarkerStatus::Stale {
                    current: current.cloned(),
                },
            },
        };
        if let (Some(v), Some(o)) = (&value, &owner) {
            if let Ok(text) = value_text(&attribute, v) {
                held.insert((attribute.clone(), text), o.clone());
            }
        }
        markers.push(Marker {
            name: c.name_of_marker(&item).unwrap_or_default(),
            attribute,
            value,
            owner,
            status,
            claimant: None,
        });
    }
    (markers, held)
}

/// Sets each orphaned or stale marker's claimant: an owner read (through
/// any marker, or by the owner scan) that holds the marker's value.
fn find_claimants(
    c: &Constraint,
    markers: &mut [Marker],
    owners: &BTreeMap<String, Map<String, Value>>,
) {
    for marker in markers.iter_mut() {
        let fixable = matches!(
            marker.status,
            MarkerStatus::Orphan | MarkerStatus::Stale { .. }
        );
        let Some(value) = marker.value.as_ref().filter(|_| fixable) else {
            continue;
        };
        marker.claimant = (owners.values())
            .filter(|o| {
                o.get(&marker.attribute)
                    .is_some_and(|v| typed::same(v, value))
            })
            .filter_map(|o| c.schema.key_of(o).ok())
            .find(|key| Some(key) != marker.owner.as_ref());
    }
}

/// Values owners hold (under the value prefix, if any) that no marker of
/// theirs locks.
fn missing_markers(
    c: &Constraint,
    options: &LocksOptions,
    owners: &BTreeMap<String, Map<String, Value>>,
    held: &Held,
) -> Vec<MissingMarker> {
    let mut missing = Vec::new();
    for owner in owners.values() {
        let Ok(key) = c.schema.key_of(owner) else {
            continue;
        };
        for attribute in &c.spec.attributes {
            let Some(value) = owner.get(attribute) else {
                continue;
            };
            let Ok(text) = value_text(attribute, value) else {
                continue;
            };
            if let Some(prefix) = &options.value_prefix {
                if !text.starts_with(prefix.as_str()) {
                    continue;
                }
            }
            match held.get(&(attribute.clone(), text)) {
                Some(holder) if *holder == key => {}
                holder => missing.push(MissingMarker {
                    owner: key.clone(),
                    attribute: attribute.clone(),
                    value: value.clone(),
                    held_by: holder.cloned(),
                }),
            }
        }
    }
    missing
}

/// Every marker of `attribute` whose name starts with `prefix`, and how they
/// were read.
fn list_markers(
    api: &dyn DynamoApi,
    c: &Constraint,
    attribute: &str,
    prefix: &str,
) -> Result<(Vec<Map<String, Value>>, String), UniqueError> {
    let named = |items: Vec<Map<String, Value>>| -> Vec<Map<String, Value>> {
        items
            .into_iter()
            .filter(|i| c.name_of_marker(i).is_some_and(|n| n.starts_with(prefix)))
            .collect()
    };
    match (c.spec.layout, &c.marker_index) {
        (MarkerLayout::Grouped, _) => {
            let how = format!("Query of partition {}", c.marker_partition(attribute));
            Ok((query_markers(api, c, attribute, prefix)?, how))
        }
        (MarkerLayout::PerValue, Some(index)) => {
            let how = format!("Query of sparse index {index}");
            Ok((named(query_marker_index(api, c, index, attribute)?), how))
        }
        (MarkerLayout::PerValue, None) => {
            let how = format!(
                "Scan of table {} (no sparse GSI keyed by {ATTR_ATTR}; add one to list markers by Query)",
                c.spec.table
            );
            Ok((named(scan_partition_prefix(api, c, prefix)?), how))
        }
    }
}

/// Per-value markers of `attribute` from the sparse index (eventually
/// consistent, as every GSI read is).
fn query_marker_index(
    api: &dyn DynamoApi,
    c: &Constraint,
    index: &str,
    attribute: &str,
) -> Result<Vec<Map<String, Value>>, UniqueError> {
    let mut request = serde_json::Map::new();
    request.insert("TableName".into(), json!(c.spec.table));
    request.insert("IndexName".into(), json!(index));
    request.insert("KeyConditionExpression".into(), json!("#a = :a"));
    request.insert(
        "ExpressionAttributeNames".into(),
        json!({ "#a": ATTR_ATTR }),
    );
    request.insert(
        "ExpressionAttributeValues".into(),
        json!({ ":a": { "S": attribute.to_uppercase() } }),
    );
    all_pages(api, "Query", request)
}

/// Every item whose partition key starts with `prefix`: one strongly
/// consistent Scan of the whole table with a `begins_with` filter.
fn scan_partition_prefix(
    api: &dyn DynamoApi,
    c: &Constraint,
    prefix: &str,
) -> Result<Vec<Map<String, Value>>, UniqueError> {
    let mut b = Builder::new();
    let p = b.placeholders();
    let pk = p.name(&c.schema.partition);
    let start = p.value("prefix", json!({ "S": prefix }));
    b.add_raw(Kind::Condition, format!("begins_with({pk}, {start})"));
    let built = b.build().map_err(|e| UniqueError::Invalid(e.to_string()))?;
    let mut request = Map::new();
    request.insert("TableName".into(), json!(c.spec.table));
    request.insert("ConsistentRead".into(), json!(true));
    request.insert("FilterExpression".into(), json!(built.get(Kind::Condition)));
    for (k, v) in built.request_fields() {
        if k.starts_with("ExpressionAttribute") {
            request.insert(k, v);
        }
    }
    all_pages(api, "Scan", request)
}

/// Every item of a Query or Scan, following LastEvaluatedKey.
fn all_pages(
    api: &dyn DynamoApi,
    operation: &str,
    mut request: Map<String, Value>,
) -> Result<Vec<Map<String, Value>>, UniqueError> {
    let mut items = Vec::new();
    loop {
        let response = api.call(operation, &Value::Object(request.clone()))?;
        items.extend(
            response["Items"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|i| i.as_object().cloned()),
        );
        match response.get("LastEvaluatedKey") {
            Some(last) if !last.is_null() => {
                request.insert("ExclusiveStartKey".into(), last.clone());
            }
            _ => return Ok(items),
        }
    }
}

/// Every grouped marker of `attribute` whose sort key starts with `prefix`,
/// page by page, strongly consistent.
fn query_markers(
    api: &dyn DynamoApi,
    c: &Constraint,
    attribute: &str,
    prefix: &str,
) -> Result<Vec<Map<String, Value>>, UniqueError> {
    let mut b = Builder::new();
    let p = b.placeholders();
    let pk = p.name(&c.schema.partition);
    let sk = p.name(c.schema.sort.as_deref().unwrap_or_default());
    let partition = p.value("partition", json!({ "S": c.marker_partition(attribute) }));
    let start = p.value("prefix", json!({ "S": prefix }));
    b.add_raw(
        Kind::KeyCondition,
        format!("{pk} = {partition} AND begins_with({sk}, {start})"),
    );
    let built = b.build().map_err(|e| UniqueError::Invalid(e.to_string()))?;
    let mut request = built.request_fields();
    request.insert("TableName".into(), json!(c.spec.table));
    request.insert("ConsistentRead".into(), json!(true));
    all_pages(api, "Query", request)
}

/// Owners whose partition key starts with `prefix`: the one Scan, asked for
/// explicitly, and filtered so markers are not returned.
fn scan_owners(
    api: &dyn DynamoApi,
    c: &Constraint,
    prefix: &str,
) -> Result<Vec<Map<String, Value>>, UniqueError> {
    let mut items = scan_partition_prefix(api, c, prefix)?;
    items.retain(|i| {
        !i.get(&c.schema.partition)
            .and_then(typed::key_text)
            .is_some_and(|t| t.starts_with(PREFIX))
    });
    Ok(items)
}

/// The owner key a marker names.
fn owner_of(marker: &Map<String, Value>) -> Option<Map<String, Value>> {
    marker.get(OWNER_ATTR)?.get("M")?.as_object().cloned()
}

/// What `repair` did.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RepairReport {
    /// One line per fix applied.
    pub fixed: Vec<String>,
    /// Findings left alone, with why (duplicates, or a condition that no
    /// longer held because someone fixed it first).
    pub skipped: Vec<String>,
}

impl fmt::Display for RepairReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for line in &self.fixed {
            writeln!(f, "fixed: {line}")?;
        }
        for line in &self.skipped {
            writeln!(f, "not fixed: {line}")?;
        }
        write!(
            f,
            "{} fixed, {} not fixed",
            self.fixed.len(),
            self.skipped.len()
        )
    }
}

/// Fixes what `report` found, each fix one transaction that re-checks its
/// finding: hands an orphaned or stale marker to the owner now holding its
/// value, deletes one only when no item holds it (proved by the owner
/// listing), puts missing markers, and leaves unreadable markers alone.
pub fn repair(
    api: &dyn DynamoApi,
    c: &Constraint,
    report: &LocksReport,
) -> Result<RepairReport, UniqueError> {
    let mut result = RepairReport::default();
    let mut handed: Vec<(String, Map<String, Value>)> = Vec::new();
    for marker in report.problems() {
        let (attribute, name) = (&marker.attribute, &marker.name);
        if let MarkerStatus::Unreadable { why } = &marker.status {
            let line = format!("{attribute} marker {name}: {why}; left alone");
            result.skipped.push(line);
            continue;
        }
        if let Some(claimant) = &marker.claimant {
            let to = report.show(claimant);
            let description = format!("hand {attribute} marker {name} to {to}");
            let tx = transfer_marker_tx(c, marker, claimant)?;
            record(tx.send(api), description, &mut result)?;
            handed.push((attribute.clone(), claimant.clone()));
            continue;
        }
        let description = format!("remove {attribute} marker {name}");
        if !report.owners_scanned {
            result.skipped.push(format!(
                "{description}: not proved that no item holds its value; list the owners too \
                 (scan owners) so that repair can prove it"
            ));
            continue;
        }
        let tx = remove_marker_tx(c, marker)?;
        record(tx.send(api), description, &mut result)?;
    }
    for missing in &report.missing {
        let mine = (missing.attribute.clone(), missing.owner.clone());
        if handed.contains(&mine) {
            continue; // its marker was handed over above
        }
        let description = format!(
            "add {} marker for {} ({})",
            missing.attribute,
            report.show(&missing.owner),
            typed::render(&missing.value)
        );
        if let Some(holder) = &missing.held_by {
            result.skipped.push(format!(
                "{description}: the value is held by {}; decide which owner keeps it",
                report.show(holder)
            ));
            continue;
        }
        let tx = add_marker_tx(c, missing)?;
        record(tx.send(api), description, &mut result)?;
    }
    Ok(result)
}

fn record(
    outcome: Result<(), UniqueError>,
    description: String,
    report: &mut RepairReport,
) -> Result<(), UniqueError> {
    match outcome {
        Ok(()) => report.fixed.push(description),
        Err(UniqueError::Rejected { failures, .. }) => {
            let why: Vec<String> = failures.iter().map(ToString::to_string).collect();
            report
                .skipped
                .push(format!("{description}: {}", why.join("; ")));
        }
        Err(e) => return Err(e),
    }
    Ok(())
}

/// Delete an orphaned/stale marker if it still names the same owner, on
/// condition that the owner is still gone (or still has another value).
fn remove_marker_tx(c: &Constraint, marker: &Marker) -> Result<Transaction, UniqueError> {
    let key = c.marker_key_named(&marker.attribute, &marker.name);
    let mut tx = Transaction::default();
    let mut b = Builder::new();
    let p = b.placeholders();
    let owner_attr = p.name(OWNER_ATTR);
    let condition = match &marker.owner {
        Some(owner) => {
            let me = p.value("owner", json!({ "M": owner }));
            format!("{owner_attr} = {me}")
        }
        None => format!("attribute_not_exists({owner_attr})"),
    };
    b.add_raw(Kind::Condition, condition);
    let mut fields = Map::new();
    fields.insert("TableName".into(), json!(c.spec.table));
    fields.insert("Key".into(), json!(key));
    tx.push(
        "Delete",
        fields,
        &b,
        ActionLabel {
            what: format!("delete marker {}", marker.name),
            on_condition_failed: "the marker changed since it was inspected".into(),
        },
        None,
    )?;
    if let Some(owner) = &marker.owner {
        push_owner_lost_value(&mut tx, c, marker, owner)?;
    }
    Ok(tx)
}

/// The check that `marker`'s owner no longer holds its value (gone, or
/// another value for a stale marker), so the marker is not needed for it.
fn push_owner_lost_value(
    tx: &mut Transaction,
    c: &Constraint,
    marker: &Marker,
    owner: &Map<String, Value>,
) -> Result<(), UniqueError> {
    let mut b = Builder::new();
    let p = b.placeholders();
    let pk = p.name(&c.schema.partition);
    let condition = match (&marker.status, &marker.value) {
        (MarkerStatus::Stale { .. }, Some(value)) => {
            let attr = p.name(&marker.attribute);
            let v = p.value(&marker.attribute, value.clone());
            format!("attribute_not_exists({pk}) OR attribute_not_exists({attr}) OR {attr} <> {v}")
        }
        _ => format!("attribute_not_exists({pk})"),
    };
    b.add_raw(Kind::Condition, condition);
    let mut fields = Map::new();
    fields.insert("TableName".into(), json!(c.spec.table));
    fields.insert("Key".into(), json!(owner));
    let label = ActionLabel {
        what: format!("check owner {}", c.display(owner)),
        on_condition_failed: format!(
            "the owner holds this {} again; the marker is needed",
            marker.attribute
        ),
    };
    tx.push("ConditionCheck", fields, &b, label, None)
}

/// The check that `owner` holds `value` in `attribute`.
fn push_owner_holds(
    tx: &mut Transaction,
    c: &Constraint,
    owner: &Map<String, Value>,
    attribute: &str,
    value: &Value,
) -> Result<(), UniqueError> {
    let mut b = Builder::new();
    let p = b.placeholders();
    let attr = p.name(attribute);
    let v = p.value(attribute, value.clone());
    b.add_raw(Kind::Condition, format!("{attr} = {v}"));
    let mut fields = Map::new();
    fields.insert("TableName".into(), json!(c.spec.table));
    fields.insert("Key".into(), json!(owner));
    let label = ActionLabel {
        what: format!("check owner {}", c.display(owner)),
        on_condition_failed: format!("the owner no longer has this {attribute}"),
    };
    tx.push("ConditionCheck", fields, &b, label, None)
}

/// Hands `marker` to `claimant` in one transaction: its owner attribute is
/// updated in place (every other attribute kept) if it still names the old
/// owner, the old owner still lacks the value and the claimant holds it.
fn transfer_marker_tx(
    c: &Constraint,
    marker: &Marker,
    claimant: &Map<String, Value>,
) -> Result<Transaction, UniqueError> {
    let (Some(owner), Some(value)) = (&marker.owner, &marker.value) else {
        return Err(UniqueError::Invalid(format!(
            "marker {} names no owner",
            marker.name
        )));
    };
    let mut tx = Transaction::default();
    let mut b = Builder::new();
    let p = b.placeholders();
    let owner_attr = p.name(OWNER_ATTR);
    let old = p.value("old", json!({ "M": owner }));
    let new = p.value("new", json!({ "M": claimant }));
    b.add_raw(Kind::Update, format!("SET {owner_attr} = {new}"));
    b.add_raw(Kind::Condition, format!("{owner_attr} = {old}"));
    let mut fields = Map::new();
    fields.insert("TableName".into(), json!(c.spec.table));
    fields.insert(
        "Key".into(),
        json!(c.marker_key_named(&marker.attribute, &marker.name)),
    );
    let label = ActionLabel {
        what: format!("hand marker {} to {}", marker.name, c.display(claimant)),
        on_condition_failed: "the marker changed since it was inspected".into(),
    };
    tx.push("Update", fields, &b, label, None)?;
    push_owner_lost_value(&mut tx, c, marker, owner)?;
    push_owner_holds(&mut tx, c, claimant, &marker.attribute, value)?;
    Ok(tx)
}

/// Put a missing marker if the value is still free, on condition that the
/// owner still has the value.
fn add_marker_tx(c: &Constraint, missing: &MissingMarker) -> Result<Transaction, UniqueError> {
    let mut tx = Transaction::default();
    let item = c.marker_item(&missing.attribute, &missing.value, &missing.owner)?;
    let mut b = Builder::new();
    let pk = b.placeholders().name(&c.schema.partition);
    b.add_raw(Kind::Condition, format!("attribute_not_exists({pk})"));
    let mut fields = Map::new();
    fields.insert("TableName".into(), json!(c.spec.table));
    fields.insert("Item".into(), json!(item));
    tx.push(
        "Put",
        fields,
        &b,
        ActionLabel {
            what: format!(
                "put marker {}",
                c.marker_name(&missing.attribute, &missing.value)?
            ),
            on_condition_failed: "the value was taken meanwhile".into(),
        },
        Some(&missing.attribute),
    )?;
    push_owner_holds(
        &mut tx,
        c,
        &missing.owner,
        &missing.attribute,
        &missing.value,
    )?;
    Ok(tx)
}
