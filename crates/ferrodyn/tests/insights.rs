//! Contributor Insights (issue 21): UpdateContributorInsights,
//! DescribeContributorInsights and ListContributorInsights with DynamoDB's
//! statuses, rule names, modes, errors and its quota of 100 rules, and the
//! keys counted from real traffic (GET /ferrodyn/insights): a Zipf workload
//! over 10,000 keys ranked exactly, a throttled hot key ranked first,
//! TransactGetItems' reads counted at their transactional price.

use std::collections::HashMap;
use std::time::Duration;

use aws_sdk_dynamodb::types::{
    BillingMode, ContributorInsightsAction, ContributorInsightsMode, ContributorInsightsStatus,
    KeyType, ScalarAttributeType,
};
use aws_sdk_dynamodb::Client;
use serde_json::Value;

use crate::util::process::ServerProcess;
use crate::util::{self, assert_error, item, own_server, raw, s, txn};

/// One DynamoDB call to `server`: (status, answer).
async fn call(server: &ServerProcess, op: &str, body: Value) -> (u16, Value) {
    let target = format!("DynamoDB_20120810.{op}");
    let headers = [
        ("content-type", raw::CONTENT_TYPE),
        ("x-amz-target", target.as_str()),
        ("x-amz-date", "20261130T000000Z"),
        ("authorization", raw::AUTHORIZATION),
    ];
    let response = raw::send_to(
        server.endpoint(),
        "POST",
        "/",
        &headers,
        body.to_string().into_bytes(),
    )
    .await
    .unwrap();
    (response.status, response.json())
}

/// GET /ferrodyn/insights of `server` for `table`: rule kind → [(key, value)].
async fn top_keys(server: &ServerProcess, table: &str) -> HashMap<String, Vec<(Vec<String>, f64)>> {
    let headers = [("authorization", raw::AUTHORIZATION)];
    let path = format!("/ferrodyn/insights?table={table}");
    let report = raw::send_to(server.endpoint(), "GET", &path, &headers, Vec::new())
        .await
        .unwrap()
        .json();
    let mut out = HashMap::new();
    for rule in report["rules"].as_array().unwrap() {
        let top = rule["top"].as_array().unwrap().iter().map(|t| {
            let key = t["key"]
                .as_array()
                .unwrap()
                .iter()
                .map(|k| k.as_str().unwrap().to_string())
                .collect();
            (key, t["value"].as_f64().unwrap())
        });
        out.insert(rule["rule"].as_str().unwrap().to_string(), top.collect());
    }
    out
}

async fn enable(
    client: &Client,
    table: &str,
    index: Option<&str>,
    mode: Option<ContributorInsightsMode>,
) -> ContributorInsightsStatus {
    let answer = client
        .update_contributor_insights()
        .table_name(table)
        .set_index_name(index.map(str::to_string))
        .contributor_insights_action(ContributorInsightsAction::Enable)
        .set_contributor_insights_mode(mode)
        .send()
        .await
        .unwrap();
    answer.contributor_insights_status().unwrap().clone()
}

/// Waits until the resource's status is `wanted` (the upkeep settles it
/// within a second); returns DescribeContributorInsights' answer.
async fn settled(
    client: &Client,
    table: &str,
    index: Option<&str>,
    wanted: ContributorInsightsStatus,
) -> aws_sdk_dynamodb::operation::describe_contributor_insights::DescribeContributorInsightsOutput {
    util::poll_until("the status settles", Duration::from_secs(5), || async {
        let described = client
            .describe_contributor_insights()
            .table_name(table)
            .set_index_name(index.map(str::to_string))
            .send()
            .await
            .unwrap();
        (described.contributor_insights_status() == Some(&wanted)).then_some(described)
    })
    .await
}

