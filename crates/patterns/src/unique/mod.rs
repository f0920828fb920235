//! Uniqueness constraints on non-key attributes (e-mail and username on
//! accounts, say), enforced the way DynamoDB can enforce them: each protected
//! value gets a marker item whose key *is* the value, written in the same
//! TransactWriteItems as its owner and guarded by `attribute_not_exists`, so
//! a taken value makes the whole write fail. Changing a protected value and
//! deleting the owner are single transactions too, so the markers stay
//! honest; [`locks`] inspects them and repairs what a direct write broke.
//!
//! # Marker layouts
//!
//! The markers live in the owner's table (single-table design). Two layouts:
//!
//! **Per value** ([`MarkerLayout::PerValue`], the default, the seeds'
//! layout): each marker is its own partition,
//!
//! | attribute | value |
//! |---|---|
//! | partition key | `UNIQ#<ATTR>#<value>` (e.g. `UNIQ#EMAIL#ada@lovelace.io`) |
//! | sort key (if the table has one) | `LOCK` |
//! | `uniq_attr` | `<ATTR>`: the attribute's name in capitals (`EMAIL`) |
//! | `uniq_owner` | the owner's key (a map) |
//! | `uniq_value` | the protected value, typed as in the owner |
//!
//! Markers spread over partitions, so sign-ups are not capped by one
//! partition's write rate (1,000 WCU/s). The entity is not part of the key:
//! a value is unique across every entity sharing the attribute name. Listing
//! the markers cannot be one Query (Query needs one partition key value):
//! `locks` Queries a sparse GSI whose partition key is `uniq_attr` when the
//! table has one (only markers carry that attribute, so the index holds
//! nothing else), and otherwise Scans the whole table, and says which.
//!
//! **Grouped** ([`MarkerLayout::Grouped`], the layout of earlier versions):
//! one partition per constrained attribute,
//!
//! | attribute | value |
//! |---|---|
//! | partition key | `UNIQ#<entity>#<attr>` (e.g. `UNIQ#account#email`) |
//! | sort key | `UNIQ#<entity>#<attr>#<value>` |
//! | `uniq_owner`, `uniq_value` | as above |
//!
//! `locks` is then one Query per attribute (`PK = UNIQ#account#email AND
//! begins_with(SK, ...)`), but all markers of an attribute share a partition
//! and its write rate; the table needs a sort key.
//!
//! Either way both key attributes must be strings.

pub mod discover;
pub mod follow;
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
/// Marker attribute naming the constrained attribute (per-value layout),
/// the partition key of the optional sparse index that lists markers.
pub const ATTR_ATTR: &str = "uniq_attr";
/// Prefix of every marker key.
pub const PREFIX: &str = "UNIQ#";
/// Sort key of every per-value marker in a table with a sort key.
pub const LOCK: &str = "LOCK";

/// How marker items are keyed (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum MarkerLayout {
    /// `PK = UNIQ#<ATTR>#<value>`, `SK = LOCK`: one partition per value.
    #[default]
    PerValue,
    /// `PK = UNIQ#<entity>#<attr>`, `SK = UNIQ#<entity>#<attr>#<value>`.
    Grouped,
}

/// A declaration: these attributes of this entity are unique.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UniqueSpec {
    pub table: String,
    /// The entity's name in marker keys (`account`).
    pub entity: String,
    /// The unique attributes (`email`, `username`).
    pub attributes: Vec<String>,
    /// How the markers are keyed (per value unless said otherwise).
    #[serde(default)]
    pub layout: MarkerLayout,
}

