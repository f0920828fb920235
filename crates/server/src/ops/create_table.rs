//! CreateTable: field constraints, then the key schema against the attribute
//! definitions, billing mode against throughput, and the secondary indexes.

use crate::ops::common::ResponseBody;
use crate::ops::global_tables;

use crate::ops::table_schema::{
    attribute_definitions, check_definitions, check_index, check_key_elements, check_stream,
    check_throughput, indexes, key_schema, throughput_for_mode, CheckedIndex,
    RawAttributeDefinition, RawIndex, RawKeyElement, RawStreamSpecification, RawThroughput,
    Throughput, MAX_GSI_KEY_ELEMENTS,
};
use crate::validate::Violations;
use ferrodyn_engine::schema::{
    AttributeDefinition, BillingMode, IndexDescription, KeySchemaElement, StreamSpecification,
};
use ferrodyn_engine::{Engine, NewTable};
use ferrodyn_types::limits::{MAX_GSIS, MAX_LSIS};
use ferrodyn_types::{DynamoError, Result};
use serde::Deserialize;
use std::sync::Arc;

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Request {
    table_name: Option<String>,
    key_schema: Option<Vec<RawKeyElement>>,
    attribute_definitions: Option<Vec<RawAttributeDefinition>>,
    billing_mode: Option<String>,
    provisioned_throughput: Option<RawThroughput>,
    global_secondary_indexes: Option<Vec<RawIndex>>,
    local_secondary_indexes: Option<Vec<RawIndex>>,
    stream_specification: Option<RawStreamSpecification>,
    deletion_protection_enabled: Option<bool>,
    table_class: Option<String>,
    #[serde(rename = "SSESpecification")]
    sse_specification: Option<serde_json::Value>,
    tags: Option<Vec<crate::ops::tags::Tag>>,
    resource_policy: Option<String>,
    global_table_source_arn: Option<String>,
    global_table_settings_replication_mode: Option<String>,
    vector_indexes: Option<Vec<crate::ops::vector_schema::RawVectorIndex>>,
}

/// A CreateTable request whose fields passed their constraints.
struct Checked {
    table_name: String,
    key_schema: Vec<KeySchemaElement>,
    attribute_definitions: Vec<AttributeDefinition>,
    billing_mode: BillingMode,
    provisioned_throughput: Option<Throughput>,
    global_secondary_indexes: Vec<CheckedIndex>,
    /// `Some` (even empty) when the request has the field: LSIs then need
    /// a table sort key.
    local_secondary_indexes: Option<Vec<CheckedIndex>>,
    stream: Option<StreamSpecification>,
    deletion_protection: bool,
    table_class: Option<String>,
    tags: Vec<(String, String)>,
    resource_policy: Option<String>,
    sse_enabled: bool,
    vector_indexes: Vec<crate::ops::vector_schema::RawChecked>,
}

pub fn run(engine: &Arc<Engine>, mut request: Request) -> Result<Vec<u8>> {
    let source = global_tables::SourceRequest {
        table_name: request.table_name.clone(),
        source_arn: request.global_table_source_arn.take(),
        mode: request.global_table_settings_replication_mode.take(),
        others: has_table_parameters(&request),
    };
    if let Some(answer) = global_tables::create_from_source(engine, source) {
        return answer;
    }
    let new_table = validate(request)?;
    let description = engine.create_table(new_table)?;
    let mut body = ResponseBody::default();
    body.value(
        "TableDescription",
        serde_json::to_value(description).expect("plain data always serialises"),
    );
    body.finish()
}

/// Whether the request gives anything of the table besides its name.
fn has_table_parameters(request: &Request) -> bool {
    request.key_schema.is_some()
        || request.attribute_definitions.is_some()
        || request.billing_mode.is_some()
        || request.provisioned_throughput.is_some()
        || request.global_secondary_indexes.is_some()
        || request.local_secondary_indexes.is_some()
        || request.stream_specification.is_some()
        || request.deletion_protection_enabled.is_some()
        || request.table_class.is_some()
        || request.sse_specification.is_some()
        || request.tags.is_some()
        || request.resource_policy.is_some()
}

