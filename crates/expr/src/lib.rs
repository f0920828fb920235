//! DynamoDB's expression language for Ferrodyn.
//!
//! - [`parse_condition`] / [`parse_filter`]: ConditionExpression and
//!   FilterExpression into a [`Condition`], evaluated with
//!   [`Condition::evaluate`].
//! - [`parse_update`]: UpdateExpression into an [`UpdateExpression`], applied
//!   with [`UpdateExpression::apply`].
//! - [`parse_projection`]: ProjectionExpression into a [`Projection`].
//! - [`parse_key_condition`]: KeyConditionExpression into a [`KeyCondition`].
//! - `legacy_*`: the pre-expression parameters (Expected, AttributeUpdates,
//!   AttributesToGet, QueryFilter/ScanFilter/KeyConditions) into the same
//!   trees.
//! - [`Condition::check_no_key_attributes`]: Query's rule that a filter may
//!   not use the key attributes.
//!
//! Every error is a ValidationException with DynamoDB's exact wording. The
//! lexer and parser are hand-written so that syntax errors can quote the
//! offending token and its surroundings the way DynamoDB does.

mod ast;
mod context;
mod eval;
mod filter_keys;
mod keycond;
mod legacy;
mod lexer;
mod params;
mod parser;
mod path;
mod projection;
mod reserved;
mod syntax;
mod update;
mod validate;

pub use ast::{
    Comparator, Condition, Operand, Projection, UpdateAction, UpdateExpression, UpdateOperand,
};
pub use context::ExpressionContext;
pub use eval::size_of;
pub use filter_keys::QueryFilterParam;
pub use keycond::{KeyCondition, KeyOp, KeyPart};
pub use legacy::{
    legacy_attribute_updates, legacy_attributes_to_get, legacy_expected, legacy_filter,
    legacy_key_conditions, legacy_query_filter, legacy_scan_filter, COMPARISON_OPERATORS,
    MAX_ATTRIBUTE_NAME_BYTES,
};
pub use params::{check_no_mixing, ParamSet};
pub use path::{Path, PathElem};
pub use projection::project_paths;
pub use reserved::is_reserved;

use ferrodyn_types::{DynamoError, Family};
use parser::Parser;
use validate::Validator;

/// Longest expression DynamoDB accepts, in bytes.
pub const MAX_EXPRESSION_SIZE: usize = 4096;

/// Which request parameter an expression came from; it prefixes messages
/// ("Invalid ConditionExpression: ...").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExprKind {
    Condition,
    Filter,
    KeyCondition,
    Update,
    Projection,
    /// SearchVectors' SearchConditionExpression (a condition whose shape
    /// the operation restricts further).
    SearchCondition,
}

impl ExprKind {
    /// The request parameter's name.
    pub fn parameter(self) -> &'static str {
        match self {
            ExprKind::Condition => "ConditionExpression",
            ExprKind::Filter => "FilterExpression",
            ExprKind::KeyCondition => "KeyConditionExpression",
            ExprKind::Update => "UpdateExpression",
            ExprKind::Projection => "ProjectionExpression",
            ExprKind::SearchCondition => "SearchConditionExpression",
        }
    }

    /// A ValidationException about an expression of this kind.
    pub fn error(self, message: &str) -> DynamoError {
        DynamoError::validation(format!("Invalid {}: {message}", self.parameter()))
    }
}

/// The checks every expression gets before parsing: not empty, not too long.
fn precheck(text: &str, kind: ExprKind) -> Result<(), DynamoError> {
    if text.is_empty() {
        let error = kind.error("The expression can not be empty;");
        return Err(match kind {
            ExprKind::Update => error.in_family(Family::WriteValidation),
            _ => error,
        });
    }
    if text.len() > MAX_EXPRESSION_SIZE {
        return Err(kind.error(&format!(
            "Expression size has exceeded the maximum allowed size; expression size: {}",
            text.len()
        )));
    }
    Ok(())
}

/// Nesting (parentheses, NOT/AND/OR chains) up to which parsing runs on the
/// caller's stack.
const INLINE_NESTING: usize = 24;

