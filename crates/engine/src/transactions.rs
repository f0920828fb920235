//! TransactWriteItems and TransactGetItems: all-or-nothing writes across
//! items and tables, and consistent multi-item reads.
//!
//! A transaction first takes the locks of all its items (see [`crate::locks`]):
//! an item another transaction holds cancels it at once with a
//! TransactionConflict reason at that item's position, as DynamoDB does.
//! Holding them, it plans every action (reading each item, checking its
//! condition, computing its new image); if any action fails, nothing is
//! written and the cancellation reasons are reported in request order;
//! otherwise every change commits in one storage batch, and then the locks
//! are released. Since no one else can change its items between its reads and
//! its commit, transactions are serializable with respect to each other and
//! to single-item writes, and since a storage batch is atomic no reader ever
//! sees part of one. TransactGetItems shares its items' locks while reading,
//! so it is cancelled by (and never reads past) a write in flight.

use crate::collections::CollectionTracker;
use crate::error::{EngineError, EngineResult, RetryPolicy};
use crate::items::{Mutation, PlannedWrite, StoredItem};
use crate::locks::{Holder, LockKey, LockSet};
use crate::table::Table;
use crate::Engine;
use ferrodyn_expr::Condition;
use ferrodyn_storage::ReadCheck;
use ferrodyn_types::{DynamoError, ErrorKind, Item, Result};
use parking_lot::RwLockReadGuard;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

/// One action of a TransactWriteItems request.
#[derive(Clone)]
pub struct TransactWrite<'a> {
    pub table: Arc<Table>,
    pub key: Item,
    pub mutation: Mutation<'a>,
    pub condition: Option<&'a Condition>,
    pub return_old_on_failure: bool,
}

/// Why one action of a cancelled transaction failed (or `None`).
#[derive(Clone, Debug)]
pub struct CancellationReason {
    pub code: String,
    pub message: Option<String>,
    pub item: Option<Item>,
}

impl CancellationReason {
    pub fn none() -> CancellationReason {
        CancellationReason {
            code: "None".into(),
            message: None,
            item: None,
        }
    }

    /// The reason an action's error gives (ValidationError for anything
    /// that is not one of the named failures).
    pub fn from_error(error: DynamoError) -> CancellationReason {
        let code = match error.kind {
            ErrorKind::ConditionalCheckFailed => "ConditionalCheckFailed",
            ErrorKind::ProvisionedThroughputExceeded => "ProvisionedThroughputExceeded",
            ErrorKind::Throttling => "ThrottlingError",
            ErrorKind::TransactionConflict => "TransactionConflict",
            ErrorKind::ItemCollectionSizeLimitExceeded => "ItemCollectionSizeLimitExceeded",
            _ => "ValidationError",
        };
        // The reason's wording differs from the single-write exception's
        // (the TransactWriteItems API reference).
        let message = match error.kind {
            ErrorKind::ItemCollectionSizeLimitExceeded => "Collection size exceeded".to_string(),
            _ => error.message,
        };
        let item = error
            .extra
            .as_ref()
            .and_then(|extra| extra.get("Item"))
            .and_then(|item| serde_json::from_value(item.clone()).ok());
        CancellationReason {
            code: code.into(),
            message: Some(message),
            item,
        }
    }

    /// A conflict reason, for fault injection and contention.
    pub fn conflict() -> CancellationReason {
        CancellationReason {
            code: "TransactionConflict".into(),
            message: Some("Transaction is ongoing for the item".into()),
            item: None,
        }
    }
}

/// The TransactionCanceledException DynamoDB sends for these reasons.
pub fn cancellation_error(reasons: &[CancellationReason]) -> DynamoError {
    let codes: Vec<&str> = reasons.iter().map(|r| r.code.as_str()).collect();
    let list: Vec<Value> = reasons
        .iter()
        .map(|r| {
            let mut entry = json!({ "Code": r.code });
            if let Some(message) = &r.message {
                entry["Message"] = json!(message);
            }
            if let Some(item) = &r.item {
                entry["Item"] = serde_json::to_value(item).expect("plain data always serialises");
            }
            entry
        })
        .collect();
    DynamoError::new(
        ErrorKind::TransactionCanceled,
        format!(
            "Transaction cancelled, please refer cancellation reasons for specific reasons [{}]",
            codes.join(", ")
        ),
    )
    .with_field("CancellationReasons", Value::Array(list))
}

