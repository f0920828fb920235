//! ImportTable's ION input: a stream of Ion values, each a struct whose
//! `Item` member is the item, as a DynamoDB (or Ferrodyn) ION export writes
//! them (`$ion_1_0 {Item:{...}}` a line). ion-rs reads the Ion; this module
//! maps it to DynamoDB's types, the inverse of the export's mapping
//! (exports.rs, `ion_value`):
//!
//! - string → S; decimal, int or float → N (the exact digits, never through
//!   a binary float for a decimal); blob → B; bool → BOOL; null (of any Ion
//!   type) → NULL; list → L; struct → M; a list annotated `$dynamodb_SS`,
//!   `$dynamodb_NS` or `$dynamodb_BS` → SS, NS or BS.
//! - Symbols, timestamps, clobs, s-expressions and any other annotation are
//!   no DynamoDB value: the unit is not an item.
//!
//! The mapped item is handed to the DynamoDB JSON decoder, so an Ion item is
//! checked exactly as a DYNAMODB_JSON one is (numbers, empty and duplicate
//! sets, nesting depth, set order). Only Ion text is read: objects reach
//! `parse_object` as UTF-8, which binary Ion never is, so a binary object
//! is an unreadable unit (imports.rs counts it as one error).

use super::keyed;
use crate::keys::KeySchema;
use base64::Engine as _;
use ferrodyn_types::{Item, MAX_NESTING_DEPTH};
use ion_rs::{Element, Struct, Value};
use serde_json::{json, Map, Value as Json};

/// Containers deeper than this cannot hold an item (the top struct, `Item`
/// and [`MAX_NESTING_DEPTH`] levels of M/L, a set in the last), and are not
/// handed to ion-rs, whose reader recurses once per level with no limit of
/// its own: a few hundred levels overflow a job thread's stack.
const MAX_ION_DEPTH: usize = MAX_NESTING_DEPTH + 8;

/// The units of an Ion object: an item, or why the unit is not one.
/// Empty structs yield nothing, as empty JSON objects do.
pub(super) fn ion_items<'a>(
    text: &'a str,
    schema: &'a KeySchema,
) -> impl Iterator<Item = Result<Item, String>> + 'a {
    (elements(text))
        .filter(|unit| !matches!(unit, Ok(e) if e.as_struct().is_some_and(|s| s.is_empty())))
        .map(move |unit| keyed(ion_item(&unit?)?, schema))
}

/// The units of an Ion object as DynamoDB JSON units, for bulk puts
/// (bulk_loads.rs, which checks them as it checks JSON ones): a struct's
/// `Item` and `ExpressionAttributeValues` mapped as items are, a struct of
/// strings (`ExpressionAttributeNames`) and strings kept as they are.
pub(crate) fn ion_units(text: &str) -> impl Iterator<Item = Result<Json, String>> + '_ {
    elements(text).map(|unit| {
        let unit = unit?;
        let fields = unit.as_struct().ok_or("not an Ion struct")?;
        let mut json = Map::new();
        for (name, value) in fields.fields() {
            let name = name.text().ok_or("a member name without text")?;
            let member = match unit_member(name, value) {
                Ok(member) => member,
                // An unreadable item ends the object, as in JSON; any other
                // member that maps to nothing is kept as a list holding why,
                // which no member accepts: that unit alone fails.
                Err(why) if name == "Item" => return Err(why),
                Err(why) => Json::Array(vec![Json::from(why)]),
            };
            json.insert(name.to_string(), member);
        }
        Ok(Json::Object(json))
    })
}

/// One member of a bulk unit in DynamoDB JSON.
fn unit_member(name: &str, value: &Element) -> Result<Json, String> {
    match (name, value.value()) {
        ("Item" | "ExpressionAttributeValues", Value::Struct(fields)) => {
            Ok(Json::Object(attributes(fields)?))
        }
        (_, Value::String(text)) => Ok(Json::from(text.text())),
        (_, Value::Struct(fields)) => {
            let strings = fields
                .fields()
                .map(|(key, value)| match (key.text(), value.value()) {
                    (Some(key), Value::String(text)) => {
                        Ok((key.to_string(), Json::from(text.text())))
                    }
                    _ => Err(format!("{name} holds a member that is no string")),
                });
            Ok(Json::Object(
                strings.collect::<Result<Map<String, Json>, String>>()?,
            ))
        }
        (_, other) => Err(format!("{name} is an Ion {}", other.ion_type())),
    }
}

