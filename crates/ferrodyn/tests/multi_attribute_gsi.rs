//! GSIs with multi-attribute keys (up to four HASH and four RANGE
//! attributes): the KeySchema as given in DescribeTable, sparse entries,
//! Query with equalities on every partition attribute and left-to-right
//! sort conditions, pagination with every key attribute in
//! LastEvaluatedKey, backfill through UpdateTable, and the validation
//! errors of CreateTable and Query.

use std::collections::HashMap;
use std::time::Duration;

use crate::util::{self, attr_def, b, item, key, n, s};
use aws_sdk_dynamodb::types::{
    AttributeValue, BillingMode, CreateGlobalSecondaryIndexAction, GlobalSecondaryIndex,
    GlobalSecondaryIndexUpdate, IndexStatus, KeySchemaElement, KeyType, Projection, ProjectionType,
    ScalarAttributeType,
};
use aws_sdk_dynamodb::Client;

type Item = HashMap<String, AttributeValue>;

fn all() -> Projection {
    Projection::builder()
        .projection_type(ProjectionType::All)
        .build()
}

fn index_keys() -> Vec<KeySchemaElement> {
    vec![
        key("tenant_id", KeyType::Hash),
        key("area_code", KeyType::Hash),
        key("day_key", KeyType::Range),
        key("seq_no", KeyType::Range),
        key("tag_bin", KeyType::Range),
    ]
}

/// Table `p` with GSI `multi`: HASH (tenant_id S, area_code S), RANGE (day_key S,
/// seq_no N, tag_bin B).
async fn multi_table(client: &Client) -> String {
    let table = util::unique_name("mgsi");
    let mut gsi = GlobalSecondaryIndex::builder()
        .index_name("multi")
        .projection(all());
    for k in index_keys() {
        gsi = gsi.key_schema(k);
    }
    client
        .create_table()
        .table_name(&table)
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(key("p", KeyType::Hash))
        .attribute_definitions(attr_def("p", ScalarAttributeType::S))
        .attribute_definitions(attr_def("tenant_id", ScalarAttributeType::S))
        .attribute_definitions(attr_def("area_code", ScalarAttributeType::S))
        .attribute_definitions(attr_def("day_key", ScalarAttributeType::S))
        .attribute_definitions(attr_def("seq_no", ScalarAttributeType::N))
        .attribute_definitions(attr_def("tag_bin", ScalarAttributeType::B))
        .global_secondary_indexes(gsi.build().unwrap())
        .send()
        .await
        .unwrap();
    table
}

async fn put(client: &Client, table: &str, it: Item) {
    client
        .put_item()
        .table_name(table)
        .set_item(Some(it))
        .send()
        .await
        .unwrap();
}

fn row(p: &str, tenant_id: &str, day_key: &str, seq_no: i64, tag_bin: &[u8]) -> Item {
    item(&[
        ("p", s(p)),
        ("tenant_id", s(tenant_id)),
        ("area_code", s("eu")),
        ("day_key", s(day_key)),
        ("seq_no", n(&seq_no.to_string())),
        ("tag_bin", b(tag_bin)),
    ])
}

/// The `p` of every item a query returns, following LastEvaluatedKey with
/// the given page size.
async fn query_ps(
    client: &Client,
    table: &str,
    condition: &str,
    values: &[(&str, AttributeValue)],
    forward: bool,
    limit: Option<i32>,
) -> Vec<String> {
    let mut out = Vec::new();
    let mut start: Option<Item> = None;
    loop {
        let mut q = client
            .query()
            .table_name(table)
            .index_name("multi")
            .key_condition_expression(condition)
            .scan_index_forward(forward)
            .set_limit(limit)
            .set_exclusive_start_key(start.take());
        for (k, v) in values {
            q = q.expression_attribute_values(*k, v.clone());
        }
        let page = q.send().await.unwrap();
        for it in page.items() {
            out.push(util::get_s(it, "p").to_string());
        }
        match page.last_evaluated_key() {
            Some(last) => {
                let mut names: Vec<&str> = last.keys().map(String::as_str).collect();
                names.sort_unstable();
                assert_eq!(
                    names,
                    [
                        "area_code",
                        "day_key",
                        "p",
                        "seq_no",
                        "tag_bin",
                        "tenant_id"
                    ]
                );
                start = Some(last.clone());
            }
            None => return out,
        }
    }
}

#[tokio::test]
async fn describe_shows_the_key_schema_as_given() {
    let client = util::client();
    let table = multi_table(&client).await;
    let described = client
        .describe_table()
        .table_name(&table)
        .send()
        .await
        .unwrap();
    let gsi = &described.table().unwrap().global_secondary_indexes()[0];
    assert_eq!(gsi.key_schema(), index_keys().as_slice());
}

