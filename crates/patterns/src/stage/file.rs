//! The stage file: a JSON document listing staged changes, each with the item
//! as it was seen when staged (`before`) and as it should become (`after`).
//!
//! Keeping `before` is what makes the commit safe: it becomes the change's
//! optimistic-lock condition. Staging a second change to the same item merges
//! into the first (one transaction may touch an item only once), keeping the
//! first `before` and the latest `after`.

use crate::table::KeySchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::Path;

/// Current format version, written into every stage file.
pub const VERSION: u32 = 1;

/// What a staged change does to its item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    /// Write the whole item (create it, or replace it).
    Put,
    /// Change some attributes (sent as an UpdateExpression).
    Update,
    /// Remove the item.
    Delete,
}

impl Op {
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Put => "put",
            Op::Update => "update",
            Op::Delete => "delete",
        }
    }
}

/// What an update's optimistic lock covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LockScope {
    /// The whole item must be as staged: any change by someone else, to
    /// any attribute, cancels the commit.
    #[default]
    Item,
    /// Only the attributes an update writes must be as staged (and the item
    /// must still exist), so an unrelated counter increment does not cancel
    /// it. Puts and deletes replace or remove the whole item and keep the
    /// whole-item lock.
    Attributes,
}

impl LockScope {
    fn is_item(&self) -> bool {
        *self == LockScope::Item
    }
}

/// One staged change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    pub op: Op,
    pub table: String,
    /// The item's key (typed).
    pub key: Map<String, Value>,
    /// The item when it was staged; `None` if it did not exist.
    pub before: Option<Map<String, Value>>,
    /// The item the change produces; `None` for a delete.
    pub after: Option<Map<String, Value>>,
}

/// A stage: changes in the order they were staged, and the key schemas of
/// their tables.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StageFile {
    pub version: u32,
    /// A random name given when the first change is staged. It is part of
    /// the digest, so a new stage with the same content as one committed a
    /// minute ago gets a new idempotency token (DynamoDB would otherwise
    /// answer "done" without writing).
    #[serde(default)]
    pub id: String,
    #[serde(default)]
    pub tables: BTreeMap<String, KeySchema>,
    #[serde(default)]
    pub changes: Vec<Change>,
    /// What updates' locks cover (the whole item unless said otherwise).
    #[serde(default, skip_serializing_if = "LockScope::is_item")]
    pub lock: LockScope,
}

impl Default for StageFile {
    fn default() -> Self {
        StageFile {
            version: VERSION,
            id: String::new(),
            tables: BTreeMap::new(),
            changes: Vec::new(),
            lock: LockScope::Item,
        }
    }
}

impl StageFile {
    /// Reads a stage file; a missing file is an empty stage.
    pub fn load(path: &Path) -> Result<StageFile, String> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(StageFile::default()),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        let stage: StageFile = serde_json::from_str(&text)
            .map_err(|e| format!("{} is not a stage file: {e}", path.display()))?;
        if stage.version != VERSION {
            return Err(format!(
                "{} has stage format {}, this ferrodyn reads {VERSION}",
                path.display(),
                stage.version
            ));
        }
        Ok(stage)
    }

    /// Writes the stage file atomically (a temporary file renamed over it),
    /// so an interrupted save never leaves half a stage.
    pub fn save(&self, path: &Path) -> Result<(), String> {
        let text = serde_json::to_string_pretty(self).expect("plain data always serialises");
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, text + "\n")
            .and_then(|()| std::fs::rename(&tmp, path))
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    /// Adds `change`, merging it into an earlier change to the same item.
    /// Returns the 1-based number of the change it became.
    pub fn add(&mut self, change: Change) -> usize {
        if self.id.is_empty() {
            self.id = crate::transact::fresh_token("stage");
        }
        if let Some(index) = self
            .changes
            .iter()
            .position(|c| c.table == change.table && c.key == change.key)
        {
            let earlier = &mut self.changes[index];
            earlier.op = merged_op(earlier, &change);
            earlier.after = change.after;
            return index + 1;
        }
        self.changes.push(change);
        self.changes.len()
    }

    /// A digest of the staged content, hex. Used for the idempotency token:
    /// the same stage always commits with the same token.
    pub fn digest(&self) -> String {
        // The lock scope changes the conditions sent, so it is part of the
        // token (written only when not the default, so older tokens hold).
        let mut content = serde_json::json!({ "id": self.id, "changes": self.changes });
        if !self.lock.is_item() {
            content["lock"] = serde_json::json!(self.lock);
        }
        let canonical = canonical_json(&content);
        hex(&Sha256::digest(canonical.as_bytes()))
    }
}

