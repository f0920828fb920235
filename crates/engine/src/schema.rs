//! Table definitions in DynamoDB's wire shape (CreateTable input, the
//! TableDescription that DescribeTable returns). The catalog persists the
//! description as-is, so what DescribeTable shows is what was stored.

use ferrodyn_types::ScalarType;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "PascalCase")]
pub struct KeySchemaElement {
    pub attribute_name: String,
    pub key_type: KeyType,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "UPPERCASE")]
pub enum KeyType {
    Hash,
    Range,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "PascalCase")]
pub struct AttributeDefinition {
    pub attribute_name: String,
    pub attribute_type: ScalarType,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "PascalCase")]
pub struct ProvisionedThroughputDescription {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_increase_date_time: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_decrease_date_time: Option<f64>,
    pub number_of_decreases_today: u64,
    pub read_capacity_units: u64,
    pub write_capacity_units: u64,
}

impl ProvisionedThroughputDescription {
    /// Sets new units at `now`, noting an increase or a decrease (and
    /// counting today's decreases) as DescribeTable reports them.
    pub fn set(&mut self, read: u64, write: u64, now: f64) {
        let old = (self.read_capacity_units, self.write_capacity_units);
        if read > old.0 || write > old.1 {
            self.last_increase_date_time = Some(now);
        }
        if read < old.0 || write < old.1 {
            self.last_decrease_date_time = Some(now);
            self.number_of_decreases_today += 1;
        }
        self.read_capacity_units = read;
        self.write_capacity_units = write;
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "PascalCase")]
pub struct BillingModeSummary {
    pub billing_mode: BillingMode,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_update_to_pay_per_request_date_time: Option<f64>,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum BillingMode {
    Provisioned,
    PayPerRequest,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "PascalCase")]
pub struct Projection {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub projection_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub non_key_attributes: Option<Vec<String>>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "PascalCase")]
pub struct StreamSpecification {
    pub stream_enabled: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_view_type: Option<String>,
}

/// A secondary index as DescribeTable shows it (GSI or LSI).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "PascalCase")]
pub struct IndexDescription {
    pub index_name: String,
    pub key_schema: Vec<KeySchemaElement>,
    pub projection: Projection,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backfilling: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provisioned_throughput: Option<ProvisionedThroughputDescription>,
    pub index_size_bytes: u64,
    pub item_count: u64,
    pub index_arn: String,
}

/// DescribeTable's `Table` object.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "PascalCase")]
pub struct TableDescription {
    pub table_name: String,
    pub table_id: String,
    pub table_arn: String,
    pub table_status: String,
    pub creation_date_time: f64,
    pub key_schema: Vec<KeySchemaElement>,
    pub attribute_definitions: Vec<AttributeDefinition>,
    pub provisioned_throughput: ProvisionedThroughputDescription,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub billing_mode_summary: Option<BillingModeSummary>,
    pub item_count: u64,
    pub table_size_bytes: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_secondary_indexes: Option<Vec<IndexDescription>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_secondary_indexes: Option<Vec<IndexDescription>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_specification: Option<StreamSpecification>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest_stream_arn: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest_stream_label: Option<String>,
    pub deletion_protection_enabled: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_class_summary: Option<serde_json::Value>,
    /// Tables restored from a backup: where from, and whether the restore
    /// is still filling the table (TableStatus CREATING until it ends).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restore_summary: Option<RestoreSummary>,
    /// Global tables (replication/): the other replicas, the version, the
    /// consistency mode and the witnesses, from the replication group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<Vec<serde_json::Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_table_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multi_region_consistency: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_table_witnesses: Option<Vec<serde_json::Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_table_settings_replication_mode: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disassociation_protection_enabled: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vector_indexes: Option<Vec<VectorIndexDescription>>,
}

/// A vector index's attribute (CreateTable's `VectorAttribute`).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "PascalCase")]
pub struct VectorAttributeDefinition {
    pub attribute_name: String,
}

/// One element of a vector index's `SearchSchema`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "PascalCase")]
pub struct SearchSchemaElement {
    pub attribute_name: String,
    pub search_schema_element_type: SearchSchemaElementType,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SearchSchemaElementType {
    Hash,
    InlineFilter,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum DistanceFunction {
    Cosine,
    Euclidean,
    DotProduct,
}

/// A vector index as DescribeTable shows it (and, without the status
/// fields, as CreateTable and UpdateTable take it).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "PascalCase")]
pub struct VectorIndexDescription {
    pub index_name: String,
    pub vector_attribute: VectorAttributeDefinition,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search_schema: Option<Vec<SearchSchemaElement>>,
    pub projection: Projection,
    pub dimensions: u64,
    pub distance_function: DistanceFunction,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_status: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backfilling: Option<bool>,
    #[serde(default)]
    pub index_size_bytes: u64,
    #[serde(default)]
    pub item_count: u64,
    #[serde(default)]
    pub index_arn: String,
}

/// DescribeTable's `RestoreSummary`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "PascalCase")]
pub struct RestoreSummary {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_backup_arn: Option<String>,
    pub source_table_arn: String,
    pub restore_date_time: f64,
    pub restore_in_progress: bool,
}

impl TableDescription {
    /// A description of a table CreateTable is about to create, for the
    /// checks that read one (its indexes' rules).
    pub fn proposed(
        key_schema: Vec<KeySchemaElement>,
        attribute_definitions: Vec<AttributeDefinition>,
        billing_mode: BillingMode,
        (gsis, lsis): (Vec<IndexDescription>, Vec<IndexDescription>),
    ) -> TableDescription {
        TableDescription {
            table_name: String::new(),
            table_id: String::new(),
            table_arn: String::new(),
            table_status: "CREATING".into(),
            creation_date_time: 0.0,
            key_schema,
            attribute_definitions,
            provisioned_throughput: ProvisionedThroughputDescription::default(),
            billing_mode_summary: Some(BillingModeSummary {
                billing_mode,
                last_update_to_pay_per_request_date_time: None,
            }),
            item_count: 0,
            table_size_bytes: 0,
            global_secondary_indexes: Some(gsis),
            local_secondary_indexes: Some(lsis),
            stream_specification: None,
            latest_stream_arn: None,
            latest_stream_label: None,
            deletion_protection_enabled: false,
            table_class_summary: None,
            restore_summary: None,
            replicas: None,
            global_table_version: None,
            multi_region_consistency: None,
            global_table_witnesses: None,
            global_table_settings_replication_mode: None,
            disassociation_protection_enabled: None,
            vector_indexes: None,
        }
    }

    /// Whether the table is still being created (a restore filling it):
    /// items cannot be read or written yet.
    pub fn is_creating(&self) -> bool {
        self.table_status == "CREATING"
    }

    pub fn billing_mode(&self) -> BillingMode {
        self.billing_mode_summary
            .as_ref()
            .map_or(BillingMode::Provisioned, |b| b.billing_mode)
    }
}

/// A resource-based policy attached to a table or one of its streams
/// (policies.rs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResourcePolicy {
    pub document: String,
    /// Milliseconds since the epoch when this revision was attached, as
    /// AWS's revision ids are (they compare in time order as numbers; a
    /// revision is always greater than the one it replaced).
    pub revision_id: String,
}