/// Stack for parsing deeper expressions. Parsing recurses once per nesting
/// level with frames of several KB in debug builds, and DynamoDB's limits
/// (4 KB, 300 operators) allow ~300 levels, more than a 2 MiB thread stack
/// holds; such rare expressions are parsed on a scoped thread with room to
/// spare (the memory is only reserved, not committed).
const DEEP_STACK: usize = 64 << 20;

/// Runs `f` (a parse) on a large stack when `text` may nest deeply.
fn with_stack<T: Send>(
    text: &str,
    f: impl FnOnce() -> Result<T, DynamoError> + Send,
) -> Result<T, DynamoError> {
    let upper = text.to_ascii_uppercase();
    let nesting = text.bytes().filter(|b| *b == b'(').count()
        + upper.matches("NOT").count()
        + upper.matches("AND").count()
        + upper.matches("OR").count();
    if nesting <= INLINE_NESTING {
        return f();
    }
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("ferrodyn-expr-parse".into())
            .stack_size(DEEP_STACK)
            .spawn_scoped(scope, f);
        match handle {
            Ok(handle) => match handle.join() {
                Ok(result) => result,
                Err(panic) => std::panic::resume_unwind(panic),
            },
            Err(_) => Err(DynamoError::internal(
                "could not start a thread to parse a deeply nested expression",
            )),
        }
    })
}

/// Parses a condition-grammar expression of the given kind.
pub fn parse_condition_kind(
    text: &str,
    kind: ExprKind,
    ctx: &mut ExpressionContext,
) -> Result<Condition, DynamoError> {
    precheck(text, kind)?;
    with_stack(text, || {
        let raw = Parser::new(text, kind).parse_condition()?;
        Validator::new(kind, ctx).condition(&raw)
    })
}

/// Parses a ConditionExpression.
pub fn parse_condition(text: &str, ctx: &mut ExpressionContext) -> Result<Condition, DynamoError> {
    parse_condition_kind(text, ExprKind::Condition, ctx)
}

/// Parses a FilterExpression (same grammar, different message prefix).
pub fn parse_filter(text: &str, ctx: &mut ExpressionContext) -> Result<Condition, DynamoError> {
    parse_condition_kind(text, ExprKind::Filter, ctx)
}

/// Parses a SearchConditionExpression (a condition's grammar; which
/// conditions it may hold is SearchVectors' check).
pub fn parse_search_condition(
    text: &str,
    ctx: &mut ExpressionContext,
) -> Result<Condition, DynamoError> {
    parse_condition_kind(text, ExprKind::SearchCondition, ctx)
}

/// Parses an UpdateExpression.
pub fn parse_update(
    text: &str,
    ctx: &mut ExpressionContext,
) -> Result<UpdateExpression, DynamoError> {
    let kind = ExprKind::Update;
    precheck(text, kind)?;
    with_stack(text, || {
        let raw = Parser::new(text, kind).parse_update()?;
        Validator::new(kind, ctx).update(&raw)
    })
}

/// Parses a ProjectionExpression.
pub fn parse_projection(
    text: &str,
    ctx: &mut ExpressionContext,
) -> Result<Projection, DynamoError> {
    let kind = ExprKind::Projection;
    precheck(text, kind)?;
    let raw = Parser::new(text, kind).parse_projection()?;
    Validator::new(kind, ctx).projection(&raw)
}

/// Parses a KeyConditionExpression into its key parts; checking them against
/// the table's key schema is [`KeyCondition::validate`]'s job.
pub fn parse_key_condition(
    text: &str,
    ctx: &mut ExpressionContext,
) -> Result<KeyCondition, DynamoError> {
    let cond = parse_condition_kind(text, ExprKind::KeyCondition, ctx)?;
    KeyCondition::from_condition(&cond)
}

/// [`parse_key_condition`] in the two steps DynamoDB reports separately:
/// syntax and placeholders now (the outer error), the rules of key
/// conditions (the inner result) only after the request's other expressions
/// and its unused names and values have been checked.
pub fn parse_key_condition_staged(
    text: &str,
    ctx: &mut ExpressionContext,
) -> Result<Result<KeyCondition, DynamoError>, DynamoError> {
    let cond = parse_condition_kind(text, ExprKind::KeyCondition, ctx)?;
    Ok(KeyCondition::from_condition(&cond))
}

#[cfg(test)]
mod tests;
