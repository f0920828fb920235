//! Markers that follow a staged edit: when a staged change gives an owner a
//! new value of a unique attribute (or removes the value, or deletes the
//! owner), the marker of its old value is staged to move with it, so the
//! commit changes owner and markers in one transaction and the value is
//! never unprotected nor left locked by nobody.
//!
//! Which attributes are unique is read from the markers themselves: the
//! per-value marker of an old value is found by its key (no declaration
//! needed), grouped markers for the entities the caller names. A marker
//! counts only when its `uniq_owner` is the edited item: a marker of another
//! owner, or one whose owner cannot be read, is reported and left alone.

use super::{Constraint, MarkerLayout, UniqueError, UniqueSpec, OWNER_ATTR, VALUE_ATTR};
use crate::reads;
use crate::stage::{Change, Op, StageFile};
use crate::table::KeySchema;
use serde_json::{Map, Value};

type Item = Map<String, Value>;

/// What following one edit did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Followed {
    /// Marker changes staged, one line each (`UNIQ#EMAIL#a → UNIQ#EMAIL#b`).
    pub moved: Vec<String>,
    /// Markers seen but not touched, with why.
    pub warnings: Vec<String>,
}

/// Brings the staged markers of the owners changed by changes `numbers`
/// (1-based) in line with what those changes write: for every attribute
/// whose value a change changes, the owner's marker of the old value is
/// staged for deletion and a marker of the new value (the old marker's item
/// under the new key) for creation, which the commit guards with
/// `attribute_not_exists`. Marker changes staged for the same owner and
/// attribute by an earlier edit are replaced. A new value whose marker
/// belongs to someone else refuses the edit. Every candidate marker is read
/// in one batch (BatchGetItem, 100 keys a request). `grouped_entities`
/// names the entities whose grouped markers to look for.
pub fn follow_changes(
    api: &dyn crate::api::DynamoApi,
    stage: &mut StageFile,
    numbers: &[usize],
    grouped_entities: &[String],
) -> Result<Followed, UniqueError> {
    let owners: Vec<Change> = numbers
        .iter()
        .map(|n| stage.changes[n - 1].clone())
        .filter(|change| !is_marker(change))
        .collect();
    let mut edits = Vec::new();
    for change in &owners {
        let schema =
            stage.tables.get(&change.table).cloned().ok_or_else(|| {
                UniqueError::Invalid(format!("no key schema for {}", change.table))
            })?;
        for constraint in constraints(&schema, grouped_entities) {
            for edit in edits_of(change, &constraint) {
                drop_staged_markers(stage, &constraint, &edit.name, &change.key);
                if edit.old != edit.new {
                    edits.push(edit);
                }
            }
        }
    }
    let mut followed = Followed::default();
    let Some(table) = edits.first().map(|e| e.constraint.spec.table.clone()) else {
        return Ok(followed);
    };
    let keys: Vec<Item> = edits
        .iter()
        .flat_map(|e| e.old_key.iter().chain(&e.new_key))
        .cloned()
        .collect();
    let found = match reads::batch_get(api, &table, &keys) {
        Ok(found) => found,
        // A table whose keys are not strings cannot hold markers.
        Err(e) if e.code() == Some("ValidationException") => return Ok(followed),
        Err(e) => return Err(e.into()),
    };
    for edit in &edits {
        follow_edit(stage, edit, &found, &mut followed)?;
    }
    Ok(followed)
}

/// One attribute of one owner, in one marker layout, as a change sets it.
struct Edit {
    constraint: Constraint,
    name: String,
    owner: Item,
    old: Option<Value>,
    new: Option<Value>,
    old_key: Option<Item>,
    new_key: Option<Item>,
}

