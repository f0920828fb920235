//! A table's key schema, learnt with DescribeTable, and the helpers that need
//! it: extracting an item's key and naming an item for people
//! (`users/u1`, `accounts/ACCT#1/PROFILE`).

use crate::api::{ApiError, DynamoApi};
use crate::typed;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

/// The key attributes of one table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeySchema {
    pub table: String,
    /// The partition (HASH) key attribute.
    pub partition: String,
    /// The sort (RANGE) key attribute, if the table has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sort: Option<String>,
}

impl KeySchema {
    /// Reads the key schema of `table` with DescribeTable.
    pub fn describe(api: &dyn DynamoApi, table: &str) -> Result<KeySchema, ApiError> {
        let response = api.call("DescribeTable", &json!({ "TableName": table }))?;
        let mut schema = KeySchema {
            table: table.to_string(),
            partition: String::new(),
            sort: None,
        };
        for element in response["Table"]["KeySchema"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let name = element["AttributeName"].as_str().unwrap_or_default();
            match element["KeyType"].as_str() {
                Some("HASH") => schema.partition = name.to_string(),
                Some("RANGE") => schema.sort = Some(name.to_string()),
                _ => {}
            }
        }
        if schema.partition.is_empty() {
            return Err(ApiError::Transport(format!(
                "DescribeTable for {table} returned no key schema"
            )));
        }
        Ok(schema)
    }

    /// The key attributes' names, partition key first.
    pub fn attributes(&self) -> Vec<&str> {
        std::iter::once(self.partition.as_str())
            .chain(self.sort.as_deref())
            .collect()
    }

    /// Whether `name` is one of the key attributes.
    pub fn is_key(&self, name: &str) -> bool {
        self.attributes().contains(&name)
    }

    /// The key of `item` (typed), or which key attribute it lacks.
    pub fn key_of(&self, item: &Map<String, Value>) -> Result<Map<String, Value>, String> {
        let mut key = Map::new();
        for name in self.attributes() {
            let value = item.get(name).ok_or_else(|| {
                format!(
                    "the item has no key attribute `{name}` (table {})",
                    self.table
                )
            })?;
            key.insert(name.to_string(), value.clone());
        }
        Ok(key)
    }

    /// `table/partition[/sort]` for messages.
    pub fn display(&self, key: &Map<String, Value>) -> String {
        display_key(&self.table, &self.attributes(), key)
    }
}

/// `table/partition[/sort]`, with key attributes in `order`.
pub fn display_key(table: &str, order: &[&str], key: &Map<String, Value>) -> String {
    let mut text = table.to_string();
    for name in order {
        text.push('/');
        match key.get(*name) {
            Some(v) => text.push_str(&typed::key_text(v).unwrap_or_else(|| typed::render(v))),
            None => text.push('?'),
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_taken_from_items_and_displayed() {
        let schema = KeySchema {
            table: "accounts".into(),
            partition: "PK".into(),
            sort: Some("SK".into()),
        };
        let item = json!({"PK":{"S":"ACCT#1"},"SK":{"S":"PROFILE"},"email":{"S":"a@b"}});
        let key = schema.key_of(item.as_object().unwrap()).unwrap();
        assert_eq!(key.len(), 2);
        assert_eq!(schema.display(&key), "accounts/ACCT#1/PROFILE");
        let missing = json!({"PK":{"S":"x"}});
        assert!(schema
            .key_of(missing.as_object().unwrap())
            .unwrap_err()
            .contains("`SK`"));
    }
}
