//! What Query and Scan share: Select and projection rules, the starting key,
//! and the page response (Items, Count, ScannedCount, LastEvaluatedKey,
//! ConsumedCapacity).

use crate::ops::common::ResponseBody;
use ferrodyn_engine::capacity::{CapacityDetail, Consumed};
use ferrodyn_engine::read::Page;
use ferrodyn_engine::table::Table;
use ferrodyn_expr::Projection;
use ferrodyn_types::{DynamoError, Item, Result};

pub const SELECT_VALUES: &[&str] = &[
    "SPECIFIC_ATTRIBUTES",
    "COUNT",
    "ALL_ATTRIBUTES",
    "ALL_PROJECTED_ATTRIBUTES",
];

/// What a page returns per item.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Select {
    All,
    Count,
    Specific,
}

/// Checks Select against the projection parameters, as DynamoDB does.
pub fn select(
    select: Option<&str>,
    has_attributes_to_get: bool,
    has_projection_expression: bool,
    index: Option<&str>,
) -> Result<Select> {
    let projecting = has_attributes_to_get || has_projection_expression;
    match select {
        Some("ALL_PROJECTED_ATTRIBUTES") if index.is_none() => Err(DynamoError::validation(
            "ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName",
        )),
        Some("SPECIFIC_ATTRIBUTES") if !projecting => Err(DynamoError::validation(
            "Must specify the AttributesToGet or ProjectionExpression when choosing to get SPECIFIC_ATTRIBUTES",
        )),
        Some(other @ ("ALL_ATTRIBUTES" | "ALL_PROJECTED_ATTRIBUTES" | "COUNT")) if projecting => {
            let parameter = if has_attributes_to_get { "AttributesToGet" } else { "ProjectionExpression" };
            Err(DynamoError::validation(format!(
                "Cannot specify the {parameter} when choosing to get {other}"
            )))
        }
        Some("COUNT") => Ok(Select::Count),
        _ if projecting => Ok(Select::Specific),
        _ => Ok(Select::All),
    }
}

/// Validates ExclusiveStartKey against the table's key schema.
pub fn starting_key(table: &Table, key: &Item) -> Result<()> {
    table.schema.validate_key(key).map_err(|e| {
        DynamoError::validation(format!(
            "The provided starting key is invalid: {}",
            e.message
        ))
    })
}

/// Builds the response of one page.
pub fn page_response(
    table: &Table,
    page: Page,
    select: Select,
    projection: Option<&Projection>,
    consistent: bool,
    detail: CapacityDetail,
) -> Result<Vec<u8>> {
    let mut body = ResponseBody::default();
    let count = page.items.len();
    if select != Select::Count {
        let items: Vec<serde_json::Value> = page
            .items
            .iter()
            .map(|item| {
                let shown = match projection {
                    Some(p) => p.apply(item),
                    None => item.clone(),
                };
                serde_json::to_value(shown).expect("items always serialise")
            })
            .collect();
        body.value("Items", serde_json::Value::Array(items));
    }
    body.value("Count", count.into());
    body.value("ScannedCount", page.scanned.into());
    if let Some(last) = &page.last_evaluated {
        body.item("LastEvaluatedKey", last);
    }
    body.capacity(
        &Consumed::read(&table.name, page.read_units(consistent)),
        detail,
    );
    body.finish()
}