/// The non-key attributes `change` writes or had, with their markers' keys.
fn edits_of(change: &Change, c: &Constraint) -> Vec<Edit> {
    let empty = Item::new();
    let before = change.before.as_ref().unwrap_or(&empty);
    let after = change.after.as_ref().unwrap_or(&empty);
    let mut names: Vec<&String> = before.keys().chain(after.keys()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter(|n| !c.schema.is_key(n))
        .map(|name| {
            let (old, new) = (before.get(name).cloned(), after.get(name).cloned());
            Edit {
                constraint: c.clone(),
                name: name.clone(),
                owner: change.key.clone(),
                old_key: old.as_ref().and_then(|v| marker_key(c, name, v)),
                new_key: new.as_ref().and_then(|v| marker_key(c, name, v)),
                old,
                new,
            }
        })
        .collect()
}

/// The key of `value`'s marker, when the value can have one: a string,
/// number or binary short enough to be a key (DynamoDB refuses the whole
/// batch for one key over the limit).
fn marker_key(c: &Constraint, name: &str, value: &Value) -> Option<Item> {
    const MAX_NAME: usize = 1024;
    let marker = c.marker_name(name, value).ok()?;
    (marker.len() <= MAX_NAME).then(|| c.marker_key_named(name, &marker))
}

/// The layouts to look in: per value always, grouped per named entity.
fn constraints(schema: &KeySchema, grouped_entities: &[String]) -> Vec<Constraint> {
    let spec = |entity: &str, layout| UniqueSpec {
        table: schema.table.clone(),
        entity: entity.into(),
        attributes: Vec::new(),
        layout,
    };
    let direct = |spec: UniqueSpec| Constraint {
        spec,
        schema: schema.clone(),
        marker_index: None,
    };
    let mut list = vec![direct(spec("any", MarkerLayout::PerValue))];
    if schema.sort.is_some() {
        list.extend(
            grouped_entities
                .iter()
                .filter(|e| !e.is_empty() && !e.contains('#'))
                .map(|e| direct(spec(e, MarkerLayout::Grouped))),
        );
    }
    list
}

/// Whether a change is itself to a marker (markers do not have markers).
fn is_marker(change: &Change) -> bool {
    change.key.values().any(|v| {
        v["S"]
            .as_str()
            .is_some_and(|s| s.starts_with(super::PREFIX))
    })
}

/// The owner a marker item names, if it names one.
fn owner_of(marker: &Item) -> Option<&Map<String, Value>> {
    marker.get(OWNER_ATTR)?.get("M")?.as_object()
}

/// Removes marker changes an earlier edit staged for `owner`'s `name`.
fn drop_staged_markers(stage: &mut StageFile, c: &Constraint, name: &str, owner: &Item) {
    let prefix = c.marker_prefix(name);
    let ours = |item: &Option<Item>| {
        item.as_ref().is_some_and(|m| {
            owner_of(m) == Some(owner)
                && c.name_of_marker(m).is_some_and(|n| n.starts_with(&prefix))
        })
    };
    stage.changes.retain(|change| {
        let staged_delete = change.op == Op::Delete && ours(&change.before);
        let staged_create = change.before.is_none() && ours(&change.after);
        !(change.table == c.spec.table && (staged_delete || staged_create))
    });
}

/// Stages the marker changes for one attribute changing value, from the
/// markers read (`found`, by key id).
fn follow_edit(
    stage: &mut StageFile,
    edit: &Edit,
    found: &reads::ItemsByKey,
    followed: &mut Followed,
) -> Result<(), UniqueError> {
    let c = &edit.constraint;
    let owner = &edit.owner;
    let marker = |key: &Option<Item>| key.as_ref().and_then(|k| found.get(&reads::key_id(k)));
    let (old_marker, new_marker) = (marker(&edit.old_key), marker(&edit.new_key));
    let (Some(old_marker), Some(old_key)) = (old_marker, &edit.old_key) else {
        if let (Some(marker), Some(key)) = (new_marker, &edit.new_key) {
            if owner_of(marker) != Some(owner) {
                followed.warnings.push(format!(
                    "{} already exists for another owner: the value looks taken (see the Locks view)",
                    c.display(key)
                ));
            }
        }
        return Ok(());
    };
    let old_name = c.display(old_key);
    if owner_of(old_marker) != Some(owner) {
        followed.warnings.push(format!(
            "{old_name} does not name this item as its owner: left alone (see the Locks view)"
        ));
        return Ok(());
    }
    stage.add(Change {
        op: Op::Delete,
        table: c.spec.table.clone(),
        key: old_key.clone(),
        before: Some(old_marker.clone()),
        after: None,
    });
    let (Some(new), Some(new_key)) = (&edit.new, &edit.new_key) else {
        followed
            .moved
            .push(format!("{old_name} deleted with the value"));
        return Ok(());
    };
    match new_marker {
        Some(m) if owner_of(m) == Some(owner) => {
            followed.moved.push(format!(
                "{old_name} deleted; {} already names this item",
                c.display(new_key)
            ));
            return Ok(());
        }
        Some(holder) => {
            return Err(UniqueError::Invalid(format!(
                "{} {} is taken: {} belongs to {}",
                edit.name,
                crate::typed::render(new),
                c.display(new_key),
                owner_of(holder).map_or("an owner that cannot be read".into(), |o| c.display(o))
            )))
        }
        None => {}
    }
    let mut moved = old_marker.clone();
    moved.extend(new_key.clone());
    if moved.contains_key(VALUE_ATTR) {
        moved.insert(VALUE_ATTR.into(), new.clone());
    }
    stage.add(Change {
        op: Op::Put,
        table: c.spec.table.clone(),
        key: new_key.clone(),
        before: None,
        after: Some(moved),
    });
    followed
        .moved
        .push(format!("{old_name} → {}", c.display(new_key)));
    Ok(())
}
