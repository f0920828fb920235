//! PutItem: replace an item, optionally guarded by a condition.

use crate::ops::choice::{Choice, CollectionMetrics, OnConditionFailure, ReturnValues};
use crate::ops::common::{Names, Values};
use crate::ops::conditional_write::{self, WriteOptions};
use crate::ops::output::Output;
use crate::validate::Violations;
use ferrodyn_engine::capacity::CapacityDetail;
use ferrodyn_engine::items::check_item_size;
use ferrodyn_engine::{Engine, Mutation};
use ferrodyn_expr::{Condition, Path};
use ferrodyn_types::{Item, Result};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Request {
    table_name: Option<String>,
    item: Option<Item>,
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
    /// PartiQL's INSERT guard, given typed instead of as an expression.
    #[serde(skip)]
    insert_guard: Option<Condition>,
}

impl Request {
    /// PartiQL's INSERT: the request (table and options) with this item,
    /// guarded by `attribute_not_exists(partition_key)`, both handed over
    /// typed (no JSON round trip, no expression to parse).
    pub fn insert(mut self, item: Item, partition_key: &str) -> Request {
        self.item = Some(item);
        self.insert_guard = Some(Condition::AttributeNotExists(Path::attr(partition_key)));
        self
    }
}

pub fn run(engine: &Engine, request: Request) -> Result<Vec<u8>> {
    Ok(execute(engine, request)?.encode())
}

/// The write's answer, not yet encoded (PartiQL takes it as it is).
pub fn execute(engine: &Engine, mut request: Request) -> Result<Output> {
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
    v.not_null("item", &request.item);
    options.check(&mut v);
    let (table_name, item) =
        v.finish_with(request.table_name.as_deref().zip(request.item.take()))?;
    let condition = match request.insert_guard.take() {
        Some(guard) => Some(guard),
        None => options.key_write_condition(
            &request.condition_expression,
            &request.expression_attribute_names,
            &request.expression_attribute_values,
        )?,
    };

    let table = engine.table_for_items(table_name)?;
    table.schema.validate_item(&item)?;
    check_item_size(&item)?;
    let key = table.schema.extract(&item);
    conditional_write::execute(
        engine,
        &table,
        &key,
        Mutation::Put(item),
        condition.as_ref(),
        &options,
    )
}
