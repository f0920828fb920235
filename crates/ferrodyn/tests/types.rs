//! DynamoDB's data types and their rules: all ten types round-trip exactly,
//! numbers are exact 38-digit decimals in 1E-130..9.99…E+125 returned in
//! normalised form, sets may be neither empty nor repeat a member, key values
//! may not be empty, must have the schema's type, must fit 2048 (partition) and
//! 1024 (sort) bytes, and a whole item must fit 400 KB counted DynamoDB's way
//! (attribute names included).
//!
//! DynamoDB Local words several of these errors differently from AWS (key type
//! mismatch, missing keys, key length); those tests follow AWS.

use std::collections::HashMap;

use crate::util;
use crate::util::{
    assert_error_one_of, assert_error_starts, assert_validation, b, item, l, m, n, ns, raw, s,
    sorted_sets, ss,
};
use aws_sdk_dynamodb::types::{AttributeValue, ScalarAttributeType as T};
use aws_sdk_dynamodb::Client;
use serde_json::json;

async fn put(client: &Client, table: &str, item: HashMap<String, AttributeValue>) {
    client
        .put_item()
        .table_name(table)
        .set_item(Some(item))
        .send()
        .await
        .unwrap();
}

async fn get(client: &Client, table: &str, p: &str) -> HashMap<String, AttributeValue> {
    client
        .get_item()
        .table_name(table)
        .key("p", s(p))
        .consistent_read(true)
        .send()
        .await
        .unwrap()
        .item
        .expect("item exists")
}

async fn put_number(client: &Client, table: &str, p: &str, number: &str) -> String {
    put(client, table, item(&[("p", s(p)), ("n", n(number))])).await;
    match get(client, table, p).await.remove("n") {
        Some(AttributeValue::N(v)) => v,
        other => panic!("not a number: {other:?}"),
    }
}

async fn put_result(
    client: &Client,
    table: &str,
    item: HashMap<String, AttributeValue>,
) -> Result<
    aws_sdk_dynamodb::operation::put_item::PutItemOutput,
    aws_sdk_dynamodb::error::SdkError<aws_sdk_dynamodb::operation::put_item::PutItemError>,
> {
    client
        .put_item()
        .table_name(table)
        .set_item(Some(item))
        .send()
        .await
}

#[tokio::test]
async fn all_ten_types_round_trip_exactly() {
    let client = util::client();
    let table = util::table_s(&client).await;
    let every_byte: Vec<u8> = (0..=255).collect();
    let original = item(&[
        ("p", s("all-types")),
        ("s", s("héllo \u{1F600} \"quoted\"")),
        ("empty_s", s("")),
        ("n", n("-12.5")),
        ("b", b(&every_byte)),
        ("empty_b", b(b"")),
        ("t", AttributeValue::Bool(true)),
        ("f", AttributeValue::Bool(false)),
        ("null", AttributeValue::Null(true)),
        (
            "l",
            l(vec![s("x"), n("1"), AttributeValue::Null(true), l(vec![])]),
        ),
        (
            "m",
            m(&[("inner", m(&[("deep", s("v"))])), ("empty", m(&[]))]),
        ),
        ("ss", ss(&["b", "a", "c"])),
        ("ns", ns(&["3", "-1", "2.5"])),
        (
            "bs",
            AttributeValue::Bs(vec![
                aws_sdk_dynamodb::primitives::Blob::new(vec![0u8, 1]),
                aws_sdk_dynamodb::primitives::Blob::new(vec![255u8]),
            ]),
        ),
    ]);
    put(&client, &table, original.clone()).await;
    let got = get(&client, &table, "all-types").await;
    assert_eq!(sorted_sets(&got), sorted_sets(&original));
}

#[tokio::test]
async fn numbers_of_38_digits_are_stored_exactly() {
    let client = util::client();
    let table = util::table_s(&client).await;
    for v in [
        "12345678901234567890123456789012345678",
        "-0.12345678901234567890123456789012345678",
        "9999999999999999999999999999999999999.9",
    ] {
        assert_eq!(put_number(&client, &table, v, v).await, v);
    }
}

