//! Recursive-descent parser for the three grammars (condition, update,
//! projection), producing the parse tree of `syntax`.
//!
//! It reproduces DynamoDB's syntax errors: the offending token and the source
//! text from the token before it to the token after it. It also raises the
//! two errors DynamoDB detects while parsing: redundant parentheses (checked
//! when a group closes, so before a later syntax error) and the 300-operator
//! limit. Recursion is bounded by [`MAX_DEPTH`] so no input can overflow the
//! stack.

use crate::lexer::{is_keyword, tokenize, Tok, Token};
use crate::syntax::{Comparator, RawAction, RawCall, RawCond, RawElem, RawOperand, RawPath};
use crate::ExprKind;
use ferrodyn_types::DynamoError;

/// Most operators and functions one expression may contain.
pub const MAX_OPERATORS: usize = 300;

/// Deepest nesting of parentheses and function calls the parser follows. An
/// expression within the operator limit never gets close to it.
pub const MAX_DEPTH: usize = 400;

/// What a parenthesised group turned out to contain.
enum Group {
    Cond(RawCond),
    Operand(RawOperand),
    /// A function call, which may be either (e.g. `(size(a))` or
    /// `(attribute_exists(a))`); the context decides.
    Call(RawCall),
}

pub struct Parser<'a> {
    src: &'a str,
    toks: Vec<Token>,
    pos: usize,
    kind: ExprKind,
    operators: usize,
    depth: usize,
}

impl<'a> Parser<'a> {
    pub fn new(src: &'a str, kind: ExprKind) -> Parser<'a> {
        Parser {
            src,
            toks: tokenize(src),
            pos: 0,
            kind,
            operators: 0,
            depth: 0,
        }
    }

    // ---- token helpers ------------------------------------------------

    fn peek(&self) -> &Token {
        &self.toks[self.pos]
    }

    fn peek_at(&self, offset: usize) -> &Token {
        let i = (self.pos + offset).min(self.toks.len() - 1);
        &self.toks[i]
    }

    fn text(&self, t: &Token) -> &'a str {
        &self.src[t.start..t.end]
    }

    fn bump(&mut self) -> Token {
        let t = self.toks[self.pos].clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }

    fn at(&self, tok: Tok) -> bool {
        self.peek().tok == tok
    }

    /// Whether the next token is the keyword `kw` (case-insensitive).
    fn at_keyword(&self, kw: &str) -> bool {
        let t = self.peek();
        t.tok == Tok::Ident && self.text(t).eq_ignore_ascii_case(kw)
    }

    fn expect(&mut self, tok: Tok) -> Result<Token, DynamoError> {
        if self.at(tok) {
            Ok(self.bump())
        } else {
            Err(self.syntax_error())
        }
    }

    /// DynamoDB's syntax error at the current token: the token's text and the
    /// source from the previous token's start to the next token's end.
    fn syntax_error(&self) -> DynamoError {
        let i = self.pos;
        let t = &self.toks[i];
        let token = if t.tok == Tok::Eof {
            "<EOF>"
        } else {
            self.text(t)
        };
        let start = if i > 0 { self.toks[i - 1].start } else { 0 };
        let end = match self.toks.get(i + 1) {
            Some(next) if next.tok != Tok::Eof => next.end,
            _ => self.src.len(),
        };
        let start = start.min(t.start);
        self.error(&format!(
            "Syntax error; token: \"{token}\", near: \"{}\"",
            &self.src[start..end]
        ))
    }

    fn error(&self, message: &str) -> DynamoError {
        self.kind.error(message)
    }

    fn count_operator(&mut self) -> Result<(), DynamoError> {
        self.operators += 1;
        if self.operators > MAX_OPERATORS {
            return Err(self.error(&format!(
                "The expression contains too many operators; operator count: {}",
                self.operators
            )));
        }
        Ok(())
    }

