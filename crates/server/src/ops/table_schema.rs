//! The table schema's wire forms and checks that CreateTable and
//! UpdateTable share: attribute definitions, key schemas (classic and
//! multi-attribute GSI keys), secondary indexes and their projections,
//! provisioned throughput against the billing mode, and the stream
//! specification, each with DynamoDB's field constraints and messages.

use crate::validate::Violations;
use ferrodyn_engine::keys::MAX_INDEX_KEY_ATTRIBUTES;
use ferrodyn_engine::schema::{
    AttributeDefinition, BillingMode, IndexDescription, KeySchemaElement, KeyType, Projection,
    ProvisionedThroughputDescription, StreamSpecification,
};
use ferrodyn_types::{DynamoError, Result, ScalarType};
use serde::Deserialize;

#[derive(Deserialize, serde::Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct RawKeyElement {
    pub(crate) attribute_name: Option<String>,
    pub(crate) key_type: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RawAttributeDefinition {
    pub(crate) attribute_name: Option<String>,
    pub(crate) attribute_type: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RawThroughput {
    pub(crate) read_capacity_units: Option<i64>,
    pub(crate) write_capacity_units: Option<i64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RawIndex {
    pub(crate) index_name: Option<String>,
    pub(crate) key_schema: Option<Vec<RawKeyElement>>,
    pub(crate) projection: Option<RawProjection>,
    pub(crate) provisioned_throughput: Option<RawThroughput>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RawProjection {
    pub(crate) projection_type: Option<String>,
    pub(crate) non_key_attributes: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RawStreamSpecification {
    pub(crate) stream_enabled: Option<bool>,
    pub(crate) stream_view_type: Option<String>,
}

pub(crate) const STREAM_VIEW_TYPES: &[&str] =
    &["NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES", "KEYS_ONLY"];

pub(crate) const PROJECTION_TYPES: &[&str] = &["ALL", "KEYS_ONLY", "INCLUDE"];

/// A GSI key: up to 4 HASH and up to 4 RANGE elements.
pub(crate) const MAX_GSI_KEY_ELEMENTS: usize = 2 * MAX_INDEX_KEY_ATTRIBUTES;

/// Provisioned read and write units (each checked present and at least 1).
pub(crate) type Throughput = (u64, u64);

/// A secondary index whose fields passed their constraints.
pub(crate) struct CheckedIndex {
    pub(crate) name: String,
    pub(crate) key_schema: Vec<KeySchemaElement>,
    /// ProjectionType is checked against its enumeration when given; a
    /// missing one is refused later, with DynamoDB's own message.
    pub(crate) projection_type: Option<String>,
    pub(crate) non_key_attributes: Option<Vec<String>>,
    pub(crate) provisioned_throughput: Option<Throughput>,
}

/// StreamSpecification: StreamEnabled required, StreamViewType one of four.
/// `None` when a violation was recorded; `Some(None)` when not given.
pub(crate) fn check_stream(
    v: &mut Violations,
    stream: Option<&RawStreamSpecification>,
) -> Option<Option<StreamSpecification>> {
    let Some(stream) = stream else {
        return Some(None);
    };
    v.not_null("streamSpecification.streamEnabled", &stream.stream_enabled);
    v.one_of(
        "streamSpecification.streamViewType",
        stream.stream_view_type.as_deref(),
        STREAM_VIEW_TYPES,
    );
    Some(Some(StreamSpecification {
        stream_enabled: stream.stream_enabled?,
        stream_view_type: stream.stream_view_type.clone(),
    }))
}

/// AttributeDefinitions members: a name of 1 to 255 characters and a type
/// (B, N or S). `None` when a violation was recorded.
pub(crate) fn check_definitions(
    v: &mut Violations,
    definitions: &[RawAttributeDefinition],
) -> Option<Vec<AttributeDefinition>> {
    let mut out = Some(Vec::with_capacity(definitions.len()));
    for (i, d) in definitions.iter().enumerate() {
        let field = format!("attributeDefinitions.{}.member", i + 1);
        if v.not_null(&format!("{field}.attributeName"), &d.attribute_name) {
            v.length(
                &format!("{field}.attributeName"),
                d.attribute_name.as_deref(),
                1,
                255,
            );
        }
        if v.not_null(&format!("{field}.attributeType"), &d.attribute_type) {
            v.one_of(
                &format!("{field}.attributeType"),
                d.attribute_type.as_deref(),
                &["B", "N", "S"],
            );
        }
        let attribute_type = d.attribute_type.as_deref().and_then(ScalarType::parse);
        let checked =
            d.attribute_name
                .clone()
                .zip(attribute_type)
                .map(|(attribute_name, attribute_type)| AttributeDefinition {
                    attribute_name,
                    attribute_type,
                });
        match (&mut out, checked) {
            (Some(list), Some(d)) => list.push(d),
            _ => out = None,
        }
    }
    out
}

/// One index's fields (`field` its member path): IndexName, KeySchema (GSIs
/// may have multi-attribute keys: up to 4 HASH + 4 RANGE), Projection,
/// ProvisionedThroughput.
pub(crate) fn check_index(
    v: &mut Violations,
    field: &str,
    index: RawIndex,
    max_key_elements: usize,
) -> Option<CheckedIndex> {
    match &index.index_name {
        Some(name) => v.name_rules(&format!("{field}.indexName"), name, 3, 255),
        None => {
            v.not_null(&format!("{field}.indexName"), &index.index_name);
        }
    }
    let key_schema = check_key_elements(
        v,
        &format!("{field}.keySchema"),
        index.key_schema.as_deref(),
        max_key_elements,
    );
    if let Some(projection) = &index.projection {
        for (n, attribute) in projection.non_key_attributes.iter().flatten().enumerate() {
            v.length(
                &format!("{field}.projection.nonKeyAttributes.{}.member", n + 1),
                Some(attribute),
                1,
                255,
            );
        }
        v.one_of(
            &format!("{field}.projection.projectionType"),
            projection.projection_type.as_deref(),
            PROJECTION_TYPES,
        );
    } else {
        v.not_null(&format!("{field}.projection"), &index.projection);
    }
    let throughput = check_throughput(
        v,
        &format!("{field}.provisionedThroughput"),
        index.provisioned_throughput.as_ref(),
    );
    let projection = index.projection?;
    Some(CheckedIndex {
        name: index.index_name?,
        key_schema: key_schema?,
        projection_type: projection.projection_type,
        non_key_attributes: projection.non_key_attributes,
        provisioned_throughput: throughput?,
    })
}

/// A key schema's members: a name of 1 to 255 characters and a key type
/// (HASH or RANGE), 1 to `max` of them. `None` when a violation was recorded.
/// Key elements as AWS echoes them: `[KeySchemaElement(attributeName=p,
/// keyType=HASH), ...]` (the AWS-verified dynamodb-conformance suite,
/// tier3/error-messages/createTable.test.ts; Dynoxide words it the same).
pub(crate) fn shown_key_elements(elements: &[RawKeyElement]) -> String {
    let shown: Vec<String> = elements
        .iter()
        .map(|e| {
            format!(
                "KeySchemaElement(attributeName={}, keyType={})",
                e.attribute_name.as_deref().unwrap_or("null"),
                e.key_type.as_deref().unwrap_or("null")
            )
        })
        .collect();
    format!("[{}]", shown.join(", "))
}

pub(crate) fn check_key_elements(
    v: &mut Violations,
    field: &str,
    elements: Option<&[RawKeyElement]>,
    max: usize,
) -> Option<Vec<KeySchemaElement>> {
    let Some(elements) = elements else {
        v.not_null::<()>(field, &None);
        return None;
    };
    v.count_shown(
        field,
        elements.len(),
        || shown_key_elements(elements),
        1,
        max,
    );
    let mut out = Some(Vec::with_capacity(elements.len()));
    for (i, e) in elements.iter().enumerate() {
        let member = format!("{field}.{}.member", i + 1);
        if let Some(name) = &e.attribute_name {
            v.length(&format!("{member}.attributeName"), Some(name), 1, 255);
        } else {
            v.not_null(&format!("{member}.attributeName"), &e.attribute_name);
        }
        if v.not_null(&format!("{member}.keyType"), &e.key_type) {
            v.one_of(
                &format!("{member}.keyType"),
                e.key_type.as_deref(),
                &["HASH", "RANGE"],
            );
        }
        let key_type = match e.key_type.as_deref() {
            Some("HASH") => Some(KeyType::Hash),
            Some("RANGE") => Some(KeyType::Range),
            _ => None,
        };
        let checked = e
            .attribute_name
            .clone()
            .zip(key_type)
            .map(|(attribute_name, key_type)| KeySchemaElement {
                attribute_name,
                key_type,
            });
        match (&mut out, checked) {
            (Some(list), Some(element)) => list.push(element),
            _ => out = None,
        }
    }
    out
}

/// ProvisionedThroughput: both units present and at least 1. `None` when a
/// violation was recorded; `Some(None)` when not given.
pub(crate) fn check_throughput(
    v: &mut Violations,
    field: &str,
    throughput: Option<&RawThroughput>,
) -> Option<Option<Throughput>> {
    let Some(t) = throughput else {
        return Some(None);
    };
    for (name, value) in [
        ("readCapacityUnits", t.read_capacity_units),
        ("writeCapacityUnits", t.write_capacity_units),
    ] {
        let member = format!("{field}.{name}");
        if v.not_null(&member, &value) {
            v.range(&member, value, 1, None);
        }
    }
    let read = u64::try_from(t.read_capacity_units?).ok()?;
    let write = u64::try_from(t.write_capacity_units?).ok()?;
    Some(Some((read, write)))
}

/// No attribute defined twice.
pub(crate) fn attribute_definitions(
    definitions: Vec<AttributeDefinition>,
) -> Result<Vec<AttributeDefinition>> {
    for (i, d) in definitions.iter().enumerate() {
        if definitions[..i]
            .iter()
            .any(|o| o.attribute_name == d.attribute_name)
        {
            return Err(DynamoError::invalid_parameter(format!(
                "Cannot have two attributes with the same name. Duplicate AttributeName: {}",
                d.attribute_name
            )));
        }
    }
    Ok(definitions)
}

/// Validates a key schema (of the table, or of an index when `index` names
/// it). `multi` allows a GSI's multi-attribute keys: up to four HASH
/// elements, then up to four RANGE elements.
pub(crate) fn key_schema(
    elements: Vec<KeySchemaElement>,
    definitions: &[AttributeDefinition],
    index: Option<&str>,
    multi: bool,
) -> Result<Vec<KeySchemaElement>> {
    let prefix = match index {
        Some(name) => format!("Index KeySchema ({name}): "),
        None => String::new(),
    };
    if elements[0].key_type != KeyType::Hash {
        return Err(DynamoError::validation(format!(
            "{prefix}Invalid KeySchema: The first KeySchemaElement is not a HASH key type"
        )));
    }
    if multi {
        check_multi_attribute_key(&elements, &prefix)?;
    } else if let Some(second) = elements.get(1) {
        if second.key_type != KeyType::Range {
            return Err(DynamoError::validation(format!(
                "{prefix}Invalid KeySchema: The second KeySchemaElement is not a RANGE key type"
            )));
        }
        if second.attribute_name == elements[0].attribute_name {
            if index.is_none() {
                // The table's own schema: AWS's words (the AWS-verified
                // dynamodb-conformance suite, tier3/error-messages/createTable).
                return Err(DynamoError::validation(
                    "Invalid KeySchema: Some index key attribute have no definition",
                ));
            }
            return Err(DynamoError::invalid_parameter(format!(
                "{prefix}Both the Hash Key and the Range Key element in the KeySchema have the same name"
            )));
        }
    }
    let missing: Vec<&str> = elements
        .iter()
        .filter(|e| {
            !definitions
                .iter()
                .any(|d| d.attribute_name == e.attribute_name)
        })
        .map(|e| e.attribute_name.as_str())
        .collect();
    if !missing.is_empty() {
        let defined: Vec<&str> = definitions
            .iter()
            .map(|d| d.attribute_name.as_str())
            .collect();
        return Err(DynamoError::invalid_parameter(format!(
            "Some index key attributes are not defined in AttributeDefinitions. Keys: [{}], AttributeDefinitions: [{}]",
            missing.join(", "),
            defined.join(", ")
        )));
    }
    Ok(elements)
}

/// The rules of a GSI key schema beyond "the first element is HASH": HASH
/// elements before RANGE ones, at most four of each, no name twice. A
/// classic two-element schema keeps the classic messages.
pub(crate) fn check_multi_attribute_key(elements: &[KeySchemaElement], prefix: &str) -> Result<()> {
    let invalid =
        |detail: String| DynamoError::validation(format!("{prefix}Invalid KeySchema: {detail}"));
    if let Some(first_range) = elements.iter().position(|e| e.key_type == KeyType::Range) {
        if let Some(late) = elements[first_range..]
            .iter()
            .find(|e| e.key_type == KeyType::Hash)
        {
            return Err(invalid(format!(
                "All HASH key elements must precede the RANGE key elements; HASH key element {} follows RANGE key element {}",
                late.attribute_name, elements[first_range].attribute_name
            )));
        }
    }
    for (kind, name) in [(KeyType::Hash, "HASH"), (KeyType::Range, "RANGE")] {
        let count = elements.iter().filter(|e| e.key_type == kind).count();
        if count > MAX_INDEX_KEY_ATTRIBUTES {
            return Err(invalid(format!(
                "The number of {name} key elements ({count}) exceeds the limit of {MAX_INDEX_KEY_ATTRIBUTES}"
            )));
        }
    }
    let duplicate = elements.iter().enumerate().find(|(i, e)| {
        elements[..*i]
            .iter()
            .any(|d| d.attribute_name == e.attribute_name)
    });
    if let Some((_, e)) = duplicate {
        if let [hash, range] = elements {
            if hash.key_type == KeyType::Hash && range.key_type == KeyType::Range {
                return Err(DynamoError::invalid_parameter(format!(
                    "{prefix}Both the Hash Key and the Range Key element in the KeySchema have the same name"
                )));
            }
        }
        return Err(DynamoError::invalid_parameter(format!(
            "{prefix}Two KeySchemaElements have the same name: {}",
            e.attribute_name
        )));
    }
    Ok(())
}

/// The throughput a billing mode takes: PAY_PER_REQUEST none, PROVISIONED
/// both units (`what` names the index, for its messages).
pub(crate) fn throughput_for_mode(
    mode: BillingMode,
    throughput: Option<Throughput>,
    what: &str,
) -> Result<Option<Throughput>> {
    match (mode, throughput) {
        (BillingMode::PayPerRequest, Some(_)) => Err(DynamoError::invalid_parameter(format!(
            "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST{what}"
        ))),
        (BillingMode::PayPerRequest, None) => Ok(None),
        (BillingMode::Provisioned, None) => Err(DynamoError::invalid_parameter(format!(
            "ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is PROVISIONED{what}"
        ))),
        (BillingMode::Provisioned, Some(t)) => Ok(Some(t)),
    }
}

/// Validates GSIs (`table_hash` None) or LSIs (`table_hash` the table's partition key).
pub(crate) fn indexes(
    checked: Vec<CheckedIndex>,
    definitions: &[AttributeDefinition],
    mode: BillingMode,
    table_hash: Option<&str>,
) -> Result<Vec<IndexDescription>> {
    let mut out = Vec::with_capacity(checked.len());
    for index in checked {
        let name = index.name;
        let keys = key_schema(
            index.key_schema,
            definitions,
            Some(&name),
            table_hash.is_none(),
        )?;
        let projection = projection(&name, index.projection_type, index.non_key_attributes)?;
        let throughput = match table_hash {
            Some(hash) => {
                check_local_key(&name, &keys, hash)?;
                None
            }
            None => Some(
                throughput_for_mode(
                    mode,
                    index.provisioned_throughput,
                    &format!(" (for index {name})"),
                )?
                .map(|(read, write)| ProvisionedThroughputDescription {
                    number_of_decreases_today: 0,
                    read_capacity_units: read,
                    write_capacity_units: write,
                    ..Default::default()
                })
                .unwrap_or_default(),
            ),
        };
        out.push(IndexDescription {
            index_name: name,
            key_schema: keys,
            projection,
            index_status: None,
            backfilling: None,
            provisioned_throughput: throughput,
            index_size_bytes: 0,
            item_count: 0,
            index_arn: String::new(),
        });
    }
    Ok(out)
}

/// An index's Projection: a ProjectionType, and NonKeyAttributes exactly
/// when it is INCLUDE, without duplicates.
pub(crate) fn projection(
    index: &str,
    projection_type: Option<String>,
    non_key_attributes: Option<Vec<String>>,
) -> Result<Projection> {
    // The API reference calls ProjectionType optional; DynamoDB refuses
    // a Projection without one.
    let Some(projection_type) = projection_type else {
        return Err(DynamoError::validation("Unknown ProjectionType: null"));
    };
    if let Some(duplicate) = first_duplicate(non_key_attributes.iter().flatten()) {
        return Err(DynamoError::invalid_parameter(format!(
            "Duplicate attribute name in NonKeyAttributes of index {index}: {duplicate}"
        )));
    }
    match (projection_type.as_str(), &non_key_attributes) {
        ("INCLUDE", None) => {
            return Err(DynamoError::invalid_parameter(
                "ProjectionType is INCLUDE, but NonKeyAttributes is not specified",
            ))
        }
        ("ALL" | "KEYS_ONLY", Some(_)) => {
            return Err(DynamoError::invalid_parameter(format!(
                "ProjectionType is {projection_type}, but NonKeyAttributes is specified"
            )))
        }
        _ => {}
    }
    Ok(Projection {
        projection_type: Some(projection_type),
        non_key_attributes,
    })
}

/// An LSI's key: the table's partition key and a sort key of its own.
pub(crate) fn check_local_key(
    index: &str,
    keys: &[KeySchemaElement],
    table_hash: &str,
) -> Result<()> {
    if keys.len() != 2 {
        return Err(DynamoError::invalid_parameter(format!(
            "Index KeySchema does not have a range key for index: {index}"
        )));
    }
    if keys[0].attribute_name != table_hash {
        return Err(DynamoError::invalid_parameter(format!(
            "Table KeySchema and Index KeySchema must have the same hash key for index: {index}"
        )));
    }
    Ok(())
}

/// The first name that appears twice.
pub(crate) fn first_duplicate<'a>(names: impl Iterator<Item = &'a String>) -> Option<&'a String> {
    let mut seen = std::collections::HashSet::new();
    names.into_iter().find(|name| !seen.insert(*name))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elements(spec: &[(&str, &str)]) -> Vec<KeySchemaElement> {
        spec.iter()
            .map(|(name, kind)| KeySchemaElement {
                attribute_name: name.to_string(),
                key_type: if *kind == "HASH" {
                    KeyType::Hash
                } else {
                    KeyType::Range
                },
            })
            .collect()
    }

    fn definitions(names: &[&str]) -> Vec<AttributeDefinition> {
        names
            .iter()
            .map(|n| AttributeDefinition {
                attribute_name: n.to_string(),
                attribute_type: ScalarType::S,
            })
            .collect()
    }

    fn gsi_key(spec: &[(&str, &str)]) -> std::result::Result<usize, String> {
        let defs = definitions(&["a", "b", "c", "d", "e", "f", "g", "h", "i"]);
        key_schema(elements(spec), &defs, Some("gsi"), true)
            .map(|k| k.len())
            .map_err(|e| e.message)
    }

    #[test]
    fn multi_attribute_gsi_key_schemas() {
        let h = "HASH";
        let r = "RANGE";
        assert_eq!(gsi_key(&[("a", h), ("b", h)]), Ok(2));
        assert_eq!(
            gsi_key(&[
                ("a", h),
                ("b", h),
                ("c", h),
                ("d", h),
                ("e", r),
                ("f", r),
                ("g", r),
                ("h", r)
            ]),
            Ok(8)
        );
        let prefix = "Index KeySchema (gsi): ";
        assert_eq!(
            gsi_key(&[("a", h), ("b", r), ("c", h)]).unwrap_err(),
            format!("{prefix}Invalid KeySchema: All HASH key elements must precede the RANGE key elements; HASH key element c follows RANGE key element b")
        );
        assert_eq!(
            gsi_key(&[("a", h), ("b", h), ("c", h), ("d", h), ("e", h)]).unwrap_err(),
            format!("{prefix}Invalid KeySchema: The number of HASH key elements (5) exceeds the limit of 4")
        );
        assert_eq!(
            gsi_key(&[("a", h), ("b", r), ("c", r), ("d", r), ("e", r), ("f", r)]).unwrap_err(),
            format!("{prefix}Invalid KeySchema: The number of RANGE key elements (5) exceeds the limit of 4")
        );
        assert_eq!(
            gsi_key(&[("a", h), ("b", h), ("a", r)]).unwrap_err(),
            format!("One or more parameter values were invalid: {prefix}Two KeySchemaElements have the same name: a")
        );
        assert_eq!(
            gsi_key(&[("a", h), ("a", r)]).unwrap_err(),
            format!("One or more parameter values were invalid: {prefix}Both the Hash Key and the Range Key element in the KeySchema have the same name")
        );
        assert_eq!(
            gsi_key(&[("a", r), ("b", h)]).unwrap_err(),
            format!("{prefix}Invalid KeySchema: The first KeySchemaElement is not a HASH key type")
        );
        assert!(gsi_key(&[("a", h), ("zz", h)]).unwrap_err().contains(
            "Some index key attributes are not defined in AttributeDefinitions. Keys: [zz]"
        ));
        // Tables (and LSIs) keep the one-HASH-one-RANGE rule.
        let defs = definitions(&["a", "b"]);
        assert_eq!(
            key_schema(elements(&[("a", h), ("b", h)]), &defs, None, false)
                .unwrap_err()
                .message,
            "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type"
        );
    }
}