/// The top-level values of an Ion object, cut at the first one nested too
/// deep for ion-rs to read safely (which then counts as a bad unit).
fn elements(text: &str) -> impl Iterator<Item = Result<Element, String>> + '_ {
    let cut = too_deep(text, MAX_ION_DEPTH);
    let readable = &text[..cut.unwrap_or(text.len())];
    let units: Box<dyn Iterator<Item = Result<Element, String>>> =
        match Element::iter(readable.as_bytes()) {
            Ok(elements) => {
                Box::new(elements.map(|unit| unit.map_err(|e| format!("not Ion: {e}"))))
            }
            Err(e) => Box::new(std::iter::once(Err(format!("not Ion: {e}")))),
        };
    let too_deep = cut.map(|_| Err(format!("nested deeper than {MAX_ION_DEPTH} levels")));
    units.chain(too_deep)
}

/// A top-level unit's `Item`, through the DynamoDB JSON decoder.
fn ion_item(unit: &Element) -> Result<Item, String> {
    let unit = unit.as_struct().ok_or("not an Ion struct")?;
    let item = unit.get("Item").ok_or("no Item member")?;
    let item = item.as_struct().ok_or("Item is not an Ion struct")?;
    serde_json::from_value(Json::Object(attributes(item)?))
        .map_err(|e| format!("not a DynamoDB item: {e}"))
}

/// A struct's fields as DynamoDB JSON attributes (an item's, or an M's).
fn attributes(fields: &Struct) -> Result<Map<String, Json>, String> {
    let mut map = Map::new();
    for (name, value) in fields.fields() {
        let name = name.text().ok_or("an attribute name without text")?;
        map.insert(name.to_string(), attribute(value)?);
    }
    Ok(map)
}

/// One Ion value as a DynamoDB JSON attribute value (`{"S": ...}`).
fn attribute(value: &Element) -> Result<Json, String> {
    if let Some(set) = set_type(value)? {
        return set_attribute(set, value);
    }
    Ok(match value.value() {
        Value::Null(_) => json!({ "NULL": true }),
        Value::Bool(b) => json!({ "BOOL": b }),
        Value::String(s) => json!({ "S": s.text() }),
        Value::Blob(bytes) => json!({ "B": base64(bytes.as_ref()) }),
        Value::Int(_) | Value::Decimal(_) | Value::Float(_) => json!({ "N": number(value)? }),
        Value::List(list) => {
            let members: Result<Vec<Json>, String> = list.elements().map(attribute).collect();
            json!({ "L": members? })
        }
        Value::Struct(fields) => json!({ "M": attributes(fields)? }),
        other => return Err(format!("an Ion {} is no DynamoDB value", other.ion_type())),
    })
}

/// `SS`, `NS` or `BS` for a value annotated as a set; an error for any
/// other annotation, which would otherwise be silently dropped.
fn set_type(value: &Element) -> Result<Option<&'static str>, String> {
    let mut annotations = value.annotations().iter();
    let Some(first) = annotations.next() else {
        return Ok(None);
    };
    let set = match first.text() {
        Some("$dynamodb_SS") => "SS",
        Some("$dynamodb_NS") => "NS",
        Some("$dynamodb_BS") => "BS",
        other => return Err(format!("annotation {other:?} is no DynamoDB set type")),
    };
    if annotations.next().is_some() {
        return Err("a value with more than one annotation".into());
    }
    Ok(Some(set))
}

/// A set's members in DynamoDB JSON; emptiness, duplicates and number
/// limits are the decoder's to check.
fn set_attribute(set: &str, value: &Element) -> Result<Json, String> {
    let Value::List(list) = value.value() else {
        return Err(format!("a {set} annotation on an Ion {}", value.ion_type()));
    };
    let members = list.elements().map(|member| match (set, member.value()) {
        _ if !member.annotations().is_empty() => Err("an annotated set member".to_string()),
        ("SS", Value::String(s)) => Ok(Json::from(s.text())),
        ("NS", Value::Int(_) | Value::Decimal(_) | Value::Float(_)) => {
            number(member).map(Json::from)
        }
        ("BS", Value::Blob(bytes)) => Ok(Json::from(base64(bytes.as_ref()))),
        _ => Err(format!("an Ion {} in a {set}", member.ion_type())),
    });
    Ok(json!({ set: members.collect::<Result<Vec<Json>, String>>()? }))
}

