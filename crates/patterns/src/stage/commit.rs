//! Turning a stage into TransactWriteItems requests and reading their
//! cancellations.
//!
//! Each change becomes one action guarded by an optimistic lock built from
//! the item as it was staged: `attribute_not_exists(<partition key>)` for an
//! item that did not exist, otherwise `attribute_exists(<partition key>)` and
//! every attribute still equal to its staged value (plus, for an update,
//! `attribute_not_exists` for each attribute it adds). A stage of more than
//! 100 actions or 4 MB cannot be one transaction; it is refused unless the
//! caller accepts splitting it into several (each atomic on its own).

use super::diff::attribute_changes;
use super::file::{hex, Change, LockScope, Op, StageFile};
use crate::cancel::ActionLabel;
use crate::expr::{Builder, Kind};
use crate::table::KeySchema;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

/// Most actions one TransactWriteItems takes.
pub const MAX_ACTIONS: usize = 100;

/// Most bytes of items one TransactWriteItems may write.
pub const MAX_BYTES: usize = 4 * 1024 * 1024;

/// One TransactWriteItems request of a commit.
#[derive(Debug, Clone, PartialEq)]
pub struct Chunk {
    /// Index (0-based) of the chunk's first change in the stage.
    pub first_change: usize,
    /// The request body, ClientRequestToken included.
    pub request: Value,
    /// What each action stands for, in request order.
    pub labels: Vec<ActionLabel>,
}

/// Splits the stage into requests: one if the stage fits a transaction.
pub fn chunks(stage: &StageFile) -> Result<Vec<Chunk>, String> {
    let digest = stage.digest();
    let mut result: Vec<Chunk> = Vec::new();
    let mut actions: Vec<Value> = Vec::new();
    let mut labels: Vec<ActionLabel> = Vec::new();
    let mut first = 0;
    let mut bytes = 0;
    for (index, change) in stage.changes.iter().enumerate() {
        let schema = stage
            .tables
            .get(&change.table)
            .ok_or_else(|| format!("the stage has no key schema for table {}", change.table))?;
        let action =
            action(change, schema, stage.lock).map_err(|e| format!("change {}: {e}", index + 1))?;
        let size = change_size(change);
        if !actions.is_empty() && (actions.len() == MAX_ACTIONS || bytes + size > MAX_BYTES) {
            result.push(finish(
                &digest,
                result.len(),
                first,
                &mut actions,
                &mut labels,
            ));
            first = index;
            bytes = 0;
        }
        actions.push(action);
        labels.push(label(index, change, schema));
        bytes += size;
    }
    if !actions.is_empty() {
        result.push(finish(
            &digest,
            result.len(),
            first,
            &mut actions,
            &mut labels,
        ));
    }
    Ok(result)
}

fn finish(
    digest: &str,
    number: usize,
    first_change: usize,
    actions: &mut Vec<Value>,
    labels: &mut Vec<ActionLabel>,
) -> Chunk {
    Chunk {
        first_change,
        request: json!({
            "TransactItems": std::mem::take(actions),
            "ClientRequestToken": token(digest, number),
        }),
        labels: std::mem::take(labels),
    }
}

/// The ClientRequestToken of chunk `number` of a stage with `digest`: the
/// same stage content always gives the same tokens, so re-running a commit
/// whose answer was lost is recognised by DynamoDB (within its 10-minute
/// window) instead of being applied twice. At most 36 characters.
pub fn token(digest: &str, number: usize) -> String {
    let hash = Sha256::digest(format!("{digest}/{number}").as_bytes());
    format!("stage-{}", &hex(&hash)[..30])
}

/// Rough bytes a change writes, for the 4 MB transaction limit.
fn change_size(change: &Change) -> usize {
    let item = change.after.as_ref().unwrap_or(&change.key);
    serde_json::from_value::<ferrodyn_types::Item>(Value::Object(item.clone()))
        .map(|i| ferrodyn_types::item_size(&i))
        .unwrap_or_else(|_| Value::Object(item.clone()).to_string().len())
}

