//! Searches against the brute-force reference: each distance function, with
//! HASH partitions and INLINE_FILTER conditions, ties, after updates and
//! deletes, without a search schema, after a restart, and on a partition
//! large enough for an HNSW graph (filtered searches still return TopK).

use super::reference::{assert_matches, ranked, search, Model, Stored};
use super::{vector, vector_index, vector_table};
use crate::util::{self, item, s};
use aws_sdk_dynamodb::types::{
    AttributeValue, ProjectionType, PutRequest, VectorDistanceFunction, WriteRequest,
};
use aws_sdk_dynamodb::Client;

const DIMS: usize = 8;
const FUNCTIONS: [VectorDistanceFunction; 3] = [
    VectorDistanceFunction::Cosine,
    VectorDistanceFunction::Euclidean,
    VectorDistanceFunction::DotProduct,
];

pub fn random_vector(rng: &mut util::Rng) -> Vec<f32> {
    (0..DIMS).map(|_| rng.f32() * 2.0 - 1.0).collect()
}

/// Item `i`: mostly in partitions a/b/c, a third red, a third blue; one in
/// ten without a vector; every 17th a copy of an earlier vector (ties).
fn random_stored(rng: &mut util::Rng, i: usize, model: &Model) -> Stored {
    let cats = ["a", "b", "c"];
    let colors = [Some("red"), Some("blue"), None];
    let copied = (i % 17 == 16)
        .then(|| model.values().find_map(|s| s.vector.clone()))
        .flatten();
    Stored {
        cat: (rng.u8(..10) != 0).then(|| cats[rng.usize(..3)].to_string()),
        color: colors[rng.usize(..3)].map(str::to_string),
        vector: (rng.u8(..10) != 0).then(|| copied.unwrap_or_else(|| random_vector(rng))),
    }
}

fn as_item(pk: &str, stored: &Stored) -> std::collections::HashMap<String, AttributeValue> {
    let mut out = item(&[("pk", s(pk)), ("note2", s("x"))]);
    if let Some(cat) = &stored.cat {
        out.insert("cat".into(), s(cat));
    }
    if let Some(color) = &stored.color {
        out.insert("color".into(), s(color));
    }
    if let Some(v) = &stored.vector {
        out.insert("emb".into(), vector(v));
    }
    out
}

/// Writes `count` random items in batches of 25, recording them in `model`.
pub async fn fill(
    client: &Client,
    table: &str,
    model: &mut Model,
    rng: &mut util::Rng,
    count: usize,
) {
    let start = model.len();
    for chunk in (start..start + count).collect::<Vec<_>>().chunks(25) {
        let mut writes = Vec::new();
        for i in chunk {
            let pk = format!("item{i:05}");
            let stored = random_stored(rng, *i, model);
            let put = PutRequest::builder()
                .set_item(Some(as_item(&pk, &stored)))
                .build()
                .unwrap();
            writes.push(WriteRequest::builder().put_request(put).build());
            model.insert(pk, stored);
        }
        let out = client
            .batch_write_item()
            .request_items(table, writes)
            .send()
            .await
            .unwrap();
        assert!(out.unprocessed_items().is_none_or(|u| u.is_empty()));
    }
}

/// Random queries over every partition, filter and a few TopK values.
pub async fn check(
    client: &Client,
    table: &str,
    model: &Model,
    function: &VectorDistanceFunction,
    rng: &mut util::Rng,
    what: &str,
) {
    for round in 0..4 {
        let query = random_vector(rng);
        for cat in ["a", "b", "c"] {
            for color in [None, Some("red"), Some("blue")] {
                let expected = ranked(model, function, &query, Some(cat), color);
                for k in [1, 7, 100] {
                    let found = search(client, table, &query, k, Some(cat), color).await;
                    let label = format!(
                        "{what} {function:?} round {round} cat {cat} color {color:?} k {k}"
                    );
                    assert_matches(&found, &expected, k as usize, &label);
                }
            }
        }
    }
}

/// Updates, removals and deletes through UpdateItem and DeleteItem.
pub async fn mutate(client: &Client, table: &str, model: &mut Model, rng: &mut util::Rng) {
    let keys: Vec<String> = model.keys().cloned().collect();
    for (n, pk) in keys.iter().enumerate().filter(|(n, _)| n % 4 == 0) {
        let key = item(&[("pk", s(pk))]);
        let stored = model.get_mut(pk).unwrap();
        let update = client
            .update_item()
            .table_name(table)
            .set_key(Some(key.clone()));
        match n % 5 {
            0 => {
                let v = random_vector(rng);
                update
                    .update_expression("SET emb = :v")
                    .expression_attribute_values(":v", vector(&v))
                    .send()
                    .await
                    .unwrap();
                stored.vector = Some(v);
            }
            1 => {
                update.update_expression("REMOVE emb").send().await.unwrap();
                stored.vector = None;
            }
            2 => {
                update
                    .update_expression("SET cat = :c REMOVE color")
                    .expression_attribute_values(":c", s("b"))
                    .send()
                    .await
                    .unwrap();
                (stored.cat, stored.color) = (Some("b".into()), None);
            }
            3 => {
                update
                    .update_expression("SET color = :c, note2 = :o")
                    .expression_attribute_values(":c", s("red"))
                    .expression_attribute_values(":o", s("y"))
                    .send()
                    .await
                    .unwrap();
                stored.color = Some("red".into());
            }
            _ => {
                client
                    .delete_item()
                    .table_name(table)
                    .set_key(Some(key))
                    .send()
                    .await
                    .unwrap();
                model.remove(pk);
            }
        }
    }
}

