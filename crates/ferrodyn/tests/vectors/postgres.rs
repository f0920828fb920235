//! Vector indexes on shared PostgreSQL storage: entries are written in the
//! item's checked batch, searches are exact against the reference, a
//! second node started on the same database builds its search structure
//! from the stored entries, and a restarted node does too; a node's
//! searches find what another node writes within seconds (its structure
//! follows the change log). Ignored without PostgreSQL; run by
//! scripts/pg-tests.sh.

use super::exactness::{check, fill, mutate, random_vector};
use super::reference::{assert_matches, mismatch, ranked, search, Model};
use super::{vector_index, vector_table};
use crate::util::{self, client_for, fresh_postgres_database, s, ServerProcess};
use aws_sdk_dynamodb::types::{ProjectionType, VectorDistanceFunction};

#[tokio::test]
#[ignore = "needs PostgreSQL: run by scripts/pg-tests.sh"]
async fn vector_indexes_live_on_postgresql_storage() {
    util::needs_own_server();
    let url = fresh_postgres_database(&util::postgres_server());
    let first = ServerProcess::spawn(&["--storage", &url]);
    let client = client_for(first.endpoint());
    let function = VectorDistanceFunction::DotProduct;
    let table = vector_table(
        &client,
        vector_index(8, function.clone(), true, ProjectionType::All),
    )
    .await;
    let mut rng = util::Rng::with_seed(13);
    let mut model = Model::new();
    fill(&client, &table, &mut model, &mut rng, 120).await;
    client
        .delete_item()
        .table_name(&table)
        .key("pk", s("item00003"))
        .send()
        .await
        .unwrap();
    model.remove("item00003");
    let query: Vec<f32> = (0..8).map(|i| i as f32 / 8.0 - 0.4).collect();
    for cat in ["a", "b", "c"] {
        let expected = ranked(&model, &function, &query, Some(cat), None);
        let found = search(&client, &table, &query, 50, Some(cat), None).await;
        assert_matches(&found, &expected, 50, "first node");
    }
    // Another node on the same database loads the index from storage.
    let second = ServerProcess::spawn(&["--storage", &url]);
    let other = client_for(second.endpoint());
    for cat in ["a", "b", "c"] {
        let expected = ranked(&model, &function, &query, Some(cat), Some("red"));
        let found = search(&other, &table, &query, 50, Some(cat), Some("red")).await;
        assert_matches(&found, &expected, 50, "second node");
    }
    first.terminate();
    second.terminate();
    let again = ServerProcess::spawn(&["--storage", &url]);
    let client = client_for(again.endpoint());
    let expected = ranked(&model, &function, &query, Some("b"), Some("blue"));
    let found = search(&client, &table, &query, 10, Some("b"), Some("blue")).await;
    assert_matches(&found, &expected, 10, "after a restart");
    let described = super::api::describe_vix(&client, &table).await;
    assert!(described.item_count().is_some());
}

/// Whether every partition's top 100 through `client` is the reference's.
async fn converged(
    client: &aws_sdk_dynamodb::Client,
    table: &str,
    model: &Model,
    function: &VectorDistanceFunction,
    query: &[f32],
) -> Option<String> {
    for cat in ["a", "b", "c"] {
        let expected = ranked(model, function, query, Some(cat), None);
        let found = search(client, table, query, 100, Some(cat), None).await;
        if let Some(wrong) = mismatch(&found, &expected, 100) {
            return Some(format!("cat {cat}: {wrong}"));
        }
    }
    None
}

