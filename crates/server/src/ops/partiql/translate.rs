//! Turns one parsed, bound statement into the request of the DynamoDB
//! operation that does the same thing: SELECT by full key → GetItem, with a
//! partition-key equality → Query, otherwise → Scan with the WHERE clause as
//! its filter; INSERT → PutItem guarded by attribute_not_exists; UPDATE →
//! UpdateItem guarded by the item's existence and the WHERE clause's other
//! predicates; DELETE → DeleteItem guarded by those predicates (an absent
//! item is no error); EXISTS → a transaction's ConditionCheck. Running that
//! operation is then what gives the statement its capacity, admission,
//! conditions, indexes and stream records.

use super::render::Renderer;
use ferrodyn_engine::keys::KeyAttribute;
use ferrodyn_engine::Engine;
use ferrodyn_partiql::ast::Path;
use ferrodyn_partiql::ast::{
    Comparison, Delete, Expr, Insert, Returning, Select, Statement, Update, UpdateAction,
};
use ferrodyn_partiql::values::is_value;
use ferrodyn_types::{AttributeValue, DynamoError, Item, Result, ScalarType};
use serde_json::{Map, Value};

fn returning_text(returning: Option<Returning>) -> &'static str {
    match returning {
        Some(Returning::AllOld) => "ALL OLD *",
        Some(Returning::ModifiedOld) => "MODIFIED OLD *",
        Some(Returning::AllNew) => "ALL NEW *",
        Some(Returning::ModifiedNew) => "MODIFIED NEW *",
        None => "",
    }
}

/// Which operation a statement became.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    GetItem,
    Query,
    Scan,
    /// A PutItem for an INSERT (its failed condition is a duplicate key).
    Insert,
    UpdateItem,
    DeleteItem,
    ConditionCheck,
}

/// The equivalent operation and its request body.
pub struct Translated {
    pub kind: Kind,
    pub table: String,
    pub request: Map<String, Value>,
    /// For `RETURNING MODIFIED ...`: the top-level attributes the UPDATE
    /// changes (its ReturnValues is then ALL_OLD or ALL_NEW, narrowed to
    /// these, as DynamoDB returns whole modified attributes).
    pub modified: Option<Vec<String>>,
    /// For a SELECT of nested paths: the paths, each answered under its
    /// last name (`a.b[1]` as `b[1]`), taken from whole items.
    pub projection: Option<Vec<Path>>,
    /// An INSERT's `Item` or a GetItem's `Key`, kept typed so that the
    /// operation gets it without a round trip through JSON;
    /// [`Translated::request_with_typed`] puts it into the request (for a
    /// transaction).
    pub typed: Option<(&'static str, Item)>,
    /// An INSERT's key, and its partition key attribute (the one its
    /// `attribute_not_exists` guard names).
    inserted_key: Option<Item>,
    pub partition_key: Option<String>,
}

impl Translated {
    /// The primary key of the one item the statement reads or writes
    /// (`None` for a Query or Scan).
    pub fn key(&self) -> Option<Value> {
        match self.kind {
            Kind::Query | Kind::Scan => None,
            Kind::Insert => self.inserted_key.as_ref().map(item_json),
            Kind::GetItem => self.typed.as_ref().map(|(_, key)| item_json(key)),
            _ => self.request.get("Key").cloned(),
        }
    }

    fn new(kind: Kind, table: &str, request: Map<String, Value>) -> Translated {
        Translated {
            kind,
            table: table.to_string(),
            request,
            modified: None,
            projection: None,
            inserted_key: None,
            partition_key: None,
            typed: None,
        }
    }

