//! The API around vector indexes: CreateTable's VectorIndexes and its
//! refusals, DescribeTable's figures, UpdateTable's VectorIndexUpdates with
//! an online backfill, every SearchVectors parameter and error, the checks
//! on written vectors, capacity (VectorSearchRequestBytes,
//! VectorWriteRequestBytes), and Query/Scan refused on a vector index.
//! Wording: AWS's troubleshooting guide where it quotes one, Dynoxide
//! 1.5.0's otherwise (CONFORMANCE.md).

use super::{element, search_list, vector, vector_index, vector_table};
use crate::util::raw::call_json;
use crate::util::{self, assert_error, assert_validation, attr_def, item, key, l, n, s};
use aws_sdk_dynamodb::types::{
    AttributeValue, BillingMode, CreateVectorIndexAction, DeleteVectorIndexAction, IndexStatus,
    KeyType, Projection, ProjectionType, ReturnConsumedCapacity, ScalarAttributeType,
    SearchSchemaElementType, VectorAttributeDefinition, VectorDistanceFunction,
    VectorIndexDescription, VectorIndexUpdate,
};
use aws_sdk_dynamodb::Client;
use serde_json::json;
use std::time::Duration;

/// DescribeTable's description of `vix`.
pub async fn describe_vix(client: &Client, table: &str) -> VectorIndexDescription {
    let out = client
        .describe_table()
        .table_name(table)
        .send()
        .await
        .unwrap();
    let table = out.table().unwrap();
    table
        .vector_indexes()
        .iter()
        .find(|v| v.index_name() == Some("vix"))
        .cloned()
        .expect("vix described")
}

/// A 3-dimension cosine table with HASH `cat` and INLINE_FILTER `color`,
/// holding items a (red), b (blue) and z (the zero vector) in partition x.
async fn small_table(client: &Client) -> String {
    let index = vector_index(3, VectorDistanceFunction::Cosine, true, ProjectionType::All);
    let table = vector_table(client, index).await;
    for (pk, color, v) in [
        ("a", Some("red"), [1.0, 0.0, 0.0]),
        ("b", Some("blue"), [0.0, 1.0, 0.0]),
        ("z", None, [0.0, 0.0, 0.0]),
    ] {
        let mut it = item(&[("pk", s(pk)), ("cat", s("x")), ("emb", vector(&v))]);
        if let Some(color) = color {
            it.insert("color".into(), s(color));
        }
        client
            .put_item()
            .table_name(&table)
            .set_item(Some(it))
            .send()
            .await
            .unwrap();
    }
    table
}

#[tokio::test]
async fn describe_table_shows_the_vector_index_and_its_figures() {
    let client = util::client();
    let table = small_table(&client).await;
    let vix = describe_vix(&client, &table).await;
    assert_eq!(vix.index_status(), Some(&IndexStatus::Active));
    assert_eq!(vix.backfilling(), None);
    assert_eq!(vix.dimensions(), Some(3));
    assert_eq!(
        vix.distance_function(),
        Some(&VectorDistanceFunction::Cosine)
    );
    assert_eq!(vix.vector_attribute().unwrap().attribute_name(), "emb");
    assert_eq!(vix.search_schema().len(), 2);
    assert!(vix
        .index_arn()
        .unwrap()
        .ends_with(&format!("table/{table}/index/vix")));
    assert_eq!(vix.item_count(), Some(3));
    assert!(vix.index_size_bytes().unwrap() > 0);
}

