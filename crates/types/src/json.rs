//! DynamoDB JSON: `{"S":"x"}`, `{"N":"1"}`, `{"B":"<base64>"}`, ...
//!
//! Decoding validates as it goes (numbers, empty and duplicate sets, NULL must
//! be true, one type per value, nesting depth) so that a request is checked in
//! one pass. Serde can only report serialization errors, so a violation that
//! DynamoDB reports as a ValidationException is raised as a serde error whose
//! message starts with [`VALIDATION_MARKER`]; [`json_error_to_dynamo`] turns it
//! back into the right DynamoDB error.

use crate::error::Family;
use crate::{AttributeValue, DynamoError, Number, MAX_NESTING_DEPTH};
use base64::Engine;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};
use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::hash::Hash;

/// Prefix of a serde error message that is really a ValidationException.
pub const VALIDATION_MARKER: &str = "\u{1}validation:";
/// Prefix of one that is a ValidationException of [`Family::WriteValidation`]
/// (an empty set): serde carries errors as text, so the family travels as a
/// marker between this module's decoder and `json_error_to_dynamo`.
const WRITE_FAMILY_MARKER: &str = "\u{1}validation+write:";
/// Prefix of an older-worded message that wraps one of the write family:
/// `<older message>\u{2}<newer message>`.
const WRAPPED_MARKER: &str = "\u{1}validation+wrapped:";
const WRAPPED_SEPARATOR: char = '\u{2}';

const BASE64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

thread_local! {
    /// Nesting depth of the attribute value being decoded on this thread.
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// Counts one level of M/L nesting for as long as it lives.
struct DepthGuard;

impl DepthGuard {
    fn enter<E: de::Error>() -> Result<DepthGuard, E> {
        let depth = DEPTH.with(|d| {
            d.set(d.get() + 1);
            d.get()
        });
        let guard = DepthGuard;
        // A request may carry a value of MAX_NESTING_DEPTH levels, which a
        // condition can compare; only a stored item counts itself as a
        // level too (checked where items are written, as DynamoDB does).
        if depth > MAX_NESTING_DEPTH {
            return Err(validation(
                "Nesting Levels have exceeded supported limits: Attributes in the item have nested levels beyond supported limit",
            ));
        }
        Ok(guard)
    }
}

impl Drop for DepthGuard {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get() - 1));
    }
}

fn validation<E: de::Error>(message: &str) -> E {
    E::custom(format_args!("{VALIDATION_MARKER}{message}"))
}

fn invalid<E: de::Error>(message: &str) -> E {
    validation(&format!(
        "One or more parameter values were invalid: {message}"
    ))
}

/// An empty set: "One or more parameter values were invalid: ..." in the
/// write family.
fn empty_set<E: de::Error>(message: &str) -> E {
    E::custom(format_args!(
        "{WRITE_FAMILY_MARKER}One or more parameter values were invalid: {message}"
    ))
}

/// Converts a serde_json error into DynamoDB's error: a ValidationException if
/// the decoder raised one, otherwise a SerializationException.
pub fn json_error_to_dynamo(error: &serde_json::Error) -> DynamoError {
    let text = error.to_string();
    let bare = match text.rfind(" at line ") {
        Some(cut) if error.line() > 0 => &text[..cut],
        _ => &text[..],
    };
    if let Some(message) = bare.strip_prefix(WRITE_FAMILY_MARKER) {
        return DynamoError::validation(message).in_family(Family::WriteValidation);
    }
    if let Some((older, newer)) = bare
        .strip_prefix(WRAPPED_MARKER)
        .and_then(|m| m.split_once(WRAPPED_SEPARATOR))
    {
        return DynamoError::validation(older).worded_newer(Family::WriteValidation, newer);
    }
    match bare.strip_prefix(VALIDATION_MARKER) {
        Some(message) => DynamoError::validation(message),
        // Report where the JSON broke as a character offset, like DynamoDB's
        // parser (serde counts lines and 1-based columns).
        None if error.line() == 1 => {
            DynamoError::serialization(format!("{bare} at {}", error.column().saturating_sub(1)))
        }
        None => DynamoError::serialization(bare),
    }
}

