//! Scan: every item of the table in partition-hash order, filtered and
//! projected, one page at a time; Segment/TotalSegments split the hash space
//! into disjoint, complete ranges for parallel scans.

use crate::ops::common::{self, Names, Values};
use crate::ops::reads;
use crate::validate::Violations;
use ferrodyn_engine::capacity::scan_units;
use ferrodyn_engine::index::hash_bound as index_hash_bound;
use ferrodyn_engine::keys::{hash_bound, partition_hash};
use ferrodyn_engine::keyspace::{index_entries, prefix_end, table_items};
use ferrodyn_engine::read::KeyRange;
use ferrodyn_engine::Engine;
use ferrodyn_expr::{legacy_scan_filter, parse_filter};
use ferrodyn_types::{DynamoError, Item, Result};
use serde::Deserialize;
use std::ops::Bound;

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
    return_consumed_capacity: Option<String>,
}

const MAX_SEGMENTS: i64 = 1_000_000;

pub fn run(engine: &Engine, request: Request) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    let params = reads::ReadParams {
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
    };
    params.check(&mut v);
    v.range("segment", request.segment, 0, Some(MAX_SEGMENTS - 1));
    v.range(
        "totalSegments",
        request.total_segments,
        1,
        Some(MAX_SEGMENTS),
    );
    let table_name = v.finish_with(request.table_name.as_deref())?;
    let segment = match (request.segment, request.total_segments) {
        (Some(segment), Some(total)) => {
            if segment >= total {
                // moto 5.2.5's AWS-verified record: no values echoed.
                return Err(DynamoError::validation(
                    "The Segment parameter is zero-based and must be less than parameter TotalSegments",
                ));
            }
            Some((segment as u64, total as u64))
        }
        (Some(_), None) => {
            return Err(DynamoError::validation(
                "The TotalSegments parameter is required but was not present in the request when Segment parameter is present",
            ))
        }
        (None, Some(_)) => {
            return Err(DynamoError::validation(
                "The Segment parameter is required but was not present in the request when parameter TotalSegments is present",
            ))
        }
        (None, None) => None,
    };
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
    let select = params.select()?;
    let has_expression =
        request.filter_expression.is_some() || request.projection_expression.is_some();
    let mut ctx = common::expression_context(
        &request.expression_attribute_names,
        &request.expression_attribute_values,
        has_expression,
        "FilterExpression",
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

    let table = engine.table_for_items(table_name)?;
    let consistent = request.consistent_read.unwrap_or(false);
    let index = reads::resolve_index(&table, request.index_name.as_deref(), consistent)?;
    let select = reads::select_for_index(select, request.select.as_deref(), index.as_deref())?;
    reads::check_projected(&table, index.as_deref(), projection.as_ref())?;
    // Table items and index entries are both laid out by partition hash, so
    // segments are hash ranges in either.
    let index_id = index.as_ref().map(|i| i.id);
    let at_hash = |hash: u64| match index_id {
        Some(index_id) => index_hash_bound(table.id, index_id, hash),
        None => hash_bound(table.id, hash),
    };
    let prefix = match index_id {
        Some(index_id) => index_entries(table.id, index_id),
        None => table_items(table.id),
    };
    let whole_end = prefix_end(&prefix).map_or(Bound::Unbounded, Bound::Excluded);
    let mut range = match segment {
        None => KeyRange {
            start: Bound::Included(prefix.clone()),
            end: whole_end,
        },
        Some((segment, total)) => {
            let (low, high) = segment_hashes(segment, total);
            KeyRange {
                start: Bound::Included(at_hash(low)),
                end: match high {
                    Some(high) => Bound::Excluded(at_hash(high)),
                    None => whole_end,
                },
            }
        }
    };
    let mut start_hash = None;
    if let Some(start_key) = &request.exclusive_start_key {
        let (encoded, hash) = match &index {
            Some(index) => {
                let encoded = index.start_key(table.id, &table.schema, start_key)?;
                (encoded, index.schema.partition_hash(start_key))
            }
            None => {
                reads::starting_key(&table, start_key)?;
                (
                    table.schema.encode(table.id, start_key),
                    partition_hash(&start_key[&table.schema.hash.name]),
                )
            }
        };
        if let Some((segment, total)) = segment {
            let (low, high) = segment_hashes(segment, total);
            if hash < low || high.is_some_and(|h| hash >= h) {
                return Err(DynamoError::validation(
                    "The provided Exclusive start key does not map to the provided segment",
                ));
            }
        }
        range.start = Bound::Excluded(encoded);
        start_hash = Some(hash);
    }
    table.admit_read(index.as_deref())?;
    let mut page = engine.read_page(
        &table,
        index.as_deref(),
        range,
        false,
        request.limit.map(|l| l as usize),
        filter.as_ref(),
    )?;
    reads::fetch_from_table(engine, &table, index.as_deref(), select, &mut page)?;
    let first = match (&request.exclusive_start_key, segment) {
        (Some(_), _) => start_hash.expect("set with the start key"),
        (None, Some((segment, total))) => segment_hashes(segment, total).0,
        (None, None) => 0,
    };
    let last = match (&page.last_evaluated, segment) {
        (Some(key), _) => match &index {
            Some(index) => index.schema.partition_hash(key),
            None => partition_hash(&key[&table.schema.hash.name]),
        },
        (None, Some((segment, total))) => {
            segment_hashes(segment, total).1.map_or(u64::MAX, |h| h - 1)
        }
        (None, None) => u64::MAX,
    };
    let units = scan_units(page.bytes_read, consistent, first, last);
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

/// The hash range [low, high) of a segment; `None` for the top of the space.
fn segment_hashes(segment: u64, total: u64) -> (u64, Option<u64>) {
    let bound = |s: u64| ((u128::from(s) << 64) / u128::from(total)) as u64;
    let high = (segment + 1 < total).then(|| bound(segment + 1));
    (bound(segment), high)
}

#[cfg(test)]
mod tests {
    use super::segment_hashes;

    #[test]
    fn segments_cover_the_hash_space_without_overlap() {
        for total in [1u64, 2, 3, 7, 1000] {
            let mut expected_low = 0;
            for s in 0..total {
                let (low, high) = segment_hashes(s, total);
                assert_eq!(low, expected_low);
                match high {
                    Some(h) => expected_low = h,
                    None => assert_eq!(s, total - 1),
                }
            }
        }
    }
}
