//! GetItem: one item by key, optionally projected. Without a projection the
//! stored JSON is sent as it is, with no decode and re-encode.

use crate::ops::choice::{chosen, Choice};
use crate::ops::common::{self, Names};
use crate::ops::output::{OutItem, Output};
use crate::validate::Violations;
use ferrodyn_engine::capacity::CapacityDetail;
use ferrodyn_engine::Engine;
use ferrodyn_expr::{legacy_attributes_to_get, parse_projection};
use ferrodyn_types::{Item, Result};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Request {
    table_name: Option<String>,
    key: Option<Item>,
    consistent_read: Option<bool>,
    projection_expression: Option<String>,
    expression_attribute_names: Names,
    attributes_to_get: Option<Vec<String>>,
    return_consumed_capacity: Option<Choice<CapacityDetail>>,
}

impl Request {
    /// The request with this key (PartiQL's SELECT by full key builds the
    /// rest of the request and hands its key over typed).
    pub fn with_key(mut self, key: Item) -> Request {
        self.key = Some(key);
        self
    }
}

pub fn run(engine: &Engine, request: Request) -> Result<Vec<u8>> {
    Ok(execute(engine, request)?.encode())
}

/// GetItem's answer, not yet encoded (PartiQL takes it as it is).
pub fn execute(engine: &Engine, request: Request) -> Result<Output> {
    let mut v = Violations::default();
    v.table_name_or_arn("tableName", &request.table_name);
    v.not_null("key", &request.key);
    v.count(
        "attributesToGet",
        request.attributes_to_get.as_deref(),
        1,
        usize::MAX,
    );
    v.choice("returnConsumedCapacity", &request.return_consumed_capacity);
    let (table_name, key) = v.finish_with(request.table_name.zip(request.key))?;
    common::no_mixing(
        &[("AttributesToGet", request.attributes_to_get.is_some())],
        &[(
            "ProjectionExpression",
            request.projection_expression.is_some(),
        )],
    )?;
    let mut ctx = common::expression_context(
        &request.expression_attribute_names,
        &None,
        request.projection_expression.is_some(),
        "ProjectionExpression is null",
    )?;
    let projection = match (&request.projection_expression, &request.attributes_to_get) {
        (Some(text), _) => Some(parse_projection(text, &mut ctx)?),
        (None, Some(names)) => Some(legacy_attributes_to_get(names)?),
        (None, None) => None,
    };
    ctx.check_all_used()?;

    let consistent = request.consistent_read.unwrap_or(false);
    let read = engine.api().get_item(&table_name, &key, consistent)?;
    let detail = chosen(&request.return_consumed_capacity);
    let capacity = read.consumed.to_json(detail);
    let item = match (read.item, projection) {
        (Some(stored), None) => Some(OutItem::Stored(stored.json)),
        // DynamoDB returns an empty Item when nothing projected exists.
        (Some(stored), Some(projection)) => {
            Some(OutItem::Built(projection.apply(&stored.parse()?)))
        }
        (None, _) => None,
    };
    Ok(Output::Item { item, capacity })
}
