//! Primary keys: checking them against a table's key schema and encoding them
//! into storage keys.
//!
//! Storage layout of an item (its prefix is `keyspace::table_items`):
//! `'i' | table id (u64 BE) | hash (u64 BE) | partition key | sort key`. The hash of the partition key comes first so that
//! a Scan walks partitions in hash order (as DynamoDB does, not insertion
//! order) and parallel-scan segments are contiguous hash ranges. The partition
//! key is length-prefixed (prefix-free), and the sort key, last, is encoded so
//! that byte order is DynamoDB's sort order (unsigned bytes for S and B,
//! numeric for N), which is what Query ranges over.

use crate::schema::{AttributeDefinition, KeySchemaElement, KeyType};
use ferrodyn_types::{AttributeValue, DynamoError, Item, Result, ScalarType};

pub const MAX_PARTITION_KEY_BYTES: usize = 2048;
pub const MAX_SORT_KEY_BYTES: usize = 1024;

/// One key attribute: its name and scalar type.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyAttribute {
    pub name: String,
    pub ty: ScalarType,
}

/// A table's (or index's) primary key: a partition key and optional sort key.
#[derive(Clone, Debug, PartialEq)]
pub struct KeySchema {
    pub hash: KeyAttribute,
    pub range: Option<KeyAttribute>,
}

impl KeySchema {
    /// Builds the schema from validated KeySchema and AttributeDefinitions.
    pub fn new(elements: &[KeySchemaElement], definitions: &[AttributeDefinition]) -> KeySchema {
        let attribute = |kind: KeyType| {
            elements
                .iter()
                .find(|e| e.key_type == kind)
                .map(|e| KeyAttribute {
                    name: e.attribute_name.clone(),
                    ty: definitions
                        .iter()
                        .find(|d| d.attribute_name == e.attribute_name)
                        .map_or(ScalarType::S, |d| d.attribute_type),
                })
        };
        KeySchema {
            hash: attribute(KeyType::Hash).expect("validated key schema has a HASH key"),
            range: attribute(KeyType::Range),
        }
    }

    pub fn attributes(&self) -> impl Iterator<Item = &KeyAttribute> {
        std::iter::once(&self.hash).chain(self.range.as_ref())
    }

    pub fn is_key_attribute(&self, name: &str) -> bool {
        self.attributes().any(|a| a.name == name)
    }

    /// Rejects an empty string or binary key value in `item` (other key
    /// problems are left to [`KeySchema::validate_key`]). TransactWriteItems
    /// reports this one for the whole request, not as an action's
    /// cancellation reason.
    pub fn check_no_empty_key(&self, item: &Item) -> Result<()> {
        for attribute in self.attributes() {
            if let Some(value) = item.get(&attribute.name) {
                check_not_empty(attribute, value)?;
            }
        }
        Ok(())
    }

    /// Checks the key attributes of a whole item (PutItem's `Item`).
    pub fn validate_item(&self, item: &Item) -> Result<()> {
        for attribute in self.attributes() {
            let value = item.get(&attribute.name).ok_or_else(|| {
                DynamoError::invalid_parameter(format!(
                    "Missing the key {} in the item",
                    attribute.name
                ))
            })?;
            check_key_value(attribute, value)?;
        }
        self.check_key_sizes(item)
    }

    /// Checks a `Key` parameter: exactly the key attributes, with their types.
    pub fn validate_key(&self, key: &Item) -> Result<()> {
        let expected = 1 + usize::from(self.range.is_some());
        let mismatch =
            || DynamoError::validation("The provided key element does not match the schema");
        if key.len() != expected {
            return Err(mismatch());
        }
        for attribute in self.attributes() {
            let value = key.get(&attribute.name).ok_or_else(mismatch)?;
            if value.scalar_type() != Some(attribute.ty) {
                return Err(mismatch());
            }
            check_not_empty(attribute, value)?;
        }
        self.check_key_sizes(key)
    }

    fn check_key_sizes(&self, item: &Item) -> Result<()> {
        if key_bytes(&item[&self.hash.name]) > MAX_PARTITION_KEY_BYTES {
            return Err(DynamoError::invalid_parameter(
                "Size of hashkey has exceeded the maximum size limit of2048 bytes",
            ));
        }
        if let Some(range) = &self.range {
            if key_bytes(&item[&range.name]) > MAX_SORT_KEY_BYTES {
                return Err(DynamoError::invalid_parameter(
                    "Aggregated size of all range keys has exceeded the size limit of 1024 bytes",
                ));
            }
        }
        Ok(())
    }

    /// The key attributes of an item (which must carry them).
    pub fn extract(&self, item: &Item) -> Item {
        // Inserted one by one: collecting would sort a vector of them first.
        let mut key = Item::new();
        for attribute in self.attributes() {
            if let Some(value) = item.get(&attribute.name) {
                key.insert(attribute.name.clone(), value.clone());
            }
        }
        key
    }

