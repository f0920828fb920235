//! Staged transactional edits: stage puts, updates and deletes in a local
//! file, review them as per-attribute diffs against the live items, and
//! commit them as TransactWriteItems, all or nothing.
//!
//! Staging reads the item (a strongly consistent GetItem) and records it as
//! the change's `before`; the commit turns that into an optimistic-lock
//! condition, so a change made by someone else in between cancels the commit
//! instead of being overwritten. The commit's ClientRequestToken is derived
//! from the stage's content, so re-running a commit whose answer was lost does
//! not apply it twice. A cancelled commit is reported per staged change:
//! `change 2 (update users/u1): ConditionalCheckFailed — item changed since staged (~ status: "new" → "closed")`.

pub mod commit;
pub mod diff;
pub mod file;

pub use commit::{Chunk, MAX_ACTIONS};
pub use diff::AttributeChange;
pub use file::{Change, LockScope, Op, StageFile};

use crate::api::{ApiError, DynamoApi};
use crate::cancel::CancelledAction;
use crate::reads;
use crate::table::KeySchema;
use crate::transact::{self, TransactError};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::fmt;

/// Why a stage operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StageError {
    /// The request failed for a reason other than a cancellation.
    #[error("{0}")]
    Api(#[from] ApiError),
    /// The change or stage is not valid.
    #[error("{0}")]
    Invalid(String),
    /// The stage needs more than one transaction and splitting was not
    /// allowed.
    #[error(
        "the stage has {changes} changes in {transactions} transactions' worth \
         (at most {MAX_ACTIONS} actions and 4 MB fit one TransactWriteItems), so it cannot \
         be committed atomically; commit part of it, or allow splitting it into separately \
         atomic transactions"
    )]
    NotAtomic { changes: usize, transactions: usize },
    /// DynamoDB cancelled a transaction; nothing of it was written.
    #[error("{}", cancelled_message(.committed_changes, .failures))]
    Cancelled {
        /// Changes committed by earlier transactions of a split stage.
        committed_changes: usize,
        /// The changes the transaction was cancelled for.
        failures: Vec<CancelledAction>,
    },
}

fn cancelled_message(committed: &usize, failures: &[CancelledAction]) -> String {
    let mut text =
        String::from("the commit was cancelled; nothing of this transaction was written");
    if *committed > 0 {
        text.push_str(&format!(
            " (the first {committed} changes were committed by earlier transactions)"
        ));
    }
    for failure in failures {
        text.push_str(&format!("\n  {failure}"));
    }
    text
}

/// Reads the current version of an item, strongly consistent.
pub fn get_item(
    api: &dyn DynamoApi,
    table: &str,
    key: &Map<String, Value>,
) -> Result<Option<Map<String, Value>>, ApiError> {
    let response = api.call(
        "GetItem",
        &json!({ "TableName": table, "Key": key, "ConsistentRead": true }),
    )?;
    Ok(response.get("Item").and_then(Value::as_object).cloned())
}

/// The table's key schema, cached in the stage.
fn schema(
    api: &dyn DynamoApi,
    stage: &mut StageFile,
    table: &str,
) -> Result<KeySchema, StageError> {
    if let Some(schema) = stage.tables.get(table) {
        return Ok(schema.clone());
    }
    let schema = KeySchema::describe(api, table)?;
    stage.tables.insert(table.to_string(), schema.clone());
    Ok(schema)
}

/// An item, or `None` when it does not exist.
type MaybeItem = Option<Map<String, Value>>;

/// The item a new change starts from: what an earlier staged change makes of
/// it, or else the live item (which becomes the change's `before`).
fn base(
    api: &dyn DynamoApi,
    stage: &StageFile,
    table: &str,
    key: &Map<String, Value>,
) -> Result<(MaybeItem, MaybeItem), StageError> {
    if let Some(earlier) = stage
        .changes
        .iter()
        .find(|c| c.table == table && &c.key == key)
    {
        return Ok((earlier.before.clone(), earlier.after.clone()));
    }
    let live = get_item(api, table, key)?;
    Ok((live.clone(), live))
}

