//! BatchExecuteStatement: up to 25 statements, all reads (each a SELECT by
//! full primary key, run as a GetItem) or all writes (each run as its own
//! PutItem, UpdateItem or DeleteItem). One statement's failure is reported in
//! its own response entry, never by failing the batch.

use super::translate::{translate, Kind, Translated};
use super::{check_statements, prepare, run_single, shape_item, CheckedStatement, StatementFields};
use crate::ops::choice::{Choice, OnConditionFailure};
use crate::ops::output::Output;
use crate::validate::Violations;
use ferrodyn_engine::capacity::CapacityDetail;
use ferrodyn_engine::Engine;
use ferrodyn_partiql::ast::Statement;
use ferrodyn_partiql::Parsed;
use ferrodyn_types::{AttributeValue, DynamoError, ErrorKind, Result};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::sync::Arc;

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Request {
    statements: Option<Vec<BatchStatement>>,
    return_consumed_capacity: Option<Choice<CapacityDetail>>,
}

/// Serialize: a too-long list is echoed in its length error.
#[derive(Deserialize, serde::Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct BatchStatement {
    #[serde(skip_serializing_if = "Option::is_none")]
    statement: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parameters: Option<Vec<AttributeValue>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    consistent_read: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    return_values_on_condition_check_failure: Option<Choice<OnConditionFailure>>,
}

impl StatementFields for BatchStatement {
    fn statement(&self) -> Option<&str> {
        self.statement.as_deref()
    }
    fn parameters(&self) -> Option<&[AttributeValue]> {
        self.parameters.as_deref()
    }
    fn return_values_on_condition_check_failure(&self) -> Option<&str> {
        self.return_values_on_condition_check_failure
            .as_ref()
            .map(Choice::text)
    }
}

const MAX_STATEMENTS: usize = 25;

pub fn run(engine: &Engine, request: Request) -> Result<Vec<u8>> {
    let statements = check(&request)?;
    let prepared: Vec<Result<Arc<Parsed>>> = statements
        .iter()
        .map(|s| prepare(s.text, s.member.parameters.as_deref()))
        .collect();
    let reads = prepared
        .iter()
        .flatten()
        .filter(|p| p.statement.is_read())
        .count();
    let parsed = prepared.iter().flatten().count();
    if reads != 0 && reads != parsed {
        return Err(DynamoError::validation(
            "Read and write requests together in the same batch is not supported.",
        ));
    }
    let translated: Vec<Result<Translated, (DynamoError, Option<String>)>> = prepared
        .into_iter()
        .zip(&statements)
        .map(|(statement, s)| match statement {
            Ok(parsed) => {
                let statement = &parsed.statement;
                prepare_one(
                    engine,
                    statement,
                    s.member,
                    &request.return_consumed_capacity,
                )
                .map_err(|e| (e, Some(statement.table().to_string())))
            }
            Err(error) => Err((error, None)),
        })
        .collect();
    let mut keys: Vec<(&str, Value)> = Vec::new();
    for t in translated.iter().flatten() {
        if let Some(key) = t.key() {
            if keys.iter().any(|(table, k)| *table == t.table && *k == key) {
                return Err(DynamoError::validation(
                    "Provided list of item keys contains duplicates",
                ));
            }
            keys.push((t.table.as_str(), key));
        }
    }
    let mut responses = Vec::with_capacity(statements.len());
    let mut capacity: Vec<Value> = Vec::new();
    for entry in translated {
        let outcome =
            entry.and_then(|mut t| run_one(engine, &mut t).map_err(|e| (e, Some(t.table.clone()))));
        responses.push(match outcome {
            Ok((entry, consumed)) => {
                if let Some(consumed) = consumed {
                    merge_capacity(&mut capacity, consumed);
                }
                entry
            }
            Err((error, table)) => error_entry(&error, table),
        });
    }
    let mut out = json!({ "Responses": responses });
    if !capacity.is_empty() {
        out["ConsumedCapacity"] = Value::Array(capacity);
    }
    Ok(serde_json::to_vec(&out).expect("plain data always serialises"))
}

/// The field constraints; the statements in checked form.
fn check(request: &Request) -> Result<Vec<CheckedStatement<'_, BatchStatement>>> {
    let mut v = Violations::default();
    let statements = check_statements(&mut v, "statements", &request.statements, MAX_STATEMENTS);
    v.choice("returnConsumedCapacity", &request.return_consumed_capacity);
    v.finish_with(statements)
}

