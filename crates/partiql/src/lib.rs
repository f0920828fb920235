//! DynamoDB's dialect of PartiQL, on its own: the lexer ([`lexer`]), the
//! parser ([`parse`]) and the syntax tree ([`ast`]) of the statements
//! ExecuteStatement, BatchExecuteStatement and ExecuteTransaction take, and
//! the binding of literals and `?` parameters to attribute values
//! ([`values`]). Deciding what a statement does to a table (which operation
//! it becomes) is the server's business (`ferrodyn-server`, ops/partiql/).

pub mod ast;
mod error;
pub mod lexer;
mod parser;
pub mod values;

pub use error::{ParseError, Position};
pub use parser::{parse, Parsed, MAX_DEPTH};

#[cfg(test)]
mod tests;
