//! Secondary indexes (GSI and LSI): which items an index holds, the entry it
//! keeps for each, and where entries live in storage.
//!
//! An index entry is stored under
//! `'x' | table id | index id | hash(index pk) | index pk | index sk | base key`
//! with the projected item as its value (in the same size-prefixed JSON form
//! as base items). The index sort key is encoded so it is both ordered and
//! prefix-free (strings and binaries escaped, numbers already are), so the
//! base key appended after it keeps entries unique without disturbing order.
//! Entries are written in the same storage batch as the base item, so an
//! index never disagrees with its table, even inside transactions.

use crate::keys::{
    combined_partition_hash, partition_hash, IndexKeySchema, KeyAttribute, KeySchema,
};
use crate::schema::IndexDescription;
pub use crate::shared::IndexKind;
use crate::shared::TableStats;
use ferrodyn_types::{AttributeValue, DynamoError, Item, Result};
use parking_lot::RwLock;
use std::sync::atomic::{AtomicI64, Ordering};

/// Which attributes an index entry carries besides the keys.
#[derive(Clone, Debug, PartialEq)]
pub enum IndexProjection {
    All,
    KeysOnly,
    Include(Vec<String>),
}

/// Where an index is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexState {
    /// Maintained by every write, but still being filled from existing items.
    Backfilling,
    Active,
}

/// An index's state and live figures (ItemCount, IndexSizeBytes), shared by
/// secondary and vector indexes.
pub struct IndexFigures {
    state: RwLock<IndexState>,
    item_count: AtomicI64,
    size_bytes: AtomicI64,
}

impl IndexFigures {
    pub fn new(state: IndexState, stats: TableStats) -> IndexFigures {
        IndexFigures {
            state: RwLock::new(state),
            item_count: AtomicI64::new(stats.item_count),
            size_bytes: AtomicI64::new(stats.size_bytes),
        }
    }

    pub fn state(&self) -> IndexState {
        *self.state.read()
    }

    pub fn set_state(&self, state: IndexState) {
        *self.state.write() = state;
    }

    pub fn stats(&self) -> TableStats {
        TableStats {
            item_count: self.item_count.load(Ordering::Relaxed),
            size_bytes: self.size_bytes.load(Ordering::Relaxed),
        }
    }

    pub fn apply_stats_delta(&self, delta: TableStats) {
        self.item_count
            .fetch_add(delta.item_count, Ordering::Relaxed);
        self.size_bytes
            .fetch_add(delta.size_bytes, Ordering::Relaxed);
    }
}

pub struct Index {
    pub name: String,
    pub id: u32,
    pub kind: IndexKind,
    pub schema: IndexKeySchema,
    pub projection: IndexProjection,
    figures: IndexFigures,
    /// A GSI's own provisioned capacity (unlimited for LSIs and on-demand
    /// tables; the table configures it).
    pub throughput: crate::throughput::Throughput,
}

impl Index {
    pub fn new(
        id: u32,
        kind: IndexKind,
        description: &IndexDescription,
        schema: IndexKeySchema,
        state: IndexState,
        stats: TableStats,
        clock: std::sync::Arc<crate::clock::Clock>,
    ) -> Index {
        let projection = match description.projection.projection_type.as_deref() {
            Some("KEYS_ONLY") => IndexProjection::KeysOnly,
            Some("INCLUDE") => IndexProjection::Include(
                description
                    .projection
                    .non_key_attributes
                    .clone()
                    .unwrap_or_default(),
            ),
            _ => IndexProjection::All,
        };
        Index {
            name: description.index_name.clone(),
            id,
            kind,
            schema,
            projection,
            figures: IndexFigures::new(state, stats),
            throughput: crate::throughput::Throughput::new(0, 0, 0.0, clock),
        }
    }

    pub fn state(&self) -> IndexState {
        self.figures.state()
    }

    pub fn set_state(&self, state: IndexState) {
        self.figures.set_state(state);
    }

