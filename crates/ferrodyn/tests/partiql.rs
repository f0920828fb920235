//! PartiQL through the SDK: ExecuteStatement (SELECT, INSERT, UPDATE,
//! DELETE), BatchExecuteStatement and ExecuteTransaction, with DynamoDB's
//! answers, errors and capacity. Where DynamoDB Local differs from AWS's
//! documentation (it returns no ConsumedCapacity for PartiQL, and reports a
//! duplicate INSERT in a transaction as ValidationError), the tests follow
//! AWS and say so in their names.

use crate::util::txn::Item;
use crate::util::{self, assert_error, get_n, get_s, item, l, m, n, ns, own_server, s, ss};
use aws_sdk_dynamodb::types::{
    AttributeValue, BatchStatementErrorCodeEnum, BatchStatementRequest, ParameterizedStatement,
    Projection, ProjectionType, ReturnConsumedCapacity, ReturnValuesOnConditionCheckFailure,
    ScalarAttributeType,
};
use aws_sdk_dynamodb::Client;

/// A table keyed by string `pk` and number `sk`.
async fn table(client: &Client) -> String {
    util::create_table(
        client,
        "partiql",
        &[
            ("pk", ScalarAttributeType::S),
            ("sk", ScalarAttributeType::N),
        ],
    )
    .await
}

async fn run(client: &Client, statement: &str, params: Vec<AttributeValue>) -> Vec<Item> {
    client
        .execute_statement()
        .statement(statement)
        .set_parameters((!params.is_empty()).then_some(params))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{statement}: {e:?}"))
        .items()
        .to_vec()
}

/// A table with items pk=a (sk 1..=3) and pk=b (sk 1).
async fn seeded(client: &Client) -> String {
    let t = table(client).await;
    for (pk, sk, tag) in [("a", 1, "x"), ("a", 2, "y"), ("a", 3, "z"), ("b", 1, "x")] {
        run(
            client,
            &format!("INSERT INTO \"{t}\" VALUE {{'pk': ?, 'sk': ?, 'tag': ?, 'n': ?}}"),
            vec![s(pk), n(&sk.to_string()), s(tag), n(&(sk * 10).to_string())],
        )
        .await;
    }
    t
}

fn sks(items: &[Item]) -> Vec<i64> {
    items.iter().map(|i| get_n(i, "sk")).collect()
}

#[tokio::test]
async fn select_by_full_key_reads_one_item_with_getitem_capacity() {
    let client = util::client();
    let t = seeded(&client).await;
    let out = client
        .execute_statement()
        .statement(format!("SELECT * FROM \"{t}\" WHERE pk = ? AND sk = ?"))
        .parameters(s("a"))
        .parameters(n("2"))
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .unwrap();
    assert_eq!(out.items().len(), 1);
    assert_eq!(get_s(&out.items()[0], "tag"), "y");
    // AWS reports the capacity of the equivalent GetItem (DynamoDB Local
    // reports none): half a unit for an eventually consistent read.
    let capacity = out.consumed_capacity().expect("capacity follows AWS");
    assert_eq!(capacity.capacity_units(), Some(0.5));
    assert_eq!(capacity.table_name(), Some(t.as_str()));
    let out = client
        .execute_statement()
        .statement(format!("SELECT * FROM \"{t}\" WHERE pk = 'a' AND sk = 2"))
        .consistent_read(true)
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .unwrap();
    assert_eq!(out.consumed_capacity().unwrap().capacity_units(), Some(1.0));
    let missing = run(
        &client,
        &format!("SELECT * FROM \"{t}\" WHERE pk = 'a' AND sk = 9"),
        vec![],
    )
    .await;
    assert!(missing.is_empty());
}

#[tokio::test]
async fn partition_key_equality_runs_as_a_query_in_sort_key_order_or_reversed() {
    let client = util::client();
    let t = seeded(&client).await;
    let q = |cond: &str| format!("SELECT * FROM \"{t}\" WHERE {cond}");
    assert_eq!(sks(&run(&client, &q("pk = 'a'"), vec![]).await), [1, 2, 3]);
    assert_eq!(
        sks(&run(
            &client,
            &format!("{} ORDER BY sk DESC", q("pk = 'a'")),
            vec![]
        )
        .await),
        [3, 2, 1]
    );
    assert_eq!(
        sks(&run(
            &client,
            &format!("{} ORDER BY sk ASC", q("pk = 'a'")),
            vec![]
        )
        .await),
        [1, 2, 3]
    );
    assert_eq!(
        sks(&run(&client, &q("pk = 'a' AND sk > 1"), vec![]).await),
        [2, 3]
    );
    assert_eq!(
        sks(&run(&client, &q("sk BETWEEN 2 AND 3 AND pk = 'a'"), vec![]).await),
        [2, 3]
    );
    assert_eq!(
        sks(&run(&client, &q("pk = 'a' AND sk >= 1 AND sk < 3"), vec![]).await),
        [1, 2],
        "a second sort-key predicate is a filter"
    );
    assert_eq!(
        sks(&run(&client, &q("pk = 'a' AND tag <> 'y'"), vec![]).await),
        [1, 3]
    );
    let capacity = client
        .execute_statement()
        .statement(q("pk = 'a'"))
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .unwrap();
    assert_eq!(
        capacity.consumed_capacity().unwrap().capacity_units(),
        Some(0.5),
        "three small items read by one Query round up to one 4 KB unit"
    );
}

