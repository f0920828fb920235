//! Vector indexes: what one is (its attribute, dimensions, distance
//! function, search schema and projection), which items it holds and the
//! entry it keeps for each, and the in-memory search structure that answers
//! SearchVectors.
//!
//! This module is a leaf: it knows nothing of tables or the write path.
//! `vector_ops/` holds the engine's operations on vector indexes (creating,
//! deleting and backfilling them, loading them at start-up, searching), and
//! `items.rs` asks [`VectorIndex::entry_of`] for the entry of every item it
//! writes, in the same plan as the GSI entries, so an index entry is
//! committed in the item's storage batch and the in-memory structure is
//! updated before the item's lock is released.
//!
//! Storage: an entry lives under the index's id in the secondary-index key
//! family (`keyspace::vector_entry_key`), holding the f32 vector and the
//! search-schema values, so backups, restores, snapshots, purges and the
//! orphan sweep carry vector entries exactly as they carry GSI entries. The
//! search structure ([`store`]) is rebuilt from those entries at start-up.

pub mod distance;
pub mod entry;
pub mod store;

use crate::index::{IndexFigures, IndexProjection, IndexState};
use crate::schema::{
    AttributeDefinition, DistanceFunction, SearchSchemaElementType, VectorIndexDescription,
};
use crate::shared::TableStats;
use ferrodyn_types::ScalarType;
use std::sync::atomic::AtomicU64;

pub use entry::{Entry, VectorChange};

/// The most dimensions a vector index may have (the service model's
/// SearchVector list holds at most 4,096 numbers).
pub const MAX_DIMENSIONS: u64 = 4096;

/// The TopK range SearchVectors accepts (AWS's troubleshooting guide:
/// "TopK was outside 1 to 100").
pub const MAX_TOP_K: i64 = 100;

/// One attribute of the search schema, with the type the table's
/// AttributeDefinitions give it.
#[derive(Clone, Debug, PartialEq)]
pub struct SchemaAttribute {
    pub name: String,
    pub ty: ScalarType,
}

pub struct VectorIndex {
    pub name: String,
    pub id: u32,
    pub attribute: String,
    pub dimensions: usize,
    pub distance: DistanceFunction,
    /// The HASH element: searches name one value of it, and only items
    /// that have it are indexed.
    pub hash: Option<SchemaAttribute>,
    /// INLINE_FILTER elements, in SearchSchema order.
    pub filters: Vec<SchemaAttribute>,
    pub projection: IndexProjection,
    /// IndexStatus (backfilling or not), ItemCount and IndexSizeBytes.
    pub figures: IndexFigures,
    pub store: store::Store,
    /// Shared storage: the change-log sequence number up to which this
    /// node's structure has taken the writes of every node, and when (ms
    /// since the epoch) it last read the log (vector_ops/follow.rs).
    pub followed_to: AtomicU64,
    pub followed_at: AtomicU64,
}

impl VectorIndex {
    pub fn new(
        id: u32,
        description: &VectorIndexDescription,
        definitions: &[AttributeDefinition],
        state: IndexState,
        stats: TableStats,
    ) -> VectorIndex {
        let typed = |name: &str| SchemaAttribute {
            name: name.to_string(),
            ty: definitions
                .iter()
                .find(|d| d.attribute_name == name)
                .map_or(ScalarType::S, |d| d.attribute_type),
        };
        let schema = description.search_schema.iter().flatten();
        let hash = schema
            .clone()
            .find(|e| e.search_schema_element_type == SearchSchemaElementType::Hash)
            .map(|e| typed(&e.attribute_name));
        let filters = schema
            .filter(|e| e.search_schema_element_type == SearchSchemaElementType::InlineFilter)
            .map(|e| typed(&e.attribute_name))
            .collect();
        let projection = match description.projection.projection_type.as_deref() {
            Some("KEYS_ONLY") => IndexProjection::KeysOnly,
            Some("INCLUDE") => IndexProjection::Include(
                (description.projection.non_key_attributes.clone()).unwrap_or_default(),
            ),
            _ => IndexProjection::All,
        };
        let dimensions = description.dimensions as usize;
        let hashed = hash.is_some();
        VectorIndex {
            name: description.index_name.clone(),
            id,
            attribute: description.vector_attribute.attribute_name.clone(),
            dimensions,
            distance: description.distance_function,
            hash,
            filters,
            projection,
            figures: IndexFigures::new(state, stats),
            store: store::Store::new(
                &description.index_name,
                dimensions,
                description.distance_function,
                hashed,
            ),
            followed_to: AtomicU64::new(0),
            followed_at: AtomicU64::new(0),
        }
    }

