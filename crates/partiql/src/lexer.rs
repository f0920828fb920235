//! Splits a statement into tokens, each with its position (line and column,
//! both from 1) so that syntax errors can say where they are.

use crate::error::{ParseError, Position};

/// One token of a statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Token {
    /// A bare word: a keyword or an unquoted identifier.
    Word(String),
    /// A `"double-quoted"` identifier.
    Quoted(String),
    /// A `'single-quoted'` string literal.
    Str(String),
    /// A number literal, as written.
    Number(String),
    /// `?`
    Param,
    /// Punctuation and operators: `( ) [ ] { } , . * : = <> != < <= > >= + - << >>`.
    Symbol(&'static str),
}

impl Token {
    /// How an error message shows the token.
    pub fn describe(&self) -> String {
        match self {
            Token::Word(w) => format!("'{w}'"),
            Token::Quoted(q) => format!("identifier \"{q}\""),
            Token::Str(s) => format!("string '{s}'"),
            Token::Number(n) => format!("number {n}"),
            Token::Param => "'?'".to_string(),
            Token::Symbol(s) => format!("'{s}'"),
        }
    }

    /// Whether the token is the keyword `word` (case-insensitive).
    pub fn is_keyword(&self, word: &str) -> bool {
        matches!(self, Token::Word(w) if w.eq_ignore_ascii_case(word))
    }
}

/// Symbols, longest first so that `<=` wins over `<`.
const SYMBOLS: [&str; 20] = [
    "<<", ">>", "<>", "!=", "<=", ">=", "(", ")", "[", "]", "{", "}", ",", ".", "*", ":", "=", "<",
    ">", "+",
];

/// The statement's tokens with their positions.
pub fn tokenize(text: &str) -> Result<Vec<(Token, Position)>, ParseError> {
    let mut lexer = Lexer {
        text,
        bytes: text.as_bytes(),
        at: 0,
        line: 1,
        column: 1,
    };
    let mut tokens = Vec::with_capacity(text.len() / 3 + 1);
    while let Some(token) = lexer.next_token()? {
        tokens.push(token);
    }
    Ok(tokens)
}

/// A cursor over the statement's bytes (every delimiter is ASCII, so byte
/// positions between tokens are character boundaries).
struct Lexer<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    line: usize,
    column: usize,
}

impl Lexer<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn peek_second(&self) -> Option<u8> {
        self.bytes.get(self.at + 1).copied()
    }

    /// Moves past `n` bytes, keeping line and column (in characters).
    fn bump(&mut self, n: usize) {
        for &b in &self.bytes[self.at..self.at + n] {
            if b == b'\n' {
                self.line += 1;
                self.column = 1;
            } else if b & 0xC0 != 0x80 {
                self.column += 1;
            }
        }
        self.at += n;
    }

    fn position(&self) -> Position {
        Position {
            line: self.line,
            column: self.column,
        }
    }

    /// The length of the run of bytes from the cursor that satisfy `keep`.
    fn run_length(&self, keep: impl Fn(u8) -> bool) -> usize {
        self.bytes[self.at..]
            .iter()
            .take_while(|&&b| keep(b))
            .count()
    }

    fn next_token(&mut self) -> Result<Option<(Token, Position)>, ParseError> {
        self.skip_space_and_comments();
        let at = self.position();
        let Some(c) = self.peek() else {
            return Ok(None);
        };
        let token = match c {
            b'\'' => Token::Str(self.quoted(b'\'', at, "string")?),
            b'"' => Token::Quoted(self.quoted(b'"', at, "quoted identifier")?),
            b'?' => {
                self.bump(1);
                Token::Param
            }
            b'0'..=b'9' => Token::Number(self.number()),
            // A leading minus is the parser's business (`x-1` is a subtraction).
            b'-' => {
                self.bump(1);
                Token::Symbol("-")
            }
            c if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 => self.word(at)?,
            _ => Token::Symbol(self.symbol(at)?),
        };
        Ok(Some((token, at)))
    }

    fn skip_space_and_comments(&mut self) {
        loop {
            match self.peek() {
                Some(c) if c.is_ascii_whitespace() => self.bump(1),
                Some(b'-') if self.peek_second() == Some(b'-') => {
                    let n = self.run_length(|b| b != b'\n');
                    self.bump(n);
                }
                _ => return,
            }
        }
    }

    /// A quoted string or identifier; a doubled quote stands for itself.
    fn quoted(&mut self, quote: u8, at: Position, what: &str) -> Result<String, ParseError> {
        self.bump(1);
        let mut out = String::new();
        loop {
            let n = self.run_length(|b| b != quote);
            out.push_str(&self.text[self.at..self.at + n]);
            self.bump(n);
            if self.peek().is_none() {
                return Err(ParseError::new(format!("unterminated {what}"), at));
            }
            self.bump(1);
            if self.peek() == Some(quote) {
                self.bump(1);
                out.push(quote as char);
            } else {
                return Ok(out);
            }
        }
    }

    fn number(&mut self) -> String {
        let start = self.at;
        let mut end = start;
        while let Some(&c) = self.bytes.get(end) {
            let exponent_sign = (c == b'+' || c == b'-')
                && end > start
                && matches!(self.bytes[end - 1], b'e' | b'E');
            if !(c.is_ascii_digit() || c == b'.' || c == b'e' || c == b'E' || exponent_sign) {
                break;
            }
            end += 1;
        }
        self.bump(end - start);
        self.text[start..end].to_string()
    }

    /// A bare word: letters, digits and `_` (any non-ASCII letter too).
    fn word(&mut self, at: Position) -> Result<Token, ParseError> {
        let start = self.at;
        let n = self.run_length(|b| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80);
        let word = &self.text[start..start + n];
        if let Some(bad) = word.chars().find(|c| !(c.is_alphanumeric() || *c == '_')) {
            return Err(ParseError::new(format!("unexpected character '{bad}'"), at));
        }
        self.bump(n);
        Ok(Token::Word(word.to_string()))
    }

    fn symbol(&mut self, at: Position) -> Result<&'static str, ParseError> {
        let rest = &self.bytes[self.at..];
        match SYMBOLS.iter().find(|s| rest.starts_with(s.as_bytes())) {
            Some(symbol) => {
                self.bump(symbol.len());
                Ok(symbol)
            }
            None => {
                let bad = self.text[self.at..].chars().next().expect("not at the end");
                Err(ParseError::new(format!("unexpected character '{bad}'"), at))
            }
        }
    }
}
