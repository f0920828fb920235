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
        chars: text.char_indices().peekable(),
        line: 1,
        column: 1,
    };
    let mut tokens = Vec::new();
    while let Some(token) = lexer.next_token()? {
        tokens.push(token);
    }
    Ok(tokens)
}

struct Lexer<'a> {
    chars: std::iter::Peekable<std::str::CharIndices<'a>>,
    line: usize,
    column: usize,
}

impl Lexer<'_> {
    fn peek(&mut self) -> Option<char> {
        self.chars.peek().map(|&(_, c)| c)
    }

    fn bump(&mut self) -> Option<char> {
        let (_, c) = self.chars.next()?;
        if c == '\n' {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
        Some(c)
    }

    fn position(&self) -> Position {
        Position {
            line: self.line,
            column: self.column,
        }
    }

    fn next_token(&mut self) -> Result<Option<(Token, Position)>, ParseError> {
        self.skip_space_and_comments();
        let at = self.position();
        let Some(c) = self.peek() else {
            return Ok(None);
        };
        let token = match c {
            '\'' => Token::Str(self.quoted('\'', at, "string")?),
            '"' => Token::Quoted(self.quoted('"', at, "quoted identifier")?),
            '?' => {
                self.bump();
                Token::Param
            }
            '0'..='9' => Token::Number(self.number()),
            // A leading minus is the parser's business (`x-1` is a subtraction).
            '-' => {
                self.bump();
                Token::Symbol("-")
            }
            c if c.is_alphabetic() || c == '_' => Token::Word(self.word()),
            _ => Token::Symbol(self.symbol(at)?),
        };
        Ok(Some((token, at)))
    }

    fn skip_space_and_comments(&mut self) {
        loop {
            match self.peek() {
                Some(c) if c.is_whitespace() => {
                    self.bump();
                }
                Some('-') if self.second_is('-') => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.bump();
                    }
                }
                _ => return,
            }
        }
    }

    fn second_is(&self, expected: char) -> bool {
        let mut ahead = self.chars.clone();
        ahead.next();
        ahead.next().is_some_and(|(_, c)| c == expected)
    }

    /// A quoted string or identifier; a doubled quote stands for itself.
    fn quoted(&mut self, quote: char, at: Position, what: &str) -> Result<String, ParseError> {
        self.bump();
        let mut out = String::new();
        loop {
            match self.bump() {
                None => return Err(ParseError::new(format!("unterminated {what}"), at)),
                Some(c) if c == quote => {
                    if self.peek() == Some(quote) {
                        self.bump();
                        out.push(quote);
                    } else {
                        return Ok(out);
                    }
                }
                Some(c) => out.push(c),
            }
        }
    }

    fn number(&mut self) -> String {
        let mut out = String::new();
        let mut previous = ' ';
        while let Some(c) = self.peek() {
            let exponent_sign = (c == '+' || c == '-') && matches!(previous, 'e' | 'E');
            if !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || exponent_sign) {
                break;
            }
            out.push(c);
            previous = c;
            self.bump();
        }
        out
    }

    fn word(&mut self) -> String {
        let mut out = String::new();
        while let Some(c) = self.peek().filter(|c| c.is_alphanumeric() || *c == '_') {
            out.push(c);
            self.bump();
        }
        out
    }

    fn symbol(&mut self, at: Position) -> Result<&'static str, ParseError> {
        let first = self.peek().expect("peeked");
        for symbol in SYMBOLS {
            let mut chars = symbol.chars();
            let head = chars.next().expect("symbols are not empty");
            let second = chars.next();
            if head == first && second.is_none_or(|s| self.second_is(s)) {
                for _ in 0..symbol.len() {
                    self.bump();
                }
                return Ok(symbol);
            }
        }
        Err(ParseError::new(
            format!("unexpected character '{first}'"),
            at,
        ))
    }
}
