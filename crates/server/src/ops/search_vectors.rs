//! SearchVectors: the field constraints (the service model's: TableName,
//! IndexName, SearchVector of 1..4,096 numbers, TopK ≥ 1), TopK's 1..100
//! range, the search vector read as 32-bit floats, the
//! SearchConditionExpression reduced to its equalities (`=` on top-level
//! attributes, joined by AND, one per attribute), then the engine's search;
//! results most similar first, each Item projected (and narrowed by the
//! ProjectionExpression) with its Score. Wording as AWS's troubleshooting
//! guide quotes it, and as Dynoxide 1.5.0 gives it where the guide is
//! silent (CONFORMANCE.md).

use crate::ops::choice::{chosen, Choice};
use crate::ops::common::{self, Names, ResponseBody, Values};
use crate::validate::Violations;
use ferrodyn_engine::capacity::CapacityDetail;
use ferrodyn_engine::vector_ops::SearchRequest;
use ferrodyn_engine::vectors::{MAX_DIMENSIONS, MAX_TOP_K};
use ferrodyn_engine::Engine;
use ferrodyn_expr::{parse_projection, parse_search_condition, Comparator, Condition, Operand};
use ferrodyn_types::{AttributeValue, DynamoError, Result};
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Request {
    table_name: Option<String>,
    index_name: Option<String>,
    search_vector: Option<Vec<AttributeValue>>,
    #[serde(rename = "TopK")]
    top_k: Option<i64>,
    search_condition_expression: Option<String>,
    projection_expression: Option<String>,
    expression_attribute_names: Names,
    expression_attribute_values: Values,
    return_consumed_capacity: Option<Choice<CapacityDetail>>,
}

pub fn run(engine: &Engine, request: Request) -> Result<Vec<u8>> {
    let (table, index, vector, top_k) = check_fields(&request)?;
    let has_expression =
        request.search_condition_expression.is_some() || request.projection_expression.is_some();
    let mut ctx = common::expression_context(
        &request.expression_attribute_names,
        &request.expression_attribute_values,
        has_expression,
        "SearchConditionExpression is null",
    )?;
    let conditions = match &request.search_condition_expression {
        Some(text) => equalities(&parse_search_condition(text, &mut ctx)?)?,
        None => Vec::new(),
    };
    let projection = (request.projection_expression.as_deref())
        .map(|text| parse_projection(text, &mut ctx))
        .transpose()?;
    ctx.check_all_used()?;
    // Only the attributes the projection names are decoded from the items.
    let attributes =
        (projection.as_ref()).map(|p| p.paths.iter().map(|path| path.root().to_string()).collect());
    let found = engine.search_vectors(SearchRequest {
        table: &table,
        index: &index,
        vector,
        top_k,
        conditions,
        attributes,
    })?;
    let results: Vec<serde_json::Value> = (found.results.into_iter())
        .map(|r| {
            let item = match &projection {
                Some(p) => p.apply(&r.item),
                None => r.item,
            };
            json!({ "Item": item, "Score": r.score })
        })
        .collect();
    let mut body = ResponseBody::default();
    if chosen(&request.return_consumed_capacity) != CapacityDetail::None {
        let capacity = json!({ "VectorSearchRequestBytes": found.search_bytes });
        body.value("ConsumedCapacity", capacity);
    }
    body.value("SearchResults", serde_json::Value::Array(results));
    body.finish()
}

/// The field constraints, then TopK's range and the vector's values:
/// (table, index, vector, TopK).
fn check_fields(request: &Request) -> Result<(String, String, Vec<f32>, usize)> {
    let mut v = Violations::default();
    v.table_name_or_arn("tableName", &request.table_name);
    if v.not_null("indexName", &request.index_name) {
        let name = request.index_name.as_deref().unwrap_or_default();
        v.length("indexName", Some(name), 3, 255);
    }
    v.not_null("searchVector", &request.search_vector);
    v.count(
        "searchVector",
        request.search_vector.as_deref(),
        1,
        MAX_DIMENSIONS as usize,
    );
    v.not_null("topK", &request.top_k);
    v.range("topK", request.top_k, 1, None);
    v.choice("returnConsumedCapacity", &request.return_consumed_capacity);
    v.finish()?;
    let top_k = request.top_k.unwrap_or_default();
    if top_k > MAX_TOP_K {
        return Err(DynamoError::validation(format!(
            "Provided TopK value '{top_k}' is out of valid range. The value must be between 1 and {MAX_TOP_K} inclusive"
        )));
    }
    let vector = search_vector(request.search_vector.as_deref().unwrap_or_default())?;
    let table = request.table_name.clone().unwrap_or_default();
    let index = request.index_name.clone().unwrap_or_default();
    Ok((table, index, vector, top_k as usize))
}

/// The search vector as f32s: every element a number within f32's range.
fn search_vector(values: &[AttributeValue]) -> Result<Vec<f32>> {
    let invalid = || {
        DynamoError::validation(
            "Search vector contains invalid values. All values in the search vector must be a 32-bit floating-point number attribute",
        )
    };
    (values.iter())
        .map(|value| match value {
            AttributeValue::N(n) => {
                let x: f32 = n.to_string().parse().map_err(|_| invalid())?;
                x.is_finite().then_some(x).ok_or_else(invalid)
            }
            _ => Err(invalid()),
        })
        .collect()
}

/// The `attribute = :value` equalities of a SearchConditionExpression.
fn equalities(condition: &Condition) -> Result<Vec<(String, AttributeValue)>> {
    let mut out = Vec::new();
    collect(condition, &mut out)?;
    Ok(out)
}

fn collect(condition: &Condition, out: &mut Vec<(String, AttributeValue)>) -> Result<()> {
    let invalid =
        |m: &str| DynamoError::validation(format!("Invalid SearchConditionExpression: {m}"));
    match condition {
        Condition::And(a, b) => {
            collect(a, out)?;
            collect(b, out)
        }
        Condition::Compare(Comparator::Eq, left, right) => {
            let (path, value) = match (left, right) {
                (Operand::Path(p), Operand::Value(v)) | (Operand::Value(v), Operand::Path(p)) => {
                    (p, v)
                }
                _ => {
                    return Err(invalid(
                        "Invalid comparator used in SearchConditionExpression",
                    ))
                }
            };
            let [ferrodyn_expr::PathElem::Attr(name)] = path.0.as_slice() else {
                return Err(invalid(
                    "SearchConditionExpression cannot have conditions on nested attributes",
                ));
            };
            if out.iter().any(|(n, _)| n == name) {
                return Err(invalid(
                    "SearchConditionExpression must only contain one condition per attribute",
                ));
            }
            out.push((name.clone(), value.clone()));
            Ok(())
        }
        _ => Err(invalid(
            "Invalid comparator used in SearchConditionExpression",
        )),
    }
}
