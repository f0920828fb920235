//! Writes PartiQL conditions and SET values in DynamoDB's expression
//! language. Every attribute name becomes a `#n` placeholder and every value
//! a `:v` placeholder, so no user text is ever spliced into an expression:
//! the result is parsed and evaluated by ferrodyn-expr exactly as a request's
//! own ConditionExpression, FilterExpression or UpdateExpression would be.

use ferrodyn_partiql::ast::{Expr, Path, Step};
use ferrodyn_partiql::values::{is_value, to_value};
use ferrodyn_types::{AttributeValue, DynamoError, Result};
use serde_json::{Map, Value};

/// The placeholders of one translated request.
pub struct Renderer<'p> {
    params: &'p [AttributeValue],
    names: Map<String, Value>,
    values: Map<String, Value>,
}

impl<'p> Renderer<'p> {
    pub fn new(params: &'p [AttributeValue]) -> Renderer<'p> {
        Renderer {
            params,
            names: Map::new(),
            values: Map::new(),
        }
    }

    /// Adds ExpressionAttributeNames / ExpressionAttributeValues to a
    /// request, when there are any.
    pub fn finish_into(self, request: &mut Map<String, Value>) {
        if !self.names.is_empty() {
            request.insert("ExpressionAttributeNames".into(), Value::Object(self.names));
        }
        if !self.values.is_empty() {
            request.insert(
                "ExpressionAttributeValues".into(),
                Value::Object(self.values),
            );
        }
    }

    /// The placeholder of an attribute name (one per distinct name).
    pub fn name(&mut self, name: &str) -> String {
        if let Some((placeholder, _)) = self.names.iter().find(|(_, v)| v.as_str() == Some(name)) {
            return placeholder.clone();
        }
        let placeholder = format!("#n{}", self.names.len());
        self.names
            .insert(placeholder.clone(), Value::String(name.into()));
        placeholder
    }

    /// The placeholder of a value.
    pub fn value(&mut self, value: &AttributeValue) -> String {
        let placeholder = format!(":v{}", self.values.len());
        self.values.insert(
            placeholder.clone(),
            serde_json::to_value(value).expect("plain data always serialises"),
        );
        placeholder
    }

    /// The value an expression stands for (a literal or a bound parameter).
    pub fn bind(&self, expr: &Expr) -> Result<AttributeValue> {
        to_value(expr, self.params).map_err(DynamoError::validation)
    }

    pub fn path(&mut self, path: &Path) -> String {
        let mut out = self.name(&path.root);
        for step in &path.steps {
            match step {
                Step::Field(field) => {
                    out.push('.');
                    out.push_str(&self.name(field));
                }
                Step::Index(i) => out.push_str(&format!("[{i}]")),
            }
        }
        out
    }

    /// A WHERE clause (or part of one) as a condition expression, with
    /// parentheses only where precedence needs them (DynamoDB refuses
    /// redundant ones).
    pub fn condition(&mut self, expr: &Expr) -> Result<String> {
        Ok(match expr {
            // A long AND or OR chain is as deep as it is long: it is
            // flattened without recursion, so its length cannot overflow
            // the stack (only parentheses nest, and the parser bounds them).
            Expr::And(..) => {
                let mut parts = Vec::new();
                for part in chain(expr, |e| matches!(e, Expr::And(..))) {
                    parts.push(self.conjunct(part)?);
                }
                parts.join(" AND ")
            }
            Expr::Or(..) => {
                let mut parts = Vec::new();
                for part in chain(expr, |e| matches!(e, Expr::Or(..))) {
                    parts.push(self.condition(part)?);
                }
                parts.join(" OR ")
            }
            Expr::Not(a) => match a.as_ref() {
                Expr::And(..) | Expr::Or(..) => format!("NOT ({})", self.condition(a)?),
                _ => format!("NOT {}", self.condition(a)?),
            },
            Expr::Compare(op, a, b) => {
                format!("{} {} {}", self.operand(a)?, op.symbol(), self.operand(b)?)
            }
            Expr::Between(a, low, high) => format!(
                "{} BETWEEN {} AND {}",
                self.operand(a)?,
                self.operand(low)?,
                self.operand(high)?
            ),
            Expr::In(a, list) => {
                let mut members = Vec::with_capacity(list.len());
                for member in list {
                    members.push(self.operand(member)?);
                }
                format!("{} IN ({})", self.operand(a)?, members.join(", "))
            }
            Expr::Missing { operand, negated } => {
                let function = if *negated {
                    "attribute_exists"
                } else {
                    "attribute_not_exists"
                };
                format!("{function}({})", self.path_operand(operand, "MISSING")?)
            }
            Expr::IsNull { operand, negated } => {
                let test = format!(
                    "attribute_type({}, {})",
                    self.path_operand(operand, "NULL")?,
                    self.value(&AttributeValue::S("NULL".into()))
                );
                if *negated {
                    format!("NOT {test}")
                } else {
                    test
                }
            }
            Expr::Call(name, args) => self.function_condition(name, args)?,
            _ => {
                return Err(DynamoError::validation(
                    "WHERE clause must contain an expression that resolves to a boolean",
                ))
            }
        })
    }

    /// One operand of an AND: an OR inside it needs its parentheses.
    pub fn conjunct(&mut self, expr: &Expr) -> Result<String> {
        match expr {
            Expr::Or(..) => Ok(format!("({})", self.condition(expr)?)),
            _ => self.condition(expr),
        }
    }

    fn function_condition(&mut self, name: &str, args: &[Expr]) -> Result<String> {
        match name {
            "begins_with" | "contains" | "attribute_type" => {
                let [a, b] = args else {
                    return Err(DynamoError::validation(format!(
                        "Incorrect number of arguments for function {name}: expected 2, got {}",
                        args.len()
                    )));
                };
                Ok(format!(
                    "{name}({}, {})",
                    self.operand(a)?,
                    self.operand(b)?
                ))
            }
            "exists" => Err(DynamoError::validation(
                "EXISTS can only be used as a statement of ExecuteTransaction",
            )),
            "size" => Err(DynamoError::validation(
                "WHERE clause must contain an expression that resolves to a boolean",
            )),
            _ => Err(DynamoError::validation(format!(
                "Unrecognized function: {name}"
            ))),
        }
    }

    /// A comparison operand: an attribute, a value or `size(attribute)`.
    pub fn operand(&mut self, expr: &Expr) -> Result<String> {
        match expr {
            Expr::Path(path) => Ok(self.path(path)),
            Expr::Call(name, args) if name == "size" => match args.as_slice() {
                [Expr::Path(path)] => Ok(format!("size({})", self.path(path))),
                _ => Err(DynamoError::validation(
                    "The size function takes one argument, an attribute path",
                )),
            },
            value if is_value(value) => {
                let value = self.bind(value)?;
                Ok(self.value(&value))
            }
            other => Err(DynamoError::validation(format!(
                "Unsupported operand: {}",
                describe(other)
            ))),
        }
    }

    fn path_operand(&mut self, expr: &Expr, test: &str) -> Result<String> {
        match expr {
            Expr::Path(path) => Ok(self.path(path)),
            _ => Err(DynamoError::validation(format!(
                "IS [NOT] {test} applies to an attribute path"
            ))),
        }
    }

    /// The right-hand side of `SET path = ...`: a value, an attribute,
    /// `a + b`, `a - b` or `list_append(a, b)`.
    pub fn set_value(&mut self, expr: &Expr) -> Result<String> {
        match expr {
            Expr::Path(path) => Ok(self.path(path)),
            Expr::Add(a, b) => Ok(format!("{} + {}", self.set_value(a)?, self.set_value(b)?)),
            Expr::Subtract(a, b) => Ok(format!("{} - {}", self.set_value(a)?, self.set_value(b)?)),
            Expr::Call(name, args) if name == "list_append" => match args.as_slice() {
                [a, b] => Ok(format!(
                    "list_append({}, {})",
                    self.set_value(a)?,
                    self.set_value(b)?
                )),
                _ => Err(DynamoError::validation(format!(
                    "Incorrect number of arguments for function list_append: expected 2, got {}",
                    args.len()
                ))),
            },
            Expr::Call(name, args) if name == "if_not_exists" => match args.as_slice() {
                [Expr::Path(path), value] => Ok(format!(
                    "if_not_exists({}, {})",
                    self.path(path),
                    self.set_value(value)?
                )),
                _ => Err(DynamoError::validation(
                    "if_not_exists takes two arguments: an attribute path and a value",
                )),
            },
            Expr::Call(name, _) => Err(DynamoError::validation(format!(
                "Unrecognized function: {name}"
            ))),
            value if is_value(value) => {
                let value = self.bind(value)?;
                Ok(self.value(&value))
            }
            other => Err(DynamoError::validation(format!(
                "Unsupported value in SET: {}",
                describe(other)
            ))),
        }
    }
}

/// The operands of a chain of one binary operator (`is_link` tells its
/// nodes), left to right, gathered with a stack instead of recursion.
fn chain(expr: &Expr, is_link: impl Fn(&Expr) -> bool) -> Vec<&Expr> {
    let mut out = Vec::new();
    let mut pending = vec![expr];
    while let Some(e) = pending.pop() {
        match e {
            Expr::And(a, b) | Expr::Or(a, b) if is_link(e) => {
                pending.push(b);
                pending.push(a);
            }
            other => out.push(other),
        }
    }
    out
}

/// A short description of an expression for error messages.
fn describe(expr: &Expr) -> &'static str {
    match expr {
        Expr::Path(_) => "an attribute path",
        Expr::Param(_) | Expr::String(_) | Expr::Number(_) | Expr::Bool(_) | Expr::Null => {
            "a value"
        }
        Expr::Map(_) | Expr::List(_) | Expr::Set(_) => "a collection literal",
        Expr::Add(..) | Expr::Subtract(..) | Expr::Negate(_) => "arithmetic",
        Expr::Call(..) => "a function call",
        _ => "a predicate",
    }
}