impl Engine {
    /// TransactGetItems on shared storage: every item is read, then the
    /// reads are confirmed all at once by an empty checked write (one
    /// serializable transaction that sees them all unchanged), so the answer
    /// is one snapshot; a write in between makes it read again, and after
    /// the retries it is cancelled with TransactionConflict reasons.
    pub(crate) fn transact_get_checked(
        &self,
        gets: &[(Arc<Table>, ferrodyn_types::Item)],
    ) -> Result<Vec<Option<StoredItem>>> {
        let result = self.retry(RetryPolicy::Write, |_| {
            let mut checks = Vec::with_capacity(gets.len());
            for (table, key) in gets {
                let key = table.schema.encode(table.id, key);
                let found = self.storage.get(&key)?;
                checks.push(ReadCheck {
                    key,
                    expected: found,
                });
            }
            self.storage.write_checked(checks.clone(), Vec::new())?;
            let items: Result<Vec<_>> = (checks.into_iter())
                .map(|c| c.expected.map(StoredItem::decode).transpose())
                .collect();
            Ok(items?)
        });
        match result {
            Err(EngineError::Conflict) => Err(cancellation_error(&vec![
                CancellationReason::conflict();
                gets.len()
            ])),
            other => Ok(other?),
        }
    }

    /// Runs a write transaction: every action or none. Each action arrives
    /// already checked against its table's key schema, or as the error that
    /// check produced: DynamoDB reports such an error as the action's
    /// ValidationError reason and evaluates no later action. On success
    /// returns each action's committed write, in request order.
    pub fn transact_write(
        &self,
        actions: Vec<Result<TransactWrite<'_>>>,
    ) -> Result<Vec<PlannedWrite>> {
        self.transact_write_holding(actions, None)
    }

    /// [`Engine::transact_write`], keeping the items held for `hold` before
    /// committing (fault injection: a wider window for conflicts).
    pub fn transact_write_holding(
        &self,
        actions: Vec<Result<TransactWrite<'_>>>,
        hold: Option<Duration>,
    ) -> Result<Vec<PlannedWrite>> {
        // An action that failed its checks cancels the transaction whatever
        // happens, so nothing is locked for it.
        let valid: Option<Vec<(&Arc<Table>, &Item)>> = actions
            .iter()
            .map(|a| a.as_ref().ok().map(|a| (&a.table, &a.key)))
            .collect();
        let tables: Vec<Arc<Table>> = (valid.iter().flatten())
            .map(|(t, _)| Arc::clone(t))
            .collect();
        let writers = table_writers(&tables);
        let (held, keys) = match valid.as_deref() {
            Some(items) => {
                let (held, keys) = self.lock_for(Holder::Transaction, items)?;
                (Some(held), Some(keys))
            }
            None => (None, None),
        };
        if let (Some(hold), Some(_)) = (hold, &held) {
            std::thread::sleep(hold);
        }
        let result = self.plan_and_commit_retrying(actions, keys);
        drop(held);
        drop(writers);
        result
    }

    /// Takes the locks of these items for `holder`, and returns them with
    /// each item's storage key (its lock key), in item order; a conflict is
    /// reported as DynamoDB's cancellation, TransactionConflict at each
    /// conflicting item's position.
    fn lock_for(
        &self,
        holder: Holder,
        items: &[(&Arc<Table>, &Item)],
    ) -> Result<(LockSet<'_>, Vec<Vec<u8>>)> {
        let mut keys = Vec::with_capacity(items.len());
        let mut positions = Vec::with_capacity(items.len());
        for (position, (table, key)) in items.iter().enumerate() {
            match holder {
                Holder::Read => keys.push(LockKey {
                    key: table.schema.encode(table.id, key),
                    item: true,
                }),
                _ => self.push_write_keys(table, key, &mut keys),
            }
            positions.resize(keys.len(), position);
        }
        let held = self.locks.acquire(holder, &keys).map_err(|conflict| {
            let mut reasons = vec![CancellationReason::none(); items.len()];
            for at in conflict.positions {
                reasons[positions[at]] = CancellationReason::conflict();
            }
            cancellation_error(&reasons)
        })?;
        // Each item has exactly one item key, in item order.
        let item_keys = (keys.into_iter().filter(|k| k.item))
            .map(|k| k.key)
            .collect();
        Ok((held, item_keys))
    }