/// A declaration checked against its table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Constraint {
    pub spec: UniqueSpec,
    pub schema: KeySchema,
    /// A sparse GSI keyed by `uniq_attr` that lists per-value markers
    /// (found by [`Constraint::load`]); without one `locks` Scans.
    pub marker_index: Option<String>,
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
        if schema.sort.is_none() && spec.layout == MarkerLayout::Grouped {
            return Err(UniqueError::Invalid(format!(
                "table {} has no sort key; grouped markers need one (the per-value layout \
                 does not; see the marker layouts in `ferrodyn unique --help`)",
                spec.table
            )));
        }
        for name in std::iter::once(&schema.partition).chain(&schema.sort) {
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
        let mut constraint = Constraint::new(spec, schema)?;
        constraint.marker_index = marker_index(&response["Table"]);
        Ok(constraint)
    }

    /// Checks `spec` against a known key schema.
    pub fn new(spec: UniqueSpec, schema: KeySchema) -> Result<Constraint, UniqueError> {
        if schema.sort.is_none() && spec.layout == MarkerLayout::Grouped {
            return Err(UniqueError::Invalid(format!(
                "table {} has no sort key, which grouped markers need",
                spec.table
            )));
        }
        let mut capitals: Vec<String> = spec.attributes.iter().map(|a| a.to_uppercase()).collect();
        capitals.sort();
        if capitals.windows(2).any(|w| w[0] == w[1]) {
            return Err(UniqueError::Invalid(
                "two unique attributes differ only in case; per-value markers name them in capitals"
                    .into(),
            ));
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
        Ok(Constraint {
            spec,
            schema,
            marker_index: None,
        })
    }

    /// The partition holding the markers of `attribute` (grouped layout).
    pub fn marker_partition(&self, attribute: &str) -> String {
        format!("{PREFIX}{}#{attribute}", self.spec.entity)
    }

    /// What marker names of `attribute` start with: the partition key of a
    /// per-value marker (`UNIQ#EMAIL#`), the sort key of a grouped one.
    pub fn marker_prefix(&self, attribute: &str) -> String {
        match self.spec.layout {
            MarkerLayout::PerValue => format!("{PREFIX}{}#", attribute.to_uppercase()),
            MarkerLayout::Grouped => format!("{}#", self.marker_partition(attribute)),
        }
    }

    /// The marker's name for `value` of `attribute`: the key attribute that
    /// carries the value (`UNIQ#EMAIL#ada@lovelace.io`).
    pub fn marker_name(&self, attribute: &str, value: &Value) -> Result<String, UniqueError> {
        Ok(format!(
            "{}{}",
            self.marker_prefix(attribute),
            value_text(attribute, value)?
        ))
    }

    /// The marker's key for `value` of `attribute`.
    pub fn marker_key(
        &self,
        attribute: &str,
        value: &Value,
    ) -> Result<Map<String, Value>, UniqueError> {
        Ok(self.marker_key_named(attribute, &self.marker_name(attribute, value)?))
    }

    /// The key of the marker called `name` (see [`Constraint::marker_name`]).
    pub fn marker_key_named(&self, attribute: &str, name: &str) -> Map<String, Value> {
        let mut key = Map::new();
        let sort = self.schema.sort.clone();
        match self.spec.layout {
            MarkerLayout::PerValue => {
                key.insert(self.schema.partition.clone(), json!({ "S": name }));
                if let Some(sort) = sort {
                    key.insert(sort, json!({ "S": LOCK }));
                }
            }
            MarkerLayout::Grouped => {
                key.insert(
                    self.schema.partition.clone(),
                    json!({ "S": self.marker_partition(attribute) }),
                );
                key.insert(sort.expect("checked in new"), json!({ "S": name }));
            }
        }
        key
    }

    /// The name of a marker item read back.
    pub fn name_of_marker(&self, item: &Map<String, Value>) -> Option<String> {
        let attribute = match self.spec.layout {
            MarkerLayout::PerValue => &self.schema.partition,
            MarkerLayout::Grouped => self.schema.sort.as_ref()?,
        };
        item.get(attribute).and_then(typed::key_text)
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
        if self.spec.layout == MarkerLayout::PerValue {
            item.insert(ATTR_ATTR.into(), json!({ "S": attribute.to_uppercase() }));
        }
        Ok(item)
    }

    /// `accounts/ACCT#1/PROFILE`.
    pub fn display(&self, key: &Map<String, Value>) -> String {
        self.schema.display(key)
    }
}