    /// Storage key of the item with this key under `table_id`.
    pub fn encode(&self, table_id: u64, key: &Item) -> Vec<u8> {
        let hash_value = &key[&self.hash.name];
        let range_value = self.range.as_ref().map(|range| &key[&range.name]);
        // Sized up front: every write encodes its key, and growing the
        // vector step by step cost more than the encoding itself.
        let room = 8 + 4 + encoded_len(hash_value) + range_value.map_or(0, encoded_len);
        let mut out = crate::keyspace::table_items_with_room(table_id, room);
        out.extend_from_slice(&partition_hash(hash_value).to_be_bytes());
        encode_partition_value(hash_value, &mut out);
        if let Some(value) = range_value {
            encode_sort_value(value, &mut out);
        }
        out
    }
}

/// A secondary index's key: one or more partition-key attributes and zero or
/// more sort-key attributes, in KeySchema order. LSIs and classic GSIs have
/// one of each at most; a GSI with multi-attribute keys has up to four of
/// each.
#[derive(Clone, Debug, PartialEq)]
pub struct IndexKeySchema {
    pub hash: Vec<KeyAttribute>,
    pub range: Vec<KeyAttribute>,
}

/// Most partition-key (and most sort-key) attributes a GSI may have.
pub const MAX_INDEX_KEY_ATTRIBUTES: usize = 4;

impl IndexKeySchema {
    /// Builds the schema from a validated index KeySchema and the table's
    /// AttributeDefinitions.
    pub fn new(
        elements: &[KeySchemaElement],
        definitions: &[AttributeDefinition],
    ) -> IndexKeySchema {
        let attribute = |e: &KeySchemaElement| KeyAttribute {
            name: e.attribute_name.clone(),
            ty: definitions
                .iter()
                .find(|d| d.attribute_name == e.attribute_name)
                .map_or(ScalarType::S, |d| d.attribute_type),
        };
        let of = |kind: KeyType| {
            elements
                .iter()
                .filter(|e| e.key_type == kind)
                .map(attribute)
                .collect::<Vec<_>>()
        };
        IndexKeySchema {
            hash: of(KeyType::Hash),
            range: of(KeyType::Range),
        }
    }

    /// Whether this is a classic key (one partition attribute, at most one
    /// sort attribute), which Query validates with the classic messages.
    pub fn is_single(&self) -> bool {
        self.hash.len() == 1 && self.range.len() <= 1
    }

    /// Partition-key attributes first, then sort-key attributes.
    pub fn attributes(&self) -> impl Iterator<Item = &KeyAttribute> {
        self.hash.iter().chain(&self.range)
    }

    pub fn is_key_attribute(&self, name: &str) -> bool {
        self.attributes().any(|a| a.name == name)
    }

    pub fn is_hash_attribute(&self, name: &str) -> bool {
        self.hash.iter().any(|a| a.name == name)
    }

    /// The index key attributes an item has.
    pub fn extract(&self, item: &Item) -> Item {
        self.attributes()
            .filter_map(|a| item.get(&a.name).map(|v| (a.name.clone(), v.clone())))
            .collect()
    }

    /// The partition hash of an item (which must carry every partition-key
    /// attribute): for one attribute, exactly the table's hash of it; for
    /// several, a hash of all of them in KeySchema order.
    pub fn partition_hash(&self, item: &Item) -> u64 {
        match self.hash.as_slice() {
            [one] => partition_hash(&item[&one.name]),
            many => combined_partition_hash(many.iter().map(|a| &item[&a.name])),
        }
    }
}

