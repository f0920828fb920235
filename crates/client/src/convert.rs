//! Plain JSON ↔ DynamoDB JSON, without losing anything on the way in.
//!
//! Plain JSON is parsed by [`Plain::parse`], which keeps every number as the
//! exact text it was written as (a generic JSON parser would round
//! `12345678901234567890.5` to a float). DynamoDB JSON (`{"N": "1.5"}`) is a
//! `serde_json::Value`, where numbers are already strings.
//!
//! Plain JSON has no sets and no binary. Going to plain JSON, these become
//! lists and base64 strings and a [`Warning`] says so, unless `tagged` is
//! asked for: then they become `{"$SS": [..]}`, `{"$NS": [..]}`,
//! `{"$BS": [..]}` and `{"$B": ".."}`, which [`to_ddb`] turns back into the
//! same types, so a round trip is exact.

use base64::Engine;
use serde_json::{json, Map, Value};
use std::fmt::Write as _;

/// DynamoDB keeps 38 significant digits; more is rejected by the service.
const MAX_NUMBER_DIGITS: usize = 38;
/// Deeper documents are refused rather than risking the stack.
const MAX_DEPTH: usize = 128;

/// A conversion that cannot be done (malformed input).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct ConvertError {
    /// Where in the document, such as `$.tags[2]` (`$` is the whole value).
    pub path: String,
    pub message: String,
}

/// A conversion that succeeded but changed a type or may be rejected later.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// A plain JSON value whose numbers keep their exact text.
#[derive(Debug, Clone, PartialEq)]
pub enum Plain {
    Null,
    Bool(bool),
    /// The number's literal text, such as `-1.50e3`.
    Number(String),
    String(String),
    Array(Vec<Plain>),
    /// Members in document order.
    Object(Vec<(String, Plain)>),
}

impl Plain {
    /// Parses one JSON document (surrounding whitespace allowed).
    pub fn parse(text: &str) -> Result<Plain, ConvertError> {
        let mut parser = Parser {
            bytes: text.as_bytes(),
            text,
            pos: 0,
        };
        parser.skip_ws();
        let value = parser.value(0)?;
        parser.skip_ws();
        if parser.pos != parser.bytes.len() {
            return Err(parser.error("unexpected text after the JSON value"));
        }
        Ok(value)
    }

    /// Parses the one JSON value that `text` starts with and returns it with
    /// the byte length it took, so a caller can read a JSON literal embedded
    /// in other syntax (the expression builder's `[..]` and `{..}`).
    pub fn parse_prefix(text: &str) -> Result<(Plain, usize), ConvertError> {
        let mut parser = Parser {
            bytes: text.as_bytes(),
            text,
            pos: 0,
        };
        let value = parser.value(0)?;
        Ok((value, parser.pos))
    }

    /// From a `serde_json::Value` (its numbers are whatever serde_json kept).
    pub fn from_json(value: &Value) -> Plain {
        match value {
            Value::Null => Plain::Null,
            Value::Bool(b) => Plain::Bool(*b),
            Value::Number(n) => Plain::Number(n.to_string()),
            Value::String(s) => Plain::String(s.clone()),
            Value::Array(a) => Plain::Array(a.iter().map(Plain::from_json).collect()),
            Value::Object(o) => Plain::Object(
                o.iter()
                    .map(|(k, v)| (k.clone(), Plain::from_json(v)))
                    .collect(),
            ),
        }
    }

    /// Compact JSON text.
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, None, 0);
        out
    }

    /// Indented JSON text (two spaces).
    pub fn to_json_pretty(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, Some(2), 0);
        out
    }

    /// The member `name` of an object.
    pub fn get(&self, name: &str) -> Option<&Plain> {
        match self {
            Plain::Object(members) => members.iter().find(|(k, _)| k == name).map(|(_, v)| v),
            _ => None,
        }
    }

    fn write(&self, out: &mut String, indent: Option<usize>, level: usize) {
        let newline = |out: &mut String, level: usize| {
            if let Some(step) = indent {
                out.push('\n');
                out.push_str(&" ".repeat(step * level));
            }
        };
        match self {
            Plain::Null => out.push_str("null"),
            Plain::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Plain::Number(n) => out.push_str(n),
            Plain::String(s) => write_string(out, s),
            Plain::Array(items) if items.is_empty() => out.push_str("[]"),
            Plain::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    newline(out, level + 1);
                    item.write(out, indent, level + 1);
                }
                newline(out, level);
                out.push(']');
            }
            Plain::Object(members) if members.is_empty() => out.push_str("{}"),
            Plain::Object(members) => {
                out.push('{');
                for (i, (name, value)) in members.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    newline(out, level + 1);
                    write_string(out, name);
                    out.push(':');
                    if indent.is_some() {
                        out.push(' ');
                    }
                    value.write(out, indent, level + 1);
                }
                newline(out, level);
                out.push('}');
            }
        }
    }
}

