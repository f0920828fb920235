//! Tokeniser shared by every expression kind.
//!
//! It never fails: a character that starts no token becomes a one-character
//! [`Tok::Unknown`], so that the parser reports it the way DynamoDB does, as a
//! syntax error whose token is that character. Every token keeps its byte span
//! because DynamoDB's syntax errors quote the source text around the offending
//! token.

/// One token kind.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    /// `[A-Za-z][A-Za-z0-9_]*`: an attribute name, function name or keyword.
    Ident,
    /// `#[A-Za-z0-9_]+`: an ExpressionAttributeNames placeholder.
    Name,
    /// `:[A-Za-z0-9_]+`: an ExpressionAttributeValues placeholder.
    Value,
    /// `0` or `[1-9][0-9]*` (a leading zero is a token of its own, as in
    /// DynamoDB, so `01` is two tokens).
    Number,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    LParen,
    RParen,
    LBracket,
    RBracket,
    Comma,
    Dot,
    Plus,
    Minus,
    /// Any other single character.
    Unknown,
    Eof,
}

/// A token and where it is in the source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub tok: Tok,
    pub start: usize,
    pub end: usize,
}

/// Keywords of the grammar; they can never be attribute names.
const KEYWORDS: [&str; 9] = [
    "AND", "OR", "NOT", "BETWEEN", "IN", "SET", "REMOVE", "ADD", "DELETE",
];

/// Whether an identifier is a grammar keyword (case-insensitive).
pub fn is_keyword(text: &str) -> bool {
    KEYWORDS.iter().any(|k| k.eq_ignore_ascii_case(text))
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Splits `src` into tokens, always ending with [`Tok::Eof`] (whose span is
/// the empty range at the end of the text).
pub fn tokenize(src: &str) -> Vec<Token> {
    let bytes = src.as_bytes();
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < bytes.len() {
        let b = bytes[pos];
        if matches!(b, b' ' | b'\t' | b'\n' | b'\r') {
            pos += 1;
            continue;
        }
        let start = pos;
        let word_end = |from: usize| {
            let mut p = from;
            while p < bytes.len() && is_word_byte(bytes[p]) {
                p += 1;
            }
            p
        };
        let (tok, end) = match b {
            b'a'..=b'z' | b'A'..=b'Z' => (Tok::Ident, word_end(pos + 1)),
            b'#' | b':' => {
                let end = word_end(pos + 1);
                if end == pos + 1 {
                    (Tok::Unknown, pos + 1)
                } else if b == b'#' {
                    (Tok::Name, end)
                } else {
                    (Tok::Value, end)
                }
            }
            b'0' => (Tok::Number, pos + 1),
            b'1'..=b'9' => {
                let mut p = pos + 1;
                while p < bytes.len() && bytes[p].is_ascii_digit() {
                    p += 1;
                }
                (Tok::Number, p)
            }
            b'=' => (Tok::Eq, pos + 1),
            b'<' => match bytes.get(pos + 1) {
                Some(b'>') => (Tok::Ne, pos + 2),
                Some(b'=') => (Tok::Le, pos + 2),
                _ => (Tok::Lt, pos + 1),
            },
            b'>' => match bytes.get(pos + 1) {
                Some(b'=') => (Tok::Ge, pos + 2),
                _ => (Tok::Gt, pos + 1),
            },
            b'(' => (Tok::LParen, pos + 1),
            b')' => (Tok::RParen, pos + 1),
            b'[' => (Tok::LBracket, pos + 1),
            b']' => (Tok::RBracket, pos + 1),
            b',' => (Tok::Comma, pos + 1),
            b'.' => (Tok::Dot, pos + 1),
            b'+' => (Tok::Plus, pos + 1),
            b'-' => (Tok::Minus, pos + 1),
            _ => {
                // One whole (possibly multi-byte) character.
                let len = src[pos..].chars().next().map_or(1, char::len_utf8);
                (Tok::Unknown, pos + len)
            }
        };
        out.push(Token { tok, start, end });
        pos = end;
    }
    out.push(Token {
        tok: Tok::Eof,
        start: src.len(),
        end: src.len(),
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<Tok> {
        tokenize(src).into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn splits_like_dynamodb() {
        use Tok::*;
        assert_eq!(
            kinds("a.b[0] <> :v"),
            vec![Ident, Dot, Ident, LBracket, Number, RBracket, Ne, Value, Eof]
        );
        assert_eq!(kinds("01"), vec![Number, Number, Eof]);
        assert_eq!(kinds("_a"), vec![Unknown, Ident, Eof]);
        assert_eq!(kinds("# :"), vec![Unknown, Unknown, Eof]);
        assert_eq!(kinds("#a1 :_x"), vec![Name, Value, Eof]);
        assert_eq!(kinds("<=>=<>"), vec![Le, Ge, Ne, Eof]);
        assert_eq!(kinds("é!"), vec![Unknown, Unknown, Eof]);
        let t = tokenize("é");
        assert_eq!((t[0].start, t[0].end), (0, 2));
    }
}