/// The partition hash of several partition-key values together (order
/// matters). Stable across versions, like [`partition_hash`].
pub fn combined_partition_hash<'a>(values: impl Iterator<Item = &'a AttributeValue>) -> u64 {
    let mut hash: u64 = 0x6a09_e667_f3bc_c908;
    for value in values {
        hash = (hash ^ partition_hash(value)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        hash ^= hash >> 29;
    }
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    hash ^= hash >> 33;
    hash
}

/// Storage-key prefix of every item in one partition (all sort keys).
pub fn partition_prefix(table_id: u64, hash_value: &AttributeValue) -> Vec<u8> {
    let mut out = crate::keyspace::table_items(table_id);
    out.extend_from_slice(&partition_hash(hash_value).to_be_bytes());
    encode_partition_value(hash_value, &mut out);
    out
}

/// Storage-key prefix of the items whose partition hash is at least `hash`
/// (the start of a parallel-scan segment).
pub fn hash_bound(table_id: u64, hash: u64) -> Vec<u8> {
    let mut out = crate::keyspace::table_items(table_id);
    out.extend_from_slice(&hash.to_be_bytes());
    out
}

fn check_key_value(attribute: &KeyAttribute, value: &AttributeValue) -> Result<()> {
    if value.scalar_type() != Some(attribute.ty) {
        return Err(DynamoError::invalid_parameter(format!(
            "Type mismatch for key {} expected: {} actual: {}",
            attribute.name,
            attribute.ty.as_str(),
            value.type_name()
        )));
    }
    check_not_empty(attribute, value)
}

fn check_not_empty(attribute: &KeyAttribute, value: &AttributeValue) -> Result<()> {
    let kind = match value {
        AttributeValue::S(s) if s.is_empty() => "string",
        AttributeValue::B(b) if b.is_empty() => "binary",
        _ => return Ok(()),
    };
    Err(DynamoError::validation(format!(
        "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty {kind} value. Key: {}",
        attribute.name
    )))
}

fn key_bytes(value: &AttributeValue) -> usize {
    match value {
        AttributeValue::S(s) => s.len(),
        AttributeValue::B(b) => b.len(),
        AttributeValue::N(n) => n.storage_size(),
        _ => 0,
    }
}

/// A stable 64-bit FNV-1a hash of a partition key value. It decides scan order
/// and segment membership, so it must never change between versions.
pub fn partition_hash(value: &AttributeValue) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut feed = |bytes: &[u8]| {
        for &b in bytes {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    match value {
        AttributeValue::S(s) => {
            feed(b"S");
            feed(s.as_bytes());
        }
        AttributeValue::B(b) => {
            feed(b"B");
            feed(b);
        }
        AttributeValue::N(n) => {
            feed(b"N");
            feed(n.to_string().as_bytes());
        }
        _ => {}
    }
    // FNV's low bits mix poorly into the high bits; finish with a multiply-xorshift
    // so that hash ranges (scan segments) are evenly filled.
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(0xff51_afd7_ed55_8ccd);
    hash ^= hash >> 33;
    hash
}

/// The bytes a key value's encoding takes (at most, for a number: its
/// ordered encoding is never longer than 22 bytes).
fn encoded_len(value: &AttributeValue) -> usize {
    match value {
        AttributeValue::S(s) => s.len(),
        AttributeValue::B(b) => b.len(),
        _ => 22,
    }
}

fn encode_partition_value(value: &AttributeValue, out: &mut Vec<u8>) {
    match value {
        AttributeValue::S(s) => {
            out.extend_from_slice(&(s.len() as u32).to_be_bytes());
            out.extend_from_slice(s.as_bytes());
        }
        AttributeValue::B(b) => {
            out.extend_from_slice(&(b.len() as u32).to_be_bytes());
            out.extend_from_slice(b);
        }
        AttributeValue::N(n) => n.encode_ordered(out),
        _ => unreachable!("key values are validated to be S, N or B"),
    }
}

/// Appends a sort-key value so that byte order is DynamoDB's sort order.
pub fn encode_sort_value(value: &AttributeValue, out: &mut Vec<u8>) {
    match value {
        AttributeValue::S(s) => out.extend_from_slice(s.as_bytes()),
        AttributeValue::B(b) => out.extend_from_slice(b),
        AttributeValue::N(n) => n.encode_ordered(out),
        _ => unreachable!("key values are validated to be S, N or B"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrodyn_types::Number;

    fn schema() -> KeySchema {
        KeySchema {
            hash: KeyAttribute {
                name: "p".into(),
                ty: ScalarType::S,
            },
            range: Some(KeyAttribute {
                name: "c".into(),
                ty: ScalarType::N,
            }),
        }
    }

    fn key(p: &str, c: &str) -> Item {
        let mut item = Item::new();
        item.insert("p".into(), AttributeValue::S(p.into()));
        item.insert("c".into(), AttributeValue::N(Number::parse(c).unwrap()));
        item
    }

    #[test]
    fn sort_keys_encode_in_numeric_order_within_a_partition() {
        let s = schema();
        let a = s.encode(1, &key("x", "-5"));
        let b = s.encode(1, &key("x", "2"));
        let c = s.encode(1, &key("x", "10"));
        assert!(a < b && b < c);
    }

    #[test]
    fn partition_keys_are_prefix_free() {
        let s = KeySchema {
            hash: KeyAttribute {
                name: "p".into(),
                ty: ScalarType::S,
            },
            range: None,
        };
        let one = |v: &str| {
            let mut item = Item::new();
            item.insert("p".into(), AttributeValue::S(v.into()));
            s.encode(1, &item)
        };
        assert_ne!(one("ab"), one("a"));
        assert!(!one("ab").starts_with(&one("a")));
    }

    #[test]
    fn key_validation_messages() {
        let s = schema();
        let mut item = key("x", "1");
        item.remove("c");
        assert_eq!(
            s.validate_item(&item).unwrap_err().message,
            "One or more parameter values were invalid: Missing the key c in the item"
        );
        item.insert("c".into(), AttributeValue::S("1".into()));
        assert_eq!(
            s.validate_item(&item).unwrap_err().message,
            "One or more parameter values were invalid: Type mismatch for key c expected: N actual: S"
        );
        assert!(s.validate_key(&item).is_err());
        assert!(s.validate_key(&key("x", "1")).is_ok());
    }
}