#[tokio::test]
async fn search_returns_items_most_similar_first_with_documented_scores() {
    let client = util::client();
    let table = small_table(&client).await;
    let out = client
        .search_vectors()
        .table_name(&table)
        .index_name("vix")
        .set_search_vector(Some(search_list(&[1.0, 0.5, 0.0])))
        .top_k(5)
        .search_condition_expression("cat = :c")
        .expression_attribute_values(":c", s("x"))
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .unwrap();
    let results = out.search_results();
    let pks: Vec<&str> = results
        .iter()
        .map(|r| util::get_s(r.item().unwrap(), "pk"))
        .collect();
    assert_eq!(pks, ["a", "b", "z"]);
    // 1 − cos: 1 − 1/√1.25, 1 − 0.5/√1.25, and 1 for the zero vector.
    let scores: Vec<f64> = results.iter().map(|r| r.score()).collect();
    assert!((scores[0] - (1.0 - 1.0 / 1.25f64.sqrt())).abs() < 1e-12);
    assert!((scores[1] - (1.0 - 0.5 / 1.25f64.sqrt())).abs() < 1e-12);
    assert_eq!(scores[2], 1.0);
    // Projection ALL: the whole item, vector included.
    assert_eq!(
        results[0].item().unwrap().get("emb"),
        Some(&vector(&[1.0, 0.0, 0.0]))
    );
    let capacity = out.consumed_capacity().unwrap();
    assert!(capacity.vector_search_request_bytes().unwrap() > 0.0);
    // Filter, ProjectionExpression with a name placeholder, TopK.
    let out = client
        .search_vectors()
        .table_name(&table)
        .index_name("vix")
        .set_search_vector(Some(search_list(&[0.0, 1.0, 0.0])))
        .top_k(1)
        .search_condition_expression("(cat = :c) AND #col = :r")
        .expression_attribute_names("#col", "color")
        .expression_attribute_values(":c", s("x"))
        .expression_attribute_values(":r", s("red"))
        .projection_expression("pk, #col")
        .send()
        .await
        .unwrap();
    let only = &out.search_results()[0];
    assert_eq!(
        only.item().unwrap(),
        &item(&[("pk", s("a")), ("color", s("red"))])
    );
    assert!(out.consumed_capacity().is_none());
    // Another partition is empty.
    let out = client
        .search_vectors()
        .table_name(&table)
        .index_name("vix")
        .set_search_vector(Some(search_list(&[0.0, 1.0, 0.0])))
        .top_k(3)
        .search_condition_expression(":c = cat")
        .expression_attribute_values(":c", s("y"))
        .send()
        .await
        .unwrap();
    assert!(out.search_results().is_empty());
}

#[tokio::test]
async fn keys_only_and_include_projections_return_what_the_index_holds() {
    let client = util::client();
    for (ty, extra, expected) in [
        (
            ProjectionType::KeysOnly,
            None,
            vec!["cat", "color", "emb", "pk"],
        ),
        (
            ProjectionType::Include,
            Some("note"),
            vec!["cat", "color", "emb", "note", "pk"],
        ),
    ] {
        let mut index = vector_index(3, VectorDistanceFunction::Euclidean, true, ty.clone());
        let mut projection = Projection::builder().projection_type(ty);
        if let Some(extra) = extra {
            projection = projection.non_key_attributes(extra);
        }
        index.projection = Some(projection.build());
        let table = vector_table(&client, index).await;
        let it = item(&[
            ("pk", s("a")),
            ("cat", s("x")),
            ("color", s("red")),
            ("note", s("n")),
            ("note2", s("o")),
            ("emb", vector(&[1.0, 2.0, 3.0])),
        ]);
        client
            .put_item()
            .table_name(&table)
            .set_item(Some(it))
            .send()
            .await
            .unwrap();
        let out = client
            .search_vectors()
            .table_name(&table)
            .index_name("vix")
            .set_search_vector(Some(search_list(&[1.0, 2.0, 3.0])))
            .top_k(1)
            .search_condition_expression("cat = :c")
            .expression_attribute_values(":c", s("x"))
            .send()
            .await
            .unwrap();
        let mut names: Vec<&String> = out.search_results()[0].item().unwrap().keys().collect();
        names.sort();
        assert_eq!(names, expected);
        assert_eq!(out.search_results()[0].score(), 0.0);
    }
}

async fn search_raw(body: serde_json::Value) -> (u16, String, String) {
    let r = call_json("SearchVectors", body).await;
    let v = r.json();
    (
        r.status,
        r.error_name(),
        v["message"]
            .as_str()
            .or(v["Message"].as_str())
            .unwrap_or_default()
            .to_string(),
    )
}

