//! The expression builder: ConditionExpression, UpdateExpression and
//! KeyConditionExpression with their ExpressionAttributeNames and typed
//! ExpressionAttributeValues, from a readable syntax ([`syntax`]) or from
//! flag-like clauses ([`flags`]), ready for an SDK call or the AWS CLI.
//!
//! ```
//! use ferrodyn_patterns::expr::Builder;
//! let mut b = Builder::new();
//! b.condition(r#"attribute_exists(pk) and status = "active""#).unwrap();
//! b.update("SET visits = visits + 1").unwrap();
//! let request = b.build().unwrap().request_fields();
//! assert_eq!(request["ConditionExpression"], "attribute_exists(pk) AND #status = :status");
//! assert_eq!(request["UpdateExpression"], "SET visits = visits + :visits");
//! ```

pub mod flags;
mod placeholders;
pub mod syntax;

pub use placeholders::{is_plain_identifier, Placeholders};

use ferrodyn_expr::ExpressionContext;
use ferrodyn_types::AttributeValue;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};

/// Which request parameter an expression fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Condition,
    Update,
    KeyCondition,
}

impl Kind {
    /// The request parameter (`ConditionExpression`...).
    pub fn parameter(self) -> &'static str {
        match self {
            Kind::Condition => "ConditionExpression",
            Kind::Update => "UpdateExpression",
            Kind::KeyCondition => "KeyConditionExpression",
        }
    }

    /// The AWS CLI option (`--condition-expression`...).
    pub fn cli_option(self) -> &'static str {
        match self {
            Kind::Condition => "--condition-expression",
            Kind::Update => "--update-expression",
            Kind::KeyCondition => "--key-condition-expression",
        }
    }
}

/// Why an expression could not be built.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ExprError {
    /// The readable syntax could not be tokenised.
    #[error("cannot read {kind}: {message}")]
    Syntax { kind: &'static str, message: String },
    /// The rewritten expression is not valid DynamoDB syntax (the message is
    /// the one DynamoDB would send).
    #[error("{message}\n  expression: {expression}")]
    Invalid { expression: String, message: String },
}

/// Collects expressions of one request so they share one set of
/// placeholders.
#[derive(Debug, Clone, Default)]
pub struct Builder {
    placeholders: Placeholders,
    expressions: Vec<(Kind, String)>,
}

/// Finished expressions and their placeholder maps.
#[derive(Debug, Clone, PartialEq)]
pub struct Expressions {
    /// Each expression by kind, in the order they were added.
    pub expressions: Vec<(Kind, String)>,
    /// `#alias` → name (empty when nothing needed aliasing).
    pub names: BTreeMap<String, String>,
    /// `:placeholder` → typed value.
    pub values: BTreeMap<String, Value>,
}

impl Builder {
    /// A builder that aliases only names that need it (reserved words,
    /// names that are not plain identifiers).
    pub fn new() -> Builder {
        Builder::default()
    }

    /// A builder that aliases every attribute name.
    pub fn aliasing_all() -> Builder {
        Builder {
            placeholders: Placeholders::aliasing_all(),
            expressions: Vec::new(),
        }
    }

    /// Adds a condition in the readable syntax.
    pub fn condition(&mut self, src: &str) -> Result<&mut Self, ExprError> {
        self.add(Kind::Condition, src)
    }

    /// Adds an update in the readable syntax.
    pub fn update(&mut self, src: &str) -> Result<&mut Self, ExprError> {
        self.add(Kind::Update, src)
    }

    /// Adds a key condition in the readable syntax.
    pub fn key_condition(&mut self, src: &str) -> Result<&mut Self, ExprError> {
        self.add(Kind::KeyCondition, src)
    }

    /// Adds an expression of `kind` in the readable syntax.
    pub fn add(&mut self, kind: Kind, src: &str) -> Result<&mut Self, ExprError> {
        let text =
            syntax::rewrite(src, &mut self.placeholders).map_err(|message| ExprError::Syntax {
                kind: kind.parameter(),
                message,
            })?;
        self.expressions.push((kind, text));
        Ok(self)
    }

    /// Direct access for code that writes DynamoDB syntax itself and only
    /// needs names aliased and values placed (the stage and unique modules).
    pub fn placeholders(&mut self) -> &mut Placeholders {
        &mut self.placeholders
    }

    /// Adds an expression already in DynamoDB syntax (with placeholders from
    /// [`Builder::placeholders`]).
    pub fn add_raw(&mut self, kind: Kind, text: String) -> &mut Self {
        self.expressions.push((kind, text));
        self
    }

    /// Checks every expression with the server's own parser and returns
    /// them.
    pub fn build(&self) -> Result<Expressions, ExprError> {
        let built = Expressions {
            expressions: self.expressions.clone(),
            names: self.placeholders.names.clone(),
            values: self.placeholders.values.clone(),
        };
        built.validate()?;
        Ok(built)
    }
}

