//! ExecuteStatement: one PartiQL statement, run as its equivalent operation,
//! answered as `Items` (with `NextToken` and `LastEvaluatedKey` for a
//! SELECT that stopped early).

use super::translate::Translated;
use super::translate::{translate, Kind};
use super::{prepare, run_single, shape_item, MAX_STATEMENT_LENGTH};
use crate::ops::choice::{Choice, OnConditionFailure};
use crate::ops::output::{OutItem, Output};
use crate::validate::Violations;
use base64::Engine as _;
use ferrodyn_engine::capacity::CapacityDetail;
use ferrodyn_engine::Engine;
use ferrodyn_types::{AttributeValue, DynamoError, Result};
use serde::Deserialize;
use serde_json::{Map, Value};

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Request {
    statement: Option<String>,
    parameters: Option<Vec<AttributeValue>>,
    consistent_read: Option<bool>,
    next_token: Option<String>,
    return_consumed_capacity: Option<Choice<CapacityDetail>>,
    limit: Option<i64>,
    return_values_on_condition_check_failure: Option<Choice<OnConditionFailure>>,
}

/// DynamoDB's limit on a NextToken's length.
const MAX_NEXT_TOKEN_LENGTH: usize = 32768;

pub fn run(engine: &Engine, request: Request) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    if v.not_null("statement", &request.statement) {
        v.length(
            "statement",
            request.statement.as_deref(),
            1,
            MAX_STATEMENT_LENGTH,
        );
    }
    v.count("parameters", request.parameters.as_deref(), 1, usize::MAX);
    v.range("limit", request.limit, 1, None);
    v.length(
        "nextToken",
        request.next_token.as_deref(),
        1,
        MAX_NEXT_TOKEN_LENGTH,
    );
    v.choice("returnConsumedCapacity", &request.return_consumed_capacity);
    v.choice(
        "returnValuesOnConditionCheckFailure",
        &request.return_values_on_condition_check_failure,
    );
    let text = v.finish_with(request.statement.as_deref())?;
    let params = request.parameters.as_deref().unwrap_or_default();
    let statement = prepare(text, request.parameters.as_deref())?;
    let mut translated = translate(engine, &statement.statement, params)?;
    let options = &mut translated.request;
    if let Some(capacity) = &request.return_consumed_capacity {
        options.insert("ReturnConsumedCapacity".into(), capacity.clone().into());
    }
    match translated.kind {
        Kind::GetItem | Kind::Query | Kind::Scan => {
            if let Some(consistent) = request.consistent_read {
                options.insert("ConsistentRead".into(), consistent.into());
            }
            if translated.kind != Kind::GetItem {
                if let Some(limit) = request.limit {
                    options.insert("Limit".into(), limit.into());
                }
                if let Some(token) = &request.next_token {
                    options.insert("ExclusiveStartKey".into(), decode_next_token(token)?);
                }
            }
        }
        _ => {
            if let Some(on_failure) = &request.return_values_on_condition_check_failure {
                options.insert(
                    "ReturnValuesOnConditionCheckFailure".into(),
                    on_failure.clone().into(),
                );
            }
        }
    }
    let output = run_single(engine, &mut translated)?;
    Ok(answer(&translated, output))
}

/// An operation's answer in ExecuteStatement's shape. A GetItem's stored
/// item with nothing to reshape goes out as its stored JSON.
fn answer(translated: &Translated, output: Output) -> Vec<u8> {
    let plain = translated.projection.is_none() && translated.modified.is_none();
    let (items, last, capacity) = match output {
        Output::Item {
            item: Some(OutItem::Stored(json)),
            capacity,
        } if plain => {
            return stored_item_answer(&json, capacity.as_ref());
        }
        Output::Item { item, capacity } => (item.into_iter().collect(), None, capacity),
        Output::Page {
            items,
            last_evaluated,
            capacity,
            ..
        } => (items.unwrap_or_default(), last_evaluated, capacity),
        Output::Write {
            attributes,
            capacity,
            ..
        } => (
            attributes.map(OutItem::Built).into_iter().collect(),
            None,
            capacity,
        ),
        // A single statement runs one item operation, never a transaction.
        Output::Gets { capacity, .. } | Output::Transacted { capacity, .. } => {
            (Vec::new(), None, capacity)
        }
    };
    let items: Vec<Value> = items
        .iter()
        .filter_map(|item| shape_item(item.to_value(), translated))
        .collect();
    let mut out = Map::new();
    out.insert("Items".into(), Value::Array(items));
    if let Some(last) = last {
        let last = serde_json::to_value(&last).expect("plain data always serialises");
        out.insert("NextToken".into(), Value::String(encode_next_token(&last)));
        out.insert("LastEvaluatedKey".into(), last);
    }
    if let Some(capacity) = capacity {
        out.insert("ConsumedCapacity".into(), capacity);
    }
    serde_json::to_vec(&Value::Object(out)).expect("plain data always serialises")
}

/// `{"Items":[<stored item>][,"ConsumedCapacity":<c>]}` without decoding
/// the item.
fn stored_item_answer(item: &[u8], capacity: Option<&Value>) -> Vec<u8> {
    let mut out = Vec::with_capacity(item.len() + 96);
    out.extend_from_slice(b"{\"Items\":[");
    out.extend_from_slice(item);
    out.push(b']');
    if let Some(capacity) = capacity {
        out.extend_from_slice(b",\"ConsumedCapacity\":");
        serde_json::to_writer(&mut out, capacity).expect("plain data always serialises");
    }
    out.push(b'}');
    out
}

/// A NextToken is the page's LastEvaluatedKey, opaque to the client.
fn encode_next_token(last_evaluated_key: &Value) -> String {
    let json = serde_json::to_vec(last_evaluated_key).expect("plain data always serialises");
    base64::engine::general_purpose::STANDARD.encode(json)
}

fn decode_next_token(token: &str) -> Result<Value> {
    base64::engine::general_purpose::STANDARD
        .decode(token)
        .ok()
        .and_then(|json| serde_json::from_slice::<Value>(&json).ok())
        .filter(Value::is_object)
        .ok_or_else(|| DynamoError::validation("The provided NextToken is not valid"))
}
