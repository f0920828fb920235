//! ClientRequestToken bookkeeping for TransactWriteItems: a token names one
//! transaction for 10 minutes after it completes. A repeat with the same
//! parameters succeeds without writing again; different parameters are an
//! IdempotentParameterMismatchException; a repeat while the first call still
//! runs is a TransactionInProgressException.
//!
//! On embedded storage the registry is a map in memory. On shared storage
//! (several Ferrodyn processes, one database) each token is a `'t'` record
//! in the database, claimed with a checked write, so a retry that lands on
//! another node is recognised too; a claim whose node died is given up
//! after [`RUNNING_LIFETIME`].

use crate::clock::Clock;
use crate::keyspace::token_key;
use ferrodyn_storage::{ReadCheck, Storage, StorageError, WriteOp};
use ferrodyn_types::{DynamoError, ErrorKind, Result};
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// How long DynamoDB remembers a completed token.
pub const TOKEN_LIFETIME: Duration = Duration::from_secs(10 * 60);

enum TokenState {
    Running,
    /// Completed; the per-table units the original call consumed.
    Done {
        /// When it completed, on the engine's clock (ms).
        at: u64,
        units: Vec<(String, f64)>,
    },
}

struct Entry {
    fingerprint: u64,
    state: TokenState,
}

/// How long a claim of a token stays "in progress" in a shared database
/// without completing (its node may have died).
pub const RUNNING_LIFETIME: Duration = Duration::from_secs(60);

pub struct TokenRegistry {
    entries: Mutex<HashMap<String, Entry>>,
    /// The engine's clock: a manual test clock moved past the lifetime
    /// forgets tokens (shared storage keeps the wall clock, see `over`).
    clock: Arc<Clock>,
    /// Shared storage, where the records live instead of `entries`.
    shared: Option<Arc<dyn Storage>>,
}

/// A token's record in a shared database.
#[derive(Serialize, Deserialize)]
struct StoredToken {
    fingerprint: u64,
    /// When it was claimed (ms since the epoch).
    claimed_ms: u64,
    /// When it completed, with the units consumed.
    done_ms: Option<u64>,
    units: Vec<(String, f64)>,
}

impl StoredToken {
    /// Past its lifetime: as if it were not there.
    fn expired(&self, now: u64) -> bool {
        match self.done_ms {
            Some(done) => now.saturating_sub(done) >= TOKEN_LIFETIME.as_millis() as u64,
            None => now.saturating_sub(self.claimed_ms) >= RUNNING_LIFETIME.as_millis() as u64,
        }
    }
}

/// What to do with a transaction that carries a token.
pub enum Claim {
    /// First use: run it, then call [`TokenRegistry::complete`] or [`TokenRegistry::release`].
    Run,
    /// Already done: report success with the original units, write nothing.
    Replay(Vec<(String, f64)>),
}

impl TokenRegistry {
    /// The registry for an engine over `storage`: in memory, or in the
    /// database when it is shared.
    pub fn over(storage: &Arc<dyn Storage>, clock: Arc<Clock>) -> TokenRegistry {
        TokenRegistry {
            entries: Mutex::default(),
            clock,
            shared: storage.shared().then(|| Arc::clone(storage)),
        }
    }

    pub fn claim(&self, token: &str, fingerprint: u64) -> Result<Claim> {
        let token = &scoped(token);
        if let Some(storage) = &self.shared {
            return claim_stored(&**storage, token, fingerprint);
        }
        let mut entries = self.entries.lock();
        let now = self.clock.now_millis();
        let lifetime = TOKEN_LIFETIME.as_millis() as u64;
        entries.retain(|_, e| match e.state {
            TokenState::Done { at, .. } => now.saturating_sub(at) < lifetime,
            TokenState::Running => true,
        });
        match entries.get(token) {
            Some(entry) if entry.fingerprint != fingerprint => Err(DynamoError::new(
                ErrorKind::IdempotentParameterMismatch,
                "Specified idempotent token was used with different request parameters",
            )),
            Some(Entry {
                state: TokenState::Running,
                ..
            }) => Err(DynamoError::new(
                ErrorKind::TransactionInProgress,
                "Transaction with the same client token is in progress",
            )),
            Some(Entry {
                state: TokenState::Done { units, .. },
                ..
            }) => Ok(Claim::Replay(units.clone())),
            None => {
                entries.insert(
                    token.to_string(),
                    Entry {
                        fingerprint,
                        state: TokenState::Running,
                    },
                );
                Ok(Claim::Run)
            }
        }
    }

    /// The transaction committed: remember it for [`TOKEN_LIFETIME`].
    pub fn complete(&self, token: &str, units: Vec<(String, f64)>) {
        let token = &scoped(token);
        if let Some(storage) = &self.shared {
            return finish_stored(&**storage, token, Some(units));
        }
        if let Some(entry) = self.entries.lock().get_mut(token) {
            entry.state = TokenState::Done {
                at: self.clock.now_millis(),
                units,
            };
        }
    }