#[tokio::test]
async fn search_parameters_are_checked_in_dynamodb_words() {
    let client = util::client();
    let table = small_table(&client).await;
    let q = json!([{"N": "1"}, {"N": "0"}, {"N": "0"}]);
    let base = |extra: serde_json::Value| {
        let mut body = json!({"TableName": table, "IndexName": "vix", "SearchVector": q, "TopK": 3,
            "SearchConditionExpression": "cat = :c", "ExpressionAttributeValues": {":c": {"S": "x"}}});
        for (k, v) in extra.as_object().unwrap() {
            if v.is_null() {
                body.as_object_mut().unwrap().remove(k);
            } else {
                body[k] = v.clone();
            }
        }
        body
    };
    let cases: Vec<(serde_json::Value, &str)> = vec![
        (json!({"TopK": 0}), "1 validation error detected: Value '0' at 'topK' failed to satisfy constraint: Member must have value greater than or equal to 1"),
        (json!({"TopK": null}), "1 validation error detected: Value null at 'topK' failed to satisfy constraint: Member must not be null"),
        (json!({"TopK": 101}), "Provided TopK value '101' is out of valid range. The value must be between 1 and 100 inclusive"),
        (json!({"SearchVector": []}), "1 validation error detected: Value '[]' at 'searchVector' failed to satisfy constraint: Member must have length greater than or equal to 1"),
        (json!({"SearchVector": [{"N": "1"}]}), "Input search vector dimension 1 does not match vector index dimension 3"),
        (json!({"SearchVector": [{"S": "1"}, {"N": "0"}, {"N": "0"}]}), "Search vector contains invalid values. All values in the search vector must be a 32-bit floating-point number attribute"),
        (json!({"SearchVector": [{"N": "1e39"}, {"N": "0"}, {"N": "0"}]}), "Search vector contains invalid values. All values in the search vector must be a 32-bit floating-point number attribute"),
        (json!({"IndexName": "nope"}), "The table does not have the specified index: nope"),
        (json!({"IndexName": "ab"}), "1 validation error detected: Value 'ab' at 'indexName' failed to satisfy constraint: Member must have length greater than or equal to 3"),
        (json!({"SearchConditionExpression": null, "ExpressionAttributeValues": null}), "SearchConditionExpression must be provided when SearchSchema has a HASH key"),
        (json!({"SearchConditionExpression": "color = :c"}), "SearchConditionExpression must be provided when SearchSchema has a HASH key"),
        (json!({"SearchConditionExpression": "cat < :c"}), "Invalid SearchConditionExpression: Invalid comparator used in SearchConditionExpression"),
        (json!({"SearchConditionExpression": "cat = :c OR color = :c"}), "Invalid SearchConditionExpression: Invalid comparator used in SearchConditionExpression"),
        (json!({"SearchConditionExpression": "begins_with(cat, :c)"}), "Invalid SearchConditionExpression: Invalid comparator used in SearchConditionExpression"),
        (json!({"SearchConditionExpression": "cat.x = :c"}), "Invalid SearchConditionExpression: SearchConditionExpression cannot have conditions on nested attributes"),
        (json!({"SearchConditionExpression": "cat = :c AND cat = :c"}), "Invalid SearchConditionExpression: SearchConditionExpression must only contain one condition per attribute"),
        (json!({"SearchConditionExpression": "cat = :c AND foo = :c"}), "SearchConditionExpression must not contain any attributes that is not in SearchSchema. Invalid attribute: foo"),
        (json!({"ExpressionAttributeValues": {":c": {"N": "1"}}}), "Type of 'cat' attribute in SearchConditionExpression (N) does not match type in search schema (S)"),
        (json!({"ExpressionAttributeValues": {":c": {"S": "x"}, ":d": {"S": "y"}}}), "Value provided in ExpressionAttributeValues unused in expressions: keys: {:d}"),
        (json!({"SearchConditionExpression": "cat = :z"}), "Invalid SearchConditionExpression: An expression attribute value used in expression is not defined; attribute value: :z"),
        (json!({"ReturnConsumedCapacity": "SOME"}), "1 validation error detected: Value 'SOME' at 'returnConsumedCapacity' failed to satisfy constraint: Member must satisfy enum value set: [INDEXES, TOTAL, NONE]"),
    ];
    for (extra, message) in cases {
        let (status, name, got) = search_raw(base(extra.clone())).await;
        assert_eq!(
            (status, name.as_str(), got.as_str()),
            (400, "ValidationException", message),
            "{extra}"
        );
    }
    let (status, name, got) = search_raw(base(json!({"TableName": "no-such-table"}))).await;
    assert_eq!(
        (status, name.as_str(), got.as_str()),
        (
            400,
            "ResourceNotFoundException",
            "Requested resource not found"
        )
    );
}

