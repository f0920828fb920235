//! What a server started with `--accept-unused-attribute-definitions`
//! accepts that AWS refuses: CreateTable AttributeDefinitions that no key
//! schema (the table's or an index's) uses. DynamoDB Local accepts them, and
//! test setups written against it (PynamoDB's, ElectroDB's) declare some;
//! AWS answers "Some AttributeDefinitions are not used". With the leniency
//! the unused definitions are dropped before CreateTable's checks, so the
//! table is the one AWS would create without them. Off by default.

use serde_json::Value;

/// The CreateTable body without the AttributeDefinitions no key schema
/// names, or `None` when there is nothing to drop (or the body is not the
/// JSON object CreateTable's own parsing will report on).
pub fn without_unused_definitions(body: &[u8]) -> Option<Vec<u8>> {
    let mut request: Value = serde_json::from_slice(body).ok()?;
    let used = key_attributes(&request);
    let definitions = request.get_mut("AttributeDefinitions")?.as_array_mut()?;
    let before = definitions.len();
    definitions.retain(|d| match d.get("AttributeName").and_then(Value::as_str) {
        Some(name) => used.iter().any(|u| u == name),
        None => true,
    });
    (definitions.len() != before)
        .then(|| serde_json::to_vec(&request).expect("plain data always serialises"))
}

/// Every attribute a key schema of the request names.
fn key_attributes(request: &Value) -> Vec<String> {
    let schemas = std::iter::once(request.get("KeySchema")).chain(
        ["GlobalSecondaryIndexes", "LocalSecondaryIndexes"]
            .iter()
            .filter_map(|field| request.get(*field)?.as_array())
            .flatten()
            .map(|index| index.get("KeySchema")),
    );
    schemas
        .flatten()
        .filter_map(Value::as_array)
        .flatten()
        .filter_map(|element| element.get("AttributeName")?.as_str())
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn lenient(request: Value) -> Option<Value> {
        let body = serde_json::to_vec(&request).unwrap();
        without_unused_definitions(&body).map(|b| serde_json::from_slice(&b).unwrap())
    }

    #[test]
    fn definitions_no_key_uses_are_dropped() {
        let request = json!({
            "TableName": "t",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "AttributeDefinitions": [
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "gsi1pk", "AttributeType": "S"},
                {"AttributeName": "number", "AttributeType": "N"}
            ],
            "GlobalSecondaryIndexes": [{"IndexName": "g",
                "KeySchema": [{"AttributeName": "gsi1pk", "KeyType": "HASH"}]}]
        });
        let names: Vec<Value> = lenient(request).unwrap()["AttributeDefinitions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["AttributeName"].clone())
            .collect();
        assert_eq!(names, vec![json!("pk"), json!("gsi1pk")]);
    }

    #[test]
    fn a_request_with_nothing_unused_is_left_alone() {
        let request = json!({
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]
        });
        assert_eq!(lenient(request), None);
        assert_eq!(without_unused_definitions(b"not json"), None);
    }
}
