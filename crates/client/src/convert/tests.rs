//! Converter tests: exact numbers, every type both ways, tags, warnings.

use super::*;

fn plain(text: &str) -> Plain {
    Plain::parse(text).unwrap()
}

#[test]
fn numbers_keep_their_exact_text() {
    let (item, warnings) = item_from_plain_text(
        r#"{"big": 123456789012345678901234567890.123456, "small": -1.50e-3, "int": 7}"#,
    )
    .unwrap();
    assert!(warnings.is_empty());
    assert_eq!(
        item["big"],
        json!({"N": "123456789012345678901234567890.123456"})
    );
    assert_eq!(item["small"], json!({"N": "-1.50e-3"}));
    assert_eq!(item["int"], json!({"N": "7"}));
}

#[test]
fn every_plain_type_maps_to_its_dynamodb_type() {
    let (item, _) = item_from_plain_text(
        r#"{"s": "x", "b": true, "n": null, "l": [1, "a"], "m": {"k": false}, "e": []}"#,
    )
    .unwrap();
    assert_eq!(
        Value::Object(item),
        json!({
            "s": {"S": "x"}, "b": {"BOOL": true}, "n": {"NULL": true},
            "l": {"L": [{"N": "1"}, {"S": "a"}]}, "m": {"M": {"k": {"BOOL": false}}},
            "e": {"L": []}
        })
    );
}

#[test]
fn round_trip_through_tagged_plain_json_is_exact() {
    let ddb = json!({
        "pk": {"S": "user#1"},
        "n": {"N": "3.14159265358979323846264338327950288"},
        "ss": {"SS": ["a", "b"]},
        "ns": {"NS": ["1", "2.5"]},
        "bs": {"BS": ["AAE=", "/w=="]},
        "bin": {"B": "aGVsbG8="},
        "nested": {"M": {"l": {"L": [{"NULL": true}, {"SS": ["z"]}]}}}
    });
    let (plain, warnings) = item_from_ddb(&ddb, true).unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let text = plain.to_json();
    let (back, warnings) = item_from_plain_text(&text).unwrap();
    assert!(warnings.is_empty());
    assert_eq!(Value::Object(back), ddb);
}

#[test]
fn untagged_output_warns_for_each_lost_type() {
    let ddb = json!({"ss": {"SS": ["a"]}, "b": {"B": "AA=="}, "ok": {"S": "x"}});
    let (plain, warnings) = item_from_ddb(&ddb, false).unwrap();
    assert_eq!(plain.to_json(), r#"{"b":"AA==","ok":"x","ss":["a"]}"#);
    let paths: Vec<&str> = warnings.iter().map(|w| w.path.as_str()).collect();
    assert_eq!(paths, ["$.b", "$.ss"]);
    assert!(warnings[1].message.contains("string set written as a list"));
}

#[test]
fn too_many_digits_is_a_warning_not_a_silent_loss() {
    let (_, warnings) = to_ddb(&plain("123456789012345678901234567890123456789")).unwrap();
    assert_eq!(warnings.len(), 1);
    assert!(warnings[0].message.contains("38 significant digits"));
    // Trailing zeros are not significant.
    let (_, warnings) = to_ddb(&plain("1000000000000000000000000000000000000000000")).unwrap();
    assert!(warnings.is_empty());
}

#[test]
fn malformed_input_is_reported_with_a_place() {
    for bad in [
        "{",
        "[1,]",
        "01",
        "1.",
        "\"abc",
        "{\"a\" 1}",
        "tru",
        "1 2",
        "-",
    ] {
        assert!(Plain::parse(bad).is_err(), "{bad} should not parse");
    }
    let err = Plain::parse("{\n\"a\": x}").unwrap_err();
    assert!(err.path.starts_with("line 2"), "{err}");
    let err = item_to_ddb(&plain("[1]")).unwrap_err();
    assert!(err.message.contains("JSON object"));
    let err = to_ddb(&plain(r#"{"$NS": ["x"]}"#)).unwrap_err();
    assert!(err.message.contains("numbers"));
    let err = item_from_ddb(&json!({"a": {"Q": "1"}}), false).unwrap_err();
    assert_eq!(err.to_string(), "$.a: unknown attribute type `Q`");
}

#[test]
fn strings_with_escapes_and_unicode_survive() {
    let text = r#"{"s":"line\nbreak \"q\" \u00e9 ✓ \ud83d\ude00"}"#;
    let p = plain(text);
    assert_eq!(
        p.get("s"),
        Some(&Plain::String("line\nbreak \"q\" é ✓ 😀".into()))
    );
    assert_eq!(plain(&p.to_json()), p);
}

#[test]
fn pretty_printing_indents_and_reparses() {
    let p = plain(r#"{"a":[1,{"b":null}],"c":{}}"#);
    let pretty = p.to_json_pretty();
    assert_eq!(
        pretty,
        "{\n  \"a\": [\n    1,\n    {\n      \"b\": null\n    }\n  ],\n  \"c\": {}\n}"
    );
    assert_eq!(plain(&pretty), p);
}

#[test]
fn deep_nesting_is_refused_not_a_crash() {
    let deep = "[".repeat(10_000) + &"]".repeat(10_000);
    assert!(Plain::parse(&deep).is_err());
}

#[test]
fn display_is_short_for_people() {
    assert_eq!(display(&json!({"S": "x"})), "x");
    assert_eq!(display(&json!({"N": "1.5"})), "1.5");
    assert_eq!(display(&json!({"SS": ["a", "b"]})), "{a, b}");
    assert_eq!(display(&json!({"M": {"k": {"N": "1"}}})), r#"{"k":1}"#);
}