#[tokio::test]
async fn writes_with_malformed_vectors_are_refused() {
    let client = util::client();
    let table = small_table(&client).await;
    let put = |v: AttributeValue| {
        client
            .put_item()
            .table_name(&table)
            .item("pk", s("w"))
            .item("cat", s("x"))
            .item("emb", v)
            .send()
    };
    let prefix = "One or more parameter values were invalid.";
    assert_validation(
        put(l(vec![n("1"), n("0")])).await,
        &format!("{prefix} Invalid size for parameter emb, Expected: 3, Actual: 2 IndexName: vix"),
    );
    assert_validation(put(s("x")).await, &format!("{prefix} Invalid type for parameter emb, Expected: 32-bit floating point number list IndexName: vix"));
    assert_validation(put(l(vec![n("1"), s("0"), n("0")])).await, &format!("{prefix} Invalid type for parameter emb[1], Expected: 32-bit floating point number, Actual: S. IndexName: vix"));
    assert_validation(put(l(vec![n("-1e39"), n("0"), n("0")])).await, &format!("{prefix} Invalid value for parameter emb[0], Value: -1000000000000000000000000000000000000000 is outside valid range [-3.4028235E38, 3.4028235E38]. IndexName: vix"));
    let wrong_cat = client
        .put_item()
        .table_name(&table)
        .item("pk", s("w"))
        .item("cat", n("1"))
        .send()
        .await;
    assert_validation(
        wrong_cat,
        &format!("{prefix} Attribute 'cat' type mismatch. Expected: S, Actual: N. IndexName: vix"),
    );
    let update = client
        .update_item()
        .table_name(&table)
        .key("pk", s("a"))
        .update_expression("SET emb = :v")
        .expression_attribute_values(":v", l(vec![n("1")]))
        .send()
        .await;
    assert_validation(
        update,
        &format!("{prefix} Invalid size for parameter emb, Expected: 3, Actual: 1 IndexName: vix"),
    );
    // Nothing was written; an item without the HASH attribute is stored, not indexed.
    assert!(client
        .get_item()
        .table_name(&table)
        .key("pk", s("w"))
        .send()
        .await
        .unwrap()
        .item()
        .is_none());
    client
        .put_item()
        .table_name(&table)
        .item("pk", s("nohash"))
        .item("emb", vector(&[1.0, 0.0, 0.0]))
        .send()
        .await
        .unwrap();
    assert_eq!(describe_vix(&client, &table).await.item_count(), Some(3));
}

#[tokio::test]
async fn writes_report_vector_write_request_bytes_with_indexes() {
    let client = util::client();
    let table = small_table(&client).await;
    let out = client
        .put_item()
        .table_name(&table)
        .item("pk", s("c"))
        .item("cat", s("x"))
        .item("emb", vector(&[0.5, 0.5, 0.0]))
        .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
        .send()
        .await
        .unwrap();
    let capacity = out.consumed_capacity().unwrap();
    let bytes = capacity.vector_indexes().unwrap()["vix"]
        .vector_write_request_bytes()
        .unwrap();
    // The f32 vector plus the other projected attributes (pk, cat).
    assert_eq!(bytes, (3 * 4 + 3 + 4) as f64);
    // TOTAL carries no breakdown; a write that leaves the entry alone none.
    let out = client
        .put_item()
        .table_name(&table)
        .item("pk", s("c"))
        .item("cat", s("x"))
        .item("emb", vector(&[0.5, 0.5, 0.0]))
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .unwrap();
    assert!(out.consumed_capacity().unwrap().vector_indexes().is_none());
    let out = client
        .delete_item()
        .table_name(&table)
        .key("pk", s("c"))
        .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
        .send()
        .await
        .unwrap();
    assert!(out
        .consumed_capacity()
        .unwrap()
        .vector_indexes()
        .unwrap()
        .contains_key("vix"));
    let out = client
        .put_item()
        .table_name(&table)
        .item("pk", s("novec"))
        .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
        .send()
        .await
        .unwrap();
    assert!(out.consumed_capacity().unwrap().vector_indexes().is_none());
}

#[tokio::test]
async fn query_and_scan_refuse_a_vector_index() {
    let client = util::client();
    let table = small_table(&client).await;
    let query = client
        .query()
        .table_name(&table)
        .index_name("vix")
        .key_condition_expression("cat = :c")
        .expression_attribute_values(":c", s("x"))
        .send()
        .await;
    assert_validation(query, "Query operation not supported on this index type.");
    let scan = client
        .scan()
        .table_name(&table)
        .index_name("vix")
        .send()
        .await;
    assert_validation(scan, "Scan operation not supported on this index type");
}

