//! TransactWriteItems: up to 100 Put, Update, Delete and ConditionCheck
//! actions on distinct items, committed all together or not at all, with
//! ClientRequestToken idempotency and doubled (transactional) capacity.

use crate::faults::Faults;
use crate::ops::batch_write_item::{capacity_list, collection_metrics};
use crate::ops::common::{self, Names, Values};
use crate::ops::conditional_write::wants_collection_metrics;
use crate::validate::{self, Violations};
use ferrodyn_engine::capacity::{CapacityDetail, Consumed};
use ferrodyn_engine::idempotency::Claim;
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
    return_consumed_capacity: Option<String>,
    return_item_collection_metrics: Option<String>,
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
    return_values_on_condition_check_failure: Option<String>,
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Put,
    Update,
    Delete,
    ConditionCheck,
}

impl Kind {
    fn field(self) -> &'static str {
        match self {
            Kind::Put => "put",
            Kind::Update => "update",
            Kind::Delete => "delete",
            Kind::ConditionCheck => "conditionCheck",
        }
    }
}

/// An action with its expressions parsed.
struct Parsed<'a> {
    kind: Kind,
    action: &'a Action,
    condition: Option<Condition>,
    update: Option<UpdateExpression>,
}

const MAX_ACTIONS: usize = 100;
/// DynamoDB's limit on a transaction's payload.
const MAX_PAYLOAD_BYTES: usize = 4 * 1024 * 1024;

pub fn run(engine: &Engine, faults: &Faults, request: Request, body_len: usize) -> Result<Vec<u8>> {
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
    let items = request.transact_items.as_deref().unwrap_or_default();
    let mut kinds = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let present: Vec<(Kind, &Action)> = [
            (Kind::ConditionCheck, &item.condition_check),
            (Kind::Put, &item.put),
            (Kind::Delete, &item.delete),
            (Kind::Update, &item.update),
        ]
        .into_iter()
        .filter_map(|(k, a)| a.as_ref().map(|a| (k, a)))
        .collect();
        if present.len() != 1 {
            return Err(DynamoError::validation(
                "TransactItems can only contain one of Check, Put, Update or Delete",
            ));
        }
        let (kind, action) = present[0];
        let field = format!("transactItems.{}.member.{}", i + 1, kind.field());
        v.table_name_or_arn(&format!("{field}.tableName"), &action.table_name);
        match kind {
            Kind::Put => {
                v.not_null(&format!("{field}.item"), &action.item);
            }
            Kind::Update => {
                v.not_null(&format!("{field}.key"), &action.key);
                v.not_null(
                    &format!("{field}.updateExpression"),
                    &action.update_expression,
                );
            }
            Kind::Delete => {
                v.not_null(&format!("{field}.key"), &action.key);
            }
            Kind::ConditionCheck => {
                v.not_null(&format!("{field}.key"), &action.key);
                v.not_null(
                    &format!("{field}.conditionExpression"),
                    &action.condition_expression,
                );
            }
        }
        v.one_of(
            &format!("{field}.returnValuesOnConditionCheckFailure"),
            action.return_values_on_condition_check_failure.as_deref(),
            validate::RETURN_VALUES_ON_CONDITION_CHECK_FAILURE,
        );
        kinds.push((kind, action));
    }
    v.finish()?;
    if body_len > MAX_PAYLOAD_BYTES {
        return Err(DynamoError::validation(
            "Transaction request size cannot exceed 4 MB (the aggregate size of the items in the transaction)",
        ));
    }

    // Expressions are parsed (and their names and values checked) first:
    // their errors fail the whole request, not one action.
    let mut parsed = Vec::with_capacity(kinds.len());
    for (kind, action) in kinds {
        let has_expression =
            action.condition_expression.is_some() || action.update_expression.is_some();
        let mut ctx = common::expression_context(
            &action.expression_attribute_names,
            &action.expression_attribute_values,
            has_expression,
            "ConditionExpression",
        )?;
        let update = match &action.update_expression {
            Some(text) if kind == Kind::Update => Some(parse_update(text, &mut ctx)?),
            _ => None,
        };
        let condition = match &action.condition_expression {
            Some(text) => Some(parse_condition(text, &mut ctx)?),
            None => None,
        };
        ctx.check_all_used()?;
        parsed.push(Parsed {
            kind,
            action,
            condition,
            update,
        });
    }

    // Tables must exist; keys are checked per action (a bad key is that
    // action's ValidationError), and no two actions may touch one item.
    let mut tables = Vec::with_capacity(parsed.len());
    for p in &parsed {
        tables.push(engine.table_for_items(p.action.table_name.as_deref().expect("checked"))?);
    }
    // An empty key value, of the table or of an index, fails the whole
    // request (AWS, moto's test_transaction_with_empty_key; DynamoDB Local),
    // unlike a key of the wrong type.
    for (p, table) in parsed.iter().zip(&tables) {
        let source = match p.kind {
            Kind::Put => p.action.item.as_ref(),
            _ => p.action.key.as_ref(),
        };
        if let Some(source) = source {
            table.schema.check_no_empty_key(source)?;
            if p.kind == Kind::Put {
                for index in table.indexes() {
                    index.check_no_empty_key(source)?;
                }
            }
        }
    }
    let keys: Vec<Result<Item>> = parsed
        .iter()
        .zip(&tables)
        .map(|(p, t)| action_key(p, t))
        .collect();
    let mut seen: Vec<(u64, Vec<u8>)> = Vec::new();
    for (key, table) in keys.iter().zip(&tables) {
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

    let detail = common::capacity_detail(&request.return_consumed_capacity);
    let fingerprint = fingerprint(items);
    if let Some(token) = &request.client_request_token {
        if let Claim::Replay(units) = engine.tokens.claim(token, fingerprint)? {
            // A replay writes nothing and, as in DynamoDB, reports read
            // capacity rather than write capacity.
            return respond(&units, detail, Capacity::Read, None);
        }
    }
    let names: Vec<&str> = tables.iter().map(|t| t.name.as_str()).collect();
    if let Some(conflict) = faults.transaction_conflict("TransactWriteItems", &names) {
        if let Some(token) = &request.client_request_token {
            engine.tokens.release(token);
        }
        return Err(conflict);
    }
    let actions: Vec<Result<TransactWrite<'_>>> = parsed
        .iter()
        .zip(tables.iter())
        .zip(keys)
        .map(|((p, table), key)| {
            let key = key?;
            // An action on a table out of capacity is that action's
            // ProvisionedThroughputExceeded reason.
            table.admit_write()?;
            let mutation = match p.kind {
                Kind::Put => Mutation::Put(p.action.item.clone().expect("checked")),
                Kind::Update => Mutation::Update(p.update.as_ref().expect("checked")),
                Kind::Delete => Mutation::Delete,
                Kind::ConditionCheck => Mutation::Check,
            };
            Ok(TransactWrite {
                table: Arc::clone(table),
                key,
                mutation,
                condition: p.condition.as_ref(),
                return_old_on_failure: p.action.return_values_on_condition_check_failure.as_deref()
                    == Some("ALL_OLD"),
            })
        })
        .collect();
    let hold = faults.transaction_hold(&names);
    let result = engine.transact_write_holding(actions, hold);
    let writes = match result {
        Ok(writes) => writes,
        Err(error) => {
            if let Some(token) = &request.client_request_token {
                engine.tokens.release(token);
            }
            return Err(error);
        }
    };
    // Transactional writes cost twice the units of the same plain writes.
    let mut units: Vec<(String, f64)> = Vec::new();
    for write in &writes {
        let cost = 2.0 * write.write_units;
        match units.iter_mut().find(|(t, _)| *t == write.table.name) {
            Some((_, total)) => *total += cost,
            None => units.push((write.table.name.clone(), cost)),
        }
    }
    for write in &writes {
        write
            .table
            .charge_write(2.0 * write.write_units, &write.index_units());
    }
    if let Some(token) = &request.client_request_token {
        engine.tokens.complete(token, units.clone());
    }
    let metrics = wants_collection_metrics(&request.return_item_collection_metrics)
        .then(|| collection_metrics(&writes))
        .flatten();
    respond(&units, detail, Capacity::Write, metrics)
}

