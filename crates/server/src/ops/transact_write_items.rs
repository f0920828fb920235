//! TransactWriteItems: up to 100 Put, Update, Delete and ConditionCheck
//! actions on distinct items, committed all together or not at all, with
//! ClientRequestToken idempotency and doubled (transactional) capacity. This
//! module checks the actions and their keys; the engine (api/multi.rs)
//! claims the token, admits, commits and charges.

use crate::faults::Faults;
use crate::ops::choice::{chosen, Choice, CollectionMetrics, OnConditionFailure};
use crate::ops::common::{self, Names, Values};
use crate::ops::output::Output;
use crate::validate::Violations;
use ferrodyn_engine::api::TransactWriteOutput;
use ferrodyn_engine::capacity::{CapacityDetail, Consumed};
use ferrodyn_engine::items::check_item_size;
use ferrodyn_engine::table::Table;
use ferrodyn_engine::throughput::Capacity;
use ferrodyn_engine::transactions::TransactWrite;
use ferrodyn_engine::{Engine, Mutation};
use ferrodyn_expr::{parse_condition, parse_update, Condition, UpdateExpression};
use ferrodyn_types::{DynamoError, Item, Result};
use serde::{Deserialize, Serialize};
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Request {
    transact_items: Option<Vec<TransactItem>>,
    client_request_token: Option<String>,
    return_consumed_capacity: Option<Choice<CapacityDetail>>,
    return_item_collection_metrics: Option<Choice<CollectionMetrics>>,
}

#[derive(Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct TransactItem {
    #[serde(skip_serializing_if = "Option::is_none")]
    put: Option<Action>,
    #[serde(skip_serializing_if = "Option::is_none")]
    update: Option<Action>,
    #[serde(skip_serializing_if = "Option::is_none")]
    delete: Option<Action>,
    #[serde(skip_serializing_if = "Option::is_none")]
    condition_check: Option<Action>,
}

/// The fields of any action; which ones apply depends on the action kind.
#[derive(Deserialize, Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Action {
    table_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    item: Option<Item>,
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<Item>,
    #[serde(skip_serializing_if = "Option::is_none")]
    update_expression: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    condition_expression: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    expression_attribute_names: Names,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[serde(
        default,
        deserialize_with = "ferrodyn_types::deserialize_expression_values"
    )]
    expression_attribute_values: Values,
    #[serde(skip_serializing_if = "Option::is_none")]
    return_values_on_condition_check_failure: Option<Choice<OnConditionFailure>>,
}

/// What an action does, with the fields its kind requires (checked present).
enum Write<T> {
    Put { item: Item },
    Update { key: Item, update: T },
    Delete { key: Item },
    ConditionCheck { key: Item },
}

/// An action that passed its field constraints; `Write<String>` holds the
/// UpdateExpression's text.
struct CheckedAction {
    table_name: String,
    write: Write<String>,
    /// Required (checked) for a ConditionCheck, optional for the others.
    condition_expression: Option<String>,
    /// Whether the action carried any expression, even one its kind ignores
    /// (an UpdateExpression on a Put): names and values are allowed then.
    has_expression: bool,
    expression_attribute_names: Names,
    expression_attribute_values: Values,
    return_old_on_failure: bool,
}

/// An action with its expressions parsed.
struct ParsedAction {
    table_name: String,
    write: Write<UpdateExpression>,
    condition: Option<Condition>,
    return_old_on_failure: bool,
}

/// The request in checked form.
struct Checked {
    actions: Vec<CheckedAction>,
    client_request_token: Option<String>,
    /// The digest of the actions, taken when there is a token to claim.
    fingerprint: Option<u64>,
    return_consumed_capacity: Option<Choice<CapacityDetail>>,
    return_item_collection_metrics: Option<Choice<CollectionMetrics>>,
}

const MAX_ACTIONS: usize = 100;
/// DynamoDB's limit on a transaction's payload.
const MAX_PAYLOAD_BYTES: usize = 4 * 1024 * 1024;