#[tokio::test]
async fn extreme_magnitudes_are_accepted_and_returned_in_plain_notation() {
    let client = util::client();
    let table = util::table_s(&client).await;
    let smallest = format!("0.{}1", "0".repeat(129));
    assert_eq!(put_number(&client, &table, "min", "1E-130").await, smallest);
    assert_eq!(
        put_number(&client, &table, "neg-min", "-1E-130").await,
        format!("-{smallest}")
    );
    let largest = format!("{}{}", "9".repeat(38), "0".repeat(88));
    assert_eq!(
        put_number(
            &client,
            &table,
            "max",
            "9.9999999999999999999999999999999999999E+125"
        )
        .await,
        largest
    );
    assert_eq!(
        put_number(
            &client,
            &table,
            "neg-max",
            "-9.9999999999999999999999999999999999999E+125"
        )
        .await,
        format!("-{largest}")
    );
}

#[tokio::test]
async fn numbers_are_normalised() {
    let client = util::client();
    let table = util::table_s(&client).await;
    for (input, output) in [
        ("1.0", "1"),
        ("1e3", "1000"),
        ("-0.000", "0"),
        ("00012.3400", "12.34"),
        ("1E-5", "0.00001"),
        ("1.5E+40", "15000000000000000000000000000000000000000"),
        ("+5", "5"),
        ("0.1E2", "10"),
    ] {
        assert_eq!(
            put_number(&client, &table, input, input).await,
            output,
            "{input}"
        );
    }
}

#[tokio::test]
async fn number_keys_match_by_value() {
    let client = util::client();
    let table = util::create_table(&client, "nkey", &[("p", T::N)]).await;
    put(&client, &table, item(&[("p", n("1.50")), ("v", s("x"))])).await;
    let got = client
        .get_item()
        .table_name(&table)
        .key("p", n("015E-1"))
        .consistent_read(true)
        .send()
        .await
        .unwrap()
        .item
        .expect("found by an equal number");
    assert_eq!(got["p"], n("1.5"));
}

#[tokio::test]
async fn number_overflow_is_rejected() {
    let client = util::client();
    let table = util::table_s(&client).await;
    for v in ["1E126", "-1E126", "1E+200"] {
        assert_validation(
            put_result(&client, &table, item(&[("p", s("x")), ("n", n(v))])).await,
            "Number overflow. Attempting to store a number with magnitude larger than supported range",
        );
    }
}

#[tokio::test]
async fn number_underflow_is_rejected() {
    let client = util::client();
    let table = util::table_s(&client).await;
    for v in ["1E-131", "-1E-131"] {
        assert_validation(
            put_result(&client, &table, item(&[("p", s("x")), ("n", n(v))])).await,
            "Number underflow. Attempting to store a number with magnitude smaller than supported range",
        );
    }
}

#[tokio::test]
async fn number_with_39_significant_digits_is_rejected() {
    let client = util::client();
    let table = util::table_s(&client).await;
    let result = put_result(
        &client,
        &table,
        item(&[
            ("p", s("x")),
            ("n", n("123456789012345678901234567890123456789")),
        ]),
    )
    .await;
    // dynalite's AWS recording and DynamoDB Local word this differently.
    assert_error_one_of(
        result,
        "ValidationException",
        &[
            "Attempting to store more than 38 significant digits in a Number",
            "DynamoDB only supports precision up to 38 digits",
        ],
    );
}

#[tokio::test]
async fn trailing_zeros_do_not_count_as_significant_digits() {
    let client = util::client();
    let table = util::table_s(&client).await;
    let v = format!("{}{}", "1".repeat(38), "0".repeat(20));
    assert_eq!(put_number(&client, &table, "z", &v).await, v);
}

#[tokio::test]
async fn malformed_number_is_rejected() {
    let client = util::client();
    let table = util::table_s(&client).await;
    for v in ["abc", "", "1.2.3", "0x10"] {
        let result = put_result(&client, &table, item(&[("p", s("x")), ("n", n(v))])).await;
        let with_value = format!("The parameter cannot be converted to a numeric value: {v}");
        assert_error_one_of(
            result,
            "ValidationException",
            &[
                "A value provided cannot be converted into a number",
                "The parameter cannot be converted to a numeric value",
                &with_value,
            ],
        );
    }
}

