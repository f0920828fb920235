//! The syntax tree of DynamoDB's PartiQL statements, as written: names are
//! not yet checked against a table and `?` parameters are not yet bound.

/// One statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Statement {
    Select(Select),
    Insert(Insert),
    Update(Update),
    Delete(Delete),
    /// `EXISTS(SELECT ...)`: a condition check inside a transaction.
    Exists(Select),
}

impl Statement {
    /// The table the statement works on.
    pub fn table(&self) -> &str {
        match self {
            Statement::Select(s) | Statement::Exists(s) => &s.table,
            Statement::Insert(i) => &i.table,
            Statement::Update(u) => &u.table,
            Statement::Delete(d) => &d.table,
        }
    }

    /// Whether the statement only reads.
    pub fn is_read(&self) -> bool {
        matches!(self, Statement::Select(_))
    }
}

/// `SELECT projection FROM "table"[."index"] [WHERE ...] [ORDER BY ...]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Select {
    /// `None` for `*`.
    pub projection: Option<Vec<Path>>,
    pub table: String,
    pub index: Option<String>,
    pub condition: Option<Expr>,
    pub order_by: Vec<OrderBy>,
}

/// One `ORDER BY` key.
#[derive(Clone, Debug, PartialEq)]
pub struct OrderBy {
    pub path: Path,
    pub descending: bool,
}

/// `INSERT INTO "table" VALUE {...}`.
#[derive(Clone, Debug, PartialEq)]
pub struct Insert {
    pub table: String,
    pub value: Expr,
}

/// `UPDATE "table" SET ... REMOVE ... WHERE ... [RETURNING ...]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Update {
    pub table: String,
    pub actions: Vec<UpdateAction>,
    pub condition: Expr,
    pub returning: Option<Returning>,
}

/// One `SET path = value` or `REMOVE path`.
#[derive(Clone, Debug, PartialEq)]
pub enum UpdateAction {
    Set(Path, Expr),
    Remove(Path),
}

/// `DELETE FROM "table" WHERE ... [RETURNING ALL OLD *]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Delete {
    pub table: String,
    pub condition: Expr,
    pub returning: Option<Returning>,
}

/// What `RETURNING ... *` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Returning {
    AllOld,
    ModifiedOld,
    AllNew,
    ModifiedNew,
}

/// A document path: an attribute, then map keys and list indexes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Path {
    pub root: String,
    pub steps: Vec<Step>,
}

impl Path {
    /// The path is a top-level attribute called `name`.
    pub fn is_attribute(&self, name: &str) -> bool {
        self.steps.is_empty() && self.root == name
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    Field(String),
    Index(u32),
}

/// Comparison operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Comparison {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Comparison {
    /// The operator in DynamoDB's expression language.
    pub fn symbol(self) -> &'static str {
        match self {
            Comparison::Eq => "=",
            Comparison::Ne => "<>",
            Comparison::Lt => "<",
            Comparison::Le => "<=",
            Comparison::Gt => ">",
            Comparison::Ge => ">=",
        }
    }
}

/// An expression: a condition, an operand or a value.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Path(Path),
    /// The n-th `?` of the statement (from 0).
    Param(usize),
    String(String),
    /// A number as written (checked when bound).
    Number(String),
    Bool(bool),
    Null,
    /// `{'k': v, ...}`
    Map(Vec<(String, Expr)>),
    /// `[v, ...]`
    List(Vec<Expr>),
    /// `<<v, ...>>`
    Set(Vec<Expr>),
    Compare(Comparison, Box<Expr>, Box<Expr>),
    Between(Box<Expr>, Box<Expr>, Box<Expr>),
    In(Box<Expr>, Vec<Expr>),
    /// `x IS [NOT] MISSING` (`negated` for NOT).
    Missing {
        operand: Box<Expr>,
        negated: bool,
    },
    /// `x IS [NOT] NULL`.
    IsNull {
        operand: Box<Expr>,
        negated: bool,
    },
    /// A function call, the name lower-cased.
    Call(String, Vec<Expr>),
    Add(Box<Expr>, Box<Expr>),
    Subtract(Box<Expr>, Box<Expr>),
    Negate(Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
}