/// A table keyed by `pk` (and `sk`), on demand, with a GSI `by-g` on `g`
/// and an LSI `by-l` when it has a sort key.
async fn table(client: &Client, name: &str, sort: bool) {
    let mut request = client
        .create_table()
        .table_name(name)
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(util::key("pk", KeyType::Hash))
        .attribute_definitions(util::attr_def("pk", ScalarAttributeType::S))
        .attribute_definitions(util::attr_def("g", ScalarAttributeType::S))
        .global_secondary_indexes(
            aws_sdk_dynamodb::types::GlobalSecondaryIndex::builder()
                .index_name("by-g")
                .key_schema(util::key("g", KeyType::Hash))
                .projection(
                    aws_sdk_dynamodb::types::Projection::builder()
                        .projection_type(aws_sdk_dynamodb::types::ProjectionType::KeysOnly)
                        .build(),
                )
                .build()
                .unwrap(),
        );
    if sort {
        request = request
            .key_schema(util::key("sk", KeyType::Range))
            .attribute_definitions(util::attr_def("sk", ScalarAttributeType::S))
            .attribute_definitions(util::attr_def("l", ScalarAttributeType::S))
            .local_secondary_indexes(
                aws_sdk_dynamodb::types::LocalSecondaryIndex::builder()
                    .index_name("by-l")
                    .key_schema(util::key("pk", KeyType::Hash))
                    .key_schema(util::key("l", KeyType::Range))
                    .projection(
                        aws_sdk_dynamodb::types::Projection::builder()
                            .projection_type(aws_sdk_dynamodb::types::ProjectionType::KeysOnly)
                            .build(),
                    )
                    .build()
                    .unwrap(),
            );
    }
    request.send().await.unwrap();
}

#[tokio::test]
async fn rules_statuses_and_modes_follow_dynamodb() {
    let (server, client) = own_server(&[]);
    table(&client, "orders", true).await;
    let never = client
        .describe_contributor_insights()
        .table_name("orders")
        .send()
        .await
        .unwrap();
    assert_eq!(
        never.contributor_insights_status(),
        Some(&ContributorInsightsStatus::Disabled)
    );
    assert!(
        never.last_update_date_time().is_none()
            && never.contributor_insights_rule_list().is_empty()
    );

    assert_eq!(
        enable(&client, "orders", None, None).await,
        ContributorInsightsStatus::Enabling
    );
    let on = settled(&client, "orders", None, ContributorInsightsStatus::Enabled).await;
    let rules = on.contributor_insights_rule_list();
    let kinds: Vec<&str> = rules.iter().map(|r| r.split('-').nth(1).unwrap()).collect();
    assert_eq!(kinds, ["PKC", "SKC", "PKT", "SKT"], "{rules:?}");
    assert!(
        rules[0].starts_with("DynamoDBContributorInsights-PKC-orders-"),
        "{rules:?}"
    );
    assert_eq!(
        on.contributor_insights_mode(),
        Some(&ContributorInsightsMode::AccessedAndThrottledKeys)
    );
    assert!(on.last_update_date_time().is_some());
    // Enabling what is enabled echoes it.
    assert_eq!(
        enable(&client, "orders", None, None).await,
        ContributorInsightsStatus::Enabled
    );

    // A global index by name (through the table's ARN), throttled keys only.
    let arn = client
        .describe_table()
        .table_name("orders")
        .send()
        .await
        .unwrap()
        .table()
        .unwrap()
        .table_arn()
        .unwrap()
        .to_string();
    let mode = Some(ContributorInsightsMode::ThrottledKeys);
    assert_eq!(
        enable(&client, &arn, Some("by-g"), mode).await,
        ContributorInsightsStatus::Enabling
    );
    let index = settled(
        &client,
        "orders",
        Some("by-g"),
        ContributorInsightsStatus::Enabled,
    )
    .await;
    let rules = index.contributor_insights_rule_list();
    assert_eq!(
        rules.len(),
        1,
        "a hash-only index in THROTTLED_KEYS mode has one rule: {rules:?}"
    );
    assert!(
        rules[0].starts_with("DynamoDBContributorInsights-PKT-orders-by-g-"),
        "{rules:?}"
    );

    let off = client
        .update_contributor_insights()
        .table_name("orders")
        .contributor_insights_action(ContributorInsightsAction::Disable)
        .send()
        .await
        .unwrap();
    assert_eq!(
        off.contributor_insights_status(),
        Some(&ContributorInsightsStatus::Disabling)
    );
    settled(&client, "orders", None, ContributorInsightsStatus::Disabled).await;

    let missing = client
        .describe_contributor_insights()
        .table_name("missing")
        .send()
        .await;
    assert_error(
        missing,
        "ResourceNotFoundException",
        "Requested resource not found: Table: missing not found",
    );
    let lsi = client
        .describe_contributor_insights()
        .table_name("orders")
        .index_name("by-l")
        .send()
        .await;
    assert_error(
        lsi,
        "ResourceNotFoundException",
        "Requested resource not found: Index: by-l not found for table: orders",
    );
    let (status, bad) = call(
        &server,
        "UpdateContributorInsights",
        serde_json::json!({ "TableName": "orders", "ContributorInsightsAction": "START" }),
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        bad["__type"]
            .as_str()
            .unwrap()
            .ends_with("ValidationException"),
        "{bad}"
    );
    assert!(
        bad["message"]
            .as_str()
            .unwrap()
            .contains("contributorInsightsAction"),
        "{bad}"
    );
}

