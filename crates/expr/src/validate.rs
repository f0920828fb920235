//! Turns a parse tree into a validated expression, reporting problems in the
//! order DynamoDB does:
//!
//! 1. one in-order walk for reserved words, function names and placement,
//!    and list-index range;
//! 2. one in-order walk substituting placeholders (undefined ones fail);
//! 3. conversion with the semantic checks (operand counts and types, BETWEEN
//!    bounds, ...), then the overlap check between paths of one expression.
//!
//! A KeyConditionExpression merges steps 2 and 3 into one in-order walk: AWS
//! reports `begins_with(sk, :n) AND pk = :missing` as the operand type of
//! `:n`, and `pk = :missing AND begins_with(sk, :n)` as the undefined
//! `:missing`.

use crate::ast::{Condition, Operand, Projection, UpdateAction, UpdateExpression, UpdateOperand};
use crate::context::ExpressionContext;
use crate::path::{check_clashes, Clash, Path, PathElem};
use crate::reserved::is_reserved;
use crate::syntax::{Comparator, RawAction, RawCall, RawCond, RawElem, RawOperand, RawPath};
use crate::ExprKind;
use ferrodyn_types::limits::MAX_NESTING_DEPTH;
use ferrodyn_types::{AttributeValue, DynamoError, Family};

/// Largest list index DynamoDB accepts in a path.
const MAX_INDEX: u64 = i32::MAX as u64;

/// Most operands (besides the first) of IN.
const MAX_IN_OPERANDS: usize = 100;

const CONDITION_FUNCTIONS: [&str; 5] = [
    "attribute_exists",
    "attribute_not_exists",
    "attribute_type",
    "begins_with",
    "contains",
];
const UPDATE_FUNCTIONS: [&str; 2] = ["if_not_exists", "list_append"];

/// Where a function call appears.
#[derive(Clone, Copy, PartialEq)]
enum Place {
    /// As a whole condition (`attribute_exists(a)`).
    Condition,
    /// As an operand of a condition (`size(a) = :v`).
    ConditionOperand,
    /// As a whole UpdateExpression SET value.
    Update,
    /// Inside a function argument or an operand of `+`/`-` in a SET value,
    /// where `list_append` may not appear.
    UpdateNested,
}

pub struct Validator<'c> {
    kind: ExprKind,
    ctx: &'c mut ExpressionContext,
}

fn type_of(op: &Operand) -> Option<&'static str> {
    match op {
        Operand::Value(v) => Some(v.type_name()),
        Operand::Size(_) => Some("N"),
        Operand::Path(_) => None,
    }
}

/// The long type names of ADD/DELETE operand errors.
fn long_type_name(v: &AttributeValue) -> &'static str {
    match v {
        AttributeValue::S(_) => "STRING",
        AttributeValue::N(_) => "NUMBER",
        AttributeValue::B(_) => "BINARY",
        AttributeValue::Bool(_) => "BOOLEAN",
        AttributeValue::Null => "NULL",
        AttributeValue::L(_) => "LIST",
        AttributeValue::M(_) => "MAP",
        AttributeValue::Ss(_) => "STRING_SET",
        AttributeValue::Ns(_) => "NUMBER_SET",
        AttributeValue::Bs(_) => "BINARY_SET",
    }
}

/// DynamoDB's rendering of a value in messages: `AttributeValue: {S:h}`.
pub(crate) fn describe_value(v: &AttributeValue) -> String {
    let inner = match v {
        AttributeValue::S(s) => s.clone(),
        AttributeValue::N(n) => n.to_string(),
        AttributeValue::Bool(b) => b.to_string(),
        AttributeValue::Null => "true".into(),
        other => serde_json::to_value(other)
            .ok()
            .and_then(|j| j.get(other.type_name()).map(|x| x.to_string()))
            .unwrap_or_default(),
    };
    format!("AttributeValue: {{{}:{inner}}}", v.type_name())
}

impl<'c> Validator<'c> {
    pub fn new(kind: ExprKind, ctx: &'c mut ExpressionContext) -> Self {
        Validator { kind, ctx }
    }

