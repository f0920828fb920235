//! Crate-level tests: robustness (no panic, bounded stack on any input) and
//! behaviour not covered by the recorded-oracle cases in `tests/oracle.rs`.

use crate::*;
use ferrodyn_types::{AttributeValue, Item, Number};
use std::collections::HashMap;

fn n(x: i64) -> AttributeValue {
    AttributeValue::N(Number::from(x))
}

fn s(x: &str) -> AttributeValue {
    AttributeValue::S(x.to_string())
}

fn values(pairs: &[(&str, AttributeValue)]) -> HashMap<String, AttributeValue> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

fn ctx_v() -> ExpressionContext {
    let v = values(&[
        (":v", n(1)),
        (":s", s("x")),
        (":l", AttributeValue::L(vec![n(1)])),
    ]);
    let names: HashMap<String, String> = [("#n".to_string(), "a".to_string())].into();
    ExpressionContext::new(Some(&names), Some(&v)).unwrap()
}

fn item(json: &str) -> Item {
    serde_json::from_str(json).unwrap()
}

/// Every parser entry point on one input, ignoring the outcome.
fn parse_all(text: &str) {
    let mut c = ctx_v();
    if let Ok(cond) = parse_condition(text, &mut c) {
        let _ = cond.evaluate(None);
        let _ = cond.evaluate(Some(&item(r#"{"a":{"N":"1"}}"#)));
    }
    if let Ok(update) = parse_update(text, &mut c) {
        let mut it = item(r#"{"a":{"N":"1"},"l":{"L":[{"N":"1"}]}}"#);
        let _ = update.apply(&mut it);
    }
    if let Ok(p) = parse_projection(text, &mut c) {
        let _ = p.apply(&item(r#"{"a":{"N":"1"}}"#));
    }
    let _ = parse_key_condition(text, &mut c);
    let _ = c.check_all_used();
}

/// Deterministic xorshift, so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn random_garbage_never_panics() {
    const PIECES: [&str; 40] = [
        "a",
        "#n",
        ":v",
        ":s",
        ":l",
        "(",
        ")",
        "[",
        "]",
        "0",
        "1",
        "01",
        ".",
        ",",
        "=",
        "<>",
        "<",
        "<=",
        ">",
        ">=",
        "+",
        "-",
        " AND ",
        " OR ",
        " NOT ",
        " BETWEEN ",
        " IN ",
        "SET ",
        "REMOVE ",
        "ADD ",
        "DELETE ",
        "size",
        "attribute_exists",
        "list_append",
        "if_not_exists",
        "contains",
        "é",
        "\"",
        "#",
        ":",
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..20_000 {
        let len = rng.next() % 16;
        let text: String = (0..len)
            .map(|_| PIECES[(rng.next() % PIECES.len() as u64) as usize])
            .collect();
        parse_all(&text);
    }
    // Raw bytes, including invalid boundaries inside multi-byte characters.
    for _ in 0..5_000 {
        let len = rng.next() % 24;
        let bytes: Vec<u8> = (0..len).map(|_| (rng.next() % 128) as u8).collect();
        parse_all(&String::from_utf8_lossy(&bytes));
    }
}

#[test]
fn deep_nesting_stays_on_the_stack() {
    // Test threads have 2 MiB of stack; these are the deepest shapes the
    // 4 KB / 300-operator limits allow, and some beyond them.
    let shapes = [
        format!("{}a = :v", "NOT ".repeat(299)),
        format!("{}a = :v{}", "(NOT ".repeat(299), ")".repeat(299)),
        format!("{}a = :v", "a = :v AND ".repeat(149)),
        format!("{}a = :v", "a = :v OR ".repeat(149)),
        format!("{}a{} = :v", "size(".repeat(299), ")".repeat(299)),
        "(".repeat(4000),
        format!("{}a = :v{}", "(".repeat(2000), ")".repeat(2000)),
        format!("a = {}:v", "(".repeat(4000)),
        format!("SET a = {}:l", "list_append(".repeat(400)),
        format!("SET a = {}:v{}", "(".repeat(2000), ")".repeat(2000)),
        format!("a{} = :v", "[0]".repeat(1000)),
    ];
    for text in &shapes {
        parse_all(text);
    }
    let mut c = ctx_v();
    let cond = parse_condition(&shapes[0], &mut c).unwrap();
    assert!(!cond.evaluate(Some(&item(r#"{"a":{"N":"1"}}"#))).unwrap());
}

#[test]
fn operator_limit() {
    let mut c = ctx_v();
    let ok = format!("{}a = :v", "NOT ".repeat(299));
    assert!(parse_condition(&ok, &mut c).is_ok());
    let too_many = format!("{}a = :v", "NOT ".repeat(300));
    assert_eq!(
        parse_condition(&too_many, &mut c).unwrap_err().message,
        "Invalid ConditionExpression: The expression contains too many operators; operator count: 301"
    );
}

#[test]
fn expression_size_limit_and_empty() {
    let mut c = ctx_v();
    let text = format!("a = :v{}", " ".repeat(4091));
    assert_eq!(
        parse_condition(&text, &mut c).unwrap_err().message,
        "Invalid ConditionExpression: Expression size has exceeded the maximum allowed size; expression size: 4097"
    );
    assert_eq!(
        parse_update("", &mut c).unwrap_err().message,
        "Invalid UpdateExpression: The expression can not be empty;"
    );
    assert_eq!(
        parse_projection("", &mut c).unwrap_err().message,
        "Invalid ProjectionExpression: The expression can not be empty;"
    );
    assert_eq!(
        parse_filter("a", &mut c).unwrap_err().message,
        "Invalid FilterExpression: Syntax error; token: \"<EOF>\", near: \"a\""
    );
}

#[test]
fn absent_item_makes_every_path_missing() {
    let cases = [
        ("attribute_not_exists(a)", true),
        ("attribute_exists(a)", false),
        ("a = :v", false),
        ("a <> :v", true),
        ("NOT contains(a, :s)", true),
        ("size(a) = :v", false),
    ];
    for (text, want) in cases {
        let mut c = ctx_v();
        let cond = parse_condition(text, &mut c).unwrap();
        assert_eq!(cond.evaluate(None).unwrap(), want, "{text}");
    }
}

#[test]
fn update_reads_the_original_item() {
    let mut c = ctx_v();
    let update = parse_update("SET a = :v, b = a REMOVE l[0], l[1]", &mut c).unwrap();
    let mut it = item(r#"{"a":{"N":"5"},"l":{"L":[{"N":"1"},{"N":"2"},{"N":"3"}]}}"#);
    let touched = update.apply(&mut it).unwrap();
    assert_eq!(it["a"], n(1));
    assert_eq!(it["b"], n(5));
    assert_eq!(it["l"], AttributeValue::L(vec![n(3)]));
    assert_eq!(touched.len(), 4);
    assert_eq!(
        update
            .target_paths()
            .iter()
            .map(|p| p.to_string())
            .collect::<Vec<_>>(),
        ["[a]", "[b]", "[l, [0]]", "[l, [1]]"]
    );
}

#[test]
fn projection_compacts_list_elements_in_index_order() {
    let mut c = ExpressionContext::empty();
    let p = parse_projection("l[3], l[1].x, m.k", &mut c).unwrap();
    let it = item(
        r#"{"l":{"L":[{"N":"0"},{"M":{"x":{"N":"1"},"y":{"N":"2"}}},{"N":"2"},{"N":"3"}]},
            "m":{"M":{"k":{"S":"v"},"j":{"S":"w"}}},"other":{"N":"1"}}"#,
    );
    let out = p.apply(&it);
    assert_eq!(
        serde_json::to_string(&out).unwrap(),
        r#"{"l":{"L":[{"M":{"x":{"N":"1"}}},{"N":"3"}]},"m":{"M":{"k":{"S":"v"}}}}"#
    );
}

#[test]
fn key_conditions() {
    use ferrodyn_types::ScalarType;
    let v = values(&[(":a", s("x")), (":b", s("y")), (":n", n(1))]);
    let parse = |text: &str| {
        let mut c = ExpressionContext::new(None, Some(&v)).unwrap();
        parse_key_condition(text, &mut c)
    };
    let schema = (("p", ScalarType::S), Some(("c", ScalarType::S)));
    let check = |text: &str| -> Result<(), String> {
        let kc = parse(text).map_err(|e| e.message)?;
        kc.validate(schema.0, schema.1)
            .map(drop)
            .map_err(|e| e.message)
    };
    assert_eq!(check("p = :a AND begins_with(c, :b)"), Ok(()));
    assert_eq!(check(":a = p AND c BETWEEN :a AND :b"), Ok(()));
    let kc = parse(":b > c AND p = :a").unwrap();
    assert_eq!(kc.parts[0].op, KeyOp::Lt(s("y")));
    let errors = [
        ("p = :a OR c = :b", "Invalid operator used in KeyConditionExpression: OR"),
        ("p = :a AND c <> :b", "Invalid operator used in KeyConditionExpression: <>"),
        ("p < :a", "Query key condition not supported"),
        ("x = :a", "Query condition missed key schema element: p"),
        ("c = :a", "Query condition missed key schema element: p"),
        ("c = :a AND x = :b", "Query condition missed key schema element: p"),
        ("p = :a AND x < :b", "Query condition missed key schema element: c"),
        ("x < :b AND p = :a", "Query condition missed key schema element: c"),
        ("p = :a AND p = :b", "KeyConditionExpressions must only contain one condition per key"),
        ("p = :a AND p = :a AND c = :b", "KeyConditionExpressions must only contain one condition per key"),
        ("p = :a AND c = :b AND x = :b", "Conditions can be of length 1 or 2 only"),
        ("p = :a AND x.y < :b", "KeyConditionExpressions cannot have conditions on nested attributes"),
        ("p = :a AND begins_with(x[0], :b)", "KeyConditionExpressions cannot have conditions on nested attributes"),
        ("x.y = :a AND p.z = :a", "Key attributes must be scalars; list random access '[]' and map lookup '.' are not allowed: Key: p"),
        ("p = :a AND c.d BETWEEN :a AND :b", "Key attributes must be scalars; list random access '[]' and map lookup '.' are not allowed: Key: c"),
        ("p = :a AND size(c) = :n", "KeyConditionExpressions cannot contain nested operations"),
        ("p.x = :a", "Key attributes must be scalars; list random access '[]' and map lookup '.' are not allowed: Key: p"),
        ("p = :n", "One or more parameter values were invalid: Condition parameter type does not match schema type"),
        ("p = :a AND begins_with(:b, c)", "Invalid condition in KeyConditionExpression: begins_with operator must have the key attribute as its first operand"),
    ];
    for (text, want) in errors {
        assert_eq!(check(text).unwrap_err(), want, "{text}");
    }
    // A table with only a hash key.
    let hash_only = |text: &str| -> Result<(), String> {
        let kc = parse(text).map_err(|e| e.message)?;
        kc.validate(schema.0, None).map(drop).map_err(|e| e.message)
    };
    assert_eq!(hash_only("p = :a"), Ok(()));
    assert_eq!(
        hash_only("p = :a AND x < :b").unwrap_err(),
        "Query key condition not supported"
    );
    assert_eq!(
        hash_only("x = :a").unwrap_err(),
        "Query condition missed key schema element: p"
    );
}

#[test]
fn legacy_expected_conditions() {
    let it = item(r#"{"a":{"N":"1"},"l":{"L":[{"N":"1"}]}}"#);
    let eval = |json: &str, op: Option<&str>| -> Result<bool, String> {
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        let cond = legacy_expected(&v, op).map_err(|e| e.message)?;
        Ok(cond.evaluate(Some(&it)).unwrap())
    };
    let cases: [(&str, Option<&str>, Result<bool, &str>); 14] = [
        (r#"{}"#, None, Ok(true)),
        (r#"{"a":{"Value":{"N":"1"}}}"#, None, Ok(true)),
        (r#"{"a":{"Exists":false}}"#, None, Ok(false)),
        (r#"{"a":{"ComparisonOperator":"NULL"}}"#, None, Ok(false)),
        (r#"{"nope":{"ComparisonOperator":"NE","AttributeValueList":[{"N":"1"}]}}"#, None, Ok(true)),
        (r#"{"nope":{"ComparisonOperator":"NOT_CONTAINS","AttributeValueList":[{"N":"1"}]}}"#, None, Ok(false)),
        (r#"{"l":{"ComparisonOperator":"CONTAINS","AttributeValueList":[{"N":"1"}]}}"#, None, Ok(true)),
        (r#"{"a":{"Value":{"N":"2"}},"nope":{"Exists":false}}"#, Some("OR"), Ok(true)),
        (r#"{"a":{}}"#, None, Err("One or more parameter values were invalid: Value must be provided when Exists is null for Attribute: a")),
        (r#"{"a":{"Exists":true}}"#, None, Err("One or more parameter values were invalid: Value must be provided when Exists is true for Attribute: a")),
        (r#"{"a":{"ComparisonOperator":"EQ","AttributeValueList":[{"N":"1"},{"N":"2"}]}}"#, None, Err("One or more parameter values were invalid: Invalid number of argument(s) for the EQ ComparisonOperator")),
        (r#"{"a":{"ComparisonOperator":"LT","AttributeValueList":[{"SS":["a"]}]}}"#, None, Err("One or more parameter values were invalid: ComparisonOperator LT is not valid for SS AttributeValue type")),
        (r#"{"a":{"ComparisonOperator":"BETWEEN","AttributeValueList":[{"N":"2"},{"N":"1"}]}}"#, None, Err("The BETWEEN condition was provided a range where the lower bound is greater than the upper bound")),
        (r#"{"a":{"Value":{"N":"2"}}}"#, Some("OR"), Err("ConditionalOperator can only be used when Filter or Expected has two or more elements")),
    ];
    for (json, op, want) in cases {
        assert_eq!(eval(json, op), want.map_err(str::to_string), "{json}");
    }
}

#[test]
fn legacy_attribute_updates_apply() {
    let run = |json: &str| -> Result<Item, String> {
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        let update = legacy_attribute_updates(&v).map_err(|e| e.message)?;
        let mut it = item(r#"{"a":{"N":"1"},"l":{"L":[{"N":"1"}]},"ss":{"SS":["a","b"]}}"#);
        update.apply(&mut it).map_err(|e| e.message)?;
        Ok(it)
    };
    let it = run(r#"{"l":{"Action":"ADD","Value":{"L":[{"N":"9"}]}},"a":{"Action":"ADD","Value":{"N":"2"}},"ss":{"Action":"DELETE","Value":{"SS":["a"]}}}"#).unwrap();
    assert_eq!(it["a"], n(3));
    assert_eq!(it["l"], AttributeValue::L(vec![n(1), n(9)]));
    assert_eq!(it["ss"], AttributeValue::Ss(vec!["b".into()]));
    let it = run(r#"{"a":{"Action":"DELETE"},"b":{"Value":{"S":"x"}}}"#).unwrap();
    assert!(!it.contains_key("a"));
    assert_eq!(it["b"], s("x"));
    let errors = [
        (r#"{"a":{"Action":"PUT"}}"#, "One or more parameter values were invalid: Only DELETE action is allowed when no attribute value is specified"),
        (r#"{"a":{"Action":"ADD","Value":{"S":"x"}}}"#, "One or more parameter values were invalid: ADD action is not supported for the type STRING"),
        (r#"{"ss":{"Action":"DELETE","Value":{"S":"a"}}}"#, "One or more parameter values were invalid: DELETE action with value is not supported for the type STRING"),
        (r#"{"a":{"Action":"DELETE","Value":{"SS":["a"]}}}"#, "Type mismatch for attribute to update"),
        (r#"{"a":{"Action":"ADD","Value":{"L":[]}}}"#, "Type mismatch for attribute to update"),
        (r#"{"a":{"Action":"FOO","Value":{"N":"1"}}}"#, "Member must satisfy enum value set: [ADD, DELETE, PUT]"),
    ];
    for (json, want) in errors {
        assert_eq!(run(json).unwrap_err(), want, "{json}");
    }
}

#[test]
fn legacy_attributes_to_get_rejects_duplicates() {
    assert_eq!(
        legacy_attributes_to_get(&["a".into(), "a".into()])
            .unwrap_err()
            .message,
        "One or more parameter values were invalid: Duplicate value in attribute name: a"
    );
    let p = legacy_attributes_to_get(&["a".into(), "status".into()]).unwrap();
    assert_eq!(p.paths.len(), 2);
}

#[test]
fn number_overflow_in_arithmetic() {
    let v = values(&[(":big", AttributeValue::N(Number::parse("9E+125").unwrap()))]);
    let mut c = ExpressionContext::new(None, Some(&v)).unwrap();
    let update = parse_update("SET a = :big + :big", &mut c).unwrap();
    let mut it = Item::new();
    assert_eq!(
        update.apply(&mut it).unwrap_err().message,
        "Number overflow. Attempting to store a number with magnitude larger than supported range"
    );
}

#[test]
fn attribute_type_accepts_any_first_operand() {
    let v = values(&[(":n", n(0)), (":tn", s("N")), (":ts", s("S"))]);
    let it = item(r#"{"a":{"S":"x"}}"#);
    let eval = |text: &str| -> Result<bool, String> {
        let mut c = ExpressionContext::new(None, Some(&v)).unwrap();
        let cond = parse_condition(text, &mut c).map_err(|e| e.message)?;
        Ok(cond.evaluate(Some(&it)).unwrap())
    };
    let cases: [(&str, Result<bool, &str>); 7] = [
        ("attribute_type (a, :ts)", Ok(true)),
        ("attribute_type(a, :tn)", Ok(false)),
        ("attribute_type(nope, :ts)", Ok(false)),
        ("attribute_type (:n, :tn)", Ok(true)),
        ("attribute_type(:n, :ts)", Ok(false)),
        ("attribute_type(size(a), :tn)", Ok(true)),
        ("attribute_exists(:n)", Err("Invalid ConditionExpression: Operator or function requires a document path; operator or function: attribute_exists")),
    ];
    for (text, want) in cases {
        assert_eq!(eval(text), want.map_err(str::to_string), "{text}");
    }
}

#[test]
fn sets_past_the_end_of_a_list_append_in_index_order() {
    let v = values(&[
        (":1", s("a1")),
        (":2", s("a2")),
        (":3", s("a3")),
        (":4", s("a4")),
    ]);
    let mut c = ExpressionContext::new(None, Some(&v)).unwrap();
    let update = parse_update(
        "SET l[84] = :1, l[37] = :2, l[17] = :3, l[50] = :4, l[0] = :1",
        &mut c,
    )
    .unwrap();
    let mut it = item(r#"{"l":{"L":[{"S":"x"},{"S":"y"}]}}"#);
    update.apply(&mut it).unwrap();
    assert_eq!(
        it,
        item(r#"{"l":{"L":[{"S":"a1"},{"S":"y"},{"S":"a3"},{"S":"a2"},{"S":"a4"},{"S":"a1"}]}}"#)
    );
}
