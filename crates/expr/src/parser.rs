//! Recursive-descent parser for the three grammars (condition, update,
//! projection), producing the parse tree of `syntax`.
//!
//! It reproduces DynamoDB's syntax errors: the offending token and the source
//! text from the token before it to the token after it. It also raises the
//! two errors DynamoDB detects while parsing: the 300-operator limit, and
//! redundant parentheses (`((x))`). DynamoDB's parser stops at the first
//! syntax error and then reports redundant parentheses found in what it had
//! already recognised, in preference to the syntax error; a group counts as
//! recognised once its role is decided (a condition group when it closes, an
//! operand group in condition position once a comparator follows it).
//! Recursion is bounded by [`MAX_DEPTH`] so no input can overflow the stack.

use crate::lexer::{is_keyword, tokenize, Tok, Token};
use crate::syntax::{Comparator, RawAction, RawCall, RawCond, RawElem, RawOperand, RawPath};
use crate::ExprKind;
use ferrodyn_types::DynamoError;
use ferrodyn_types::Family;

/// Most operators and functions one expression may contain.
pub const MAX_OPERATORS: usize = 300;

/// Deepest nesting of parentheses and function calls the parser follows. An
/// expression within the operator limit never gets close to it.
pub const MAX_DEPTH: usize = 300;

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
    /// Redundant parentheses were recognised.
    redundant: bool,
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
            redundant: false,
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
            return Err(self.too_deep());
        }
        Ok(())
    }

    /// Nesting this deep without an operator per level (which the operator
    /// limit would have stopped) is either a run of redundant parentheses
    /// that all close, or unbalanced; report what DynamoDB would.
    fn too_deep(&mut self) -> DynamoError {
        let rest = &self.toks[self.pos..];
        if rest
            .windows(2)
            .any(|w| w[0].tok == Tok::RParen && w[1].tok == Tok::RParen)
        {
            return self.redundant();
        }
        self.pos = self.toks.len() - 1;
        self.syntax_error()
    }

    /// Applies the redundant-parentheses rule to a finished parse.
    fn conclude<T>(&self, result: Result<T, DynamoError>) -> Result<T, DynamoError> {
        match result {
            Ok(_) if self.redundant => Err(self.redundant()),
            Err(e) if self.redundant && e.message.contains(": Syntax error;") => {
                Err(self.redundant())
            }
            other => other,
        }
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
        // Redundant parentheses in the arguments count only once the call
        // is complete.
        let outer = std::mem::replace(&mut self.redundant, false);
        let mut args = vec![self.operand()?.0];
        while self.at(Tok::Comma) {
            self.bump();
            args.push(self.operand()?.0);
        }
        let inner = std::mem::replace(&mut self.redundant, outer);
        self.expect(Tok::RParen)?;
        self.redundant |= inner;
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
                    self.redundant = true;
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
        let result = self.cond_or(None).and_then(|cond| {
            self.finish()?;
            Ok(cond)
        });
        self.conclude(result)
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
            let (group, pending) = self.cond_group()?;
            return self.use_group(group, pending);
        }
        if self.at_call() {
            let call = self.call()?;
            return self.call_in_condition(call, false);
        }
        let (left, _) = self.operand()?;
        self.comparison(left, false)
    }

    /// Continues a condition from a group whose role is now decided by the
    /// next token.
    fn use_group(&mut self, group: Group, pending: bool) -> Result<RawCond, DynamoError> {
        match group {
            Group::Cond(c) => Ok(c),
            Group::Operand(o) => self.comparison(o, pending),
            Group::Call(call) => self.call_in_condition(call, pending),
        }
    }

    /// A call in condition position: an operand if a comparison follows,
    /// otherwise a condition function. `pending` says it was wrapped in
    /// redundant parentheses, now recognised.
    fn call_in_condition(&mut self, call: RawCall, pending: bool) -> Result<RawCond, DynamoError> {
        if self.at_comparison() {
            self.comparison(RawOperand::Call(call), pending)
        } else {
            self.redundant |= pending;
            Ok(RawCond::Call(call))
        }
    }

    /// A parenthesised group in condition position, which may hold a
    /// condition or (as in `(a) = :v`) just an operand.
    ///
    /// Returns the content and whether redundant parentheses in it are still
    /// pending (an operand or call whose role the next token decides).
    fn cond_group(&mut self) -> Result<(Group, bool), DynamoError> {
        self.bump();
        self.enter()?;
        let (inner, wrapped, pending) = self.group_content()?;
        self.expect(Tok::RParen)?;
        self.leave();
        let pending = pending || wrapped;
        if let Group::Cond(_) = inner {
            self.redundant |= pending;
            return Ok((inner, false));
        }
        Ok((inner, pending))
    }

    /// The inside of a group: a full condition, or a lone operand/call. The
    /// flag says whether the content is itself exactly one group.
    /// Also returns whether redundant parentheses inside are pending.
    fn group_content(&mut self) -> Result<(Group, bool, bool), DynamoError> {
        if self.at_keyword("NOT") {
            return Ok((Group::Cond(self.cond_or(None)?), false, false));
        }
        let (first, wrapped, pending) = if self.at(Tok::LParen) {
            let (group, pending) = self.cond_group()?;
            (group, true, pending)
        } else if self.at_call() {
            (Group::Call(self.call()?), false, false)
        } else {
            (Group::Operand(self.operand()?.0), false, false)
        };
        if self.at(Tok::RParen) {
            // Nothing follows: the group holds just this (a condition
            // function call, a lone operand, or another group).
            return Ok((first, wrapped, pending));
        }
        let first_cond = self.use_group(first, pending)?;
        Ok((Group::Cond(self.cond_or(Some(first_cond))?), false, false))
    }

    /// What follows a left operand: a comparator, BETWEEN or IN.
    /// `pending` says `left` was wrapped in redundant parentheses, which
    /// count as recognised once a comparator follows.
    fn comparison(&mut self, left: RawOperand, pending: bool) -> Result<RawCond, DynamoError> {
        if self.at_comparison() {
            self.redundant |= pending;
        }
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
        let result = self.update_sections();
        self.conclude(result)
    }

    fn update_sections(&mut self) -> Result<Vec<RawAction>, DynamoError> {
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
                return Err(self
                    .error(&format!(
                        "The \"{section}\" section can only be used once in an update expression;"
                    ))
                    .in_family(Family::WriteValidation));
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
                self.redundant = true;
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
