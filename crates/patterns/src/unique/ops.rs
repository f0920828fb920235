//! Create, change and delete an owner together with its markers, each as one
//! TransactWriteItems. The owner is always action 1, then its markers in
//! declaration order, so a cancellation reads "action 2 (email marker ...):
//! ConditionalCheckFailed — email "ada@lovelace.io" is already taken".

use super::{Constraint, UniqueError, OWNER_ATTR};
use crate::api::DynamoApi;
use crate::cancel::ActionLabel;
use crate::expr::{Builder, Kind};
use crate::stage::get_item;
use crate::transact::{self, TransactError};
use crate::typed;
use serde_json::{json, Map, Value};

/// A transaction being assembled: actions and what each stands for.
#[derive(Default)]
pub(crate) struct Transaction {
    pub actions: Vec<Value>,
    pub labels: Vec<ActionLabel>,
    /// For each action, the unique attribute it protects (markers only).
    pub attributes: Vec<Option<String>>,
}

impl Transaction {
    /// Adds an action; `fields` are its body without the expression fields.
    pub fn push(
        &mut self,
        kind: &str,
        mut fields: Map<String, Value>,
        builder: &Builder,
        label: ActionLabel,
        attribute: Option<&str>,
    ) -> Result<(), UniqueError> {
        let built = builder
            .build()
            .map_err(|e| UniqueError::Invalid(e.to_string()))?;
        built.apply_to(&mut fields);
        self.actions.push(json!({ kind: fields }));
        self.labels.push(ActionLabel {
            what: format!("action {} ({})", self.actions.len(), label.what),
            ..label
        });
        self.attributes.push(attribute.map(str::to_string));
        Ok(())
    }

    /// Sends the transaction (fresh token, resent as-is if the answer is
    /// lost). A cancellation lists each failed action and which unique
    /// values were taken.
    pub fn send(self, api: &dyn DynamoApi) -> Result<(), UniqueError> {
        let request = json!({
            "TransactItems": self.actions,
            "ClientRequestToken": transact::fresh_token("uniq"),
        });
        match transact::send(api, &request, &self.labels) {
            Ok(_) => Ok(()),
            Err(TransactError::Api(e)) => Err(e.into()),
            Err(TransactError::Cancelled(failures)) => {
                let taken = failures
                    .iter()
                    .filter(|f| f.code == "ConditionalCheckFailed")
                    .filter_map(|f| self.attributes.get(f.position).cloned().flatten())
                    .collect();
                Err(UniqueError::Rejected { failures, taken })
            }
        }
    }
}

/// A `{"TableName": ..., field: value}` body.
fn body(table: &str, field: &str, value: Value) -> Map<String, Value> {
    let mut fields = Map::new();
    fields.insert("TableName".into(), json!(table));
    fields.insert(field.into(), value);
    fields
}

/// Puts the marker of `value`, refusing if anyone holds it.
fn put_marker(
    tx: &mut Transaction,
    c: &Constraint,
    attribute: &str,
    value: &Value,
    owner: &Map<String, Value>,
) -> Result<(), UniqueError> {
    let item = c.marker_item(attribute, value, owner)?;
    let mut b = Builder::new();
    let pk = b.placeholders().name(&c.schema.partition);
    b.add_raw(Kind::Condition, format!("attribute_not_exists({pk})"));
    let label = ActionLabel {
        what: format!("{attribute} marker {}", c.marker_name(attribute, value)?),
        on_condition_failed: format!("{attribute} {} is already taken", typed::render(value)),
    };
    tx.push(
        "Put",
        body(&c.spec.table, "Item", json!(item)),
        &b,
        label,
        Some(attribute),
    )
}

/// Deletes the marker of `value` if it is this owner's (or already gone):
/// never someone else's.
fn delete_marker(
    tx: &mut Transaction,
    c: &Constraint,
    attribute: &str,
    value: &Value,
    owner: &Map<String, Value>,
) -> Result<(), UniqueError> {
    let key = c.marker_key(attribute, value)?;
    let mut b = Builder::new();
    let p = b.placeholders();
    let pk = p.name(&c.schema.partition);
    let owner_attr = p.name(OWNER_ATTR);
    let me = p.value("owner", json!({ "M": owner }));
    b.add_raw(
        Kind::Condition,
        format!("attribute_not_exists({pk}) OR {owner_attr} = {me}"),
    );
    let label = ActionLabel {
        what: format!(
            "old {attribute} marker {}",
            c.marker_name(attribute, value)?
        ),
        on_condition_failed: format!(
            "the marker of {attribute} {} belongs to another owner",
            typed::render(value)
        ),
    };
    tx.push(
        "Delete",
        body(&c.spec.table, "Key", json!(key)),
        &b,
        label,
        None,
    )
}

/// `attr = :old` for each listed unique attribute, or `attribute_not_exists`
/// where the owner had none: the markers touched belong to these values.
fn owner_lock(
    b: &mut Builder,
    c: &Constraint,
    owner: &Map<String, Value>,
    attributes: &[&String],
) -> String {
    let p = b.placeholders();
    let pk = p.name(&c.schema.partition);
    let mut terms = vec![format!("attribute_exists({pk})")];
    for attribute in attributes {
        let alias = p.name(attribute);
        match owner.get(attribute.as_str()) {
            Some(value) => {
                let old = p.value(&format!("old_{attribute}"), value.clone());
                terms.push(format!("{alias} = {old}"));
            }
            None => terms.push(format!("attribute_not_exists({alias})")),
        }
    }
    terms.join(" AND ")
}