#[tokio::test]
async fn searches_match_brute_force_for_every_distance_function() {
    let client = util::client();
    for function in FUNCTIONS {
        let mut rng = util::Rng::with_seed(25);
        let index = vector_index(DIMS as i64, function.clone(), true, ProjectionType::All);
        let table = vector_table(&client, index).await;
        let mut model = Model::new();
        fill(&client, &table, &mut model, &mut rng, 240).await;
        check(&client, &table, &model, &function, &mut rng, "filled").await;
        mutate(&client, &table, &mut model, &mut rng).await;
        check(
            &client,
            &table,
            &model,
            &function,
            &mut rng,
            "after updates",
        )
        .await;
    }
}

#[tokio::test]
async fn without_a_search_schema_a_search_spans_the_table() {
    let client = util::client();
    let mut rng = util::Rng::with_seed(7);
    let function = VectorDistanceFunction::Euclidean;
    let table = vector_table(
        &client,
        vector_index(
            DIMS as i64,
            function.clone(),
            false,
            ProjectionType::KeysOnly,
        ),
    )
    .await;
    let mut model = Model::new();
    fill(&client, &table, &mut model, &mut rng, 150).await;
    for _ in 0..5 {
        let query = random_vector(&mut rng);
        let expected = ranked(&model, &function, &query, None, None);
        let found = search(&client, &table, &query, 100, None, None).await;
        assert_matches(&found, &expected, 100, "no schema");
    }
}

#[tokio::test]
async fn searches_are_exact_after_a_restart() {
    util::needs_own_server();
    let dir = tempfile::tempdir().unwrap();
    let server = util::process::ServerProcess::with_data_dir(dir.path());
    let client = util::client_for(server.endpoint());
    let function = VectorDistanceFunction::Cosine;
    let table = vector_table(
        &client,
        vector_index(DIMS as i64, function.clone(), true, ProjectionType::All),
    )
    .await;
    let mut rng = util::Rng::with_seed(3);
    let mut model = Model::new();
    fill(&client, &table, &mut model, &mut rng, 200).await;
    mutate(&client, &table, &mut model, &mut rng).await;
    let before = super::api::describe_vix(&client, &table).await;
    server.terminate();
    let server = util::process::ServerProcess::with_data_dir(dir.path());
    let client = util::client_for(server.endpoint());
    check(
        &client,
        &table,
        &model,
        &function,
        &mut rng,
        "after restart",
    )
    .await;
    let after = super::api::describe_vix(&client, &table).await;
    assert_eq!(after.item_count(), before.item_count());
    assert_eq!(after.index_size_bytes(), before.index_size_bytes());
    let indexed = model
        .values()
        .filter(|s| s.vector.is_some() && s.cat.is_some())
        .count();
    assert_eq!(after.item_count(), Some(indexed as i64));
}

#[tokio::test]
async fn a_large_partition_searched_through_its_graph_still_returns_top_k_matches() {
    let client = util::client();
    let _heavy = util::heavy_test().await;
    let function = VectorDistanceFunction::Euclidean;
    let table = vector_table(
        &client,
        vector_index(
            DIMS as i64,
            function.clone(),
            true,
            ProjectionType::KeysOnly,
        ),
    )
    .await;
    let mut rng = util::Rng::with_seed(11);
    let mut model = Model::new();
    fill(&client, &table, &mut model, &mut rng, 7_000).await;
    // A rare filter value: a handful of matches among thousands.
    let rare: Vec<String> = model.keys().take(60).step_by(10).cloned().collect();
    for pk in &rare {
        client
            .update_item()
            .table_name(&table)
            .key("pk", s(pk))
            .update_expression("SET color = :c")
            .expression_attribute_values(":c", s("rare"))
            .send()
            .await
            .unwrap();
        model.get_mut(pk).unwrap().color = Some("rare".into());
    }
    let mut hits = 0;
    let mut total = 0;
    for _ in 0..20 {
        let query = random_vector(&mut rng);
        for (cat, color) in [
            ("a", None),
            ("a", Some("red")),
            ("b", Some("rare")),
            ("c", Some("blue")),
        ] {
            let expected = ranked(&model, &function, &query, Some(cat), color);
            let found = search(&client, &table, &query, 10, Some(cat), color).await;
            assert_eq!(
                found.len(),
                10.min(expected.len()),
                "TopK matches for {cat}/{color:?}"
            );
            for (pk, score) in &found {
                let own = expected
                    .iter()
                    .find(|(p, _)| p == pk)
                    .expect("a matching item")
                    .1;
                assert!((own - score).abs() < 1e-9, "{pk}: {score} vs {own}");
            }
            let want: Vec<&String> = expected.iter().take(10).map(|(p, _)| p).collect();
            hits += found.iter().filter(|(p, _)| want.contains(&p)).count();
            total += want.len();
        }
    }
    let recall = hits as f64 / total as f64;
    assert!(recall >= 0.9, "recall@10 on 8-dimension vectors: {recall}");
}