impl Expressions {
    /// The expression of `kind`, if one was added.
    pub fn get(&self, kind: Kind) -> Option<&str> {
        self.expressions
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, t)| t.as_str())
    }

    /// Parses each expression as DynamoDB would, so a mistake shows up here
    /// with DynamoDB's message rather than as a ValidationException later.
    pub fn validate(&self) -> Result<(), ExprError> {
        let names: HashMap<String, String> = self.names.clone().into_iter().collect();
        let mut values: HashMap<String, AttributeValue> = HashMap::new();
        for (key, value) in &self.values {
            let typed: AttributeValue =
                serde_json::from_value(value.clone()).map_err(|e| ExprError::Invalid {
                    expression: format!("{key} = {value}"),
                    message: format!("invalid value: {e}"),
                })?;
            values.insert(key.clone(), typed);
        }
        let mut ctx = ExpressionContext::new(
            (!names.is_empty()).then_some(&names),
            (!values.is_empty()).then_some(&values),
        )
        .map_err(|e| ExprError::Invalid {
            expression: String::new(),
            message: e.message,
        })?;
        for (kind, text) in &self.expressions {
            let result = match kind {
                Kind::Condition => ferrodyn_expr::parse_condition(text, &mut ctx).map(drop),
                Kind::Update => ferrodyn_expr::parse_update(text, &mut ctx).map(drop),
                Kind::KeyCondition => ferrodyn_expr::parse_key_condition(text, &mut ctx).map(drop),
            };
            result.map_err(|e| ExprError::Invalid {
                expression: text.clone(),
                message: e.message,
            })?;
        }
        Ok(())
    }

    /// The request fields, as an SDK or a low-level JSON request takes them.
    /// Empty maps are left out: DynamoDB rejects an empty
    /// ExpressionAttributeNames or ExpressionAttributeValues.
    pub fn request_fields(&self) -> Map<String, Value> {
        let mut fields = Map::new();
        for (kind, text) in &self.expressions {
            fields.insert(kind.parameter().into(), Value::String(text.clone()));
        }
        if !self.names.is_empty() {
            fields.insert(
                "ExpressionAttributeNames".into(),
                serde_json::to_value(&self.names).expect("plain data always serialises"),
            );
        }
        if !self.values.is_empty() {
            fields.insert(
                "ExpressionAttributeValues".into(),
                serde_json::to_value(&self.values).expect("plain data always serialises"),
            );
        }
        fields
    }

    /// Adds the fields to a request object (e.g. one TransactWriteItems
    /// action).
    pub fn apply_to(&self, request: &mut Map<String, Value>) {
        request.extend(self.request_fields());
    }

    /// The same fields as AWS CLI options, shell-quoted for a POSIX shell.
    pub fn cli_args(&self) -> String {
        let mut parts = Vec::new();
        for (kind, text) in &self.expressions {
            parts.push(format!("{} {}", kind.cli_option(), shell_quote(text)));
        }
        if !self.names.is_empty() {
            let names = serde_json::to_string(&self.names).expect("plain data always serialises");
            parts.push(format!(
                "--expression-attribute-names {}",
                shell_quote(&names)
            ));
        }
        if !self.values.is_empty() {
            let values = serde_json::to_string(&self.values).expect("plain data always serialises");
            parts.push(format!(
                "--expression-attribute-values {}",
                shell_quote(&values)
            ));
        }
        parts.join(" \\\n  ")
    }
}

/// `text` in single quotes, with embedded single quotes closed, escaped and
/// reopened (`'\''`).
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn request_fields_are_ready_for_an_sdk_call() {
        let mut b = Builder::new();
        b.condition("attribute_exists(pk) and status = 'active'")
            .unwrap();
        let fields = b.build().unwrap().request_fields();
        assert_eq!(
            Value::Object(fields),
            json!({
                "ConditionExpression": "attribute_exists(pk) AND #status = :status",
                "ExpressionAttributeNames": {"#status": "status"},
                "ExpressionAttributeValues": {":status": {"S": "active"}}
            })
        );
    }

    #[test]
    fn without_names_or_values_the_maps_are_left_out() {
        let mut b = Builder::new();
        b.condition("attribute_not_exists(pk)").unwrap();
        let fields = b.build().unwrap().request_fields();
        assert_eq!(fields.len(), 1);
    }

    #[test]
    fn update_and_condition_share_placeholders() {
        let mut b = Builder::new();
        b.update("SET #x = 1".replace("#x", "status").as_str())
            .unwrap();
        b.condition("status = 'old'").unwrap();
        let built = b.build().unwrap();
        assert_eq!(built.get(Kind::Update), Some("SET #status = :status"));
        assert_eq!(built.get(Kind::Condition), Some("#status = :status2"));
        assert_eq!(built.names.len(), 1);
    }

    #[test]
    fn grammar_mistakes_get_dynamodbs_message() {
        let mut b = Builder::new();
        b.condition("a = = 1").unwrap();
        let err = b.build().unwrap_err().to_string();
        assert!(
            err.contains("Invalid ConditionExpression: Syntax error"),
            "{err}"
        );
    }

    #[test]
    fn key_conditions_are_checked_as_key_conditions() {
        let mut b = Builder::new();
        b.key_condition("pk = 'u1' and begins_with(sk, 'ORDER#')")
            .unwrap();
        let built = b.build().unwrap();
        assert_eq!(
            built.get(Kind::KeyCondition),
            Some("pk = :pk AND begins_with(sk, :sk)")
        );
        let mut bad = Builder::new();
        bad.key_condition("pk = 'u1' or sk = 'x'").unwrap();
        assert!(bad.build().is_err());
    }

    #[test]
    fn cli_form_quotes_for_the_shell() {
        let mut b = Builder::new();
        b.condition("name = \"O'Brien\"").unwrap();
        let cli = b.build().unwrap().cli_args();
        assert_eq!(
            cli,
            "--condition-expression '#name = :name' \\\n  \
             --expression-attribute-names '{\"#name\":\"name\"}' \\\n  \
             --expression-attribute-values '{\":name\":{\"S\":\"O'\\''Brien\"}}'"
        );
    }
}