#[tokio::test]
async fn where_operators_filter_a_scan() {
    let client = util::client();
    let t = seeded(&client).await;
    run(
        &client,
        &format!("UPDATE \"{t}\" SET tags = <<'red', 'blue'>>, \"list\" = [1, 2, 3] WHERE pk = 'a' AND sk = 1"),
        vec![],
    )
    .await;
    let count = |cond: &'static str| {
        let client = client.clone();
        let t = t.clone();
        async move {
            run(
                &client,
                &format!("SELECT * FROM \"{t}\" WHERE {cond}"),
                vec![],
            )
            .await
            .len()
        }
    };
    assert_eq!(count("tag = 'x'").await, 2);
    assert_eq!(count("tag <> 'x'").await, 2);
    assert_eq!(count("n < 20").await, 2);
    assert_eq!(count("n <= 20").await, 3);
    assert_eq!(count("n > 20").await, 1);
    assert_eq!(count("n >= 20").await, 2);
    assert_eq!(count("n BETWEEN 15 AND 30").await, 2);
    assert_eq!(count("tag IN ['y', 'z']").await, 2);
    assert_eq!(count("tag IN ('y')").await, 1);
    assert_eq!(count("begins_with(pk, 'b')").await, 1);
    assert_eq!(count("contains(tags, 'red')").await, 1);
    assert_eq!(count("attribute_type(tags, 'SS')").await, 1);
    assert_eq!(count("size(\"list\") = 3").await, 1);
    assert_eq!(count("tags IS MISSING").await, 3);
    assert_eq!(count("tags IS NOT MISSING").await, 1);
    assert_eq!(count("tag = 'x' AND NOT pk = 'a'").await, 1);
    assert_eq!(count("tag = 'y' OR (tag = 'x' AND sk = 1)").await, 3);
    assert_eq!(count("NOT (tag = 'y' OR tag = 'z')").await, 2);
    assert_eq!(
        count("sk = 1 OR pk = 'a'").await,
        4,
        "OR on the key is a scan"
    );
}

#[tokio::test]
async fn projections_take_attributes_and_nested_paths() {
    let client = util::client();
    let t = table(&client).await;
    run(
        &client,
        &format!("INSERT INTO \"{t}\" VALUE {{'pk': 'p', 'sk': 1, 'a': {{'b': [10, 20, 30]}}, 'c': 'see', 'd': 'dee'}}"),
        vec![],
    )
    .await;
    let items = run(
        &client,
        &format!("SELECT c, d FROM \"{t}\" WHERE pk = 'p' AND sk = 1"),
        vec![],
    )
    .await;
    assert_eq!(items, vec![item(&[("c", s("see")), ("d", s("dee"))])]);
    // A nested path is answered under its last name, as DynamoDB does.
    let items = run(
        &client,
        &format!("SELECT a.b[1], \"c\" FROM \"{t}\" WHERE pk = 'p'"),
        vec![],
    )
    .await;
    assert_eq!(items, vec![item(&[("b[1]", n("20")), ("c", s("see"))])]);
    let items = run(&client, &format!("SELECT a.b FROM \"{t}\""), vec![]).await;
    assert_eq!(
        items,
        vec![item(&[("b", l(vec![n("10"), n("20"), n("30")]))])]
    );
}

