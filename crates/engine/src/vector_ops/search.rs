//! SearchVectors in the engine: the table and its vector index (which must
//! be ACTIVE and not backfilling), the search condition checked against the
//! index's search schema, the search of the partition its HASH value names,
//! and the items read back and projected as the index projects them.
//!
//! Results are read from the base table under no lock: a result reflects
//! the item as committed when it was read, never a mix (the search structure
//! is updated before an item's lock is released, so an item found is there).

use crate::index::IndexState;
use crate::vectors::store::Hit;
use crate::vectors::VectorIndex;
use crate::Engine;
use ferrodyn_types::{item_size, AttributeValue, DynamoError, Item, Result};

/// A checked SearchVectors request (field constraints done by the caller).
pub struct SearchRequest<'a> {
    pub table: &'a str,
    pub index: &'a str,
    pub vector: Vec<f32>,
    pub top_k: usize,
    /// The SearchConditionExpression's equalities: attribute name, value.
    pub conditions: Vec<(String, AttributeValue)>,
    /// The top-level attributes the answer needs (a ProjectionExpression's);
    /// None: every projected attribute. The others are not decoded.
    pub attributes: Option<Vec<String>>,
}

pub struct SearchResult {
    /// The item as the index projects it.
    pub item: Item,
    pub score: f64,
}

pub struct SearchOutput {
    pub table_name: String,
    pub results: Vec<SearchResult>,
    /// VectorSearchRequestBytes.
    pub search_bytes: f64,
}

/// One vector index's search structure (`GET /ferrodyn/vectors`).
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct VectorIndexReport {
    pub index: String,
    #[serde(flatten)]
    pub store: crate::vectors::store::StoreReport,
}

impl Engine {
    /// Table `name`'s vector indexes as their search structures stand.
    pub fn vector_report(&self, name: &str) -> Result<Vec<VectorIndexReport>> {
        let table = self.table_for_items(name)?;
        Ok((table.vector_indexes().iter())
            .map(|i| VectorIndexReport {
                index: i.name.clone(),
                store: i.store.report(),
            })
            .collect())
    }

    /// Runs a vector search.
    pub fn search_vectors(&self, request: SearchRequest<'_>) -> Result<SearchOutput> {
        let table = self.table_for_items(request.table)?;
        let index = table.vector_index(request.index).ok_or_else(|| {
            DynamoError::validation(format!(
                "The table does not have the specified index: {}",
                request.index
            ))
        })?;
        if index.figures.state() == IndexState::Backfilling {
            return Err(DynamoError::validation(format!(
                "Cannot search backfilling vector index: {}",
                index.name
            )));
        }
        check_dimensions(&index, &request.vector)?;
        let (hash, filter) = resolve_conditions(&index, &request)?;
        let hits = index.store.search(
            &request.vector,
            request.top_k,
            &hash,
            &filter,
            self.exact_vector_search,
        );
        let results = self.read_hits(&table, &index, hits, request.attributes.as_deref())?;
        let returned: usize = results.iter().map(|r| item_size(&r.item)).sum();
        let examined = index.store.len().max(1).ilog2() as usize + 1;
        let search_bytes = (index.dimensions * 4 * examined.max(request.top_k) + returned) as f64;
        Ok(SearchOutput {
            table_name: table.name.clone(),
            results,
            search_bytes,
        })
    }

    /// The items of `hits`, projected; an item deleted since it was found
    /// is left out.
    fn read_hits(
        &self,
        table: &crate::table::Table,
        index: &VectorIndex,
        hits: Vec<Hit>,
        wanted: Option<&[String]>,
    ) -> Result<Vec<SearchResult>> {
        let keep = |name: &str| {
            index.projects(&table.schema, name)
                && wanted.is_none_or(|w| w.iter().any(|n| n == name))
        };
        let mut results = Vec::with_capacity(hits.len());
        for hit in hits {
            let Some(stored) = self.get_stored(&hit.item)? else {
                continue;
            };
            results.push(SearchResult {
                item: stored.parse_only(&keep)?,
                score: hit.score,
            });
        }
        Ok(results)
    }
}

fn check_dimensions(index: &VectorIndex, vector: &[f32]) -> Result<()> {
    if vector.len() != index.dimensions {
        return Err(DynamoError::validation(format!(
            "Input search vector dimension {} does not match vector index dimension {}",
            vector.len(),
            index.dimensions
        )));
    }
    Ok(())
}

/// An INLINE_FILTER equality: the element's position in the search schema's
/// filters, and the value.
type FilterValue = (usize, AttributeValue);

/// The HASH value and INLINE_FILTER equalities of a search, checked
/// against the index's search schema.
fn resolve_conditions(
    index: &VectorIndex,
    request: &SearchRequest<'_>,
) -> Result<(Option<AttributeValue>, Vec<FilterValue>)> {
    let mut hash = None;
    let mut filter = Vec::new();
    for (name, value) in &request.conditions {
        let Some(attribute) = index.schema_attribute(name) else {
            return Err(DynamoError::validation(format!(
                "SearchConditionExpression must not contain any attributes that is not in SearchSchema. Invalid attribute: {name}"
            )));
        };
        if value.scalar_type() != Some(attribute.ty) {
            return Err(DynamoError::validation(format!(
                "Type of '{name}' attribute in SearchConditionExpression ({}) does not match type in search schema ({})",
                value.type_name(),
                attribute.ty.as_str()
            )));
        }
        match index.filters.iter().position(|f| f.name == *name) {
            Some(position) => filter.push((position, value.clone())),
            None => hash = Some(value.clone()),
        }
    }
    if index.hash.is_some() && hash.is_none() {
        return Err(DynamoError::validation(
            "SearchConditionExpression must be provided when SearchSchema has a HASH key",
        ));
    }
    Ok((hash, filter))
}
