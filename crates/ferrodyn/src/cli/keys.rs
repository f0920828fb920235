//! Key schemas: which attributes form a table's (or an index's) key and their
//! types, read with DescribeTable so that users can write `get users u1`
//! instead of `get users '{"pk": "u1"}'`.

use super::parse_item;
use ferrodyn_client::Client;
use serde_json::{json, Map, Value};

/// A key attribute: its name and scalar type (`S`, `N` or `B`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyAttribute {
    pub name: String,
    pub kind: String,
}

/// The partition key and optional sort key of a table or index.
#[derive(Debug, Clone)]
pub struct KeySchema {
    pub partition: KeyAttribute,
    pub sort: Option<KeyAttribute>,
}

impl KeySchema {
    /// Key attribute names, partition first (table columns start with them).
    pub fn names(&self) -> Vec<String> {
        std::iter::once(self.partition.name.clone())
            .chain(self.sort.as_ref().map(|s| s.name.clone()))
            .collect()
    }
}

/// DescribeTable's `Table`.
pub fn describe(client: &Client, table: &str) -> Result<Value, String> {
    let response = client
        .call("DescribeTable", &json!({ "TableName": table }))
        .map_err(|e| e.to_string())?;
    Ok(response.get("Table").cloned().unwrap_or_default())
}

/// The key schema of `table`, or of its index `index`.
pub fn key_schema(client: &Client, table: &str, index: Option<&str>) -> Result<KeySchema, String> {
    let description = describe(client, table)?;
    schema_of(&description, index)
}

/// Reads the key schema out of a table description.
pub fn schema_of(description: &Value, index: Option<&str>) -> Result<KeySchema, String> {
    let elements = match index {
        None => description.get("KeySchema"),
        Some(name) => ["GlobalSecondaryIndexes", "LocalSecondaryIndexes"]
            .iter()
            .filter_map(|field| description.get(field).and_then(Value::as_array))
            .flatten()
            .find(|i| i.get("IndexName").and_then(Value::as_str) == Some(name))
            .and_then(|i| i.get("KeySchema")),
    }
    .and_then(Value::as_array)
    .ok_or_else(|| match index {
        Some(name) => format!("the table has no index named `{name}`"),
        None => "the table description has no KeySchema".to_string(),
    })?;
    let kind_of = |name: &str| {
        description
            .get("AttributeDefinitions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|d| d.get("AttributeName").and_then(Value::as_str) == Some(name))
            .and_then(|d| d.get("AttributeType").and_then(Value::as_str))
            .unwrap_or("S")
            .to_string()
    };
    let attribute = |role: &str| {
        elements
            .iter()
            .find(|e| e.get("KeyType").and_then(Value::as_str) == Some(role))
            .and_then(|e| e.get("AttributeName").and_then(Value::as_str))
            .map(|name| KeyAttribute {
                name: name.to_string(),
                kind: kind_of(name),
            })
    };
    Ok(KeySchema {
        partition: attribute("HASH").ok_or("the key schema has no HASH key")?,
        sort: attribute("RANGE"),
    })
}

/// A command-line string as a value of a key attribute's type.
pub fn typed_value(text: &str, kind: &str) -> Value {
    match kind {
        "N" => json!({ "N": text }),
        "B" => json!({ "B": text }),
        _ => json!({ "S": text }),
    }
}

/// A key from the command line: a JSON object (plain, or DynamoDB JSON with
/// `raw`), or the partition key's value and optionally the sort key's, typed
/// by the table's key schema.
pub fn key_from_args(
    client: &Client,
    table: &str,
    key: &str,
    sort: Option<&str>,
    raw: bool,
) -> Result<Map<String, Value>, String> {
    if key.starts_with('{') || key.starts_with('@') || key == "-" {
        if sort.is_some() {
            return Err("give the key either as one JSON object or as values, not both".into());
        }
        return parse_item(key, raw, "the key");
    }
    let schema = key_schema(client, table, None)?;
    let mut map = Map::new();
    map.insert(
        schema.partition.name.clone(),
        typed_value(key, &schema.partition.kind),
    );
    match (&schema.sort, sort) {
        (Some(attribute), Some(value)) => {
            map.insert(attribute.name.clone(), typed_value(value, &attribute.kind));
        }
        (Some(attribute), None) => {
            return Err(format!(
                "table `{table}` also has a sort key `{}`: give its value after the partition key",
                attribute.name
            ))
        }
        (None, Some(_)) => return Err(format!("table `{table}` has no sort key")),
        (None, None) => {}
    }
    Ok(map)
}