/// A number's text for DynamoDB: a decimal's own digits and exponent, so
/// `6d2`, `600.` and `1.50` keep their exact value; a float's shortest
/// round-trip digits.
fn number(value: &Element) -> Result<String, String> {
    match value.value() {
        Value::Int(int) => Ok(int.to_string()),
        Value::Decimal(decimal) => Ok(format!("{}E{}", decimal.coefficient(), decimal.exponent())),
        Value::Float(float) if float.is_finite() => Ok(format!("{float:e}")),
        Value::Float(float) => Err(format!("{float} is no DynamoDB number")),
        other => Err(format!("an Ion {} is no number", other.ion_type())),
    }
}

fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Where the first top-level value nesting containers deeper than `limit`
/// starts, found with Ion text's lexical rules for what may hold brackets
/// without opening anything: strings, quoted symbols, long strings,
/// comments and blobs or clobs (`{{...}}`, whose base64 may hold `//`).
fn too_deep(text: &str, limit: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let (mut at, mut depth, mut unit) = (0, 0, 0);
    while at < bytes.len() {
        let rest = &bytes[at..];
        at = match rest[0] {
            b'\'' | b'"' => skip_string(bytes, at),
            b'/' if rest.starts_with(b"//") => skip_past(bytes, at + 2, b"\n", false),
            b'/' if rest.starts_with(b"/*") => skip_past(bytes, at + 2, b"*/", false),
            b'{' if rest.starts_with(b"{{") => skip_lob(bytes, at + 2),
            b'[' | b'(' | b'{' => {
                if depth == 0 {
                    unit = at;
                }
                depth += 1;
                if depth > limit {
                    return Some(unit);
                }
                at + 1
            }
            b']' | b')' | b'}' => {
                depth = depth.saturating_sub(1);
                at + 1
            }
            _ => at + 1,
        };
    }
    None
}

/// The position after the string, quoted symbol or long string at `at`.
fn skip_string(bytes: &[u8], at: usize) -> usize {
    if bytes[at..].starts_with(b"\'\'\'") {
        return skip_past(bytes, at + 3, b"\'\'\'", true);
    }
    skip_past(bytes, at + 1, &bytes[at..=at], true)
}

/// The position after the `}}` closing a blob or clob (a clob's strings
/// may hold `}}`).
fn skip_lob(bytes: &[u8], mut at: usize) -> usize {
    while at < bytes.len() {
        match bytes[at] {
            b'"' | b'\'' => at = skip_string(bytes, at),
            b'}' if bytes[at..].starts_with(b"}}") => return at + 2,
            _ => at += 1,
        }
    }
    at
}

