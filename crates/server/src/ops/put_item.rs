//! PutItem: replace an item, optionally guarded by a condition.

use crate::ops::common::{self, Names, ResponseBody, ReturnValues, Values};
use crate::validate::{self, Violations};
use ferrodyn_engine::capacity::Consumed;
use ferrodyn_engine::items::check_item_size;
use ferrodyn_engine::throughput::Capacity;
use ferrodyn_engine::{Engine, Mutation};
use ferrodyn_expr::{legacy_expected, parse_condition};
use ferrodyn_types::{DynamoError, Item, Result};
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
    return_values: Option<String>,
    return_consumed_capacity: Option<String>,
    return_item_collection_metrics: Option<String>,
    return_values_on_condition_check_failure: Option<String>,
}

pub fn run(engine: &Engine, request: Request) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    v.table_name("tableName", &request.table_name);
    v.not_null("item", &request.item);
    v.one_of(
        "returnValues",
        request.return_values.as_deref(),
        validate::RETURN_VALUES,
    );
    common::check_return_options(
        &mut v,
        &request.return_consumed_capacity,
        &request.return_item_collection_metrics,
    );
    v.one_of(
        "conditionalOperator",
        request.conditional_operator.as_deref(),
        validate::CONDITIONAL_OPERATOR,
    );
    v.one_of(
        "returnValuesOnConditionCheckFailure",
        request.return_values_on_condition_check_failure.as_deref(),
        validate::RETURN_VALUES_ON_CONDITION_CHECK_FAILURE,
    );
    v.finish()?;
    if request.conditional_operator.is_some() && request.expected.is_none() {
        return Err(DynamoError::validation(
            "ConditionalOperator cannot be used without Filter or Expected",
        ));
    }
    common::no_mixing(
        &[
            ("Expected", request.expected.is_some()),
            (
                "ConditionalOperator",
                request.conditional_operator.is_some(),
            ),
        ],
        &[(
            "ConditionExpression",
            request.condition_expression.is_some(),
        )],
    )?;
    let mut ctx = common::expression_context(
        &request.expression_attribute_names,
        &request.expression_attribute_values,
        request.condition_expression.is_some(),
        "ConditionExpression",
    )?;
    let condition = match (&request.condition_expression, &request.expected) {
        (Some(text), _) => Some(parse_condition(text, &mut ctx)?),
        (None, Some(expected)) => Some(legacy_expected(
            expected,
            request.conditional_operator.as_deref(),
        )?),
        (None, None) => None,
    };
    ctx.check_all_used()?;
    let return_values = ReturnValues::parse(request.return_values.as_deref());
    common::only_none_or_all_old(return_values)?;

    let table = engine.table_for_items(request.table_name.as_deref().expect("checked"))?;
    let item = request.item.expect("checked");
    table.schema.validate_item(&item)?;
    check_item_size(&item)?;
    let key = table.schema.extract(&item);
    table.throughput.admit(Capacity::Write)?;
    let outcome = engine.write_item(
        &table,
        &key,
        Mutation::Put(item),
        condition.as_ref(),
        request.return_values_on_condition_check_failure.as_deref() == Some("ALL_OLD"),
    )?;

    let consumed =
        Consumed::write(&table.name, outcome.write_units).with_indexes(outcome.index_units.clone());
    table.throughput.charge(Capacity::Write, consumed.total());
    let mut body = ResponseBody::default();
    if return_values == ReturnValues::AllOld {
        if let Some(old) = &outcome.old {
            body.item("Attributes", old);
        }
    }
    body.capacity(
        &Consumed::write(&table.name, outcome.write_units)
            .with_indexes(outcome.index_units.clone()),
        common::capacity_detail(&request.return_consumed_capacity),
    );
    body.finish()
}