    /// The request with its typed `Item` or `Key` in it (as a
    /// transaction's Put or Get takes it).
    pub fn request_with_typed(&self) -> Map<String, Value> {
        let mut request = self.request.clone();
        if let Some((field, item)) = &self.typed {
            request.insert((*field).into(), item_json(item));
        }
        if let Some(partition_key) = &self.partition_key {
            request.insert(
                "ConditionExpression".into(),
                "attribute_not_exists(#pk)".into(),
            );
            request.insert(
                "ExpressionAttributeNames".into(),
                serde_json::json!({ "#pk": partition_key }),
            );
        }
        request
    }
}

/// The key attributes a statement's WHERE clause is matched against.
struct Keys {
    hash: Vec<String>,
    range: Vec<String>,
    types: Vec<(String, ScalarType)>,
}

impl Keys {
    /// A key attribute's value, which must have the schema's type.
    fn value(&self, r: &Renderer<'_>, attribute: &str, expr: &Expr) -> Result<AttributeValue> {
        let value = r.bind(expr)?;
        let expected = self
            .types
            .iter()
            .find(|(n, _)| n == attribute)
            .map(|(_, t)| *t);
        if expected.is_some() && value.scalar_type() != expected {
            return Err(DynamoError::validation(format!(
                "Key attribute's data type should match its data type in table's schema: Key {attribute}"
            )));
        }
        Ok(value)
    }
}

fn table_keys(engine: &Engine, table: &str, index: Option<&str>) -> Result<Option<Keys>> {
    let table = engine.table_for_items(table)?;
    let keys = |hash: &[&KeyAttribute], range: &[&KeyAttribute]| Keys {
        hash: hash.iter().map(|a| a.name.clone()).collect(),
        range: range.iter().map(|a| a.name.clone()).collect(),
        types: hash
            .iter()
            .chain(range)
            .map(|a| (a.name.clone(), a.ty))
            .collect(),
    };
    Ok(match index {
        None => Some(keys(
            &[&table.schema.hash],
            &table.schema.range.iter().collect::<Vec<_>>(),
        )),
        // An unknown index is left for the operation to report.
        Some(name) => table.index(name).map(|index| {
            keys(
                &index.schema.hash.iter().collect::<Vec<_>>(),
                &index.schema.range.iter().collect::<Vec<_>>(),
            )
        }),
    })
}

pub fn translate(
    engine: &Engine,
    statement: &Statement,
    params: &[AttributeValue],
) -> Result<Translated> {
    let mut r = Renderer::new(params);
    match statement {
        Statement::Select(select) => select_request(engine, select, r),
        Statement::Insert(insert) => insert_request(engine, insert, r),
        Statement::Update(update) => update_request(engine, update, &mut r).map(|mut t| {
            r.finish_into(&mut t.request);
            t
        }),
        Statement::Delete(delete) => delete_request(engine, delete, &mut r).map(|mut t| {
            r.finish_into(&mut t.request);
            t
        }),
        Statement::Exists(select) => exists_request(engine, select, r),
    }
}

/// The top-level AND-ed predicates of a condition, left to right, without
/// recursion (a long AND chain is as deep as it is long).
fn conjuncts(expr: &Expr) -> Vec<&Expr> {
    let mut out = Vec::new();
    let mut pending = vec![expr];
    while let Some(e) = pending.pop() {
        match e {
            Expr::And(a, b) => {
                pending.push(b);
                pending.push(a);
            }
            other => out.push(other),
        }
    }
    out
}

/// If `expr` is `attribute = value` (either way round), the value.
fn equality_on<'e>(expr: &'e Expr, attribute: &str) -> Option<&'e Expr> {
    let Expr::Compare(Comparison::Eq, a, b) = expr else {
        return None;
    };
    match (a.as_ref(), b.as_ref()) {
        (Expr::Path(p), v) | (v, Expr::Path(p)) if p.is_attribute(attribute) && is_value(v) => {
            Some(v)
        }
        _ => None,
    }
}