/// The position after the first `end` at or after `from` (skipping
/// backslash escapes in strings), or the end of the text.
fn skip_past(bytes: &[u8], mut from: usize, end: &[u8], escapes: bool) -> usize {
    while from < bytes.len() {
        if bytes[from..].starts_with(end) {
            return from + end.len();
        }
        from += if escapes && bytes[from] == b'\\' {
            2
        } else {
            1
        };
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::super::{parse_object, InputFormat};
    use super::*;
    use crate::keys::KeyAttribute;
    use ferrodyn_types::{AttributeValue, ScalarType};

    fn schema() -> KeySchema {
        let pk = KeyAttribute {
            name: "pk".into(),
            ty: ScalarType::S,
        };
        KeySchema {
            hash: pk,
            range: None,
        }
    }

    fn parse(text: &str) -> (Vec<Item>, bool) {
        parse_object(text, &InputFormat::Ion, &schema())
    }

    /// An item written as DynamoDB JSON, to compare with.
    fn item(json: &str) -> Item {
        serde_json::from_str(json).unwrap()
    }

    /// The N attribute `n` of the one item `{pk:"k", n:<number>}`.
    fn number_of(number: &str) -> Option<String> {
        let (items, abandoned) = parse(&format!("{{Item:{{pk:\"k\",n:{number}}}}}"));
        let n = items
            .first()
            .map(|item| serde_json::to_value(&item["n"]).unwrap());
        assert_eq!(abandoned, n.is_none(), "{number}");
        n.map(|n| n["N"].as_str().unwrap().to_string())
    }

    #[test]
    fn every_ion_type_becomes_its_dynamodb_type() {
        let text = r#"$ion_1_0 {Item:{pk:"k",s:"a\"b",n:1.5,b:{{AQI=}},t:true,f:false,z:null,
            zs:null.string,l:[1,"x",[null]],m:{'a.b':{c:2d1}},ss:$dynamodb_SS::["y","x"],
            ns:$dynamodb_NS::[10,2.5,-1d-2],bs:$dynamodb_BS::[{{Ag==}},{{AQ==}}]}}"#;
        let expected = item(
            r#"{"pk":{"S":"k"},"s":{"S":"a\"b"},"n":{"N":"1.5"},"b":{"B":"AQI="},
            "t":{"BOOL":true},"f":{"BOOL":false},"z":{"NULL":true},"zs":{"NULL":true},
            "l":{"L":[{"N":"1"},{"S":"x"},{"L":[{"NULL":true}]}]},
            "m":{"M":{"a.b":{"M":{"c":{"N":"20"}}}}},"ss":{"SS":["x","y"]},
            "ns":{"NS":["-0.01","2.5","10"]},"bs":{"BS":["AQ==","Ag=="]}}"#,
        );
        assert_eq!(parse(text), (vec![expected], false));
    }

    #[test]
    fn dynamodbs_documented_export_line_imports() {
        let text = r#"$ion_1_0 {Item:{Authors:$dynamodb_SS::["Author1","Author2"],Dimensions:"8.5 x 11.0 x 1.5",ISBN:"333-3333333333",Id:103.,InPublication:false,PageCount:6d2,Price:2d3,ProductCategory:"Book",Title:"Book 103 Title"}}"#;
        let id = KeyAttribute {
            name: "Id".into(),
            ty: ScalarType::N,
        };
        let schema = KeySchema {
            hash: id,
            range: None,
        };
        let (items, abandoned) = parse_object(text, &InputFormat::Ion, &schema);
        assert!(!abandoned);
        let json = serde_json::to_value(&items[0]).unwrap();
        assert_eq!(json["Id"], json!({"N": "103"}));
        assert_eq!(json["PageCount"], json!({"N": "600"}));
        assert_eq!(json["Price"], json!({"N": "2000"}));
        assert_eq!(json["Authors"], json!({"SS": ["Author1", "Author2"]}));
    }

    #[test]
    fn numbers_keep_their_exact_digits() {
        let exact = "12345678901234567890123456789012345678";
        let fraction = format!("0.{exact}");
        let largest = format!("1{}", "0".repeat(125));
        let smallest = format!("0.{}1", "0".repeat(129));
        for (ion, dynamodb) in [
            (exact, exact),
            (&fraction, &fraction),
            ("1.50", "1.5"),
            ("-0.", "0"),
            ("6d2", "600"),
            ("1d125", &largest),
            ("1d-130", &smallest),
            ("0x10", "16"),
            ("1.5e0", "1.5"),
            ("0.1e0", "0.1"),
        ] {
            assert_eq!(number_of(ion).as_deref(), Some(dynamodb), "{ion}");
        }
        // DynamoDB's limits, as for a DYNAMODB_JSON "N".
        let too_precise = format!("{exact}9");
        for invalid in [&*too_precise, "1d126", "1d-131", "nan", "+inf", "-inf"] {
            assert_eq!(number_of(invalid), None, "{invalid}");
        }
    }

    #[test]
    fn a_unit_that_is_no_item_abandons_the_rest_of_the_object() {
        let good = r#"{Item:{pk:"a"}}"#;
        for bad in [
            r#"{Item:{pk:"b",x:}}"#,                        // not Ion
            r#"{Thing:{pk:"b"}}"#,                          // no Item
            r#"{Item:[pk]}"#,                               // Item not a struct
            r#"["not", "a", "struct"]"#,                    // not a struct
            r#"{Item:{x:"b"}}"#,                            // no key
            r#"{Item:{pk:1}}"#,                             // key of the wrong type
            r#"{Item:{pk:""}}"#,                            // empty key
            r#"{Item:{pk:"b",s:$dynamodb_SS::[]}}"#,        // empty set
            r#"{Item:{pk:"b",s:$dynamodb_SS::["x","x"]}}"#, // duplicate members
            r#"{Item:{pk:"b",s:$dynamodb_NS::[1,1.0]}}"#,   // equal numbers
            r#"{Item:{pk:"b",s:$dynamodb_SS::[1]}}"#,       // a number in an SS
            r#"{Item:{pk:"b",s:$dynamodb_SS::"x"}}"#,       // a set annotation on a string
            r#"{Item:{pk:"b",s:$dynamodb_XS::["x"]}}"#,     // no such set
            r#"{Item:{pk:"b",s:other::"x"}}"#,              // any other annotation
            r#"{Item:{pk:"b",s:sym}}"#,                     // a symbol
            r#"{Item:{pk:"b",s:2024-01-01T}}"#,             // a timestamp
            r#"{Item:{pk:"b",s:{{"clob"}}}}"#,              // a clob
            r#"{Item:{pk:"b",s:(a b)}}"#,                   // an s-expression
        ] {
            let text = format!("$ion_1_0 {good}\n$ion_1_0 {bad}\n$ion_1_0 {good}\n");
            assert_eq!(
                parse(&text),
                (vec![item(r#"{"pk":{"S":"a"}}"#)], true),
                "{bad}"
            );
        }
    }

    #[test]
    fn units_may_share_lines_span_lines_and_carry_comments() {
        let text = "$ion_1_0 {Item:{pk:\"a\"}} {Item:{pk:\"b\"}} {}\n\n\
            // a comment\n$ion_1_0 {\n  Item: { /* inline */ pk: '''c''' }\n}\n";
        let (items, abandoned) = parse(text);
        assert!(!abandoned);
        let keys: Vec<_> = items.iter().map(|i| i["pk"].clone()).collect();
        assert_eq!(keys, ["a", "b", "c"].map(|k| AttributeValue::S(k.into())));
        assert_eq!(parse(""), (vec![], false));
        assert_eq!(parse("$ion_1_0\n"), (vec![], false));
    }

    #[test]
    fn nesting_is_limited_as_for_dynamodb_json() {
        let nested = |levels: usize| {
            let value = format!("{}1{}", "[".repeat(levels), "]".repeat(levels));
            parse(&format!(
                "{{Item:{{pk:\"a\"}}}} {{Item:{{pk:\"b\",l:{value}}}}}"
            ))
        };
        assert_eq!(nested(MAX_NESTING_DEPTH).0.len(), 2);
        assert_eq!(
            nested(MAX_NESTING_DEPTH + 1),
            (vec![item(r#"{"pk":{"S":"a"}}"#)], true)
        );
        // Deep enough to overflow ion-rs's recursion: cut before it is read.
        assert_eq!(nested(100_000), (vec![item(r#"{"pk":{"S":"a"}}"#)], true));
    }

    #[test]
    fn brackets_in_strings_comments_and_lobs_open_nothing() {
        let deep = "[".repeat(MAX_ION_DEPTH + 1);
        for text in [
            format!("\"{deep}\""),
            format!("'{deep}'"),
            format!("'''{deep}''' '''\\''' {deep}'''"),
            format!("\"\\\"{deep}\""),
            format!("// {deep}\n"),
            format!("/* {deep} */"),
            format!("{{{{ab//cd}}}} {{{{\"}}}}{deep}\"}}}}"),
        ] {
            assert_eq!(too_deep(&text, MAX_ION_DEPTH), None, "{text}");
        }
        let text = format!("{{a:1}} x::{{b:{deep}}}");
        // Cut at the struct: the dangling `x::` is unreadable, as it should be.
        assert_eq!(too_deep(&text, MAX_ION_DEPTH), Some(9));
    }
}
