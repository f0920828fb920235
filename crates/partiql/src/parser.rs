//! A recursive-descent parser for DynamoDB's PartiQL statements. Nesting is
//! bounded ([`MAX_DEPTH`]) so that no statement, however deep, can overflow
//! the stack: a deeper one is a syntax error.

use crate::ast::*;
use crate::error::{ParseError, Position};
use crate::lexer::{tokenize, Token};

/// The deepest nesting of parentheses, NOTs and collection literals accepted.
pub const MAX_DEPTH: usize = 100;

/// Clauses of SQL and PartiQL that DynamoDB's dialect does not have.
const UNSUPPORTED_CLAUSES: [&str; 10] = [
    "LIMIT",
    "OFFSET",
    "GROUP",
    "HAVING",
    "UNION",
    "JOIN",
    "INTERSECT",
    "EXCEPT",
    "AS",
    "AT",
];

/// A parsed statement and the number of `?` parameters it takes.
#[derive(Clone, Debug, PartialEq)]
pub struct Parsed {
    pub statement: Statement,
    pub parameters: usize,
}

/// Parses one statement.
pub fn parse(text: &str) -> Result<Parsed, ParseError> {
    let mut parser = Parser {
        tokens: tokenize(text)?,
        next: 0,
        params: 0,
        depth: 0,
    };
    let statement = parser.statement()?;
    if let Some((token, at)) = parser.peek_with_position() {
        if let Token::Word(word) = &token {
            let upper = word.to_ascii_uppercase();
            if UNSUPPORTED_CLAUSES.contains(&upper.as_str()) {
                return Err(ParseError::unsupported(
                    format!("Unsupported clause: {upper}"),
                    at,
                ));
            }
        }
        return Err(ParseError::new(
            format!(
                "unexpected {} after the end of the statement",
                token.describe()
            ),
            at,
        ));
    }
    Ok(Parsed {
        statement,
        parameters: parser.params,
    })
}