    /// [`Engine::plan_and_commit`], again after a storage conflict (shared
    /// storage: another node wrote a key the plan read; cluster.rs), on the
    /// tables as now stored; a conflict left after the retries cancels the
    /// transaction with TransactionConflict reasons.
    /// `keys` are the actions' storage keys (when they were locked), used
    /// by the first attempt; a retry encodes them for the refreshed tables.
    fn plan_and_commit_retrying(
        &self,
        actions: Vec<Result<TransactWrite<'_>>>,
        mut keys: Option<Vec<Vec<u8>>>,
    ) -> Result<Vec<PlannedWrite>> {
        let spare = self.shared().then(|| actions.clone());
        let count = actions.len();
        let mut first = Some(actions);
        let result = self.retry(RetryPolicy::Write, |retry| {
            let mut actions = first.take().or_else(|| spare.clone()).expect("actions");
            if retry > 0 {
                for action in actions.iter_mut().flatten() {
                    action.table = self.refresh_table(&action.table)?;
                }
            }
            self.plan_and_commit(actions, keys.take())
        });
        match result {
            Err(EngineError::Conflict) => Err(cancellation_error(&vec![
                CancellationReason::conflict();
                count
            ])),
            other => Ok(other?),
        }
    }

    /// Plans every action (the caller holds their locks; `keys`, when
    /// given, are their storage keys in action order) and commits them
    /// all, or reports why the transaction is cancelled.
    fn plan_and_commit(
        &self,
        actions: Vec<Result<TransactWrite<'_>>>,
        keys: Option<Vec<Vec<u8>>>,
    ) -> EngineResult<Vec<PlannedWrite>> {
        let mut keys = keys.map(Vec::into_iter);
        let mut planned = Vec::with_capacity(actions.len());
        let mut reasons = Vec::with_capacity(actions.len());
        let mut failed = false;
        let mut stopped = false;
        // Collection sizes as the actions planned so far leave them: an
        // action that grows its collection past the limit fails with
        // ItemCollectionSizeLimitExceeded.
        let mut collections = CollectionTracker::default();
        for action in actions {
            if stopped {
                reasons.push(CancellationReason::none());
                continue;
            }
            let outcome = action.and_then(|a| {
                let storage_key = (keys.as_mut().and_then(Iterator::next))
                    .unwrap_or_else(|| a.table.schema.encode(a.table.id, &a.key));
                self.check_table_live(&a.table)?;
                let mut write = self.plan_write(
                    &a.table,
                    &a.key,
                    storage_key,
                    a.mutation,
                    a.condition,
                    a.return_old_on_failure,
                )?;
                self.admit_collection(&mut collections, &mut write)?;
                self.admit_index_partitions(&write)?;
                Ok(write)
            });
            match outcome {
                Ok(write) => {
                    planned.push(write);
                    reasons.push(CancellationReason::none());
                }
                Err(error) if error.kind == ErrorKind::ResourceNotFound => return Err(error.into()),
                Err(error) => {
                    failed = true;
                    stopped = error.kind == ErrorKind::Validation;
                    reasons.push(CancellationReason::from_error(error));
                }
            }
        }
        if failed {
            return Err(cancellation_error(&reasons).into());
        }
        // A storage conflict stays EngineError::Conflict, so that
        // `plan_and_commit_retrying` re-plans on shared storage; only one
        // left after the retries becomes the cancellation.
        self.commit(&mut planned)?;
        Ok(planned)
    }