pub fn run(engine: &Engine, faults: &Faults, request: Request, body_len: usize) -> Result<Vec<u8>> {
    Ok(execute(engine, faults, request, body_len)?.encode())
}

/// The transaction's answer, not yet encoded (PartiQL takes it as it is).
pub fn execute(
    engine: &Engine,
    faults: &Faults,
    request: Request,
    body_len: usize,
) -> Result<Output> {
    let request = check(request)?;
    if body_len > MAX_PAYLOAD_BYTES {
        return Err(DynamoError::validation(
            "Transaction request size cannot exceed 4 MB (the aggregate size of the items in the transaction)",
        ));
    }
    // Expressions are parsed (and their names and values checked) first:
    // their errors fail the whole request, not one action.
    let parsed = request
        .actions
        .into_iter()
        .map(parse_expressions)
        .collect::<Result<Vec<_>>>()?;
    let tables = parsed
        .iter()
        .map(|p| engine.table_for_items(&p.table_name))
        .collect::<Result<Vec<_>>>()?;
    let keys = check_keys(&parsed, &tables)?;

    let detail = chosen(&request.return_consumed_capacity);
    let token = request
        .client_request_token
        .as_deref()
        .zip(request.fingerprint);
    let names: Vec<&str> = tables.iter().map(|t| t.name.as_str()).collect();
    let conflict = || match faults.transaction_conflict("TransactWriteItems", &names) {
        Some(conflict) => Err(conflict),
        None => Ok(()),
    };
    let actions = transact_writes(&parsed, &tables, keys);
    let (writes, units) = match engine.api().transact_write_items(
        actions,
        token,
        conflict,
        faults.transaction_hold(&names),
    )? {
        // A replay writes nothing and, as in DynamoDB, reports read
        // capacity rather than write capacity.
        TransactWriteOutput::Replayed { units } => {
            return respond(&units, detail, Capacity::Read, None, &[])
        }
        TransactWriteOutput::Committed { writes, units } => (writes, units),
    };
    let metrics = common::wants_collection_metrics(&request.return_item_collection_metrics)
        .then(|| common::collection_metrics(&writes))
        .flatten();
    let vectors: Vec<Consumed> = (writes.iter())
        .map(|w| Consumed::write(&w.table.name, 0.0).with_vectors(w.vector_units()))
        .collect();
    respond(
        &units,
        detail,
        Capacity::Write,
        metrics,
        &Consumed::per_table(vectors),
    )
}

/// The field constraints, in DynamoDB's order; the actions in checked form.
fn check(request: Request) -> Result<Checked> {
    let mut v = Violations::default();
    if v.not_null("transactItems", &request.transact_items) {
        v.count(
            "transactItems",
            request.transact_items.as_deref(),
            1,
            MAX_ACTIONS,
        );
    }
    v.length(
        "clientRequestToken",
        request.client_request_token.as_deref(),
        1,
        36,
    );
    common::check_return_options(
        &mut v,
        &request.return_consumed_capacity,
        &request.return_item_collection_metrics,
    );
    let items = request.transact_items.unwrap_or_default();
    let fingerprint = request
        .client_request_token
        .is_some()
        .then(|| fingerprint(&items));
    let mut actions = Some(Vec::with_capacity(items.len()));
    for (i, item) in items.into_iter().enumerate() {
        let checked = check_action(&mut v, i, item)?;
        match (&mut actions, checked) {
            (Some(list), Some(action)) => list.push(action),
            _ => actions = None,
        }
    }
    let actions = v.finish_with(actions)?;
    Ok(Checked {
        actions,
        client_request_token: request.client_request_token,
        fingerprint,
        return_consumed_capacity: request.return_consumed_capacity,
        return_item_collection_metrics: request.return_item_collection_metrics,
    })
}

