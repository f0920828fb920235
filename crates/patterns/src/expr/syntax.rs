//! The builder's readable syntax: DynamoDB's expression grammar written with
//! real attribute names and literal values instead of `#name`/`:value`
//! placeholders, e.g.
//!
//! ```text
//! attribute_not_exists(pk) and status = "active" and age between 18 and 65
//! SET visits = visits + 1, tags = list_append(tags, ["new"]) REMOVE draft
//! pk = "u1" and begins_with(sk, "ORDER#")
//! ```
//!
//! - Names: `a.b[2].c`; a name that is not a plain identifier goes in
//!   backticks (`` `first-name` ``). Reserved words need no care: they are
//!   aliased automatically.
//! - Literals: `"text"` or `'text'` (S), `12.5` (N, kept exact), `true` /
//!   `false` (BOOL), `null` (NULL), `[...]` (L) and `{...}` (M) in JSON, and
//!   `ss("a","b")`, `ns(1,2)`, `bs("AQI=")` for sets and `b64("AQI=")` for B.
//!
//! Rewriting is token by token: names become aliases where needed, literals
//! become placeholders, everything else (operators, keywords, functions) is
//! copied. The grammar itself is then checked by `ferrodyn-expr`, the same
//! parser the server uses, so a mistake is reported before any request.

use super::placeholders::Placeholders;
use ferrodyn_client::convert;
use serde_json::{json, Value};

/// One token of the readable syntax.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    /// A document path: names and list indexes.
    Path(Vec<Segment>),
    /// A function name (it is followed by `(`).
    Function(String),
    /// A keyword or operator copied as written (upper-cased keywords).
    Word(String),
    /// A typed literal value.
    Literal(Value),
    LParen,
    RParen,
    Comma,
}

#[derive(Debug, Clone, PartialEq)]
enum Segment {
    Name(String),
    Index(u64),
}

const FUNCTIONS: [&str; 8] = [
    "attribute_exists",
    "attribute_not_exists",
    "attribute_type",
    "begins_with",
    "contains",
    "size",
    "if_not_exists",
    "list_append",
];

const KEYWORDS: [&str; 9] = [
    "AND", "OR", "NOT", "BETWEEN", "IN", "SET", "REMOVE", "ADD", "DELETE",
];

/// Splits `src` into tokens.
fn tokenize(src: &str) -> Result<Vec<Token>, String> {
    let mut tokens: Vec<Token> = Vec::new();
    let mut i = 0;
    while i < src.len() {
        let (token, end) = token_at(src, i, tokens.last())?;
        tokens.extend(token);
        i = end;
    }
    Ok(tokens)
}

/// The token starting at byte `i` (None for whitespace) and where it ends;
/// `previous` tells a minus sign from a negative number.
fn token_at(
    src: &str,
    i: usize,
    previous: Option<&Token>,
) -> Result<(Option<Token>, usize), String> {
    let c = src.as_bytes()[i] as char;
    let one = |token: Token| Ok((Some(token), i + 1));
    let literal = |(value, end): (Value, usize)| Ok((Some(Token::Literal(value)), end));
    match c {
        ' ' | '\t' | '\n' | '\r' => Ok((None, i + 1)),
        '(' => one(Token::LParen),
        ')' => one(Token::RParen),
        ',' => one(Token::Comma),
        '=' | '+' => one(Token::Word(c.to_string())),
        '<' | '>' => {
            let two = src.get(i..i + 2).unwrap_or("");
            let op = if two == "<=" || two == ">=" || two == "<>" {
                two
            } else {
                &src[i..i + 1]
            };
            Ok((Some(Token::Word(op.to_string())), i + op.len()))
        }
        '-' => {
            let value_position = !matches!(
                previous,
                Some(Token::Path(_) | Token::Literal(_) | Token::RParen)
            );
            let next_is_digit = src.as_bytes().get(i + 1).is_some_and(u8::is_ascii_digit);
            if value_position && next_is_digit {
                literal(number_literal(src, i))
            } else {
                one(Token::Word("-".into()))
            }
        }
        '0'..='9' => literal(number_literal(src, i)),
        '"' | '[' | '{' => literal(json_literal(src, i)?),
        '\'' => {
            let (text, end) = single_quoted(src, i)?;
            literal((json!({ "S": text }), end))
        }
        '`' => {
            let (path, end) = path(src, i)?;
            Ok((Some(Token::Path(path)), end))
        }
        '#' | ':' => Err(format!(
            "write attribute names and values directly (found `{c}` at offset {i}): \
             placeholders are generated for you"
        )),
        c if c.is_ascii_alphabetic() || c == '_' => {
            word_token(src, i).map(|(token, end)| (Some(token), end))
        }
        other => Err(format!("unexpected character `{other}` at offset {i}")),
    }
}