fn write_string(out: &mut String, s: &str) {
    out.push_str(&serde_json::to_string(s).expect("plain data always serialises"));
}

/// A recursive-descent JSON parser (RFC 8259) that keeps number text.
struct Parser<'a> {
    bytes: &'a [u8],
    text: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn error(&self, message: &str) -> ConvertError {
        let line = self.text[..self.pos.min(self.text.len())]
            .matches('\n')
            .count()
            + 1;
        ConvertError {
            path: format!("line {line}, byte {}", self.pos),
            message: message.to_string(),
        }
    }

    fn skip_ws(&mut self) {
        while self.pos < self.bytes.len()
            && matches!(self.bytes[self.pos], b' ' | b'\t' | b'\n' | b'\r')
        {
            self.pos += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Result<Plain, ConvertError> {
        if depth > MAX_DEPTH {
            return Err(self.error("nested too deeply"));
        }
        match self.bytes.get(self.pos) {
            None => Err(self.error("unexpected end of input")),
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => Ok(Plain::String(self.string()?)),
            Some(b't') => self.literal("true", Plain::Bool(true)),
            Some(b'f') => self.literal("false", Plain::Bool(false)),
            Some(b'n') => self.literal("null", Plain::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.error("expected a JSON value")),
        }
    }

    fn literal(&mut self, word: &str, value: Plain) -> Result<Plain, ConvertError> {
        if self.bytes[self.pos..].starts_with(word.as_bytes()) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.error("expected a JSON value"))
        }
    }

    fn number(&mut self) -> Result<Plain, ConvertError> {
        let start = self.pos;
        let end =
            number_literal_end(self.bytes, start).ok_or_else(|| self.error("malformed number"))?;
        self.pos = end;
        Ok(Plain::Number(self.text[start..end].to_string()))
    }

    fn string(&mut self) -> Result<String, ConvertError> {
        // Find the closing quote, then let serde_json decode the escapes.
        let start = self.pos;
        self.pos += 1;
        loop {
            match self.bytes.get(self.pos) {
                None => return Err(self.error("unterminated string")),
                Some(b'"') => break,
                Some(b'\\') => self.pos += 2,
                Some(_) => self.pos += 1,
            }
        }
        self.pos += 1;
        serde_json::from_str(&self.text[start..self.pos])
            .map_err(|e| self.error(&format!("bad string: {e}")))
    }

    fn array(&mut self, depth: usize) -> Result<Plain, ConvertError> {
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.bytes.get(self.pos) == Some(&b']') {
            self.pos += 1;
            return Ok(Plain::Array(items));
        }
        loop {
            self.skip_ws();
            items.push(self.value(depth + 1)?);
            self.skip_ws();
            match self.bytes.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Plain::Array(items));
                }
                _ => return Err(self.error("expected `,` or `]`")),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Plain, ConvertError> {
        self.pos += 1;
        let mut members: Vec<(String, Plain)> = Vec::new();
        self.skip_ws();
        if self.bytes.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            return Ok(Plain::Object(members));
        }
        loop {
            self.skip_ws();
            if self.bytes.get(self.pos) != Some(&b'"') {
                return Err(self.error("expected a member name in quotes"));
            }
            let name = self.string()?;
            self.skip_ws();
            if self.bytes.get(self.pos) != Some(&b':') {
                return Err(self.error("expected `:`"));
            }
            self.pos += 1;
            self.skip_ws();
            let value = self.value(depth + 1)?;
            // Last one wins, as in most JSON parsers, keeping first position.
            match members.iter_mut().find(|(k, _)| *k == name) {
                Some(slot) => slot.1 = value,
                None => members.push((name, value)),
            }
            self.skip_ws();
            match self.bytes.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Plain::Object(members));
                }
                _ => return Err(self.error("expected `,` or `}`")),
            }
        }
    }
}