/// A GSI of the described table that lists per-value markers: partition key
/// `uniq_attr` (sparse: only markers carry it), projecting the owner and value.
fn marker_index(table: &Value) -> Option<String> {
    table["GlobalSecondaryIndexes"]
        .as_array()?
        .iter()
        .find(|index| {
            let keyed = index["KeySchema"][0]["AttributeName"] == json!(ATTR_ATTR)
                && index["KeySchema"][0]["KeyType"] == json!("HASH");
            let active = index["IndexStatus"].as_str().is_none_or(|s| s == "ACTIVE");
            let projection = &index["Projection"];
            let projects = match projection["ProjectionType"].as_str() {
                Some("ALL") => true,
                Some("INCLUDE") => [OWNER_ATTR, VALUE_ATTR].iter().all(|a| {
                    projection["NonKeyAttributes"]
                        .as_array()
                        .is_some_and(|list| list.contains(&json!(a)))
                }),
                _ => false,
            };
            keyed && active && projects
        })
        .and_then(|index| index["IndexName"].as_str().map(str::to_string))
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

    pub(crate) fn accounts_with(layout: MarkerLayout) -> Constraint {
        Constraint::new(
            UniqueSpec {
                table: "accounts".into(),
                entity: "account".into(),
                attributes: vec!["email".into(), "username".into()],
                layout,
            },
            KeySchema {
                table: "accounts".into(),
                partition: "PK".into(),
                sort: Some("SK".into()),
            },
        )
        .unwrap()
    }

    pub(crate) fn accounts() -> Constraint {
        accounts_with(MarkerLayout::PerValue)
    }

    #[test]
    fn per_value_markers_are_keyed_as_the_seed_keys_them() {
        let c = accounts();
        let email = json!({"S":"ada@lovelace.io"});
        let key = c.marker_key("email", &email).unwrap();
        assert_eq!(key["PK"], json!({"S":"UNIQ#EMAIL#ada@lovelace.io"}));
        assert_eq!(key["SK"], json!({"S":"LOCK"}));
        let item = c.marker_item("email", &email, &Map::new()).unwrap();
        assert_eq!(item[ATTR_ATTR], json!({"S":"EMAIL"}));
        assert_eq!(
            c.marker_name("n", &json!({"N":"1.50"})).unwrap(),
            "UNIQ#N#1.5"
        );
        assert_eq!(
            c.name_of_marker(&key).as_deref(),
            Some("UNIQ#EMAIL#ada@lovelace.io")
        );
    }

    #[test]
    fn grouped_markers_share_one_partition_per_attribute_and_are_named_by_value() {
        let c = accounts_with(MarkerLayout::Grouped);
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
        let spec = |attrs: &[&str], layout| UniqueSpec {
            table: "accounts".into(),
            entity: "account".into(),
            attributes: attrs.iter().map(|s| s.to_string()).collect(),
            layout,
        };
        let per_value = MarkerLayout::PerValue;
        assert!(Constraint::new(spec(&[], per_value), schema.clone()).is_err());
        assert!(Constraint::new(spec(&["PK"], per_value), schema.clone()).is_err());
        assert!(Constraint::new(spec(&["a#b"], per_value), schema.clone()).is_err());
        assert!(Constraint::new(spec(&["mail", "Mail"], per_value), schema.clone()).is_err());
        let no_sort = KeySchema {
            sort: None,
            ..schema
        };
        assert!(Constraint::new(spec(&["email"], MarkerLayout::Grouped), no_sort.clone()).is_err());
        // The seeds' layout needs no sort key.
        let c = Constraint::new(spec(&["email"], per_value), no_sort).unwrap();
        let key = c.marker_key("email", &json!({"S":"a@b.c"})).unwrap();
        assert_eq!(key.len(), 1);
    }
}
