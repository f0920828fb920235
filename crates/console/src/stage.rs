//! Staged edits for the browser: the stage lives in the page's localStorage
//! as the `StageFile` JSON of `ferrodyn stage`, travels with each request,
//! and comes back updated. Staging, the diff against live items, and the
//! commit (one TransactWriteItems with optimistic-lock conditions and an
//! idempotency token) are `ferrodyn_patterns::stage`'s, unchanged. Every
//! staged edit brings the owner's uniqueness markers along
//! (`ferrodyn_patterns::unique::follow`), so they commit in the same
//! transaction.

use crate::api::{required, ApiFailure, ApiResult};
use axum::http::StatusCode;
use ferrodyn_client::Client;
use ferrodyn_patterns::stage::{self, AttributeChange, StageError, StageFile};
use ferrodyn_patterns::unique::{follow, UniqueError};
use serde_json::{json, Map, Value};

pub fn handle(client: &Client, action: &str, request: &Value) -> ApiResult {
    let stage: StageFile = match request.get("stage").filter(|s| !s.is_null()) {
        Some(value) => serde_json::from_value(value.clone())
            .map_err(|e| ApiFailure::invalid(format!("not a stage: {e}")))?,
        None => StageFile::default(),
    };
    match action {
        "add" => add(client, stage, request),
        "diff" => diff(client, &stage),
        "restage" => restage(client, stage, request),
        "commit" => commit(client, &stage, request["allowSplit"] == json!(true)),
        other => Err(ApiFailure::invalid(format!("no stage action {other}"))),
    }
}

fn object(request: &Value, name: &str) -> Result<Map<String, Value>, ApiFailure> {
    request
        .get(name)
        .and_then(Value::as_object)
        .cloned()
        .ok_or_else(|| ApiFailure::invalid(format!("`{name}` must be an object")))
}

fn failure(e: StageError) -> ApiFailure {
    match e {
        StageError::Api(e) => e.into(),
        StageError::Invalid(message) => ApiFailure::invalid(message),
        other => ApiFailure::invalid(other.to_string()),
    }
}

