//! BatchGetItem: up to 100 keys across tables, each table with its own
//! projection and consistency. Keys that would push the response past 16 MB
//! come back in UnprocessedKeys for the caller to retry.

use crate::faults::Faults;
use crate::ops::choice::{chosen, Choice};
use crate::ops::common::{self, Names};
use crate::validate::Violations;
use ferrodyn_engine::capacity::CapacityDetail;
use ferrodyn_engine::Engine;
use ferrodyn_expr::{legacy_attributes_to_get, parse_projection, Projection};
use ferrodyn_types::{DynamoError, Item, Result};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Request {
    request_items: Option<BTreeMap<String, KeysAndAttributes>>,
    return_consumed_capacity: Option<Choice<CapacityDetail>>,
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

/// One table's part of a checked request: its keys (present, 1 to 100)
/// and the options they are read with.
struct TableKeys {
    keys: Vec<Item>,
    projection_expression: Option<String>,
    expression_attribute_names: Names,
    attributes_to_get: Option<Vec<String>>,
    consistent_read: Option<bool>,
}

/// A request whose fields passed their constraints.
struct Checked {
    request_items: BTreeMap<String, TableKeys>,
    return_consumed_capacity: Option<Choice<CapacityDetail>>,
}

/// What the reads so far produced, table by table.
#[derive(Default)]
struct Progress {
    responses: Vec<(String, Vec<Vec<u8>>)>,
    unprocessed: Map<String, Value>,
    units: Vec<(String, f64)>,
    response_bytes: usize,
    processed: usize,
    throttled: bool,
    /// A partition's refusal (partition limits), answered when nothing was read.
    refusal: Option<ferrodyn_types::DynamoError>,
}

const MAX_KEYS: usize = 100;
/// DynamoDB's cap on a BatchGetItem response.
const MAX_RESPONSE_BYTES: usize = 16 * 1024 * 1024;

pub fn run(engine: &Engine, faults: &Faults, request: Request) -> Result<Vec<u8>> {
    let request = check(request)?;
    let mut progress = Progress::default();
    for (table_name, spec) in &request.request_items {
        read_table(engine, faults, table_name, spec, &mut progress)?;
    }
    if progress.processed == 0 && progress.throttled {
        let refusal = progress.refusal.take();
        return Err(refusal.unwrap_or_else(ferrodyn_engine::throughput::exceeded));
    }
    Ok(encode(progress, &request.return_consumed_capacity))
}

/// The field constraints, then the 100-key total across tables.
fn check(request: Request) -> Result<Checked> {
    let mut v = Violations::default();
    v.not_null("requestItems", &request.request_items);
    v.choice("returnConsumedCapacity", &request.return_consumed_capacity);
    if let Some(items) = &request.request_items {
        if items.is_empty() {
            // AWS checks this apart from the constraints, in its own words
            // (the AWS-verified dynamodb-conformance suite, tier3/error-messages).
            return Err(DynamoError::validation(
                "The requestItems parameter is required for BatchGetItem",
            ));
        }
        for (table, spec) in items {
            v.existing_table_rules("requestItems.key", table);
            let field = format!("requestItems.{table}.member.keys");
            if v.not_null(&field, &spec.keys) {
                too_many_keys(&mut v, table, spec.keys.as_deref().unwrap_or_default());
                v.count(&field, spec.keys.as_deref(), 1, usize::MAX);
            }
            v.count(
                &format!("requestItems.{table}.member.attributesToGet"),
                spec.attributes_to_get.as_deref(),
                1,
                usize::MAX,
            );
        }
    }
    let checked = request.request_items.and_then(|items| {
        items
            .into_iter()
            .map(|(table, spec)| {
                let keys = spec.keys?;
                Some((
                    table,
                    TableKeys {
                        keys,
                        projection_expression: spec.projection_expression,
                        expression_attribute_names: spec.expression_attribute_names,
                        attributes_to_get: spec.attributes_to_get,
                        consistent_read: spec.consistent_read,
                    },
                ))
            })
            .collect::<Option<BTreeMap<_, _>>>()
    });
    let request_items = v.finish_with(checked)?;
    let total: usize = request_items.values().map(|s| s.keys.len()).sum();
    if total > MAX_KEYS {
        return Err(DynamoError::validation(
            "Too many items requested for the BatchGetItem call",
        ));
    }
    Ok(Checked {
        request_items,
        return_consumed_capacity: request.return_consumed_capacity,
    })
}

/// One table's projection, parsed (AttributesToGet or ProjectionExpression,
/// never both; every name used).
fn projection(spec: &TableKeys) -> Result<Option<Projection>> {
    common::no_mixing(
        &[("AttributesToGet", spec.attributes_to_get.is_some())],
        &[("ProjectionExpression", spec.projection_expression.is_some())],
    )?;
    let mut ctx = common::expression_context(
        &spec.expression_attribute_names,
        &None,
        spec.projection_expression.is_some(),
        "ProjectionExpression is null",
    )?;
    let projection = match (&spec.projection_expression, &spec.attributes_to_get) {
        (Some(text), _) => Some(parse_projection(text, &mut ctx)?),
        (None, Some(names)) => Some(legacy_attributes_to_get(names)?),
        (None, None) => None,
    };
    ctx.check_all_used()?;
    Ok(projection)
}

/// Reads one table's keys through the engine (which checks them and
/// charges the reads); the keys left over go to UnprocessedKeys.
fn read_table(
    engine: &Engine,
    faults: &Faults,
    table_name: &str,
    spec: &TableKeys,
    progress: &mut Progress,
) -> Result<()> {
    let projection = projection(spec)?;
    let consistent = spec.consistent_read.unwrap_or(false);
    let budget = (&mut progress.response_bytes, MAX_RESPONSE_BYTES);
    let read = engine
        .api()
        .batch_get_table(table_name, &spec.keys, consistent, budget, || {
            faults.leave_unprocessed("BatchGetItem", table_name)
        })?;
    progress.throttled |= read.throttled;
    progress.refusal = progress.refusal.take().or(read.refusal);
    progress.processed += read.processed;
    // Unprojected items go out as their stored JSON.
    let found = read
        .found
        .into_iter()
        .map(|stored| match &projection {
            Some(p) => Ok(serde_json::to_vec(&p.apply(&stored.parse()?))
                .expect("plain data always serialises")),
            None => Ok(stored.json),
        })
        .collect::<Result<Vec<_>>>()?;
    progress.responses.push((table_name.to_string(), found));
    progress.units.push((table_name.to_string(), read.units));
    if !read.left.is_empty() {
        let left = read
            .left
            .iter()
            .map(|&n| serde_json::to_value(&spec.keys[n]).expect("plain data always serialises"))
            .collect();
        progress
            .unprocessed
            .insert(table_name.to_string(), unprocessed_entry(spec, left));
    }
    Ok(())
}

/// A table's UnprocessedKeys entry: the keys left, with the options they
/// were asked with, ready to be sent again.
fn unprocessed_entry(spec: &TableKeys, left: Vec<Value>) -> Value {
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
    entry
}

/// The response, written by hand so that items are copied as stored, not
/// re-encoded.
fn encode(
    progress: Progress,
    return_consumed_capacity: &Option<Choice<CapacityDetail>>,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(progress.response_bytes + 256);
    out.extend_from_slice(b"{\"Responses\":{");
    for (n, (table_name, items)) in progress.responses.iter().enumerate() {
        if n > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut out, table_name).expect("plain data always serialises");
        out.extend_from_slice(b":[");
        out.extend_from_slice(&items.join(&b","[..]));
        out.push(b']');
    }
    out.extend_from_slice(b"},\"UnprocessedKeys\":");
    serde_json::to_writer(&mut out, &Value::Object(progress.unprocessed))
        .expect("plain data always serialises");
    let detail = chosen(return_consumed_capacity);
    if let Some(list) = common::capacity_list(&common::read_capacity(&progress.units), detail) {
        out.extend_from_slice(b",\"ConsumedCapacity\":");
        serde_json::to_writer(&mut out, &list).expect("plain data always serialises");
    }
    out.push(b'}');
    out
}

/// More than 100 keys for one table. AWS reports it without the keys and
/// with the field capitalized, unlike the other violations of this request
/// (`Value at 'RequestItems.t.member.Keys' ...`; the AWS-verified
/// dynamodb-conformance suite, tier3/error-messages/batchGetItem.test.ts).
fn too_many_keys(v: &mut Violations, table: &str, keys: &[Item]) {
    if keys.len() > MAX_KEYS {
        v.unvalued(
            &format!("RequestItems.{table}.member.Keys"),
            &format!("Member must have length less than or equal to {MAX_KEYS}"),
        );
    }
}
