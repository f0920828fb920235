//! What PutItem, UpdateItem and DeleteItem share: their common options and
//! their checks, the condition (ConditionExpression or the legacy Expected),
//! and running the write through the engine's front door (which admits and
//! charges it) and building its response (ReturnValues, ConsumedCapacity,
//! ItemCollectionMetrics).

use crate::ops::choice::{chosen, Choice, CollectionMetrics, OnConditionFailure, ReturnValues};
use crate::ops::common;
use crate::ops::output::Output;
use crate::validate::{self, Violations};
use ferrodyn_engine::api::{SingleWrite, SingleWriteOutput};
use ferrodyn_engine::capacity::CapacityDetail;
use ferrodyn_engine::table::Table;
use ferrodyn_engine::{Engine, Mutation};
use ferrodyn_expr::{
    legacy_expected, parse_condition, project_paths, Condition, ExpressionContext,
};
use ferrodyn_types::{DynamoError, Item, Result};
use std::sync::Arc;

/// The options every single-item write takes.
pub struct WriteOptions<'a> {
    pub return_values: &'a Option<Choice<ReturnValues>>,
    pub return_consumed_capacity: &'a Option<Choice<CapacityDetail>>,
    pub return_item_collection_metrics: &'a Option<Choice<CollectionMetrics>>,
    pub return_values_on_condition_check_failure: &'a Option<Choice<OnConditionFailure>>,
    pub conditional_operator: &'a Option<String>,
    pub expected: &'a Option<serde_json::Value>,
}

impl WriteOptions<'_> {
    /// The options' field constraints (DynamoDB's enumerations).
    pub fn check(&self, v: &mut Violations) {
        v.choice("returnValues", self.return_values);
        common::check_return_options(
            v,
            self.return_consumed_capacity,
            self.return_item_collection_metrics,
        );
        v.one_of(
            "conditionalOperator",
            self.conditional_operator.as_deref(),
            validate::CONDITIONAL_OPERATOR,
        );
        v.choice(
            "returnValuesOnConditionCheckFailure",
            self.return_values_on_condition_check_failure,
        );
    }

    /// ConditionalOperator only makes sense with Expected.
    pub fn check_conditional_operator(&self) -> Result<()> {
        if self.conditional_operator.is_some() && self.expected.is_none() {
            return Err(DynamoError::validation(
                "ConditionalOperator cannot be used without Filter or Expected",
            ));
        }
        Ok(())
    }

    /// The legacy parameters given, for the "both expression and
    /// non-expression parameters" check.
    pub fn legacy_parameters(&self) -> [(&'static str, bool); 2] {
        [
            ("Expected", self.expected.is_some()),
            ("ConditionalOperator", self.conditional_operator.is_some()),
        ]
    }

    /// The write's condition, from ConditionExpression or Expected.
    pub fn condition(
        &self,
        expression: &Option<String>,
        ctx: &mut ExpressionContext,
    ) -> Result<Option<Condition>> {
        Ok(match (expression, self.expected) {
            (Some(text), _) => Some(parse_condition(text, ctx)?),
            (None, Some(expected)) => Some(legacy_expected(
                expected,
                self.conditional_operator.as_deref(),
            )?),
            (None, None) => None,
        })
    }

    /// PutItem's and DeleteItem's shared checks after field validation: the
    /// condition comes from ConditionExpression (every name and value used)
    /// or from Expected, never both, and ReturnValues is NONE or ALL_OLD.
    pub fn key_write_condition(
        &self,
        condition_expression: &Option<String>,
        names: &common::Names,
        values: &common::Values,
    ) -> Result<Option<Condition>> {
        self.check_conditional_operator()?;
        common::no_mixing(
            &self.legacy_parameters(),
            &[("ConditionExpression", condition_expression.is_some())],
        )?;
        let mut ctx = common::expression_context(
            names,
            values,
            condition_expression.is_some(),
            "ConditionExpression is null",
        )?;
        let condition = self.condition(condition_expression, &mut ctx)?;
        ctx.check_all_used()?;
        common::only_none_or_all_old(self.return_values())?;
        Ok(condition)
    }

    pub fn return_values(&self) -> ReturnValues {
        chosen(self.return_values)
    }
}

/// Runs a validated write (within the table's provisioned capacity) and
/// returns its answer, not yet encoded.
pub fn execute(
    engine: &Engine,
    table: &Arc<Table>,
    key: &Item,
    mutation: Mutation<'_>,
    condition: Option<&Condition>,
    options: &WriteOptions<'_>,
) -> Result<Output> {
    let return_old_on_failure =
        chosen(options.return_values_on_condition_check_failure) == OnConditionFailure::AllOld;
    let SingleWriteOutput { outcome, consumed } = engine.api().write_item(SingleWrite {
        table,
        key,
        mutation,
        condition,
        return_old_on_failure,
    })?;

    let attributes = match options.return_values() {
        ReturnValues::None => None,
        ReturnValues::AllOld => outcome.old,
        ReturnValues::AllNew => outcome.new,
        ReturnValues::UpdatedOld => outcome
            .old
            .as_ref()
            .map(|old| project_paths(old, &outcome.updated_paths)),
        ReturnValues::UpdatedNew => outcome
            .new
            .as_ref()
            .map(|new| project_paths(new, &outcome.updated_paths)),
    };
    let collection_metrics =
        common::wants_collection_metrics(options.return_item_collection_metrics)
            .then(|| outcome.item_collection.as_ref().map(|m| m.to_json()))
            .flatten();
    Ok(Output::Write {
        attributes: attributes.filter(|a| !a.is_empty()),
        capacity: consumed.to_json(chosen(options.return_consumed_capacity)),
        collection_metrics,
    })
}
