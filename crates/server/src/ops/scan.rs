//! Scan: every item of the table in partition-hash order, filtered and
//! projected, one page at a time; Segment/TotalSegments split the hash space
//! into disjoint, complete ranges for parallel scans. The engine
//! (read/scan.rs) builds the storage range and prices the page.

use crate::ops::choice::{chosen, Choice};
use crate::ops::common::{self, Names, Values};
use crate::ops::output::Output;
use crate::ops::reads::{self, Select};
use crate::validate::Violations;
use ferrodyn_engine::api::{PageOutput, PageRead};
use ferrodyn_engine::capacity::CapacityDetail;
use ferrodyn_engine::read::Segment;
use ferrodyn_engine::Engine;
use ferrodyn_expr::{legacy_scan_filter, parse_filter, Condition, Projection};
use ferrodyn_types::{DynamoError, Item, Result};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Request {
    table_name: Option<String>,
    index_name: Option<String>,
    filter_expression: Option<String>,
    scan_filter: Option<serde_json::Value>,
    conditional_operator: Option<String>,
    projection_expression: Option<String>,
    attributes_to_get: Option<Vec<String>>,
    select: Option<String>,
    limit: Option<i64>,
    consistent_read: Option<bool>,
    exclusive_start_key: Option<Item>,
    segment: Option<i64>,
    total_segments: Option<i64>,
    expression_attribute_names: Names,
    #[serde(
        default,
        deserialize_with = "ferrodyn_types::deserialize_expression_values"
    )]
    expression_attribute_values: Values,
    return_consumed_capacity: Option<Choice<CapacityDetail>>,
}

const MAX_SEGMENTS: i64 = 1_000_000;

pub fn run(engine: &Engine, request: Request) -> Result<Vec<u8>> {
    Ok(execute(engine, request)?.encode())
}

/// The page's answer, not yet encoded (PartiQL takes it as it is).
pub fn execute(engine: &Engine, request: Request) -> Result<Output> {
    let params = read_params(&request);
    let (table_name, segment, select) = check(&request, &params)?;
    let (filter, projection) = parse_expressions(&request, &params)?;
    let table = engine.table_for_items(table_name)?;
    let consistent = request.consistent_read.unwrap_or(false);
    let index = reads::resolve_index(
        &table,
        request.index_name.as_deref(),
        consistent,
        "Scan operation not supported on this index type",
    )?;
    let index = index.as_deref();
    let select = reads::select_for_index(select, request.select.as_deref(), index)?;
    let projection = projection.as_ref();
    reads::check_projected(&table, index, projection)?;
    let start_key = request.exclusive_start_key.as_ref();
    let read = PageRead {
        table: &table,
        index,
        limit: request.limit.map(|l| l as usize),
        filter: filter.as_ref(),
        consistent,
        full_items: select.full_items(),
    };
    let PageOutput { page, units } = engine.api().scan(read, segment, start_key)?;
    let detail = chosen(&request.return_consumed_capacity);
    reads::page_output(&table, index, page, select, projection, units, detail)
}

/// The parameters Scan shares with Query.
fn read_params(request: &Request) -> reads::ReadParams<'_> {
    reads::ReadParams {
        table_name: &request.table_name,
        index_name: &request.index_name,
        select: &request.select,
        limit: request.limit,
        conditional_operator: &request.conditional_operator,
        has_legacy_filter: request.scan_filter.is_some(),
        return_consumed_capacity: &request.return_consumed_capacity,
        attributes_to_get: &request.attributes_to_get,
        projection_expression: &request.projection_expression,
        query: false,
    }
}

/// The field constraints, Segment with TotalSegments, expression and
/// non-expression parameters never mixed, then Select against the
/// projection parameters.
fn check<'a>(
    request: &'a Request,
    params: &reads::ReadParams<'_>,
) -> Result<(&'a str, Option<Segment>, Select)> {
    let mut v = Violations::default();
    params.check(&mut v);
    v.range("segment", request.segment, 0, Some(MAX_SEGMENTS - 1));
    v.range(
        "totalSegments",
        request.total_segments,
        1,
        Some(MAX_SEGMENTS),
    );
    let table_name = v.finish_with(request.table_name.as_deref())?;
    let segment = segment(request.segment, request.total_segments)?;
    common::no_mixing(
        &[
            ("ScanFilter", request.scan_filter.is_some()),
            ("AttributesToGet", request.attributes_to_get.is_some()),
            (
                "ConditionalOperator",
                request.conditional_operator.is_some(),
            ),
        ],
        &[
            ("FilterExpression", request.filter_expression.is_some()),
            (
                "ProjectionExpression",
                request.projection_expression.is_some(),
            ),
        ],
    )?;
    Ok((table_name, segment, params.select()?))
}

/// Segment and TotalSegments (each within its range): both or neither.
fn segment(segment: Option<i64>, total: Option<i64>) -> Result<Option<Segment>> {
    match (segment, total) {
        (Some(segment), Some(total)) => {
            if segment >= total {
                // moto 5.2.5's AWS-verified record: no values echoed.
                return Err(DynamoError::validation(
                    "The Segment parameter is zero-based and must be less than parameter TotalSegments",
                ));
            }
            Ok(Some(Segment {
                segment: segment as u64,
                total: total as u64,
            }))
        }
        (Some(_), None) => Err(DynamoError::validation(
            "The TotalSegments parameter is required but was not present in the request when Segment parameter is present",
        )),
        (None, Some(_)) => Err(DynamoError::validation(
            "The Segment parameter is required but was not present in the request when parameter TotalSegments is present",
        )),
        (None, None) => Ok(None),
    }
}

/// Parses the filter (FilterExpression or ScanFilter) and the projection;
/// every name and value given must be used.
fn parse_expressions(
    request: &Request,
    params: &reads::ReadParams<'_>,
) -> Result<(Option<Condition>, Option<Projection>)> {
    let has_expression =
        request.filter_expression.is_some() || request.projection_expression.is_some();
    let mut ctx = common::expression_context(
        &request.expression_attribute_names,
        &request.expression_attribute_values,
        has_expression,
        "FilterExpression is null",
    )?;
    let filter = match (&request.filter_expression, &request.scan_filter) {
        (Some(text), _) => Some(parse_filter(text, &mut ctx)?),
        (None, Some(filter)) => Some(legacy_scan_filter(
            filter,
            request.conditional_operator.as_deref(),
        )?),
        (None, None) => None,
    };
    let projection = params.projection(&mut ctx)?;
    ctx.check_all_used()?;
    Ok((filter, projection))
}