/// Creates `item` and a marker for each unique attribute it has, all or
/// nothing. An item without a unique attribute gets no marker for it (as a
/// SQL UNIQUE column allows many NULLs).
pub fn create(
    api: &dyn DynamoApi,
    c: &Constraint,
    item: Map<String, Value>,
) -> Result<(), UniqueError> {
    let owner = c.schema.key_of(&item).map_err(UniqueError::Invalid)?;
    check_not_marker(c, &owner)?;
    let mut tx = Transaction::default();
    let mut b = Builder::new();
    let pk = b.placeholders().name(&c.schema.partition);
    b.add_raw(Kind::Condition, format!("attribute_not_exists({pk})"));
    let label = ActionLabel {
        what: format!("put {} {}", c.spec.entity, c.display(&owner)),
        on_condition_failed: "an item with this key already exists".into(),
    };
    tx.push(
        "Put",
        body(&c.spec.table, "Item", json!(item)),
        &b,
        label,
        None,
    )?;
    for attribute in &c.spec.attributes {
        if let Some(value) = item.get(attribute) {
            put_marker(&mut tx, c, attribute, value, &owner)?;
        }
    }
    tx.send(api)
}

/// Sets and removes attributes of the owner at `key`, moving the markers of
/// every unique attribute whose value changes: the new marker is put
/// (refused if taken), the old one deleted, and the owner updated on
/// condition that it still has the old values.
pub fn change(
    api: &dyn DynamoApi,
    c: &Constraint,
    key: Map<String, Value>,
    set: Map<String, Value>,
    remove: &[String],
) -> Result<(), UniqueError> {
    check_not_marker(c, &key)?;
    for name in set.keys().chain(remove) {
        if c.schema.is_key(name) {
            return Err(UniqueError::Invalid(format!("`{name}` is a key attribute")));
        }
    }
    let owner = get_item(api, &c.spec.table, &key)?
        .ok_or_else(|| UniqueError::NotFound(c.display(&key)))?;
    let moved: Vec<&String> = c
        .spec
        .attributes
        .iter()
        .filter(|a| {
            let old = owner.get(a.as_str());
            match set.get(a.as_str()) {
                Some(new) => !old.is_some_and(|o| typed::same(o, new)),
                None => remove.contains(a) && old.is_some(),
            }
        })
        .collect();

    let mut tx = Transaction::default();
    let mut b = Builder::new();
    let lock = owner_lock(&mut b, c, &owner, &moved);
    let p = b.placeholders();
    let mut sets = Vec::new();
    for (name, value) in &set {
        let alias = p.name(name);
        let placeholder = p.value(&format!("new_{name}"), value.clone());
        sets.push(format!("{alias} = {placeholder}"));
    }
    let removes: Vec<String> = remove.iter().map(|n| p.name(n)).collect();
    let mut update = Vec::new();
    if !sets.is_empty() {
        update.push(format!("SET {}", sets.join(", ")));
    }
    if !removes.is_empty() {
        update.push(format!("REMOVE {}", removes.join(", ")));
    }
    if update.is_empty() {
        return Err(UniqueError::Invalid("nothing to change".into()));
    }
    b.add_raw(Kind::Update, update.join(" "));
    b.add_raw(Kind::Condition, lock);
    let label = ActionLabel {
        what: format!("update {} {}", c.spec.entity, c.display(&key)),
        on_condition_failed: "the item changed since it was read; try again".into(),
    };
    tx.push(
        "Update",
        body(&c.spec.table, "Key", json!(key)),
        &b,
        label,
        None,
    )?;
    for attribute in moved {
        if let Some(new) = set.get(attribute.as_str()) {
            put_marker(&mut tx, c, attribute, new, &key)?;
        }
        if let Some(old) = owner.get(attribute.as_str()) {
            delete_marker(&mut tx, c, attribute, old, &key)?;
        }
    }
    tx.send(api)
}

/// Deletes the owner at `key` and its markers together, so no marker is
/// left blocking a value forever.
pub fn delete(
    api: &dyn DynamoApi,
    c: &Constraint,
    key: Map<String, Value>,
) -> Result<(), UniqueError> {
    check_not_marker(c, &key)?;
    let owner = get_item(api, &c.spec.table, &key)?
        .ok_or_else(|| UniqueError::NotFound(c.display(&key)))?;
    let attributes: Vec<&String> = c.spec.attributes.iter().collect();
    let mut tx = Transaction::default();
    let mut b = Builder::new();
    let lock = owner_lock(&mut b, c, &owner, &attributes);
    b.add_raw(Kind::Condition, lock);
    let label = ActionLabel {
        what: format!("delete {} {}", c.spec.entity, c.display(&key)),
        on_condition_failed: "the item changed since it was read; try again".into(),
    };
    tx.push(
        "Delete",
        body(&c.spec.table, "Key", json!(key)),
        &b,
        label,
        None,
    )?;
    for attribute in &c.spec.attributes {
        if let Some(value) = owner.get(attribute) {
            delete_marker(&mut tx, c, attribute, value, &key)?;
        }
    }
    tx.send(api)
}

/// Markers are managed here, never as owners.
fn check_not_marker(c: &Constraint, key: &Map<String, Value>) -> Result<(), UniqueError> {
    let pk = key.get(&c.schema.partition).and_then(typed::key_text);
    if pk.is_some_and(|t| t.starts_with(super::PREFIX)) {
        return Err(UniqueError::Invalid(format!(
            "{} is a uniqueness marker, not an owner",
            c.display(key)
        )));
    }
    Ok(())
}