    /// Whether `name` is in the search schema (the attributes a
    /// SearchConditionExpression may name).
    pub fn schema_attribute(&self, name: &str) -> Option<&SchemaAttribute> {
        self.hash
            .iter()
            .chain(self.filters.iter())
            .find(|a| a.name == name)
    }

    /// Whether an attribute is in the index's entries: the table's keys, the
    /// vector, the search schema and the projected attributes.
    pub fn projects(&self, base: &crate::keys::KeySchema, name: &str) -> bool {
        match &self.projection {
            IndexProjection::All => true,
            IndexProjection::KeysOnly | IndexProjection::Include(_) => {
                base.is_key_attribute(name)
                    || name == self.attribute
                    || self.schema_attribute(name).is_some()
                    || matches!(&self.projection, IndexProjection::Include(n) if n.iter().any(|x| x == name))
            }
        }
    }
}

/// Most vector indexes a table may have (Dynoxide 1.5.0's limit; AWS's
/// quota page names a per-table limit without giving it in the material
/// we could read).
pub const MAX_VECTOR_INDEXES: usize = 5;

/// The checks a table's vector indexes must pass together, whether
/// CreateTable declares them or UpdateTable adds `added` to `table`: an
/// on-demand table, at most [`MAX_VECTOR_INDEXES`], unique index names
/// across all its indexes, one dimension count per vector attribute, and
/// a vector attribute that is not a defined (key) attribute. Wording as
/// Dynoxide 1.5.0 gives it.
pub fn check_index_set(
    table: &crate::schema::TableDescription,
    added: &[VectorIndexDescription],
) -> ferrodyn_types::Result<()> {
    use ferrodyn_types::DynamoError;
    let invalid = |m: String| Err(DynamoError::invalid_parameter(m));
    if table.billing_mode() != crate::schema::BillingMode::PayPerRequest {
        return invalid("Vector indexes are only supported for PAY_PER_REQUEST tables".into());
    }
    let existing = table.vector_indexes.iter().flatten();
    let all: Vec<&VectorIndexDescription> = existing.chain(added).collect();
    if all.len() > MAX_VECTOR_INDEXES {
        return invalid(format!(
            "VectorIndex count exceeds the per-table limit of {MAX_VECTOR_INDEXES}"
        ));
    }
    let other_names = (table.global_secondary_indexes.iter().flatten())
        .chain(table.local_secondary_indexes.iter().flatten())
        .map(|i| i.index_name.as_str());
    let mut names: Vec<&str> = other_names.collect();
    for index in &all {
        if names.contains(&index.index_name.as_str()) {
            return invalid(format!("Duplicate index name: {}", index.index_name));
        }
        names.push(&index.index_name);
        let attribute = &index.vector_attribute.attribute_name;
        let defined = (table.attribute_definitions.iter()).any(|d| d.attribute_name == *attribute);
        if defined {
            return invalid(format!(
                "Conflicting attribute definition for '{attribute}'. An attribute cannot be defined in AttributeDefinitions when used as a VectorAttribute."
            ));
        }
        let other_dimensions = (all.iter()).any(|o| {
            o.vector_attribute.attribute_name == *attribute && o.dimensions != index.dimensions
        });
        if other_dimensions {
            return invalid(format!(
                "Conflicting attribute definition for '{attribute}'. All VectorIndexes on the same vector attribute must use the same dimensions."
            ));
        }
        check_search_schema(table, index)?;
    }
    Ok(())
}

/// One HASH element at most, each element a defined attribute.
fn check_search_schema(
    table: &crate::schema::TableDescription,
    index: &VectorIndexDescription,
) -> ferrodyn_types::Result<()> {
    use ferrodyn_types::DynamoError;
    let schema: Vec<_> = index.search_schema.iter().flatten().collect();
    let hashes = (schema.iter())
        .filter(|e| e.search_schema_element_type == SearchSchemaElementType::Hash)
        .count();
    if hashes > 1 {
        return Err(DynamoError::invalid_parameter(format!(
            "Value '{hashes}' at 'SearchSchema' failed to satisfy constraint: Member must have HASH count less than or equal to 1"
        )));
    }
    let undefined = schema.iter().any(|e| {
        !(table.attribute_definitions.iter()).any(|d| d.attribute_name == e.attribute_name)
    });
    if undefined {
        return Err(DynamoError::invalid_parameter(
            "One element in SearchSchema is not defined in attribute definitions",
        ));
    }
    if index.dimensions > MAX_DIMENSIONS {
        return Err(DynamoError::invalid_parameter(format!(
            "Number of dimensions must be between 1 and {MAX_DIMENSIONS} inclusive."
        )));
    }
    Ok(())
}