fn number_literal(src: &str, start: usize) -> (Value, usize) {
    let (text, end) = number(src, start);
    (json!({ "N": text }), end)
}

/// A word at `i`: a keyword, a function name, a typed constructor such as
/// `ss(...)`, `true`/`false`/`null`, or the start of a path.
fn word_token(src: &str, i: usize) -> Result<(Token, usize), String> {
    let end = ident_end(src.as_bytes(), i);
    let word = &src[i..end];
    let lower = word.to_ascii_lowercase();
    let followed_by_paren = src[end..].trim_start().starts_with('(');
    if KEYWORDS.contains(&word.to_ascii_uppercase().as_str()) {
        Ok((Token::Word(word.to_ascii_uppercase()), end))
    } else if followed_by_paren && FUNCTIONS.contains(&lower.as_str()) {
        Ok((Token::Function(lower), end))
    } else if followed_by_paren && ["ss", "ns", "bs", "b64"].contains(&lower.as_str()) {
        let (value, after) = typed_constructor(src, &lower, end)?;
        Ok((Token::Literal(value), after))
    } else if followed_by_paren {
        Err(format!("unknown function `{word}`"))
    } else if lower == "true" || lower == "false" {
        Ok((Token::Literal(json!({ "BOOL": lower == "true" })), end))
    } else if lower == "null" {
        Ok((Token::Literal(json!({ "NULL": true })), end))
    } else {
        let (path, after) = path(src, i)?;
        Ok((Token::Path(path), after))
    }
}

fn ident_end(bytes: &[u8], start: usize) -> usize {
    let mut end = start;
    while end < bytes.len() && (bytes[end].is_ascii_alphanumeric() || bytes[end] == b'_') {
        end += 1;
    }
    end
}

/// A number's text (sign, digits, fraction, exponent) from `start`.
fn number(src: &str, start: usize) -> (String, usize) {
    let bytes = src.as_bytes();
    let mut end = start + 1;
    while end < bytes.len() {
        let b = bytes[end];
        let exponent_sign = (b == b'+' || b == b'-') && matches!(bytes[end - 1], b'e' | b'E');
        if b.is_ascii_digit() || b == b'.' || b == b'e' || b == b'E' || exponent_sign {
            end += 1;
        } else {
            break;
        }
    }
    (src[start..end].to_string(), end)
}

/// One JSON literal starting at `start`, typed (strings S, numbers N with
/// their exact text, lists L, objects M), and where it ends. The client's
/// converter parses it, so `[12345678901234567890.5]` is not rounded.
fn json_literal(src: &str, start: usize) -> Result<(Value, usize), String> {
    let bad = |e: convert::ConvertError| format!("bad literal at offset {start}: {}", e.message);
    let (plain, len) = convert::Plain::parse_prefix(&src[start..]).map_err(bad)?;
    let (typed, _warnings) = convert::to_ddb(&plain).map_err(bad)?;
    Ok((typed, start + len))
}

/// A `'...'` string (`\'` and `\\` escape) from `start`.
fn single_quoted(src: &str, start: usize) -> Result<(String, usize), String> {
    let mut out = String::new();
    let mut chars = src[start + 1..].char_indices();
    while let Some((offset, c)) = chars.next() {
        match c {
            '\'' => return Ok((out, start + 1 + offset + 1)),
            '\\' => match chars.next() {
                Some((_, e)) => out.push(e),
                None => break,
            },
            c => out.push(c),
        }
    }
    Err(format!("unterminated string starting at offset {start}"))
}

