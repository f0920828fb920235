//! Query: the items of one partition, in sort-key order (or reversed), within
//! the sort-key condition, filtered and projected, one page at a time.

use crate::ops::common::{self, Names, Values};
use crate::ops::reads;
use crate::validate::Violations;
use ferrodyn_engine::index::{encode_escaped, encode_escaped_prefix};
use ferrodyn_engine::keys::{encode_sort_value, partition_prefix, KeyAttribute};
use ferrodyn_engine::keyspace::prefix_end;
use ferrodyn_engine::read::KeyRange;
use ferrodyn_engine::Engine;
use ferrodyn_expr::{
    legacy_key_conditions, legacy_query_filter, parse_filter, parse_key_condition_staged, KeyOp,
    QueryFilterParam,
};
use ferrodyn_types::{AttributeValue, DynamoError, Item, Result, ScalarType};
use serde::Deserialize;
use std::cmp::Ordering;
use std::ops::Bound;

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Request {
    table_name: Option<String>,
    index_name: Option<String>,
    key_condition_expression: Option<String>,
    key_conditions: Option<serde_json::Value>,
    filter_expression: Option<String>,
    query_filter: Option<serde_json::Value>,
    conditional_operator: Option<String>,
    projection_expression: Option<String>,
    attributes_to_get: Option<Vec<String>>,
    select: Option<String>,
    limit: Option<i64>,
    consistent_read: Option<bool>,
    scan_index_forward: Option<bool>,
    exclusive_start_key: Option<Item>,
    expression_attribute_names: Names,
    #[serde(
        default,
        deserialize_with = "ferrodyn_types::deserialize_expression_values"
    )]
    expression_attribute_values: Values,
    return_consumed_capacity: Option<String>,
}

