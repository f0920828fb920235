//! ExecuteStatement: one PartiQL statement, run as its equivalent operation,
//! answered as `Items` (with `NextToken` and `LastEvaluatedKey` for a
//! SELECT that stopped early).

use super::translate::Translated;
use super::translate::{translate, Kind};
use super::{prepare, response_object, run_single, shape_item, MAX_STATEMENT_LENGTH};
use crate::validate::{self, Violations};
use base64::Engine as _;
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
    return_consumed_capacity: Option<String>,
    limit: Option<i64>,
    return_values_on_condition_check_failure: Option<String>,
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
    v.one_of(
        "returnConsumedCapacity",
        request.return_consumed_capacity.as_deref(),
        validate::RETURN_CONSUMED_CAPACITY,
    );
    v.one_of(
        "returnValuesOnConditionCheckFailure",
        request.return_values_on_condition_check_failure.as_deref(),
        validate::RETURN_VALUES_ON_CONDITION_CHECK_FAILURE,
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
    let wants_capacity = request
        .return_consumed_capacity
        .as_deref()
        .is_some_and(|c| c != "NONE");
    let raw = run_single(engine, &mut translated)?;
    if translated.kind == Kind::GetItem && translated.projection.is_none() {
        if let Some(body) = items_from_get_item(&raw, wants_capacity) {
            return Ok(body);
        }
    }
    let body = response_object(&raw)?;
    Ok(
        serde_json::to_vec(&Value::Object(reshape(&translated, body)))
            .expect("plain data always serialises"),
    )
}

/// GetItem's answer with an item, `{"Item":<item>[,"ConsumedCapacity":<c>]}`
/// (how get_item.rs sends a stored item, its JSON untouched), as
/// `{"Items":[<item>][,"ConsumedCapacity":<c>]}` without decoding the item.
/// `None` for any other shape (no item, a projected item), which the general
/// path reshapes.
fn items_from_get_item(raw: &[u8], with_capacity: bool) -> Option<Vec<u8>> {
    const CAPACITY: &[u8] = b",\"ConsumedCapacity\":";
    let body = raw.strip_prefix(b"{\"Item\":")?.strip_suffix(b"}")?;
    // The capacity, when asked for, comes last: the last occurrence of its
    // field name is it, whatever attribute names the item has.
    let (item, capacity) = if with_capacity {
        let at = body.windows(CAPACITY.len()).rposition(|w| w == CAPACITY)?;
        (&body[..at], Some(&body[at..]))
    } else {
        (body, None)
    };
    let mut out = Vec::with_capacity(raw.len() + 16);
    out.extend_from_slice(b"{\"Items\":[");
    out.extend_from_slice(item);
    out.push(b']');
    if let Some(capacity) = capacity {
        out.extend_from_slice(capacity);
    }
    out.push(b'}');
    Some(out)
}

/// An operation's answer in ExecuteStatement's shape.
fn reshape(translated: &Translated, mut body: Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    let items: Vec<Value> = match translated.kind {
        Kind::GetItem => body.remove("Item").into_iter().collect(),
        Kind::Query | Kind::Scan => match body.remove("Items") {
            Some(Value::Array(items)) => items,
            _ => Vec::new(),
        },
        _ => body.remove("Attributes").into_iter().collect(),
    };
    let items = items
        .into_iter()
        .filter_map(|item| shape_item(item, translated))
        .collect();
    out.insert("Items".into(), Value::Array(items));
    if let Some(last) = body.remove("LastEvaluatedKey") {
        out.insert("NextToken".into(), Value::String(encode_next_token(&last)));
        out.insert("LastEvaluatedKey".into(), last);
    }
    if let Some(capacity) = body.remove("ConsumedCapacity") {
        out.insert("ConsumedCapacity".into(), capacity);
    }
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