/// A document path from `start`: names (plain or backticked) separated by
/// `.`, each optionally followed by `[index]`s.
fn path(src: &str, start: usize) -> Result<(Vec<Segment>, usize), String> {
    let bytes = src.as_bytes();
    let mut segments = Vec::new();
    let mut i = start;
    loop {
        if bytes.get(i) == Some(&b'`') {
            let close = src[i + 1..]
                .find('`')
                .ok_or_else(|| format!("unterminated `name` at offset {i}"))?;
            let name = &src[i + 1..i + 1 + close];
            if name.is_empty() {
                return Err(format!("empty `` name at offset {i}"));
            }
            segments.push(Segment::Name(name.to_string()));
            i += close + 2;
        } else if bytes
            .get(i)
            .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
        {
            let end = ident_end(bytes, i);
            segments.push(Segment::Name(src[i..end].to_string()));
            i = end;
        } else {
            return Err(format!("expected an attribute name at offset {i}"));
        }
        while bytes.get(i) == Some(&b'[') {
            let close = src[i..]
                .find(']')
                .ok_or_else(|| format!("unterminated [index] at offset {i}"))?;
            let index = src[i + 1..i + close]
                .trim()
                .parse()
                .map_err(|_| format!("list index at offset {i} is not a number"))?;
            segments.push(Segment::Index(index));
            i += close + 1;
        }
        if bytes.get(i) == Some(&b'.') {
            i += 1;
        } else {
            return Ok((segments, i));
        }
    }
}

/// `ss(...)`, `ns(...)`, `bs(...)` and `b64(...)`: values JSON cannot type.
fn typed_constructor(src: &str, name: &str, after_name: usize) -> Result<(Value, usize), String> {
    let open = after_name + src[after_name..].find('(').expect("checked by caller");
    let (members, end) = constructor_members(src, name, open + 1)?;
    let texts = |kind: &str| -> Result<Vec<String>, String> {
        members
            .iter()
            .map(|m| match m {
                convert::Plain::String(s) => Ok(s.clone()),
                // The number's exact text: a set of big numbers is not rounded.
                convert::Plain::Number(n) if kind == "ns" => Ok(n.clone()),
                other => Err(format!(
                    "{name}(...) members must be {kind} values, got {}",
                    other.to_json()
                )),
            })
            .collect()
    };
    let value = match name {
        "ss" => json!({ "SS": texts("ss")? }),
        "ns" => json!({ "NS": texts("ns")? }),
        "bs" => json!({ "BS": texts("base64 string")? }),
        _ => match texts("base64 string")?.as_slice() {
            [one] => json!({ "B": one }),
            _ => return Err("b64(...) takes one base64 string".into()),
        },
    };
    Ok((value, end))
}

/// The comma-separated JSON values of a constructor from `pos` (just after
/// its `(`) and the offset after its `)`. Values are parsed one by one, so a
/// `)` inside a string does not end the list.
fn constructor_members(
    src: &str,
    name: &str,
    mut pos: usize,
) -> Result<(Vec<convert::Plain>, usize), String> {
    let skip_ws = |p: usize| p + (src[p..].len() - src[p..].trim_start().len());
    let mut members = Vec::new();
    loop {
        pos = skip_ws(pos);
        if members.is_empty() && src[pos..].starts_with(')') {
            return Ok((members, pos + 1));
        }
        let (member, len) = convert::Plain::parse_prefix(&src[pos..])
            .map_err(|e| format!("bad members in {name}(...): {}", e.message))?;
        members.push(member);
        pos = skip_ws(pos + len);
        match src[pos..].chars().next() {
            Some(',') => pos += 1,
            Some(')') => return Ok((members, pos + 1)),
            _ => return Err(format!("unterminated {name}( at offset {pos}")),
        }
    }
}

/// Rewrites readable `src` into DynamoDB syntax, registering names and values
/// in `placeholders`.
pub fn rewrite(src: &str, placeholders: &mut Placeholders) -> Result<String, String> {
    let tokens = tokenize(src)?;
    let mut out = String::new();
    // Values are named after the attribute they most recently followed.
    let mut hint = String::from("v");
    let mut previous: Option<&Token> = None;
    for token in &tokens {
        let text = match token {
            Token::Path(segments) => {
                let mut text = String::new();
                for segment in segments {
                    match segment {
                        Segment::Name(name) => {
                            if !text.is_empty() {
                                text.push('.');
                            }
                            text.push_str(&placeholders.name(name));
                            hint = name.clone();
                        }
                        Segment::Index(n) => text.push_str(&format!("[{n}]")),
                    }
                }
                text
            }
            Token::Function(name) => name.clone(),
            Token::Word(word) => word.clone(),
            Token::Literal(value) => placeholders.value(&hint, value.clone()),
            Token::LParen => "(".into(),
            Token::RParen => ")".into(),
            Token::Comma => ",".into(),
        };
        let glue = matches!(token, Token::RParen | Token::Comma)
            || matches!(previous, Some(Token::LParen | Token::Function(_)) | None);
        if !glue {
            out.push(' ');
        }
        out.push_str(&text);
        previous = Some(token);
    }
    Ok(out)
}

