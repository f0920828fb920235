//! The storage key range of a Query: one partition (of the table, or of a
//! secondary index), narrowed by the sort-key condition, and resumed after
//! an ExclusiveStartKey. The server describes the keys a Query names
//! ([`QueryKeys`]); only this module turns them into storage keys.

use super::KeyRange;
use crate::index::{encode_escaped, encode_escaped_prefix, Index};
use crate::keys::{encode_sort_value, partition_prefix};
use crate::keyspace::prefix_end;
use crate::table::Table;
use ferrodyn_expr::KeyOp;
use ferrodyn_types::{AttributeValue, DynamoError, Item, Result};
use std::cmp::Ordering;
use std::ops::Bound;

/// The keys a validated key condition names.
pub struct QueryKeys<'a> {
    /// The partition-key values, one per partition-key attribute.
    pub hash: Vec<&'a AttributeValue>,
    /// Equalities on the leading sort-key attributes (multi-attribute GSI
    /// keys only).
    pub sort_equalities: Vec<&'a AttributeValue>,
    /// At most one condition of any kind on the next sort-key attribute.
    pub sort_condition: Option<&'a KeyOp>,
}

/// The range a Query reads, in either direction: the partition, narrowed by
/// the sort-key condition, then past `start_key` (in the direction read),
/// which must lie inside it.
pub fn query_range(
    table: &Table,
    index: Option<&Index>,
    keys: &QueryKeys<'_>,
    start_key: Option<&Item>,
    forward: bool,
) -> Result<KeyRange> {
    let mut prefix = match index {
        Some(index) => crate::index::partition_prefix(table.id, index.id, &keys.hash),
        None => partition_prefix(table.id, keys.hash[0]),
    };
    for value in &keys.sort_equalities {
        encode_escaped(value, &mut prefix);
    }
    let mut range = match keys.sort_condition {
        Some(op) => sort_range(&prefix, op, index.is_some())?,
        None => KeyRange {
            start: Bound::Included(prefix.clone()),
            end: end_of(&prefix),
        },
    };
    if let Some(start_key) = start_key {
        let encoded = start_entry(table, index, start_key)?;
        let hash_names: Vec<&str> = match index {
            Some(index) => index.schema.hash.iter().map(|a| a.name.as_str()).collect(),
            None => vec![table.schema.hash.name.as_str()],
        };
        let in_partition = hash_names
            .iter()
            .zip(&keys.hash)
            .all(|(name, value)| start_key.get(*name) == Some(*value));
        if !in_partition || !range.contains(&encoded) {
            return Err(DynamoError::validation(
                "The provided starting key is outside query boundaries based on provided conditions",
            ));
        }
        if forward {
            range.start = Bound::Excluded(encoded);
        } else {
            range.end = Bound::Excluded(encoded);
        }
    }
    Ok(range)
}

/// The storage key of a Query's ExclusiveStartKey, checked against the key
/// schema it must follow.
fn start_entry(table: &Table, index: Option<&Index>, start_key: &Item) -> Result<Vec<u8>> {
    if let Some(index) = index {
        return index.start_key(table.id, &table.schema, start_key);
    }
    // Query words a start key naming other attributes than the key's
    // briefly, and one with wrong types by the schema mismatch itself; Scan
    // prefixes the reason (dynalite's recordings of AWS; ScyllaDB's
    // test_query_exclusivestartkey_*).
    let names_match = start_key.len() == table.schema.attributes().count()
        && table
            .schema
            .attributes()
            .all(|a| start_key.contains_key(&a.name));
    if !names_match {
        return Err(DynamoError::validation(
            "The provided starting key is invalid",
        ));
    }
    table.schema.validate_key(start_key)?;
    if table.schema.range.is_none() {
        // A partition of a hash-only table holds one item, so an exclusive
        // start inside it can only be empty.
        return Err(DynamoError::validation(format!(
            "The provided exclusive start key is invalid: ExclusiveStartKey: {}",
            key_text(start_key)
        )));
    }
    Ok(table.schema.encode(table.id, start_key))
}