    /// The transaction failed: the token may be used again.
    pub fn release(&self, token: &str) {
        let token = &scoped(token);
        if let Some(storage) = &self.shared {
            return finish_stored(&**storage, token, None);
        }
        self.entries.lock().remove(token);
    }
}

/// A token as its namespace knows it: DynamoDB scopes tokens to an
/// account, and namespaces stand for accounts (region.rs).
fn scoped(token: &str) -> String {
    match crate::region::request_namespace() {
        Some(namespace) => format!("{namespace}/{token}"),
        None => token.to_string(),
    }
}

fn storage_error(e: StorageError) -> DynamoError {
    crate::storage_error(e)
}

/// [`TokenRegistry::claim`] against a shared database: read the record,
/// decide, and claim with a write checked against what was read (a node
/// claiming the same token at once makes one of the two re-read).
fn claim_stored(storage: &dyn Storage, token: &str, fingerprint: u64) -> Result<Claim> {
    let key = token_key(token);
    loop {
        let stored = storage.get(&key).map_err(storage_error)?;
        let now = crate::cluster::now_millis();
        let current: Option<StoredToken> = (stored.as_ref())
            .and_then(|v| serde_json::from_slice(v).ok())
            .filter(|t: &StoredToken| !t.expired(now));
        match current {
            Some(t) if t.fingerprint != fingerprint => {
                return Err(DynamoError::new(
                    ErrorKind::IdempotentParameterMismatch,
                    "Specified idempotent token was used with different request parameters",
                ))
            }
            Some(StoredToken { done_ms: None, .. }) => {
                return Err(DynamoError::new(
                    ErrorKind::TransactionInProgress,
                    "Transaction with the same client token is in progress",
                ))
            }
            Some(StoredToken { units, .. }) => return Ok(Claim::Replay(units)),
            None => {}
        }
        let record = StoredToken {
            fingerprint,
            claimed_ms: now,
            done_ms: None,
            units: Vec::new(),
        };
        let ops = vec![WriteOp::Put(
            key.clone(),
            serde_json::to_vec(&record).expect("plain data always serialises"),
        )];
        let checks = vec![ReadCheck {
            key: key.clone(),
            expected: stored,
        }];
        match storage.write_checked(checks, ops) {
            Ok(()) => return Ok(Claim::Run),
            Err(StorageError::Conflict { .. }) => continue,
            Err(e) => return Err(storage_error(e)),
        }
    }
}

/// Completes (`units` given) or releases a claimed token in the database.
/// A failure is logged: the claim then lapses after [`RUNNING_LIFETIME`].
fn finish_stored(storage: &dyn Storage, token: &str, units: Option<Vec<(String, f64)>>) {
    let key = token_key(token);
    let result = match storage.get(&key) {
        Ok(Some(bytes)) => match (serde_json::from_slice::<StoredToken>(&bytes), units) {
            (Ok(mut record), Some(units)) => {
                record.done_ms = Some(crate::cluster::now_millis());
                record.units = units;
                let value = serde_json::to_vec(&record).expect("plain data always serialises");
                storage.write(vec![WriteOp::Put(key, value)])
            }
            _ => storage.write(vec![WriteOp::Delete(key)]),
        },
        Ok(None) => Ok(()),
        Err(e) => Err(e),
    };
    if let Err(e) = result {
        eprintln!("ferrodyn: cannot record ClientRequestToken {token}: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_replay_and_detect_mismatch() {
        let clock = Arc::new(Clock::new(crate::clock::ClockMode::Manual));
        let registry = TokenRegistry {
            entries: Mutex::default(),
            clock: Arc::clone(&clock),
            shared: None,
        };
        assert!(matches!(registry.claim("t", 1).unwrap(), Claim::Run));
        assert_eq!(
            registry.claim("t", 1).err().unwrap().kind,
            ErrorKind::TransactionInProgress
        );
        registry.complete("t", vec![("tbl".into(), 2.0)]);
        assert!(matches!(registry.claim("t", 1).unwrap(), Claim::Replay(_)));
        assert_eq!(
            registry.claim("t", 2).err().unwrap().kind,
            ErrorKind::IdempotentParameterMismatch
        );
        registry.release("t");
        assert!(matches!(registry.claim("t", 2).unwrap(), Claim::Run));
        // A completed token is forgotten once the engine's clock passes its
        // lifetime, not before.
        registry.complete("t", vec![]);
        clock
            .advance(TOKEN_LIFETIME - Duration::from_secs(1))
            .unwrap();
        assert!(matches!(registry.claim("t", 2).unwrap(), Claim::Replay(_)));
        clock.advance(Duration::from_secs(1)).unwrap();
        assert!(matches!(registry.claim("t", 3).unwrap(), Claim::Run));
    }
}
