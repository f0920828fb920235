//! Vector indexes on shared PostgreSQL storage: entries are written in the
//! item's checked batch, searches are exact against the reference, a
//! second node started on the same database builds its search structure
//! from the stored entries, and a restarted node does too. Ignored without
//! PostgreSQL; run by scripts/pg-tests.sh.

use super::exactness::fill;
use super::reference::{assert_matches, ranked, search, Model};
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
