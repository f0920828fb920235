//! DeleteItem: remove an item by key, optionally guarded by a condition.

use crate::ops::choice::{Choice, CollectionMetrics, OnConditionFailure, ReturnValues};
use crate::ops::common::{Names, Values};
use crate::ops::conditional_write::{self, WriteOptions};
use crate::ops::output::Output;
use crate::validate::Violations;
use ferrodyn_engine::capacity::CapacityDetail;
use ferrodyn_engine::{Engine, Mutation};
use ferrodyn_types::{Item, Result};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Request {
    table_name: Option<String>,
    key: Option<Item>,
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
    let mut v = Violations::default();
    v.table_name_or_arn("tableName", &request.table_name);
    v.not_null("key", &request.key);
    options.check(&mut v);
    let (table_name, key) =
        v.finish_with(request.table_name.as_deref().zip(request.key.as_ref()))?;
    let condition = options.key_write_condition(
        &request.condition_expression,
        &request.expression_attribute_names,
        &request.expression_attribute_values,
    )?;

    let table = engine.table_for_items(table_name)?;
    table.schema.validate_key(key)?;
    conditional_write::execute(
        engine,
        &table,
        key,
        Mutation::Delete,
        condition.as_ref(),
        &options,
    )
}