#[tokio::test]
async fn list_orders_tables_before_their_indexes_pages_and_leaves_out_disabled_ones() {
    let (_server, client) = own_server(&[]);
    for name in ["beta", "alpha", "gamma"] {
        table(&client, name, false).await;
    }
    enable(&client, "beta", None, None).await;
    enable(&client, "alpha", Some("by-g"), None).await;
    enable(&client, "alpha", None, None).await;
    let listed = client.list_contributor_insights().send().await.unwrap();
    let shown: Vec<(String, Option<String>)> = listed
        .contributor_insights_summaries()
        .iter()
        .map(|s| {
            (
                s.table_name().unwrap().to_string(),
                s.index_name().map(str::to_string),
            )
        })
        .collect();
    let expected = [("alpha", None), ("alpha", Some("by-g")), ("beta", None)];
    let expected: Vec<(String, Option<String>)> = expected
        .iter()
        .map(|(t, i)| (t.to_string(), i.map(str::to_string)))
        .collect();
    assert_eq!(shown, expected, "gamma was never enabled");
    let first = client
        .list_contributor_insights()
        .max_results(2)
        .send()
        .await
        .unwrap();
    assert_eq!(first.contributor_insights_summaries().len(), 2);
    let token = first
        .next_token()
        .expect("a third summary follows")
        .to_string();
    let rest = client
        .list_contributor_insights()
        .max_results(2)
        .next_token(token)
        .send()
        .await
        .unwrap();
    assert_eq!(
        rest.contributor_insights_summaries()[0].table_name(),
        Some("beta")
    );
    assert!(rest.next_token().is_none());
    let one = client
        .list_contributor_insights()
        .table_name("alpha")
        .send()
        .await
        .unwrap();
    assert_eq!(one.contributor_insights_summaries().len(), 2);
}

#[tokio::test]
async fn rules_past_the_regions_quota_of_a_hundred_fail_with_limit_exceeded() {
    let (_server, client) = own_server(&[]);
    // A hash-only table has two rules (PKC, PKT): fifty fill the quota.
    for i in 0..51 {
        let name = format!("quota-{i:02}");
        client
            .create_table()
            .table_name(&name)
            .billing_mode(BillingMode::PayPerRequest)
            .key_schema(util::key("pk", KeyType::Hash))
            .attribute_definitions(util::attr_def("pk", ScalarAttributeType::S))
            .send()
            .await
            .unwrap();
        assert_eq!(
            enable(&client, &name, None, None).await,
            ContributorInsightsStatus::Enabling
        );
    }
    settled(
        &client,
        "quota-49",
        None,
        ContributorInsightsStatus::Enabled,
    )
    .await;
    let failed = settled(&client, "quota-50", None, ContributorInsightsStatus::Failed).await;
    let failure = failed.failure_exception().unwrap();
    assert_eq!(failure.exception_name(), Some("LimitExceededException"));
    assert_eq!(failure.exception_description(), Some("Per-account Amazon CloudWatch Contributor Insights rule limit reached. Please disable Contributor Insights for other tables/indexes OR disable Contributor Insights rules before retrying."));
}

/// `count` draws of a Zipf(1.1) distribution over keys 1..=`keys`, from a
/// fixed seed (a 64-bit LCG and the inverse of the cumulative weights).
fn zipf_draws(keys: usize, count: usize) -> Vec<usize> {
    let weights: Vec<f64> = (1..=keys).map(|k| (k as f64).powf(-1.1)).collect();
    let total: f64 = weights.iter().sum();
    let mut cumulative = Vec::with_capacity(keys);
    let mut sum = 0.0;
    for w in &weights {
        sum += w / total;
        cumulative.push(sum);
    }
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    (0..count)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let u = (state >> 11) as f64 / (1u64 << 53) as f64;
            cumulative.partition_point(|c| *c < u).min(keys - 1) + 1
        })
        .collect()
}

