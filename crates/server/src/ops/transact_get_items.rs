//! TransactGetItems: up to 100 Gets read as one consistent snapshot across
//! items and tables, at twice the read units of strongly consistent reads.

use crate::faults::Faults;
use crate::ops::choice::{chosen, Choice};
use crate::ops::common::{self, Names};
use crate::ops::output::{OutItem, Output};
use crate::validate::Violations;
use ferrodyn_engine::api::TransactGetOutput;
use ferrodyn_engine::capacity::CapacityDetail;
use ferrodyn_engine::items::StoredItem;
use ferrodyn_engine::table::Table;
use ferrodyn_engine::transactions::{cancellation_error, CancellationReason};
use ferrodyn_engine::Engine;
use ferrodyn_expr::{parse_projection, Projection};
use ferrodyn_types::{DynamoError, Item, Result};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Request {
    transact_items: Option<Vec<TransactGetItem>>,
    return_consumed_capacity: Option<Choice<CapacityDetail>>,
}

#[derive(Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct TransactGetItem {
    get: Option<Get>,
}

#[derive(Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Get {
    table_name: Option<String>,
    key: Option<Item>,
    projection_expression: Option<String>,
    expression_attribute_names: Names,
}

/// A Get that passed its field constraints.
struct CheckedGet {
    table_name: String,
    key: Item,
    projection_expression: Option<String>,
    expression_attribute_names: Names,
}

const MAX_GETS: usize = 100;

pub fn run(engine: &Engine, faults: &Faults, request: Request) -> Result<Vec<u8>> {
    Ok(execute(engine, faults, request)?.encode())
}

/// The transaction's answer, not yet encoded (PartiQL takes it as it is).
pub fn execute(engine: &Engine, faults: &Faults, request: Request) -> Result<Output> {
    let detail = chosen(&request.return_consumed_capacity);
    let checked = check(request)?;
    let projections = checked.iter().map(projection).collect::<Result<Vec<_>>>()?;
    let gets = resolve(engine, checked)?;
    let names: Vec<&str> = gets.iter().map(|(t, _)| t.name.as_str()).collect();
    if let Some(conflict) = faults.transaction_conflict("TransactGetItems", &names) {
        return Err(conflict);
    }
    let TransactGetOutput { found, units } = engine.api().transact_get_items(&gets)?;
    respond(found, units, &projections, detail)
}

/// The field constraints, in DynamoDB's order; the Gets in checked form.
fn check(request: Request) -> Result<Vec<CheckedGet>> {
    let mut v = Violations::default();
    if v.not_null("transactItems", &request.transact_items) {
        v.count(
            "transactItems",
            request.transact_items.as_deref(),
            1,
            MAX_GETS,
        );
    }
    v.choice("returnConsumedCapacity", &request.return_consumed_capacity);
    let items = request.transact_items.as_deref().unwrap_or_default();
    for (i, item) in items.iter().enumerate() {
        let field = format!("transactItems.{}.member.get", i + 1);
        match &item.get {
            Some(get) => {
                v.table_name_or_arn(&format!("{field}.tableName"), &get.table_name);
                v.not_null(&format!("{field}.key"), &get.key);
            }
            None => {
                v.not_null(&field, &item.get);
            }
        }
    }
    let checked = request.transact_items.and_then(|items| {
        items
            .into_iter()
            .map(|item| {
                let get = item.get?;
                Some(CheckedGet {
                    table_name: get.table_name?,
                    key: get.key?,
                    projection_expression: get.projection_expression,
                    expression_attribute_names: get.expression_attribute_names,
                })
            })
            .collect::<Option<Vec<_>>>()
    });
    v.finish_with(checked)
}

/// A Get's ProjectionExpression, parsed (every name used).
fn projection(get: &CheckedGet) -> Result<Option<Projection>> {
    let mut ctx = common::expression_context(
        &get.expression_attribute_names,
        &None,
        get.projection_expression.is_some(),
        "ProjectionExpression is null",
    )?;
    let projection = match &get.projection_expression {
        Some(text) => Some(parse_projection(text, &mut ctx)?),
        None => None,
    };
    ctx.check_all_used()?;
    Ok(projection)
}

/// Each Get's table (all must exist), its key checked against the table's
/// schema, and no item read twice.
fn resolve(engine: &Engine, checked: Vec<CheckedGet>) -> Result<Vec<(Arc<Table>, Item)>> {
    let tables = checked
        .iter()
        .map(|get| engine.table_for_items(&get.table_name))
        .collect::<Result<Vec<_>>>()?;
    key_problems(&checked, &tables)?;
    let mut gets: Vec<(Arc<Table>, Item)> = Vec::with_capacity(checked.len());
    for (get, table) in checked.into_iter().zip(tables) {
        if gets.iter().any(|(t, k)| t.id == table.id && *k == get.key) {
            return Err(DynamoError::validation(
                "Transaction request cannot include multiple operations on one item",
            ));
        }
        gets.push((table, get.key));
    }
    Ok(gets)
}

/// The Responses (projected items, `{}` for a missing one) and the
/// capacity (the engine's: twice a strongly consistent read per Get).
fn respond(
    found: Vec<Option<StoredItem>>,
    units: Vec<(String, f64)>,
    projections: &[Option<Projection>],
    detail: CapacityDetail,
) -> Result<Output> {
    let mut responses = Vec::with_capacity(found.len());
    for (stored, projection) in found.into_iter().zip(projections) {
        responses.push(match (stored, projection) {
            (Some(stored), Some(p)) => Some(OutItem::Built(p.apply(&stored.parse()?))),
            (Some(stored), None) => Some(OutItem::Stored(stored.json)),
            (None, _) => None,
        });
    }
    Ok(Output::Gets {
        responses,
        capacity: common::capacity_list(&common::read_capacity(&units), detail),
    })
}

/// A Get whose key does not fit its table cancels the transaction with a
/// ValidationError reason for it (the first such Get; the others report None),
/// as AWS reports per-action validation, not as a ValidationException.
fn key_problems(gets: &[CheckedGet], tables: &[Arc<Table>]) -> Result<()> {
    let problems: Vec<Option<DynamoError>> = gets
        .iter()
        .zip(tables)
        .map(|(get, table)| table.schema.validate_key(&get.key).err())
        .collect();
    let Some(first) = problems.iter().position(Option::is_some) else {
        return Ok(());
    };
    let reasons: Vec<CancellationReason> = problems
        .into_iter()
        .enumerate()
        .map(|(n, problem)| match problem {
            Some(error) if n == first => CancellationReason::from_error(error),
            _ => CancellationReason::none(),
        })
        .collect();
    Err(cancellation_error(&reasons))
}