#[tokio::test]
async fn empty_sets_are_rejected() {
    // PutItem words them "1 validation error detected: ..." (moto's
    // AWS-verified test_put_item_empty_set).
    let client = util::client();
    let table = util::table_s(&client).await;
    let cases = [
        (
            AttributeValue::Ss(vec![]),
            "1 validation error detected: One or more parameter values were invalid: An string set  may not be empty",
        ),
        (
            AttributeValue::Ns(vec![]),
            "1 validation error detected: One or more parameter values were invalid: An number set  may not be empty",
        ),
        (
            AttributeValue::Bs(vec![]),
            "1 validation error detected: One or more parameter values were invalid: Binary sets should not be empty",
        ),
    ];
    for (value, message) in cases {
        assert_validation(
            put_result(&client, &table, item(&[("p", s("x")), ("set", value)])).await,
            message,
        );
    }
}

#[tokio::test]
async fn duplicate_set_members_are_rejected() {
    let client = util::client();
    let table = util::table_s(&client).await;
    assert_error_starts(
        put_result(
            &client,
            &table,
            item(&[("p", s("x")), ("set", ss(&["a", "b", "a"]))]),
        )
        .await,
        "ValidationException",
        "One or more parameter values were invalid: Input collection [a, b, a] contains duplicates",
    );
    // Numbers are duplicates when equal in value.
    assert_validation(
        put_result(
            &client,
            &table,
            item(&[("p", s("x")), ("set", ns(&["1", "1.0"]))]),
        )
        .await,
        "Input collection contains duplicates",
    );
    let blob = aws_sdk_dynamodb::primitives::Blob::new(b"a".to_vec());
    assert_error_starts(
        put_result(
            &client,
            &table,
            item(&[
                ("p", s("x")),
                ("set", AttributeValue::Bs(vec![blob.clone(), blob])),
            ]),
        )
        .await,
        "ValidationException",
        "One or more parameter values were invalid: Input collection ",
    );
}

#[tokio::test]
async fn empty_string_and_binary_key_values_are_rejected() {
    let client = util::client();
    let table = util::table_s(&client).await;
    assert_validation(
        put_result(&client, &table, item(&[("p", s(""))])).await,
        "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: p",
    );
    let btable = util::create_table(&client, "bkey", &[("p", T::B)]).await;
    assert_validation(
        put_result(&client, &btable, item(&[("p", b(b""))])).await,
        "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty binary value. Key: p",
    );
    assert_validation(
        client
            .get_item()
            .table_name(&table)
            .key("p", s(""))
            .send()
            .await,
        "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: p",
    );
}

#[tokio::test]
async fn key_of_the_wrong_type_is_rejected() {
    // DynamoDB Local: "One or more parameter values were invalid: Type
    // mismatch for key".
    let client = util::client();
    let table = util::table_s(&client).await;
    assert_validation(
        put_result(&client, &table, item(&[("p", n("1"))])).await,
        "One or more parameter values were invalid: Type mismatch for key p expected: S actual: N",
    );
    assert_validation(
        client
            .get_item()
            .table_name(&table)
            .key("p", n("1"))
            .send()
            .await,
        "The provided key element does not match the schema",
    );
}

#[tokio::test]
async fn missing_or_extra_key_attributes_are_rejected() {
    // DynamoDB Local: "One of the required keys was not given a value" and
    // "The number of conditions on the keys is invalid".
    let client = util::client();
    let table = util::table_ss(&client).await;
    assert_validation(
        put_result(&client, &table, item(&[("p", s("a")), ("x", s("b"))])).await,
        "One or more parameter values were invalid: Missing the key c in the item",
    );
    assert_validation(
        client
            .get_item()
            .table_name(&table)
            .key("p", s("a"))
            .send()
            .await,
        "The provided key element does not match the schema",
    );
    assert_validation(
        client
            .get_item()
            .table_name(&table)
            .key("p", s("a"))
            .key("c", s("b"))
            .key("x", s("c"))
            .send()
            .await,
        "The provided key element does not match the schema",
    );
}

#[tokio::test]
async fn partition_key_is_limited_to_2048_bytes() {
    // DynamoDB Local: "Hash primary key values must be under 2048 bytes, and
    // range primary key values must be under 1024 bytes".
    let client = util::client();
    let table = util::table_s(&client).await;
    let ok = "é".repeat(1024); // 2048 bytes of UTF-8
    put(&client, &table, item(&[("p", s(&ok))])).await;
    assert_eq!(get(&client, &table, &ok).await["p"], s(&ok));
    let too_long = format!("{ok}x");
    let message = "One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of2048 bytes";
    assert_validation(
        put_result(&client, &table, item(&[("p", s(&too_long))])).await,
        message,
    );
    assert_validation(
        client
            .get_item()
            .table_name(&table)
            .key("p", s(&too_long))
            .send()
            .await,
        message,
    );
    let btable = util::create_table(&client, "bkey", &[("p", T::B)]).await;
    put(&client, &btable, item(&[("p", b(&[7u8; 2048]))])).await;
    assert_validation(
        put_result(&client, &btable, item(&[("p", b(&[7u8; 2049]))])).await,
        message,
    );
}

