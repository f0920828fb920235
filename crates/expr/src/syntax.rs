//! The parse tree: what the parser recognised, before placeholders are
//! substituted and before any semantic check.
//!
//! DynamoDB reports problems in phases (syntax, then reserved words and
//! function names, then undefined placeholders, then types), so the parser
//! only builds this tree and `validate` walks it once per phase.

/// One step of a path as written.
#[derive(Clone, Debug, PartialEq)]
pub enum RawElem {
    /// A literal attribute name (subject to the reserved-word check).
    Ident(String),
    /// A `#name` placeholder.
    Name(String),
    /// A list index as written (digits; range checked later).
    Index(String),
}

#[derive(Clone, Debug, PartialEq)]
pub struct RawPath(pub Vec<RawElem>);

#[derive(Clone, Debug, PartialEq)]
pub struct RawCall {
    pub name: String,
    pub args: Vec<RawOperand>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum RawOperand {
    Path(RawPath),
    /// A `:value` placeholder.
    Value(String),
    Call(RawCall),
    /// `x + y` (UpdateExpression SET only).
    Plus(Box<RawOperand>, Box<RawOperand>),
    /// `x - y` (UpdateExpression SET only).
    Minus(Box<RawOperand>, Box<RawOperand>),
}

/// The six comparators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Comparator {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Comparator {
    pub fn symbol(self) -> &'static str {
        match self {
            Comparator::Eq => "=",
            Comparator::Ne => "<>",
            Comparator::Lt => "<",
            Comparator::Le => "<=",
            Comparator::Gt => ">",
            Comparator::Ge => ">=",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum RawCond {
    Compare(Comparator, RawOperand, RawOperand),
    Between(RawOperand, RawOperand, RawOperand),
    In(RawOperand, Vec<RawOperand>),
    Call(RawCall),
    And(Box<RawCond>, Box<RawCond>),
    Or(Box<RawCond>, Box<RawCond>),
    Not(Box<RawCond>),
}

#[derive(Clone, Debug, PartialEq)]
pub enum RawAction {
    Set(RawPath, RawOperand),
    Remove(RawPath),
    Add(RawPath, String),
    Delete(RawPath, String),
}
