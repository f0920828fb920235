//! Applying an update to an item.
//!
//! Every value on the right of SET is computed from the item as it was before
//! the update (DynamoDB semantics), then SET/ADD/DELETE are applied in
//! expression order, then REMOVEs from the highest list index down, so that
//! list indexes always refer to the original positions.

use crate::ast::{UpdateAction, UpdateExpression, UpdateOperand};
use crate::path::{Path, PathElem};
use ferrodyn_types::{AttributeValue, DynamoError, Item, NumberError};
use std::collections::HashSet;
use std::hash::Hash;

fn invalid_path() -> DynamoError {
    DynamoError::validation(
        "The document path provided in the update expression is invalid for update",
    )
}

fn missing_attribute() -> DynamoError {
    DynamoError::validation(
        "The provided expression refers to an attribute that does not exist in the item",
    )
}

fn wrong_type() -> DynamoError {
    DynamoError::validation("An operand in the update expression has an incorrect data type")
}

fn number_error(e: NumberError) -> DynamoError {
    DynamoError::validation(e.message(""))
}

impl UpdateExpression {
    /// The paths the update writes or removes, so the engine can reject
    /// updates of key attributes.
    pub fn target_paths(&self) -> Vec<&Path> {
        self.actions.iter().map(UpdateAction::path).collect()
    }

    /// Applies the update in place and returns the paths touched. On error
    /// the item may be partially modified; callers apply to a copy.
    pub fn apply(&self, item: &mut Item) -> Result<Vec<Path>, DynamoError> {
        self.apply_with(item, true)
    }

    /// Applies the update to the key of an item that does not exist yet.
    /// DynamoDB then ignores a REMOVE of a nested path (`REMOVE a.b`,
    /// `REMOVE a[0]`) that would be an invalid path on an existing item.
    pub fn apply_to_missing(&self, item: &mut Item) -> Result<Vec<Path>, DynamoError> {
        self.apply_with(item, false)
    }

    fn apply_with(&self, item: &mut Item, exists: bool) -> Result<Vec<Path>, DynamoError> {
        let original = item.clone();
        // Compute every SET value first, against the original item.
        let mut set_values = Vec::new();
        for action in &self.actions {
            if let UpdateAction::Set(_, value) = action {
                set_values.push(evaluate(value, &original)?);
            }
        }
        let mut set_values = set_values.into_iter();
        // Paths of one expression never overlap, so the order of the writes
        // only shows when several append past the end of one list: DynamoDB
        // applies them in path (hence index) order, not expression order.
        let mut writes: Vec<(&UpdateAction, Option<AttributeValue>)> = Vec::new();
        let mut removes: Vec<&Path> = Vec::new();
        for action in &self.actions {
            match action {
                UpdateAction::Remove(path) => removes.push(path),
                UpdateAction::Set(..) => writes.push((action, set_values.next())),
                _ => writes.push((action, None)),
            }
        }
        writes.sort_by(|a, b| a.0.path().cmp(b.0.path()));
        for (action, value) in writes {
            match action {
                UpdateAction::Set(path, _) => {
                    set_path(item, path, value.ok_or_else(invalid_path)?)?;
                }
                UpdateAction::Remove(_) => {}
                UpdateAction::Add(path, value) => add(item, path, value, false)?,
                UpdateAction::LegacyAdd(path, value) => add(item, path, value, true)?,
                UpdateAction::Delete(path, value) => delete(item, path, value, false)?,
                UpdateAction::LegacyDelete(path, value) => delete(item, path, value, true)?,
            }
        }
        // Highest paths first: for two indexes of one list, the larger goes
        // first so the smaller still designates the original element.
        removes.sort_by(|a, b| b.cmp(a));
        for path in removes {
            match remove_path(item, path) {
                Err(_) if !exists => {}
                result => result?,
            }
        }
        Ok(self.actions.iter().map(|a| a.path().clone()).collect())
    }
}