/// One TransactItem: exactly one action (else the whole request fails at
/// once), its table name and the fields its kind requires.
fn check_action(v: &mut Violations, i: usize, item: TransactItem) -> Result<Option<CheckedAction>> {
    let present: Vec<(&str, Action)> = [
        ("conditionCheck", item.condition_check),
        ("put", item.put),
        ("delete", item.delete),
        ("update", item.update),
    ]
    .into_iter()
    .filter_map(|(k, a)| a.map(|a| (k, a)))
    .collect();
    if present.is_empty() {
        // DynamoDB Local's and Dynoxide's words (no AWS record says otherwise).
        return Err(DynamoError::validation(
            "Invalid Request: TransactWriteRequest should contain Delete or Put or Update request",
        ));
    }
    let [(kind, action)]: [(&str, Action); 1] = present.try_into().map_err(|_| {
        DynamoError::validation(
            "TransactItems can only contain one of Check, Put, Update or Delete",
        )
    })?;
    let field = format!("transactItems.{}.member.{kind}", i + 1);
    v.table_name_or_arn(&format!("{field}.tableName"), &action.table_name);
    let required: &[(&str, bool)] = match kind {
        "put" => &[("item", action.item.is_some())],
        "update" => &[
            ("key", action.key.is_some()),
            ("updateExpression", action.update_expression.is_some()),
        ],
        "delete" => &[("key", action.key.is_some())],
        _ => &[
            ("key", action.key.is_some()),
            ("conditionExpression", action.condition_expression.is_some()),
        ],
    };
    for (name, present) in required {
        v.not_null(&format!("{field}.{name}"), &present.then_some(()));
    }
    v.choice(
        &format!("{field}.returnValuesOnConditionCheckFailure"),
        &action.return_values_on_condition_check_failure,
    );
    let has_expression =
        action.condition_expression.is_some() || action.update_expression.is_some();
    let write = match kind {
        "put" => action.item.map(|item| Write::Put { item }),
        "update" => action
            .key
            .zip(action.update_expression)
            .map(|(key, update)| Write::Update { key, update }),
        "delete" => action.key.map(|key| Write::Delete { key }),
        _ => action
            .key
            .filter(|_| action.condition_expression.is_some())
            .map(|key| Write::ConditionCheck { key }),
    };
    Ok(write
        .zip(action.table_name)
        .map(|(write, table_name)| CheckedAction {
            table_name,
            write,
            condition_expression: action.condition_expression,
            has_expression,
            expression_attribute_names: action.expression_attribute_names,
            expression_attribute_values: action.expression_attribute_values,
            return_old_on_failure: chosen(&action.return_values_on_condition_check_failure)
                == OnConditionFailure::AllOld,
        }))
}

/// Parses an action's UpdateExpression (an Update's) and its condition;
/// every name and value given must be used.
fn parse_expressions(action: CheckedAction) -> Result<ParsedAction> {
    let mut ctx = common::expression_context(
        &action.expression_attribute_names,
        &action.expression_attribute_values,
        action.has_expression,
        "ConditionExpression is null",
    )?;
    let write = match action.write {
        Write::Update { key, update } => Write::Update {
            key,
            update: parse_update(&update, &mut ctx)?,
        },
        Write::Put { item } => Write::Put { item },
        Write::Delete { key } => Write::Delete { key },
        Write::ConditionCheck { key } => Write::ConditionCheck { key },
    };
    let condition = match &action.condition_expression {
        Some(text) => Some(parse_condition(text, &mut ctx)?),
        None => None,
    };
    ctx.check_all_used()?;
    Ok(ParsedAction {
        table_name: action.table_name,
        write,
        condition,
        return_old_on_failure: action.return_old_on_failure,
    })
}