/// How a change is named in reports: `change 2 (update users/u1)`.
pub fn label(index: usize, change: &Change, schema: &KeySchema) -> ActionLabel {
    ActionLabel {
        what: format!(
            "change {} ({} {})",
            index + 1,
            change.op.as_str(),
            schema.display(&change.key)
        ),
        on_condition_failed: if change.before.is_none() {
            "item exists now but did not when staged".into()
        } else {
            "item changed since staged".into()
        },
    }
}

/// The TransactWriteItems action for one change.
pub fn action(change: &Change, schema: &KeySchema, scope: LockScope) -> Result<Value, String> {
    let mut builder = Builder::new();
    let lock = lock_condition(change, schema, scope, &mut builder);
    let (kind, mut body) = match (change.op, &change.after) {
        (Op::Delete, _) | (_, None) => ("Delete", json!({ "Key": change.key })),
        (Op::Put, Some(after)) => ("Put", json!({ "Item": after })),
        (Op::Update, Some(after)) => match update_expression(change, after, schema, &mut builder) {
            Some(update) => {
                builder.add_raw(Kind::Update, update);
                ("Update", json!({ "Key": change.key }))
            }
            // Creating an item of key attributes only: an Update needs an
            // UpdateExpression, a Put does not.
            None if change.before.is_none() => ("Put", json!({ "Item": after })),
            // Nothing to change: the lock is still asserted.
            None => ("ConditionCheck", json!({ "Key": change.key })),
        },
    };
    builder.add_raw(Kind::Condition, lock);
    let built = builder.build().map_err(|e| e.to_string())?;
    let body = body.as_object_mut().expect("an object");
    body.insert("TableName".into(), json!(change.table));
    built.apply_to(body);
    // The item as it is now comes back with a failed condition, so the
    // report can say what changed.
    body.insert(
        "ReturnValuesOnConditionCheckFailure".into(),
        json!("ALL_OLD"),
    );
    Ok(json!({ kind: body }))
}

/// The optimistic lock: the item (or, for an update under
/// [`LockScope::Attributes`], the attributes it writes) is still as it was
/// when staged.
fn lock_condition(
    change: &Change,
    schema: &KeySchema,
    scope: LockScope,
    builder: &mut Builder,
) -> String {
    let p = builder.placeholders();
    let pk = p.name(&schema.partition);
    let Some(before) = &change.before else {
        return format!("attribute_not_exists({pk})");
    };
    let mut terms = vec![format!("attribute_exists({pk})")];
    let locked = locked_attributes(change, scope);
    for (name, value) in before {
        if schema.is_key(name) || !locked.as_ref().is_none_or(|l| l.contains(name)) {
            continue;
        }
        let alias = p.name(name);
        if value.get("NULL").is_some() {
            let null = p.value("null", json!({ "S": "NULL" }));
            terms.push(format!("attribute_type({alias}, {null})"));
        } else {
            let placeholder = p.value(name, value.clone());
            terms.push(format!("{alias} = {placeholder}"));
        }
    }
    if change.op == Op::Update {
        if let Some(after) = &change.after {
            for name in after.keys().filter(|n| !before.contains_key(*n)) {
                terms.push(format!("attribute_not_exists({})", p.name(name)));
            }
        }
    }
    terms.join(" AND ")
}

/// The attributes an update's lock covers under `scope`: `None` for every
/// attribute of the item.
pub fn locked_attributes(change: &Change, scope: LockScope) -> Option<Vec<String>> {
    (scope == LockScope::Attributes && change.op == Op::Update).then(|| {
        attribute_changes(change.before.as_ref(), change.after.as_ref())
            .into_iter()
            .map(|a| a.name)
            .collect()
    })
}