/// Computes a SET value. The recursive frame is kept small (functions may
/// nest up to the 300-operator limit); the work is in the helpers.
fn evaluate(op: &UpdateOperand, item: &Item) -> Result<AttributeValue, DynamoError> {
    match op {
        UpdateOperand::Value(v) => Ok(v.clone()),
        UpdateOperand::Path(p) => p.lookup(item).cloned().ok_or_else(missing_attribute),
        UpdateOperand::IfNotExists(p, default) => match p.lookup(item) {
            Some(v) => Ok(v.clone()),
            None => evaluate(default, item),
        },
        UpdateOperand::ListAppend(a, b) => list_append(evaluate(a, item)?, evaluate(b, item)?),
        UpdateOperand::Plus(a, b) => arithmetic(true, evaluate(a, item)?, evaluate(b, item)?),
        UpdateOperand::Minus(a, b) => arithmetic(false, evaluate(a, item)?, evaluate(b, item)?),
    }
}

#[inline(never)]
fn list_append(a: AttributeValue, b: AttributeValue) -> Result<AttributeValue, DynamoError> {
    match (a, b) {
        (AttributeValue::L(mut a), AttributeValue::L(b)) => {
            a.extend(b);
            Ok(AttributeValue::L(a))
        }
        _ => Err(wrong_type()),
    }
}

#[inline(never)]
fn arithmetic(
    plus: bool,
    a: AttributeValue,
    b: AttributeValue,
) -> Result<AttributeValue, DynamoError> {
    let (AttributeValue::N(a), AttributeValue::N(b)) = (a, b) else {
        return Err(wrong_type());
    };
    let result = if plus {
        a.checked_add(&b)
    } else {
        a.checked_sub(&b)
    };
    Ok(AttributeValue::N(result.map_err(number_error)?))
}

/// The container holding the last step of `path`, which must exist and have
/// the right type for that step.
fn parent_mut<'a>(item: &'a mut Item, path: &Path) -> Result<Parent<'a>, DynamoError> {
    let elems = path.elems();
    let Some((last, init)) = elems.split_last() else {
        return Err(invalid_path());
    };
    if init.is_empty() {
        return Ok(Parent::Item(item));
    }
    let PathElem::Attr(root) = &init[0] else {
        return Err(invalid_path());
    };
    let mut current = item.get_mut(root).ok_or_else(invalid_path)?;
    for elem in &init[1..] {
        current = match (current, elem) {
            (AttributeValue::M(m), PathElem::Attr(k)) => m.get_mut(k),
            (AttributeValue::L(l), PathElem::Index(i)) => l.get_mut(*i),
            _ => None,
        }
        .ok_or_else(invalid_path)?;
    }
    match (current, last) {
        (AttributeValue::M(m), PathElem::Attr(_)) => Ok(Parent::Item(m)),
        (AttributeValue::L(l), PathElem::Index(_)) => Ok(Parent::List(l)),
        _ => Err(invalid_path()),
    }
}

enum Parent<'a> {
    Item(&'a mut Item),
    List(&'a mut Vec<AttributeValue>),
}

fn last_elem(path: &Path) -> &PathElem {
    // Paths always have at least one element (parser guarantee).
    &path.elems()[path.elems().len() - 1]
}

/// The value currently at `path`, for ADD/DELETE (None when absent, with
/// the parent required to exist).
fn slot<'a>(
    item: &'a mut Item,
    path: &Path,
) -> Result<(Parent<'a>, Option<AttributeValue>), DynamoError> {
    let parent = parent_mut(item, path)?;
    let current = match (&parent, last_elem(path)) {
        (Parent::Item(m), PathElem::Attr(k)) => m.get(k).cloned(),
        (Parent::List(l), PathElem::Index(i)) => l.get(*i).cloned(),
        _ => None,
    };
    Ok((parent, current))
}

fn store(parent: Parent<'_>, elem: &PathElem, value: AttributeValue) {
    match (parent, elem) {
        (Parent::Item(m), PathElem::Attr(k)) => {
            m.insert(k.clone(), value);
        }
        (Parent::List(l), PathElem::Index(i)) => {
            if *i < l.len() {
                l[*i] = value;
            } else {
                // An index past the end appends.
                l.push(value);
            }
        }
        _ => {}
    }
}

