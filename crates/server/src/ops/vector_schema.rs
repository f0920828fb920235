//! The VectorIndexes that CreateTable declares and UpdateTable's
//! VectorIndexUpdates create: each index's field constraints as the
//! service model gives them (IndexName 3..255 of `[a-zA-Z0-9_.-]+`,
//! Dimensions ≥ 1, DistanceFunction and SearchSchemaElementType enums,
//! required members), then the index in the engine's form. The rules
//! across a table's indexes (billing mode, count, names, dimensions per
//! attribute, search-schema definitions) are the engine's
//! `vectors::check_index_set`.

use crate::ops::table_schema::{projection, RawProjection, PROJECTION_TYPES};
use crate::validate::Violations;
use ferrodyn_engine::schema::{
    DistanceFunction, SearchSchemaElement, SearchSchemaElementType, VectorAttributeDefinition,
    VectorIndexDescription,
};
use ferrodyn_types::Result;
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RawVectorIndex {
    index_name: Option<String>,
    vector_attribute: Option<RawVectorAttribute>,
    search_schema: Option<Vec<RawSearchSchemaElement>>,
    projection: Option<RawProjection>,
    dimensions: Option<i64>,
    distance_function: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RawVectorAttribute {
    attribute_name: Option<String>,
}

#[derive(Deserialize, serde::Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct RawSearchSchemaElement {
    attribute_name: Option<String>,
    search_schema_element_type: Option<String>,
}

const DISTANCE_FUNCTIONS: &[&str] = &["COSINE", "DOT_PRODUCT", "EUCLIDEAN"];
const SEARCH_SCHEMA_TYPES: &[&str] = &["HASH", "INLINE_FILTER"];

/// One vector index's field constraints, recorded in `v` under `field`
/// (`vectorIndexes.N.member`); the index when they hold.
pub fn check_vector_index(
    v: &mut Violations,
    field: &str,
    raw: RawVectorIndex,
) -> Option<RawChecked> {
    let name = raw.index_name;
    if v.not_null(&format!("{field}.indexName"), &name) {
        let name = name.as_deref().unwrap_or_default();
        v.length(&format!("{field}.indexName"), Some(name), 3, 255);
        let valid = name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'));
        if !valid {
            v.pattern(&format!("{field}.indexName"), name, "[a-zA-Z0-9_.-]+");
        }
    }
    v.not_null(&format!("{field}.vectorAttribute"), &raw.vector_attribute);
    let attribute = raw.vector_attribute.and_then(|a| a.attribute_name);
    v.length(
        &format!("{field}.vectorAttribute.attributeName"),
        attribute.as_deref(),
        1,
        255,
    );
    v.not_null(&format!("{field}.projection"), &raw.projection);
    if let Some(p) = &raw.projection {
        v.one_of(
            &format!("{field}.projection.projectionType"),
            p.projection_type.as_deref(),
            PROJECTION_TYPES,
        );
    }
    v.not_null(&format!("{field}.dimensions"), &raw.dimensions);
    v.range(&format!("{field}.dimensions"), raw.dimensions, 1, None);
    v.not_null(&format!("{field}.distanceFunction"), &raw.distance_function);
    v.one_of(
        &format!("{field}.distanceFunction"),
        raw.distance_function.as_deref(),
        DISTANCE_FUNCTIONS,
    );
    let schema_field = format!("{field}.searchSchema");
    v.count(&schema_field, raw.search_schema.as_deref(), 1, usize::MAX);
    for (i, element) in raw.search_schema.iter().flatten().enumerate() {
        let at = format!("{schema_field}.{}.member", i + 1);
        v.not_null(&format!("{at}.attributeName"), &element.attribute_name);
        v.not_null(
            &format!("{at}.searchSchemaElementType"),
            &element.search_schema_element_type,
        );
        v.one_of(
            &format!("{at}.searchSchemaElementType"),
            element.search_schema_element_type.as_deref(),
            SEARCH_SCHEMA_TYPES,
        );
    }
    Some(RawChecked {
        name: name?,
        attribute: attribute?,
        search_schema: raw.search_schema,
        projection: raw.projection?,
        dimensions: raw.dimensions.filter(|d| *d >= 1)? as u64,
        distance: match raw.distance_function?.as_str() {
            "COSINE" => DistanceFunction::Cosine,
            "EUCLIDEAN" => DistanceFunction::Euclidean,
            "DOT_PRODUCT" => DistanceFunction::DotProduct,
            _ => return None,
        },
    })
}

