//! The line formats ImportTable reads (imports.rs): DynamoDB JSON lines
//! (`{"Item": {...}}`, what an export's data files hold), Amazon Ion
//! (`$ion_1_0 {Item:{...}}`, what an ION export's hold; [`ion`]) and CSV (a
//! header row, or the request's HeaderList; key attributes typed by the
//! table's AttributeDefinitions, every other value a string, as DynamoDB
//! imports CSV).

use crate::keys::KeySchema;
use ferrodyn_types::{AttributeValue, Item, Number, ScalarType};

mod ion;

pub(crate) use ion::ion_units;

/// DYNAMODB_JSON, ION or CSV (with its delimiter and optional header).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum InputFormat {
    DynamodbJson,
    Ion,
    Csv {
        delimiter: u8,
        header: Option<Vec<String>>,
    },
}

/// The items of one object's text, and whether it stopped at a unit that
/// could not become an item: as DynamoDB does, the first such unit
/// abandons the rest of its object (and counts as one error).
pub fn parse_object(text: &str, format: &InputFormat, schema: &KeySchema) -> (Vec<Item>, bool) {
    let units: Box<dyn Iterator<Item = Result<Item, String>>> = match format {
        InputFormat::DynamodbJson => Box::new(json_items(text, schema)),
        InputFormat::Ion => Box::new(ion::ion_items(text, schema)),
        InputFormat::Csv { delimiter, header } => {
            Box::new(csv_items(text, *delimiter, header.as_deref(), schema).into_iter())
        }
    };
    let mut items = Vec::new();
    for unit in units {
        match unit {
            Ok(item) => items.push(item),
            Err(_) => return (items, true),
        }
    }
    (items, false)
}

/// DynamoDB JSON input: a stream of `{"Item": ...}` objects (one a line,
/// or several on one line; blank lines and empty objects yield nothing).
fn json_items<'a>(
    text: &'a str,
    schema: &'a KeySchema,
) -> impl Iterator<Item = Result<Item, String>> + 'a {
    (serde_json::Deserializer::from_str(text).into_iter::<serde_json::Value>())
        .filter(|unit| !matches!(unit, Ok(serde_json::Value::Object(map)) if map.is_empty()))
        .map(move |unit| {
            let value = unit.map_err(|e| format!("not JSON: {e}"))?;
            let item = value.get("Item").ok_or("no Item member")?;
            let item: Item = serde_json::from_value(item.clone())
                .map_err(|e| format!("not a DynamoDB JSON item: {e}"))?;
            keyed(item, schema)
        })
}

/// The item, if it holds the table's key with the right types.
fn keyed(item: Item, schema: &KeySchema) -> Result<Item, String> {
    schema.validate_item(&item).map_err(|e| e.message.clone())?;
    Ok(item)
}

fn csv_items(
    text: &str,
    delimiter: u8,
    header: Option<&[String]>,
    schema: &KeySchema,
) -> Vec<Result<Item, String>> {
    let mut reader = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(header.is_none())
        .flexible(true)
        .from_reader(text.as_bytes());
    let names: Vec<String> = match header {
        Some(names) => names.to_vec(),
        None => match reader.headers() {
            Ok(row) => row.iter().map(str::to_string).collect(),
            Err(e) => return vec![Err(format!("no header row: {e}"))],
        },
    };
    (reader.records())
        .map(|record| {
            let record = record.map_err(|e| format!("unreadable CSV row: {e}"))?;
            let mut item = Item::new();
            for (name, field) in names.iter().zip(record.iter()) {
                let ty = schema.attributes().find(|a| &a.name == name).map(|a| a.ty);
                item.insert(name.clone(), csv_value(field, ty)?);
            }
            keyed(item, schema)
        })
        .collect()
}

/// A CSV field: typed for a key attribute, a string otherwise.
fn csv_value(field: &str, key_type: Option<ScalarType>) -> Result<AttributeValue, String> {
    use base64::Engine as _;
    match key_type {
        Some(ScalarType::N) => Number::parse(field)
            .map(AttributeValue::N)
            .map_err(|_| format!("key value {field:?} is not a number")),
        Some(ScalarType::B) => base64::engine::general_purpose::STANDARD
            .decode(field)
            .map(AttributeValue::B)
            .map_err(|_| format!("key value {field:?} is not base64")),
        _ => Ok(AttributeValue::S(field.to_string())),
    }
}
