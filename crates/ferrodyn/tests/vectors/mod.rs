//! Vector indexes and SearchVectors through the AWS SDK for Rust (1.136
//! has the operation and the shapes): creating, describing, updating and
//! deleting vector indexes, every SearchVectors parameter and error, the
//! write checks on vector attributes, capacity, and exactness against a
//! brute-force reference computed here (`reference.rs`) for the three
//! distance functions, with HASH partitions, INLINE_FILTER conditions,
//! updates, deletes, every write path and a restart. Recall on 100,000
//! vectors is a release-mode test (`recall.rs`, ignored in the suite).

mod api;
mod exactness;
mod postgres;
mod recall;
mod reference;
mod write_paths;

use crate::util::{self, attr_def, key, l, n};
use aws_sdk_dynamodb::types::{
    AttributeValue, BillingMode, KeyType, Projection, ProjectionType, ScalarAttributeType,
    SearchSchemaElement, SearchSchemaElementType, VectorAttributeDefinition,
    VectorDistanceFunction, VectorIndex,
};
use aws_sdk_dynamodb::Client;

/// A vector index on `emb` named `vix`, optionally with a HASH `cat` and
/// an INLINE_FILTER `color`.
pub fn vector_index(
    dimensions: i64,
    function: VectorDistanceFunction,
    schema: bool,
    projection: ProjectionType,
) -> VectorIndex {
    let mut index = VectorIndex::builder()
        .index_name("vix")
        .vector_attribute(
            VectorAttributeDefinition::builder()
                .attribute_name("emb")
                .build()
                .unwrap(),
        )
        .dimensions(dimensions)
        .distance_function(function)
        .projection(Projection::builder().projection_type(projection).build());
    if schema {
        index = index
            .search_schema(element("cat", SearchSchemaElementType::Hash))
            .search_schema(element("color", SearchSchemaElementType::InlineFilter));
    }
    index.build().unwrap()
}

pub fn element(name: &str, ty: SearchSchemaElementType) -> SearchSchemaElement {
    SearchSchemaElement::builder()
        .attribute_name(name)
        .search_schema_element_type(ty)
        .build()
        .unwrap()
}

/// An on-demand table keyed `pk` (S) with `index`; `cat` and `color` (S)
/// defined when the index has a search schema.
pub async fn vector_table(client: &Client, index: VectorIndex) -> String {
    let table = util::unique_name("vec");
    let mut request = client
        .create_table()
        .table_name(&table)
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(key("pk", KeyType::Hash))
        .attribute_definitions(attr_def("pk", ScalarAttributeType::S));
    if index.search_schema().iter().len() > 0 {
        request = request
            .attribute_definitions(attr_def("cat", ScalarAttributeType::S))
            .attribute_definitions(attr_def("color", ScalarAttributeType::S));
    }
    request
        .vector_indexes(index)
        .send()
        .await
        .expect("CreateTable with a vector index");
    table
}

/// A vector as DynamoDB's list of numbers (the shortest text that reads
/// back as the same f32).
pub fn vector(values: &[f32]) -> AttributeValue {
    l(values.iter().map(|x| n(&x.to_string())).collect())
}

/// The search vector list of the request.
pub fn search_list(values: &[f32]) -> Vec<AttributeValue> {
    values.iter().map(|x| n(&x.to_string())).collect()
}
