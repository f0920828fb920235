//! Uniqueness constraints on non-key attributes (e-mail and username on
//! accounts, say), enforced the way DynamoDB can enforce them: each protected
//! value gets a marker item whose key *is* the value, written in the same
//! TransactWriteItems as its owner and guarded by `attribute_not_exists`, so
//! a taken value makes the whole write fail. Changing a protected value and
//! deleting the owner are single transactions too, so the markers stay
//! honest; [`locks`] inspects them and repairs what a direct write broke.
//!
//! # Marker layout
//!
//! The markers live in the owner's table (single-table design), keyed
//!
//! | attribute | value |
//! |---|---|
//! | partition key | `UNIQ#<entity>#<attr>` (e.g. `UNIQ#account#email`) |
//! | sort key | `UNIQ#<entity>#<attr>#<value>` (e.g. `UNIQ#account#email#ada@lovelace.io`) |
//! | `uniq_owner` | the owner's key (a map) |
//! | `uniq_value` | the protected value, typed as in the owner |
//!
//! The sort key is the seeds' marker name (`UNIQ#EMAIL#ada@lovelace.io`,
//! namespaced by entity), and its uniqueness is what the engine enforces.
//! The partition key differs from the seeds' layout on purpose: there each
//! marker is its own partition (`PK = UNIQ#EMAIL#...`, `SK = LOCK`), which a
//! Query cannot list — Query needs one partition key value — so inspecting
//! the locks would take a Scan of the whole table. Grouping one constrained
//! attribute's markers in one partition makes `locks` a Query
//! (`PK = UNIQ#account#email AND begins_with(SK, "UNIQ#")`), and a value
//! prefix (`UNIQ#account#email#ada`) narrows it further. The cost is that
//! all markers of one attribute share a partition, whose write rate DynamoDB
//! caps at 1,000 WCU/s: far above any sign-up rate, but a write-heavy unique
//! attribute would want the partition sharded (not done here). Hence the
//! table needs a sort key, and both key attributes must be strings.

pub mod locks;
pub mod ops;

pub use locks::{locks, repair, LocksReport, MarkerStatus, RepairReport};
pub use ops::{change, create, delete};

use crate::api::{ApiError, DynamoApi};
use crate::cancel::CancelledAction;
use crate::table::KeySchema;
use crate::typed;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

/// Marker attribute holding the owner's key.
pub const OWNER_ATTR: &str = "uniq_owner";
/// Marker attribute holding the protected value.
pub const VALUE_ATTR: &str = "uniq_value";
/// Prefix of every marker key.
pub const PREFIX: &str = "UNIQ#";

/// A declaration: these attributes of this entity are unique.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UniqueSpec {
    pub table: String,
    /// The entity's name in marker keys (`account`).
    pub entity: String,
    /// The unique attributes (`email`, `username`).
    pub attributes: Vec<String>,
}

/// A declaration checked against its table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Constraint {
    pub spec: UniqueSpec,
    pub schema: KeySchema,
}

/// Why a uniqueness operation failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum UniqueError {
    #[error("{0}")]
    Api(#[from] ApiError),
    #[error("{0}")]
    Invalid(String),
    #[error("{0} does not exist")]
    NotFound(String),
    /// The transaction was cancelled: nothing was written. `taken` lists the
    /// unique attributes whose value belongs to someone else.
    #[error("{}", rejected_message(.failures))]
    Rejected {
        failures: Vec<CancelledAction>,
        taken: Vec<String>,
    },
}

fn rejected_message(failures: &[CancelledAction]) -> String {
    let mut text = String::from("the transaction was cancelled; nothing was written");
    for failure in failures {
        text.push_str(&format!("\n  {failure}"));
    }
    text
}

impl Constraint {
    /// Checks `spec` against the table's key schema (DescribeTable).
    pub fn load(api: &dyn DynamoApi, spec: UniqueSpec) -> Result<Constraint, UniqueError> {
        let response = api.call("DescribeTable", &json!({ "TableName": spec.table }))?;
        let schema = KeySchema::describe(api, &spec.table)?;
        let Some(sort) = &schema.sort else {
            return Err(UniqueError::Invalid(format!(
                "table {} has no sort key; uniqueness markers need one so that `locks` can \
                 list them with Query (see the marker layout in `ferrodyn unique --help`)",
                spec.table
            )));
        };
        for name in [&schema.partition, sort] {
            let ty = response["Table"]["AttributeDefinitions"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|d| d["AttributeName"] == json!(name))
                .and_then(|d| d["AttributeType"].as_str());
            if ty.is_some_and(|t| t != "S") {
                return Err(UniqueError::Invalid(format!(
                    "key attribute {name} of {} is not a string; marker keys are strings",
                    spec.table
                )));
            }
        }
        Constraint::new(spec, schema)
    }