#[tokio::test]
async fn select_from_an_index_queries_it() {
    let client = util::client();
    let t = util::unique_name("partiql-gsi");
    client
        .create_table()
        .table_name(&t)
        .billing_mode(aws_sdk_dynamodb::types::BillingMode::PayPerRequest)
        .key_schema(util::key("pk", aws_sdk_dynamodb::types::KeyType::Hash))
        .attribute_definitions(util::attr_def("pk", ScalarAttributeType::S))
        .attribute_definitions(util::attr_def("email", ScalarAttributeType::S))
        .global_secondary_indexes(
            aws_sdk_dynamodb::types::GlobalSecondaryIndex::builder()
                .index_name("byEmail")
                .key_schema(util::key("email", aws_sdk_dynamodb::types::KeyType::Hash))
                .projection(
                    Projection::builder()
                        .projection_type(ProjectionType::All)
                        .build(),
                )
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    run(
        &client,
        &format!("INSERT INTO \"{t}\" VALUE {{'pk': 'u1', 'email': 'ada@x.io'}}"),
        vec![],
    )
    .await;
    run(
        &client,
        &format!("INSERT INTO \"{t}\" VALUE {{'pk': 'u2', 'email': 'bob@x.io'}}"),
        vec![],
    )
    .await;
    let items = run(
        &client,
        &format!("SELECT pk FROM \"{t}\".\"byEmail\" WHERE email = ?"),
        vec![s("bob@x.io")],
    )
    .await;
    assert_eq!(items, vec![item(&[("pk", s("u2"))])]);
    assert_error(
        client
            .execute_statement()
            .statement(format!("SELECT * FROM \"{t}\".\"nope\" WHERE email = 'a'"))
            .send()
            .await,
        "ValidationException",
        // moto's AWS-verified test_execute_statement_on_unknown_gsi_table:
        // PartiQL names no index (Query and Scan do).
        "The table does not have the specified index",
    );
}

#[tokio::test]
async fn order_by_needs_a_partition_key_equality_on_a_key_attribute() {
    let client = util::client();
    let t = seeded(&client).await;
    let error = |statement: String| {
        let client = client.clone();
        async move { client.execute_statement().statement(statement).send().await }
    };
    assert_error(
        error(format!("SELECT * FROM \"{t}\" ORDER BY sk")).await,
        "ValidationException",
        "Must have WHERE clause in the statement when using ORDER BY clause.",
    );
    assert_error(
        error(format!("SELECT * FROM \"{t}\" WHERE tag = 'x' ORDER BY sk")).await,
        "ValidationException",
        "Must have at least one non-optional hash key condition in WHERE clause when using ORDER BY clause.",
    );
    assert_error(
        error(format!("SELECT * FROM \"{t}\" WHERE pk = 'a' ORDER BY tag")).await,
        "ValidationException",
        "Variable reference tag in ORDER BY clause must be part of the primary key",
    );
}

#[tokio::test]
async fn limit_and_next_token_page_through_every_item_once() {
    let client = util::client();
    let t = seeded(&client).await;
    for statement in [
        format!("SELECT * FROM \"{t}\""),
        format!("SELECT * FROM \"{t}\" WHERE pk = 'a'"),
    ] {
        let mut seen = Vec::new();
        let mut token = None;
        let mut pages = 0;
        loop {
            let out = client
                .execute_statement()
                .statement(&statement)
                .limit(1)
                .set_next_token(token)
                .send()
                .await
                .unwrap();
            pages += 1;
            seen.extend(
                out.items()
                    .iter()
                    .map(|i| (get_s(i, "pk").to_string(), get_n(i, "sk"))),
            );
            assert_eq!(
                out.next_token().is_some(),
                out.last_evaluated_key().is_some()
            );
            token = out.next_token().map(str::to_string);
            if token.is_none() {
                break;
            }
        }
        seen.sort();
        seen.dedup();
        let expected = if statement.contains("WHERE") { 3 } else { 4 };
        assert_eq!(seen.len(), expected, "{statement}");
        assert!(pages >= expected, "one item per page");
    }
    assert_error(
        client
            .execute_statement()
            .statement(format!("SELECT * FROM \"{t}\""))
            .next_token("not a token")
            .send()
            .await,
        "ValidationException",
        "The provided NextToken is not valid",
    );
}

#[tokio::test]
async fn insert_of_an_existing_key_is_a_duplicate_item_exception_as_the_aws_model_names_it_not_ddb_locals_duplicate_item(
) {
    let client = util::client();
    let t = table(&client).await;
    let insert = format!("INSERT INTO \"{t}\" VALUE {{'pk': 'k', 'sk': 1, 'v': 1}}");
    assert!(run(&client, &insert, vec![]).await.is_empty());
    assert_error(
        client.execute_statement().statement(&insert).send().await,
        "DuplicateItemException",
        "Duplicate primary key exists in table",
    );
    assert_error(
        client
            .execute_statement()
            .statement(format!("INSERT INTO \"{t}\" VALUE {{'pk': 'k'}}"))
            .send()
            .await,
        "ValidationException",
        "Key attribute should be present in the item: Key sk",
    );
    assert_error(
        client
            .execute_statement()
            .statement(format!(
                "INSERT INTO \"{t}\" VALUE {{'pk': 'k', 'sk': 'one'}}"
            ))
            .send()
            .await,
        "ValidationException",
        "Key attribute's data type should match its data type in table's schema: Key sk",
    );
    assert_error(
        client
            .execute_statement()
            .statement(format!("INSERT INTO \"{t}\" VALUE [1]"))
            .send()
            .await,
        "ValidationException",
        "Unsupported format in item expression. Please use struct format {...} to express item values for insert statement.",
    );
}

#[tokio::test]
async fn literals_keep_every_type_and_38_digit_numbers_exactly() {
    let client = util::client();
    let t = table(&client).await;
    run(
        &client,
        &format!(
            "INSERT INTO \"{t}\" VALUE {{'pk': 'it''s', 'sk': -1.50, 'big': 12345678901234567890123456789012345678, \
             'tiny': 0.00000000000000000000000000000000000001, 'yes': TRUE, 'no': false, 'none': NULL, \
             'map': {{'k': [1, 'two', <<3>>]}}, 'ns': <<1, 2.5>>, 'ss': <<'a', 'b'>>, 'bin': ?}}"
        ),
        vec![AttributeValue::Bs(vec![aws_sdk_dynamodb::primitives::Blob::new(b"\x00\x01")])],
    )
    .await;
    let items = run(
        &client,
        &format!("SELECT * FROM \"{t}\" WHERE pk = 'it''s' AND sk = -1.5"),
        vec![],
    )
    .await;
    let got = util::sorted_sets(&items[0]);
    assert_eq!(got["pk"], s("it's"));
    assert_eq!(got["sk"], n("-1.5"));
    assert_eq!(got["big"], n("12345678901234567890123456789012345678"));
    assert_eq!(got["tiny"], n("0.00000000000000000000000000000000000001"));
    assert_eq!(got["yes"], AttributeValue::Bool(true));
    assert_eq!(got["no"], AttributeValue::Bool(false));
    assert_eq!(got["none"], AttributeValue::Null(true));
    assert_eq!(
        got["map"],
        m(&[("k", l(vec![n("1"), s("two"), ns(&["3"])]))])
    );
    assert_eq!(got["ns"], ns(&["1", "2.5"]));
    assert_eq!(got["ss"], ss(&["a", "b"]));
    assert!(matches!(got["bin"], AttributeValue::Bs(_)));
    assert_error(
        client
            .execute_statement()
            .statement(format!("INSERT INTO \"{t}\" VALUE {{'pk': 'x', 'sk': 123456789012345678901234567890123456789}}"))
            .send()
            .await,
        "ValidationException",
        "Attempting to store more than 38 significant digits in a Number",
    );
}

#[tokio::test]
async fn parameters_are_bound_in_order_and_counted() {
    let client = util::client();
    let t = seeded(&client).await;
    let items = run(
        &client,
        &format!("SELECT * FROM \"{t}\" WHERE pk = ? AND sk BETWEEN ? AND ?"),
        vec![s("a"), n("2"), n("3")],
    )
    .await;
    assert_eq!(sks(&items), [2, 3]);
    for params in [vec![s("a")], vec![s("a"), n("1"), n("2"), n("3")]] {
        assert_error(
            client
                .execute_statement()
                .statement(format!(
                    "SELECT * FROM \"{t}\" WHERE pk = ? AND sk BETWEEN ? AND ?"
                ))
                .set_parameters(Some(params))
                .send()
                .await,
            "ValidationException",
            "Number of parameters in request and statement don't match.",
        );
    }
}

async fn one(client: &Client, t: &str) -> Item {
    run(
        client,
        &format!("SELECT * FROM \"{t}\" WHERE pk = 'u' AND sk = 1"),
        vec![],
    )
    .await
    .pop()
    .expect("the item exists")
}

#[tokio::test]
async fn update_sets_removes_and_computes_like_update_item() {
    let client = util::client();
    let t = table(&client).await;
    run(
        &client,
        &format!("INSERT INTO \"{t}\" VALUE {{'pk': 'u', 'sk': 1, 'n': 5, 'l': [1], 'm': {{'a': 1}}, 's': <<'x'>>, 'gone': 1}}"),
        vec![],
    )
    .await;
    run(
        &client,
        &format!(
            "UPDATE \"{t}\" SET n = n + 10 SET l = list_append(l, [2, 3]), m.b = 'new' \
             SET s = set_add(s, <<'y', 'z'>>) REMOVE gone WHERE pk = 'u' AND sk = 1"
        ),
        vec![],
    )
    .await;
    let got = util::sorted_sets(&one(&client, &t).await);
    assert_eq!(got["n"], n("15"));
    assert_eq!(got["l"], l(vec![n("1"), n("2"), n("3")]));
    assert_eq!(got["m"], m(&[("a", n("1")), ("b", s("new"))]));
    assert_eq!(got["s"], ss(&["x", "y", "z"]));
    assert!(!got.contains_key("gone"));
    run(
        &client,
        &format!("UPDATE \"{t}\" SET n = n - ?, s = set_delete(s, <<'x'>>) REMOVE l[0] WHERE pk = 'u' AND sk = 1"),
        vec![n("20")],
    )
    .await;
    let got = util::sorted_sets(&one(&client, &t).await);
    assert_eq!(got["n"], n("-5"));
    assert_eq!(got["s"], ss(&["y", "z"]));
    assert_eq!(got["l"], l(vec![n("2"), n("3")]));
    assert_error(
        client
            .execute_statement()
            .statement(format!(
                "UPDATE \"{t}\" SET s = set_add(other, <<'q'>>) WHERE pk = 'u' AND sk = 1"
            ))
            .send()
            .await,
        "ValidationException",
        "The first argument to SET_ADD must equal the assignment value",
    );
    assert_error(
        client
            .execute_statement()
            .statement(format!("UPDATE \"{t}\" SET pk = 'v' WHERE pk = 'u' AND sk = 1"))
            .send()
            .await,
        "ValidationException",
        "One or more parameter values were invalid: Cannot update attribute pk. This attribute is part of the key",
    );
}

#[tokio::test]
async fn update_returning_gives_old_or_new_whole_or_modified_attributes() {
    let client = util::client();
    let t = table(&client).await;
    run(
        &client,
        &format!(
            "INSERT INTO \"{t}\" VALUE {{'pk': 'u', 'sk': 1, 'a': 1, 'm': {{'x': 1, 'y': 2}}}}"
        ),
        vec![],
    )
    .await;
    let update = |returning: &'static str, value: &'static str| {
        let client = client.clone();
        let t = t.clone();
        async move {
            run(
                &client,
                &format!("UPDATE \"{t}\" SET a = {value}, m.x = {value} WHERE pk = 'u' AND sk = 1 {returning}"),
                vec![],
            )
            .await
        }
    };
    assert_eq!(update("", "2").await, Vec::<Item>::new());
    let old = update("RETURNING ALL OLD *", "3").await;
    assert_eq!(get_n(&old[0], "a"), 2);
    assert_eq!(old[0].len(), 4);
    let new = update("RETURNING ALL NEW *", "4").await;
    assert_eq!(get_n(&new[0], "a"), 4);
    // MODIFIED returns each changed top-level attribute whole.
    let modified = update("RETURNING MODIFIED OLD *", "5").await;
    assert_eq!(
        modified,
        vec![item(&[
            ("a", n("4")),
            ("m", m(&[("x", n("4")), ("y", n("2"))]))
        ])]
    );
    let modified = update("RETURNING MODIFIED NEW *", "6").await;
    assert_eq!(
        modified,
        vec![item(&[
            ("a", n("6")),
            ("m", m(&[("x", n("6")), ("y", n("2"))]))
        ])]
    );
}

#[tokio::test]
async fn update_needs_the_full_key_and_an_existing_item_and_its_other_predicates() {
    let client = util::client();
    let t = seeded(&client).await;
    let statement = |text: String| client.execute_statement().statement(text);
    assert_error(
        statement(format!("UPDATE \"{t}\" SET v = 1 WHERE pk = 'a'"))
            .send()
            .await,
        "ValidationException",
        "Where clause does not contain a mandatory equality on all key attributes",
    );
    assert_error(
        statement(format!(
            "UPDATE \"{t}\" SET v = 1 WHERE pk = 'zz' AND sk = 1"
        ))
        .send()
        .await,
        "ConditionalCheckFailedException",
        "The conditional request failed",
    );
    let failed = statement(format!(
        "UPDATE \"{t}\" SET v = 1 WHERE pk = 'a' AND sk = 1 AND tag = 'nope'"
    ))
    .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
    .send()
    .await
    .unwrap_err()
    .into_service_error();
    match failed {
        aws_sdk_dynamodb::operation::execute_statement::ExecuteStatementError::ConditionalCheckFailedException(e) => {
            assert_eq!(get_s(e.item().expect("ALL_OLD item"), "tag"), "x");
        }
        other => panic!("expected ConditionalCheckFailedException, got {other:?}"),
    }
    run(
        &client,
        &format!("UPDATE \"{t}\" SET v = 1 WHERE pk = 'a' AND sk = 1 AND tag = 'x'"),
        vec![],
    )
    .await;
    let items = run(
        &client,
        &format!("SELECT v FROM \"{t}\" WHERE pk = 'a' AND sk = 1"),
        vec![],
    )
    .await;
    assert_eq!(items, vec![item(&[("v", n("1"))])]);
}

#[tokio::test]
async fn delete_of_an_absent_key_is_a_no_op_and_other_predicates_are_conditions() {
    let client = util::client();
    let t = seeded(&client).await;
    assert!(run(
        &client,
        &format!("DELETE FROM \"{t}\" WHERE pk = 'zz' AND sk = 1"),
        vec![]
    )
    .await
    .is_empty());
    assert!(
        run(
            &client,
            &format!("DELETE FROM \"{t}\" WHERE pk = 'zz' AND sk = 1 AND tag = 'q'"),
            vec![]
        )
        .await
        .is_empty(),
        "an absent item is no failure, whatever the predicates"
    );
    assert_error(
        client
            .execute_statement()
            .statement(format!(
                "DELETE FROM \"{t}\" WHERE pk = 'a' AND sk = 1 AND tag = 'q'"
            ))
            .send()
            .await,
        "ConditionalCheckFailedException",
        "The conditional request failed",
    );
    let old = run(
        &client,
        &format!("DELETE FROM \"{t}\" WHERE pk = 'a' AND sk = 1 AND (tag = 'q' OR n = 10) RETURNING ALL OLD *"),
        vec![],
    )
    .await;
    assert_eq!(get_s(&old[0], "tag"), "x");
    assert!(run(
        &client,
        &format!("SELECT * FROM \"{t}\" WHERE pk = 'a' AND sk = 1"),
        vec![]
    )
    .await
    .is_empty());
    assert_error(
        client
            .execute_statement()
            .statement(format!("DELETE FROM \"{t}\" WHERE pk = 'a' AND sk = 2 RETURNING ALL NEW *"))
            .send()
            .await,
        "ValidationException",
        "Invalid returning clause: RETURNING ALL NEW *. Only RETURNING ALL OLD * is allowed in DELETE statements.",
    );
}

#[tokio::test]
async fn malformed_statements_are_validation_errors_with_their_position() {
    let client = util::client();
    let t = table(&client).await;
    let cases = [
        ("SELEC * FROM t".to_string(), "Statement wasn't well formed, can't be processed: unexpected 'SELEC', expected SELECT, INSERT, UPDATE, DELETE or EXISTS at line 1, column 1".to_string()),
        (format!("SELECT * FROM \"{t}\" WHERE"), "Statement wasn't well formed, can't be processed: expected a value or an attribute at the end of the statement".to_string()),
        (format!("SELECT * FROM \"{t}\"\nWHERE pk = 'a' 'b'"), "Statement wasn't well formed, can't be processed: unexpected string 'b' after the end of the statement at line 2, column 16".to_string()),
        (format!("SELECT * FROM \"{t}\" LIMIT 3"), format!("Unsupported clause: LIMIT at line 1, column {}", 18 + t.len())),
        (format!("SELECT * FROM \"{t}\" WHERE foo(pk)"), "Unrecognized function: foo".to_string()),
        (format!("SELECT * FROM \"{t}\" WHERE pk"), "WHERE clause must contain an expression that resolves to a boolean".to_string()),
        (format!("SELECT * FROM \"{t}\" WHERE pk = 1"), "Key attribute's data type should match its data type in table's schema: Key pk".to_string()),
    ];
    for (statement, message) in cases {
        assert_error(
            client
                .execute_statement()
                .statement(&statement)
                .send()
                .await,
            "ValidationException",
            &message,
        );
    }
}

#[tokio::test]
async fn a_4096_deep_statement_is_refused_with_a_clear_error() {
    let client = util::client();
    let t = table(&client).await;
    // 4,096 levels fit in a statement's 8,192 characters only unclosed: the
    // depth limit stops the parser long before the end.
    for deep in [
        format!("SELECT * FROM \"{t}\" WHERE pk = {}'a'", "(".repeat(4096)),
        format!("INSERT INTO \"{t}\" VALUE {}1", "[".repeat(4096)),
        format!(
            "INSERT INTO \"{t}\" VALUE {}1",
            "<<".repeat(2048) + &"{'a': ".repeat(600)
        ),
    ] {
        let error = util::service_error(client.execute_statement().statement(&deep).send().await);
        assert_eq!(error.code, "ValidationException");
        assert!(
            error.message.starts_with("Statement wasn't well formed, can't be processed: the statement is nested more than 100 levels deep at line 1, column "),
            "{}",
            error.message
        );
    }
    // Closed, it is longer than DynamoDB's 8,192-character limit.
    let closed = format!(
        "SELECT * FROM \"{t}\" WHERE pk = {}'a'{}",
        "(".repeat(4096),
        ")".repeat(4096)
    );
    let error = util::service_error(client.execute_statement().statement(&closed).send().await);
    assert!(error.message.ends_with("at 'statement' failed to satisfy constraint: Member must have length less than or equal to 8192"));
    // A chain of 1,600 ANDs (or ORs) is as long as a statement allows and
    // as deep as it is long: refused (its filter exceeds DynamoDB's 4 KB
    // expression limit), never a stack overflow.
    for joiner in [" AND ", " OR "] {
        let chain = vec!["a=1"; 1600].join(joiner);
        let statement = format!("SELECT * FROM \"{t}\" WHERE {chain}");
        let statement = &statement[..statement[..8192].rfind(joiner).unwrap()];
        let error =
            util::service_error(client.execute_statement().statement(statement).send().await);
        assert!(
            error.message.starts_with(
                "Invalid FilterExpression: Expression size has exceeded the maximum allowed size"
            ),
            "{}",
            error.message
        );
    }
    // The server is still answering.
    assert!(run(&client, &format!("SELECT * FROM \"{t}\""), vec![])
        .await
        .is_empty());
}

#[tokio::test]
async fn an_unknown_table_is_resource_not_found() {
    let client = util::client();
    for statement in [
        "SELECT * FROM \"partiql-no-such-table\"",
        "INSERT INTO \"partiql-no-such-table\" VALUE {'k': 1}",
        "DELETE FROM \"partiql-no-such-table\" WHERE k = 1",
    ] {
        assert_error(
            client.execute_statement().statement(statement).send().await,
            "ResourceNotFoundException",
            "Requested resource not found",
        );
    }
}

fn batch_statement(statement: String) -> BatchStatementRequest {
    BatchStatementRequest::builder()
        .statement(statement)
        .build()
        .unwrap()
}

#[tokio::test]
async fn batch_reads_by_full_key_answer_per_statement() {
    let client = util::client();
    let t = seeded(&client).await;
    let out = client
        .batch_execute_statement()
        .statements(batch_statement(format!(
            "SELECT * FROM \"{t}\" WHERE pk = 'a' AND sk = 2"
        )))
        .statements(batch_statement(format!(
            "SELECT * FROM \"{t}\" WHERE pk = 'a' AND sk = 9"
        )))
        .statements(batch_statement(format!(
            "SELECT * FROM \"{t}\" WHERE pk = 'a'"
        )))
        .statements(
            BatchStatementRequest::builder()
                .statement(format!("SELECT tag FROM \"{t}\" WHERE pk = ? AND sk = ?"))
                .parameters(s("b"))
                .parameters(n("1"))
                .consistent_read(true)
                .build()
                .unwrap(),
        )
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .unwrap();
    let r = out.responses();
    assert_eq!(r.len(), 4);
    assert_eq!(get_s(r[0].item().unwrap(), "tag"), "y");
    assert_eq!(r[0].table_name(), Some(t.as_str()));
    assert!(r[1].item().is_none() && r[1].error().is_none());
    let error = r[2].error().expect("a partition read is refused");
    assert_eq!(
        error.code(),
        Some(&BatchStatementErrorCodeEnum::ValidationError)
    );
    assert_eq!(
        error.message(),
        Some("Only single item select is supported")
    );
    assert_eq!(r[3].item().unwrap(), &item(&[("tag", s("x"))]));
    // 0.5 + 0.5 (missing item) + 1.0 (consistent).
    assert_eq!(out.consumed_capacity()[0].capacity_units(), Some(2.0));
}

#[tokio::test]
async fn batch_writes_fail_one_statement_at_a_time() {
    let client = util::client();
    let t = seeded(&client).await;
    let out = client
        .batch_execute_statement()
        .statements(batch_statement(format!(
            "INSERT INTO \"{t}\" VALUE {{'pk': 'a', 'sk': 1}}"
        )))
        .statements(
            BatchStatementRequest::builder()
                .statement(format!(
                    "UPDATE \"{t}\" SET v = 1 WHERE pk = 'a' AND sk = 2 AND tag = 'no'"
                ))
                .return_values_on_condition_check_failure(
                    ReturnValuesOnConditionCheckFailure::AllOld,
                )
                .build()
                .unwrap(),
        )
        .statements(batch_statement(format!(
            "INSERT INTO \"{t}\" VALUE {{'pk': 'c', 'sk': 1}}"
        )))
        .statements(batch_statement(format!(
            "DELETE FROM \"{t}\" WHERE pk = 'b' AND sk = 1"
        )))
        .statements(batch_statement("UPDATE".to_string()))
        .send()
        .await
        .unwrap();
    let r = out.responses();
    assert_eq!(r.len(), 5);
    let code = |i: usize| r[i].error().and_then(|e| e.code()).cloned();
    assert_eq!(code(0), Some(BatchStatementErrorCodeEnum::DuplicateItem));
    assert_eq!(
        code(1),
        Some(BatchStatementErrorCodeEnum::ConditionalCheckFailed)
    );
    assert_eq!(get_s(r[1].error().unwrap().item().unwrap(), "tag"), "y");
    assert_eq!(code(2), None);
    assert_eq!(code(3), None);
    assert_eq!(code(4), Some(BatchStatementErrorCodeEnum::ValidationError));
    let keys: Vec<(String, i64)> = util::scan_all(&client, &t, None)
        .await
        .iter()
        .map(|i| (get_s(i, "pk").to_string(), get_n(i, "sk")))
        .collect();
    assert!(keys.contains(&("c".to_string(), 1)));
    assert!(!keys.contains(&("b".to_string(), 1)));
}

#[tokio::test]
async fn batch_refuses_mixed_reads_and_writes_and_more_than_25() {
    let client = util::client();
    let t = seeded(&client).await;
    assert_error(
        client
            .batch_execute_statement()
            .statements(batch_statement(format!(
                "SELECT * FROM \"{t}\" WHERE pk = 'a' AND sk = 1"
            )))
            .statements(batch_statement(format!(
                "DELETE FROM \"{t}\" WHERE pk = 'a' AND sk = 1"
            )))
            .send()
            .await,
        "ValidationException",
        "Read and write requests together in the same batch is not supported.",
    );
    assert_error(
        client
            .batch_execute_statement()
            .statements(batch_statement(format!(
                "UPDATE \"{t}\" SET v = 1 WHERE pk = 'a' AND sk = 1"
            )))
            .statements(batch_statement(format!(
                "DELETE FROM \"{t}\" WHERE sk = 1 AND pk = 'a'"
            )))
            .send()
            .await,
        "ValidationException",
        "Provided list of item keys contains duplicates",
    );
    let mut request = client.batch_execute_statement();
    for i in 0..26 {
        request = request.statements(batch_statement(format!(
            "SELECT * FROM \"{t}\" WHERE pk = 'a' AND sk = {i}"
        )));
    }
    // AWS echoes the list itself (as Java objects; Ferrodyn as JSON).
    let error = util::service_error(request.send().await);
    assert_eq!(error.code, "ValidationException");
    assert!(
        error.message.starts_with("1 validation error detected: Value '[{") && error.message.ends_with(
            "}]' at 'statements' failed to satisfy constraint: Member must have length less than or equal to 25"
        ),
        "{error:?}"
    );
}

fn statement(text: String, params: Vec<AttributeValue>) -> ParameterizedStatement {
    ParameterizedStatement::builder()
        .statement(text)
        .set_parameters((!params.is_empty()).then_some(params))
        .build()
        .unwrap()
}

fn transaction_error<T: std::fmt::Debug>(
    result: Result<
        T,
        aws_sdk_dynamodb::error::SdkError<
            aws_sdk_dynamodb::operation::execute_transaction::ExecuteTransactionError,
            aws_sdk_dynamodb::config::http::HttpResponse,
        >,
    >,
) -> (String, Vec<aws_sdk_dynamodb::types::CancellationReason>) {
    match result.unwrap_err().into_service_error() {
        aws_sdk_dynamodb::operation::execute_transaction::ExecuteTransactionError::TransactionCanceledException(e) => (
            e.message().unwrap_or_default().to_string(),
            e.cancellation_reasons().to_vec(),
        ),
        other => panic!("expected TransactionCanceledException, got {other:?}"),
    }
}

#[tokio::test]
async fn transaction_writes_all_or_nothing_with_reasons_in_order_duplicate_item_as_aws_documents() {
    let client = util::client();
    let t = seeded(&client).await;
    let result = client
        .execute_transaction()
        .transact_statements(statement(
            format!("INSERT INTO \"{t}\" VALUE {{'pk': 'new', 'sk': 1}}"),
            vec![],
        ))
        .transact_statements(statement(
            format!("INSERT INTO \"{t}\" VALUE {{'pk': 'a', 'sk': 1}}"),
            vec![],
        ))
        .transact_statements(statement(
            format!("UPDATE \"{t}\" SET v = 1 WHERE pk = 'zz' AND sk = 1"),
            vec![],
        ))
        .transact_statements(statement(
            format!("DELETE FROM \"{t}\" WHERE pk = 'b' AND sk = 1"),
            vec![],
        ))
        .send()
        .await;
    let (message, reasons) = transaction_error(result);
    let codes: Vec<&str> = reasons.iter().map(|r| r.code().unwrap_or("?")).collect();
    // DynamoDB Local reports the duplicate INSERT as ValidationError; the
    // batch API's documented code for it is DuplicateItem, used here too.
    assert_eq!(
        codes,
        ["None", "DuplicateItem", "ConditionalCheckFailed", "None"]
    );
    assert_eq!(
        message,
        "Transaction cancelled, please refer cancellation reasons for specific reasons [None, DuplicateItem, ConditionalCheckFailed, None]"
    );
    assert_eq!(
        reasons[1].message(),
        Some("Duplicate primary key exists in table")
    );
    // Nothing was written or deleted.
    assert_eq!(util::scan_all(&client, &t, None).await.len(), 4);

    let out = client
        .execute_transaction()
        .transact_statements(statement(
            format!("INSERT INTO \"{t}\" VALUE {{'pk': 'new', 'sk': 1}}"),
            vec![],
        ))
        .transact_statements(statement(
            format!("UPDATE \"{t}\" SET v = ? WHERE pk = ? AND sk = 1 AND tag = 'x'"),
            vec![n("5"), s("a")],
        ))
        .transact_statements(statement(
            format!("DELETE FROM \"{t}\" WHERE pk = 'b' AND sk = 1"),
            vec![],
        ))
        .transact_statements(statement(
            format!("EXISTS(SELECT * FROM \"{t}\" WHERE pk = 'a' AND sk = 2 AND tag = 'y')"),
            vec![],
        ))
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .unwrap();
    // Transactional writes cost double: 2 units for each of the four.
    assert_eq!(out.consumed_capacity()[0].capacity_units(), Some(8.0));
    let keys: Vec<(String, i64)> = util::scan_all(&client, &t, None)
        .await
        .iter()
        .map(|i| (get_s(i, "pk").to_string(), get_n(i, "sk")))
        .collect();
    assert!(keys.contains(&("new".to_string(), 1)));
    assert!(!keys.contains(&("b".to_string(), 1)));
}

#[tokio::test]
async fn transaction_exists_is_a_condition_check() {
    let client = util::client();
    let t = seeded(&client).await;
    let result = client
        .execute_transaction()
        .transact_statements(
            ParameterizedStatement::builder()
                .statement(format!(
                    "EXISTS(SELECT * FROM \"{t}\" WHERE pk = 'a' AND sk = 1 AND tag = 'other')"
                ))
                .return_values_on_condition_check_failure(
                    ReturnValuesOnConditionCheckFailure::AllOld,
                )
                .build()
                .unwrap(),
        )
        .transact_statements(statement(
            format!(
                "EXISTS(SELECT * FROM \"{t}\" WHERE pk = 'none' AND sk = 1 AND tag IS MISSING)"
            ),
            vec![],
        ))
        .transact_statements(statement(
            format!("INSERT INTO \"{t}\" VALUE {{'pk': 'n', 'sk': 1}}"),
            vec![],
        ))
        .send()
        .await;
    let (_, reasons) = transaction_error(result);
    let codes: Vec<&str> = reasons.iter().map(|r| r.code().unwrap_or("?")).collect();
    assert_eq!(
        codes,
        ["ConditionalCheckFailed", "ConditionalCheckFailed", "None"]
    );
    assert_eq!(get_s(reasons[0].item().unwrap(), "tag"), "x");
    assert_eq!(util::scan_all(&client, &t, None).await.len(), 4);
    // AWS: EXISTS names the full key and one other condition.
    assert_error(
        client
            .execute_transaction()
            .transact_statements(statement(
                format!("EXISTS(SELECT * FROM \"{t}\" WHERE pk = 'a' AND sk = 1)"),
                vec![],
            ))
            .transact_statements(statement(
                format!("DELETE FROM \"{t}\" WHERE pk = 'b' AND sk = 1"),
                vec![],
            ))
            .send()
            .await,
        "ValidationException",
        "EXISTS() must contain a single item read with additional condition",
    );
}

#[tokio::test]
async fn transaction_reads_and_its_refusals() {
    let client = util::client();
    let t = seeded(&client).await;
    let out = client
        .execute_transaction()
        .transact_statements(statement(
            format!("SELECT tag FROM \"{t}\" WHERE pk = 'a' AND sk = 3"),
            vec![],
        ))
        .transact_statements(statement(
            format!("SELECT * FROM \"{t}\" WHERE pk = 'a' AND sk = 9"),
            vec![],
        ))
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .unwrap();
    let responses = out.responses();
    assert_eq!(responses[0].item(), Some(&item(&[("tag", s("z"))])));
    assert_eq!(responses[1].item(), None);
    assert_eq!(out.consumed_capacity()[0].capacity_units(), Some(4.0));
    assert_error(
        client
            .execute_transaction()
            .transact_statements(statement(format!("SELECT * FROM \"{t}\" WHERE pk = 'a' AND sk = 3"), vec![]))
            .transact_statements(statement(format!("DELETE FROM \"{t}\" WHERE pk = 'a' AND sk = 3"), vec![]))
            .send()
            .await,
        "ValidationException",
        "ExecuteTransaction API does not support both read and write operations in the same request.",
    );
    let mut request = client.execute_transaction();
    for i in 0..101 {
        request = request.transact_statements(statement(
            format!("DELETE FROM \"{t}\" WHERE pk = 'x' AND sk = {i}"),
            vec![],
        ));
    }
    let error = util::service_error(request.send().await);
    assert_eq!(error.code, "ValidationException");
    assert!(
        error.message.starts_with("1 validation error detected: Value '[{") && error.message.ends_with(
            "}]' at 'transactStatements' failed to satisfy constraint: Member must have length less than or equal to 100"
        ),
        "{error:?}"
    );
}

#[tokio::test]
async fn transaction_client_request_token_makes_a_retry_idempotent() {
    let client = util::client();
    let t = table(&client).await;
    let send = |value: &'static str| {
        client
            .execute_transaction()
            .client_request_token("partiql-token-1")
            .transact_statements(statement(
                format!("UPDATE \"{t}\" SET n = n + 1 WHERE pk = 'k' AND sk = 1"),
                vec![],
            ))
            .transact_statements(statement(
                format!("INSERT INTO \"{t}\" VALUE {{'pk': 'log', 'sk': 1, 'v': '{value}'}}"),
                vec![],
            ))
            .send()
    };
    run(
        &client,
        &format!("INSERT INTO \"{t}\" VALUE {{'pk': 'k', 'sk': 1, 'n': 0}}"),
        vec![],
    )
    .await;
    send("a").await.unwrap();
    send("a")
        .await
        .expect("the same request again succeeds without running twice");
    let items = run(
        &client,
        &format!("SELECT n FROM \"{t}\" WHERE pk = 'k' AND sk = 1"),
        vec![],
    )
    .await;
    assert_eq!(items, vec![item(&[("n", n("1"))])]);
    assert_error(
        send("b").await,
        "IdempotentParameterMismatchException",
        "Specified idempotent token was used with different request parameters",
    );
}