/// Splits conjuncts into the equalities on `attributes` (in their order)
/// and the rest; `None` unless every attribute has one.
fn key_equalities<'e>(
    parts: &[&'e Expr],
    attributes: &[String],
) -> Option<(Vec<&'e Expr>, Vec<&'e Expr>)> {
    let mut used = vec![false; parts.len()];
    let mut values = Vec::with_capacity(attributes.len());
    for attribute in attributes {
        let (i, value) = parts
            .iter()
            .enumerate()
            .filter(|(i, _)| !used[*i])
            .find_map(|(i, p)| equality_on(p, attribute).map(|v| (i, v)))?;
        used[i] = true;
        values.push(value);
    }
    let rest = parts
        .iter()
        .zip(used)
        .filter(|(_, used)| !used)
        .map(|(p, _)| *p)
        .collect();
    Some((values, rest))
}

/// Joins predicates into one condition expression (`None` if there are none).
fn and_all(r: &mut Renderer<'_>, parts: &[&Expr]) -> Result<Option<String>> {
    let mut rendered = Vec::with_capacity(parts.len());
    for part in parts {
        rendered.push(r.conjunct(part)?);
    }
    Ok((!rendered.is_empty()).then(|| rendered.join(" AND ")))
}

/// The full primary key of a write (or EXISTS) from its WHERE clause, and
/// the remaining predicates.
fn write_key<'e>(
    engine: &Engine,
    table: &str,
    condition: &'e Expr,
    r: &Renderer<'_>,
) -> Result<(Item, Vec<&'e Expr>, String)> {
    let keys = table_keys(engine, table, None)?.expect("a table always has keys");
    let attributes: Vec<String> = keys.hash.iter().chain(&keys.range).cloned().collect();
    let parts = conjuncts(condition);
    let Some((values, rest)) = key_equalities(&parts, &attributes) else {
        return Err(DynamoError::validation(
            "Where clause does not contain a mandatory equality on all key attributes",
        ));
    };
    let mut key = Item::new();
    for (attribute, value) in attributes.iter().zip(values) {
        key.insert(attribute.clone(), keys.value(r, attribute, value)?);
    }
    Ok((key, rest, keys.hash[0].clone()))
}

fn base_request(table: &str) -> Map<String, Value> {
    let mut request = Map::new();
    request.insert("TableName".into(), Value::String(table.into()));
    request
}

fn item_json(item: &Item) -> Value {
    serde_json::to_value(item).expect("plain data always serialises")
}

fn insert_request(engine: &Engine, insert: &Insert, r: Renderer<'_>) -> Result<Translated> {
    let AttributeValue::M(item) = r.bind(&insert.value)? else {
        return Err(DynamoError::validation(
            "Unsupported format in item expression. Please use struct format {...} to express item values for insert statement.",
        ));
    };
    let keys = table_keys(engine, &insert.table, None)?.expect("a table always has keys");
    for (attribute, ty) in &keys.types {
        match item.get(attribute) {
            None => {
                return Err(DynamoError::validation(format!(
                    "Key attribute should be present in the item: Key {attribute}"
                )))
            }
            Some(value) if value.scalar_type() != Some(*ty) => {
                return Err(DynamoError::validation(format!(
                    "Key attribute's data type should match its data type in table's schema: Key {attribute}"
                )))
            }
            Some(_) => {}
        }
    }
    let key: Item = keys
        .types
        .iter()
        .map(|(name, _)| (name.clone(), item[name].clone()))
        .collect();
    // The guard, attribute_not_exists on the partition key, is added by
    // `request_with_typed` (transactions) or given typed to PutItem.
    let request = base_request(&insert.table);
    let mut translated = Translated::new(Kind::Insert, &insert.table, request);
    translated.partition_key = Some(keys.hash[0].clone());
    translated.inserted_key = Some(key);
    translated.typed = Some(("Item", item));
    Ok(translated)
}

