//! Sending one TransactWriteItems: idempotency tokens, a retry of the same
//! request when the answer was lost, and cancellations read per action.

use crate::api::{ApiError, DynamoApi};
use crate::cancel::{self, ActionLabel, CancelledAction};
use crate::stage::file::{canonical_json, hex};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How many times a request whose answer was lost is sent (with the same
/// token, so DynamoDB applies it at most once).
const ATTEMPTS: u32 = 3;

/// A token (≤ 36 characters) derived from `content`: equal content, equal
/// token.
pub fn token_for(prefix: &str, content: &Value) -> String {
    let hash = Sha256::digest(canonical_json(content).as_bytes());
    let room = 36 - prefix.len() - 1;
    format!("{prefix}-{}", &hex(&hash)[..room])
}

/// A token no other call has used: the clock, the process and a counter.
pub fn fresh_token(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let seed = format!(
        "{nanos}/{}/{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    token_for(prefix, &Value::String(seed))
}

/// Why a transaction was not written.
#[derive(Debug, Clone, thiserror::Error)]
pub enum TransactError {
    #[error("{0}")]
    Api(ApiError),
    /// Cancelled: nothing was written.
    #[error("the transaction was cancelled; nothing was written{}", list(.0))]
    Cancelled(Vec<CancelledAction>),
}

fn list(failures: &[CancelledAction]) -> String {
    failures.iter().map(|f| format!("\n  {f}")).collect()
}

/// Sends a TransactWriteItems `request` (which carries its
/// ClientRequestToken), resending it on transport failures.
pub fn send(
    api: &dyn DynamoApi,
    request: &Value,
    labels: &[ActionLabel],
) -> Result<Value, TransactError> {
    let mut attempt = 1;
    loop {
        match api.call("TransactWriteItems", request) {
            Ok(response) => return Ok(response),
            Err(ApiError::Api { code, body, .. }) if code == "TransactionCanceledException" => {
                return Err(TransactError::Cancelled(cancel::explain(&body, labels)))
            }
            Err(ApiError::Transport(_)) if attempt < ATTEMPTS => {
                std::thread::sleep(Duration::from_millis(200 * u64::from(attempt)));
                attempt += 1;
            }
            Err(e) => return Err(TransactError::Api(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tokens_fit_dynamodbs_36_characters() {
        let t = token_for("uniq", &json!({"a": 1}));
        assert_eq!(t.len(), 36);
        assert_eq!(t, token_for("uniq", &json!({"a": 1})));
        assert_ne!(fresh_token("uniq"), fresh_token("uniq"));
    }
}