/// The seeds' sign-up (account + UNIQ# e-mail and username markers), written
/// as one ExecuteTransaction: it behaves as the TransactWriteItems version.
async fn partiql_sign_up(
    client: &Client,
    table: &str,
    id: &str,
    email: &str,
    handle: &str,
) -> Result<(), (String, Vec<String>)> {
    let insert =
        format!("INSERT INTO \"{table}\" VALUE {{'PK': ?, 'SK': ?, 'email': ?, 'username': ?}}");
    let lock = format!("INSERT INTO \"{table}\" VALUE {{'PK': ?, 'SK': 'LOCK', 'owner': ?}}");
    let result = client
        .execute_transaction()
        .transact_statements(statement(
            insert,
            vec![s(&format!("ACCT#{id}")), s("PROFILE"), s(email), s(handle)],
        ))
        .transact_statements(statement(
            lock.clone(),
            vec![s(&format!("UNIQ#EMAIL#{email}")), s(id)],
        ))
        .transact_statements(statement(
            lock,
            vec![s(&format!("UNIQ#HANDLE#{handle}")), s(id)],
        ))
        .send()
        .await;
    match result {
        Ok(_) => Ok(()),
        Err(e) => {
            let (message, reasons) = transaction_error::<()>(Err(e));
            Err((
                message,
                reasons
                    .iter()
                    .map(|r| r.code().unwrap_or("?").to_string())
                    .collect(),
            ))
        }
    }
}