fn update_request(engine: &Engine, update: &Update, r: &mut Renderer<'_>) -> Result<Translated> {
    let (key, rest, hash) = write_key(engine, &update.table, &update.condition, r)?;
    let mut request = base_request(&update.table);
    request.insert("Key".into(), item_json(&key));
    request.insert(
        "UpdateExpression".into(),
        Value::String(update_expression(&update.actions, r)?),
    );
    // The item must exist: an UPDATE never creates one.
    let exists = format!("attribute_exists({})", r.name(&hash));
    let condition = match and_all(r, &rest)? {
        Some(others) => format!("{exists} AND {others}"),
        None => exists,
    };
    request.insert("ConditionExpression".into(), Value::String(condition));
    let mut modified = None;
    if let Some(returning) = update.returning {
        let values = match returning {
            Returning::AllOld | Returning::ModifiedOld => "ALL_OLD",
            Returning::AllNew | Returning::ModifiedNew => "ALL_NEW",
        };
        request.insert("ReturnValues".into(), Value::String(values.into()));
        if matches!(returning, Returning::ModifiedOld | Returning::ModifiedNew) {
            modified = Some(modified_roots(&update.actions));
        }
    }
    let mut translated = Translated::new(Kind::UpdateItem, &update.table, request);
    translated.modified = modified;
    Ok(translated)
}

/// The top-level attributes an UPDATE's clauses change.
fn modified_roots(actions: &[UpdateAction]) -> Vec<String> {
    let mut roots: Vec<String> = Vec::new();
    for action in actions {
        let (UpdateAction::Set(path, _) | UpdateAction::Remove(path)) = action;
        if !roots.contains(&path.root) {
            roots.push(path.root.clone());
        }
    }
    roots
}

/// SET and REMOVE clauses as an UpdateExpression; `SET a = set_add(a, s)`
/// is `ADD a s` and `SET a = set_delete(a, s)` is `DELETE a s`.
fn update_expression(actions: &[UpdateAction], r: &mut Renderer<'_>) -> Result<String> {
    let (mut set, mut remove, mut add, mut delete) = (vec![], vec![], vec![], vec![]);
    for action in actions {
        match action {
            UpdateAction::Remove(path) => remove.push(r.path(path)),
            UpdateAction::Set(path, Expr::Call(name, args))
                if name == "set_add" || name == "set_delete" =>
            {
                let [Expr::Path(source), value] = args.as_slice() else {
                    return Err(DynamoError::validation(format!(
                        "{name} takes two arguments: the set attribute and a set of values"
                    )));
                };
                if source != path {
                    return Err(DynamoError::validation(format!(
                        "The first argument to {} must equal the assignment value",
                        name.to_ascii_uppercase()
                    )));
                }
                let value = r.bind(value)?;
                let clause = format!("{} {}", r.path(path), r.value(&value));
                if name == "set_add" {
                    add.push(clause)
                } else {
                    delete.push(clause)
                }
            }
            UpdateAction::Set(path, value) => {
                let target = r.path(path);
                set.push(format!("{target} = {}", r.set_value(value)?));
            }
        }
    }
    let mut clauses = Vec::new();
    for (keyword, list) in [
        ("SET", set),
        ("REMOVE", remove),
        ("ADD", add),
        ("DELETE", delete),
    ] {
        if !list.is_empty() {
            clauses.push(format!("{keyword} {}", list.join(", ")));
        }
    }
    Ok(clauses.join(" "))
}

fn delete_request(engine: &Engine, delete: &Delete, r: &mut Renderer<'_>) -> Result<Translated> {
    let (key, rest, hash) = write_key(engine, &delete.table, &delete.condition, r)?;
    let mut request = base_request(&delete.table);
    request.insert("Key".into(), item_json(&key));
    if let Some(others) = and_all(r, &rest)? {
        // Deleting an absent item is a no-op, whatever the other predicates.
        let absent = format!("attribute_not_exists({})", r.name(&hash));
        request.insert(
            "ConditionExpression".into(),
            Value::String(format!("{absent} OR {others}")),
        );
    }
    match delete.returning {
        None => {}
        Some(Returning::AllOld) => {
            request.insert("ReturnValues".into(), Value::String("ALL_OLD".into()));
        }
        Some(_) => {
            return Err(DynamoError::validation(format!(
                "Invalid returning clause: RETURNING {}. Only RETURNING ALL OLD * is allowed in DELETE statements.",
                returning_text(delete.returning)
            )))
        }
    }
    Ok(Translated::new(Kind::DeleteItem, &delete.table, request))
}