    /// Checks `spec` against a known key schema.
    pub fn new(spec: UniqueSpec, schema: KeySchema) -> Result<Constraint, UniqueError> {
        if schema.sort.is_none() {
            return Err(UniqueError::Invalid(format!(
                "table {} has no sort key",
                spec.table
            )));
        }
        if spec.attributes.is_empty() {
            return Err(UniqueError::Invalid(
                "declare at least one unique attribute".into(),
            ));
        }
        for name in std::iter::once(&spec.entity).chain(&spec.attributes) {
            if name.is_empty() || name.contains('#') {
                return Err(UniqueError::Invalid(format!(
                    "`{name}`: entity and attribute names must be non-empty and without `#`"
                )));
            }
            if schema.is_key(name) {
                return Err(UniqueError::Invalid(format!(
                    "`{name}` is a key attribute, which DynamoDB already keeps unique"
                )));
            }
        }
        Ok(Constraint { spec, schema })
    }

    /// The partition holding the markers of `attribute`.
    pub fn marker_partition(&self, attribute: &str) -> String {
        format!("{PREFIX}{}#{attribute}", self.spec.entity)
    }

    /// The marker's sort key for `value` of `attribute`.
    pub fn marker_name(&self, attribute: &str, value: &Value) -> Result<String, UniqueError> {
        Ok(format!(
            "{}#{}",
            self.marker_partition(attribute),
            value_text(attribute, value)?
        ))
    }

    /// The marker's key for `value` of `attribute`.
    pub fn marker_key(
        &self,
        attribute: &str,
        value: &Value,
    ) -> Result<Map<String, Value>, UniqueError> {
        let mut key = Map::new();
        key.insert(
            self.schema.partition.clone(),
            json!({ "S": self.marker_partition(attribute) }),
        );
        key.insert(
            self.schema.sort.clone().expect("checked in new"),
            json!({ "S": self.marker_name(attribute, value)? }),
        );
        Ok(key)
    }

    /// The whole marker item.
    pub fn marker_item(
        &self,
        attribute: &str,
        value: &Value,
        owner: &Map<String, Value>,
    ) -> Result<Map<String, Value>, UniqueError> {
        let mut item = self.marker_key(attribute, value)?;
        item.insert(OWNER_ATTR.into(), json!({ "M": owner }));
        item.insert(VALUE_ATTR.into(), value.clone());
        Ok(item)
    }

    /// `accounts/ACCT#1/PROFILE`.
    pub fn display(&self, key: &Map<String, Value>) -> String {
        self.schema.display(key)
    }
}

/// The text a value contributes to its marker's name: the string, the
/// number in its normal form (so `1.0` and `1` are one value), or base64.
pub fn value_text(attribute: &str, value: &Value) -> Result<String, UniqueError> {
    match serde_json::from_value::<ferrodyn_types::AttributeValue>(value.clone()) {
        Ok(ferrodyn_types::AttributeValue::S(s)) => Ok(s),
        Ok(ferrodyn_types::AttributeValue::N(n)) => Ok(n.to_string()),
        Ok(ferrodyn_types::AttributeValue::B(b)) => Ok(typed::base64(&b)),
        _ => Err(UniqueError::Invalid(format!(
            "unique attribute `{attribute}` must be a string, number or binary, not {}",
            typed::render(value)
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn accounts() -> Constraint {
        Constraint::new(
            UniqueSpec {
                table: "accounts".into(),
                entity: "account".into(),
                attributes: vec!["email".into(), "username".into()],
            },
            KeySchema {
                table: "accounts".into(),
                partition: "PK".into(),
                sort: Some("SK".into()),
            },
        )
        .unwrap()
    }

    #[test]
    fn markers_share_one_partition_per_attribute_and_are_named_by_value() {
        let c = accounts();
        let key = c
            .marker_key("email", &json!({"S":"ada@lovelace.io"}))
            .unwrap();
        assert_eq!(key["PK"], json!({"S":"UNIQ#account#email"}));
        assert_eq!(key["SK"], json!({"S":"UNIQ#account#email#ada@lovelace.io"}));
        assert_eq!(
            c.marker_name("n", &json!({"N":"1.50"})).unwrap(),
            "UNIQ#account#n#1.5"
        );
        assert!(c.marker_name("email", &json!({"BOOL":true})).is_err());
    }

    #[test]
    fn declarations_are_checked() {
        let schema = accounts().schema;
        let spec = |attrs: &[&str]| UniqueSpec {
            table: "accounts".into(),
            entity: "account".into(),
            attributes: attrs.iter().map(|s| s.to_string()).collect(),
        };
        assert!(Constraint::new(spec(&[]), schema.clone()).is_err());
        assert!(Constraint::new(spec(&["PK"]), schema.clone()).is_err());
        assert!(Constraint::new(spec(&["a#b"]), schema.clone()).is_err());
        let no_sort = KeySchema {
            sort: None,
            ..schema
        };
        assert!(Constraint::new(spec(&["email"]), no_sort).is_err());
    }
}