#[tokio::test]
async fn seeds_sign_up_as_partiql_keeps_email_and_username_unique() {
    let client = util::client();
    let t = util::create_table(
        &client,
        "partiql-accounts",
        &[
            ("PK", ScalarAttributeType::S),
            ("SK", ScalarAttributeType::S),
        ],
    )
    .await;
    partiql_sign_up(&client, &t, "a1", "ada@lovelace.io", "ada")
        .await
        .unwrap();
    assert_eq!(util::scan_all(&client, &t, None).await.len(), 3);
    let (_, codes) = partiql_sign_up(&client, &t, "b2", "ada@lovelace.io", "countess")
        .await
        .unwrap_err();
    assert_eq!(codes, ["None", "DuplicateItem", "None"]);
    let (_, codes) = partiql_sign_up(&client, &t, "c3", "other@x.io", "ada")
        .await
        .unwrap_err();
    assert_eq!(codes, ["None", "None", "DuplicateItem"]);
    assert_eq!(
        util::scan_all(&client, &t, None).await.len(),
        3,
        "nothing of a failed sign-up is written"
    );
    let owner = run(
        &client,
        &format!(
            "SELECT owner FROM \"{t}\" WHERE PK = 'UNIQ#EMAIL#ada@lovelace.io' AND SK = 'LOCK'"
        ),
        vec![],
    )
    .await;
    assert_eq!(owner, vec![item(&[("owner", s("a1"))])]);
    partiql_sign_up(&client, &t, "d4", "grace@hopper.io", "grace")
        .await
        .unwrap();
    assert_eq!(util::scan_all(&client, &t, None).await.len(), 6);
}