#[tokio::test]
async fn a_zipf_workload_over_ten_thousand_keys_is_ranked_exactly() {
    let _heavy = util::heavy_test().await;
    let (server, client) = own_server(&[]);
    table(&client, "zipf", false).await;
    enable(&client, "zipf", None, None).await;
    settled(&client, "zipf", None, ContributorInsightsStatus::Enabled).await;
    let draws = zipf_draws(10_000, 20_000);
    let mut exact: HashMap<String, f64> = HashMap::new();
    for key in &draws {
        // An eventually consistent GetItem of a missing item costs 0.5 units.
        *exact.entry(format!("k{key}")).or_default() += 0.5;
    }
    let mut tasks = Vec::new();
    for chunk in draws.chunks(draws.len() / 16 + 1) {
        let (client, chunk) = (client.clone(), chunk.to_vec());
        tasks.push(tokio::spawn(async move {
            for key in chunk {
                client
                    .get_item()
                    .table_name("zipf")
                    .key("pk", s(&format!("k{key}")))
                    .send()
                    .await
                    .unwrap();
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let mut ranking: Vec<(Vec<String>, f64)> =
        exact.into_iter().map(|(k, v)| (vec![k], v)).collect();
    ranking.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    ranking.truncate(10);
    let top = top_keys(&server, "zipf").await;
    assert_eq!(
        top["PKC"], ranking,
        "the ten most accessed keys, with their units"
    );
    assert!(top["PKT"].is_empty(), "nothing was throttled");
}

#[tokio::test]
async fn a_throttled_hot_key_ranks_first_among_throttled_keys() {
    let (server, client) = own_server(&["--partition-limits", "on", "--clock", "manual"]);
    table(&client, "hot", false).await;
    enable(&client, "hot", None, None).await;
    settled(&client, "hot", None, ContributorInsightsStatus::Enabled).await;
    let big = "x".repeat(9_000); // 9 write units a put
    let (mut refused, mut admitted_cold) = (0, 0);
    for i in 0..300 {
        let put = client
            .put_item()
            .table_name("hot")
            .item("pk", s("hot"))
            .item("d", s(&big))
            .send()
            .await;
        refused += usize::from(put.is_err());
        if i % 10 == 0 {
            let cold = client
                .put_item()
                .table_name("hot")
                .item("pk", s(&format!("cold-{i}")))
                .send()
                .await;
            admitted_cold += usize::from(cold.is_ok());
        }
    }
    assert!(refused > 100, "the hot key was throttled: {refused}");
    let top = top_keys(&server, "hot").await;
    let throttled = &top["PKT"];
    assert_eq!(
        throttled[0],
        (vec!["hot".to_string()], refused as f64),
        "{throttled:?}"
    );
    assert_eq!(
        top["PKC"][0].0,
        vec!["hot".to_string()],
        "it was the most accessed too: {:?}",
        top["PKC"]
    );
    assert!(admitted_cold > 0);
}

#[tokio::test]
async fn the_cli_enables_insights_and_shows_the_top_keys() {
    let (server, client) = own_server(&[]);
    table(&client, "cli", false).await;
    let cli = |args: &[&str]| {
        let output = util::cli_command()
            .args(args)
            .args(["--endpoint-url", server.endpoint()])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    };
    cli(&["insights", "cli", "--enable"]);
    settled(&client, "cli", None, ContributorInsightsStatus::Enabled).await;
    for key in ["a", "a", "a", "b"] {
        client
            .get_item()
            .table_name("cli")
            .key("pk", s(key))
            .consistent_read(true)
            .send()
            .await
            .unwrap();
    }
    let shown = cli(&["insights", "cli", "--minutes", "5"]);
    assert!(
        shown.starts_with("ENABLED ACCESSED_AND_THROTTLED_KEYS (last 5 minutes)"),
        "{shown}"
    );
    let a = shown
        .lines()
        .position(|l| l.contains("│ a "))
        .expect("key a listed");
    let b = shown
        .lines()
        .position(|l| l.contains("│ b "))
        .expect("key b listed");
    assert!(a < b, "a (3 units) ranks above b (1): {shown}");
    let json: Value = serde_json::from_str(&cli(&["insights", "cli", "-o", "json"])).unwrap();
    assert_eq!(json["rules"][0]["top"][0]["value"], 3.0);
}

#[tokio::test]
async fn transact_get_items_reads_count_on_the_accessed_key_rules() {
    let (server, client) = own_server(&[]);
    table(&client, "ledger", true).await;
    enable(&client, "ledger", None, None).await;
    settled(&client, "ledger", None, ContributorInsightsStatus::Enabled).await;
    // Three transactions read hot/a and hot/b; the first reads cold/c too.
    // Each Get costs twice a strongly consistent read (2 units), a
    // missing item too, and counts on the key it names.
    for round in 0..3 {
        let mut request = client.transact_get_items();
        for (pk, sk) in [("hot", "a"), ("hot", "b"), ("cold", "c")] {
            if pk == "hot" || round == 0 {
                let key = item(&[("pk", s(pk)), ("sk", s(sk))]);
                request = request.transact_items(txn::get("ledger", key));
            }
        }
        request.send().await.unwrap();
    }
    let top = top_keys(&server, "ledger").await;
    let key = |parts: &[&str]| parts.iter().map(|p| p.to_string()).collect::<Vec<_>>();
    assert_eq!(
        top["PKC"],
        vec![(key(&["hot"]), 12.0), (key(&["cold"]), 2.0)]
    );
    assert_eq!(
        top["SKC"],
        vec![
            (key(&["hot", "a"]), 6.0),
            (key(&["hot", "b"]), 6.0),
            (key(&["cold", "c"]), 2.0)
        ]
    );
    assert!(top["PKT"].is_empty(), "nothing was throttled");
}

/// Every operation refused for lack of the table's capacity counts a
/// throttled request on its key: single, batch and transactional, reads
/// and writes alike.
#[tokio::test]
async fn requests_refused_by_the_table_capacity_count_as_throttled_whatever_the_operation() {
    let (server, client) = own_server(&["--burst-seconds", "1", "--clock", "manual"]);
    client
        .create_table()
        .table_name("tight")
        .key_schema(util::key("pk", KeyType::Hash))
        .attribute_definitions(util::attr_def("pk", ScalarAttributeType::S))
        .provisioned_throughput(
            aws_sdk_dynamodb::types::ProvisionedThroughput::builder()
                .read_capacity_units(1)
                .write_capacity_units(1)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    enable(&client, "tight", None, None).await;
    settled(&client, "tight", None, ContributorInsightsStatus::Enabled).await;
    // Spend the burst of both capacities (a 3 KB item: 3 write units a put,
    // one read unit a strongly consistent get); the clock stands still.
    let big = "x".repeat(3_000);
    let mut spent = (false, false);
    for _ in 0..100 {
        let put = client
            .put_item()
            .table_name("tight")
            .item("pk", s("big"))
            .item("d", s(&big));
        spent.0 |= put.send().await.is_err();
        let get = client
            .get_item()
            .table_name("tight")
            .key("pk", s("big"))
            .consistent_read(true);
        spent.1 |= get.send().await.is_err();
    }
    assert_eq!(spent, (true, true), "both capacities spent");
    let before = top_keys(&server, "tight").await["PKT"].clone();
    let put = |pk: &str| {
        let put = aws_sdk_dynamodb::types::PutRequest::builder()
            .item("pk", s(pk))
            .build();
        aws_sdk_dynamodb::types::WriteRequest::builder()
            .put_request(put.unwrap())
            .build()
    };
    let batch_write = client
        .batch_write_item()
        .request_items("tight", vec![put("bw1"), put("bw2")])
        .send()
        .await;
    let keys = aws_sdk_dynamodb::types::KeysAndAttributes::builder()
        .keys(item(&[("pk", s("bg"))]))
        .build()
        .unwrap();
    let batch_get = client
        .batch_get_item()
        .request_items("tight", keys)
        .send()
        .await;
    let transact_write = client
        .transact_write_items()
        .transact_items(txn::put("tight", item(&[("pk", s("tw"))]), None, &[]))
        .send()
        .await;
    let transact_get = client
        .transact_get_items()
        .transact_items(txn::get("tight", item(&[("pk", s("tg"))])))
        .send()
        .await;
    assert!(batch_write.is_err() && transact_write.is_err() && transact_get.is_err());
    let unprocessed = batch_get.map(|out| out.unprocessed_keys().is_some_and(|u| !u.is_empty()));
    assert!(unprocessed.unwrap_or(true), "BatchGetItem was throttled");
    let top = top_keys(&server, "tight").await;
    for key in ["bw1", "bw2", "bg", "tw", "tg"] {
        let counted = (top["PKT"].iter()).find(|(k, _)| k == &vec![key.to_string()]);
        assert!(
            counted.is_some_and(|(_, n)| *n >= 1.0),
            "{key}: {:?} (before: {before:?})",
            top["PKT"]
        );
    }
}
