//! Syntax errors with the position they were found at.

use std::fmt;

/// A place in the statement: line and column, both counted from 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

/// Why a statement could not be parsed, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub message: String,
    /// `None` when the statement ended too early.
    pub position: Option<Position>,
    /// The statement is well formed but uses something DynamoDB's dialect
    /// does not have (a LIMIT clause, a join...).
    pub unsupported: bool,
}

impl ParseError {
    pub fn new(message: impl Into<String>, at: Position) -> ParseError {
        ParseError {
            message: message.into(),
            position: Some(at),
            unsupported: false,
        }
    }

    pub fn at_end(message: impl Into<String>) -> ParseError {
        ParseError {
            message: message.into(),
            position: None,
            unsupported: false,
        }
    }

    pub fn unsupported(message: impl Into<String>, at: Position) -> ParseError {
        ParseError {
            unsupported: true,
            ..ParseError::new(message, at)
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some(p) => write!(
                f,
                "{} at line {}, column {}",
                self.message, p.line, p.column
            ),
            None => write!(f, "{} at the end of the statement", self.message),
        }
    }
}