#[tokio::test]
async fn sort_key_is_limited_to_1024_bytes() {
    // DynamoDB Local words this as for partition keys (see above).
    let client = util::client();
    let table = util::table_ss(&client).await;
    put(
        &client,
        &table,
        item(&[("p", s("a")), ("c", s(&"x".repeat(1024)))]),
    )
    .await;
    assert_validation(
        put_result(
            &client,
            &table,
            item(&[("p", s("a")), ("c", s(&"x".repeat(1025)))]),
        )
        .await,
        "One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of 1024 bytes",
    );
}

#[tokio::test]
async fn item_of_exactly_400_kb_is_accepted_and_one_byte_more_rejected() {
    let client = util::client();
    let table = util::table_s(&client).await;
    const LIMIT: usize = 400 * 1024;
    // "p" + "k" + "big" + the string: names count, so the string gets the rest.
    let fill = LIMIT - ("p".len() + "k".len() + "big".len());
    put(
        &client,
        &table,
        item(&[("p", s("k")), ("big", s(&"x".repeat(fill)))]),
    )
    .await;
    assert_validation(
        put_result(
            &client,
            &table,
            item(&[("p", s("k2")), ("big", s(&"x".repeat(fill)))]),
        )
        .await,
        "Item size has exceeded the maximum allowed size",
    );
    // A one-digit number takes 2 bytes (1 per two digits, plus 1), binary its
    // raw length (not its base64 length).
    let fill = LIMIT - ("p".len() + "k".len() + "n".len() + 2 + "bin".len());
    put(
        &client,
        &table,
        item(&[("p", s("k")), ("n", n("7")), ("bin", b(&vec![0u8; fill]))]),
    )
    .await;
    assert_validation(
        put_result(
            &client,
            &table,
            item(&[
                ("p", s("k")),
                ("n", n("7")),
                ("bin", b(&vec![0u8; fill + 1])),
            ]),
        )
        .await,
        "Item size has exceeded the maximum allowed size",
    );
}

#[tokio::test]
async fn attribute_value_must_have_exactly_one_type() {
    let client = util::client();
    let table = util::table_s(&client).await;
    let empty = raw::call_json(
        "PutItem",
        json!({"TableName": table, "Item": {"p": {"S": "x"}, "a": {}}}),
    )
    .await;
    assert_eq!(empty.status, 400);
    assert_eq!(empty.error_name(), "ValidationException");
    assert_eq!(
        message_of(&empty),
        "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes"
    );
    let two = raw::call_json(
        "PutItem",
        json!({"TableName": table, "Item": {"p": {"S": "x"}, "a": {"S": "x", "N": "1"}}}),
    )
    .await;
    assert_eq!(two.status, 400);
    assert_eq!(
        message_of(&two),
        "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes"
    );
}

#[tokio::test]
async fn null_must_be_true() {
    let client = util::client();
    let table = util::table_s(&client).await;
    assert_validation(
        put_result(
            &client,
            &table,
            item(&[("p", s("x")), ("a", AttributeValue::Null(false))]),
        )
        .await,
        "One or more parameter values were invalid: Null attribute value types must have the value of true",
    );
}

#[tokio::test]
async fn empty_strings_and_binaries_outside_keys_are_kept() {
    let client = util::client();
    let table = util::table_s(&client).await;
    let original = item(&[
        ("p", s("x")),
        ("s", s("")),
        ("b", b(b"")),
        ("ss", ss(&["", "a"])),
        ("m", m(&[("s", s(""))])),
    ]);
    put(&client, &table, original.clone()).await;
    assert_eq!(
        sorted_sets(&get(&client, &table, "x").await),
        sorted_sets(&original)
    );
}

/// The message of a raw error response (either capitalisation of the key).
fn message_of(response: &raw::Response) -> String {
    let body = response.json();
    body["message"]
        .as_str()
        .or(body["Message"].as_str())
        .unwrap_or_default()
        .to_string()
}
