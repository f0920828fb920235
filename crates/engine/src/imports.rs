//! ImportTable, DescribeImport and ListImports: a new table filled from the
//! objects under an S3 prefix (DynamoDB JSON or Amazon Ion lines, as a
//! DynamoDB export's `data/` files hold them, or CSV; gzipped,
//! zstd-compressed or not), as DynamoDB imports do:
//!
//! - The table is created at once and stays CREATING while the import runs
//!   (no client reads or writes it), then ACTIVE; items go in through the
//!   ordinary write path, so GSIs and statistics follow.
//! - As DynamoDB does (docs/design/exports.md §4): the first unit of an
//!   object that is no item of the table (unreadable, no key, a key of the
//!   wrong type, a compression mismatch) abandons the rest of that object
//!   and counts one error; the import goes on with the next object. With
//!   any error it ends FAILED (ItemValidationError) and the table ACTIVE
//!   with the valid items. ProcessedItemCount = ImportedItemCount +
//!   ErrorCount; ProcessedSizeBytes counts uncompressed bytes.
//! - A store that cannot be read fails the import (FAILED, its FailureCode
//!   and FailureMessage) and removes the table, as DynamoDB does.
//! - ClientToken (§4): the TableName is checked first (taken, other than
//!   by the table the token's import is still filling: ResourceInUse);
//!   then a replay returns the earlier import, whatever its source, unless
//!   its TableName differs (ImportConflictException).