/// Stages writing `item` whole (creating or replacing it). Returns the
/// change's number.
pub fn stage_put(
    api: &dyn DynamoApi,
    stage: &mut StageFile,
    table: &str,
    item: Map<String, Value>,
) -> Result<usize, StageError> {
    let schema = schema(api, stage, table)?;
    let key = schema.key_of(&item).map_err(StageError::Invalid)?;
    let (before, _) = base(api, stage, table, &key)?;
    Ok(stage.add(Change {
        op: Op::Put,
        table: table.into(),
        key,
        before,
        after: Some(item),
    }))
}

/// Stages setting and removing top-level attributes of the item at `key`
/// (creating it if it does not exist, as UpdateItem does).
pub fn stage_update(
    api: &dyn DynamoApi,
    stage: &mut StageFile,
    table: &str,
    key: Map<String, Value>,
    set: Map<String, Value>,
    remove: &[String],
) -> Result<usize, StageError> {
    let schema = schema(api, stage, table)?;
    check_key(&schema, &key)?;
    for name in set.keys().chain(remove) {
        if schema.is_key(name) {
            return Err(StageError::Invalid(format!(
                "`{name}` is part of the key of {table}; stage a delete and a put instead"
            )));
        }
    }
    let (before, current) = base(api, stage, table, &key)?;
    let mut after = current.unwrap_or_else(|| key.clone());
    for name in remove {
        after.remove(name);
    }
    after.extend(set);
    Ok(stage.add(Change {
        op: Op::Update,
        table: table.into(),
        key,
        before,
        after: Some(after),
    }))
}

/// Stages deleting the item at `key`.
pub fn stage_delete(
    api: &dyn DynamoApi,
    stage: &mut StageFile,
    table: &str,
    key: Map<String, Value>,
) -> Result<usize, StageError> {
    let schema = schema(api, stage, table)?;
    check_key(&schema, &key)?;
    let (before, _) = base(api, stage, table, &key)?;
    Ok(stage.add(Change {
        op: Op::Delete,
        table: table.into(),
        key,
        before,
        after: None,
    }))
}

/// Stages deleting every item at `keys`, reading the live items with
/// BatchGetItem (100 keys a request) instead of one GetItem each, so a
/// selection of hundreds of rows stages in a few requests. Returns the
/// changes' numbers, in the order of `keys`.
pub fn stage_deletes(
    api: &dyn DynamoApi,
    stage: &mut StageFile,
    table: &str,
    keys: Vec<Map<String, Value>>,
) -> Result<Vec<usize>, StageError> {
    let schema = schema(api, stage, table)?;
    for key in &keys {
        check_key(&schema, key)?;
    }
    let staged = |key: &Map<String, Value>| {
        stage
            .changes
            .iter()
            .any(|c| c.table == table && &c.key == key)
    };
    let unread: Vec<Map<String, Value>> = keys.iter().filter(|k| !staged(k)).cloned().collect();
    let mut live = reads::batch_get(api, table, &unread)?;
    let mut numbers = Vec::with_capacity(keys.len());
    for key in keys {
        let before = match stage
            .changes
            .iter()
            .find(|c| c.table == table && c.key == key)
        {
            Some(earlier) => earlier.before.clone(),
            None => live.remove(&reads::key_id(&key)),
        };
        numbers.push(stage.add(Change {
            op: Op::Delete,
            table: table.into(),
            key,
            before,
            after: None,
        }));
    }
    Ok(numbers)
}

/// A key must name exactly the table's key attributes.
fn check_key(schema: &KeySchema, key: &Map<String, Value>) -> Result<(), StageError> {
    let expected = schema.attributes();
    if key.len() != expected.len() || !expected.iter().all(|k| key.contains_key(*k)) {
        return Err(StageError::Invalid(format!(
            "a key of {} has exactly the attributes {}",
            schema.table,
            expected.join(" and ")
        )));
    }
    Ok(())
}

