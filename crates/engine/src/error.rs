//! The engine's error inside its own code, and the one retry loop.
//!
//! Inside the engine an error is one of three things, and which one is a
//! matter of type, never of where it was raised:
//!
//! - [`EngineError::Dynamo`]: an answer for the client (a validation error,
//!   a failed condition, a missing table, a transaction's cancellation).
//!   Deterministic: doing the same again gives the same answer.
//! - [`EngineError::Conflict`]: a checked commit met a concurrent write (a
//!   shared database's serialization failure). Nothing was written; planning
//!   again on the data as it now is may succeed, so [`Engine::retry`] does.
//! - [`EngineError::Storage`]: the storage failed (I/O, a database out of
//!   reach): InternalServerError for the client, never retried here.
//!
//! A conflict left after the retries becomes DynamoDB's answer where the
//! operation decides its wording: TransactionConflictException for a single
//! write (the `From` conversion below), a cancellation with a
//! TransactionConflict reason per action for a transaction
//! (transactions.rs), unprocessed requests for a batch (api/multi.rs).
//! Both conversions are `From`, so `?` crosses between engine code and the
//! client-facing [`Result`](ferrodyn_types::Result) of the front door.

use crate::Engine;
use ferrodyn_storage::StorageError;
use ferrodyn_types::{DynamoError, ErrorKind};
use std::time::Duration;

/// An error inside the engine (see the module documentation).
#[derive(Debug)]
pub enum EngineError {
    Dynamo(DynamoError),
    Conflict,
    Storage(StorageError),
}

/// The engine's own result.
pub type EngineResult<T> = std::result::Result<T, EngineError>;

impl From<DynamoError> for EngineError {
    fn from(error: DynamoError) -> EngineError {
        EngineError::Dynamo(error)
    }
}

impl From<StorageError> for EngineError {
    fn from(error: StorageError) -> EngineError {
        match error {
            StorageError::Conflict { .. } => EngineError::Conflict,
            other => EngineError::Storage(other),
        }
    }
}

impl From<EngineError> for DynamoError {
    fn from(error: EngineError) -> DynamoError {
        match error {
            EngineError::Dynamo(error) => error,
            EngineError::Conflict => transaction_conflict(),
            EngineError::Storage(error) => crate::storage_error(error),
        }
    }
}

/// DynamoDB's answer to a single write whose item is being changed by a
/// transaction (or, here, whose commit kept meeting concurrent ones).
pub fn transaction_conflict() -> DynamoError {
    DynamoError::new(
        ErrorKind::TransactionConflict,
        "Transaction is ongoing for the item",
    )
}

/// How patient [`Engine::retry`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryPolicy {
    /// Item writes, transactions, reads confirmed by a checked write,
    /// purges: up to 12 retries, random pauses doubling from 0.2 ms to 20 ms
    /// (about 0.15 s in all). A fixed few-millisecond budget ran out on a
    /// loaded machine, where a 100-action transaction's serialization
    /// failure came from writers still running when it retried.
    Write,
    /// Catalog commits (DDL): rare, and must not fail because the lease
    /// holder's background work (a long statistics fold, a backfill chunk)
    /// held a key for a while: up to 40 retries, pauses growing to 50 ms
    /// (about 2 s in all).
    Ddl,
}

impl RetryPolicy {
    fn retries(self) -> u32 {
        match self {
            RetryPolicy::Write => 12,
            RetryPolicy::Ddl => 40,
        }
    }

    /// The pause before retry `retry` (1-based), in microseconds, before jitter.
    fn pause_micros(self, retry: u32) -> u64 {
        match self {
            RetryPolicy::Write => (200u64 << retry.min(7)).min(20_000),
            RetryPolicy::Ddl => (1u64 << retry.min(6)).min(50) * 1000,
        }
    }
}

/// A cheap random-enough number for jitter: the wall clock's nanoseconds.
fn clock_jitter() -> u64 {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    now.map_or(0, |d| u64::from(d.subsec_nanos()) / 1000)
}

impl Engine {
    /// Runs `attempt` again, after a random pause, while it fails with
    /// [`EngineError::Conflict`] on shared storage (embedded storage orders
    /// its writers with item locks, so it never has one to retry), at most
    /// as often as `policy` says. `attempt` gets the retry number (0 first)
    /// and re-reads what it planned on when it is not 0 (the tables: see
    /// [`Engine::refresh_table`]). Every other error returns at once.
    pub(crate) fn retry<T>(
        &self,
        policy: RetryPolicy,
        mut attempt: impl FnMut(u32) -> EngineResult<T>,
    ) -> EngineResult<T> {
        let mut retry = 0;
        loop {
            match attempt(retry) {
                Err(EngineError::Conflict) if self.shared() && retry < policy.retries() => {
                    retry += 1;
                    let pause = policy.pause_micros(retry);
                    let jitter = clock_jitter() % pause;
                    std::thread::sleep(Duration::from_micros(pause / 2 + jitter));
                }
                other => return other,
            }
        }
    }
}