/// The end of a JSON number literal starting at `start`, if well formed.
fn number_literal_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start;
    let digits = |i: &mut usize| {
        let from = *i;
        while *i < bytes.len() && bytes[*i].is_ascii_digit() {
            *i += 1;
        }
        *i > from
    };
    if bytes.get(i) == Some(&b'-') {
        i += 1;
    }
    match bytes.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => {
            digits(&mut i);
        }
        _ => return None,
    }
    if bytes.get(i) == Some(&b'.') {
        i += 1;
        if !digits(&mut i) {
            return None;
        }
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(bytes.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !digits(&mut i) {
            return None;
        }
    }
    Some(i)
}

/// Whether `text` is exactly one JSON number literal.
fn is_json_number(text: &str) -> bool {
    number_literal_end(text.as_bytes(), 0) == Some(text.len())
}

/// Significant digits of a number literal (leading/trailing zeros dropped).
fn significant_digits(text: &str) -> usize {
    let mantissa = text.split(['e', 'E']).next().unwrap_or(text);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    digits.trim_start_matches('0').trim_end_matches('0').len()
}

/// A plain value as a DynamoDB attribute value. Objects with a single `$SS`,
/// `$NS`, `$BS` or `$B` member become sets and binary (see the module docs).
pub fn to_ddb(value: &Plain) -> Result<(Value, Vec<Warning>), ConvertError> {
    let mut warnings = Vec::new();
    let value = to_ddb_at(value, "$", &mut warnings)?;
    Ok((value, warnings))
}

/// A plain JSON object as a DynamoDB item (`{"name": {"S": ..}, ..}`).
pub fn item_to_ddb(value: &Plain) -> Result<(Map<String, Value>, Vec<Warning>), ConvertError> {
    let Plain::Object(members) = value else {
        return Err(ConvertError {
            path: "$".into(),
            message: "an item must be a JSON object".into(),
        });
    };
    let mut warnings = Vec::new();
    let mut item = Map::new();
    for (name, member) in members {
        let path = format!("$.{name}");
        item.insert(name.clone(), to_ddb_at(member, &path, &mut warnings)?);
    }
    Ok((item, warnings))
}

/// Parses plain JSON text and converts it to an item in one step.
pub fn item_from_plain_text(
    text: &str,
) -> Result<(Map<String, Value>, Vec<Warning>), ConvertError> {
    item_to_ddb(&Plain::parse(text)?)
}

fn to_ddb_at(
    value: &Plain,
    path: &str,
    warnings: &mut Vec<Warning>,
) -> Result<Value, ConvertError> {
    let error = |message: String| ConvertError {
        path: path.to_string(),
        message,
    };
    Ok(match value {
        Plain::Null => json!({ "NULL": true }),
        Plain::Bool(b) => json!({ "BOOL": b }),
        Plain::Number(n) => {
            if significant_digits(n) > MAX_NUMBER_DIGITS {
                warnings.push(Warning {
                    path: path.to_string(),
                    message: format!("{n} has more than {MAX_NUMBER_DIGITS} significant digits; DynamoDB will reject it"),
                });
            }
            json!({ "N": n })
        }
        Plain::String(s) => json!({ "S": s }),
        Plain::Array(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, item)| to_ddb_at(item, &format!("{path}[{i}]"), warnings))
                .collect::<Result<_, _>>()?,
        )
        .pipe(|list| json!({ "L": list })),
        Plain::Object(members) => {
            if let [(tag, inner)] = members.as_slice() {
                if let Some(value) = tagged_to_ddb(tag, inner).map_err(error)? {
                    return Ok(value);
                }
            }
            let mut map = Map::new();
            for (name, member) in members {
                map.insert(
                    name.clone(),
                    to_ddb_at(member, &format!("{path}.{name}"), warnings)?,
                );
            }
            json!({ "M": map })
        }
    })
}