impl Serialize for AttributeValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1))?;
        match self {
            AttributeValue::S(s) => map.serialize_entry("S", s)?,
            AttributeValue::N(n) => map.serialize_entry("N", &n.to_string())?,
            AttributeValue::B(b) => map.serialize_entry("B", &BASE64.encode(b))?,
            AttributeValue::Bool(b) => map.serialize_entry("BOOL", b)?,
            AttributeValue::Null => map.serialize_entry("NULL", &true)?,
            AttributeValue::L(l) => map.serialize_entry("L", l)?,
            AttributeValue::M(m) => map.serialize_entry("M", m)?,
            AttributeValue::Ss(ss) => map.serialize_entry("SS", ss)?,
            AttributeValue::Ns(ns) => map.serialize_entry("NS", &NumberList(ns))?,
            AttributeValue::Bs(bs) => map.serialize_entry("BS", &BinaryList(bs))?,
        }
        map.end()
    }
}

struct NumberList<'a>(&'a [Number]);

impl Serialize for NumberList<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for n in self.0 {
            seq.serialize_element(&n.to_string())?;
        }
        seq.end()
    }
}

struct BinaryList<'a>(&'a [Vec<u8>]);

impl Serialize for BinaryList<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for b in self.0 {
            seq.serialize_element(&BASE64.encode(b))?;
        }
        seq.end()
    }
}

impl<'de> Deserialize<'de> for AttributeValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(AttributeValueVisitor)
    }
}

struct AttributeValueVisitor;