/// One staged change compared with the live item.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeDiff {
    /// `change 1 (update users/u1)`.
    pub what: String,
    /// Live item → staged result.
    pub changes: Vec<AttributeChange>,
    /// Staged `before` → live item: non-empty means the item changed since
    /// it was staged and the commit will be cancelled.
    pub drift: Vec<AttributeChange>,
    /// The item did not exist when staged but does now, or the reverse.
    pub existence_drift: Option<String>,
    /// Why the live item could not be read (its table is gone, say): the
    /// change stays listed, against its staged `before`, so it can still be
    /// reviewed and discarded.
    pub error: Option<String>,
}

impl fmt::Display for ChangeDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.what)?;
        if let Some(error) = &self.error {
            writeln!(f, "    ! cannot read the live item: {error}")?;
        }
        if self.changes.is_empty() {
            writeln!(f, "    (no attribute changes)")?;
        }
        for change in &self.changes {
            writeln!(f, "    {change}")?;
        }
        if let Some(note) = &self.existence_drift {
            writeln!(
                f,
                "    ! {note}; the commit will be cancelled unless you re-stage"
            )?;
        }
        if !self.drift.is_empty() {
            writeln!(
                f,
                "    ! changed since staged (the commit will be cancelled unless you re-stage):"
            )?;
            for change in &self.drift {
                writeln!(f, "        {change}")?;
            }
        }
        Ok(())
    }
}

/// Compares every staged change with the live item (one GetItem each). A
/// change whose item cannot be read is listed with the error, against what
/// was staged, never dropped from the review.
pub fn diff(api: &dyn DynamoApi, stage: &StageFile) -> Result<Vec<ChangeDiff>, StageError> {
    let live_items = live_items(api, stage);
    let mut result = Vec::new();
    for (index, change) in stage.changes.iter().enumerate() {
        let schema = stage.tables.get(&change.table).ok_or_else(|| {
            StageError::Invalid(format!("the stage has no key schema for {}", change.table))
        })?;
        let what = commit::label(index, change, schema).what;
        let live = match &live_items[&change.table] {
            Ok(items) => items.get(&reads::key_id(&change.key)).cloned(),
            Err(error) => {
                result.push(ChangeDiff {
                    what,
                    changes: diff::attribute_changes(change.before.as_ref(), change.after.as_ref()),
                    drift: Vec::new(),
                    existence_drift: None,
                    error: Some(error.to_string()),
                });
                continue;
            }
        };
        let existence_drift = match (&change.before, &live) {
            (None, Some(_)) => Some("the item exists now but did not when staged".to_string()),
            (Some(_), None) => Some("the item no longer exists".to_string()),
            _ => None,
        };
        // Drift on attributes the lock does not cover cannot cancel the
        // commit, so it is not reported.
        let locked = commit::locked_attributes(change, stage.lock);
        let drift = match (&change.before, &live) {
            (Some(before), Some(live)) => diff::attribute_changes(Some(before), Some(live))
                .into_iter()
                .filter(|a| locked.as_ref().is_none_or(|l| l.contains(&a.name)))
                .collect(),
            _ => Vec::new(),
        };
        result.push(ChangeDiff {
            what,
            changes: written_changes(change, live.as_ref()),
            drift,
            existence_drift,
            error: None,
        });
    }
    Ok(result)
}

/// The live items of every staged change, read per table with BatchGetItem
/// (a stage of hundreds of changes is compared in a few requests). A table
/// that cannot be read answers its error for each of its changes.
fn live_items(
    api: &dyn DynamoApi,
    stage: &StageFile,
) -> BTreeMap<String, Result<reads::ItemsByKey, ApiError>> {
    let mut keys: BTreeMap<&str, Vec<Map<String, Value>>> = BTreeMap::new();
    for change in &stage.changes {
        keys.entry(&change.table)
            .or_default()
            .push(change.key.clone());
    }
    keys.into_iter()
        .map(|(table, keys)| (table.to_string(), reads::batch_get(api, table, &keys)))
        .collect()
}

