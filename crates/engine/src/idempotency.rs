//! ClientRequestToken bookkeeping for TransactWriteItems: a token names one
//! transaction for 10 minutes after it completes. A repeat with the same
//! parameters succeeds without writing again; different parameters are an
//! IdempotentParameterMismatchException; a repeat while the first call still
//! runs is a TransactionInProgressException.

use ferrodyn_types::{DynamoError, ErrorKind, Result};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// How long DynamoDB remembers a completed token.
pub const TOKEN_LIFETIME: Duration = Duration::from_secs(10 * 60);

enum TokenState {
    Running,
    /// Completed; the per-table units the original call consumed.
    Done {
        at: Instant,
        units: Vec<(String, f64)>,
    },
}

struct Entry {
    fingerprint: u64,
    state: TokenState,
}

#[derive(Default)]
pub struct TokenRegistry {
    entries: Mutex<HashMap<String, Entry>>,
}

/// What to do with a transaction that carries a token.
pub enum Claim {
    /// First use: run it, then call [`TokenRegistry::complete`] or [`TokenRegistry::release`].
    Run,
    /// Already done: report success with the original units, write nothing.
    Replay(Vec<(String, f64)>),
}

impl TokenRegistry {
    pub fn claim(&self, token: &str, fingerprint: u64) -> Result<Claim> {
        let mut entries = self.entries.lock();
        let now = Instant::now();
        entries.retain(|_, e| match e.state {
            TokenState::Done { at, .. } => now.duration_since(at) < TOKEN_LIFETIME,
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
        if let Some(entry) = self.entries.lock().get_mut(token) {
            entry.state = TokenState::Done {
                at: Instant::now(),
                units,
            };
        }
    }

    /// The transaction failed: the token may be used again.
    pub fn release(&self, token: &str) {
        self.entries.lock().remove(token);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_replay_and_detect_mismatch() {
        let registry = TokenRegistry::default();
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
    }
}