/// Checks an action's key (or item) against its table's key schema.
fn action_key(p: &Parsed<'_>, table: &Arc<Table>) -> Result<Item> {
    match p.kind {
        Kind::Put => {
            let item = p.action.item.as_ref().expect("checked");
            table.schema.validate_item(item)?;
            check_item_size(item)?;
            Ok(table.schema.extract(item))
        }
        _ => {
            let key = p.action.key.as_ref().expect("checked");
            table.schema.validate_key(key)?;
            if let Some(update) = &p.update {
                for path in update.target_paths() {
                    if table.schema.is_key_attribute(path.root()) {
                        return Err(DynamoError::invalid_parameter(format!(
                            "Cannot update attribute {}. This attribute is part of the key",
                            path.root()
                        )));
                    }
                }
            }
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

/// The response: ConsumedCapacity as asked, and ItemCollectionMetrics when
/// asked for and some action changed a table with an LSI.
fn respond(
    units: &[(String, f64)],
    detail: CapacityDetail,
    kind: Capacity,
    collection_metrics: Option<serde_json::Value>,
) -> Result<Vec<u8>> {
    let mut body = serde_json::Map::new();
    if let Some(metrics) = collection_metrics {
        body.insert("ItemCollectionMetrics".into(), metrics);
    }
    let consumed: Vec<Consumed> = units
        .iter()
        .map(|(table, units)| match kind {
            Capacity::Read => Consumed::read(table, *units),
            Capacity::Write => Consumed::write(table, *units),
        })
        .collect();
    if let Some(list) = capacity_list(&consumed, detail) {
        body.insert("ConsumedCapacity".into(), list);
    }
    Ok(serde_json::to_vec(&body).expect("serialisable"))
}