fn exists_request(engine: &Engine, select: &Select, mut r: Renderer<'_>) -> Result<Translated> {
    let Some(condition) = &select.condition else {
        return Err(DynamoError::validation(
            "Where clause does not contain a mandatory equality on all key attributes",
        ));
    };
    if select.index.is_some() {
        return Err(DynamoError::validation(
            "EXISTS reads one item of a table, not of an index",
        ));
    }
    let (key, rest, hash) = write_key(engine, &select.table, condition, &r)?;
    // AWS: "The SELECT statement must specify a full primary key and one
    // other condition."
    if rest.is_empty() {
        return Err(DynamoError::validation(
            "EXISTS() must contain a single item read with additional condition",
        ));
    }
    let mut request = base_request(&select.table);
    request.insert("Key".into(), item_json(&key));
    let exists = format!("attribute_exists({})", r.name(&hash));
    let condition = match and_all(&mut r, &rest)? {
        Some(others) => format!("{exists} AND {others}"),
        None => exists,
    };
    request.insert("ConditionExpression".into(), Value::String(condition));
    r.finish_into(&mut request);
    Ok(Translated::new(
        Kind::ConditionCheck,
        &select.table,
        request,
    ))
}

fn select_request(engine: &Engine, select: &Select, mut r: Renderer<'_>) -> Result<Translated> {
    let mut request = base_request(&select.table);
    if let Some(index) = &select.index {
        request.insert("IndexName".into(), Value::String(index.clone()));
    }
    let mut nested = None;
    match &select.projection {
        Some(paths) if paths.iter().any(|p| !p.steps.is_empty()) => nested = Some(paths.clone()),
        Some(paths) => {
            let rendered: Vec<String> = paths.iter().map(|p| r.path(p)).collect();
            request.insert(
                "ProjectionExpression".into(),
                Value::String(rendered.join(", ")),
            );
        }
        None => {}
    }
    let keys = table_keys(engine, &select.table, select.index.as_deref())?;
    let (kind, key) = plan_select(select, keys.as_ref(), &mut r, &mut request)?;
    r.finish_into(&mut request);
    let mut translated = Translated::new(kind, &select.table, request);
    translated.projection = nested;
    translated.typed = key.map(|key| ("Key", key));
    Ok(translated)
}

/// Chooses GetItem (returning its key), Query or Scan for a SELECT and
/// fills in its key condition, filter and direction.
fn plan_select(
    select: &Select,
    keys: Option<&Keys>,
    r: &mut Renderer<'_>,
    request: &mut Map<String, Value>,
) -> Result<(Kind, Option<Item>)> {
    let parts = select.condition.as_ref().map(conjuncts).unwrap_or_default();
    let hash = keys.and_then(|k| key_equalities(&parts, &k.hash).map(|split| (k, split)));
    // A Query's filter may not mention key attributes; such a statement is
    // answered by a Scan (same items, unordered).
    let hash = hash.filter(|(keys, (_, rest))| {
        !select.order_by.is_empty() || !leftover_mentions_keys(rest, keys)
    });
    let Some((keys, (hash_values, rest))) = hash else {
        if !select.order_by.is_empty() {
            return Err(DynamoError::validation(if select.condition.is_none() {
                "Must have WHERE clause in the statement when using ORDER BY clause."
            } else {
                "Must have at least one non-optional hash key condition in WHERE clause when using ORDER BY clause."
            }));
        }
        if let Some(condition) = &select.condition {
            let filter = r.condition(condition)?;
            request.insert("FilterExpression".into(), Value::String(filter));
        }
        return Ok((Kind::Scan, None));
    };
    // The full key of a table, and nothing else: one GetItem.
    if select.index.is_none() && select.order_by.is_empty() {
        if let Some((range_values, others)) = key_equalities(&rest, &keys.range) {
            if others.is_empty() {
                let mut key = Item::new();
                for (attribute, value) in keys.hash.iter().zip(&hash_values) {
                    key.insert(attribute.clone(), keys.value(r, attribute, value)?);
                }
                for (attribute, value) in keys.range.iter().zip(&range_values) {
                    key.insert(attribute.clone(), keys.value(r, attribute, value)?);
                }
                return Ok((Kind::GetItem, Some(key)));
            }
        }
    }
    query_plan(select, keys, hash_values, rest, r, request).map(|kind| (kind, None))
}

