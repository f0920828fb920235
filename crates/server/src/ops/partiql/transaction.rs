//! ExecuteTransaction: up to 100 statements, all reads (run as one
//! TransactGetItems) or all writes (INSERT, UPDATE, DELETE and EXISTS, run as
//! one TransactWriteItems), so that atomicity, cancellation reasons,
//! ClientRequestToken idempotency and doubled capacity are those operations'.

use super::translate::{translate, Kind, Translated};
use super::{check_statements, prepare, shape_item, CheckedStatement, StatementFields};
use crate::faults::Faults;
use crate::ops::choice::{Choice, OnConditionFailure};
use crate::ops::output::Output;
use crate::ops::{transact_get_items, transact_write_items};
use crate::validate::Violations;
use ferrodyn_engine::capacity::CapacityDetail;
use ferrodyn_engine::Engine;
use ferrodyn_partiql::ast::Statement;
use ferrodyn_types::{AttributeValue, DynamoError, ErrorKind, Result};
use serde::Deserialize;
use serde_json::{json, Map, Value};

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Request {
    transact_statements: Option<Vec<ParameterizedStatement>>,
    client_request_token: Option<String>,
    return_consumed_capacity: Option<Choice<CapacityDetail>>,
}

/// Serialize: a too-long list is echoed in its length error.
#[derive(Deserialize, serde::Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct ParameterizedStatement {
    #[serde(skip_serializing_if = "Option::is_none")]
    statement: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    parameters: Option<Vec<AttributeValue>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    return_values_on_condition_check_failure: Option<Choice<OnConditionFailure>>,
}

impl StatementFields for ParameterizedStatement {
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

const MAX_STATEMENTS: usize = 100;

pub fn run(engine: &Engine, faults: &Faults, request: Request) -> Result<Vec<u8>> {
    let statements = check(&request)?;
    let mut parsed = Vec::with_capacity(statements.len());
    for s in &statements {
        let statement = prepare(s.text, s.member.parameters.as_deref())?;
        parsed.push(statement.statement.clone());
    }
    let reads = parsed.iter().filter(|s| s.is_read()).count();
    if reads != 0 && reads != parsed.len() {
        return Err(DynamoError::validation(
            "ExecuteTransaction API does not support both read and write operations in the same request.",
        ));
    }
    let mut actions = Vec::with_capacity(parsed.len());
    for (statement, s) in parsed.iter().zip(&statements) {
        if matches!(statement, Statement::Update(u) if u.returning.is_some())
            || matches!(statement, Statement::Delete(d) if d.returning.is_some())
        {
            return Err(DynamoError::validation(
                "RETURNING is not supported in ExecuteTransaction",
            ));
        }
        let params = s.member.parameters.as_deref().unwrap_or_default();
        actions.push(translate(engine, statement, params)?);
    }
    if reads != 0 {
        read_transaction(engine, faults, &actions, &request.return_consumed_capacity)
    } else {
        write_transaction(engine, faults, actions, &statements, &request)
    }
}

/// The field constraints; the statements in checked form.
fn check(request: &Request) -> Result<Vec<CheckedStatement<'_, ParameterizedStatement>>> {
    let mut v = Violations::default();
    let statements = check_statements(
        &mut v,
        "transactStatements",
        &request.transact_statements,
        MAX_STATEMENTS,
    );
    v.length(
        "clientRequestToken",
        request.client_request_token.as_deref(),
        1,
        36,
    );
    v.choice("returnConsumedCapacity", &request.return_consumed_capacity);
    v.finish_with(statements)
}

