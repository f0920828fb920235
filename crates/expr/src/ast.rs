//! The validated expression trees the engine works with: every placeholder
//! substituted, every function checked. Both the expression parameters and
//! the legacy parameters (Expected, AttributeUpdates, AttributesToGet) end up
//! here.

use crate::path::Path;
pub use crate::syntax::Comparator;
use ferrodyn_types::AttributeValue;

/// A value inside a condition.
#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    Path(Path),
    Value(AttributeValue),
    /// `size(x)`.
    Size(Box<Operand>),
}

/// A ConditionExpression / FilterExpression (or legacy Expected / QueryFilter
/// / ScanFilter).
#[derive(Clone, Debug, PartialEq)]
pub enum Condition {
    Compare(Comparator, Operand, Operand),
    Between(Operand, Operand, Operand),
    In(Operand, Vec<Operand>),
    AttributeExists(Path),
    AttributeNotExists(Path),
    /// `attribute_type(x, :t)`; AWS accepts any operand as `x`, not only
    /// a path.
    AttributeType(Operand, Operand),
    BeginsWith(Operand, Operand),
    Contains(Operand, Operand),
    And(Box<Condition>, Box<Condition>),
    Or(Box<Condition>, Box<Condition>),
    Not(Box<Condition>),
    /// Always true (an empty legacy Expected map).
    True,
}

/// A value on the right of `SET path =`.
#[derive(Clone, Debug, PartialEq)]
pub enum UpdateOperand {
    Path(Path),
    Value(AttributeValue),
    IfNotExists(Path, Box<UpdateOperand>),
    ListAppend(Box<UpdateOperand>, Box<UpdateOperand>),
    Plus(Box<UpdateOperand>, Box<UpdateOperand>),
    Minus(Box<UpdateOperand>, Box<UpdateOperand>),
}

/// One action of an update.
#[derive(Clone, Debug, PartialEq)]
pub enum UpdateAction {
    Set(Path, UpdateOperand),
    Remove(Path),
    /// Add a number, or union a set.
    Add(Path, AttributeValue),
    /// Subtract members from a set.
    Delete(Path, AttributeValue),
    /// Legacy AttributeUpdates ADD: like `Add`, but a list value is appended
    /// to an existing list (the expression language has no such ADD).
    LegacyAdd(Path, AttributeValue),
    /// Legacy AttributeUpdates DELETE with a value (set difference, with the
    /// legacy API's error messages).
    LegacyDelete(Path, AttributeValue),
}

impl UpdateAction {
    pub fn path(&self) -> &Path {
        match self {
            UpdateAction::Set(p, _)
            | UpdateAction::Remove(p)
            | UpdateAction::Add(p, _)
            | UpdateAction::Delete(p, _)
            | UpdateAction::LegacyAdd(p, _)
            | UpdateAction::LegacyDelete(p, _) => p,
        }
    }
}

/// An UpdateExpression (or legacy AttributeUpdates).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct UpdateExpression {
    pub actions: Vec<UpdateAction>,
}

/// A ProjectionExpression (or legacy AttributesToGet).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Projection {
    pub paths: Vec<Path>,
}