    fn enter(&mut self) -> Result<(), DynamoError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.syntax_error());
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    fn redundant(&self) -> DynamoError {
        self.error("The expression has redundant parentheses;")
    }

    fn finish(&mut self) -> Result<(), DynamoError> {
        if self.at(Tok::Eof) {
            Ok(())
        } else {
            Err(self.syntax_error())
        }
    }

    // ---- paths and operands --------------------------------------------

    /// An identifier usable as an attribute name (not a grammar keyword).
    fn at_name_ident(&self) -> bool {
        let t = self.peek();
        t.tok == Tok::Ident && !is_keyword(self.text(t))
    }

    fn path_elem_name(&mut self) -> Result<RawElem, DynamoError> {
        if self.at_name_ident() {
            let t = self.bump();
            Ok(RawElem::Ident(self.text(&t).to_string()))
        } else if self.at(Tok::Name) {
            let t = self.bump();
            Ok(RawElem::Name(self.text(&t).to_string()))
        } else {
            Err(self.syntax_error())
        }
    }

    pub fn path(&mut self) -> Result<RawPath, DynamoError> {
        let mut elems = vec![self.path_elem_name()?];
        loop {
            if self.at(Tok::Dot) {
                self.bump();
                elems.push(self.path_elem_name()?);
            } else if self.at(Tok::LBracket) {
                self.bump();
                let t = self.expect(Tok::Number)?;
                elems.push(RawElem::Index(self.text(&t).to_string()));
                self.expect(Tok::RBracket)?;
            } else {
                return Ok(RawPath(elems));
            }
        }
    }

    fn at_call(&self) -> bool {
        self.at_name_ident() && self.peek_at(1).tok == Tok::LParen
    }

    /// `name ( operand , ... )`, the current token being the name.
    fn call(&mut self) -> Result<RawCall, DynamoError> {
        let name_tok = self.bump();
        let name = self.text(&name_tok).to_string();
        self.count_operator()?;
        self.enter()?;
        self.expect(Tok::LParen)?;
        let mut args = vec![self.operand()?.0];
        while self.at(Tok::Comma) {
            self.bump();
            args.push(self.operand()?.0);
        }
        self.expect(Tok::RParen)?;
        self.leave();
        Ok(RawCall { name, args })
    }

    /// An operand; the flag says whether it was exactly one parenthesised
    /// group (for the redundant-parentheses rule).
    fn operand(&mut self) -> Result<(RawOperand, bool), DynamoError> {
        let t = self.peek().clone();
        match t.tok {
            Tok::LParen => {
                self.bump();
                self.enter()?;
                let (inner, wrapped) = self.operand()?;
                self.expect(Tok::RParen)?;
                self.leave();
                if wrapped {
                    return Err(self.redundant());
                }
                Ok((inner, true))
            }
            Tok::Value => {
                self.bump();
                Ok((RawOperand::Value(self.text(&t).to_string()), false))
            }
            _ if self.at_call() => Ok((RawOperand::Call(self.call()?), false)),
            _ => Ok((RawOperand::Path(self.path()?), false)),
        }
    }

    // ---- conditions ---------------------------------------------------

    pub fn parse_condition(mut self) -> Result<RawCond, DynamoError> {
        let cond = self.cond_or(None)?;
        self.finish()?;
        Ok(cond)
    }

    /// `and (OR and)*`, optionally continuing from an already parsed first
    /// term.
    fn cond_or(&mut self, first: Option<RawCond>) -> Result<RawCond, DynamoError> {
        let mut left = self.cond_and(first)?;
        while self.at_keyword("OR") {
            self.bump();
            self.count_operator()?;
            let right = self.cond_and(None)?;
            left = RawCond::Or(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    fn cond_and(&mut self, first: Option<RawCond>) -> Result<RawCond, DynamoError> {
        let mut left = match first {
            Some(c) => c,
            None => self.cond_not()?,
        };
        while self.at_keyword("AND") {
            self.bump();
            self.count_operator()?;
            let right = self.cond_not()?;
            left = RawCond::And(Box::new(left), Box::new(right));
        }
        Ok(left)
    }

    /// `NOT* atom`; the NOT chain is a loop so it costs no stack.
    fn cond_not(&mut self) -> Result<RawCond, DynamoError> {
        let mut nots = 0;
        while self.at_keyword("NOT") {
            self.bump();
            self.count_operator()?;
            nots += 1;
        }
        let mut cond = self.cond_atom()?;
        for _ in 0..nots {
            cond = RawCond::Not(Box::new(cond));
        }
        Ok(cond)
    }

    fn at_comparison(&self) -> bool {
        matches!(
            self.peek().tok,
            Tok::Eq | Tok::Ne | Tok::Lt | Tok::Le | Tok::Gt | Tok::Ge
        ) || self.at_keyword("BETWEEN")
            || self.at_keyword("IN")
    }

    fn cond_atom(&mut self) -> Result<RawCond, DynamoError> {
        if self.at(Tok::LParen) {
            return match self.cond_group()? {
                Group::Cond(c) => Ok(c),
                Group::Operand(o) => self.comparison(o),
                Group::Call(call) => self.call_in_condition(call),
            };
        }
        if self.at_call() {
            let call = self.call()?;
            return self.call_in_condition(call);
        }
        let (left, _) = self.operand()?;
        self.comparison(left)
    }

    /// A call in condition position: an operand if a comparison follows,
    /// otherwise a condition function.
    fn call_in_condition(&mut self, call: RawCall) -> Result<RawCond, DynamoError> {
        if self.at_comparison() {
            self.comparison(RawOperand::Call(call))
        } else {
            Ok(RawCond::Call(call))
        }
    }

    /// A parenthesised group in condition position, which may hold a
    /// condition or (as in `(a) = :v`) just an operand.
    fn cond_group(&mut self) -> Result<Group, DynamoError> {
        self.bump();
        self.enter()?;
        let (inner, wrapped) = self.group_content()?;
        self.expect(Tok::RParen)?;
        self.leave();
        if wrapped {
            return Err(self.redundant());
        }
        Ok(inner)
    }

    /// The inside of a group: a full condition, or a lone operand/call. The
    /// flag says whether the content is itself exactly one group.
    fn group_content(&mut self) -> Result<(Group, bool), DynamoError> {
        if self.at_keyword("NOT") {
            return Ok((Group::Cond(self.cond_or(None)?), false));
        }
        let (first, wrapped) = if self.at(Tok::LParen) {
            (self.cond_group()?, true)
        } else if self.at_call() {
            (Group::Call(self.call()?), false)
        } else {
            (Group::Operand(self.operand()?.0), false)
        };
        if self.at(Tok::RParen) {
            // Nothing follows: the group holds just this (a condition
            // function call, a lone operand, or another group).
            return Ok((first, wrapped));
        }
        let first_cond = match first {
            Group::Cond(c) => c,
            Group::Operand(o) => self.comparison(o)?,
            Group::Call(call) => self.call_in_condition(call)?,
        };
        Ok((Group::Cond(self.cond_or(Some(first_cond))?), false))
    }

    /// What follows a left operand: a comparator, BETWEEN or IN.
    fn comparison(&mut self, left: RawOperand) -> Result<RawCond, DynamoError> {
        let cmp = match self.peek().tok {
            Tok::Eq => Some(Comparator::Eq),
            Tok::Ne => Some(Comparator::Ne),
            Tok::Lt => Some(Comparator::Lt),
            Tok::Le => Some(Comparator::Le),
            Tok::Gt => Some(Comparator::Gt),
            Tok::Ge => Some(Comparator::Ge),
            _ => None,
        };
        if let Some(cmp) = cmp {
            self.bump();
            self.count_operator()?;
            let (right, _) = self.operand()?;
            return Ok(RawCond::Compare(cmp, left, right));
        }
        if self.at_keyword("BETWEEN") {
            self.bump();
            self.count_operator()?;
            let (low, _) = self.operand()?;
            if !self.at_keyword("AND") {
                return Err(self.syntax_error());
            }
            self.bump();
            let (high, _) = self.operand()?;
            return Ok(RawCond::Between(left, low, high));
        }
        if self.at_keyword("IN") {
            self.bump();
            self.count_operator()?;
            self.expect(Tok::LParen)?;
            let mut list = vec![self.operand()?.0];
            while self.at(Tok::Comma) {
                self.bump();
                list.push(self.operand()?.0);
            }
            self.expect(Tok::RParen)?;
            return Ok(RawCond::In(left, list));
        }
        Err(self.syntax_error())
    }

    // ---- update expressions -------------------------------------------

    pub fn parse_update(mut self) -> Result<Vec<RawAction>, DynamoError> {
        let mut actions = Vec::new();
        let mut seen: Vec<&'static str> = Vec::new();
        loop {
            let section = ["SET", "REMOVE", "ADD", "DELETE"]
                .into_iter()
                .find(|kw| self.at_keyword(kw));
            let Some(section) = section else {
                return Err(self.syntax_error());
            };
            if seen.contains(&section) {
                return Err(self.error(&format!(
                    "The \"{section}\" section can only be used once in an update expression;"
                )));
            }
            seen.push(section);
            self.bump();
            loop {
                actions.push(self.update_action(section)?);
                if !self.at(Tok::Comma) {
                    break;
                }
                self.bump();
            }
            if self.at(Tok::Eof) {
                return Ok(actions);
            }
        }
    }

    fn update_action(&mut self, section: &str) -> Result<RawAction, DynamoError> {
        let path = self.path()?;
        match section {
            "SET" => {
                self.expect(Tok::Eq)?;
                let (value, _) = self.set_value()?;
                Ok(RawAction::Set(path, value))
            }
            "REMOVE" => Ok(RawAction::Remove(path)),
            _ => {
                let t = self.expect(Tok::Value)?;
                let value = self.text(&t).to_string();
                if section == "ADD" {
                    Ok(RawAction::Add(path, value))
                } else {
                    Ok(RawAction::Delete(path, value))
                }
            }
        }
    }

    /// `operand [(+|-) operand]`, or a parenthesised set value. A
    /// parenthesised sum cannot be extended (`(a + b) + c` is a syntax error).
    fn set_value(&mut self) -> Result<(RawOperand, bool), DynamoError> {
        let left = if self.at(Tok::LParen) {
            self.bump();
            self.enter()?;
            let (inner, wrapped) = self.set_value()?;
            self.expect(Tok::RParen)?;
            self.leave();
            if wrapped {
                return Err(self.redundant());
            }
            if matches!(inner, RawOperand::Plus(..) | RawOperand::Minus(..)) {
                return Ok((inner, true));
            }
            if !(self.at(Tok::Plus) || self.at(Tok::Minus)) {
                return Ok((inner, true));
            }
            inner
        } else {
            self.update_operand()?
        };
        let plus = self.at(Tok::Plus);
        if plus || self.at(Tok::Minus) {
            self.bump();
            self.count_operator()?;
            let right = self.update_operand()?;
            let (l, r) = (Box::new(left), Box::new(right));
            return Ok((
                if plus {
                    RawOperand::Plus(l, r)
                } else {
                    RawOperand::Minus(l, r)
                },
                false,
            ));
        }
        Ok((left, false))
    }

    fn update_operand(&mut self) -> Result<RawOperand, DynamoError> {
        Ok(self.operand()?.0)
    }

    // ---- projection expressions ---------------------------------------

    pub fn parse_projection(mut self) -> Result<Vec<RawPath>, DynamoError> {
        let mut paths = vec![self.path()?];
        while self.at(Tok::Comma) {
            self.bump();
            paths.push(self.path()?);
        }
        self.finish()?;
        Ok(paths)
    }
}