/// SET for attributes that differ, REMOVE for attributes that go; `None`
/// when nothing but the key would be written.
fn update_expression(
    change: &Change,
    after: &Map<String, Value>,
    schema: &KeySchema,
    builder: &mut Builder,
) -> Option<String> {
    let p = builder.placeholders();
    let mut set = Vec::new();
    let mut remove = Vec::new();
    for attribute in attribute_changes(change.before.as_ref(), Some(after)) {
        if schema.is_key(&attribute.name) {
            continue;
        }
        let alias = p.name(&attribute.name);
        match attribute.new {
            Some(value) => {
                // A distinct hint keeps the new value's placeholder apart
                // from the lock's old value of the same attribute.
                let placeholder = p.value(&format!("new_{}", attribute.name), value);
                set.push(format!("{alias} = {placeholder}"));
            }
            None => remove.push(alias),
        }
    }
    let mut parts = Vec::new();
    if !set.is_empty() {
        parts.push(format!("SET {}", set.join(", ")));
    }
    if !remove.is_empty() {
        parts.push(format!("REMOVE {}", remove.join(", ")));
    }
    (!parts.is_empty()).then(|| parts.join(" "))
}

/// "item changed since staged: status "new" → "closed"" from the staged
/// item and the one DynamoDB returned with the failure.
pub fn drift_explanation(change: &Change, now: Option<&Value>) -> String {
    let now = now.and_then(Value::as_object).filter(|m| !m.is_empty());
    match (&change.before, now) {
        (None, Some(_)) => "item exists now but did not when staged".into(),
        (Some(_), None) => "item changed since staged: it no longer exists".into(),
        (None, None) => "item exists now but did not when staged".into(),
        (Some(before), Some(now)) => {
            let diffs: Vec<String> = attribute_changes(Some(before), Some(now))
                .iter()
                .map(ToString::to_string)
                .collect();
            if diffs.is_empty() {
                "item changed since staged".into()
            } else {
                format!("item changed since staged ({})", diffs.join("; "))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    fn schema() -> KeySchema {
        KeySchema {
            table: "users".into(),
            partition: "pk".into(),
            sort: None,
        }
    }

    fn stage_of(changes: Vec<Change>) -> StageFile {
        let mut stage = StageFile::default();
        stage.tables.insert("users".into(), schema());
        for c in changes {
            stage.changes.push(c);
        }
        stage
    }

    fn create(n: usize) -> Change {
        Change {
            op: Op::Put,
            table: "users".into(),
            key: obj(json!({"pk":{"S":format!("u{n}")}})),
            before: None,
            after: Some(obj(json!({"pk":{"S":format!("u{n}")},"n":{"N":"1"}}))),
        }
    }

    #[test]
    fn a_create_requires_absence() {
        let a = action(&create(1), &schema(), LockScope::Item).unwrap();
        assert_eq!(a["Put"]["ConditionExpression"], "attribute_not_exists(pk)");
        assert_eq!(a["Put"]["TableName"], "users");
        assert_eq!(a["Put"]["ReturnValuesOnConditionCheckFailure"], "ALL_OLD");
    }

    #[test]
    fn an_update_is_locked_on_the_values_it_saw() {
        let change = Change {
            op: Op::Update,
            table: "users".into(),
            key: obj(json!({"pk":{"S":"u1"}})),
            before: Some(obj(
                json!({"pk":{"S":"u1"},"status":{"S":"new"},"old":{"N":"1"},"z":{"NULL":true}}),
            )),
            after: Some(obj(
                json!({"pk":{"S":"u1"},"status":{"S":"active"},"z":{"NULL":true},"added":{"BOOL":true}}),
            )),
        };
        let a = action(&change, &schema(), LockScope::Item).unwrap();
        let update = &a["Update"];
        assert_eq!(
            update["ConditionExpression"],
            "attribute_exists(pk) AND #old = :old AND #status = :status AND attribute_type(z, :null) AND attribute_not_exists(added)"
        );
        assert_eq!(
            update["UpdateExpression"],
            "SET added = :new_added, #status = :new_status REMOVE #old"
        );
        assert_eq!(
            update["ExpressionAttributeValues"][":status"],
            json!({"S":"new"})
        );
        assert_eq!(
            update["ExpressionAttributeValues"][":new_status"],
            json!({"S":"active"})
        );
    }

    #[test]
    fn an_attribute_lock_covers_only_what_the_update_writes() {
        let before = obj(json!({"pk":{"S":"u1"},"status":{"S":"new"},"visits":{"N":"7"}}));
        let after = obj(json!({"pk":{"S":"u1"},"status":{"S":"active"},"visits":{"N":"7"}}));
        let change = Change {
            op: Op::Update,
            table: "users".into(),
            key: obj(json!({"pk":{"S":"u1"}})),
            before: Some(before.clone()),
            after: Some(after),
        };
        let a = action(&change, &schema(), LockScope::Attributes).unwrap();
        assert_eq!(
            a["Update"]["ConditionExpression"],
            "attribute_exists(pk) AND #status = :status"
        );
        // A delete keeps the whole-item lock whatever the scope.
        let delete = Change {
            op: Op::Delete,
            after: None,
            ..change
        };
        let a = action(&delete, &schema(), LockScope::Attributes).unwrap();
        assert_eq!(
            a["Delete"]["ConditionExpression"],
            "attribute_exists(pk) AND #status = :status AND visits = :visits"
        );
    }

    #[test]
    fn a_delete_is_locked_and_an_unchanged_update_becomes_a_condition_check() {
        let seen = obj(json!({"pk":{"S":"u1"},"a":{"S":"x"}}));
        let delete = Change {
            op: Op::Delete,
            table: "users".into(),
            key: obj(json!({"pk":{"S":"u1"}})),
            before: Some(seen.clone()),
            after: None,
        };
        let a = action(&delete, &schema(), LockScope::Item).unwrap();
        assert_eq!(
            a["Delete"]["ConditionExpression"],
            "attribute_exists(pk) AND a = :a"
        );
        let same = Change {
            op: Op::Update,
            after: Some(seen.clone()),
            ..delete
        };
        assert!(action(&same, &schema(), LockScope::Item)
            .unwrap()
            .get("ConditionCheck")
            .is_some());
    }

    #[test]
    fn up_to_100_changes_are_one_transaction_with_a_stable_token() {
        let stage = stage_of((0..100).map(create).collect());
        let first = chunks(&stage).unwrap();
        assert_eq!(first.len(), 1);
        let token = first[0].request["ClientRequestToken"].as_str().unwrap();
        assert!(token.len() <= 36);
        assert_eq!(
            chunks(&stage).unwrap()[0].request["ClientRequestToken"],
            token
        );
        let bigger = stage_of((0..101).map(create).collect());
        let split = chunks(&bigger).unwrap();
        assert_eq!(split.len(), 2);
        assert_eq!(split[1].first_change, 100);
        assert_eq!(split[1].labels[0].what, "change 101 (put users/u100)");
        assert_ne!(split[0].request["ClientRequestToken"], token);
    }

    #[test]
    fn drift_is_explained_attribute_by_attribute() {
        let change = Change {
            op: Op::Update,
            table: "users".into(),
            key: obj(json!({"pk":{"S":"u1"}})),
            before: Some(obj(json!({"pk":{"S":"u1"},"status":{"S":"new"}}))),
            after: None,
        };
        let now = json!({"pk":{"S":"u1"},"status":{"S":"closed"}});
        assert_eq!(
            drift_explanation(&change, Some(&now)),
            "item changed since staged (~ status: \"new\" → \"closed\")"
        );
        assert_eq!(
            drift_explanation(&change, None),
            "item changed since staged: it no longer exists"
        );
    }
}
