//! TransactWriteItems and TransactGetItems: all-or-nothing writes across
//! items and tables, and consistent multi-item reads.
//!
//! A transaction plans every action under the engine's write lock (reading
//! each item, checking its condition, computing its new image); if any action
//! fails, nothing is written and the cancellation reasons are reported in
//! request order; otherwise every change commits in one storage batch. Because
//! the lock serialises all writers, transactions are serializable with respect
//! to each other and to single-item writes, and since a storage batch is
//! atomic no reader ever sees part of one.

use crate::collections::CollectionTracker;
use crate::items::{Mutation, PlannedWrite, StoredItem};
use crate::table::Table;
use crate::Engine;
use ferrodyn_expr::Condition;
use ferrodyn_types::{DynamoError, ErrorKind, Item, Result};
use serde_json::{json, Value};
use std::sync::Arc;

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
                entry["Item"] = serde_json::to_value(item).expect("items serialise");
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
    /// Runs a write transaction: every action or none. Each action arrives
    /// already checked against its table's key schema, or as the error that
    /// check produced: DynamoDB reports such an error as the action's
    /// ValidationError reason and evaluates no later action. On success
    /// returns each action's committed write, in request order.
    pub fn transact_write(
        &self,
        actions: Vec<Result<TransactWrite<'_>>>,
    ) -> Result<Vec<PlannedWrite>> {
        let _guard = self.item_write_lock(); // none on shared storage (shared.rs)
                                             // Shared storage: a conflict re-plans on the tables as now stored,
                                             // then cancels with TransactionConflict reasons (shared.rs).
        let spare = self.shared().then(|| actions.clone());
        let count = actions.len();
        let mut first = Some(actions);
        let result = self.retry_conflicts(|retry| {
            let mut actions = first.take().or_else(|| spare.clone()).expect("actions");
            if retry > 0 {
                for action in actions.iter_mut().flatten() {
                    action.table = self.refresh_table(&action.table)?;
                }
            }
            self.transact_write_once(actions)
        });
        match result {
            Err(e) if e.kind == ErrorKind::TransactionConflict => Err(cancellation_error(&vec![
                    CancellationReason::conflict();
                    count
                ])),
            other => other,
        }
    }

    /// One attempt of [`Engine::transact_write`]; the caller holds the lock.
    fn transact_write_once(
        &self,
        actions: Vec<Result<TransactWrite<'_>>>,
    ) -> Result<Vec<PlannedWrite>> {
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
                let mut write = self.plan_write(
                    &a.table,
                    &a.key,
                    a.mutation,
                    a.condition,
                    a.return_old_on_failure,
                )?;
                self.admit_collection(&mut collections, &mut write)?;
                Ok(write)
            });
            match outcome {
                Ok(write) => {
                    planned.push(write);
                    reasons.push(CancellationReason::none());
                }
                Err(error) if error.kind == ErrorKind::ResourceNotFound => return Err(error),
                Err(error) => {
                    failed = true;
                    stopped = error.kind == ErrorKind::Validation;
                    reasons.push(CancellationReason::from_error(error));
                }
            }
        }
        if failed {
            return Err(cancellation_error(&reasons));
        }
        self.commit(&planned)?;
        Ok(planned)
    }

    /// Reads several items as one consistent snapshot: the write lock keeps
    /// every writer out while they are read.
    pub fn transact_get(&self, gets: &[(Arc<Table>, Item)]) -> Result<Vec<Option<StoredItem>>> {
        if self.shared() {
            return self.transact_get_checked(gets); // other nodes write too
        }
        let _guard = self.write_lock.lock();
        gets.iter()
            .map(|(table, key)| self.get_item(table, key))
            .collect()
    }

    /// Writes several items without conditions (BatchWriteItem): each one
    /// stands alone, but they are committed together for speed.
    pub fn batch_write(
        &self,
        writes: Vec<(Arc<Table>, Item, Mutation<'_>)>,
    ) -> Result<Vec<PlannedWrite>> {
        let _guard = self.item_write_lock(); // none on shared storage (shared.rs)
        let spare = self.shared().then(|| writes.clone());
        let mut first = Some(writes);
        self.retry_conflicts(|retry| {
            let writes = first.take().or_else(|| spare.clone()).expect("writes");
            let mut planned = Vec::with_capacity(writes.len());
            let mut collections = CollectionTracker::default();
            for (table, key, mutation) in writes {
                let table = self.refresh_table_on_retry(&table, retry)?;
                let mut write = self.plan_write(&table, &key, mutation, None, false)?;
                self.admit_collection(&mut collections, &mut write)?;
                planned.push(write);
            }
            self.commit(&planned)?;
            Ok(planned)
        })
    }
}