/// A vector index whose fields passed their constraints.
pub struct RawChecked {
    name: String,
    attribute: String,
    search_schema: Option<Vec<RawSearchSchemaElement>>,
    projection: RawProjection,
    dimensions: u64,
    distance: DistanceFunction,
}

impl RawChecked {
    /// The index in the engine's form (its projection checked as a GSI's).
    pub fn into_description(self) -> Result<VectorIndexDescription> {
        let projection = projection(
            &self.name,
            self.projection.projection_type,
            self.projection.non_key_attributes,
        )?;
        let search_schema = self.search_schema.map(|elements| {
            (elements.into_iter())
                .map(|e| SearchSchemaElement {
                    attribute_name: e.attribute_name.unwrap_or_default(),
                    search_schema_element_type: match e.search_schema_element_type.as_deref() {
                        Some("HASH") => SearchSchemaElementType::Hash,
                        _ => SearchSchemaElementType::InlineFilter,
                    },
                })
                .collect()
        });
        Ok(VectorIndexDescription {
            index_name: self.name,
            vector_attribute: VectorAttributeDefinition {
                attribute_name: self.attribute,
            },
            search_schema,
            projection,
            dimensions: self.dimensions,
            distance_function: self.distance,
            index_status: None,
            backfilling: None,
            index_size_bytes: 0,
            item_count: 0,
            index_arn: String::new(),
        })
    }
}

/// Every index of a CreateTable's VectorIndexes (`None` after a violation).
pub fn check_vector_indexes(
    v: &mut Violations,
    list: Option<Vec<RawVectorIndex>>,
) -> Option<Vec<RawChecked>> {
    let mut out = Some(Vec::new());
    for (i, raw) in list.into_iter().flatten().enumerate() {
        let checked = check_vector_index(v, &format!("vectorIndexes.{}.member", i + 1), raw);
        match (&mut out, checked) {
            (Some(all), Some(index)) => all.push(index),
            _ => out = None,
        }
    }
    out
}

/// The search-schema attributes of `indexes` (AttributeDefinitions a
/// table may declare for them besides its keys).
pub fn schema_attributes(indexes: &[VectorIndexDescription]) -> Vec<&str> {
    (indexes.iter())
        .flat_map(|i| i.search_schema.iter().flatten())
        .map(|e| e.attribute_name.as_str())
        .collect()
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct VectorIndexUpdate {
    create: Option<RawVectorIndex>,
    delete: Option<DeleteVectorIndex>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DeleteVectorIndex {
    index_name: Option<String>,
}

/// UpdateTable's VectorIndexUpdates: one Create or Delete per call
/// (wording as Dynoxide 1.5.0 gives it, the count's as for GSIs).
pub fn update(
    engine: &std::sync::Arc<ferrodyn_engine::Engine>,
    table_name: &str,
    mut updates: Vec<VectorIndexUpdate>,
    definitions: Option<Vec<crate::ops::table_schema::RawAttributeDefinition>>,
) -> Result<ferrodyn_engine::schema::TableDescription> {
    use ferrodyn_types::{DynamoError, ErrorKind};
    if updates.len() > 1 {
        return Err(DynamoError::new(
            ErrorKind::LimitExceeded,
            "Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously per table",
        ));
    }
    let update = updates.remove(0);
    match (update.create, update.delete) {
        (Some(create), None) => {
            let mut v = Violations::default();
            let create = check_vector_index(&mut v, "vectorIndexUpdates.1.member.create", create);
            let definitions = match &definitions {
                Some(d) => crate::ops::table_schema::check_definitions(&mut v, d),
                None => Some(Vec::new()),
            };
            let (create, definitions) = v.finish_with(create.zip(definitions))?;
            let definitions = crate::ops::table_schema::attribute_definitions(definitions)?;
            engine.create_vector_index(table_name, create.into_description()?, definitions)
        }
        (None, Some(delete)) => {
            let mut v = Violations::default();
            v.not_null(
                "vectorIndexUpdates.1.member.delete.indexName",
                &delete.index_name,
            );
            let name = v.finish_with(delete.index_name)?;
            engine.delete_vector_index(table_name, &name)
        }
        (None, None) => Err(DynamoError::invalid_parameter(
            "One of VectorIndexUpdate.Create, VectorIndexUpdate.Delete must not be null",
        )),
        (Some(_), Some(_)) => Err(DynamoError::invalid_parameter(
            "Only one vector index action is allowed per VectorIndexUpdate object",
        )),
    }
}
