//! Which items a vector index holds, the checks DynamoDB makes on every write
//! to a table with vector indexes, and the entry stored for an item.
//!
//! An item is indexed when it has the vector attribute and, if the search
//! schema has a HASH element, that attribute too (AWS's "Data
//! synchronization" guide: otherwise the write succeeds and the item is not
//! indexed). A vector attribute that is present must be a list of numbers of
//! the index's dimensions, each within f32's range, and search-schema
//! attributes must have their defined types, or the write is refused
//! (PutItem's API reference).
//!
//! Stored entry: the vector as little-endian f32s, then the search-schema
//! values as a DynamoDB-JSON map.

use super::{SchemaAttribute, VectorIndex};
use crate::index::IndexProjection;
use crate::keys::KeySchema;
use crate::shared::TableStats;
use ferrodyn_storage::WriteOp;
use ferrodyn_types::{item_size, AttributeValue, DynamoError, Item, Result};
use std::sync::Arc;

/// What a vector index keeps of one item.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub vector: Vec<f32>,
    /// The HASH element's value (None when the schema has none).
    pub hash: Option<AttributeValue>,
    /// Each INLINE_FILTER element's value, in schema order (None: absent).
    pub filters: Vec<Option<AttributeValue>>,
}

impl VectorIndex {
    /// Refuses an item whose vector attribute or search-schema attributes are
    /// present but malformed.
    pub fn validate_item(&self, item: &Item) -> Result<()> {
        if let Some(value) = item.get(&self.attribute) {
            self.parse_vector(value)?;
        }
        for attribute in self.hash.iter().chain(&self.filters) {
            self.check_schema_value(attribute, item)?;
        }
        Ok(())
    }

    fn check_schema_value(&self, attribute: &SchemaAttribute, item: &Item) -> Result<()> {
        let Some(value) = item.get(&attribute.name) else {
            return Ok(());
        };
        if value.scalar_type() != Some(attribute.ty) {
            return Err(self.invalid(format!(
                "Attribute '{}' type mismatch. Expected: {}, Actual: {}.",
                attribute.name,
                attribute.ty.as_str(),
                value.type_name()
            )));
        }
        Ok(())
    }

    /// The vector an attribute value holds, or why it is not one.
    pub fn parse_vector(&self, value: &AttributeValue) -> Result<Vec<f32>> {
        let attribute = &self.attribute;
        let AttributeValue::L(list) = value else {
            return Err(self.invalid(format!(
                "Invalid type for parameter {attribute}, Expected: 32-bit floating point number list"
            )));
        };
        if list.len() != self.dimensions {
            return Err(self.invalid(format!(
                "Invalid size for parameter {attribute}, Expected: {}, Actual: {}",
                self.dimensions,
                list.len()
            )));
        }
        list.iter()
            .enumerate()
            .map(|(i, element)| self.parse_element(i, element))
            .collect()
    }

    fn parse_element(&self, position: usize, element: &AttributeValue) -> Result<f32> {
        let attribute = &self.attribute;
        let AttributeValue::N(number) = element else {
            return Err(self.invalid(format!(
                "Invalid type for parameter {attribute}[{position}], Expected: 32-bit floating point number, Actual: {}.",
                element.type_name()
            )));
        };
        let value: f32 = number.to_string().parse().unwrap_or(f32::INFINITY);
        if !value.is_finite() {
            return Err(self.invalid(format!(
                "Invalid value for parameter {attribute}[{position}], Value: {number} is outside valid range [-3.4028235E38, 3.4028235E38]."
            )));
        }
        Ok(value)
    }

    /// DynamoDB's wording of a refused vector write (as Dynoxide 1.5.0
    /// gives it: "invalid." then the detail, then the index).
    fn invalid(&self, detail: String) -> DynamoError {
        DynamoError::validation(format!(
            "One or more parameter values were invalid. {detail} IndexName: {}",
            self.name
        ))
    }

    /// The entry of a (validated) item, or None when the index does not
    /// hold it.
    pub fn entry_of(&self, item: &Item) -> Option<Entry> {
        let vector = self.parse_vector(item.get(&self.attribute)?).ok()?;
        let hash = match &self.hash {
            Some(attribute) => Some(item.get(&attribute.name)?.clone()),
            None => None,
        };
        let filters = (self.filters.iter())
            .map(|a| {
                item.get(&a.name)
                    .filter(|v| v.scalar_type() == Some(a.ty))
                    .cloned()
            })
            .collect();
        Some(Entry {
            vector,
            hash,
            filters,
        })
    }

    /// The attributes of `item` the index projects: the table's keys, the
    /// vector, the search schema and the projection's attributes.
    pub fn project(&self, base: &KeySchema, item: &Item) -> Item {
        if self.projection == IndexProjection::All {
            return item.clone();
        }
        (item.iter())
            .filter(|(name, _)| self.projects(base, name))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    /// Vector write request bytes of an entry: its f32 vector plus the
    /// other projected attributes (AWS: VWR "scales with the size of the
    /// data replicated to the index").
    pub fn write_bytes(&self, base: &KeySchema, item: &Item) -> usize {
        let mut projected = self.project(base, item);
        projected.remove(&self.attribute);
        self.dimensions * 4 + item_size(&projected)
    }
}

impl Entry {
    pub fn encode(&self, index: &VectorIndex) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.vector.len() * 4 + 32);
        for x in &self.vector {
            out.extend_from_slice(&x.to_le_bytes());
        }
        let mut schema = Item::new();
        if let (Some(attribute), Some(value)) = (&index.hash, &self.hash) {
            schema.insert(attribute.name.clone(), value.clone());
        }
        for (attribute, value) in index.filters.iter().zip(&self.filters) {
            if let Some(value) = value {
                schema.insert(attribute.name.clone(), value.clone());
            }
        }
        serde_json::to_writer(&mut out, &schema).expect("plain data always serialises");
        out
    }

    pub fn decode(index: &VectorIndex, bytes: &[u8]) -> Result<Entry> {
        let corrupt = || DynamoError::internal("corrupt vector index entry");
        let split = index.dimensions * 4;
        let (vector, schema) = (bytes.get(..split), bytes.get(split..));
        let (Some(vector), Some(schema)) = (vector, schema) else {
            return Err(corrupt());
        };
        let vector = vector
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let mut schema: Item = serde_json::from_slice(schema).map_err(|_| corrupt())?;
        let hash = index.hash.as_ref().and_then(|a| schema.remove(&a.name));
        let filters = index
            .filters
            .iter()
            .map(|a| schema.remove(&a.name))
            .collect();
        Ok(Entry {
            vector,
            hash,
            filters,
        })
    }
}

/// The change one write makes to one vector index: its storage operation
/// (committed in the item's batch), its statistics, and the in-memory
/// update applied once the batch is committed.
pub struct VectorChange {
    pub index: Arc<VectorIndex>,
    /// The written item's storage key.
    pub item_key: Vec<u8>,
    pub op: Option<WriteOp>,
    pub delta: TableStats,
    /// VectorWriteRequestBytes, reported with ReturnConsumedCapacity.
    pub write_bytes: f64,
    /// The item's entry after the write (None: not indexed).
    pub new: Option<Entry>,
}

impl VectorChange {
    /// Updates the search structure after the batch committed (under the
    /// item's lock, so the structure follows the items' commit order).
    pub fn apply(&self) {
        self.index.store.set(&self.item_key, self.new.as_ref());
    }
}