/// Stages a put (`item`), update (`key`, `set`, `remove`), delete (`key`),
/// or deletes of many items (`deletes`, `keys`: read in batches, so a
/// selection of hundreds of rows stages in one request).
fn add(client: &Client, mut stage: StageFile, request: &Value) -> ApiResult {
    let table = required(request, "table")?;
    if request["op"] == "deletes" {
        let keys = request["keys"]
            .as_array()
            .ok_or_else(|| ApiFailure::invalid("`keys` must be a list of keys"))?
            .iter()
            .map(|key| {
                key.as_object()
                    .cloned()
                    .ok_or_else(|| ApiFailure::invalid("each of `keys` must be an object"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let numbers = stage::stage_deletes(client, &mut stage, table, keys).map_err(failure)?;
        return answer(client, stage, &numbers, request);
    }
    let number = match required(request, "op")? {
        "put" => {
            let item = object(request, "item")?;
            if request["create"] == json!(true) && request["overwrite"] != json!(true) {
                refuse_overwrite(client, &stage, table, &item)?;
            }
            stage::stage_put(client, &mut stage, table, item)
        }
        "update" => {
            let remove: Vec<String> = request["remove"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect();
            let set = request
                .get("set")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            stage::stage_update(
                client,
                &mut stage,
                table,
                object(request, "key")?,
                set,
                &remove,
            )
        }
        "delete" => stage::stage_delete(client, &mut stage, table, object(request, "key")?),
        other => return Err(ApiFailure::invalid(format!("no stage op {other}"))),
    }
    .map_err(failure)?;
    answer(client, stage, &[number], request)
}

/// Stages the uniqueness markers that follow the staged changes `numbers`
/// (see `unique::follow`) and answers the stage, the changes' numbers as
/// they are afterwards, and what happened to markers.
fn answer(client: &Client, mut stage: StageFile, numbers: &[usize], request: &Value) -> ApiResult {
    let entities: Vec<String> = request["uniqueEntities"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e.as_str().map(str::to_string))
        .collect();
    let keys: Vec<(String, Map<String, Value>)> = numbers
        .iter()
        .map(|n| {
            (
                stage.changes[n - 1].table.clone(),
                stage.changes[n - 1].key.clone(),
            )
        })
        .collect();
    let followed =
        follow::follow_changes(client, &mut stage, numbers, &entities).map_err(|e| match e {
            UniqueError::Api(e) => e.into(),
            other => ApiFailure::invalid(other.to_string()),
        })?;
    let numbers: Vec<usize> = keys
        .iter()
        .filter_map(|(table, key)| {
            let found = stage
                .changes
                .iter()
                .position(|c| &c.table == table && &c.key == key);
            found.map(|i| i + 1)
        })
        .collect();
    Ok(json!({
        "stage": stage,
        "number": numbers.first(),
        "numbers": numbers,
        "transactions": transactions(&stage),
        "markers": { "moved": followed.moved, "warnings": followed.warnings },
    }))
}

/// The 1-based first and last change of each transaction of a commit.
fn change_ranges(stage: &StageFile) -> Vec<[usize; 2]> {
    let chunks = stage::commit::chunks(stage).unwrap_or_default();
    let firsts: Vec<usize> = chunks.iter().map(|c| c.first_change).collect();
    firsts
        .iter()
        .enumerate()
        .map(|(i, first)| {
            let end = firsts.get(i + 1).copied().unwrap_or(stage.changes.len());
            [first + 1, end]
        })
        .collect()
}

/// How many TransactWriteItems the stage needs (100 actions or 4 MB each):
/// more than one means its commit cannot be atomic.
fn transactions(stage: &StageFile) -> usize {
    stage::commit::chunks(stage).map_or(1, |chunks| chunks.len())
}

/// A "new item" whose key an item already has (live, or staged) would
/// replace that item: refused as `ItemExists` (409) unless the request says
/// `overwrite`, so the page can ask first instead of overwriting silently.
fn refuse_overwrite(
    client: &Client,
    stage: &StageFile,
    table: &str,
    item: &Map<String, Value>,
) -> Result<(), ApiFailure> {
    let mut trial = stage.clone();
    let number = stage::stage_put(client, &mut trial, table, item.clone()).map_err(failure)?;
    let change = &trial.changes[number - 1];
    let staged_before = stage
        .changes
        .iter()
        .any(|c| c.table == table && c.key == change.key);
    if change.before.is_none() && !staged_before {
        return Ok(());
    }
    Err(ApiFailure {
        status: StatusCode::CONFLICT,
        code: "ItemExists".into(),
        message: format!(
            "An item with this key already exists in {table}{}: staging this new item would \
             replace it",
            if staged_before { " (or is staged)" } else { "" }
        ),
        body: None,
    })
}

/// Re-stages change `number` against the live item (after another writer
/// changed it): answers the updated stage and what the change now writes.
fn restage(client: &Client, mut stage: StageFile, request: &Value) -> ApiResult {
    let number = request["number"].as_u64().unwrap_or(0) as usize;
    let written = stage::restage(client, &mut stage, number).map_err(failure)?;
    Ok(json!({ "stage": stage, "changes": changes(&written) }))
}

fn changes(list: &[AttributeChange]) -> Value {
    list.iter()
        .map(|c| json!({ "name": c.name, "old": c.old, "new": c.new }))
        .collect()
}

fn diff(client: &Client, stage: &StageFile) -> ApiResult {
    let diffs = stage::diff(client, stage).map_err(failure)?;
    let list: Vec<Value> = diffs
        .iter()
        .map(|d| {
            json!({
                "what": d.what,
                "changes": changes(&d.changes),
                "drift": changes(&d.drift),
                "existenceDrift": d.existence_drift,
                "error": d.error,
            })
        })
        .collect();
    Ok(json!({ "diffs": list, "transactions": transactions(stage) }))
}

/// Commits; a cancellation answers 409 with each failing change's index in
/// the stage, DynamoDB's reason code and the explanation.
fn commit(client: &Client, stage: &StageFile, allow_split: bool) -> ApiResult {
    match stage::commit(client, stage, allow_split) {
        Ok(report) => Ok(json!({
            "changes": report.changes,
            "transactions": report.transactions,
            "tokens": report.tokens,
            "ranges": change_ranges(stage),
        })),
        Err(StageError::Cancelled {
            committed_changes,
            failures,
        }) => {
            let list: Vec<Value> = failures
                .iter()
                .map(|f| {
                    json!({
                        "change": committed_changes + f.position,
                        "what": f.what,
                        "code": f.code,
                        "explanation": f.explanation,
                        "item": f.item,
                    })
                })
                .collect();
            Err(ApiFailure {
                status: StatusCode::CONFLICT,
                code: "TransactionCanceledException".into(),
                message: format!(
                    "the commit was cancelled; nothing of it was written ({} change(s) failed)",
                    list.len()
                ),
                body: Some(json!({ "failures": list, "committedChanges": committed_changes })),
            })
        }
        Err(e) => Err(failure(e)),
    }
}