/// What the commit of `change` writes, against the live item: a put or a
/// delete replaces the whole item, but an update writes only the attributes
/// it changed from `before`, so another writer's change to the others is
/// neither shown as this change's nor undone by it.
fn written_changes(change: &Change, live: Option<&Map<String, Value>>) -> Vec<AttributeChange> {
    if change.op != Op::Update || change.before.is_none() {
        return diff::attribute_changes(live, change.after.as_ref());
    }
    let result = applied(change, live);
    diff::attribute_changes(live, Some(&result))
}

/// `live` with the attributes `change` changed from its `before` applied:
/// what an update leaves the item as.
fn applied(change: &Change, live: Option<&Map<String, Value>>) -> Map<String, Value> {
    let mut result = live.cloned().unwrap_or_else(|| change.key.clone());
    let staged = diff::attribute_changes(change.before.as_ref(), change.after.as_ref());
    for attribute in staged {
        match attribute.new {
            Some(value) => result.insert(attribute.name, value),
            None => result.remove(&attribute.name),
        };
    }
    result
}

/// Re-stages change `number` (1-based) against the item as it is now: its
/// `before` becomes the live item, so the commit's lock expects it, and an
/// update keeps only its own attribute changes, applied to the live item. A
/// put or delete keeps what it writes. Answers what the change now writes.
pub fn restage(
    api: &dyn DynamoApi,
    stage: &mut StageFile,
    number: usize,
) -> Result<Vec<AttributeChange>, StageError> {
    let Some(change) = number.checked_sub(1).and_then(|i| stage.changes.get_mut(i)) else {
        return Err(StageError::Invalid(format!("there is no change {number}")));
    };
    let live = get_item(api, &change.table, &change.key)?;
    if change.op == Op::Update && change.before.is_some() {
        change.after = Some(applied(change, live.as_ref()));
    }
    change.before = live;
    let written = diff::attribute_changes(change.before.as_ref(), change.after.as_ref());
    Ok(written)
}

/// What a successful commit did.
#[derive(Debug, Clone, PartialEq)]
pub struct CommitReport {
    /// Changes written.
    pub changes: usize,
    /// TransactWriteItems requests sent (more than one only when splitting
    /// was allowed).
    pub transactions: usize,
    /// ClientRequestToken of each transaction.
    pub tokens: Vec<String>,
}

/// Commits the stage. With `allow_split`, a stage too large for one
/// transaction is sent as several (each atomic, the whole not); otherwise it
/// is refused. The stage file itself is left alone: the caller clears it on
/// success.
pub fn commit(
    api: &dyn DynamoApi,
    stage: &StageFile,
    allow_split: bool,
) -> Result<CommitReport, StageError> {
    if stage.changes.is_empty() {
        return Err(StageError::Invalid("nothing is staged".into()));
    }
    let chunks = commit::chunks(stage).map_err(StageError::Invalid)?;
    if chunks.len() > 1 && !allow_split {
        return Err(StageError::NotAtomic {
            changes: stage.changes.len(),
            transactions: chunks.len(),
        });
    }
    let mut tokens = Vec::new();
    for chunk in &chunks {
        let token = chunk.request["ClientRequestToken"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        match transact::send(api, &chunk.request, &chunk.labels) {
            Ok(_) => tokens.push(token),
            Err(TransactError::Cancelled(mut failures)) => {
                for failure in &mut failures {
                    let change = &stage.changes[chunk.first_change + failure.position];
                    if failure.code == "ConditionalCheckFailed" {
                        failure.explanation =
                            commit::drift_explanation(change, failure.item.as_ref());
                    }
                }
                return Err(StageError::Cancelled {
                    committed_changes: chunk.first_change,
                    failures,
                });
            }
            Err(TransactError::Api(e)) => return Err(e.into()),
        }
    }
    Ok(CommitReport {
        changes: stage.changes.len(),
        transactions: chunks.len(),
        tokens,
    })
}