/// Small helper so a value can be wrapped at the end of an expression.
trait Pipe: Sized {
    fn pipe<T>(self, f: impl FnOnce(Self) -> T) -> T {
        f(self)
    }
}
impl Pipe for Value {}

/// `{"$SS": [..]}` and friends; `Ok(None)` when `tag` is not a type tag.
fn tagged_to_ddb(tag: &str, inner: &Plain) -> Result<Option<Value>, String> {
    let base64_ok = |s: &str| base64::engine::general_purpose::STANDARD.decode(s).is_ok();
    let strings = |kind: &str| -> Result<Vec<String>, String> {
        let Plain::Array(items) = inner else {
            return Err(format!("`{tag}` needs an array"));
        };
        items
            .iter()
            .map(|item| match (kind, item) {
                ("N", Plain::Number(n)) => Ok(n.clone()),
                ("N", Plain::String(n)) if is_json_number(n) => Ok(n.clone()),
                ("S", Plain::String(s)) => Ok(s.clone()),
                ("B", Plain::String(s)) if base64_ok(s) => Ok(s.clone()),
                _ => Err(format!("`{tag}` members must all be {}", kind_name(kind))),
            })
            .collect()
    };
    Ok(Some(match tag {
        "$SS" => json!({ "SS": strings("S")? }),
        "$NS" => json!({ "NS": strings("N")? }),
        "$BS" => json!({ "BS": strings("B")? }),
        "$B" => match inner {
            Plain::String(s) if base64_ok(s) => json!({ "B": s }),
            _ => return Err("`$B` needs a base64 string".into()),
        },
        _ => return Ok(None),
    }))
}

fn kind_name(kind: &str) -> &'static str {
    match kind {
        "N" => "numbers",
        "S" => "strings",
        _ => "base64 strings",
    }
}

/// A DynamoDB attribute value as plain JSON. With `tagged`, sets and binary
/// become `$`-tagged objects; without, they become lists and base64 strings
/// with a warning.
pub fn from_ddb(value: &Value, tagged: bool) -> Result<(Plain, Vec<Warning>), ConvertError> {
    let mut warnings = Vec::new();
    let plain = from_ddb_at(value, "$", tagged, &mut warnings)?;
    Ok((plain, warnings))
}

/// A DynamoDB item (`{"name": {"S": ..}}`) as a plain JSON object.
pub fn item_from_ddb(item: &Value, tagged: bool) -> Result<(Plain, Vec<Warning>), ConvertError> {
    let Value::Object(map) = item else {
        return Err(ConvertError {
            path: "$".into(),
            message: "an item must be a JSON object of attribute values".into(),
        });
    };
    let mut warnings = Vec::new();
    let mut members = Vec::with_capacity(map.len());
    for (name, value) in map {
        members.push((
            name.clone(),
            from_ddb_at(value, &format!("$.{name}"), tagged, &mut warnings)?,
        ));
    }
    Ok((Plain::Object(members), warnings))
}

fn from_ddb_at(
    value: &Value,
    path: &str,
    tagged: bool,
    warnings: &mut Vec<Warning>,
) -> Result<Plain, ConvertError> {
    let mut at = Site {
        path,
        tagged,
        warnings,
    };
    let Some((kind, inner)) = value
        .as_object()
        .filter(|m| m.len() == 1)
        .and_then(|m| m.iter().next())
    else {
        return Err(at.error("expected an attribute value with one type, such as {\"S\": \"x\"}"));
    };
    match kind.as_str() {
        "S" | "N" | "BOOL" | "NULL" | "B" => at.scalar(kind, inner),
        "SS" | "BS" | "NS" => at.set(kind, inner),
        "L" => {
            let items = inner
                .as_array()
                .ok_or_else(|| at.error("`L` must be an array"))?;
            let items = items
                .iter()
                .enumerate()
                .map(|(i, v)| from_ddb_at(v, &format!("{path}[{i}]"), tagged, at.warnings))
                .collect::<Result<_, _>>()?;
            Ok(Plain::Array(items))
        }
        "M" => {
            let members = inner
                .as_object()
                .ok_or_else(|| at.error("`M` must be an object"))?;
            let members = members
                .iter()
                .map(|(k, v)| {
                    let value = from_ddb_at(v, &format!("{path}.{k}"), tagged, at.warnings)?;
                    Ok((k.clone(), value))
                })
                .collect::<Result<_, ConvertError>>()?;
            Ok(Plain::Object(members))
        }
        other => Err(at.error(&format!("unknown attribute type `{other}`"))),
    }
}