impl<'de> Visitor<'de> for AttributeValueVisitor {
    type Value = AttributeValue;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an AttributeValue object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<AttributeValue, A::Error> {
        let mut found: Option<AttributeValue> = None;
        let mut types = 0;
        while let Some(key) = map.next_key::<TypeKey>()? {
            let value = match key {
                TypeKey::S => AttributeValue::S(map.next_value()?),
                TypeKey::N => {
                    let text: String = map.next_value()?;
                    AttributeValue::N(parse_number(&text)?)
                }
                TypeKey::B => AttributeValue::B(map.next_value::<Binary>()?.0),
                TypeKey::Bool => AttributeValue::Bool(map.next_value()?),
                TypeKey::Null => {
                    if !map.next_value::<bool>()? {
                        return Err(invalid(
                            "Null attribute value types must have the value of true",
                        ));
                    }
                    AttributeValue::Null
                }
                TypeKey::L => {
                    let _depth = DepthGuard::enter()?;
                    AttributeValue::L(map.next_value()?)
                }
                TypeKey::M => {
                    let _depth = DepthGuard::enter()?;
                    AttributeValue::M(map.next_value()?)
                }
                TypeKey::Ss => string_set(map.next_value()?)?,
                TypeKey::Ns => number_set(map.next_value()?)?,
                TypeKey::Bs => binary_set(map.next_value()?)?,
                TypeKey::Unknown => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            types += 1;
            found = Some(value);
        }
        match (found, types) {
            (Some(value), 1) => Ok(value),
            (None, _) => Err(validation(
                "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes",
            )),
            _ => Err(validation(
                "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes",
            )),
        }
    }
}

/// An SS value: not empty, no duplicates, no null member; members sorted.
fn string_set<E: de::Error>(members: Vec<Option<String>>) -> Result<AttributeValue, E> {
    let shown: Vec<&str> = members
        .iter()
        .map(|m| m.as_deref().unwrap_or("null"))
        .collect();
    check_set(
        &members,
        &shown.join(", "),
        "An string set  may not be empty",
    )?;
    let members = without_nulls(members, || {
        invalid("An string set may not have a null string as a member")
    })?;
    Ok(AttributeValue::Ss(sorted(members)))
}

/// An NS value: valid numbers, not empty, no two equal in value; sorted.
fn number_set<E: de::Error>(texts: Vec<Option<String>>) -> Result<AttributeValue, E> {
    if texts.is_empty() {
        return Err(empty_set("An number set  may not be empty"));
    }
    // DynamoDB Local words a null member as an unconvertible number, before
    // looking at the other members.
    let texts = without_nulls(texts, || {
        validation("A value provided cannot be converted into a number")
    })?;
    let members = texts
        .iter()
        .map(|t| parse_number(t))
        .collect::<Result<Vec<_>, _>>()?;
    if has_duplicates(&members) {
        // Numbers are duplicates when equal in value; DynamoDB words this
        // case without listing the members.
        return Err(validation("Input collection contains duplicates"));
    }
    Ok(AttributeValue::Ns(sorted(members)))
}

/// A BS value: not empty, no duplicates (shown as base64), no null member;
/// sorted.
fn binary_set<E: de::Error>(members: Vec<Option<Binary>>) -> Result<AttributeValue, E> {
    let members: Vec<Option<Vec<u8>>> = members.into_iter().map(|b| b.map(|b| b.0)).collect();
    let shown: Vec<String> = members
        .iter()
        .map(|m| {
            m.as_ref()
                .map_or_else(|| "null".to_owned(), |m| BASE64.encode(m))
        })
        .collect();
    check_set(
        &members,
        &shown.join(", "),
        "Binary sets should not be empty",
    )?;
    // DynamoDB Local fails internally here; AWS's sentence for a null binary
    // (CONFORMANCE.md, "Null set members").
    let members = without_nulls(members, || {
        invalid("An AttributeValue may not contain a null or empty binary type.")
    })?;
    Ok(AttributeValue::Bs(sorted(members)))
}

/// The members of a set, or `error()` if one of them is JSON null: DynamoDB
/// reads such a request and refuses it with a ValidationException, where a
/// plain `Vec<String>` would fail as a SerializationException.
fn without_nulls<T, E>(members: Vec<Option<T>>, error: impl FnOnce() -> E) -> Result<Vec<T>, E> {
    members
        .into_iter()
        .collect::<Option<Vec<T>>>()
        .ok_or_else(error)
}

/// Set members in the order DynamoDB Local and Dynoxide return them, which
/// library tests rely on (AWS documents sets as unordered): strings by their
/// UTF-8 bytes, numbers by value, binaries by unsigned bytes. Sorting when a
/// set is decoded keeps stored items, and so every read, in that order.
fn sorted<T: Ord>(mut members: Vec<T>) -> Vec<T> {
    members.sort_unstable();
    members
}

fn parse_number<E: de::Error>(text: &str) -> Result<Number, E> {
    Number::parse(text).map_err(|e| validation(&e.message(text)))
}

/// Rejects an empty set or one with duplicate members; `shown` is the
/// members as DynamoDB lists them in its message.
fn check_set<T: Hash + Eq, E: de::Error>(
    members: &[T],
    shown: &str,
    empty_message: &str,
) -> Result<(), E> {
    if members.is_empty() {
        return Err(empty_set(empty_message));
    }
    if has_duplicates(members) {
        return Err(invalid(&format!(
            "Input collection [{shown}] contains duplicates"
        )));
    }
    Ok(())
}

/// Decodes ExpressionAttributeValues, naming the placeholder whose value is
/// invalid as DynamoDB does ("... for key :v"). Use with
/// `#[serde(default, deserialize_with = "...")]` on an `Option<HashMap>`.
pub fn deserialize_expression_values<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<HashMap<String, AttributeValue>>, D::Error> {
    struct ValuesVisitor;
    impl<'de> Visitor<'de> for ValuesVisitor {
        type Value = Option<HashMap<String, AttributeValue>>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a map of expression attribute values")
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<Self::Value, D2::Error> {
            d.deserialize_map(self)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = HashMap::new();
            while let Some(key) = map.next_key::<String>()? {
                match map.next_value::<AttributeValue>() {
                    Ok(value) => {
                        out.insert(key, value);
                    }
                    Err(error) => {
                        let text = error.to_string();
                        let text = text
                            .rfind(" at line ")
                            .map_or(&text[..], |cut| &text[..cut]);
                        let older = |message: &str| {
                            format!("ExpressionAttributeValues contains invalid value: {message} for key {key}")
                        };
                        return Err(
                            if let Some(message) = text.strip_prefix(WRITE_FAMILY_MARKER) {
                                // The newer validation reports the set error alone.
                                <A::Error as de::Error>::custom(format_args!(
                                    "{WRAPPED_MARKER}{}{WRAPPED_SEPARATOR}{message}",
                                    older(message)
                                ))
                            } else if let Some(message) = text.strip_prefix(VALIDATION_MARKER) {
                                validation(&older(message))
                            } else {
                                error
                            },
                        );
                    }
                }
            }
            Ok(Some(out))
        }
    }
    deserializer.deserialize_option(ValuesVisitor)
}

/// Linear in the set's size: a legal item may hold a set of tens of
/// thousands of members, and items are decoded on every read and write.
fn has_duplicates<T: Hash + Eq>(members: &[T]) -> bool {
    let mut seen = HashSet::with_capacity(members.len());
    !members.iter().all(|m| seen.insert(m))
}

/// The type tag of an AttributeValue object.
enum TypeKey {
    S,
    N,
    B,
    Bool,
    Null,
    L,
    M,
    Ss,
    Ns,
    Bs,
    Unknown,
}

impl<'de> Deserialize<'de> for TypeKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = TypeKey;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an attribute type")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<TypeKey, E> {
                Ok(match v {
                    "S" => TypeKey::S,
                    "N" => TypeKey::N,
                    "B" => TypeKey::B,
                    "BOOL" => TypeKey::Bool,
                    "NULL" => TypeKey::Null,
                    "L" => TypeKey::L,
                    "M" => TypeKey::M,
                    "SS" => TypeKey::Ss,
                    "NS" => TypeKey::Ns,
                    "BS" => TypeKey::Bs,
                    _ => TypeKey::Unknown,
                })
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// A base64 string decoded to bytes.
struct Binary(Vec<u8>);

impl<'de> Deserialize<'de> for Binary {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct BinaryVisitor;
        impl Visitor<'_> for BinaryVisitor {
            type Value = Binary;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a base64 string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Binary, E> {
                BASE64
                    .decode(v)
                    .map(Binary)
                    .map_err(|_| E::custom("Base64 encoded value is not valid"))
            }
        }
        deserializer.deserialize_str(BinaryVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(text: &str) -> Result<AttributeValue, DynamoError> {
        serde_json::from_str(text).map_err(|e| json_error_to_dynamo(&e))
    }

    #[test]
    fn round_trips_every_type() {
        let text = r#"{"M":{"b":{"B":"AAE="},"bool":{"BOOL":true},"bs":{"BS":["AQ=="]},"l":{"L":[{"NULL":true}]},"n":{"N":"1.5"},"ns":{"NS":["1","2"]},"s":{"S":"x"},"ss":{"SS":["a"]}}}"#;
        let value = decode(text).unwrap();
        assert_eq!(serde_json::to_string(&value).unwrap(), text);
    }

    #[test]
    fn number_is_normalised() {
        assert_eq!(
            decode(r#"{"N":"001.50"}"#).unwrap(),
            AttributeValue::N(Number::parse("1.5").unwrap())
        );
    }

    #[test]
    fn empty_and_ambiguous_values_are_validation_errors() {
        let err = decode("{}").unwrap_err();
        assert_eq!(err.kind.name(), "ValidationException");
        assert!(
            err.message.contains("Supplied AttributeValue is empty"),
            "{}",
            err.message
        );
        let err = decode(r#"{"S":"a","N":"1"}"#).unwrap_err();
        assert!(err.message.contains("more than one datatypes"));
        let err = decode(r#"{"SS":["a","b","a"]}"#).unwrap_err();
        assert_eq!(
            err.message,
            "One or more parameter values were invalid: Input collection [a, b, a] contains duplicates"
        );
        let err = decode(r#"{"NS":["1","1.0"]}"#).unwrap_err();
        assert!(err.message.contains("duplicates"), "{}", err.message);
        let err = decode(r#"{"SS":[]}"#).unwrap_err();
        assert!(err.message.contains("may not be empty"));
    }

    #[test]
    fn number_given_as_json_number_is_a_serialization_error() {
        let err = decode(r#"{"N":123}"#).unwrap_err();
        assert_eq!(err.kind.name(), "SerializationException");
    }

    #[test]
    fn a_null_set_member_is_a_validation_error() {
        let cases = [
            (r#"{"SS":["a",null]}"#, "One or more parameter values were invalid: An string set may not have a null string as a member"),
            (r#"{"SS":["a","a",null]}"#, "One or more parameter values were invalid: Input collection [a, a, null] contains duplicates"),
            (r#"{"NS":["1",null]}"#, "A value provided cannot be converted into a number"),
            (r#"{"NS":[null,"x"]}"#, "A value provided cannot be converted into a number"),
            (r#"{"BS":[null]}"#, "One or more parameter values were invalid: An AttributeValue may not contain a null or empty binary type."),
            (r#"{"L":[{"SS":[null]}]}"#, "One or more parameter values were invalid: An string set may not have a null string as a member"),
        ];
        for (text, message) in cases {
            let err = decode(text).unwrap_err();
            assert_eq!(err.kind.name(), "ValidationException", "{text}");
            assert_eq!(err.message, message, "{text}");
        }
    }

    #[test]
    fn nesting_is_limited() {
        let deep = |levels: usize| {
            let mut text = r#"{"S":"x"}"#.to_string();
            for _ in 0..levels {
                text = format!(r#"{{"M":{{"a":{text}}}}}"#);
            }
            text
        };
        assert!(decode(&deep(32)).is_ok());
        let err = decode(&deep(33)).unwrap_err();
        assert!(err.message.contains("Nesting Levels"), "{}", err.message);
        // The depth counter is reset after an error.
        assert!(decode(&deep(32)).is_ok());
    }
}