/// The op of two changes to one item merged: what takes `before` to the
/// latest `after`.
fn merged_op(earlier: &Change, later: &Change) -> Op {
    match (&earlier.before, &later.after) {
        (_, None) => Op::Delete,
        (None, Some(_)) => Op::Put,
        (Some(_), Some(_)) if earlier.op == Op::Update && later.op == Op::Update => Op::Update,
        (Some(_), Some(_)) => Op::Put,
    }
}

/// JSON with object keys sorted at every level, so a digest does not depend
/// on map ordering.
pub fn canonical_json(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .iter()
                .map(|k| {
                    format!(
                        "{}:{}",
                        Value::String((*k).clone()),
                        canonical_json(&map[*k])
                    )
                })
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(canonical_json).collect();
            format!("[{}]", parts.join(","))
        }
        other => other.to_string(),
    }
}

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    fn change(op: Op, before: Option<Value>, after: Option<Value>) -> Change {
        Change {
            op,
            table: "users".into(),
            key: obj(json!({"pk":{"S":"u1"}})),
            before: before.map(obj),
            after: after.map(obj),
        }
    }

    #[test]
    fn a_stage_round_trips_through_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stage.json");
        assert_eq!(StageFile::load(&path).unwrap(), StageFile::default());
        let mut stage = StageFile::default();
        stage.add(change(Op::Put, None, Some(json!({"pk":{"S":"u1"}}))));
        stage.save(&path).unwrap();
        assert_eq!(StageFile::load(&path).unwrap(), stage);
    }

    #[test]
    fn changes_to_one_item_merge_keeping_the_first_before() {
        let mut stage = StageFile::default();
        let seen = json!({"pk":{"S":"u1"},"n":{"N":"1"}});
        stage.add(change(
            Op::Update,
            Some(seen.clone()),
            Some(json!({"pk":{"S":"u1"},"n":{"N":"2"}})),
        ));
        let n = stage.add(change(
            Op::Update,
            Some(json!({"pk":{"S":"u1"},"n":{"N":"2"}})),
            Some(json!({"pk":{"S":"u1"},"n":{"N":"3"}})),
        ));
        assert_eq!(n, 1);
        assert_eq!(stage.changes.len(), 1);
        assert_eq!(stage.changes[0].before, Some(obj(seen)));
        assert_eq!(stage.changes[0].op, Op::Update);
        stage.add(change(Op::Delete, None, None));
        assert_eq!(stage.changes[0].op, Op::Delete);
    }

    #[test]
    fn create_then_update_stays_a_create() {
        let mut stage = StageFile::default();
        stage.add(change(Op::Put, None, Some(json!({"pk":{"S":"u1"}}))));
        stage.add(change(
            Op::Update,
            Some(json!({"pk":{"S":"u1"}})),
            Some(json!({"pk":{"S":"u1"},"a":{"S":"x"}})),
        ));
        assert_eq!(stage.changes[0].op, Op::Put);
        assert_eq!(stage.changes[0].before, None);
    }

    #[test]
    fn the_digest_ignores_key_order_and_follows_content() {
        let mut a = StageFile::default();
        a.add(change(
            Op::Put,
            None,
            Some(json!({"pk":{"S":"u1"},"a":{"S":"x"},"b":{"S":"y"}})),
        ));
        let mut b = StageFile {
            id: a.id.clone(),
            ..StageFile::default()
        };
        b.add(change(
            Op::Put,
            None,
            Some(json!({"b":{"S":"y"},"pk":{"S":"u1"},"a":{"S":"x"}})),
        ));
        assert_eq!(a.digest(), b.digest());
        let mut other_stage = b.clone();
        other_stage.id = "another".into();
        assert_ne!(a.digest(), other_stage.digest());
        b.add(change(Op::Delete, None, None));
        assert_ne!(a.digest(), b.digest());
    }
}