fn read_transaction(
    engine: &Engine,
    faults: &Faults,
    actions: &[Translated],
    capacity: &Option<Choice<CapacityDetail>>,
) -> Result<Vec<u8>> {
    let mut items = Vec::with_capacity(actions.len());
    for action in actions {
        if action.kind != Kind::GetItem {
            return Err(DynamoError::validation(
                "Only single item select is supported: a SELECT in a transaction must give the full primary key with equalities and nothing else",
            ));
        }
        items.push(json!({ "Get": action.request_with_typed() }));
    }
    let mut body = json!({ "TransactItems": items });
    if let Some(capacity) = capacity {
        body["ReturnConsumedCapacity"] = capacity.clone().into();
    }
    let request = serde_json::from_value(body)
        .map_err(|e| DynamoError::internal(format!("translated request: {e}")))?;
    let (responses, capacity) = match transact_get_items::execute(engine, faults, request)? {
        Output::Gets {
            responses,
            capacity,
        } => (responses, capacity),
        _ => {
            return Err(DynamoError::internal(
                "TransactGetItems answered no Responses",
            ))
        }
    };
    let responses: Vec<Value> = responses
        .iter()
        .zip(actions)
        .map(
            |(item, action)| match item.as_ref().and_then(|i| shape_item(i.to_value(), action)) {
                Some(item) => json!({ "Item": item }),
                None => json!({}),
            },
        )
        .collect();
    let mut answer = Map::new();
    answer.insert("Responses".into(), Value::Array(responses));
    if let Some(capacity) = capacity {
        answer.insert("ConsumedCapacity".into(), capacity);
    }
    Ok(serde_json::to_vec(&Value::Object(answer)).expect("plain data always serialises"))
}

fn write_transaction(
    engine: &Engine,
    faults: &Faults,
    actions: Vec<Translated>,
    statements: &[CheckedStatement<'_, ParameterizedStatement>],
    request: &Request,
) -> Result<Vec<u8>> {
    let inserts: Vec<bool> = actions.iter().map(|a| a.kind == Kind::Insert).collect();
    let mut items = Vec::with_capacity(actions.len());
    for (mut action, s) in actions.into_iter().zip(statements) {
        if let Some(on_failure) = &s.member.return_values_on_condition_check_failure {
            action.request.insert(
                "ReturnValuesOnConditionCheckFailure".into(),
                on_failure.clone().into(),
            );
        }
        let field = match action.kind {
            Kind::Insert => "Put",
            Kind::UpdateItem => "Update",
            Kind::DeleteItem => "Delete",
            _ => "ConditionCheck",
        };
        let mut item = Map::new();
        item.insert(field.into(), Value::Object(action.request_with_typed()));
        items.push(Value::Object(item));
    }
    let mut body = json!({ "TransactItems": items });
    if let Some(token) = &request.client_request_token {
        body["ClientRequestToken"] = token.clone().into();
    }
    if let Some(capacity) = &request.return_consumed_capacity {
        body["ReturnConsumedCapacity"] = capacity.clone().into();
    }
    let body_len = serde_json::to_vec(&body).map_or(0, |b| b.len());
    let parsed = serde_json::from_value(body)
        .map_err(|e| DynamoError::internal(format!("translated request: {e}")))?;
    let answer = transact_write_items::execute(engine, faults, parsed, body_len)
        .map_err(|error| duplicate_reasons(error, &inserts))?;
    let mut out = Map::new();
    if let Output::Transacted {
        capacity: Some(capacity),
        ..
    } = answer
    {
        out.insert("ConsumedCapacity".into(), capacity);
    }
    Ok(serde_json::to_vec(&Value::Object(out)).expect("plain data always serialises"))
}

/// An INSERT whose key exists fails its transaction with a DuplicateItem
/// reason, not the ConditionalCheckFailed of the underlying Put.
fn duplicate_reasons(mut error: DynamoError, inserts: &[bool]) -> DynamoError {
    if error.kind != ErrorKind::TransactionCanceled {
        return error;
    }
    let Some(Value::Array(reasons)) = error
        .extra
        .as_mut()
        .and_then(|extra| extra.get_mut("CancellationReasons"))
    else {
        return error;
    };
    for (reason, insert) in reasons.iter_mut().zip(inserts) {
        if *insert && reason["Code"] == "ConditionalCheckFailed" {
            reason["Code"] = "DuplicateItem".into();
            reason["Message"] = "Duplicate primary key exists in table".into();
        }
    }
    let codes: Vec<String> = reasons
        .iter()
        .map(|r| r["Code"].as_str().unwrap_or("None").to_string())
        .collect();
    error.message = format!(
        "Transaction cancelled, please refer cancellation reasons for specific reasons [{}]",
        codes.join(", ")
    );
    error
}