    pub fn stats(&self) -> TableStats {
        self.figures.stats()
    }

    pub fn apply_stats_delta(&self, delta: TableStats) {
        self.figures.apply_stats_delta(delta);
    }

    /// Rejects an item whose index key attributes have the wrong type or are
    /// empty (DynamoDB refuses such writes rather than leave them unindexed).
    pub fn validate_item(&self, item: &Item) -> Result<()> {
        for attribute in self.schema.attributes() {
            let Some(value) = item.get(&attribute.name) else {
                continue;
            };
            if value.scalar_type() != Some(attribute.ty) {
                return Err(DynamoError::invalid_parameter(format!(
                    "Type mismatch for Index Key {} Expected: {} Actual: {} IndexName: {}",
                    attribute.name,
                    attribute.ty.as_str(),
                    value.type_name(),
                    self.name
                )));
            }
            let limit = if self.schema.is_hash_attribute(&attribute.name) {
                crate::keys::MAX_PARTITION_KEY_BYTES
            } else {
                crate::keys::MAX_SORT_KEY_BYTES
            };
            if key_value_bytes(value) > limit {
                return Err(DynamoError::invalid_parameter(format!(
                    "Size of {} key attribute {} for index {} exceeds the limit of {limit} bytes",
                    if limit == crate::keys::MAX_PARTITION_KEY_BYTES {
                        "hash"
                    } else {
                        "range"
                    },
                    attribute.name,
                    self.name
                )));
            }
            self.check_not_empty(&attribute.name, value)?;
        }
        Ok(())
    }

    /// Rejects an empty string or binary value of an index key attribute of
    /// `item` (TransactWriteItems reports this for the whole request).
    pub fn check_no_empty_key(&self, item: &Item) -> Result<()> {
        for attribute in self.schema.attributes() {
            if let Some(value) = item.get(&attribute.name) {
                self.check_not_empty(&attribute.name, value)?;
            }
        }
        Ok(())
    }

    fn check_not_empty(&self, attribute: &str, value: &AttributeValue) -> Result<()> {
        let kind = match value {
            AttributeValue::S(s) if s.is_empty() => "string",
            AttributeValue::B(b) if b.is_empty() => "binary",
            _ => return Ok(()),
        };
        Err(DynamoError::validation(format!(
            "One or more parameter values are not valid. A value specified for a secondary index key is not supported. The AttributeValue for a key attribute cannot contain an empty {kind} value. IndexName: {}, IndexKey: {attribute}",
            self.name
        )))
    }

    /// True when the item has every index key attribute, of the right type
    /// and within DynamoDB's key size limits (sparse indexes hold only such
    /// items; a backfill skips items whose keys could never be indexed).
    pub fn covers(&self, item: &Item) -> bool {
        self.schema.attributes().all(|a| {
            let limit = if self.schema.is_hash_attribute(&a.name) {
                crate::keys::MAX_PARTITION_KEY_BYTES
            } else {
                crate::keys::MAX_SORT_KEY_BYTES
            };
            item.get(&a.name).is_some_and(|v| {
                let size = key_value_bytes(v);
                v.scalar_type() == Some(a.ty) && size > 0 && size <= limit
            })
        })
    }

    /// The storage key of this item's entry, or None if the item is not in
    /// the index.
    pub fn entry_key(&self, table_id: u64, base: &KeySchema, item: &Item) -> Option<Vec<u8>> {
        if !self.covers(item) {
            return None;
        }
        let mut key = crate::keyspace::index_entries(table_id, self.id);
        key.extend_from_slice(&self.schema.partition_hash(item).to_be_bytes());
        // Every value is escaped and terminated (prefix-free), so the
        // concatenation orders as the tuple of values does.
        for attribute in self.schema.attributes() {
            encode_escaped(&item[&attribute.name], &mut key);
        }
        // The base key makes the entry unique among items with equal index keys.
        encode_escaped(&item[&base.hash.name], &mut key);
        if let Some(range) = &base.range {
            encode_escaped(&item[&range.name], &mut key);
        }
        Some(key)
    }