struct Parser {
    tokens: Vec<(Token, Position)>,
    next: usize,
    params: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.next).map(|(t, _)| t)
    }

    fn peek_with_position(&self) -> Option<(Token, Position)> {
        self.tokens.get(self.next).cloned()
    }

    fn advance(&mut self) -> Option<(Token, Position)> {
        let token = self.tokens.get(self.next).cloned();
        self.next += 1;
        token
    }

    fn error_here(&self, expected: &str) -> ParseError {
        match self.tokens.get(self.next) {
            Some((token, at)) => ParseError::new(
                format!("unexpected {}, expected {expected}", token.describe()),
                *at,
            ),
            None => ParseError::at_end(format!("expected {expected}")),
        }
    }

    fn at_keyword(&self, word: &str) -> bool {
        self.peek().is_some_and(|t| t.is_keyword(word))
    }

    fn eat_keyword(&mut self, word: &str) -> bool {
        let found = self.at_keyword(word);
        if found {
            self.next += 1;
        }
        found
    }

    fn expect_keyword(&mut self, word: &str) -> Result<(), ParseError> {
        if self.eat_keyword(word) {
            Ok(())
        } else {
            Err(self.error_here(word))
        }
    }

    fn at_symbol(&self, symbol: &str) -> bool {
        matches!(self.peek(), Some(Token::Symbol(s)) if *s == symbol)
    }

    fn eat_symbol(&mut self, symbol: &str) -> bool {
        let found = self.at_symbol(symbol);
        if found {
            self.next += 1;
        }
        found
    }

    fn expect_symbol(&mut self, symbol: &str) -> Result<(), ParseError> {
        if self.eat_symbol(symbol) {
            Ok(())
        } else {
            Err(self.error_here(&format!("'{symbol}'")))
        }
    }

    /// Enters one level of nesting, refusing to go deeper than [`MAX_DEPTH`].
    fn descend(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            let at = self.tokens.get(self.next).map(|(_, p)| *p);
            let message = format!("the statement is nested more than {MAX_DEPTH} levels deep");
            return Err(match at {
                Some(at) => ParseError::new(message, at),
                None => ParseError::at_end(message),
            });
        }
        Ok(())
    }

    fn ascend(&mut self) {
        self.depth -= 1;
    }

    fn statement(&mut self) -> Result<Statement, ParseError> {
        let Some(Token::Word(word)) = self.peek() else {
            return Err(self.error_here("SELECT, INSERT, UPDATE, DELETE or EXISTS"));
        };
        match word.to_ascii_uppercase().as_str() {
            "SELECT" => Ok(Statement::Select(self.select()?)),
            "INSERT" => self.insert(),
            "UPDATE" => self.update(),
            "DELETE" => self.delete(),
            "EXISTS" => {
                self.next += 1;
                self.expect_symbol("(")?;
                let select = self.select()?;
                self.expect_symbol(")")?;
                Ok(Statement::Exists(select))
            }
            _ => Err(self.error_here("SELECT, INSERT, UPDATE, DELETE or EXISTS")),
        }
    }

    fn select(&mut self) -> Result<Select, ParseError> {
        self.expect_keyword("SELECT")?;
        let projection = if self.eat_symbol("*") {
            None
        } else {
            let mut paths = vec![self.path()?];
            while self.eat_symbol(",") {
                paths.push(self.path()?);
            }
            Some(paths)
        };
        self.expect_keyword("FROM")?;
        let table = self.identifier("a table name")?;
        let index = if self.eat_symbol(".") {
            Some(self.identifier("an index name")?)
        } else {
            None
        };
        let condition = if self.eat_keyword("WHERE") {
            Some(self.expr()?)
        } else {
            None
        };
        let mut order_by = Vec::new();
        if self.eat_keyword("ORDER") {
            self.expect_keyword("BY")?;
            loop {
                let path = self.path()?;
                let descending = self.eat_keyword("DESC");
                if !descending {
                    self.eat_keyword("ASC");
                }
                order_by.push(OrderBy { path, descending });
                if !self.eat_symbol(",") {
                    break;
                }
            }
        }
        Ok(Select {
            projection,
            table,
            index,
            condition,
            order_by,
        })
    }

    fn insert(&mut self) -> Result<Statement, ParseError> {
        self.expect_keyword("INSERT")?;
        self.expect_keyword("INTO")?;
        let table = self.identifier("a table name")?;
        if let Some((token, at)) = self.peek_with_position() {
            if token.is_keyword("VALUES") {
                return Err(ParseError::unsupported(
                    "Unsupported clause: VALUES (DynamoDB inserts one item: VALUE {...})",
                    at,
                ));
            }
        }
        self.expect_keyword("VALUE")?;
        let value = self.expr()?;
        Ok(Statement::Insert(Insert { table, value }))
    }

    fn update(&mut self) -> Result<Statement, ParseError> {
        self.expect_keyword("UPDATE")?;
        let table = self.identifier("a table name")?;
        let mut actions = Vec::new();
        loop {
            if self.eat_keyword("SET") {
                loop {
                    let path = self.path()?;
                    self.expect_symbol("=")?;
                    actions.push(UpdateAction::Set(path, self.expr()?));
                    if !self.eat_symbol(",") {
                        break;
                    }
                }
            } else if self.eat_keyword("REMOVE") {
                loop {
                    actions.push(UpdateAction::Remove(self.path()?));
                    if !self.eat_symbol(",") {
                        break;
                    }
                }
            } else if actions.is_empty() {
                return Err(self.error_here("SET or REMOVE"));
            } else {
                break;
            }
        }
        self.expect_keyword("WHERE")?;
        let condition = self.expr()?;
        let returning = self.returning()?;
        Ok(Statement::Update(Update {
            table,
            actions,
            condition,
            returning,
        }))
    }

    fn delete(&mut self) -> Result<Statement, ParseError> {
        self.expect_keyword("DELETE")?;
        self.expect_keyword("FROM")?;
        let table = self.identifier("a table name")?;
        self.expect_keyword("WHERE")?;
        let condition = self.expr()?;
        let returning = self.returning()?;
        Ok(Statement::Delete(Delete {
            table,
            condition,
            returning,
        }))
    }

    /// `RETURNING (ALL|MODIFIED) (OLD|NEW) *`, if present.
    fn returning(&mut self) -> Result<Option<Returning>, ParseError> {
        if !self.eat_keyword("RETURNING") {
            return Ok(None);
        }
        let all = if self.eat_keyword("ALL") {
            true
        } else if self.eat_keyword("MODIFIED") {
            false
        } else {
            return Err(self.error_here("ALL or MODIFIED"));
        };
        let old = if self.eat_keyword("OLD") {
            true
        } else if self.eat_keyword("NEW") {
            false
        } else {
            return Err(self.error_here("OLD or NEW"));
        };
        self.expect_symbol("*")?;
        Ok(Some(match (all, old) {
            (true, true) => Returning::AllOld,
            (false, true) => Returning::ModifiedOld,
            (true, false) => Returning::AllNew,
            (false, false) => Returning::ModifiedNew,
        }))
    }

    /// A table, index or attribute name: a bare word or a quoted identifier.
    fn identifier(&mut self, what: &str) -> Result<String, ParseError> {
        match self.peek() {
            Some(Token::Word(_) | Token::Quoted(_)) => Ok(self.take_text()),
            _ => Err(self.error_here(what)),
        }
    }

    /// Consumes the current token, a word, identifier, string or number,
    /// moving its text out (the parser never looks back at consumed text).
    fn take_text(&mut self) -> String {
        let text = match &mut self.tokens[self.next].0 {
            Token::Word(t) | Token::Quoted(t) | Token::Str(t) | Token::Number(t) => {
                std::mem::take(t)
            }
            _ => unreachable!("take_text is called on a token with text"),
        };
        self.next += 1;
        text
    }

    /// An attribute followed by `.name` and `[index]` steps.
    fn path(&mut self) -> Result<Path, ParseError> {
        let root = self.identifier("an attribute name")?;
        self.path_steps(root)
    }

    fn path_steps(&mut self, root: String) -> Result<Path, ParseError> {
        let mut steps = Vec::new();
        loop {
            if self.eat_symbol(".") {
                steps.push(Step::Field(self.identifier("an attribute name")?));
            } else if self.eat_symbol("[") {
                let index = match self.advance() {
                    Some((Token::Number(n), _)) if n.bytes().all(|b| b.is_ascii_digit()) => {
                        n.parse::<u32>().ok()
                    }
                    _ => None,
                };
                let Some(index) = index else {
                    self.next -= 1;
                    return Err(self.error_here("a list index"));
                };
                steps.push(Step::Index(index));
                self.expect_symbol("]")?;
            } else {
                return Ok(Path { root, steps });
            }
        }
    }

    fn expr(&mut self) -> Result<Expr, ParseError> {
        self.descend()?;
        let mut left = self.and()?;
        while self.eat_keyword("OR") {
            left = Expr::Or(Box::new(left), Box::new(self.and()?));
        }
        self.ascend();
        Ok(left)
    }

    fn and(&mut self) -> Result<Expr, ParseError> {
        let mut left = self.not()?;
        while self.eat_keyword("AND") {
            left = Expr::And(Box::new(left), Box::new(self.not()?));
        }
        Ok(left)
    }

    fn not(&mut self) -> Result<Expr, ParseError> {
        if self.eat_keyword("NOT") {
            self.descend()?;
            let inner = self.not()?;
            self.ascend();
            return Ok(Expr::Not(Box::new(inner)));
        }
        self.predicate()
    }

    /// A comparison, BETWEEN, IN or IS test, or a plain operand.
    fn predicate(&mut self) -> Result<Expr, ParseError> {
        let left = self.additive()?;
        let comparison = match self.peek() {
            Some(Token::Symbol("=")) => Some(Comparison::Eq),
            Some(Token::Symbol("<>" | "!=")) => Some(Comparison::Ne),
            Some(Token::Symbol("<")) => Some(Comparison::Lt),
            Some(Token::Symbol("<=")) => Some(Comparison::Le),
            Some(Token::Symbol(">")) => Some(Comparison::Gt),
            Some(Token::Symbol(">=")) => Some(Comparison::Ge),
            _ => None,
        };
        if let Some(op) = comparison {
            self.next += 1;
            let right = self.additive()?;
            return Ok(Expr::Compare(op, Box::new(left), Box::new(right)));
        }
        if self.eat_keyword("BETWEEN") {
            let low = self.additive()?;
            self.expect_keyword("AND")?;
            let high = self.additive()?;
            return Ok(Expr::Between(Box::new(left), Box::new(low), Box::new(high)));
        }
        if self.eat_keyword("IN") {
            return Ok(Expr::In(Box::new(left), self.in_list()?));
        }
        if self.eat_keyword("IS") {
            let negated = self.eat_keyword("NOT");
            let operand = Box::new(left);
            if self.eat_keyword("MISSING") {
                return Ok(Expr::Missing { operand, negated });
            }
            if self.eat_keyword("NULL") {
                return Ok(Expr::IsNull { operand, negated });
            }
            return Err(self.error_here("MISSING or NULL"));
        }
        Ok(left)
    }

    /// `[a, b]` or `(a, b)` after IN.
    fn in_list(&mut self) -> Result<Vec<Expr>, ParseError> {
        let close = if self.eat_symbol("[") {
            "]"
        } else if self.eat_symbol("(") {
            ")"
        } else {
            return Err(self.error_here("'[' or '(' after IN"));
        };
        let items = self.list_items(close)?;
        if items.is_empty() {
            return Err(self.error_here("at least one value after IN"));
        }
        Ok(items)
    }

    fn additive(&mut self) -> Result<Expr, ParseError> {
        let mut left = self.unary()?;
        loop {
            if self.eat_symbol("+") {
                left = Expr::Add(Box::new(left), Box::new(self.unary()?));
            } else if self.eat_symbol("-") {
                left = Expr::Subtract(Box::new(left), Box::new(self.unary()?));
            } else {
                return Ok(left);
            }
        }
    }

    fn unary(&mut self) -> Result<Expr, ParseError> {
        if self.eat_symbol("-") {
            if let Some(Token::Number(n)) = self.peek() {
                let n = format!("-{n}");
                self.next += 1;
                return Ok(Expr::Number(n));
            }
            self.descend()?;
            let inner = self.unary()?;
            self.ascend();
            return Ok(Expr::Negate(Box::new(inner)));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Expr, ParseError> {
        match self.peek() {
            Some(Token::Str(_)) => Ok(Expr::String(self.take_text())),
            Some(Token::Number(_)) => Ok(Expr::Number(self.take_text())),
            Some(Token::Param) => {
                self.next += 1;
                self.params += 1;
                Ok(Expr::Param(self.params - 1))
            }
            Some(Token::Quoted(_)) => {
                let name = self.take_text();
                Ok(Expr::Path(self.path_steps(name)?))
            }
            Some(Token::Word(_)) => {
                let word = self.take_text();
                self.word(word)
            }
            Some(Token::Symbol("(")) => {
                self.next += 1;
                let inner = self.expr()?;
                self.expect_symbol(")")?;
                Ok(inner)
            }
            Some(Token::Symbol("{")) => {
                self.next += 1;
                self.nested(|p| p.map_items())
            }
            Some(Token::Symbol("[")) => {
                self.next += 1;
                self.nested(|p| p.list_items("]").map(Expr::List))
            }
            Some(Token::Symbol("<<")) => {
                self.next += 1;
                self.nested(|p| p.list_items(">>").map(Expr::Set))
            }
            _ => Err(self.error_here("a value or an attribute")),
        }
    }

    fn nested(
        &mut self,
        inner: impl FnOnce(&mut Parser) -> Result<Expr, ParseError>,
    ) -> Result<Expr, ParseError> {
        self.descend()?;
        let value = inner(self)?;
        self.ascend();
        Ok(value)
    }

    /// A keyword literal, a function call or an attribute path.
    fn word(&mut self, word: String) -> Result<Expr, ParseError> {
        match word.to_ascii_uppercase().as_str() {
            "TRUE" => return Ok(Expr::Bool(true)),
            "FALSE" => return Ok(Expr::Bool(false)),
            "NULL" => return Ok(Expr::Null),
            _ => {}
        }
        if self.eat_symbol("(") {
            let args = self.nested(|p| p.list_items(")").map(Expr::List))?;
            let Expr::List(args) = args else {
                unreachable!("list_items builds a list")
            };
            return Ok(Expr::Call(word.to_ascii_lowercase(), args));
        }
        Ok(Expr::Path(self.path_steps(word)?))
    }

    /// Comma-separated values up to `close` (consumed).
    fn list_items(&mut self, close: &str) -> Result<Vec<Expr>, ParseError> {
        let mut items = Vec::new();
        if self.eat_symbol(close) {
            return Ok(items);
        }
        loop {
            items.push(self.expr()?);
            if self.eat_symbol(close) {
                return Ok(items);
            }
            if !self.eat_symbol(",") {
                return Err(self.error_here(&format!("',' or '{close}'")));
            }
        }
    }

    /// `'key': value, ...}` after `{`.
    fn map_items(&mut self) -> Result<Expr, ParseError> {
        let mut entries = Vec::new();
        if self.eat_symbol("}") {
            return Ok(Expr::Map(entries));
        }
        loop {
            let key = match self.peek() {
                Some(Token::Str(_)) => self.take_text(),
                _ => return Err(self.error_here("a quoted attribute name ('name')")),
            };
            self.expect_symbol(":")?;
            entries.push((key, self.expr()?));
            if self.eat_symbol("}") {
                return Ok(Expr::Map(entries));
            }
            if !self.eat_symbol(",") {
                return Err(self.error_here("',' or '}'"));
            }
        }
    }
}
