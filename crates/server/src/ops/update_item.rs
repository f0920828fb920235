//! UpdateItem: edit (or create) an item with an UpdateExpression or the legacy
//! AttributeUpdates, optionally guarded by a condition.

use crate::ops::choice::{Choice, CollectionMetrics, OnConditionFailure, ReturnValues};
use crate::ops::common::{self, Names, Values};
use crate::ops::conditional_write::{self, WriteOptions};
use crate::ops::output::Output;
use crate::validate::Violations;
use ferrodyn_engine::capacity::CapacityDetail;
use ferrodyn_engine::{Engine, Mutation};
use ferrodyn_expr::{legacy_attribute_updates, parse_update, UpdateExpression};
use ferrodyn_types::{DynamoError, Item, Result};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Request {
    table_name: Option<String>,
    key: Option<Item>,
    update_expression: Option<String>,
    attribute_updates: Option<serde_json::Value>,
    condition_expression: Option<String>,
    expression_attribute_names: Names,
    #[serde(
        default,
        deserialize_with = "ferrodyn_types::deserialize_expression_values"
    )]
    expression_attribute_values: Values,
    expected: Option<serde_json::Value>,
    conditional_operator: Option<String>,
    return_values: Option<Choice<ReturnValues>>,
    return_consumed_capacity: Option<Choice<CapacityDetail>>,
    return_item_collection_metrics: Option<Choice<CollectionMetrics>>,
    return_values_on_condition_check_failure: Option<Choice<OnConditionFailure>>,
}

pub fn run(engine: &Engine, request: Request) -> Result<Vec<u8>> {
    Ok(execute(engine, request)?.encode())
}

/// The write's answer, not yet encoded (PartiQL takes it as it is).
pub fn execute(engine: &Engine, request: Request) -> Result<Output> {
    let options = WriteOptions {
        return_values: &request.return_values,
        return_consumed_capacity: &request.return_consumed_capacity,
        return_item_collection_metrics: &request.return_item_collection_metrics,
        return_values_on_condition_check_failure: &request.return_values_on_condition_check_failure,
        conditional_operator: &request.conditional_operator,
        expected: &request.expected,
    };
    Violations::table_name_first("tableName", &request.table_name)?;
    let mut v = Violations::default();
    v.not_null("key", &request.key);
    options.check(&mut v);
    let (table_name, key) =
        v.finish_with(request.table_name.as_deref().zip(request.key.as_ref()))?;
    options.check_conditional_operator()?;
    let [expected, operator] = options.legacy_parameters();
    common::no_mixing(
        &[
            ("AttributeUpdates", request.attribute_updates.is_some()),
            expected,
            operator,
        ],
        &[
            ("UpdateExpression", request.update_expression.is_some()),
            (
                "ConditionExpression",
                request.condition_expression.is_some(),
            ),
        ],
    )?;
    let has_expression =
        request.update_expression.is_some() || request.condition_expression.is_some();
    let mut ctx = common::expression_context(
        &request.expression_attribute_names,
        &request.expression_attribute_values,
        has_expression,
        "UpdateExpression and ConditionExpression are null",
    )?;
    let update = match (&request.update_expression, &request.attribute_updates) {
        (Some(text), _) => parse_update(text, &mut ctx)?,
        (None, Some(updates)) => legacy_attribute_updates(updates)?,
        // An update with nothing to change still creates a missing item.
        (None, None) => UpdateExpression::default(),
    };
    let condition = options.condition(&request.condition_expression, &mut ctx)?;
    ctx.check_all_used()?;

    let table = engine.table_for_items(table_name)?;
    table.schema.validate_key(key)?;
    for path in update.target_paths() {
        if table.schema.is_key_attribute(path.root()) {
            return Err(DynamoError::invalid_parameter(format!(
                "Cannot update attribute {}. This attribute is part of the key",
                path.root()
            )));
        }
    }
    conditional_write::execute(
        engine,
        &table,
        key,
        Mutation::Update(&update),
        condition.as_ref(),
        &options,
    )
}