    /// The attributes an entry carries: the index and table keys plus the
    /// projected ones.
    pub fn project(&self, base: &KeySchema, item: &Item) -> Item {
        match &self.projection {
            IndexProjection::All => item.clone(),
            IndexProjection::KeysOnly | IndexProjection::Include(_) => {
                let extra: &[String] = match &self.projection {
                    IndexProjection::Include(names) => names,
                    _ => &[],
                };
                item.iter()
                    .filter(|(name, _)| {
                        base.is_key_attribute(name)
                            || self.schema.is_key_attribute(name)
                            || extra.contains(name)
                    })
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            }
        }
    }

    /// Whether every attribute of the base item is in an entry.
    pub fn projects_all(&self) -> bool {
        self.projection == IndexProjection::All
    }

    /// The key attributes of an entry as LastEvaluatedKey reports them: the
    /// index keys and the table keys.
    pub fn last_evaluated_key(&self, base: &KeySchema, item: &Item) -> Item {
        let mut key = base.extract(item);
        key.extend(self.schema.extract(item));
        key
    }

    /// Validates an ExclusiveStartKey for this index and returns its entry key.
    /// A key naming other attributes than the table's and the index's keys
    /// is "The provided starting key is invalid", bare (DynamoDB Local
    /// 2026-01-16, for Query and Scan alike); a key attribute of the wrong
    /// type also says why.
    pub fn start_key(&self, table_id: u64, base: &KeySchema, key: &Item) -> Result<Vec<u8>> {
        let wanted: Vec<&KeyAttribute> =
            base.attributes().chain(self.schema.attributes()).collect();
        // An index may reuse a table key attribute: count each name once.
        let mut names: Vec<&str> = wanted.iter().map(|a| a.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        let names_match = key.len() == names.len() && names.iter().all(|n| key.contains_key(*n));
        if !names_match {
            return Err(DynamoError::validation(
                "The provided starting key is invalid",
            ));
        }
        let invalid = || {
            DynamoError::validation(
                "The provided starting key is invalid: The provided key element does not match the schema",
            )
        };
        if wanted
            .iter()
            .any(|a| key[&a.name].scalar_type() != Some(a.ty))
        {
            return Err(invalid());
        }
        self.entry_key(table_id, base, key).ok_or_else(invalid)
    }
}

/// Bytes a key value counts against DynamoDB's key size limits.
fn key_value_bytes(value: &AttributeValue) -> usize {
    match value {
        AttributeValue::S(s) => s.len(),
        AttributeValue::B(b) => b.len(),
        AttributeValue::N(n) => n.storage_size(),
        _ => 0,
    }
}

/// Prefix of the entries of one index partition: its partition-key values
/// in KeySchema order.
pub fn partition_prefix(table_id: u64, index_id: u32, hash_values: &[&AttributeValue]) -> Vec<u8> {
    let mut out = crate::keyspace::index_entries(table_id, index_id);
    let hash = match hash_values {
        [one] => partition_hash(one),
        many => combined_partition_hash(many.iter().copied()),
    };
    out.extend_from_slice(&hash.to_be_bytes());
    for value in hash_values {
        encode_escaped(value, &mut out);
    }
    out
}

/// Prefix of the entries of an index whose partition hash is at least `hash`.
pub fn hash_bound(table_id: u64, index_id: u32, hash: u64) -> Vec<u8> {
    let mut out = crate::keyspace::index_entries(table_id, index_id);
    out.extend_from_slice(&hash.to_be_bytes());
    out
}

/// Appends a key value so that byte order is DynamoDB's order and no encoding
/// is a prefix of another: S and B escape 0x00 as 0x00 0xFF and end with
/// 0x00 0x01; N's encoding is prefix-free already.
pub fn encode_escaped(value: &AttributeValue, out: &mut Vec<u8>) {
    let bytes: &[u8] = match value {
        AttributeValue::S(s) => s.as_bytes(),
        AttributeValue::B(b) => b,
        AttributeValue::N(n) => {
            n.encode_ordered(out);
            return;
        }
        _ => unreachable!("index key values are validated to be S, N or B"),
    };
    for &b in bytes {
        out.push(b);
        if b == 0 {
            out.push(0xff);
        }
    }
    out.extend_from_slice(&[0x00, 0x01]);
}

/// Appends an escaped S or B value without its terminator: the prefix of
/// every encoding that begins with these bytes (for begins_with).
pub fn encode_escaped_prefix(value: &AttributeValue, out: &mut Vec<u8>) {
    let bytes: &[u8] = match value {
        AttributeValue::S(s) => s.as_bytes(),
        AttributeValue::B(b) => b,
        other => {
            encode_escaped(other, out);
            return;
        }
    };
    for &b in bytes {
        out.push(b);
        if b == 0 {
            out.push(0xff);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(s: &str) -> Vec<u8> {
        let mut out = Vec::new();
        encode_escaped(&AttributeValue::S(s.into()), &mut out);
        out
    }

    #[test]
    fn escaped_strings_keep_order_and_are_prefix_free() {
        let words = ["", "a", "a\0", "a\0b", "ab", "abc", "b"];
        for pair in words.windows(2) {
            assert!(enc(pair[0]) < enc(pair[1]), "{:?} < {:?}", pair[0], pair[1]);
        }
        let mut a = enc("ab");
        a.push(0xff);
        assert!(a < enc("abc") || !enc("abc").starts_with(&enc("ab")));
        assert!(!enc("abc").starts_with(&enc("ab")));
    }

    use crate::schema::{AttributeDefinition, KeySchemaElement, KeyType, Projection};
    use ferrodyn_types::{Number, ScalarType};

    fn element(name: &str, key_type: KeyType) -> KeySchemaElement {
        KeySchemaElement {
            attribute_name: name.into(),
            key_type,
        }
    }

    fn definition(name: &str, ty: ScalarType) -> AttributeDefinition {
        AttributeDefinition {
            attribute_name: name.into(),
            attribute_type: ty,
        }
    }

    /// A GSI keyed (h1 S, h2 N) HASH + (r1 S, r2 N, r3 B) RANGE on a table
    /// keyed `p`.
    fn composite() -> (Index, KeySchema) {
        let elements = [
            element("h1", KeyType::Hash),
            element("h2", KeyType::Hash),
            element("r1", KeyType::Range),
            element("r2", KeyType::Range),
            element("r3", KeyType::Range),
        ];
        let definitions = [
            definition("p", ScalarType::S),
            definition("h1", ScalarType::S),
            definition("h2", ScalarType::N),
            definition("r1", ScalarType::S),
            definition("r2", ScalarType::N),
            definition("r3", ScalarType::B),
        ];
        let description = IndexDescription {
            index_name: "gsi".into(),
            key_schema: elements.to_vec(),
            projection: Projection {
                projection_type: Some("ALL".into()),
                non_key_attributes: None,
            },
            index_status: None,
            backfilling: None,
            provisioned_throughput: None,
            index_size_bytes: 0,
            item_count: 0,
            index_arn: String::new(),
        };
        let schema = IndexKeySchema::new(&elements, &definitions);
        let index = Index::new(
            7,
            IndexKind::Global,
            &description,
            schema,
            IndexState::Active,
            TableStats::default(),
            std::sync::Arc::new(crate::clock::Clock::new(crate::clock::ClockMode::Wall)),
        );
        let base = KeySchema {
            hash: KeyAttribute {
                name: "p".into(),
                ty: ScalarType::S,
            },
            range: None,
        };
        (index, base)
    }

    fn row(p: &str, r1: &str, r2: i64, r3: &[u8]) -> Item {
        let mut item = Item::new();
        item.insert("p".into(), AttributeValue::S(p.into()));
        item.insert("h1".into(), AttributeValue::S("H".into()));
        item.insert("h2".into(), AttributeValue::N(Number::from(5)));
        item.insert("r1".into(), AttributeValue::S(r1.into()));
        item.insert("r2".into(), AttributeValue::N(Number::from(r2)));
        item.insert("r3".into(), AttributeValue::B(r3.to_vec()));
        item
    }

    #[test]
    fn multi_attribute_schema_keeps_keyschema_order() {
        let (index, _) = composite();
        let names =
            |attrs: &[KeyAttribute]| attrs.iter().map(|a| a.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&index.schema.hash), ["h1", "h2"]);
        assert_eq!(names(&index.schema.range), ["r1", "r2", "r3"]);
        assert_eq!(index.schema.range[1].ty, ScalarType::N);
        assert!(!index.schema.is_single());
    }

    #[test]
    fn several_sort_attributes_encode_in_tuple_order() {
        let (index, base) = composite();
        // Sorted by (r1, r2, r3), then the base key: a shorter r1 that is
        // a prefix of a longer one sorts first whatever follows it, and N
        // sorts numerically.
        let rows = [
            row("z", "a", 100, b"\xff"),
            row("a", "a\0", -3, b"\x05"),
            row("b", "ab", -3, b"\x01"),
            row("a", "ab", 2, b"\x00"),
            row("a", "ab", 2, b"\x00\x00"),
            row("b", "ab", 2, b"\x00\x00"),
            row("a", "ab", 10, b"\x05"),
            row("a", "b", -100, b"\x05"),
        ];
        let keys: Vec<Vec<u8>> = rows
            .iter()
            .map(|r| index.entry_key(1, &base, r).expect("covered"))
            .collect();
        for (i, pair) in keys.windows(2).enumerate() {
            assert!(pair[0] < pair[1], "row {i} sorts before row {}", i + 1);
        }
        // Every entry of the partition starts with its partition prefix,
        // and the prefix plus the escaped leading sort values is a prefix
        // of exactly the entries with those values.
        let h1 = AttributeValue::S("H".into());
        let h2 = AttributeValue::N(Number::from(5));
        let prefix = partition_prefix(1, 7, &[&h1, &h2]);
        assert!(keys.iter().all(|k| k.starts_with(&prefix)));
        let mut ab = prefix.clone();
        encode_escaped(&AttributeValue::S("ab".into()), &mut ab);
        let matching = keys.iter().filter(|k| k.starts_with(&ab)).count();
        assert_eq!(matching, 5);
    }

    #[test]
    fn single_attribute_partitions_encode_as_before() {
        let value = AttributeValue::S("v".into());
        let mut expected = crate::keyspace::index_entries(3, 4);
        expected.extend_from_slice(&partition_hash(&value).to_be_bytes());
        encode_escaped(&value, &mut expected);
        assert_eq!(partition_prefix(3, 4, &[&value]), expected);
        // Two attributes hash together, and order matters.
        let other = AttributeValue::S("w".into());
        assert_ne!(
            partition_prefix(3, 4, &[&value, &other])[13..21],
            partition_prefix(3, 4, &[&other, &value])[13..21]
        );
    }

    #[test]
    fn items_missing_any_key_attribute_are_not_indexed() {
        let (index, base) = composite();
        for name in ["h1", "h2", "r1", "r2", "r3"] {
            let mut item = row("a", "x", 1, b"1");
            item.remove(name);
            assert!(index.entry_key(1, &base, &item).is_none(), "{name}");
        }
        let key = index.last_evaluated_key(&base, &row("a", "x", 1, b"1"));
        let mut names: Vec<&String> = key.keys().collect();
        names.sort();
        assert_eq!(names, ["h1", "h2", "p", "r1", "r2", "r3"]);
    }
}
