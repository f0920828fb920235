//! Query: the items of one partition, in sort-key order (or reversed), within
//! the sort-key condition, filtered and projected, one page at a time. This
//! module checks the request and the key condition against the key schema;
//! the engine (read/query.rs) turns the keys it names into a storage range.

use crate::ops::choice::{chosen, Choice};
use crate::ops::common::{self, Names, Values};
use crate::ops::output::Output;
use crate::ops::reads::{self, Select};
use crate::validate::Violations;
use ferrodyn_engine::api::{PageOutput, PageRead};
use ferrodyn_engine::capacity::CapacityDetail;
use ferrodyn_engine::index::Index;
use ferrodyn_engine::keys::KeyAttribute;
use ferrodyn_engine::read::QueryKeys;
use ferrodyn_engine::table::Table;
use ferrodyn_engine::Engine;
use ferrodyn_expr::{
    legacy_key_conditions, legacy_query_filter, parse_filter, parse_key_condition_staged,
    Condition, KeyCondition, KeyOp, Projection, QueryFilterParam,
};
use ferrodyn_types::{AttributeValue, DynamoError, Item, Result, ScalarType};
use serde::Deserialize;

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
    return_consumed_capacity: Option<Choice<CapacityDetail>>,
}

/// A Query's expressions, parsed: the key condition (its own errors come
/// after every name and value is checked used), the filter, the projection.
struct Expressions {
    key_condition: Result<KeyCondition>,
    filter: Option<Condition>,
    projection: Option<Projection>,
}

pub fn run(engine: &Engine, request: Request) -> Result<Vec<u8>> {
    Ok(execute(engine, request)?.encode())
}

/// The page's answer, not yet encoded (PartiQL takes it as it is).
pub fn execute(engine: &Engine, request: Request) -> Result<Output> {
    let params = read_params(&request);
    let (table_name, select) = check(&request, &params)?;
    let expressions = parse_expressions(&request, &params)?;
    let key_condition = expressions.key_condition?;

    let table = engine.table_for_items(table_name)?;
    let consistent = request.consistent_read.unwrap_or(false);
    let index = reads::resolve_index(
        &table,
        request.index_name.as_deref(),
        consistent,
        "Query operation not supported on this index type.",
    )?;
    let index = index.as_deref();
    let select = reads::select_for_index(select, request.select.as_deref(), index)?;
    let projection = expressions.projection.as_ref();
    reads::check_projected(&table, index, projection)?;
    let (keys, key_names) = query_keys(&table, index, &key_condition)?;
    // A Query's filter may not touch the key it queries by.
    if let Some(filter) = &expressions.filter {
        let param = if request.query_filter.is_some() {
            QueryFilterParam::Legacy
        } else {
            QueryFilterParam::Expression
        };
        filter.check_no_key_attributes(&key_names, param)?;
    }
    let forward = request.scan_index_forward.unwrap_or(true);
    let start_key = request.exclusive_start_key.as_ref();
    let read = PageRead {
        table: &table,
        index,
        limit: request.limit.map(|l| l as usize),
        filter: expressions.filter.as_ref(),
        consistent,
        full_items: select.full_items(),
    };
    let PageOutput { page, units } = engine.api().query(read, &keys, start_key, forward)?;
    let detail = chosen(&request.return_consumed_capacity);
    reads::page_output(&table, index, page, select, projection, units, detail)
}

/// The parameters Query shares with Scan.
fn read_params(request: &Request) -> reads::ReadParams<'_> {
    reads::ReadParams {
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
    }
}

/// The field constraints, then expression and non-expression parameters
/// never mixed, then Select against the projection parameters.
fn check<'a>(request: &'a Request, params: &reads::ReadParams<'_>) -> Result<(&'a str, Select)> {
    let mut v = Violations::default();
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
    Ok((table_name, params.select()?))
}

/// Parses the key condition (KeyConditionExpression or KeyConditions), the
/// filter (FilterExpression or QueryFilter) and the projection; every name
/// and value given must be used.
fn parse_expressions(request: &Request, params: &reads::ReadParams<'_>) -> Result<Expressions> {
    let has_expression = request.key_condition_expression.is_some()
        || request.filter_expression.is_some()
        || request.projection_expression.is_some();
    let mut ctx = common::expression_context(
        &request.expression_attribute_names,
        &request.expression_attribute_values,
        has_expression,
        "FilterExpression and KeyConditionExpression are null",
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
    Ok(Expressions {
        key_condition,
        filter,
        projection,
    })
}

/// The key condition checked against the key schema queried (the table's
/// or the index's): the partition-key values and sort-key conditions
/// (equalities on leading sort attributes, for multi-attribute GSI keys
/// only, then at most one condition of any kind), and the key attributes.
fn query_keys<'a>(
    table: &'a Table,
    index: Option<&'a Index>,
    key_condition: &'a KeyCondition,
) -> Result<(QueryKeys<'a>, Vec<&'a str>)> {
    let Some(index) = index else {
        let schema = &table.schema;
        let keys = single_key(
            key_condition,
            (&schema.hash.name, schema.hash.ty),
            schema.range.as_ref().map(|r| (r.name.as_str(), r.ty)),
        )?;
        return Ok((keys, schema.attributes().map(|a| a.name.as_str()).collect()));
    };
    let schema = &index.schema;
    let key_names = schema.attributes().map(|a| a.name.as_str()).collect();
    if schema.is_single() {
        let hash = &schema.hash[0];
        let range = schema.range.first().map(|r| (r.name.as_str(), r.ty));
        let keys = single_key(key_condition, (&hash.name, hash.ty), range)?;
        return Ok((keys, key_names));
    }
    let parts = key_condition.validate_composite(&typed(&schema.hash), &typed(&schema.range))?;
    let (sort_equalities, sort_condition) = match parts.range.split_last() {
        Some((last, leading)) => (
            leading.iter().map(|p| eq_value(&p.op)).collect(),
            Some(&last.op),
        ),
        None => (Vec::new(), None),
    };
    let keys = QueryKeys {
        hash: parts.hash.iter().map(|p| eq_value(&p.op)).collect(),
        sort_equalities,
        sort_condition,
    };
    Ok((keys, key_names))
}

/// A key condition on a key of one partition attribute and at most one
/// sort attribute.
fn single_key<'a>(
    key_condition: &'a KeyCondition,
    hash: (&str, ScalarType),
    range: Option<(&str, ScalarType)>,
) -> Result<QueryKeys<'a>> {
    let (hash_part, range_part) = key_condition.validate(hash, range)?;
    Ok(QueryKeys {
        hash: vec![eq_value(&hash_part.op)],
        sort_equalities: Vec::new(),
        sort_condition: range_part.map(|p| &p.op),
    })
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