/// Translates one statement into its single-item operation.
fn prepare_one(
    engine: &Engine,
    statement: &Statement,
    s: &BatchStatement,
    return_capacity: &Option<Choice<CapacityDetail>>,
) -> Result<Translated> {
    let has_returning = matches!(statement, Statement::Update(u) if u.returning.is_some())
        || matches!(statement, Statement::Delete(d) if d.returning.is_some());
    if has_returning {
        return Err(DynamoError::validation(
            "RETURNING is not supported in BatchExecuteStatement",
        ));
    }
    let params = s.parameters.as_deref().unwrap_or_default();
    let mut translated = translate(engine, statement, params)?;
    let request = &mut translated.request;
    if let Some(capacity) = return_capacity {
        request.insert("ReturnConsumedCapacity".into(), capacity.clone().into());
    }
    match translated.kind {
        Kind::GetItem => {
            if let Some(consistent) = s.consistent_read {
                request.insert("ConsistentRead".into(), consistent.into());
            }
        }
        Kind::Query | Kind::Scan => {
            return Err(DynamoError::validation(
                "Only single item select is supported",
            ))
        }
        Kind::ConditionCheck => {
            return Err(DynamoError::validation(
                "EXISTS can only be used in ExecuteTransaction",
            ))
        }
        _ => {
            if let Some(on_failure) = &s.return_values_on_condition_check_failure {
                request.insert(
                    "ReturnValuesOnConditionCheckFailure".into(),
                    on_failure.clone().into(),
                );
            }
        }
    }
    Ok(translated)
}

/// Runs one translated statement: its response entry and the capacity it
/// consumed.
fn run_one(engine: &Engine, translated: &mut Translated) -> Result<(Value, Option<Value>)> {
    let (item, capacity) = match run_single(engine, translated)? {
        Output::Item { item, capacity } => (item, capacity),
        Output::Page { capacity, .. }
        | Output::Write { capacity, .. }
        | Output::Gets { capacity, .. }
        | Output::Transacted { capacity, .. } => (None, capacity),
    };
    let mut entry = Map::new();
    entry.insert("TableName".into(), translated.table.clone().into());
    if let Some(item) = item.and_then(|i| shape_item(i.to_value(), translated)) {
        entry.insert("Item".into(), item);
    }
    Ok((Value::Object(entry), capacity))
}

/// A failed statement's entry: `Error {Code, Message, Item}`.
fn error_entry(error: &DynamoError, table: Option<String>) -> Value {
    let mut detail = json!({ "Code": error_code(error.kind), "Message": error.message });
    if let Some(item) = error.extra.as_ref().and_then(|extra| extra.get("Item")) {
        detail["Item"] = item.clone();
    }
    let mut entry = json!({ "Error": detail });
    if let Some(table) = table {
        entry["TableName"] = table.into();
    }
    entry
}

/// BatchStatementErrorCodeEnum's name for an error kind.
fn error_code(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::ConditionalCheckFailed => "ConditionalCheckFailed",
        ErrorKind::DuplicateItem => "DuplicateItem",
        ErrorKind::ItemCollectionSizeLimitExceeded => "ItemCollectionSizeLimitExceeded",
        ErrorKind::RequestLimitExceeded => "RequestLimitExceeded",
        ErrorKind::ProvisionedThroughputExceeded => "ProvisionedThroughputExceeded",
        ErrorKind::TransactionConflict => "TransactionConflict",
        ErrorKind::Throttling => "ThrottlingError",
        ErrorKind::InternalServerError => "InternalServerError",
        ErrorKind::ResourceNotFound => "ResourceNotFound",
        ErrorKind::AccessDenied => "AccessDenied",
        _ => "ValidationError",
    }
}

/// Adds one statement's ConsumedCapacity to the batch's, per table.
fn merge_capacity(total: &mut Vec<Value>, consumed: Value) {
    let table = consumed.get("TableName").cloned();
    match total
        .iter_mut()
        .find(|c| c.get("TableName") == table.as_ref())
    {
        Some(existing) => add_numbers(existing, &consumed),
        None => total.push(consumed),
    }
}

/// Sums the numbers of `extra` into `into`, field by field (the capacity
/// shape is a few levels of objects, so this recursion is shallow).
fn add_numbers(into: &mut Value, extra: &Value) {
    let (Value::Object(into), Value::Object(extra)) = (into, extra) else {
        return;
    };
    for (key, value) in extra {
        match (into.get_mut(key), value) {
            (Some(Value::Number(a)), Value::Number(b)) => {
                let sum = a.as_f64().unwrap_or(0.0) + b.as_f64().unwrap_or(0.0);
                *a = serde_json::Number::from_f64(sum).unwrap_or_else(|| 0.into());
            }
            (Some(existing @ Value::Object(_)), Value::Object(_)) => add_numbers(existing, value),
            (None, _) => {
                into.insert(key.clone(), value.clone());
            }
            _ => {}
        }
    }
}