fn end_of(prefix: &[u8]) -> Bound<Vec<u8>> {
    match prefix_end(prefix) {
        Some(end) => Bound::Excluded(end),
        None => Bound::Unbounded,
    }
}

fn with_sort(prefix: &[u8], value: &AttributeValue, escaped: bool) -> Vec<u8> {
    let mut key = prefix.to_vec();
    if escaped {
        encode_escaped(value, &mut key);
    } else {
        encode_sort_value(value, &mut key);
    }
    key
}

/// The storage range of a sort-key condition within a partition. In an
/// index (`escaped`), each sort key is followed by the base key, so "equal
/// to v" means every key that starts with v's encoding.
fn sort_range(prefix: &[u8], op: &KeyOp, escaped: bool) -> Result<KeyRange> {
    let key = |v: &AttributeValue| with_sort(prefix, v, escaped);
    // Bounds just past every key equal to v.
    let through = |v: &AttributeValue| {
        if escaped {
            end_of(&key(v))
        } else {
            Bound::Included(key(v))
        }
    };
    let after = |v: &AttributeValue| match end_of(&key(v)) {
        Bound::Excluded(k) if escaped => Bound::Included(k),
        Bound::Unbounded if escaped => Bound::Excluded(key(v)),
        _ => Bound::Excluded(key(v)),
    };
    let whole_start = Bound::Included(prefix.to_vec());
    Ok(match op {
        KeyOp::Eq(v) => KeyRange {
            start: Bound::Included(key(v)),
            end: through(v),
        },
        KeyOp::Lt(v) => KeyRange {
            start: whole_start,
            end: Bound::Excluded(key(v)),
        },
        KeyOp::Le(v) => KeyRange {
            start: whole_start,
            end: through(v),
        },
        KeyOp::Gt(v) => KeyRange {
            start: after(v),
            end: end_of(prefix),
        },
        KeyOp::Ge(v) => KeyRange {
            start: Bound::Included(key(v)),
            end: end_of(prefix),
        },
        KeyOp::Between(low, high) => {
            if low.compare(high) == Some(Ordering::Greater) {
                return Err(DynamoError::validation(format!(
                    "Invalid KeyConditionExpression: The BETWEEN operator requires upper bound to be greater than or equal to lower bound; lower bound operand: AttributeValue: {{{}}}, upper bound operand: AttributeValue: {{{}}}",
                    describe(low),
                    describe(high)
                )));
            }
            KeyRange {
                start: Bound::Included(key(low)),
                end: through(high),
            }
        }
        KeyOp::BeginsWith(v) => {
            let mut start = prefix.to_vec();
            if escaped {
                encode_escaped_prefix(v, &mut start);
            } else {
                encode_sort_value(v, &mut start);
            }
            let end = end_of(&start);
            KeyRange {
                start: Bound::Included(start),
                end,
            }
        }
    })
}

/// A value as DynamoDB prints it in the BETWEEN message: `S:abc`.
fn describe(value: &AttributeValue) -> String {
    let json = serde_json::to_value(value).expect("plain data always serialises");
    match json.as_object().and_then(|o| o.iter().next()) {
        Some((kind, inner)) => format!(
            "{kind}:{}",
            inner
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| inner.to_string())
        ),
        None => String::new(),
    }
}

/// A key as DynamoDB prints it inside messages:
/// `{p=AttributeValue: {S:abc}, c=AttributeValue: {N:1}}`.
fn key_text(key: &Item) -> String {
    let attributes: Vec<String> = key
        .iter()
        .map(|(name, value)| {
            let shown = match value {
                AttributeValue::S(s) => format!("S:{s}"),
                AttributeValue::N(n) => format!("N:{n}"),
                // Keys are S, N or B: anything else is shown as its JSON.
                other => {
                    let json = serde_json::to_value(other).unwrap_or_default();
                    match json.get("B").and_then(|b| b.as_str()) {
                        Some(b) => format!("B:{b}"),
                        None => json.to_string(),
                    }
                }
            };
            format!("{name}=AttributeValue: {{{shown}}}")
        })
        .collect();
    format!("{{{}}}", attributes.join(", "))
}