    fn err(&self, message: impl AsRef<str>) -> DynamoError {
        self.kind.error(message.as_ref())
    }

    // ---- phase 1: names, functions, indexes ---------------------------

    fn check_path(&self, path: &RawPath) -> Result<(), DynamoError> {
        if path.0.len() > MAX_NESTING_DEPTH {
            return Err(self.err(format!(
                "The document path has too many nesting levels; nesting levels: {}",
                path.0.len()
            )));
        }
        for elem in &path.0 {
            match elem {
                RawElem::Ident(name) if is_reserved(name) => {
                    return Err(self.err(format!(
                        "Attribute name is a reserved keyword; reserved keyword: {name}"
                    )))
                }
                RawElem::Index(digits) => {
                    let ok =
                        digits.len() <= 10 && digits.parse::<u64>().is_ok_and(|n| n <= MAX_INDEX);
                    if !ok {
                        return Err(self.err(format!(
                            "List index is not within the allowable range; index: [{digits}]"
                        )));
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn check_call(&self, call: &RawCall, place: Place) -> Result<(), DynamoError> {
        let name = call.name.as_str();
        let is_condition_fn = CONDITION_FUNCTIONS.contains(&name);
        let is_update_fn = UPDATE_FUNCTIONS.contains(&name);
        if !(is_condition_fn || is_update_fn || name == "size") {
            return Err(self.err(format!("Invalid function name; function: {name}")));
        }
        let allowed = match place {
            Place::Update | Place::UpdateNested if !is_update_fn => {
                return Err(self.err(format!(
                    "The function is not allowed in an update expression; function: {name}"
                )))
            }
            Place::Update => true,
            Place::UpdateNested => name != "list_append",
            _ if is_update_fn => {
                return Err(self.err(format!(
                    "The function is not allowed in a condition expression; function: {name}"
                )))
            }
            Place::Condition => is_condition_fn,
            Place::ConditionOperand => name == "size",
        };
        if !allowed {
            return Err(self.err(format!(
                "The function is not allowed to be used this way in an expression; function: {name}"
            )));
        }
        let arg_place = match place {
            Place::Update | Place::UpdateNested => Place::UpdateNested,
            _ => Place::ConditionOperand,
        };
        for arg in &call.args {
            self.check_operand(arg, arg_place)?;
        }
        Ok(())
    }

    fn check_operand(&self, op: &RawOperand, place: Place) -> Result<(), DynamoError> {
        match op {
            RawOperand::Path(p) => self.check_path(p),
            RawOperand::Value(_) => Ok(()),
            RawOperand::Call(call) => self.check_call(call, place),
            RawOperand::Plus(a, b) | RawOperand::Minus(a, b) => {
                self.check_operand(a, Place::UpdateNested)?;
                self.check_operand(b, Place::UpdateNested)
            }
        }
    }

    fn check_cond(&self, cond: &RawCond) -> Result<(), DynamoError> {
        let operand = Place::ConditionOperand;
        match cond {
            RawCond::Compare(_, a, b) => {
                self.check_operand(a, operand)?;
                self.check_operand(b, operand)
            }
            RawCond::Between(a, b, c) => {
                self.check_operand(a, operand)?;
                self.check_operand(b, operand)?;
                self.check_operand(c, operand)
            }
            RawCond::In(a, list) => {
                self.check_operand(a, operand)?;
                for x in list {
                    self.check_operand(x, operand)?;
                }
                if list.len() > MAX_IN_OPERANDS {
                    return Err(self.err(format!(
                        "The IN operator is provided with too many operands; number of operands: {}",
                        list.len()
                    )));
                }
                Ok(())
            }
            RawCond::Call(call) => self.check_call(call, Place::Condition),
            RawCond::And(a, b) | RawCond::Or(a, b) => {
                self.check_cond(a)?;
                self.check_cond(b)
            }
            RawCond::Not(a) => self.check_cond(a),
        }
    }

    // ---- phase 2: placeholders ----------------------------------------

    fn resolve_path(&mut self, path: &RawPath) -> Result<Path, DynamoError> {
        let mut out = Vec::with_capacity(path.0.len());
        for elem in &path.0 {
            out.push(match elem {
                RawElem::Ident(name) => PathElem::Attr(name.clone()),
                RawElem::Name(key) => match self.ctx.name(key) {
                    Some(name) => PathElem::Attr(name),
                    None => {
                        return Err(self.err(format!(
                        "An expression attribute name used in the document path is not defined; attribute name: {key}"
                    )))
                    }
                },
                // Range-checked in phase 1.
                RawElem::Index(digits) => PathElem::Index(digits.parse().unwrap_or(0)),
            });
        }
        Ok(Path(out))
    }

    fn resolve_value(&mut self, key: &str) -> Result<AttributeValue, DynamoError> {
        self.ctx.value(key).ok_or_else(|| {
            self.err(format!(
                "An expression attribute value used in expression is not defined; attribute value: {key}"
            ))
        })
    }

    fn resolve_operand(&mut self, op: &RawOperand) -> Result<(), DynamoError> {
        match op {
            RawOperand::Path(p) => self.resolve_path(p).map(drop),
            RawOperand::Value(v) => self.resolve_value(v).map(drop),
            RawOperand::Call(call) => {
                for arg in &call.args {
                    self.resolve_operand(arg)?;
                }
                Ok(())
            }
            RawOperand::Plus(a, b) | RawOperand::Minus(a, b) => {
                self.resolve_operand(a)?;
                self.resolve_operand(b)
            }
        }
    }

    fn resolve_cond(&mut self, cond: &RawCond) -> Result<(), DynamoError> {
        match cond {
            RawCond::Compare(_, a, b) => {
                self.resolve_operand(a)?;
                self.resolve_operand(b)
            }
            RawCond::Between(a, b, c) => {
                self.resolve_operand(a)?;
                self.resolve_operand(b)?;
                self.resolve_operand(c)
            }
            RawCond::In(a, list) => {
                self.resolve_operand(a)?;
                list.iter().try_for_each(|x| self.resolve_operand(x))
            }
            RawCond::Call(call) => call.args.iter().try_for_each(|x| self.resolve_operand(x)),
            RawCond::And(a, b) | RawCond::Or(a, b) => {
                self.resolve_cond(a)?;
                self.resolve_cond(b)
            }
            RawCond::Not(a) => self.resolve_cond(a),
        }
    }

    // ---- phase 3: conversion and semantic checks -----------------------

    fn operand_type_error(&self, function: &str, type_name: &str) -> DynamoError {
        self.err(format!(
            "Incorrect operand type for operator or function; operator or function: {function}, operand type: {type_name}"
        ))
    }

    fn arity(&self, call: &RawCall, n: usize) -> Result<(), DynamoError> {
        if call.args.len() != n {
            return Err(self.err(format!(
                "Incorrect number of operands for operator or function; operator or function: {}, number of operands: {}",
                call.name,
                call.args.len()
            )));
        }
        Ok(())
    }

    fn requires_path(&self, function: &str) -> DynamoError {
        self.err(format!(
            "Operator or function requires a document path; operator or function: {function}"
        ))
    }

    fn operand(&mut self, op: &RawOperand) -> Result<Operand, DynamoError> {
        match op {
            RawOperand::Path(p) => Ok(Operand::Path(self.resolve_path(p)?)),
            RawOperand::Value(v) => Ok(Operand::Value(self.resolve_value(v)?)),
            RawOperand::Call(call) => {
                // Phase 1 let only `size` through here.
                self.arity(call, 1)?;
                let arg = self.operand(&call.args[0])?;
                if let Some(t) = type_of(&arg) {
                    if matches!(t, "N" | "BOOL" | "NULL") {
                        return Err(self.operand_type_error("size", t));
                    }
                }
                Ok(Operand::Size(Box::new(arg)))
            }
            RawOperand::Plus(..) | RawOperand::Minus(..) => Err(self.err("Syntax error")),
        }
    }

    /// `<`, `<=`, `>`, `>=` and BETWEEN only order numbers, strings and
    /// binaries; a constant of another type is an error, not a false result.
    fn check_orderable(&self, function: &str, op: &Operand) -> Result<(), DynamoError> {
        match type_of(op) {
            Some(t) if !matches!(t, "N" | "S" | "B") => Err(self.operand_type_error(function, t)),
            _ => Ok(()),
        }
    }

    fn check_distinct(
        &self,
        operator: &str,
        first: &Operand,
        rest: &[&Operand],
    ) -> Result<(), DynamoError> {
        if let Operand::Path(p) = first {
            if rest.iter().any(|o| matches!(o, Operand::Path(q) if q == p)) {
                return Err(self.err(format!(
                    "The first operand must be distinct from the remaining operands for this operator or function; operator: {operator}, first operand: {p}"
                )));
            }
        }
        Ok(())
    }

    /// Recursion over AND/OR/NOT only, so the recursive frame stays small
    /// (expressions may nest 300 deep); leaves are converted by `leaf`.
    fn cond(&mut self, raw: &RawCond) -> Result<Condition, DynamoError> {
        Ok(match raw {
            RawCond::And(a, b) => Condition::And(Box::new(self.cond(a)?), Box::new(self.cond(b)?)),
            RawCond::Or(a, b) => Condition::Or(Box::new(self.cond(a)?), Box::new(self.cond(b)?)),
            RawCond::Not(a) => Condition::Not(Box::new(self.cond(a)?)),
            leaf => self.leaf(leaf)?,
        })
    }

    #[inline(never)]
    fn leaf(&mut self, raw: &RawCond) -> Result<Condition, DynamoError> {
        Ok(match raw {
            RawCond::Compare(cmp, a, b) => {
                let a = self.operand(a)?;
                let b = self.operand(b)?;
                if !matches!(cmp, Comparator::Eq | Comparator::Ne) {
                    self.check_orderable(cmp.symbol(), &a)?;
                    self.check_orderable(cmp.symbol(), &b)?;
                }
                self.check_distinct(cmp.symbol(), &a, &[&b])?;
                Condition::Compare(*cmp, a, b)
            }
            RawCond::Between(a, lo, hi) => {
                let a = self.operand(a)?;
                let lo = self.operand(lo)?;
                let hi = self.operand(hi)?;
                for x in [&a, &lo, &hi] {
                    self.check_orderable("BETWEEN", x)?;
                }
                if let (Operand::Value(l), Operand::Value(h)) = (&lo, &hi) {
                    match l.compare(h) {
                        None => return Err(self.err(format!(
                            "The BETWEEN operator requires same data type for lower and upper bounds; lower bound operand: {}, upper bound operand: {}",
                            describe_value(l), describe_value(h)
                        ))),
                        Some(std::cmp::Ordering::Greater) => return Err(self.err(format!(
                            "The BETWEEN operator requires upper bound to be greater than or equal to lower bound; lower bound operand: {}, upper bound operand: {}",
                            describe_value(l), describe_value(h)
                        ))),
                        _ => {}
                    }
                }
                self.check_distinct("BETWEEN", &a, &[&lo, &hi])?;
                Condition::Between(a, lo, hi)
            }
            RawCond::In(a, list) => {
                let a = self.operand(a)?;
                let list = list
                    .iter()
                    .map(|x| self.operand(x))
                    .collect::<Result<Vec<_>, _>>()?;
                let rest: Vec<&Operand> = list.iter().collect();
                self.check_distinct("IN", &a, &rest)?;
                Condition::In(a, list)
            }
            RawCond::Call(call) => self.condition_function(call)?,
            RawCond::And(..) | RawCond::Or(..) | RawCond::Not(..) => self.cond(raw)?,
        })
    }

    fn path_arg(&mut self, call: &RawCall, i: usize) -> Result<Path, DynamoError> {
        match &call.args[i] {
            RawOperand::Path(p) => self.resolve_path(p),
            _ => Err(self.requires_path(&call.name)),
        }
    }

    fn condition_function(&mut self, call: &RawCall) -> Result<Condition, DynamoError> {
        let name = call.name.as_str();
        match name {
            "attribute_exists" | "attribute_not_exists" => {
                self.arity(call, 1)?;
                let p = self.path_arg(call, 0)?;
                Ok(if name == "attribute_exists" {
                    Condition::AttributeExists(p)
                } else {
                    Condition::AttributeNotExists(p)
                })
            }
            "attribute_type" => {
                self.arity(call, 2)?;
                let x = self.operand(&call.args[0])?;
                let t = self.operand(&call.args[1])?;
                match &t {
                    Operand::Value(AttributeValue::S(s)) => {
                        const TYPES: [&str; 10] =
                            ["S", "SS", "N", "NS", "B", "BS", "BOOL", "NULL", "L", "M"];
                        if !TYPES.contains(&s.as_str()) {
                            return Err(self.err(format!(
                                "Invalid attribute type name found; type: {s}, valid types: {{N,BS,L,B,NULL,M,S,SS,NS,BOOL}}"
                            )));
                        }
                    }
                    Operand::Path(_) => {
                        return Err(self.operand_type_error(
                            name,
                            "{DECIMALSET,NULL,N,NS,HD,DOUBLE,INT,BS,FS,FLOAT,DECIMAL,SS,INTSET,DICT,S,BOOL,DOUBLESET,L,M,HDS,B}",
                        ))
                    }
                    other => {
                        return Err(self.operand_type_error(name, type_of(other).unwrap_or("N")))
                    }
                }
                Ok(Condition::AttributeType(x, t))
            }
            "begins_with" => {
                self.arity(call, 2)?;
                let a = self.operand(&call.args[0])?;
                let b = self.operand(&call.args[1])?;
                for x in [&a, &b] {
                    if let Some(t) = type_of(x) {
                        if !matches!(t, "S" | "B") {
                            return Err(self.operand_type_error(name, t));
                        }
                    }
                }
                Ok(Condition::BeginsWith(a, b))
            }
            "contains" => {
                self.arity(call, 2)?;
                let a = self.operand(&call.args[0])?;
                let b = self.operand(&call.args[1])?;
                // DynamoDB refuses contains(a, a), as it refuses a = a.
                self.check_distinct(name, &a, &[&b])?;
                Ok(Condition::Contains(a, b))
            }
            // Phase 1 rejected everything else.
            _ => Err(self.err(format!("Invalid function name; function: {name}"))),
        }
    }

    fn update_operand(&mut self, op: &RawOperand) -> Result<UpdateOperand, DynamoError> {
        Ok(match op {
            RawOperand::Path(p) => UpdateOperand::Path(self.resolve_path(p)?),
            RawOperand::Value(v) => UpdateOperand::Value(self.resolve_value(v)?),
            RawOperand::Plus(a, b) | RawOperand::Minus(a, b) => {
                let symbol = if matches!(op, RawOperand::Plus(..)) {
                    "+"
                } else {
                    "-"
                };
                let a = self.update_operand(a)?;
                let b = self.update_operand(b)?;
                for x in [&a, &b] {
                    if let Some(t) = update_type(x) {
                        if t != "N" {
                            return Err(self.operand_type_error(symbol, t));
                        }
                    }
                }
                let (a, b) = (Box::new(a), Box::new(b));
                if symbol == "+" {
                    UpdateOperand::Plus(a, b)
                } else {
                    UpdateOperand::Minus(a, b)
                }
            }
            RawOperand::Call(call) if call.name == "if_not_exists" => {
                self.arity(call, 2)?;
                let p = self.path_arg(call, 0)?;
                let v = self.update_operand(&call.args[1])?;
                UpdateOperand::IfNotExists(p, Box::new(v))
            }
            RawOperand::Call(call) => {
                // list_append; phase 1 rejected all other functions.
                self.arity(call, 2)?;
                let a = self.update_operand(&call.args[0])?;
                let b = self.update_operand(&call.args[1])?;
                for x in [&a, &b] {
                    if let Some(t) = update_type(x) {
                        if t != "L" {
                            return Err(self.operand_type_error(&call.name, t));
                        }
                    }
                }
                UpdateOperand::ListAppend(Box::new(a), Box::new(b))
            }
        })
    }

    // ---- entry points --------------------------------------------------

    pub fn condition(mut self, raw: &RawCond) -> Result<Condition, DynamoError> {
        self.check_cond(raw)?;
        // A KeyConditionExpression is walked once, clause by clause: its
        // first problem wins, be it an undefined placeholder or an operand
        // of the wrong type (verified against AWS; see the module doc).
        if self.kind != ExprKind::KeyCondition {
            self.resolve_cond(raw)?;
        }
        self.cond(raw)
    }

    pub fn update(mut self, raw: &[RawAction]) -> Result<UpdateExpression, DynamoError> {
        for action in raw {
            match action {
                RawAction::Set(p, v) => {
                    self.check_path(p)?;
                    self.check_operand(v, Place::Update)?;
                }
                RawAction::Remove(p) | RawAction::Add(p, _) | RawAction::Delete(p, _) => {
                    self.check_path(p)?
                }
            }
        }
        for action in raw {
            match action {
                RawAction::Set(p, v) => {
                    self.resolve_path(p)?;
                    self.resolve_operand(v)?;
                }
                RawAction::Remove(p) => drop(self.resolve_path(p)?),
                RawAction::Add(p, v) | RawAction::Delete(p, v) => {
                    self.resolve_path(p)?;
                    self.resolve_value(v)?;
                }
            }
        }
        let mut actions = Vec::with_capacity(raw.len());
        for action in raw {
            actions.push(match action {
                RawAction::Set(p, v) => {
                    UpdateAction::Set(self.resolve_path(p)?, self.update_operand(v)?)
                }
                RawAction::Remove(p) => UpdateAction::Remove(self.resolve_path(p)?),
                RawAction::Add(p, v) => {
                    let path = self.resolve_path(p)?;
                    let value = self.resolve_value(v)?;
                    if !matches!(
                        value,
                        AttributeValue::N(_)
                            | AttributeValue::Ss(_)
                            | AttributeValue::Ns(_)
                            | AttributeValue::Bs(_)
                    ) {
                        return Err(self.err(format!(
                            "Incorrect operand type for operator or function; operator: ADD, operand type: {}, typeSet: ALLOWED_FOR_ADD_OPERAND",
                            long_type_name(&value)
                        )));
                    }
                    UpdateAction::Add(path, value)
                }
                RawAction::Delete(p, v) => {
                    let path = self.resolve_path(p)?;
                    let value = self.resolve_value(v)?;
                    if !value.is_set() {
                        return Err(self.err(format!(
                            "Incorrect operand type for operator or function; operator: DELETE, operand type: {}, typeSet: ALLOWED_FOR_DELETE_OPERAND",
                            long_type_name(&value)
                        )));
                    }
                    UpdateAction::Delete(path, value)
                }
            });
        }
        check_clashes(actions.iter().map(UpdateAction::path)).map_err(|(clash, m)| {
            let error = self.err(m);
            match clash {
                Clash::Overlap => error.in_family(Family::WriteValidation),
                Clash::Conflict => error,
            }
        })?;
        Ok(UpdateExpression { actions })
    }

    pub fn projection(mut self, raw: &[RawPath]) -> Result<Projection, DynamoError> {
        for p in raw {
            self.check_path(p)?;
        }
        let mut paths = Vec::with_capacity(raw.len());
        for p in raw {
            paths.push(self.resolve_path(p)?);
        }
        check_clashes(&paths).map_err(|(_, m)| self.err(m))?;
        Ok(Projection { paths })
    }
}

/// The type an update operand is known to have before evaluation.
fn update_type(op: &UpdateOperand) -> Option<&'static str> {
    match op {
        UpdateOperand::Value(v) => Some(v.type_name()),
        UpdateOperand::ListAppend(..) => Some("L"),
        UpdateOperand::Plus(..) | UpdateOperand::Minus(..) => Some("N"),
        UpdateOperand::Path(_) | UpdateOperand::IfNotExists(..) => None,
    }
}