/// Renders `value` (plain text from a flag such as `--eq status=active`) as a
/// literal of the readable syntax: kept if it already is one (`21`, `"x"`,
/// `true`, `[1]`, `ss("a")`), else quoted as a string.
pub fn literal_from_flag(value: &str) -> String {
    let trimmed = value.trim();
    match tokenize(trimmed) {
        Ok(tokens) if tokens.len() == 1 && matches!(tokens[0], Token::Literal(_)) => {
            trimmed.to_string()
        }
        _ => Value::String(value.to_string()).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rw(src: &str) -> (String, Placeholders) {
        let mut p = Placeholders::new();
        let out = rewrite(src, &mut p).unwrap();
        (out, p)
    }

    #[test]
    fn condition_names_and_values_become_placeholders() {
        let (out, p) = rw(r#"attribute_not_exists(pk) and status = "active" and age >= 21"#);
        assert_eq!(
            out,
            "attribute_not_exists(pk) AND #status = :status AND age >= :age"
        );
        assert_eq!(p.names["#status"], "status");
        assert_eq!(p.values[":status"], json!({"S":"active"}));
        assert_eq!(p.values[":age"], json!({"N":"21"}));
    }

    #[test]
    fn numbers_stay_exact_and_negative_literals_are_told_from_minus() {
        let (out, p) = rw("SET n = n - 1, m = -12345678901234567890.123456789012345678");
        assert_eq!(out, "SET n = n - :n, m = :m");
        assert_eq!(
            p.values[":m"],
            json!({"N":"-12345678901234567890.123456789012345678"})
        );
    }

    #[test]
    fn numbers_inside_list_map_and_set_literals_stay_exact() {
        let (_, p) = rw(
            r#"SET l = [12345678901234567890.5], m = {"n": 1e400}, s = ns(99999999999999999999999999999999999999)"#,
        );
        assert_eq!(
            p.values[":l"],
            json!({"L":[{"N":"12345678901234567890.5"}]})
        );
        assert_eq!(p.values[":m"], json!({"M":{"n":{"N":"1e400"}}}));
        assert_eq!(
            p.values[":s"],
            json!({"NS":["99999999999999999999999999999999999999"]})
        );
    }

    #[test]
    fn set_members_may_contain_parentheses_and_commas() {
        let (_, p) = rw(r#"SET tags = ss("a)b", "c,d")"#);
        assert_eq!(p.values[":tags"], json!({"SS":["a)b","c,d"]}));
    }

    #[test]
    fn paths_backticks_and_indexes() {
        let (out, p) = rw("`first-name` = 'Ada' AND address.city[0] <> \"x\"");
        assert_eq!(out, "#firstname = :firstname AND address.city[0] <> :city");
        assert_eq!(p.names["#firstname"], "first-name");
    }

    #[test]
    fn sets_lists_and_maps_are_typed() {
        let (_, p) = rw(
            r#"SET tags = ss("a","b"), ids = ns(1, 2.50), l = [1,"x"], m = {"k":true}, bin = b64("AQI=")"#,
        );
        assert_eq!(p.values[":tags"], json!({"SS":["a","b"]}));
        assert_eq!(p.values[":ids"], json!({"NS":["1","2.50"]}));
        assert_eq!(p.values[":l"], json!({"L":[{"N":"1"},{"S":"x"}]}));
        assert_eq!(p.values[":m"], json!({"M":{"k":{"BOOL":true}}}));
        assert_eq!(p.values[":bin"], json!({"B":"AQI="}));
    }

    #[test]
    fn in_lists_and_between() {
        let (out, _) = rw(r#"colour IN ("red", "blue") OR size(tags) BETWEEN 1 AND 3"#);
        assert_eq!(
            out,
            "colour IN (:colour, :colour2) OR size(tags) BETWEEN :tags AND :tags2"
        );
    }

    #[test]
    fn handwritten_placeholders_and_unknown_functions_are_refused() {
        let mut p = Placeholders::new();
        assert!(rewrite("#a = :b", &mut p)
            .unwrap_err()
            .contains("placeholders"));
        assert!(rewrite("lower(a) = 'x'", &mut p)
            .unwrap_err()
            .contains("unknown function"));
    }

    #[test]
    fn flag_values_are_literals_or_strings() {
        assert_eq!(literal_from_flag("21"), "21");
        assert_eq!(literal_from_flag("active"), "\"active\"");
        assert_eq!(literal_from_flag("\"21\""), "\"21\"");
        assert_eq!(literal_from_flag("a b"), "\"a b\"");
        assert_eq!(literal_from_flag("true"), "true");
    }
}