/// Whether predicates left for a Query's filter mention a key attribute
/// (other than the one sort-key condition the Query will take).
fn leftover_mentions_keys(rest: &[&Expr], keys: &Keys) -> bool {
    let mut rest = rest.to_vec();
    if let [range] = keys.range.as_slice() {
        if let Some(i) = rest.iter().position(|p| is_sort_key_condition(p, range)) {
            rest.remove(i);
        }
    }
    let is_key = |root: &str| keys.hash.iter().chain(&keys.range).any(|k| k == root);
    let mut pending: Vec<&Expr> = rest;
    while let Some(e) = pending.pop() {
        match e {
            Expr::Path(p) if is_key(&p.root) => return true,
            Expr::Compare(_, a, b) | Expr::And(a, b) | Expr::Or(a, b) => {
                pending.push(a);
                pending.push(b);
            }
            Expr::Between(a, b, c) => pending.extend([a.as_ref(), b, c]),
            Expr::In(a, list) => {
                pending.push(a);
                pending.extend(list);
            }
            Expr::Not(a) | Expr::Negate(a) => pending.push(a),
            Expr::Missing { operand, .. } | Expr::IsNull { operand, .. } => pending.push(operand),
            Expr::Call(_, args) => pending.extend(args),
            _ => {}
        }
    }
    false
}

/// A Query: partition-key equalities and at most one sort-key condition as
/// the key condition, everything else as the filter, ORDER BY as the
/// direction.
fn query_plan(
    select: &Select,
    keys: &Keys,
    hash_values: Vec<&Expr>,
    mut rest: Vec<&Expr>,
    r: &mut Renderer<'_>,
    request: &mut Map<String, Value>,
) -> Result<Kind> {
    let mut key_condition = Vec::new();
    for (attribute, value) in keys.hash.iter().zip(hash_values) {
        let name = r.name(attribute);
        let value = keys.value(r, attribute, value)?;
        key_condition.push(format!("{name} = {}", r.value(&value)));
    }
    if let [range] = keys.range.as_slice() {
        if let Some(i) = rest.iter().position(|p| is_sort_key_condition(p, range)) {
            let part = rest.remove(i);
            key_condition.push(r.condition(part)?);
        }
    }
    request.insert(
        "KeyConditionExpression".into(),
        Value::String(key_condition.join(" AND ")),
    );
    if let Some(filter) = and_all(r, &rest)? {
        request.insert("FilterExpression".into(), Value::String(filter));
    }
    for order in &select.order_by {
        let on_key = keys
            .range
            .iter()
            .chain(&keys.hash)
            .any(|k| order.path.is_attribute(k));
        if !on_key {
            return Err(DynamoError::validation(format!(
                "Variable reference {} in ORDER BY clause must be part of the primary key",
                order.path.root
            )));
        }
        if order.descending {
            request.insert("ScanIndexForward".into(), Value::Bool(false));
        }
    }
    Ok(Kind::Query)
}

/// Whether a predicate can be a Query's sort-key condition.
fn is_sort_key_condition(expr: &Expr, range: &str) -> bool {
    let on_key = |e: &Expr| matches!(e, Expr::Path(p) if p.is_attribute(range));
    match expr {
        Expr::Compare(op, a, b) => *op != Comparison::Ne && on_key(a) && is_value(b),
        Expr::Between(a, low, high) => on_key(a) && is_value(low) && is_value(high),
        Expr::Call(name, args) if name == "begins_with" => {
            matches!(args.as_slice(), [a, b] if on_key(a) && is_value(b))
        }
        _ => false,
    }
}