fn create_action(name: &str, attribute: &str, dimensions: i64) -> CreateVectorIndexAction {
    CreateVectorIndexAction::builder()
        .index_name(name)
        .vector_attribute(
            VectorAttributeDefinition::builder()
                .attribute_name(attribute)
                .build()
                .unwrap(),
        )
        .dimensions(dimensions)
        .distance_function(VectorDistanceFunction::DotProduct)
        .projection(
            Projection::builder()
                .projection_type(ProjectionType::KeysOnly)
                .build(),
        )
        .search_schema(element("cat", SearchSchemaElementType::Hash))
        .build()
        .unwrap()
}

#[tokio::test]
async fn update_table_adds_a_vector_index_with_a_backfill_and_deletes_it() {
    let client = util::client();
    let table = util::table_s(&client).await;
    for i in 0..600 {
        client
            .put_item()
            .table_name(&table)
            .item("p", s(&format!("k{i}")))
            .item("cat", s(if i % 2 == 0 { "even" } else { "odd" }))
            .item("v2", vector(&[i as f32, 1.0]))
            .send()
            .await
            .unwrap();
    }
    let out = client
        .update_table()
        .table_name(&table)
        .attribute_definitions(attr_def("cat", ScalarAttributeType::S))
        .vector_index_updates(
            VectorIndexUpdate::builder()
                .create(create_action("byv2", "v2", 2))
                .build(),
        )
        .send()
        .await
        .unwrap();
    let shown = out.table_description().unwrap().vector_indexes()[0].clone();
    assert_eq!(shown.index_status(), Some(&IndexStatus::Creating));
    assert_eq!(shown.backfilling(), Some(true));
    let search = || {
        client
            .search_vectors()
            .table_name(&table)
            .index_name("byv2")
            .set_search_vector(Some(search_list(&[1.0, 0.0])))
            .top_k(3)
            .search_condition_expression("cat = :c")
            .expression_attribute_values(":c", s("odd"))
            .send()
    };
    // While CREATING a search is refused (DynamoDB: "Cannot search backfilling vector index").
    if let Err(err) = search().await {
        let err = util::service_error::<(), _, _>(Err(err));
        assert_eq!(err.message, "Cannot search backfilling vector index: byv2");
    }
    util::poll_until("the backfill", Duration::from_secs(60), || async {
        let d = client
            .describe_table()
            .table_name(&table)
            .send()
            .await
            .unwrap();
        let v = d.table().unwrap().vector_indexes()[0].clone();
        (v.index_status() == Some(&IndexStatus::Active)).then_some(v)
    })
    .await;
    let found = search().await.unwrap();
    let keys: Vec<&str> = found
        .search_results()
        .iter()
        .map(|r| util::get_s(r.item().unwrap(), "p"))
        .collect();
    assert_eq!(keys, ["k599", "k597", "k595"]);
    assert_eq!(found.search_results()[0].score(), 599.0);
    let d = client
        .describe_table()
        .table_name(&table)
        .send()
        .await
        .unwrap();
    assert_eq!(
        d.table().unwrap().vector_indexes()[0].item_count(),
        Some(600)
    );
    // A second one on the same attribute must have the same dimensions.
    let again = client
        .update_table()
        .table_name(&table)
        .vector_index_updates(
            VectorIndexUpdate::builder()
                .create(create_action("other", "v2", 3))
                .build(),
        )
        .attribute_definitions(attr_def("cat", ScalarAttributeType::S))
        .send()
        .await;
    assert_validation(again, "One or more parameter values were invalid: Conflicting attribute definition for 'v2'. All VectorIndexes on the same vector attribute must use the same dimensions.");
    let exists = client
        .update_table()
        .table_name(&table)
        .vector_index_updates(
            VectorIndexUpdate::builder()
                .create(create_action("byv2", "v2", 2))
                .build(),
        )
        .attribute_definitions(attr_def("cat", ScalarAttributeType::S))
        .send()
        .await;
    assert_validation(exists, "Attempting to create an index which already exists");
    let delete = |name: &str| {
        client
            .update_table()
            .table_name(&table)
            .vector_index_updates(
                VectorIndexUpdate::builder()
                    .delete(
                        DeleteVectorIndexAction::builder()
                            .index_name(name)
                            .build()
                            .unwrap(),
                    )
                    .build(),
            )
            .send()
    };
    assert_error(
        delete("nope").await,
        "ResourceNotFoundException",
        &format!("Requested resource not found: Index nope for table {table}"),
    );
    let out = delete("byv2").await.unwrap();
    assert!(out.table_description().unwrap().vector_indexes().is_empty());
    assert_validation(
        search().await,
        "The table does not have the specified index: byv2",
    );
}

