//! Consistent reads of many items by key, shared by the patterns that check
//! what is live before they write (staging many changes, uniqueness audits).

use crate::api::{ApiError, DynamoApi};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::time::Duration;

/// BatchGetItem's limit on keys per request.
const KEYS_PER_REQUEST: usize = 100;
/// Retries of UnprocessedKeys before giving up (pauses 100 ms to 3.2 s).
const MAX_RETRIES: u32 = 8;

/// Items found by [`batch_get`], by [`key_id`] of their key.
pub type ItemsByKey = BTreeMap<String, Map<String, Value>>;

/// A stable identity for a key (its canonical JSON), to look items up by.
pub fn key_id(key: &Map<String, Value>) -> String {
    crate::stage::file::canonical_json(&Value::Object(key.clone()))
}

/// Reads `keys` of `table` with BatchGetItem (100 per request, strongly
/// consistent), retrying UnprocessedKeys with a growing pause. Answers the
/// items found by [`key_id`] of their key; a key with no item is absent.
/// Duplicate keys are asked for once (BatchGetItem refuses duplicates).
pub fn batch_get(
    api: &dyn DynamoApi,
    table: &str,
    keys: &[Map<String, Value>],
) -> Result<ItemsByKey, ApiError> {
    let mut unique: BTreeMap<String, &Map<String, Value>> = BTreeMap::new();
    for key in keys {
        unique.insert(key_id(key), key);
    }
    let all: Vec<&Map<String, Value>> = unique.into_values().collect();
    let mut found = BTreeMap::new();
    for chunk in all.chunks(KEYS_PER_REQUEST) {
        // Every key of one table names the same attributes.
        let key_names: Vec<&String> = chunk
            .first()
            .map(|k| k.keys().collect())
            .unwrap_or_default();
        let mut pending = json!({ table: { "Keys": chunk, "ConsistentRead": true } });
        let mut attempt = 0u32;
        loop {
            let response = api.call("BatchGetItem", &json!({ "RequestItems": pending }))?;
            for item in response["Responses"][table]
                .as_array()
                .into_iter()
                .flatten()
            {
                if let Some(item) = item.as_object() {
                    let key: Map<String, Value> = key_names
                        .iter()
                        .filter_map(|n| Some(((*n).clone(), item.get(*n)?.clone())))
                        .collect();
                    found.insert(key_id(&key), item.clone());
                }
            }
            match response.get("UnprocessedKeys").and_then(Value::as_object) {
                Some(rest) if !rest.is_empty() && attempt < MAX_RETRIES => {
                    attempt += 1;
                    std::thread::sleep(Duration::from_millis(50 << attempt.min(6)));
                    pending = Value::Object(rest.clone());
                }
                Some(rest) if !rest.is_empty() => {
                    return Err(ApiError::Transport(format!(
                        "BatchGetItem on {table} kept returning UnprocessedKeys after {MAX_RETRIES} retries"
                    )))
                }
                _ => break,
            }
        }
    }
    Ok(found)
}