    /// Reads several items as one consistent snapshot: their shared locks
    /// keep every writer out while they are read, and an item being written
    /// cancels the read with TransactionConflict.
    pub fn transact_get(&self, gets: &[(Arc<Table>, Item)]) -> Result<Vec<Option<StoredItem>>> {
        let items: Vec<(&Arc<Table>, &Item)> = gets.iter().map(|(t, k)| (t, k)).collect();
        let (_held, keys) = self.lock_for(Holder::Read, &items)?;
        if self.shared() {
            return self.transact_get_checked(gets); // other nodes write too
        }
        keys.iter().map(|key| self.get_stored(key)).collect()
    }

    /// Writes several items without conditions (BatchWriteItem): each one
    /// stands alone, but they are committed together for speed. An item a
    /// transaction holds is waited for (DynamoDB lists no conflict for
    /// BatchWriteItem's requests; each is serializable on its own).
    /// A conflict left after the retries is [`EngineError::Conflict`]: the
    /// caller leaves the requests unprocessed.
    pub fn batch_write(
        &self,
        writes: Vec<(Arc<Table>, Item, Mutation<'_>)>,
    ) -> EngineResult<Vec<PlannedWrite>> {
        Ok(self.batch_write_admitting(writes)?.0)
    }

    /// [`Engine::batch_write`], leaving out the writes whose global index
    /// partitions refuse them (partition limits): the committed writes,
    /// and the positions (in `writes`) of those left out, with why.
    pub(crate) fn batch_write_admitting(
        &self,
        writes: Vec<(Arc<Table>, Item, Mutation<'_>)>,
    ) -> EngineResult<(Vec<PlannedWrite>, Refused)> {
        let tables: Vec<Arc<Table>> = writes.iter().map(|(t, _, _)| Arc::clone(t)).collect();
        let _writers = table_writers(&tables);
        let items: Vec<(&Arc<Table>, &Item)> = writes.iter().map(|(t, k, _)| (t, k)).collect();
        let (_held, keys) = self.lock_for(Holder::Batch, &items)?;
        // Shared storage: re-planned after a storage conflict (cluster.rs),
        // the storage keys encoded again for the refreshed tables.
        let spare = self.shared().then(|| writes.clone());
        let mut first = Some((writes, keys));
        self.retry(RetryPolicy::Write, |retry| {
            let (writes, keys) = match first.take() {
                Some((writes, keys)) => (writes, Some(keys)),
                None => (spare.clone().expect("writes"), None),
            };
            let mut keys = keys.map(Vec::into_iter);
            let mut planned = Vec::with_capacity(writes.len());
            let mut collections = CollectionTracker::default();
            let mut live = Vec::new();
            let mut refused = Vec::new();
            for (position, (table, key, mutation)) in writes.into_iter().enumerate() {
                let table = self.refresh_table_on_retry(&table, retry)?;
                let storage_key = (keys.as_mut().and_then(Iterator::next))
                    .unwrap_or_else(|| table.schema.encode(table.id, &key));
                if !live.contains(&table.id) {
                    self.check_table_live(&table)?;
                    live.push(table.id);
                }
                let mut write =
                    self.plan_write(&table, &key, storage_key, mutation, None, false)?;
                self.admit_collection(&mut collections, &mut write)?;
                if let Err(error) = self.admit_index_partitions(&write) {
                    refused.push((position, error));
                    continue;
                }
                planned.push(write);
            }
            self.commit(&mut planned)?;
            Ok((planned, refused))
        })
    }
}

/// Positions of a batch's writes that partition limits refused, with why.
pub(crate) type Refused = Vec<(usize, DynamoError)>;

/// The writers guards of these tables, each once, in table-id order (the
/// order every multi-table request takes them in).
fn table_writers(tables: &[Arc<Table>]) -> Vec<RwLockReadGuard<'_, ()>> {
    let mut distinct: Vec<&Arc<Table>> = tables.iter().collect();
    distinct.sort_by_key(|t| t.id);
    distinct.dedup_by_key(|t| t.id);
    distinct.iter().map(|t| t.writers()).collect()
}