/// The keys of the actions. An empty key value, of the table or of an
/// index, fails the whole request (AWS, moto's test_transaction_with_empty_key;
/// DynamoDB Local), unlike a key of the wrong type, which is that action's
/// ValidationError; no two actions may touch one item.
fn check_keys(parsed: &[ParsedAction], tables: &[Arc<Table>]) -> Result<Vec<Result<Item>>> {
    for (p, table) in parsed.iter().zip(tables) {
        match &p.write {
            Write::Put { item } => {
                table.schema.check_no_empty_key(item)?;
                for index in table.indexes() {
                    index.check_no_empty_key(item)?;
                }
            }
            Write::Update { key, .. } | Write::Delete { key } | Write::ConditionCheck { key } => {
                table.schema.check_no_empty_key(key)?;
            }
        }
    }
    let keys: Vec<Result<Item>> = parsed
        .iter()
        .zip(tables)
        .map(|(p, t)| action_key(p, t))
        .collect();
    let mut seen: Vec<(u64, Vec<u8>)> = Vec::new();
    for (key, table) in keys.iter().zip(tables) {
        if let Ok(key) = key {
            let encoded = table.schema.encode(table.id, key);
            if seen.iter().any(|(id, k)| *id == table.id && *k == encoded) {
                return Err(DynamoError::validation(
                    "Transaction request cannot include multiple operations on one item",
                ));
            }
            seen.push((table.id, encoded));
        }
    }
    Ok(keys)
}

/// The engine's actions; an action whose key failed carries its error.
fn transact_writes<'a>(
    parsed: &'a [ParsedAction],
    tables: &[Arc<Table>],
    keys: Vec<Result<Item>>,
) -> Vec<Result<TransactWrite<'a>>> {
    parsed
        .iter()
        .zip(tables)
        .zip(keys)
        .map(|((p, table), key)| {
            let key = key?;
            let mutation = match &p.write {
                Write::Put { item } => Mutation::Put(item.clone()),
                Write::Update { update, .. } => Mutation::Update(update),
                Write::Delete { .. } => Mutation::Delete,
                Write::ConditionCheck { .. } => Mutation::Check,
            };
            Ok(TransactWrite {
                table: Arc::clone(table),
                key,
                mutation,
                condition: p.condition.as_ref(),
                return_old_on_failure: p.return_old_on_failure,
            })
        })
        .collect()
}

/// Checks an action's key (or item) against its table's key schema.
fn action_key(p: &ParsedAction, table: &Arc<Table>) -> Result<Item> {
    match &p.write {
        Write::Put { item } => {
            table.schema.validate_item(item)?;
            check_item_size(item)?;
            Ok(table.schema.extract(item))
        }
        Write::Update { key, update } => {
            table.schema.validate_key(key)?;
            for path in update.target_paths() {
                if table.schema.is_key_attribute(path.root()) {
                    return Err(DynamoError::invalid_parameter(format!(
                        "Cannot update attribute {}. This attribute is part of the key",
                        path.root()
                    )));
                }
            }
            Ok(key.clone())
        }
        Write::Delete { key } | Write::ConditionCheck { key } => {
            table.schema.validate_key(key)?;
            Ok(key.clone())
        }
    }
}

/// A stable digest of the actions, to tell a retry from a different request.
fn fingerprint(items: &[TransactItem]) -> u64 {
    // Through serde_json::Value, whose maps are sorted, so that the order of
    // HashMap entries cannot change the digest.
    let canonical = serde_json::to_value(items)
        .map(|v| v.to_string())
        .unwrap_or_default();
    let mut hasher = DefaultHasher::new();
    canonical.hash(&mut hasher);
    hasher.finish()
}

/// The response: ConsumedCapacity as asked (with each table's
/// VectorWriteRequestBytes under INDEXES), and ItemCollectionMetrics when
/// asked for and some action changed a table with an LSI.
fn respond(
    units: &[(String, f64)],
    detail: CapacityDetail,
    kind: Capacity,
    collection_metrics: Option<serde_json::Value>,
    vectors: &[Consumed],
) -> Result<Output> {
    let consumed: Vec<Consumed> = units
        .iter()
        .map(|(table, units)| match kind {
            Capacity::Read => Consumed::read(table, *units),
            Capacity::Write => Consumed::write(table, *units),
        })
        .map(|c| {
            // VectorWriteRequestBytes by vector index, under INDEXES.
            let spent = vectors.iter().find(|v| v.table == c.table);
            let spent = spent.map(|v| v.vectors.clone()).unwrap_or_default();
            c.with_vectors(spent)
        })
        .collect();
    Ok(Output::Transacted {
        collection_metrics,
        capacity: common::capacity_list(&consumed, detail),
    })
}