/// The field constraints, then the rules between fields, in DynamoDB's order.
pub(crate) fn validate(request: Request) -> Result<NewTable> {
    let checked = check(request)?;
    if checked.sse_enabled {
        return Err(DynamoError::validation(
            "Server-side encryption with KMS keys is not supported by Ferrodyn (SSESpecification.Enabled=true)",
        ));
    }
    if let Some(policy) = &checked.resource_policy {
        ferrodyn_engine::policies::check_policy_document(policy)?;
    }
    let definitions = attribute_definitions(checked.attribute_definitions)?;
    let key_schema = key_schema(checked.key_schema, &definitions, None, false)?;
    let billing_mode = checked.billing_mode;
    let provisioned = throughput_for_mode(billing_mode, checked.provisioned_throughput, "")?;
    let gsis = indexes(
        checked.global_secondary_indexes,
        &definitions,
        billing_mode,
        None,
    )?;
    let lsis = match checked.local_secondary_indexes {
        Some(list) => {
            if key_schema.len() < 2 {
                return Err(DynamoError::invalid_parameter(
                    "Table KeySchema does not have a range key, which is required when specifying a LocalSecondaryIndex",
                ));
            }
            let table_hash = key_schema[0].attribute_name.as_str();
            indexes(list, &definitions, billing_mode, Some(table_hash))?
        }
        None => Vec::new(),
    };
    let vectors = (checked.vector_indexes.into_iter())
        .map(|index| index.into_description())
        .collect::<Result<Vec<_>>>()?;
    check_vectors(
        &key_schema,
        &definitions,
        billing_mode,
        &gsis,
        &lsis,
        &vectors,
    )?;
    let vector_attributes = crate::ops::vector_schema::schema_attributes(&vectors);
    check_index_set(&key_schema, &definitions, &gsis, &lsis, &vector_attributes)?;
    if let Some(s) = &checked.stream {
        if s.stream_enabled && s.stream_view_type.is_none() {
            return Err(DynamoError::validation(
                "One or more parameter values were invalid: StreamViewType is required when StreamEnabled is true",
            ));
        }
    }
    Ok(NewTable {
        name: checked.table_name,
        key_schema,
        attribute_definitions: definitions,
        billing_mode,
        provisioned,
        global_secondary_indexes: gsis,
        local_secondary_indexes: lsis,
        vector_indexes: vectors,
        stream: checked.stream,
        deletion_protection: checked.deletion_protection,
        table_class: checked.table_class,
        tags: checked.tags,
        resource_policy: checked.resource_policy,
    })
}

/// The field constraints, reported together ("N validation errors
/// detected"); the request in checked form.
fn check(request: Request) -> Result<Checked> {
    if request.table_name.is_none() {
        // Checked before the constraints, in its own words (the AWS-verified
        // dynamodb-conformance suite, tier3/error-messages/createTable.test.ts);
        // the other operations report a missing TableName as a violation.
        return Err(DynamoError::validation(
            "The parameter 'TableName' is required but was not present in the request",
        ));
    }
    let mut v = Violations::default();
    let key_schema = check_key_elements(&mut v, "keySchema", request.key_schema.as_deref(), 2);
    v.table_name("tableName", &request.table_name);
    let definitions = match &request.attribute_definitions {
        Some(definitions) => check_definitions(&mut v, definitions),
        None => {
            v.not_null("attributeDefinitions", &request.attribute_definitions);
            None
        }
    };
    v.one_of(
        "billingMode",
        request.billing_mode.as_deref(),
        &["PROVISIONED", "PAY_PER_REQUEST"],
    );
    let throughput = check_throughput(
        &mut v,
        "provisionedThroughput",
        request.provisioned_throughput.as_ref(),
    );
    let stream = check_stream(&mut v, request.stream_specification.as_ref());
    v.one_of(
        "tableClass",
        request.table_class.as_deref(),
        &["STANDARD", "STANDARD_INFREQUENT_ACCESS"],
    );
    let gsis = check_indexes(
        &mut v,
        "globalSecondaryIndexes",
        request.global_secondary_indexes.unwrap_or_default(),
        MAX_GSI_KEY_ELEMENTS,
    );
    let lsis = request
        .local_secondary_indexes
        .map(|list| check_indexes(&mut v, "localSecondaryIndexes", list, 2));
    let tags = check_tags(&mut v, request.tags.as_deref());
    let vectors = crate::ops::vector_schema::check_vector_indexes(&mut v, request.vector_indexes);
    let billing_mode = match request.billing_mode.as_deref() {
        Some("PAY_PER_REQUEST") => BillingMode::PayPerRequest,
        _ => BillingMode::Provisioned,
    };
    let sse_enabled = request
        .sse_specification
        .as_ref()
        .is_some_and(|s| s.get("Enabled") == Some(&serde_json::Value::Bool(true)));
    let checked = (|| {
        Some(Checked {
            table_name: request.table_name?,
            key_schema: key_schema?,
            attribute_definitions: definitions?,
            billing_mode,
            provisioned_throughput: throughput?,
            global_secondary_indexes: gsis?,
            local_secondary_indexes: lsis.map_or(Some(None), |l| l.map(Some))?,
            stream: stream?,
            deletion_protection: request.deletion_protection_enabled.unwrap_or(false),
            table_class: request.table_class,
            tags,
            resource_policy: request.resource_policy,
            sse_enabled,
            vector_indexes: vectors?,
        })
    })();
    v.finish_with(checked)
}