/// Where in a document a DynamoDB JSON value is being converted, and what
/// the conversion reports there.
struct Site<'a> {
    path: &'a str,
    tagged: bool,
    warnings: &'a mut Vec<Warning>,
}

impl Site<'_> {
    fn error(&self, message: &str) -> ConvertError {
        ConvertError {
            path: self.path.to_string(),
            message: message.to_string(),
        }
    }

    fn warn(&mut self, message: String) {
        self.warnings.push(Warning {
            path: self.path.to_string(),
            message,
        });
    }

    /// A number as a JSON number, or (not valid JSON number syntax) a string.
    fn number(&mut self, n: &str) -> Plain {
        if is_json_number(n) {
            return Plain::Number(n.to_string());
        }
        self.warn(format!(
            "number {n:?} is not valid JSON number syntax; written as a string"
        ));
        Plain::String(n.to_string())
    }

    fn scalar(&mut self, kind: &str, inner: &Value) -> Result<Plain, ConvertError> {
        let text = |what: &str| {
            inner
                .as_str()
                .ok_or_else(|| self.error(&format!("`{kind}` must be {what}")))
        };
        Ok(match kind {
            "S" => Plain::String(text("a string")?.to_string()),
            "N" => {
                let n = text("a string")?.to_string();
                self.number(&n)
            }
            "B" => {
                let b = text("a base64 string")?.to_string();
                if self.tagged {
                    Plain::Object(vec![("$B".into(), Plain::String(b))])
                } else {
                    self.warn("binary written as a base64 string (typed output keeps it)".into());
                    Plain::String(b)
                }
            }
            "BOOL" => Plain::Bool(
                inner
                    .as_bool()
                    .ok_or_else(|| self.error("`BOOL` must be true or false"))?,
            ),
            _ => Plain::Null,
        })
    }

    /// SS, NS or BS: a tagged set, or a list with a warning.
    fn set(&mut self, kind: &str, inner: &Value) -> Result<Plain, ConvertError> {
        let what = if kind == "NS" {
            "number strings"
        } else {
            "strings"
        };
        let members: Vec<String> = inner
            .as_array()
            .and_then(|items| {
                items
                    .iter()
                    .map(|i| i.as_str().map(str::to_string))
                    .collect()
            })
            .ok_or_else(|| self.error(&format!("`{kind}` must be an array of {what}")))?;
        let items: Vec<Plain> = if kind == "NS" {
            members.iter().map(|n| self.number(n)).collect()
        } else {
            members.into_iter().map(Plain::String).collect()
        };
        if self.tagged {
            return Ok(Plain::Object(vec![(
                format!("${kind}"),
                Plain::Array(items),
            )]));
        }
        let name = match kind {
            "SS" => "string set",
            "NS" => "number set",
            _ => "binary set (base64 strings)",
        };
        self.warn(format!("{name} written as a list (typed output keeps it)"));
        Ok(Plain::Array(items))
    }
}

/// Renders an attribute value compactly for people: strings bare, numbers as
/// written, sets as `{a, b}`, everything else as plain JSON. Used by tables.
pub fn display(value: &Value) -> String {
    let Some((kind, inner)) = value
        .as_object()
        .filter(|m| m.len() == 1)
        .and_then(|m| m.iter().next())
    else {
        return value.to_string();
    };
    match (kind.as_str(), inner) {
        ("S" | "N" | "B", Value::String(s)) => s.clone(),
        ("BOOL", Value::Bool(b)) => b.to_string(),
        ("NULL", _) => "null".to_string(),
        ("SS" | "NS" | "BS", Value::Array(items)) => {
            let mut out = String::from("{");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                let _ = write!(out, "{}", item.as_str().unwrap_or_default());
            }
            out.push('}');
            out
        }
        _ => match from_ddb(value, true) {
            Ok((plain, _)) => plain.to_json(),
            Err(_) => value.to_string(),
        },
    }
}

#[cfg(test)]
mod tests;