pub fn run(engine: &Engine, request: Request) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    let params = reads::ReadParams {
        table_name: &request.table_name,
        index_name: &request.index_name,
        select: &request.select,
        limit: request.limit,
        conditional_operator: &request.conditional_operator,
        has_legacy_filter: request.query_filter.is_some(),
        return_consumed_capacity: &request.return_consumed_capacity,
        attributes_to_get: &request.attributes_to_get,
        projection_expression: &request.projection_expression,
        query: true,
    };
    params.check(&mut v);
    let table_name = v.finish_with(request.table_name.as_deref())?;
    common::no_mixing(
        &[
            // KeyConditions may go with expression parameters as long as
            // there is no KeyConditionExpression (DynamoDB's one exception).
            (
                "KeyConditions",
                request.key_conditions.is_some() && request.key_condition_expression.is_some(),
            ),
            ("QueryFilter", request.query_filter.is_some()),
            ("AttributesToGet", request.attributes_to_get.is_some()),
            (
                "ConditionalOperator",
                request.conditional_operator.is_some(),
            ),
        ],
        &[
            (
                "KeyConditionExpression",
                request.key_condition_expression.is_some(),
            ),
            ("FilterExpression", request.filter_expression.is_some()),
            (
                "ProjectionExpression",
                request.projection_expression.is_some(),
            ),
        ],
    )?;
    let select = params.select()?;
    let has_expression = request.key_condition_expression.is_some()
        || request.filter_expression.is_some()
        || request.projection_expression.is_some();
    let mut ctx = common::expression_context(
        &request.expression_attribute_names,
        &request.expression_attribute_values,
        has_expression,
        "KeyConditionExpression",
    )?;
    // DynamoDB reports an empty FilterExpression or ProjectionExpression
    // before any problem of the key condition.
    if request.filter_expression.as_deref() == Some("") {
        parse_filter("", &mut ctx)?;
    }
    if request.projection_expression.as_deref() == Some("") {
        params.projection(&mut ctx)?;
    }
    let key_condition = match (&request.key_condition_expression, &request.key_conditions) {
        (Some(text), _) => parse_key_condition_staged(text, &mut ctx)?,
        (None, Some(conditions)) => Ok(legacy_key_conditions(conditions)?),
        (None, None) => {
            return Err(DynamoError::validation(
                "Either the KeyConditions or KeyConditionExpression parameter must be specified in the request.",
            ))
        }
    };
    let filter = match (&request.filter_expression, &request.query_filter) {
        (Some(text), _) => Some(parse_filter(text, &mut ctx)?),
        (None, Some(filter)) => Some(legacy_query_filter(
            filter,
            request.conditional_operator.as_deref(),
        )?),
        (None, None) => None,
    };
    let projection = params.projection(&mut ctx)?;
    ctx.check_all_used()?;
    let key_condition = key_condition?;

    let table = engine.table_for_items(table_name)?;
    let consistent = request.consistent_read.unwrap_or(false);
    let index = reads::resolve_index(&table, request.index_name.as_deref(), consistent)?;
    let select = reads::select_for_index(select, request.select.as_deref(), index.as_deref())?;
    reads::check_projected(&table, index.as_deref(), projection.as_ref())?;
    // The key attributes, partition-key values and sort-key conditions:
    // equalities on leading sort attributes (multi-attribute GSI keys
    // only), then at most one condition of any kind.
    let key_names: Vec<&str>;
    let hash_values: Vec<&AttributeValue>;
    let mut sort_equalities: Vec<&AttributeValue> = Vec::new();
    let sort_last: Option<&KeyOp>;
    match &index {
        Some(index) if !index.schema.is_single() => {
            let parts = key_condition
                .validate_composite(&typed(&index.schema.hash), &typed(&index.schema.range))?;
            key_names = index.schema.attributes().map(|a| a.name.as_str()).collect();
            hash_values = parts.hash.iter().map(|p| eq_value(&p.op)).collect();
            if let Some((last, leading)) = parts.range.split_last() {
                sort_equalities = leading.iter().map(|p| eq_value(&p.op)).collect();
                sort_last = Some(&last.op);
            } else {
                sort_last = None;
            }
        }
        Some(index) => {
            let hash = &index.schema.hash[0];
            let range = index.schema.range.first();
            let (hash_part, range_part) = key_condition.validate(
                (&hash.name, hash.ty),
                range.map(|r| (r.name.as_str(), r.ty)),
            )?;
            key_names = index.schema.attributes().map(|a| a.name.as_str()).collect();
            hash_values = vec![eq_value(&hash_part.op)];
            sort_last = range_part.map(|p| &p.op);
        }
        None => {
            let schema = &table.schema;
            let (hash_part, range_part) = key_condition.validate(
                (&schema.hash.name, schema.hash.ty),
                schema.range.as_ref().map(|r| (r.name.as_str(), r.ty)),
            )?;
            key_names = schema.attributes().map(|a| a.name.as_str()).collect();
            hash_values = vec![eq_value(&hash_part.op)];
            sort_last = range_part.map(|p| &p.op);
        }
    }
    // A Query's filter may not touch the key it queries by.
    if let Some(filter) = &filter {
        let param = if request.query_filter.is_some() {
            QueryFilterParam::Legacy
        } else {
            QueryFilterParam::Expression
        };
        filter.check_no_key_attributes(&key_names, param)?;
    }
    let mut prefix = match &index {
        Some(index) => ferrodyn_engine::index::partition_prefix(table.id, index.id, &hash_values),
        None => partition_prefix(table.id, hash_values[0]),
    };
    for value in &sort_equalities {
        encode_escaped(value, &mut prefix);
    }
    let mut range = match sort_last {
        Some(op) => sort_range(&prefix, op, index.is_some())?,
        None => KeyRange {
            start: Bound::Included(prefix.clone()),
            end: end_of(&prefix),
        },
    };
    let forward = request.scan_index_forward.unwrap_or(true);
    if let Some(start_key) = &request.exclusive_start_key {
        let encoded = match &index {
            Some(index) => index.start_key(table.id, &table.schema, start_key)?,
            None => {
                // Query words a start key naming other attributes than the
                // key's briefly, and one with wrong types by the schema
                // mismatch itself; Scan prefixes the reason (dynalite's
                // recordings of AWS; ScyllaDB's test_query_exclusivestartkey_*).
                let names_match = start_key.len() == table.schema.attributes().count()
                    && table
                        .schema
                        .attributes()
                        .all(|a| start_key.contains_key(&a.name));
                if !names_match {
                    return Err(DynamoError::validation(
                        "The provided starting key is invalid",
                    ));
                }
                table.schema.validate_key(start_key)?;
                if table.schema.range.is_none() {
                    // A partition of a hash-only table holds one item, so
                    // an exclusive start inside it can only be empty.
                    return Err(DynamoError::validation(format!(
                        "The provided exclusive start key is invalid: ExclusiveStartKey: {}",
                        reads::key_text(start_key)
                    )));
                }
                table.schema.encode(table.id, start_key)
            }
        };
        let hash_names: Vec<&str> = match &index {
            Some(index) => index.schema.hash.iter().map(|a| a.name.as_str()).collect(),
            None => vec![table.schema.hash.name.as_str()],
        };
        let in_partition = hash_names
            .iter()
            .zip(&hash_values)
            .all(|(name, value)| start_key.get(*name) == Some(*value));
        if !in_partition || !contains(&range, &encoded) {
            return Err(DynamoError::validation(
                "The provided starting key is outside query boundaries based on provided conditions",
            ));
        }
        if forward {
            range.start = Bound::Excluded(encoded);
        } else {
            range.end = Bound::Excluded(encoded);
        }
    }
    table.admit_read(index.as_deref())?;
    let mut page = engine.read_page(
        &table,
        index.as_deref(),
        range,
        !forward,
        request.limit.map(|l| l as usize),
        filter.as_ref(),
    )?;
    reads::fetch_from_table(engine, &table, index.as_deref(), select, &mut page)?;
    let units = page.read_units(consistent);
    table.charge_read(index.as_deref(), units);
    reads::page_response(
        &table,
        index.as_deref(),
        page,
        select,
        projection.as_ref(),
        units,
        common::capacity_detail(&request.return_consumed_capacity),
    )
}

