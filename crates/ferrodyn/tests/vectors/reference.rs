//! The brute-force reference the searches are checked against: every
//! stored vector scored in f64 from its f32 components with the formulas
//! AWS documents (COSINE 1 − cosine similarity, EUCLIDEAN the distance,
//! DOT_PRODUCT the dot product, largest first), the partition and filter
//! applied, sorted; and the comparison of an answer with it (order and
//! scores to float precision; among tied scores any item of the tie).

use crate::vectors::search_list;
use aws_sdk_dynamodb::types::{AttributeValue, VectorDistanceFunction};
use aws_sdk_dynamodb::Client;
use std::collections::BTreeMap;

/// What the test wrote for one item.
#[derive(Clone, Debug, Default)]
pub struct Stored {
    pub cat: Option<String>,
    pub color: Option<String>,
    pub vector: Option<Vec<f32>>,
}

/// The items by key, as the test believes the table holds them.
pub type Model = BTreeMap<String, Stored>;

pub fn score(function: &VectorDistanceFunction, q: &[f32], v: &[f32]) -> f64 {
    let dot = |a: &[f32], b: &[f32]| -> f64 {
        a.iter()
            .zip(b)
            .map(|(x, y)| f64::from(*x) * f64::from(*y))
            .sum()
    };
    match function {
        VectorDistanceFunction::DotProduct => dot(q, v),
        VectorDistanceFunction::Euclidean => q
            .iter()
            .zip(v)
            .map(|(a, b)| (f64::from(*a) - f64::from(*b)).powi(2))
            .sum::<f64>()
            .sqrt(),
        _ => {
            let norms = (dot(q, q) * dot(v, v)).sqrt();
            if norms == 0.0 {
                1.0
            } else {
                1.0 - dot(q, v) / norms
            }
        }
    }
}

/// Every matching item with its score, most similar first.
pub fn ranked(
    model: &Model,
    function: &VectorDistanceFunction,
    query: &[f32],
    cat: Option<&str>,
    color: Option<&str>,
) -> Vec<(String, f64)> {
    let mut all: Vec<(String, f64)> = model
        .iter()
        .filter(|(_, s)| cat.is_none() || s.cat.as_deref() == cat)
        .filter(|(_, s)| color.is_none() || s.color.as_deref() == color)
        .filter_map(|(pk, s)| Some((pk.clone(), score(function, query, s.vector.as_ref()?))))
        .collect();
    let descending = *function == VectorDistanceFunction::DotProduct;
    all.sort_by(|a, b| {
        let order = a.1.total_cmp(&b.1);
        if descending {
            order.reverse()
        } else {
            order
        }
    });
    all
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()))
}

/// Checks `found` (pk, score in answer order) against the reference's
/// `expected` ranking cut at `k`.
#[track_caller]
pub fn assert_matches(found: &[(String, f64)], expected: &[(String, f64)], k: usize, what: &str) {
    if let Some(wrong) = mismatch(found, expected, k) {
        panic!("{what}: {wrong}");
    }
}

/// What is wrong with `found` against the reference's `expected` ranking
/// cut at `k`, or None when it matches.
pub fn mismatch(found: &[(String, f64)], expected: &[(String, f64)], k: usize) -> Option<String> {
    let want = k.min(expected.len());
    if found.len() != want {
        let expected = &expected[..want];
        return Some(format!(
            "result count {} vs {want}\nfound {found:?}\nexpected {expected:?}",
            found.len()
        ));
    }
    for (i, (pk, score)) in found.iter().enumerate() {
        if !close(*score, expected[i].1) {
            return Some(format!("score #{i} {score} vs {}", expected[i].1));
        }
        // The item must score what the reference gives it, and sit in the
        // run of equal scores at this position.
        let own = expected.iter().find(|(p, _)| p == pk).map(|(_, s)| *s);
        if !own.is_some_and(|s| close(s, *score)) {
            return Some(format!("{pk} scored {score}, reference {own:?}"));
        }
    }
    let mut seen: Vec<&String> = found.iter().map(|(pk, _)| pk).collect();
    seen.sort();
    seen.dedup();
    (seen.len() != found.len()).then(|| "an item returned twice".to_string())
}

/// One SearchVectors through the SDK: (pk, score) in answer order.
pub async fn search(
    client: &Client,
    table: &str,
    query: &[f32],
    k: i32,
    cat: Option<&str>,
    color: Option<&str>,
) -> Vec<(String, f64)> {
    let mut request = client
        .search_vectors()
        .table_name(table)
        .index_name("vix")
        .set_search_vector(Some(search_list(query)))
        .top_k(k);
    let mut condition = Vec::new();
    if let Some(cat) = cat {
        condition.push("cat = :cat");
        request = request.expression_attribute_values(":cat", AttributeValue::S(cat.into()));
    }
    if let Some(color) = color {
        condition.push("color = :color");
        request = request.expression_attribute_values(":color", AttributeValue::S(color.into()));
    }
    if !condition.is_empty() {
        request = request.search_condition_expression(condition.join(" AND "));
    }
    let out = request.send().await.expect("SearchVectors succeeds");
    out.search_results()
        .iter()
        .map(|r| {
            let item = r.item().expect("an item");
            let pk = crate::util::get_s(item, "pk").to_string();
            (pk, r.score())
        })
        .collect()
}