fn set_path(item: &mut Item, path: &Path, value: AttributeValue) -> Result<(), DynamoError> {
    let parent = parent_mut(item, path)?;
    store(parent, last_elem(path), value);
    Ok(())
}

fn remove_path(item: &mut Item, path: &Path) -> Result<(), DynamoError> {
    match (parent_mut(item, path)?, last_elem(path)) {
        (Parent::Item(m), PathElem::Attr(k)) => {
            m.remove(k);
        }
        (Parent::List(l), PathElem::Index(i)) if *i < l.len() => {
            l.remove(*i);
        }
        _ => {}
    }
    Ok(())
}

/// Union of two sets of the same type, kept sorted as decoded sets are
/// (see ferrodyn_types' set order); linear in the members added.
fn union<T: Hash + Eq + Ord + Clone>(a: &mut Vec<T>, b: &[T]) {
    let present: HashSet<T> = a.iter().cloned().collect();
    let mut added = HashSet::new();
    let before = a.len();
    for x in b {
        if !present.contains(x) && added.insert(x) {
            a.push(x.clone());
        }
    }
    if a.len() > before {
        a.sort_unstable();
    }
}

fn add(
    item: &mut Item,
    path: &Path,
    value: &AttributeValue,
    legacy: bool,
) -> Result<(), DynamoError> {
    let (parent, current) = slot(item, path)?;
    let new = match (current, value) {
        (None, v) => v.clone(),
        (Some(AttributeValue::N(a)), AttributeValue::N(b)) => {
            AttributeValue::N(a.checked_add(b).map_err(number_error)?)
        }
        (Some(AttributeValue::Ss(mut a)), AttributeValue::Ss(b)) => {
            union(&mut a, b);
            AttributeValue::Ss(a)
        }
        (Some(AttributeValue::Ns(mut a)), AttributeValue::Ns(b)) => {
            union(&mut a, b);
            AttributeValue::Ns(a)
        }
        (Some(AttributeValue::Bs(mut a)), AttributeValue::Bs(b)) => {
            union(&mut a, b);
            AttributeValue::Bs(a)
        }
        (Some(AttributeValue::L(mut a)), AttributeValue::L(b)) if legacy => {
            a.extend(b.iter().cloned());
            AttributeValue::L(a)
        }
        _ if legacy => return Err(legacy_type_mismatch()),
        _ => return Err(wrong_type()),
    };
    store(parent, last_elem(path), new);
    Ok(())
}

fn legacy_type_mismatch() -> DynamoError {
    DynamoError::validation("Type mismatch for attribute to update")
}

/// Removes `b`'s members from `a`; true if nothing is left.
fn difference<T: Hash + Eq>(a: &mut Vec<T>, b: &[T]) -> bool {
    let removed: HashSet<&T> = b.iter().collect();
    a.retain(|x| !removed.contains(x));
    a.is_empty()
}

fn delete(
    item: &mut Item,
    path: &Path,
    value: &AttributeValue,
    legacy: bool,
) -> Result<(), DynamoError> {
    let (parent, current) = slot(item, path)?;
    let Some(current) = current else {
        return Ok(());
    };
    let (result, empty) = match (current, value) {
        (AttributeValue::Ss(mut a), AttributeValue::Ss(b)) => {
            let e = difference(&mut a, b);
            (AttributeValue::Ss(a), e)
        }
        (AttributeValue::Ns(mut a), AttributeValue::Ns(b)) => {
            let e = difference(&mut a, b);
            (AttributeValue::Ns(a), e)
        }
        (AttributeValue::Bs(mut a), AttributeValue::Bs(b)) => {
            let e = difference(&mut a, b);
            (AttributeValue::Bs(a), e)
        }
        _ if legacy => return Err(legacy_type_mismatch()),
        _ => return Err(wrong_type()),
    };
    let elem = last_elem(path);
    if empty {
        // A set never becomes empty: deleting its last members removes it.
        match (parent, elem) {
            (Parent::Item(m), PathElem::Attr(k)) => {
                m.remove(k);
            }
            (Parent::List(l), PathElem::Index(i)) if *i < l.len() => {
                l.remove(*i);
            }
            _ => {}
        }
    } else {
        store(parent, elem, result);
    }
    Ok(())
}