/// Key attributes as key-condition validation takes them.
fn typed(attrs: &[KeyAttribute]) -> Vec<(&str, ScalarType)> {
    attrs.iter().map(|a| (a.name.as_str(), a.ty)).collect()
}

/// The value of a condition that validation has checked is an equality.
fn eq_value(op: &KeyOp) -> &AttributeValue {
    match op {
        KeyOp::Eq(v) => v,
        _ => unreachable!("validated to be an equality"),
    }
}

/// Whether a storage key lies within a key range (an ExclusiveStartKey must
/// satisfy the key condition).
fn contains(range: &KeyRange, key: &[u8]) -> bool {
    let above = match &range.start {
        Bound::Included(start) => key >= start.as_slice(),
        Bound::Excluded(start) => key > start.as_slice(),
        Bound::Unbounded => true,
    };
    let below = match &range.end {
        Bound::Included(end) => key <= end.as_slice(),
        Bound::Excluded(end) => key < end.as_slice(),
        Bound::Unbounded => true,
    };
    above && below
}

fn end_of(prefix: &[u8]) -> Bound<Vec<u8>> {
    match prefix_end(prefix) {
        Some(end) => Bound::Excluded(end),
        None => Bound::Unbounded,
    }
}

fn with_sort(prefix: &[u8], value: &AttributeValue, escaped: bool) -> Vec<u8> {
    let mut key = prefix.to_vec();
    if escaped {
        encode_escaped(value, &mut key);
    } else {
        encode_sort_value(value, &mut key);
    }
    key
}

/// The storage range of a sort-key condition within a partition. In an
/// index (`escaped`), each sort key is followed by the base key, so "equal
/// to v" means every key that starts with v's encoding.
fn sort_range(prefix: &[u8], op: &KeyOp, escaped: bool) -> Result<KeyRange> {
    let key = |v: &AttributeValue| with_sort(prefix, v, escaped);
    // Bounds just past every key equal to v.
    let through = |v: &AttributeValue| {
        if escaped {
            end_of(&key(v))
        } else {
            Bound::Included(key(v))
        }
    };
    let after = |v: &AttributeValue| match end_of(&key(v)) {
        Bound::Excluded(k) if escaped => Bound::Included(k),
        Bound::Unbounded if escaped => Bound::Excluded(key(v)),
        _ => Bound::Excluded(key(v)),
    };
    let whole_start = Bound::Included(prefix.to_vec());
    Ok(match op {
        KeyOp::Eq(v) => KeyRange {
            start: Bound::Included(key(v)),
            end: through(v),
        },
        KeyOp::Lt(v) => KeyRange {
            start: whole_start,
            end: Bound::Excluded(key(v)),
        },
        KeyOp::Le(v) => KeyRange {
            start: whole_start,
            end: through(v),
        },
        KeyOp::Gt(v) => KeyRange {
            start: after(v),
            end: end_of(prefix),
        },
        KeyOp::Ge(v) => KeyRange {
            start: Bound::Included(key(v)),
            end: end_of(prefix),
        },
        KeyOp::Between(low, high) => {
            if low.compare(high) == Some(Ordering::Greater) {
                return Err(DynamoError::validation(format!(
                    "Invalid KeyConditionExpression: The BETWEEN operator requires upper bound to be greater than or equal to lower bound; lower bound operand: AttributeValue: {{{}}}, upper bound operand: AttributeValue: {{{}}}",
                    describe(low),
                    describe(high)
                )));
            }
            KeyRange {
                start: Bound::Included(key(low)),
                end: through(high),
            }
        }
        KeyOp::BeginsWith(v) => {
            let mut start = prefix.to_vec();
            if escaped {
                encode_escaped_prefix(v, &mut start);
            } else {
                encode_sort_value(v, &mut start);
            }
            let end = end_of(&start);
            KeyRange {
                start: Bound::Included(start),
                end,
            }
        }
    })
}

fn describe(value: &AttributeValue) -> String {
    let json = serde_json::to_value(value).expect("serialisable");
    match json.as_object().and_then(|o| o.iter().next()) {
        Some((kind, inner)) => format!(
            "{kind}:{}",
            inner
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| inner.to_string())
        ),
        None => String::new(),
    }
}