#[tokio::test]
async fn query_uses_partition_equalities_and_sort_conditions_left_to_right() {
    let client = util::client();
    let table = multi_table(&client).await;
    // Inserted out of order; sorted by (day_key, seq_no, tag_bin).
    let rows = [
        row("e", "acme", "d2", 1, b"\x01"),
        row("a", "acme", "d1", 2, b"\x02"),
        row("c", "acme", "d1", 10, b"\x01"),
        row("b", "acme", "d1", 2, b"\x03"),
        row("d", "acme", "d10", -5, b"\x01"),
        row("x", "other", "d1", 1, b"\x01"),
    ];
    for r in rows {
        put(&client, &table, r).await;
    }
    // Sparse: an item without `tag_bin` is not in the index.
    put(
        &client,
        &table,
        item(&[
            ("p", s("sparse")),
            ("tenant_id", s("acme")),
            ("area_code", s("eu")),
            ("day_key", s("d1")),
            ("seq_no", n("3")),
        ]),
    )
    .await;
    let partition = [(":t", s("acme")), (":r", s("eu"))];
    let whole = "tenant_id = :t AND area_code = :r";
    for limit in [None, Some(1), Some(2), Some(4)] {
        assert_eq!(
            query_ps(&client, &table, whole, &partition, true, limit).await,
            ["a", "b", "c", "d", "e"],
            "limit {limit:?}"
        );
    }
    assert_eq!(
        query_ps(&client, &table, whole, &partition, false, Some(2)).await,
        ["e", "d", "c", "b", "a"]
    );
    let with = |extra: &[(&'static str, AttributeValue)]| {
        let mut v = partition.to_vec();
        v.extend(extra.iter().cloned());
        v
    };
    // (key condition, placeholder values, expected sort keys in order)
    type Case = (
        &'static str,
        Vec<(&'static str, AttributeValue)>,
        Vec<&'static str>,
    );
    let cases: Vec<Case> = vec![
        (
            "area_code = :r AND day_key = :d AND tenant_id = :t",
            with(&[(":d", s("d1"))]),
            vec!["a", "b", "c"],
        ),
        (
            "tenant_id = :t AND area_code = :r AND day_key = :d AND seq_no = :q",
            with(&[(":d", s("d1")), (":q", n("2"))]),
            vec!["a", "b"],
        ),
        (
            "tenant_id = :t AND area_code = :r AND day_key = :d AND seq_no > :q",
            with(&[(":d", s("d1")), (":q", n("2"))]),
            vec!["c"],
        ),
        (
            "tenant_id = :t AND area_code = :r AND day_key = :d AND seq_no <= :q",
            with(&[(":d", s("d1")), (":q", n("2"))]),
            vec!["a", "b"],
        ),
        (
            "tenant_id = :t AND area_code = :r AND day_key = :d AND seq_no = :q AND tag_bin >= :g",
            with(&[(":d", s("d1")), (":q", n("2")), (":g", b(b"\x03"))]),
            vec!["b"],
        ),
        (
            "tenant_id = :t AND area_code = :r AND begins_with(day_key, :d)",
            with(&[(":d", s("d1"))]),
            vec!["a", "b", "c", "d"],
        ),
        (
            "tenant_id = :t AND area_code = :r AND day_key BETWEEN :lo AND :hi",
            with(&[(":lo", s("d10")), (":hi", s("d2"))]),
            vec!["d", "e"],
        ),
    ];
    for (condition, values, want) in cases {
        assert_eq!(
            query_ps(&client, &table, condition, &values, true, None).await,
            want,
            "{condition}"
        );
    }
    // Moving an item to another partition moves its entry.
    client
        .update_item()
        .table_name(&table)
        .key("p", s("a"))
        .update_expression("SET tenant_id = :o")
        .expression_attribute_values(":o", s("other"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        query_ps(&client, &table, whole, &partition, true, None).await,
        ["b", "c", "d", "e"]
    );
    assert_eq!(
        query_ps(
            &client,
            &table,
            whole,
            &[(":t", s("other")), (":r", s("eu"))],
            true,
            None
        )
        .await,
        ["x", "a"]
    );
}

#[tokio::test]
async fn query_rejects_incomplete_or_out_of_order_conditions() {
    let client = util::client();
    let table = multi_table(&client).await;
    let query = |condition: &str, values: &[(&str, AttributeValue)]| {
        let mut q = client
            .query()
            .table_name(&table)
            .index_name("multi")
            .key_condition_expression(condition);
        for (k, v) in values {
            q = q.expression_attribute_values(*k, v.clone());
        }
        q.send()
    };
    let hash = "Query key condition not supported: every HASH key attribute of the index needs an equality condition; ";
    util::assert_validation(
        query("tenant_id = :t", &[(":t", s("a"))]).await,
        &format!("{hash}area_code has no condition"),
    );
    util::assert_validation(
        query(
            "tenant_id = :t AND area_code > :r",
            &[(":t", s("a")), (":r", s("b"))],
        )
        .await,
        &format!("{hash}area_code is not compared with ="),
    );
    util::assert_validation(
        query(
            "tenant_id = :t AND area_code = :r AND seq_no = :q",
            &[(":t", s("a")), (":r", s("b")), (":q", n("1"))],
        )
        .await,
        "Query key condition not supported: RANGE key attributes must be used left to right with equality conditions; seq_no has a condition but the earlier RANGE key attribute day_key has no equality condition",
    );
    util::assert_validation(
        query(
            "tenant_id = :t AND area_code = :r AND day_key > :d AND seq_no = :q",
            &[(":t", s("a")), (":r", s("b")), (":d", s("d")), (":q", n("1"))],
        )
        .await,
        "Query key condition not supported: RANGE key attributes must be used left to right with equality conditions on all but the last one used; day_key is not compared with =",
    );
    util::assert_validation(
        query(
            "tenant_id = :t AND area_code = :r AND seq_no = :q AND day_key = :d",
            &[(":t", s("a")), (":r", s("b")), (":d", s("d")), (":q", s("1"))],
        )
        .await,
        "One or more parameter values were invalid: Condition parameter type does not match schema type",
    );
    let err = util::service_error(
        client
            .query()
            .table_name(&table)
            .index_name("multi")
            .key_condition_expression("tenant_id = :t AND area_code = :r")
            .filter_expression("seq_no > :q")
            .expression_attribute_values(":t", s("a"))
            .expression_attribute_values(":r", s("b"))
            .expression_attribute_values(":q", n("1"))
            .send()
            .await,
    );
    assert_eq!(err.code, "ValidationException");
    assert!(err.message.contains("seq_no"), "{}", err.message);
}

#[tokio::test]
async fn create_table_rejects_bad_multi_attribute_key_schemas() {
    let client = util::client();
    let create = |keys: Vec<KeySchemaElement>| {
        let mut gsi = GlobalSecondaryIndex::builder()
            .index_name("gsi")
            .projection(all());
        for k in keys {
            gsi = gsi.key_schema(k);
        }
        let mut request = client
            .create_table()
            .table_name(util::unique_name("mgsibad"))
            .billing_mode(BillingMode::PayPerRequest)
            .key_schema(key("p", KeyType::Hash))
            .attribute_definitions(attr_def("p", ScalarAttributeType::S))
            .global_secondary_indexes(gsi.build().unwrap());
        for name in ["a", "b", "c", "d", "e"] {
            request = request.attribute_definitions(attr_def(name, ScalarAttributeType::S));
        }
        request.send()
    };
    let prefix = "Index KeySchema (gsi): Invalid KeySchema: ";
    util::assert_validation(
        create(vec![
            key("a", KeyType::Hash),
            key("b", KeyType::Range),
            key("c", KeyType::Hash),
        ])
        .await,
        &format!("{prefix}All HASH key elements must precede the RANGE key elements; HASH key element c follows RANGE key element b"),
    );
    util::assert_validation(
        create(
            ["a", "b", "c", "d", "e"]
                .iter()
                .map(|n| key(n, KeyType::Hash))
                .collect(),
        )
        .await,
        &format!("{prefix}The number of HASH key elements (5) exceeds the limit of 4"),
    );
}

#[tokio::test]
async fn update_table_backfills_a_multi_attribute_gsi() {
    let client = util::client();
    let table = util::unique_name("mgsiup");
    client
        .create_table()
        .table_name(&table)
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(key("p", KeyType::Hash))
        .attribute_definitions(attr_def("p", ScalarAttributeType::S))
        .send()
        .await
        .unwrap();
    for i in 0..5 {
        put(
            &client,
            &table,
            item(&[
                ("p", s(&format!("p{i}"))),
                ("a", s("A")),
                ("b", s(if i % 2 == 0 { "even" } else { "odd" })),
                ("c", n(&(10 - i).to_string())),
            ]),
        )
        .await;
    }
    let mut create = CreateGlobalSecondaryIndexAction::builder()
        .index_name("multi")
        .projection(all());
    for k in [
        key("a", KeyType::Hash),
        key("b", KeyType::Hash),
        key("c", KeyType::Range),
    ] {
        create = create.key_schema(k);
    }
    client
        .update_table()
        .table_name(&table)
        .attribute_definitions(attr_def("a", ScalarAttributeType::S))
        .attribute_definitions(attr_def("b", ScalarAttributeType::S))
        .attribute_definitions(attr_def("c", ScalarAttributeType::N))
        .global_secondary_index_updates(
            GlobalSecondaryIndexUpdate::builder()
                .create(create.build().unwrap())
                .build(),
        )
        .send()
        .await
        .unwrap();
    util::poll_until("the index is ACTIVE", Duration::from_secs(30), || async {
        let described = client
            .describe_table()
            .table_name(&table)
            .send()
            .await
            .unwrap();
        let gsi = &described.table().unwrap().global_secondary_indexes()[0];
        (gsi.index_status() == Some(&IndexStatus::Active)).then_some(())
    })
    .await;
    let even: Vec<String> = client
        .query()
        .table_name(&table)
        .index_name("multi")
        .key_condition_expression("a = :a AND b = :b")
        .expression_attribute_values(":a", s("A"))
        .expression_attribute_values(":b", s("even"))
        .send()
        .await
        .unwrap()
        .items()
        .iter()
        .map(|it| util::get_s(it, "p").to_string())
        .collect();
    assert_eq!(even, ["p4", "p2", "p0"]);
}