#[tokio::test]
async fn create_table_refuses_invalid_vector_indexes() {
    let client = util::client();
    let create =
        |index: aws_sdk_dynamodb::types::VectorIndex, mode: BillingMode, extra: Option<&str>| {
            let mut r = client
                .create_table()
                .table_name(util::unique_name("vbad"))
                .billing_mode(mode.clone())
                .key_schema(key("pk", KeyType::Hash))
                .attribute_definitions(attr_def("pk", ScalarAttributeType::S))
                .vector_indexes(index);
            if mode == BillingMode::Provisioned {
                r = r.provisioned_throughput(
                    aws_sdk_dynamodb::types::ProvisionedThroughput::builder()
                        .read_capacity_units(1)
                        .write_capacity_units(1)
                        .build()
                        .unwrap(),
                );
            }
            if let Some(extra) = extra {
                r = r.attribute_definitions(attr_def(extra, ScalarAttributeType::S));
            }
            r.send()
        };
    let plain = || {
        vector_index(
            3,
            VectorDistanceFunction::Cosine,
            false,
            ProjectionType::All,
        )
    };
    let prefix = "One or more parameter values were invalid: ";
    assert_validation(
        create(plain(), BillingMode::Provisioned, None).await,
        &format!("{prefix}Vector indexes are only supported for PAY_PER_REQUEST tables"),
    );
    assert_validation(
        create(
            vector_index(3, VectorDistanceFunction::Cosine, true, ProjectionType::All),
            BillingMode::PayPerRequest,
            None,
        )
        .await,
        &format!("{prefix}One element in SearchSchema is not defined in attribute definitions"),
    );
    assert_validation(
        create(
            vector_index(
                5000,
                VectorDistanceFunction::Cosine,
                false,
                ProjectionType::All,
            ),
            BillingMode::PayPerRequest,
            None,
        )
        .await,
        &format!("{prefix}Number of dimensions must be between 1 and 4096 inclusive."),
    );
    let mut on_key = plain();
    on_key.vector_attribute = Some(
        VectorAttributeDefinition::builder()
            .attribute_name("pk")
            .build()
            .unwrap(),
    );
    assert_validation(create(on_key, BillingMode::PayPerRequest, None).await, &format!("{prefix}Conflicting attribute definition for 'pk'. An attribute cannot be defined in AttributeDefinitions when used as a VectorAttribute."));
    let mut two_hashes = plain();
    two_hashes.search_schema = Some(vec![
        element("h", SearchSchemaElementType::Hash),
        element("h", SearchSchemaElementType::Hash),
    ]);
    assert_validation(create(two_hashes, BillingMode::PayPerRequest, Some("h")).await, &format!("{prefix}Value '2' at 'SearchSchema' failed to satisfy constraint: Member must have HASH count less than or equal to 1"));
    // Field constraints, raw (the SDK would not send them).
    let r = call_json("CreateTable", json!({"TableName": util::unique_name("vbad"), "BillingMode": "PAY_PER_REQUEST",
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}], "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "VectorIndexes": [{"IndexName": "vi", "VectorAttribute": {"AttributeName": "e"}, "Dimensions": 0, "DistanceFunction": "MANHATTAN"}]})).await;
    assert_eq!(r.json()["message"], "4 validation errors detected: Value 'vi' at 'vectorIndexes.1.member.indexName' failed to satisfy constraint: Member must have length greater than or equal to 3; Value null at 'vectorIndexes.1.member.projection' failed to satisfy constraint: Member must not be null; Value '0' at 'vectorIndexes.1.member.dimensions' failed to satisfy constraint: Member must have value greater than or equal to 1; Value 'MANHATTAN' at 'vectorIndexes.1.member.distanceFunction' failed to satisfy constraint: Member must satisfy enum value set: [COSINE, DOT_PRODUCT, EUCLIDEAN]");
    let six: Vec<serde_json::Value> = (0..6).map(|i| json!({"IndexName": format!("vix{i}"), "VectorAttribute": {"AttributeName": format!("e{i}")}, "Dimensions": 2, "DistanceFunction": "COSINE", "Projection": {"ProjectionType": "ALL"}})).collect();
    let r = call_json("CreateTable", json!({"TableName": util::unique_name("vbad"), "BillingMode": "PAY_PER_REQUEST",
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}], "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "VectorIndexes": six})).await;
    assert_eq!(
        r.json()["message"],
        format!("{prefix}VectorIndex count exceeds the per-table limit of 5")
    );
}