/// Waits until `client`'s searches match the model (another node's writes
/// reach this node's structure about two seconds after they commit).
async fn wait_converged(
    client: &aws_sdk_dynamodb::Client,
    table: &str,
    model: &Model,
    function: &VectorDistanceFunction,
    query: &[f32],
    what: &str,
) -> std::time::Duration {
    let started = std::time::Instant::now();
    loop {
        let wrong = converged(client, table, model, function, query).await;
        let Some(wrong) = wrong else {
            return started.elapsed();
        };
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "{what}: not converged after 20 s: {wrong}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

#[tokio::test]
#[ignore = "needs PostgreSQL: run by scripts/pg-tests.sh"]
async fn a_node_finds_what_another_node_writes() {
    util::needs_own_server();
    let url = fresh_postgres_database(&util::postgres_server());
    let (first, second) = (
        ServerProcess::spawn(&["--storage", &url]),
        ServerProcess::spawn(&["--storage", &url]),
    );
    let (a, b) = (client_for(first.endpoint()), client_for(second.endpoint()));
    let function = VectorDistanceFunction::Euclidean;
    let index = vector_index(8, function.clone(), true, ProjectionType::All);
    let table = vector_table(&a, index).await;
    let mut rng = util::Rng::with_seed(29);
    let mut model = Model::new();
    // Both nodes have built the (empty) index before anything is written.
    let query = random_vector(&mut rng);
    assert!(converged(&b, &table, &model, &function, &query)
        .await
        .is_none());
    fill(&a, &table, &mut model, &mut rng, 200).await;
    // The writer finds its own writes at once.
    check(&a, &table, &model, &function, &mut rng, "writer").await;
    let lag = wait_converged(&b, &table, &model, &function, &query, "fill via A").await;
    check(&b, &table, &model, &function, &mut rng, "other node").await;
    // Updates through B: vectors replaced and removed, items moved to
    // another HASH partition, filters changed, deletes.
    mutate(&b, &table, &mut model, &mut rng).await;
    check(
        &b,
        &table,
        &model,
        &function,
        &mut rng,
        "writer after updates",
    )
    .await;
    wait_converged(&a, &table, &model, &function, &query, "updates via B").await;
    check(&a, &table, &model, &function, &mut rng, "after B's updates").await;
    // Both nodes writing the same items at once: the last write of each
    // item wins on both nodes.
    let (mut model_a, mut model_b) = (model.clone(), model.clone());
    let (mut rng_a, mut rng_b) = (util::Rng::with_seed(31), util::Rng::with_seed(37));
    tokio::join!(
        mutate(&a, &table, &mut model_a, &mut rng_a),
        mutate(&b, &table, &mut model_b, &mut rng_b),
    );
    let final_model = read_back(&a, &table).await;
    wait_converged(&a, &table, &final_model, &function, &query, "concurrent, A").await;
    wait_converged(&b, &table, &final_model, &function, &query, "concurrent, B").await;
    // A catalog change made through B (the table reloaded on A) keeps A's
    // structure following B's writes.
    b.update_time_to_live()
        .table_name(&table)
        .time_to_live_specification(
            aws_sdk_dynamodb::types::TimeToLiveSpecification::builder()
                .attribute_name("expires")
                .enabled(true)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    let mut model = final_model;
    fill(&b, &table, &mut model, &mut rng, 100).await;
    wait_converged(
        &a,
        &table,
        &model,
        &function,
        &query,
        "after a catalog change",
    )
    .await;
    check(
        &a,
        &table,
        &model,
        &function,
        &mut rng,
        "after a catalog change",
    )
    .await;
    eprintln!("another node's writes found after {lag:?}");
}

/// The table's items as a model, read back with a consistent scan.
async fn read_back(client: &aws_sdk_dynamodb::Client, table: &str) -> Model {
    let mut model = Model::new();
    let items = util::scan_all(client, table, None).await;
    for item in items {
        let text = |name: &str| item.get(name).and_then(|v| v.as_s().ok()).cloned();
        let vector = item.get("emb").and_then(|v| v.as_l().ok()).map(|list| {
            (list.iter())
                .map(|n| n.as_n().unwrap().parse::<f32>().unwrap())
                .collect()
        });
        let stored = super::reference::Stored {
            cat: text("cat"),
            color: text("color"),
            vector,
        };
        model.insert(text("pk").unwrap(), stored);
    }
    model
}