use crate::exports::{newest_first, read_page_token, JobKind};
use crate::imports_format::{parse_object, InputFormat};
use crate::keyspace;
use crate::table::Table;
use crate::{Engine, NewTable};
use ferrodyn_storage::WriteOp;
use ferrodyn_types::{DynamoError, ErrorKind, Item, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Read;
use std::sync::Arc;

/// Items written per commit.
const IMPORT_BATCH: usize = 100;

/// ListImports' NextToken tag: "imports\0" (crate::exports::page_token).
const IMPORTS_TAG: u64 = 0x696d_706f_7274_7300;

/// A validated ImportTable request.
#[derive(Clone)]
pub struct ImportRequest {
    pub bucket: String,
    pub prefix: String,
    pub format: InputFormat,
    pub compression: Compression,
    pub table: NewTable,
    pub client_token: Option<String>,
    /// The request's S3BucketSource, InputFormat, InputFormatOptions,
    /// InputCompressionType and TableCreationParameters, echoed in the
    /// description as given.
    pub echo: serde_json::Map<String, serde_json::Value>,
}

/// `ImportTableDescription` (the echoed request members are flattened in).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "PascalCase")]
pub struct ImportDescription {
    pub import_arn: String,
    pub import_status: String,
    pub table_arn: String,
    pub table_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_token: Option<String>,
    pub start_time: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_time: Option<f64>,
    pub processed_size_bytes: u64,
    pub processed_item_count: u64,
    pub imported_item_count: u64,
    pub error_count: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_message: Option<String>,
    #[serde(flatten)]
    pub echo: serde_json::Map<String, serde_json::Value>,
}

/// One entry of ListImports.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "PascalCase")]
pub struct ImportSummary {
    pub import_arn: String,
    pub import_status: String,
    pub table_arn: String,
    pub start_time: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_time: Option<f64>,
    #[serde(rename = "S3BucketSource", skip_serializing_if = "Option::is_none")]
    pub s3_bucket_source: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_format: Option<serde_json::Value>,
}

/// An import as stored under `'g' id`.
#[derive(Clone, Serialize, Deserialize)]
struct ImportRecord {
    id: u64,
    description: ImportDescription,
    catalog_name: String,
    region: String,
    namespace: Option<String>,
    /// What to read: kept so that a restart can run the import again.
    job: ImportJob,
}

/// What the job reads.
#[derive(Clone, Serialize, Deserialize)]
struct ImportJob {
    bucket: String,
    prefix: String,
    format: InputFormat,
    compression: Compression,
}

impl Engine {
    /// ImportTable: creates the table (CREATING), records the import
    /// IN_PROGRESS and fills the table in the background. A ClientToken
    /// used before in this region and namespace returns that import, as
    /// DynamoDB does (docs/design/exports.md §4, DDB-IMPORT-017): only
    /// another TableName conflicts, and the table check comes first.
    pub fn import_table(self: &Arc<Self>, request: ImportRequest) -> Result<ImportDescription> {
        let earlier = self.import_with_token(&request)?;
        self.check_import_target(&request, earlier.as_ref())?;
        if let Some(earlier) = earlier {
            let region = self.request_region();
            if earlier.catalog_name != self.catalog_name_in(&region, &request.table.name) {
                return Err(DynamoError::new(
                    ErrorKind::ImportConflict,
                    "Import conflict: Duplicate request detected with conflicting parameters",
                ));
            }
            // A changed bucket, prefix, format or compression is ignored.
            return Ok(earlier.description);
        }
        let name = request.table.name.clone();
        self.create_table(request.table.clone())?;
        let table = self.set_table_creating(&self.table(&name)?, true)?;
        let job = ImportJob {
            bucket: request.bucket.clone(),
            prefix: request.prefix.clone(),
            format: request.format.clone(),
            compression: request.compression,
        };
        let record = self.commit_new_import(&request, &table, job)?;
        let description = record.description.clone();
        self.start_import(record.id)?;
        Ok(description)
    }

    fn start_import(self: &Arc<Self>, id: u64) -> Result<()> {
        let engine = Arc::clone(self);
        self.spawn_transfer(format!("import-{id}"), move || engine.run_import(id))
    }

    /// Imports a crash left IN_PROGRESS run again from their first object
    /// (writing an item twice is harmless; the counts start over).
    pub(crate) fn resume_imports(self: &Arc<Self>, take: &dyn Fn(&str) -> bool) -> Result<()> {
        for record in self.import_records()? {
            if record.description.import_status == "IN_PROGRESS"
                && take(&format!("import-{}", record.id))
            {
                self.start_import(record.id)?;
            }
        }
        Ok(())
    }

    /// The import an earlier request with this ClientToken started in this
    /// region and namespace.
    fn import_with_token(&self, request: &ImportRequest) -> Result<Option<ImportRecord>> {
        let Some(token) = &request.client_token else {
            return Ok(None);
        };
        let (region, namespace) = (self.request_region(), crate::region::request_namespace());
        Ok((self.import_records()?.into_iter()).find(|r| {
            r.description.client_token.as_ref() == Some(token)
                && r.region == region
                && r.namespace == namespace
        }))
    }

    /// DynamoDB refuses a TableName that is taken before it looks at the
    /// ClientToken, so a replay after the import ended gets
    /// ResourceInUseException while the table exists; the one table that
    /// does not count is the one the token's import is still filling.
    fn check_import_target(
        &self,
        request: &ImportRequest,
        earlier: Option<&ImportRecord>,
    ) -> Result<()> {
        let Some(table) = self.lookup(&request.table.name) else {
            return Ok(());
        };
        let filling = earlier.is_some_and(|r| {
            r.description.import_status == "IN_PROGRESS"
                && r.description.table_id == table.describe().table_id
        });
        if filling {
            return Ok(());
        }
        Err(DynamoError::new(
            ErrorKind::ResourceInUse,
            format!("Table already exists: {}", request.table.name),
        ))
    }

    fn commit_new_import(
        &self,
        request: &ImportRequest,
        table: &Table,
        job: ImportJob,
    ) -> Result<ImportRecord> {
        let _catalog = self.catalog_lock.lock();
        let stored = self
            .storage
            .get(keyspace::NEXT_IMPORT_ID)
            .map_err(crate::storage_error)?;
        let id = stored
            .and_then(|v| v.try_into().ok().map(u64::from_be_bytes))
            .unwrap_or(1);
        let now = (self.now_seconds() * 1000.0).floor() / 1000.0;
        let described = table.describe();
        let record = ImportRecord {
            id,
            description: ImportDescription {
                import_arn: format!(
                    "{}/import/{:014}-{id:08x}",
                    described.table_arn,
                    (now * 1000.0) as u64
                ),
                import_status: "IN_PROGRESS".into(),
                table_arn: described.table_arn.clone(),
                table_id: described.table_id.clone(),
                client_token: request.client_token.clone(),
                start_time: now,
                end_time: None,
                processed_size_bytes: 0,
                processed_item_count: 0,
                imported_item_count: 0,
                error_count: 0,
                failure_code: None,
                failure_message: None,
                echo: request.echo.clone(),
            },
            catalog_name: table.catalog_name.clone(),
            region: self.request_region(),
            namespace: crate::region::request_namespace(),
            job,
        };
        let bump = WriteOp::Put(
            keyspace::NEXT_IMPORT_ID.to_vec(),
            (id + 1).to_be_bytes().to_vec(),
        );
        let put = WriteOp::Put(
            keyspace::import_key(id),
            serde_json::to_vec(&record).map_err(crate::storage_error)?,
        );
        self.write_retrying_conflicts(vec![bump, put])?;
        Ok(record)
    }

    fn import_records(&self) -> Result<Vec<ImportRecord>> {
        (self
            .scan_all_under(&keyspace::import_records())?
            .into_iter())
        .map(|(_, bytes)| serde_json::from_slice(&bytes).map_err(crate::storage_error))
        .collect()
    }

    /// The background half: every object under the prefix, line by line.
    fn run_import(self: &Arc<Self>, id: u64) -> Result<()> {
        let Some(mut record) = self.import_records()?.into_iter().find(|r| r.id == id) else {
            return Ok(());
        };
        let job = record.job.clone();
        let d = &mut record.description;
        (
            d.processed_item_count,
            d.imported_item_count,
            d.error_count,
            d.processed_size_bytes,
        ) = (0, 0, 0, 0);
        let table = self.tables.read().get(&record.catalog_name).cloned();
        let Some(table) = table else { return Ok(()) };
        let outcome = self.import_objects(&table, &job, &mut record.description);
        let d = &mut record.description;
        d.end_time = Some((self.now_seconds() * 1000.0).floor() / 1000.0);
        match outcome {
            Ok(()) if d.error_count == 0 => {
                d.import_status = "COMPLETED".into();
                self.set_table_creating(&table, false)?;
            }
            // DynamoDB's outcome when items were skipped: FAILED, with the
            // table ACTIVE and holding the items that were valid.
            Ok(()) => {
                d.import_status = "FAILED".into();
                d.failure_code = Some("ItemValidationError".into());
                d.failure_message = Some(
                    "Some of the items failed validation checks and were not imported. Please check CloudWatch error logs for more details."
                        .into(),
                );
                self.set_table_creating(&table, false)?;
            }
            Err((code, message)) => {
                d.import_status = "FAILED".into();
                d.failure_code = Some(code);
                d.failure_message = Some(message);
                let failed = record.clone();
                self.drop_failed_import(&failed, &table)?;
            }
        }
        let put = WriteOp::Put(
            keyspace::import_key(id),
            serde_json::to_vec(&record).map_err(crate::storage_error)?,
        );
        self.write_retrying_conflicts(vec![put])?;
        Ok(())
    }

    /// Reads and writes every object; counts into `counts`; a store
    /// failure is (FailureCode, FailureMessage).
    fn import_objects(
        &self,
        table: &Arc<Table>,
        job: &ImportJob,
        counts: &mut ImportDescription,
    ) -> std::result::Result<(), (String, String)> {
        let objects = self.object_store()?;
        let failed = |message: String| crate::exports::store_failure(&message);
        let keys = objects.list(&job.bucket, &job.prefix).map_err(failed)?;
        let internal = |e: DynamoError| ("UnknownError".to_string(), e.message.clone());
        for (key, _) in keys {
            let bytes = objects.get(&job.bucket, &key).map_err(failed)?;
            // A compression mismatch is an item error, as on DynamoDB.
            let Ok(text) = decompressed(bytes, job.compression) else {
                counts.processed_item_count += 1;
                counts.error_count += 1;
                continue;
            };
            counts.processed_size_bytes += text.len() as u64;
            let (items, abandoned) = parse_object(&text, &job.format, &table.schema);
            counts.processed_item_count += items.len() as u64 + u64::from(abandoned);
            counts.error_count += u64::from(abandoned);
            counts.imported_item_count += items.len() as u64;
            for chunk in items.chunks(IMPORT_BATCH) {
                let mut batch: BTreeMap<Vec<u8>, (Item, Option<Item>)> = BTreeMap::new();
                for item in chunk {
                    let key_item = table.schema.extract(item);
                    batch.insert(
                        table.schema.encode(table.id, &key_item),
                        (key_item, Some(item.clone())),
                    );
                }
                self.apply_changes(table, batch).map_err(internal)?;
            }
        }
        Ok(())
    }

    /// Removes the table of a failed import (its data purged).
    fn drop_failed_import(
        self: &Arc<Self>,
        record: &ImportRecord,
        table: &Arc<Table>,
    ) -> Result<()> {
        let active = self.set_table_creating(table, false)?;
        let scope = crate::region::RequestScope {
            region: Some(record.region.clone()),
            namespace: record.namespace.clone(),
        };
        crate::region::with_request_scope(scope, || self.delete_table(&active.name)).map(|_| ())
    }

    /// DescribeImport: the ARN checked as DescribeExport checks its own,
    /// then looked up in this namespace. DynamoDB's not-found text for
    /// imports is not recorded; it mirrors DescribeExport's.
    pub fn describe_import(&self, arn: &str) -> Result<ImportDescription> {
        self.check_job_arn(arn, JobKind::Import)?;
        let namespace = crate::region::request_namespace();
        (self.import_records()?.into_iter())
            .find(|r| r.description.import_arn == arn && r.namespace == namespace)
            .map(|r| r.description)
            .ok_or_else(|| JobKind::Import.not_found(&format!("Import not found: {arn}")))
    }

    /// ListImports: this region's and namespace's imports, newest first,
    /// from the one `next` names, at most `max`; the token to go on. With
    /// `table_arn`, those into a table of that ARN: import records outlive
    /// their table and stay listed under its ARN (DDB-IMPORT-008).
    pub fn list_imports(
        &self,
        table_arn: Option<&str>,
        max: usize,
        next: Option<&str>,
    ) -> Result<(Vec<ImportSummary>, Option<String>)> {
        let next = next
            .map(|token| read_page_token(IMPORTS_TAG, token))
            .transpose()?;
        let (region, namespace) = (self.request_region(), crate::region::request_namespace());
        let entries = (self.import_records()?.into_iter())
            .filter(|r| r.region == region && r.namespace == namespace)
            .filter(|r| table_arn.is_none_or(|arn| r.description.table_arn == arn))
            .map(|r| {
                let d = r.description;
                let summary = ImportSummary {
                    s3_bucket_source: d.echo.get("S3BucketSource").cloned(),
                    input_format: d.echo.get("InputFormat").cloned(),
                    import_arn: d.import_arn,
                    import_status: d.import_status,
                    table_arn: d.table_arn,
                    start_time: d.start_time,
                    end_time: d.end_time,
                };
                (r.id, summary)
            })
            .collect();
        Ok(newest_first(entries, max, next, IMPORTS_TAG))
    }

    /// Rewrites `table`'s catalog record as CREATING (or ACTIVE again) and
    /// loads it so: item operations do not see a CREATING table.
    pub(crate) fn set_table_creating(
        &self,
        table: &Arc<Table>,
        creating: bool,
    ) -> Result<Arc<Table>> {
        let _catalog = self.catalog_lock.lock();
        let mut record = crate::catalog::CatalogRecord::of(table);
        record.description.table_status = if creating { "CREATING" } else { "ACTIVE" }.into();
        let bytes = serde_json::to_vec(&record).map_err(crate::storage_error)?;
        let key = keyspace::catalog_key(&table.catalog_name);
        let _reload = self.reload_guard();
        self.commit_catalog(
            vec![self.catalog_check(table)],
            vec![WriteOp::Put(key.clone(), bytes.clone())],
        )?;
        let fresh = self.table_from_record(&key, bytes, None)?;
        self.tables
            .write()
            .insert(table.catalog_name.clone(), Arc::clone(&fresh));
        Ok(fresh)
    }
}

/// How the objects of an import are compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Compression {
    None,
    Gzip,
    Zstd,
}

/// An object's text, decompressed as the import says.
pub(crate) fn decompressed(
    bytes: Vec<u8>,
    compression: Compression,
) -> std::result::Result<String, String> {
    let mut text = String::new();
    match compression {
        Compression::None => {
            return String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_string())
        }
        Compression::Gzip => flate2::read::MultiGzDecoder::new(bytes.as_slice())
            .read_to_string(&mut text)
            .map_err(|e| format!("not gzip text: {e}"))?,
        Compression::Zstd => ruzstd::decoding::StreamingDecoder::new(bytes.as_slice())
            .map_err(|e| format!("not zstd data: {e}"))?
            .read_to_string(&mut text)
            .map_err(|e| format!("not zstd text: {e}"))?,
    };
    Ok(text)
}
