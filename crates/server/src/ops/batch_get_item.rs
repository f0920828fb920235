//! BatchGetItem: up to 100 keys across tables, each table with its own
//! projection and consistency. Keys that would push the response past 16 MB
//! come back in UnprocessedKeys for the caller to retry.

use crate::faults::Faults;
use crate::ops::batch_write_item::capacity_list;
use crate::ops::common::{self, Names};
use crate::validate::{self, Violations};
use ferrodyn_engine::capacity::{read_units, Consumed};
use ferrodyn_engine::throughput::Capacity;
use ferrodyn_engine::Engine;
use ferrodyn_expr::{legacy_attributes_to_get, parse_projection};
use ferrodyn_types::{DynamoError, Item, Result};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Request {
    request_items: Option<BTreeMap<String, KeysAndAttributes>>,
    return_consumed_capacity: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct KeysAndAttributes {
    keys: Option<Vec<Item>>,
    projection_expression: Option<String>,
    expression_attribute_names: Names,
    attributes_to_get: Option<Vec<String>>,
    consistent_read: Option<bool>,
}

const MAX_KEYS: usize = 100;
/// DynamoDB's cap on a BatchGetItem response.
const MAX_RESPONSE_BYTES: usize = 16 * 1024 * 1024;

pub fn run(engine: &Engine, faults: &Faults, request: Request) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    v.not_null("requestItems", &request.request_items);
    v.one_of(
        "returnConsumedCapacity",
        request.return_consumed_capacity.as_deref(),
        validate::RETURN_CONSUMED_CAPACITY,
    );
    if let Some(items) = &request.request_items {
        if items.is_empty() {
            v.map_count("requestItems", 0, 1, usize::MAX);
        }
        for (table, spec) in items {
            if table.starts_with("arn:") {
                v.arn_rules("requestItems.key", table);
            } else {
                v.name_rules("requestItems.key", table, 3, 255);
            }
            let field = format!("requestItems.{table}.member.keys");
            if v.not_null(&field, &spec.keys) {
                v.count(&field, spec.keys.as_deref(), 1, MAX_KEYS);
            }
            v.count(
                &format!("requestItems.{table}.member.attributesToGet"),
                spec.attributes_to_get.as_deref(),
                1,
                usize::MAX,
            );
        }
    }
    let request_items = v.finish_with(request.request_items)?;
    let total: usize = request_items
        .values()
        .map(|s| s.keys.as_ref().map_or(0, Vec::len))
        .sum();
    if total > MAX_KEYS {
        return Err(DynamoError::validation(
            "Too many items requested for the BatchGetItem call",
        ));
    }
    let mut responses: Vec<(String, Vec<Vec<u8>>)> = Vec::new();
    let mut unprocessed = Map::new();
    let mut units: Vec<(String, f64)> = Vec::new();
    let mut response_bytes = 0usize;
    let mut processed = 0usize;
    let mut throttled = false;
    for (table_name, spec) in &request_items {
        common::no_mixing(
            &[("AttributesToGet", spec.attributes_to_get.is_some())],
            &[("ProjectionExpression", spec.projection_expression.is_some())],
        )?;
        let mut ctx = common::expression_context(
            &spec.expression_attribute_names,
            &None,
            spec.projection_expression.is_some(),
            "ProjectionExpression",
        )?;
        let projection = match (&spec.projection_expression, &spec.attributes_to_get) {
            (Some(text), _) => Some(parse_projection(text, &mut ctx)?),
            (None, Some(names)) => Some(legacy_attributes_to_get(names)?),
            (None, None) => None,
        };
        ctx.check_all_used()?;
        let table = engine.table_for_items(table_name)?;
        let keys = spec.keys.as_deref().expect("checked");
        let mut seen: Vec<Vec<u8>> = Vec::with_capacity(keys.len());
        for key in keys {
            table.schema.validate_key(key)?;
            let encoded = table.schema.encode(table.id, key);
            if seen.contains(&encoded) {
                return Err(DynamoError::validation(
                    "Provided list of item keys contains duplicates",
                ));
            }
            seen.push(encoded);
        }
        let consistent = spec.consistent_read.unwrap_or(false);
        let mut found = Vec::new();
        let mut left = Vec::new();
        let mut table_units = 0.0;
        let mut found_count = 0usize;
        for key in keys {
            // Keys past the 16 MB response cap, keys the table has no read
            // capacity for, and keys a fault rule picks come back unprocessed.
            if response_bytes >= MAX_RESPONSE_BYTES
                || !table.throughput.has_capacity(Capacity::Read)
                || faults.leave_unprocessed("BatchGetItem", table_name)
            {
                throttled |= response_bytes < MAX_RESPONSE_BYTES
                    && !table.throughput.has_capacity(Capacity::Read);
                left.push(serde_json::to_value(key).expect("serialisable"));
                continue;
            }
            let stored = engine.get_item(&table, key)?;
            table_units += read_units(stored.as_ref().map_or(0, |s| s.size), consistent);
            found_count += 1;
            if let Some(stored) = stored {
                response_bytes += stored.json.len();
                // Unprojected items go out as their stored JSON.
                found.push(match &projection {
                    Some(p) => {
                        serde_json::to_vec(&p.apply(&stored.parse()?)).expect("serialisable")
                    }
                    None => stored.json,
                });
            }
        }
        table.charge(Capacity::Read, table_units);
        processed += found_count;
        responses.push((table_name.clone(), found));
        units.push((table_name.clone(), table_units));
        if !left.is_empty() {
            let mut entry = json!({ "Keys": left });
            if let Some(text) = &spec.projection_expression {
                entry["ProjectionExpression"] = json!(text);
            }
            if let Some(names) = &spec.expression_attribute_names {
                entry["ExpressionAttributeNames"] = json!(names);
            }
            if let Some(names) = &spec.attributes_to_get {
                entry["AttributesToGet"] = json!(names);
            }
            if let Some(consistent) = spec.consistent_read {
                entry["ConsistentRead"] = json!(consistent);
            }
            unprocessed.insert(table_name.clone(), entry);
        }
    }
    if processed == 0 && throttled {
        return Err(ferrodyn_engine::throughput::exceeded());
    }
    // Written by hand so that items are copied as stored, not re-encoded.
    let mut out = Vec::with_capacity(response_bytes + 256);
    out.extend_from_slice(b"{\"Responses\":{");
    for (n, (table_name, items)) in responses.iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut out, table_name).expect("serialisable");
        out.extend_from_slice(b":[");
        out.extend_from_slice(&items.join(&b","[..]));
        out.push(b']');
    }
    out.extend_from_slice(b"},\"UnprocessedKeys\":");
    serde_json::to_writer(&mut out, &Value::Object(unprocessed)).expect("serialisable");
    let detail = common::capacity_detail(&request.return_consumed_capacity);
    if let Some(list) = capacity_list(&read_capacity(&units), detail) {
        out.extend_from_slice(b",\"ConsumedCapacity\":");
        serde_json::to_writer(&mut out, &list).expect("serialisable");
    }
    out.push(b'}');
    Ok(out)
}

/// One read entry per table, for ConsumedCapacity.
pub fn read_capacity(units: &[(String, f64)]) -> Vec<Consumed> {
    units
        .iter()
        .map(|(table, units)| Consumed::read(table, *units))
        .collect()
}