/// CreateTable's Tags: each tag checked as TagResource checks it, and at
/// most [`ferrodyn_engine::tags::MAX_TAGS`] of them.
fn check_tags(v: &mut Violations, tags: Option<&[crate::ops::tags::Tag]>) -> Vec<(String, String)> {
    let Some(tags) = tags else {
        return Vec::new();
    };
    let pairs = crate::ops::tags::validate_tags(v, "tags", tags);
    v.count("tags", Some(tags), 0, ferrodyn_engine::tags::MAX_TAGS);
    pairs
}

/// A list of GSIs or LSIs (`kind` their field name); `None` when a
/// violation was recorded.
fn check_indexes(
    v: &mut Violations,
    kind: &str,
    indexes: Vec<RawIndex>,
    max_key_elements: usize,
) -> Option<Vec<CheckedIndex>> {
    let mut out = Some(Vec::with_capacity(indexes.len()));
    for (i, index) in indexes.into_iter().enumerate() {
        let field = format!("{kind}.{}.member", i + 1);
        let checked = check_index(v, &field, index, max_key_elements);
        match (&mut out, checked) {
            (Some(list), Some(index)) => list.push(index),
            _ => out = None,
        }
    }
    out
}

/// The rules across the table's indexes: the per-table counts, no index
/// name twice, and every AttributeDefinition used by some key.
fn check_index_set(
    key_schema: &[KeySchemaElement],
    definitions: &[AttributeDefinition],
    gsis: &[IndexDescription],
    lsis: &[IndexDescription],
    vector_attributes: &[&str],
) -> Result<()> {
    if gsis.len() > MAX_GSIS {
        return Err(DynamoError::validation(format!(
            "One or more parameter values were invalid: GlobalSecondaryIndex count exceeds the per-table limit of {MAX_GSIS}"
        )));
    }
    if lsis.len() > MAX_LSIS {
        return Err(DynamoError::invalid_parameter(format!(
            "LocalSecondaryIndex count exceeds the per-table limit of {MAX_LSIS}"
        )));
    }
    let mut used: Vec<&str> = key_schema
        .iter()
        .map(|k| k.attribute_name.as_str())
        .chain(vector_attributes.iter().copied())
        .collect();
    let mut names: Vec<&str> = Vec::new();
    for index in gsis.iter().chain(lsis) {
        if names.contains(&index.index_name.as_str()) {
            return Err(DynamoError::invalid_parameter(format!(
                "Duplicate index name: {}",
                index.index_name
            )));
        }
        names.push(&index.index_name);
        used.extend(index.key_schema.iter().map(|k| k.attribute_name.as_str()));
    }
    if definitions
        .iter()
        .any(|d| !used.contains(&d.attribute_name.as_str()))
    {
        return Err(unused_definitions(definitions, &used, !names.is_empty()));
    }
    Ok(())
}

/// AttributeDefinitions that no key uses. With indexes, AWS lists both
/// sides, sorted (moto's test_create_table_with_redundant_attributes).
fn unused_definitions(
    definitions: &[AttributeDefinition],
    used: &[&str],
    has_indexes: bool,
) -> DynamoError {
    if !has_indexes {
        return DynamoError::invalid_parameter(
            "Number of attributes in KeySchema does not exactly match number of attributes defined in AttributeDefinitions",
        );
    }
    let mut defined: Vec<&str> = definitions
        .iter()
        .map(|d| d.attribute_name.as_str())
        .collect();
    defined.sort_unstable();
    let mut keys: Vec<&str> = used.to_vec();
    keys.sort_unstable();
    keys.dedup();
    DynamoError::invalid_parameter(format!(
        "Some AttributeDefinitions are not used. AttributeDefinitions: [{}], keys used: [{}]",
        defined.join(", "),
        keys.join(", ")
    ))
}

/// The engine's rules across a new table's vector indexes, on the table
/// as it would be created.
fn check_vectors(
    key_schema: &[KeySchemaElement],
    definitions: &[AttributeDefinition],
    billing_mode: BillingMode,
    gsis: &[IndexDescription],
    lsis: &[IndexDescription],
    vectors: &[ferrodyn_engine::schema::VectorIndexDescription],
) -> Result<()> {
    if vectors.is_empty() {
        return Ok(());
    }
    let table = ferrodyn_engine::schema::TableDescription::proposed(
        key_schema.to_vec(),
        definitions.to_vec(),
        billing_mode,
        (gsis.to_vec(), lsis.to_vec()),
    );
    ferrodyn_engine::vectors::check_index_set(&table, vectors)
}