#[tokio::test]
async fn writes_report_the_capacity_of_their_operation_as_aws_does_not_ddb_local() {
    let client = util::client();
    let t = table(&client).await;
    let out = client
        .execute_statement()
        .statement(format!("INSERT INTO \"{t}\" VALUE {{'pk': 'k', 'sk': 1}}"))
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .unwrap();
    assert_eq!(out.consumed_capacity().unwrap().capacity_units(), Some(1.0));
    let out = client
        .execute_statement()
        .statement(format!("DELETE FROM \"{t}\" WHERE pk = 'k' AND sk = 1"))
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .unwrap();
    assert_eq!(out.consumed_capacity().unwrap().capacity_units(), Some(1.0));
}

#[tokio::test]
async fn fault_rules_for_a_table_apply_to_statements_naming_it() {
    let (_server, client) =
        own_server(&["--fault", "ExecuteStatement:partiql-faulty=throttling@1.0"]);
    for name in ["partiql-faulty", "partiql-healthy"] {
        client
            .create_table()
            .table_name(name)
            .billing_mode(aws_sdk_dynamodb::types::BillingMode::PayPerRequest)
            .key_schema(util::key("pk", aws_sdk_dynamodb::types::KeyType::Hash))
            .attribute_definitions(util::attr_def("pk", ScalarAttributeType::S))
            .send()
            .await
            .unwrap();
    }
    let error = util::service_error(
        client
            .execute_statement()
            .statement("SELECT * FROM \"partiql-faulty\"")
            .send()
            .await,
    );
    assert_eq!(error.code, "ThrottlingException");
    run(&client, "SELECT * FROM \"partiql-healthy\"", vec![]).await;
}
