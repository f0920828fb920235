//! Finding a table's uniqueness constraints from its markers, so a person
//! (or the console) does not have to know them before inspecting them: one
//! Scan for items whose partition key starts with `UNIQ#`, reading only keys
//! and the marker attributes, tells the layout, the constrained attributes,
//! the entity of grouped markers, and the key prefix of the owners.

use super::{MarkerLayout, UniqueError, ATTR_ATTR, LOCK, OWNER_ATTR, PREFIX};
use crate::api::DynamoApi;
use crate::table::KeySchema;
use crate::typed;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// How long discovery reads before it answers with what it has seen.
const BUDGET: Duration = Duration::from_secs(5);

/// What the markers of a table say about its constraints.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Discovered {
    /// The layout most markers use (per value when there are none).
    pub layout: MarkerLayout,
    /// The entity named by grouped markers (`UNIQ#<entity>#<attr>`).
    pub entity: Option<String>,
    /// The constrained attributes, as the owners spell them.
    pub attributes: Vec<String>,
    /// The prefix most owners' partition keys share up to their first `#`
    /// (`ACCT#`): what an owner scan for missing markers looks for.
    pub owner_prefix: Option<String>,
    /// Markers seen, items scanned, read units consumed.
    pub markers: u64,
    pub scanned: u64,
    pub read_units: f64,
    /// False when the scan stopped at its time budget.
    pub complete: bool,
}

/// One marker's contribution: layout, attribute (capitals for per-value
/// markers), entity, and the owner's partition key.
struct Seen {
    layout: MarkerLayout,
    attribute: String,
    entity: Option<String>,
    owner: Option<Map<String, Value>>,
}

/// Scans `table` for markers (keys and marker attributes only) and sums up
/// what they say.
pub fn discover(api: &dyn DynamoApi, table: &str) -> Result<Discovered, UniqueError> {
    let schema = KeySchema::describe(api, table)?;
    let mut request = json!({
        "TableName": table,
        "FilterExpression": "begins_with(#pk, :prefix)",
        "ProjectionExpression": projection(&schema),
        "ExpressionAttributeNames": names(&schema),
        "ExpressionAttributeValues": { ":prefix": { "S": PREFIX } },
        "ReturnConsumedCapacity": "TOTAL",
    });
    let started = Instant::now();
    let mut found = Discovered::default();
    let mut seen = Vec::new();
    found.complete = loop {
        let page = api.call("Scan", &request)?;
        found.scanned += page["ScannedCount"].as_u64().unwrap_or(0);
        found.read_units += page["ConsumedCapacity"]["CapacityUnits"]
            .as_f64()
            .unwrap_or(0.0);
        let items = page["Items"].as_array().into_iter().flatten();
        seen.extend(
            items
                .filter_map(Value::as_object)
                .filter_map(|m| read_marker(&schema, m)),
        );
        match page.get("LastEvaluatedKey") {
            Some(key) if started.elapsed() < BUDGET => request["ExclusiveStartKey"] = key.clone(),
            Some(_) => break false,
            None => break true,
        }
    };
    found.markers = seen.len() as u64;
    sum_up(api, table, &schema, seen, &mut found)?;
    Ok(found)
}

fn names(schema: &KeySchema) -> Value {
    let mut names = json!({ "#pk": schema.partition, "#owner": OWNER_ATTR, "#attr": ATTR_ATTR });
    if let Some(sort) = &schema.sort {
        names["#sk"] = json!(sort);
    }
    names
}

fn projection(schema: &KeySchema) -> String {
    match schema.sort {
        Some(_) => "#pk, #sk, #owner, #attr".into(),
        None => "#pk, #owner, #attr".into(),
    }
}

/// A marker item's layout, attribute and owner, from its keys.
fn read_marker(schema: &KeySchema, item: &Map<String, Value>) -> Option<Seen> {
    let partition = item.get(&schema.partition).and_then(typed::key_text)?;
    let rest = partition.strip_prefix(PREFIX)?;
    let sort = schema
        .sort
        .as_ref()
        .and_then(|s| item.get(s))
        .and_then(typed::key_text);
    let owner = item
        .get(OWNER_ATTR)
        .and_then(|o| o.get("M"))
        .and_then(Value::as_object)
        .cloned();
    let grouped = sort.as_deref().is_some_and(|s| s.starts_with(PREFIX));
    if grouped {
        let (entity, attribute) = rest.split_once('#')?;
        return Some(Seen {
            layout: MarkerLayout::Grouped,
            attribute: attribute.into(),
            entity: Some(entity.into()),
            owner,
        });
    }
    if sort.as_deref().is_some_and(|s| s != LOCK) {
        return None;
    }
    let attribute = match item.get(ATTR_ATTR).and_then(typed::key_text) {
        Some(attribute) => attribute,
        None => rest.split_once('#')?.0.to_string(),
    };
    Some(Seen {
        layout: MarkerLayout::PerValue,
        attribute,
        entity: None,
        owner,
    })
}

/// The most common layout, entity and owner prefix; attribute names as an
/// owner spells them (a per-value marker names its attribute in capitals).
fn sum_up(
    api: &dyn DynamoApi,
    table: &str,
    schema: &KeySchema,
    seen: Vec<Seen>,
    found: &mut Discovered,
) -> Result<(), UniqueError> {
    let grouped = seen
        .iter()
        .filter(|s| s.layout == MarkerLayout::Grouped)
        .count();
    found.layout = if grouped * 2 > seen.len() {
        MarkerLayout::Grouped
    } else {
        MarkerLayout::PerValue
    };
    let ours: Vec<&Seen> = seen.iter().filter(|s| s.layout == found.layout).collect();
    found.entity = most_common(ours.iter().filter_map(|s| s.entity.clone()));
    found.owner_prefix = most_common(ours.iter().filter_map(|s| {
        let partition = s
            .owner
            .as_ref()?
            .get(&schema.partition)
            .and_then(typed::key_text)?;
        partition.find('#').map(|at| partition[..=at].to_string())
    }));
    let mut attributes: BTreeMap<String, Option<&Map<String, Value>>> = BTreeMap::new();
    for s in &ours {
        let entry = attributes.entry(s.attribute.clone()).or_default();
        if entry.is_none() {
            *entry = s.owner.as_ref();
        }
    }
    for (attribute, owner) in attributes {
        let name = match (found.layout, owner) {
            (MarkerLayout::PerValue, Some(owner)) => {
                spelled_by_owner(api, table, owner, &attribute)?
            }
            _ => None,
        };
        found
            .attributes
            .push(name.unwrap_or_else(|| match found.layout {
                MarkerLayout::PerValue => attribute.to_lowercase(),
                MarkerLayout::Grouped => attribute,
            }));
    }
    Ok(())
}

/// The owner's attribute whose name in capitals is `capitals`, if the
/// owner exists and has one.
fn spelled_by_owner(
    api: &dyn DynamoApi,
    table: &str,
    owner: &Map<String, Value>,
    capitals: &str,
) -> Result<Option<String>, UniqueError> {
    let item = crate::stage::get_item(api, table, owner)?;
    Ok(item.and_then(|item| item.keys().find(|k| k.to_uppercase() == capitals).cloned()))
}

fn most_common(values: impl Iterator<Item = String>) -> Option<String> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for value in values {
        *counts.entry(value).or_default() += 1;
    }
    counts
        .into_iter()
        .max_by_key(|(_, n)| *n)
        .map(|(value, _)| value)
}
