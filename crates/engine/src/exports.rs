//! ExportTableToPointInTime (full exports), DescribeExport and ListExports:
//! a table's items at one instant written to an S3 bucket in DynamoDB's own
//! layout, so tools that read real exports read ours:
//!
//! ```text
//! <prefix>/AWSDynamoDB/<export id>/_started
//! <prefix>/AWSDynamoDB/<export id>/data/<file>.json.gz     (or .ion.gz)
//! <prefix>/AWSDynamoDB/<export id>/manifest-files.json     one line per data file
//! <prefix>/AWSDynamoDB/<export id>/manifest-files.md5
//! <prefix>/AWSDynamoDB/<export id>/manifest-summary.json
//! <prefix>/AWSDynamoDB/<export id>/manifest-summary.md5
//! ```
//!
//! The engine talks to the bucket through [`crate::objects::Objects`],
//! which the binary provides (`--s3-endpoint`). An export of "now" reads a storage view opened when the request
//! arrives; an earlier ExportTime (point-in-time recovery must be on, as on
//! AWS) first restores the table as of that instant into a hidden namespace
//! (restore.rs, recovery.rs) and exports that. The job runs in the
//! background (IN_PROGRESS, then COMPLETED or FAILED with DynamoDB's
//! FailureCode and FailureMessage). The summary manifest is written last,
//! so an export cut short by a crash is never a complete-looking one; at
//! start-up an IN_PROGRESS export is run again from its point in time, or
//! FAILED when that is no longer restorable.

use crate::keyspace::{self, prefix_end};
use crate::recovery::RestoreTime;
use crate::region::{with_request_scope, RequestScope};
use crate::restore::RestoreOverrides;
use crate::stored::StoredItem;
use crate::Engine;
use ferrodyn_storage::{StorageView, WriteOp};
use ferrodyn_types::{AttributeValue, DynamoError, ErrorKind, Item, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::Write;
use std::ops::Bound;
use std::sync::Arc;
use std::time::Duration;

/// Items per data file.
const ITEMS_PER_FILE: usize = 100_000;

/// The namespace hidden tables of point-in-time exports live in (no
/// access key is this, so no client ever lists them).
const EXPORT_NAMESPACE: &str = "ferrodyn-export";

/// DYNAMODB_JSON or ION.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ExportFormat {
    DynamodbJson,
    Ion,
}

/// A validated ExportTableToPointInTime request.
#[derive(Clone, Debug)]
pub struct ExportRequest {
    pub table_arn: String,
    pub bucket: String,
    pub prefix: Option<String>,
    pub bucket_owner: Option<String>,
    pub sse_algorithm: Option<String>,
    pub kms_key_id: Option<String>,
    pub format: ExportFormat,
    /// None: now.
    pub time: Option<f64>,
    pub client_token: Option<String>,
    /// ExportType as the request gave it: DynamoDB echoes it only then.
    pub export_type: Option<String>,
    /// An incremental export's window and view; None: a full export.
    pub incremental: Option<IncrementalSpec>,
}

/// An incremental export: the changes committed in [from, to), each item
/// compacted to its state before the window and its last state in it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct IncrementalSpec {
    #[serde(rename = "ExportFromTime")]
    pub from: f64,
    #[serde(
        rename = "ExportToTime",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub to: Option<f64>,
    /// NEW_IMAGE or NEW_AND_OLD_IMAGES.
    #[serde(rename = "ExportViewType")]
    pub view_type: String,
}

/// The shortest and longest window of an incremental export.
const INCREMENTAL_WINDOW: (f64, f64) = (15.0 * 60.0, 24.0 * 3600.0);

/// `ExportDescription` in DynamoDB's wire shape.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "PascalCase")]
pub struct ExportDescription {
    pub export_arn: String,
    pub export_status: String,
    pub start_time: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_time: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub export_manifest: Option<String>,
    pub table_arn: String,
    pub table_id: String,
    /// The instant of a full export (an incremental one has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub export_time: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_token: Option<String>,
    pub s3_bucket: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub s3_bucket_owner: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub s3_prefix: Option<String>,
    #[serde(
        rename = "S3SseAlgorithm",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub s3_sse_algorithm: Option<String>,
    #[serde(
        rename = "S3SseKmsKeyId",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub s3_sse_kms_key_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure_message: Option<String>,
    pub export_format: ExportFormat,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub billed_size_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub item_count: Option<u64>,
    /// Only when the request gave it (DDB-EXPORT-017); ListExports'
    /// summaries always carry the type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub export_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incremental_export_specification: Option<IncrementalSpec>,
}

/// One entry of ListExports.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "PascalCase")]
pub struct ExportSummary {
    pub export_arn: String,
    pub export_status: String,
    pub export_type: String,
}

/// An export as stored under `'e' id`.
#[derive(Clone, Serialize, Deserialize)]
struct ExportRecord {
    id: u64,
    description: ExportDescription,
    /// The table's name, in the request's region and namespace.
    table_name: String,
    region: String,
    namespace: Option<String>,
}

impl ExportRecord {
    fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("plain data always serialises")
    }

    fn scope(&self) -> RequestScope {
        RequestScope {
            region: Some(self.region.clone()),
            namespace: self.namespace.clone(),
        }
    }

    /// `<prefix>/AWSDynamoDB/<export id>/` (no leading slash when no prefix).
    fn folder(&self) -> String {
        let id = self
            .description
            .export_arn
            .rsplit('/')
            .next()
            .unwrap_or_default();
        match self
            .description
            .s3_prefix
            .as_deref()
            .map(|p| p.trim_end_matches('/'))
        {
            Some(prefix) if !prefix.is_empty() => format!("{prefix}/AWSDynamoDB/{id}/"),
            _ => format!("AWSDynamoDB/{id}/"),
        }
    }
}

/// Where the items of an export come from.
enum ExportSource {
    /// A view of the table opened when the request arrived.
    View(Box<dyn StorageView>, u64),
    /// The table as of the export time, by point-in-time recovery.
    PointInTime,
    /// The changes of a window, from the change log.
    Incremental,
}

/// One item's changes inside an incremental export's window.
struct Change {
    keys: serde_json::Value,
    /// The item before its first change in the window (None: absent).
    before: Option<serde_json::Value>,
    /// After its last change (None: deleted).
    after: Option<serde_json::Value>,
    micros: u64,
}

/// An incremental export's window against DynamoDB's rules: at least 15
/// minutes, at most 24 hours, inside the recovery window, not in the future.
fn check_window(spec: &IncrementalSpec, earliest: f64, now: f64) -> Result<()> {
    let invalid = |message: String| Err(DynamoError::new(ErrorKind::InvalidExportTime, message));
    let iso = ferrodyn_types::dates::iso8601_utc_millis;
    let to = spec.to.unwrap_or(now);
    if spec.from < earliest || spec.from >= to || to - spec.from > INCREMENTAL_WINDOW.1 {
        return invalid(format!(
            "Incremental export period from time cannot be less than the table creation time : {}",
            iso(spec.from)
        ));
    }
    if to > now {
        return invalid(format!(
            "Incremental export period to time cannot be greater than the current time : {}",
            iso(to)
        ));
    }
    if to - spec.from < INCREMENTAL_WINDOW.0 {
        return invalid("Difference between export period from time and export period to time is less than 15 minutes".into());
    }
    Ok(())
}

/// An incremental record as Ion: its Metadata, Keys and images.
fn ion_change(line: &serde_json::Value) -> Result<String> {
    let mut fields = Vec::new();
    let micros = line["Metadata"]["WriteTimestampMicros"]["N"]
        .as_str()
        .unwrap_or("0");
    fields.push(format!("Metadata:{{WriteTimestampMicros:{micros}}}"));
    for member in ["Keys", "NewImage", "OldImage"] {
        if let Some(image) = line.get(member) {
            let item: Item = serde_json::from_value(image.clone()).map_err(crate::storage_error)?;
            fields.push(format!("{member}:{}", ion_map(&item)));
        }
    }
    Ok(format!("{{{}}}", fields.join(",")))
}

/// One written data file, for the file manifest.
struct DataFile {
    key: String,
    items: u64,
    md5: String,
    etag: String,
}

impl Engine {
    /// ExportTableToPointInTime: records the export IN_PROGRESS and runs it
    /// in the background.
    pub fn export_table(self: &Arc<Self>, request: ExportRequest) -> Result<ExportDescription> {
        let table = (self.lookup(&request.table_arn))
            .filter(|table| !table.is_creating())
            .ok_or_else(|| {
                DynamoError::new(
                    ErrorKind::TableNotFound,
                    format!("Table not found: {}", request.table_arn),
                )
            })?;
        if let Some(existing) = self.export_with_token(&request)? {
            return Ok(existing);
        }
        let settings = table.recovery().ok_or_else(|| {
            DynamoError::new(
                ErrorKind::PointInTimeRecoveryUnavailable,
                format!(
                    "Point in time recovery is not enabled for table '{}'",
                    table.name
                ),
            )
        })?;
        let now = (self.now_seconds() * 1000.0).floor() / 1000.0;
        let earliest = crate::recovery::earliest_restorable(&settings, now);
        if let Some(spec) = &request.incremental {
            check_window(spec, earliest, now)?;
            let record = self.commit_new_export(&request, &table, None, now)?;
            let description = record.description.clone();
            self.start_export(record.id, ExportSource::Incremental)?;
            return Ok(description);
        }
        let at = request.time.unwrap_or(now);
        if at < earliest || at > now {
            return Err(DynamoError::new(
                ErrorKind::InvalidExportTime,
                "Export Time is invalid",
            ));
        }
        let source = if request.time.is_none_or(|t| t >= now) {
            let items = keyspace::table_items(table.id);
            let range = (items.clone(), prefix_end(&items));
            let view = self
                .storage
                .open_view(&[range])
                .map_err(crate::storage_error)?;
            ExportSource::View(view, table.id)
        } else {
            ExportSource::PointInTime
        };
        let record = self.commit_new_export(&request, &table, Some(at), now)?;
        let description = record.description.clone();
        self.start_export(record.id, source)?;
        Ok(description)
    }

    /// The export a ClientToken already started with the same parameters
    /// (ExportConflictException when the parameters differ).
    fn export_with_token(&self, request: &ExportRequest) -> Result<Option<ExportDescription>> {
        let Some(token) = &request.client_token else {
            return Ok(None);
        };
        for record in self.export_records()? {
            let d = &record.description;
            if d.client_token.as_ref() != Some(token) {
                continue;
            }
            let same = d.table_arn == request.table_arn
                && d.s3_bucket == request.bucket
                && d.s3_prefix == request.prefix
                && d.s3_bucket_owner == request.bucket_owner
                && d.s3_sse_algorithm.as_deref() == Some(sse_algorithm(request))
                && d.export_format == request.format;
            if !same {
                return Err(DynamoError::new(
                    ErrorKind::ExportConflict,
                    "Export conflict: Duplicate request detected with conflicting parameters",
                ));
            }
            return Ok(Some(d.clone()));
        }
        Ok(None)
    }

    fn commit_new_export(
        &self,
        request: &ExportRequest,
        table: &crate::table::Table,
        at: Option<f64>,
        now: f64,
    ) -> Result<ExportRecord> {
        let _catalog = self.catalog_lock.lock();
        let id = self.next_export_id()?;
        let described = table.describe();
        let export_id = format!("{:014}-{id:08x}", (now * 1000.0) as u64);
        let record = ExportRecord {
            id,
            description: ExportDescription {
                export_arn: format!("{}/export/{export_id}", described.table_arn),
                export_status: "IN_PROGRESS".into(),
                start_time: now,
                end_time: None,
                export_manifest: None,
                table_arn: described.table_arn.clone(),
                table_id: described.table_id.clone(),
                export_time: at,
                client_token: request.client_token.clone(),
                s3_bucket: request.bucket.clone(),
                s3_bucket_owner: request.bucket_owner.clone(),
                s3_prefix: request.prefix.clone(),
                // Given or not, DynamoDB describes the export's encryption.
                s3_sse_algorithm: Some(sse_algorithm(request).to_string()),
                s3_sse_kms_key_id: request.kms_key_id.clone(),
                failure_code: None,
                failure_message: None,
                export_format: request.format,
                billed_size_bytes: None,
                item_count: None,
                export_type: request.export_type.clone(),
                incremental_export_specification: (request.incremental.clone()).map(|mut spec| {
                    spec.to = Some(spec.to.unwrap_or(now));
                    spec
                }),
            },
            table_name: table.name.clone(),
            region: self.request_region(),
            namespace: crate::region::request_namespace(),
        };
        self.write_export(&record)?;
        Ok(record)
    }

    /// The next export id (read, bumped, under the catalog lock).
    fn next_export_id(&self) -> Result<u64> {
        let stored = self
            .storage
            .get(keyspace::NEXT_EXPORT_ID)
            .map_err(crate::storage_error)?;
        let id = stored
            .and_then(|v| v.try_into().ok().map(u64::from_be_bytes))
            .unwrap_or(1);
        let bump = WriteOp::Put(
            keyspace::NEXT_EXPORT_ID.to_vec(),
            (id + 1).to_be_bytes().to_vec(),
        );
        self.write_retrying_conflicts(vec![bump])?;
        Ok(id)
    }

    fn write_export(&self, record: &ExportRecord) -> Result<()> {
        let put = WriteOp::Put(keyspace::export_key(record.id), record.encode());
        self.write_retrying_conflicts(vec![put])?;
        Ok(())
    }

    fn export_records(&self) -> Result<Vec<ExportRecord>> {
        (self
            .scan_all_under(&keyspace::export_records())?
            .into_iter())
        .map(|(_, bytes)| serde_json::from_slice(&bytes).map_err(crate::storage_error))
        .collect()
    }

    fn start_export(self: &Arc<Self>, id: u64, source: ExportSource) -> Result<()> {
        let engine = Arc::clone(self);
        self.spawn_transfer(format!("export-{id}"), move || {
            engine.finish_export(id, source)
        })
    }

    /// Runs the export and records how it ended.
    fn finish_export(self: &Arc<Self>, id: u64, source: ExportSource) -> Result<()> {
        let Some(mut record) = (self.export_records()?.into_iter()).find(|r| r.id == id) else {
            return Ok(());
        };
        let outcome = self.write_export_objects(&record, source);
        let d = &mut record.description;
        d.end_time = Some((self.now_seconds() * 1000.0).floor() / 1000.0);
        match outcome {
            Ok((items, bytes, manifest)) => {
                d.export_status = "COMPLETED".into();
                d.item_count = Some(items);
                d.billed_size_bytes = Some(bytes);
                d.export_manifest = Some(manifest);
            }
            Err((code, message)) => {
                d.export_status = "FAILED".into();
                d.failure_code = Some(code);
                d.failure_message = Some(message);
            }
        }
        self.write_export(&record)
    }

    /// Writes `_started`, the data files, the file manifest and last the
    /// summary manifest: (items, their bytes, the summary's key), or
    /// DynamoDB's (FailureCode, FailureMessage).
    fn write_export_objects(
        self: &Arc<Self>,
        record: &ExportRecord,
        source: ExportSource,
    ) -> std::result::Result<(u64, u64, String), (String, String)> {
        let sink = self.object_store()?;
        let bucket = &record.description.s3_bucket;
        let folder = record.folder();
        let put = |key: String, bytes: Vec<u8>| {
            sink.put(bucket, &key, bytes)
                .map_err(|message| store_failure(&message))
        };
        put(format!("{folder}_started"), Vec::new())?;
        let internal = |e: DynamoError| ("UnknownError".to_string(), e.message.clone());
        let (files, items, bytes) = match source {
            ExportSource::View(view, table_id) => self
                .write_data_files(record, &*view, table_id, &put)
                .map_err(internal)?,
            ExportSource::PointInTime => {
                self.export_point_in_time(record, &put).map_err(internal)?
            }
            ExportSource::Incremental => self.export_changes(record, &put).map_err(internal)?,
        };
        let manifest: String = (files.iter())
            .map(|f| {
                let line = serde_json::json!({
                    "itemCount": f.items, "md5Checksum": f.md5, "etag": f.etag, "dataFileS3Key": f.key,
                });
                format!("{line}\n")
            })
            .collect();
        let files_key = format!("{folder}manifest-files.json");
        put(
            format!("{folder}manifest-files.md5"),
            md5_base64(manifest.as_bytes()).into_bytes(),
        )?;
        put(files_key.clone(), manifest.into_bytes())?;
        let summary = self.summary_manifest(record, &files_key, items, bytes);
        let summary_key = format!("{folder}manifest-summary.json");
        put(
            format!("{folder}manifest-summary.md5"),
            md5_base64(summary.as_bytes()).into_bytes(),
        )?;
        put(summary_key.clone(), summary.into_bytes())?;
        Ok((items, bytes, summary_key))
    }

    /// `manifest-summary.json`: [Out]'s members, plus the window, the view
    /// (`outputView`) and `exportType` for an incremental export only, as
    /// DynamoDB writes them (docs/design/exports.md §1).
    fn summary_manifest(
        &self,
        record: &ExportRecord,
        files_key: &str,
        items: u64,
        bytes: u64,
    ) -> String {
        let d = &record.description;
        let iso = |t: f64| ferrodyn_types::dates::iso8601_utc_millis(t);
        let mut summary = serde_json::json!({
            "version": "2020-06-30",
            "exportArn": d.export_arn,
            "startTime": iso(d.start_time),
            "endTime": iso(self.now_seconds()),
            "tableArn": d.table_arn,
            "tableId": d.table_id,
            "exportTime": d.export_time.map(iso),
            "s3Bucket": d.s3_bucket,
            "s3Prefix": d.s3_prefix,
            "s3SseAlgorithm": d.s3_sse_algorithm.clone().unwrap_or_else(|| "AES256".into()),
            "s3SseKmsKeyId": d.s3_sse_kms_key_id,
            "manifestFilesS3Key": files_key,
            "billedSizeBytes": bytes,
            "itemCount": items,
            "outputFormat": d.export_format,
        });
        if let Some(spec) = &d.incremental_export_specification {
            summary["exportFromTime"] = iso(spec.from).into();
            summary["exportToTime"] = spec.to.map(iso).into();
            summary["outputView"] = spec.view_type.clone().into();
            summary["exportType"] = "INCREMENTAL_EXPORT".into();
        }
        summary.to_string()
    }

    /// The data files of the items under `table_id` as of `view`.
    fn write_data_files(
        &self,
        record: &ExportRecord,
        view: &dyn StorageView,
        table_id: u64,
        put: &dyn Fn(String, Vec<u8>) -> std::result::Result<String, (String, String)>,
    ) -> Result<(Vec<DataFile>, u64, u64)> {
        let prefix = keyspace::table_items(table_id);
        let end = prefix_end(&prefix);
        let end = end.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
        let (mut files, mut items, mut bytes) = (Vec::new(), 0u64, 0u64);
        let mut file = DataFileWriter::new(record.description.export_format);
        let mut after: Option<Vec<u8>> = None;
        loop {
            let start = after
                .as_deref()
                .map_or(Bound::Included(prefix.as_slice()), Bound::Excluded);
            let page = view
                .scan(start, end, false, 1000)
                .map_err(crate::storage_error)?;
            let Some((last, _)) = page.last() else { break };
            after = Some(last.clone());
            for (_, value) in page {
                let stored = StoredItem::decode(value)?;
                bytes += stored.size as u64;
                items += 1;
                file.push(&stored)?;
                if file.items == ITEMS_PER_FILE {
                    files.push(file.finish(record, files.len(), put)?);
                    file = DataFileWriter::new(record.description.export_format);
                }
            }
        }
        if file.items > 0 || files.is_empty() {
            files.push(file.finish(record, files.len(), put)?);
        }
        Ok((files, items, bytes))
    }

    /// A past export time: the table restored as of it into a hidden
    /// namespace, exported, then dropped.
    fn export_point_in_time(
        self: &Arc<Self>,
        record: &ExportRecord,
        put: &dyn Fn(String, Vec<u8>) -> std::result::Result<String, (String, String)>,
    ) -> Result<(Vec<DataFile>, u64, u64)> {
        let at = RestoreTime::At(
            record
                .description
                .export_time
                .unwrap_or_else(|| self.now_seconds()),
        );
        let source = with_request_scope(record.scope(), || {
            self.point_in_time_source(&record.table_name, at)
        })?;
        let hidden = RequestScope {
            region: Some(record.region.clone()),
            namespace: Some(EXPORT_NAMESPACE.into()),
        };
        let target = format!("export-{}", record.id);
        // A run a crash cut short left the table (restored to this same
        // instant, or still being restored by its resumed job): use it.
        with_request_scope(hidden.clone(), || match self.lookup(&target) {
            Some(_) => Ok(()),
            None => self
                .start_restore(
                    &target,
                    &RestoreOverrides::default(),
                    |_| Ok(source.clone()),
                )
                .map(|_| ()),
        })?;
        let table = loop {
            let found = with_request_scope(hidden.clone(), || self.lookup(&target));
            match found {
                Some(table) if !table.is_creating() => break table,
                Some(_) => std::thread::sleep(Duration::from_millis(20)),
                None => return Err(DynamoError::internal("the export's restore was abandoned")),
            }
        };
        let items = keyspace::table_items(table.id);
        let view = (self.storage)
            .open_view(&[(items.clone(), prefix_end(&items))])
            .map_err(crate::storage_error)?;
        let written = self.write_data_files(record, &*view, table.id, put);
        drop(view);
        with_request_scope(hidden, || self.delete_table(&target))?;
        written
    }

    /// An incremental export's data: every change logged in its window,
    /// compacted per item to the image before the window (kept for
    /// NEW_AND_OLD_IMAGES) and the last one in it; an item created and
    /// deleted inside the window leaves nothing.
    fn export_changes(
        &self,
        record: &ExportRecord,
        put: &dyn Fn(String, Vec<u8>) -> std::result::Result<String, (String, String)>,
    ) -> Result<(Vec<DataFile>, u64, u64)> {
        let d = &record.description;
        let spec = d
            .incremental_export_specification
            .clone()
            .ok_or_else(|| DynamoError::internal("no window"))?;
        let table = with_request_scope(record.scope(), || self.lookup(&record.table_name))
            .ok_or_else(|| DynamoError::internal("the exported table is gone"))?;
        let log_from = (table
            .recovery()
            .and_then(|s| s.bases.first().map(|b| b.log_from)))
        .unwrap_or(0);
        let (from_ms, to_ms) = (
            (spec.from * 1000.0).round() as u64,
            (spec.to.unwrap_or(spec.from) * 1000.0).round() as u64,
        );
        let mut changed: BTreeMap<String, Change> = BTreeMap::new();
        let start = keyspace::stream_record_key(table.id, log_from);
        let end = keyspace::stream_record_key(table.id, u64::MAX);
        let mut after = None;
        loop {
            let low = after
                .as_ref()
                .map_or(Bound::Included(&start), Bound::Excluded);
            let page = self
                .storage
                .scan(low.map(Vec::as_slice), Bound::Included(&end), false, 1000)
                .map_err(crate::storage_error)?;
            let Some((last, _)) = page.last() else { break };
            after = Some(last.clone());
            for (_, value) in &page {
                let record: serde_json::Value =
                    serde_json::from_slice(value).map_err(crate::storage_error)?;
                let Some(at) = record[crate::streams::RECOVERY_MEMBER]["commitMillis"].as_u64()
                else {
                    continue;
                };
                if at < from_ms || at >= to_ms {
                    continue;
                }
                let body = &record["dynamodb"];
                let key = body["Keys"].to_string();
                let entry = changed.entry(key).or_insert_with(|| Change {
                    keys: body["Keys"].clone(),
                    before: body.get("OldImage").cloned(),
                    after: None,
                    micros: 0,
                });
                entry.after = body.get("NewImage").cloned();
                entry.micros = at * 1000;
            }
            if page.len() < 1000 {
                break;
            }
        }
        let both = spec.view_type == "NEW_AND_OLD_IMAGES";
        let mut file = DataFileWriter::new(d.export_format);
        let (mut items, mut bytes) = (0u64, 0u64);
        for change in changed
            .into_values()
            .filter(|c| c.before.is_some() || c.after.is_some())
        {
            let mut line = serde_json::json!({
                "Metadata": { "WriteTimestampMicros": { "N": change.micros.to_string() } },
                "Keys": change.keys,
            });
            if let Some(new) = change.after {
                line["NewImage"] = new;
            }
            if let (true, Some(old)) = (both, change.before) {
                line["OldImage"] = old;
            }
            let text = match d.export_format {
                ExportFormat::DynamodbJson => format!("{line}\n"),
                ExportFormat::Ion => format!("{}\n", ion_change(&line)?),
            };
            bytes += text.len() as u64;
            items += 1;
            file.push_line(text.as_bytes())?;
        }
        Ok((vec![file.finish(record, 0, put)?], items, bytes))
    }

    /// DescribeExport: the ARN checked as DynamoDB checks it (its shape,
    /// account and region), then looked up in this namespace.
    pub fn describe_export(&self, arn: &str) -> Result<ExportDescription> {
        self.check_job_arn(arn, JobKind::Export)?;
        let namespace = crate::region::request_namespace();
        (self.export_records()?.into_iter())
            .find(|r| r.description.export_arn == arn && r.namespace == namespace)
            .map(|r| r.description)
            .ok_or_else(|| JobKind::Export.not_found(&format!("Export not found: {arn}")))
    }

    /// ListExports: this region's and namespace's exports, newest first,
    /// from the one `next` names, at most `max`; the token to go on. With
    /// `table_arn`, the exports of the table that ARN names now (by table
    /// id): after DeleteTable, or a re-create under the same name, the old
    /// ones are no longer listed, as on DynamoDB (DDB-EXPORT-020).
    pub fn list_exports(
        &self,
        table_arn: Option<&str>,
        max: usize,
        next: Option<&str>,
    ) -> Result<(Vec<ExportSummary>, Option<String>)> {
        let next = next
            .map(|token| read_page_token(EXPORTS_TAG, token))
            .transpose()?;
        // None: every table's; Some(None): no table has that ARN now, so none.
        let table_id = table_arn.map(|arn| self.lookup(arn).map(|t| t.describe().table_id));
        let (region, namespace) = (self.request_region(), crate::region::request_namespace());
        let entries = (self.export_records()?.into_iter())
            .filter(|r| r.region == region && r.namespace == namespace)
            .filter(|r| {
                table_id
                    .as_ref()
                    .is_none_or(|id| id.as_ref() == Some(&r.description.table_id))
            })
            .map(|r| {
                let d = r.description;
                let export_type = match d.incremental_export_specification {
                    Some(_) => "INCREMENTAL_EXPORT",
                    None => "FULL_EXPORT",
                };
                let summary = ExportSummary {
                    export_arn: d.export_arn,
                    export_status: d.export_status,
                    export_type: export_type.into(),
                };
                (r.id, summary)
            })
            .collect();
        Ok(newest_first(entries, max, next, EXPORTS_TAG))
    }

    /// Exports left IN_PROGRESS that `take` picks (transfers.rs) run again
    /// from their point in time.
    pub(crate) fn resume_exports(self: &Arc<Self>, take: &dyn Fn(&str) -> bool) -> Result<()> {
        for record in self.export_records()? {
            if record.description.export_status == "IN_PROGRESS"
                && take(&format!("export-{}", record.id))
            {
                let source = match record.description.incremental_export_specification {
                    Some(_) => ExportSource::Incremental,
                    None => ExportSource::PointInTime,
                };
                self.start_export(record.id, source)?;
            }
        }
        Ok(())
    }
}

/// One gzipped data file being written.
struct DataFileWriter {
    format: ExportFormat,
    gzip: flate2::write::GzEncoder<Vec<u8>>,
    items: usize,
}

impl DataFileWriter {
    fn new(format: ExportFormat) -> DataFileWriter {
        let mut gzip = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        if format == ExportFormat::Ion {
            let _ = gzip.write_all(b"$ion_1_0 ");
        }
        DataFileWriter {
            format,
            gzip,
            items: 0,
        }
    }

    /// One line already in the file's format.
    fn push_line(&mut self, line: &[u8]) -> Result<()> {
        self.gzip.write_all(line).map_err(crate::storage_error)?;
        self.items += 1;
        Ok(())
    }

    fn push(&mut self, stored: &StoredItem) -> Result<()> {
        let line = match self.format {
            ExportFormat::DynamodbJson => {
                let mut line = Vec::with_capacity(stored.json.len() + 10);
                line.extend_from_slice(b"{\"Item\":");
                line.extend_from_slice(&stored.json);
                line.extend_from_slice(b"}\n");
                line
            }
            ExportFormat::Ion => format!("{{Item:{}}}\n", ion_map(&stored.parse()?)).into_bytes(),
        };
        self.gzip.write_all(&line).map_err(crate::storage_error)?;
        self.items += 1;
        Ok(())
    }

    fn finish(
        self,
        record: &ExportRecord,
        number: usize,
        put: &dyn Fn(String, Vec<u8>) -> std::result::Result<String, (String, String)>,
    ) -> Result<DataFile> {
        let bytes = self.gzip.finish().map_err(crate::storage_error)?;
        let extension = match self.format {
            ExportFormat::DynamodbJson => "json",
            ExportFormat::Ion => "ion",
        };
        let key = format!(
            "{}data/{:08x}-{number:05}.{extension}.gz",
            record.folder(),
            record.id
        );
        let md5 = md5_base64(&bytes);
        let etag =
            put(key.clone(), bytes).map_err(|(_, message)| DynamoError::internal(message))?;
        Ok(DataFile {
            key,
            items: self.items as u64,
            md5,
            etag,
        })
    }
}

/// DynamoDB's FailureCode and FailureMessage for a store's error: the S3
/// error code it carries (`S3NoSuchBucket`, `S3AccessDenied`...) and S3's
/// own sentence after what was being done ("cannot write s3://b/k: The
/// specified bucket does not exist"), or `S3Unavailable` and the client's
/// message when the store could not be reached.
/// The request's S3SseAlgorithm, or DynamoDB's default.
fn sse_algorithm(request: &ExportRequest) -> &str {
    request.sse_algorithm.as_deref().unwrap_or("AES256")
}

pub(crate) fn store_failure(message: &str) -> (String, String) {
    let between = |open: &str, close: &str| {
        let rest = message.split(open).nth(1)?;
        rest.split(close).next().filter(|text| !text.is_empty())
    };
    let doing = message.split(": ").next().unwrap_or(message);
    match (
        between("<Code>", "</Code>"),
        between("<Message>", "</Message>"),
    ) {
        (Some(code), Some(said)) if code.chars().all(|c| c.is_ascii_alphanumeric()) => {
            (format!("S3{code}"), format!("{doing}: {said}"))
        }
        _ => ("S3Unavailable".to_string(), message.to_string()),
    }
}

/// The two kinds of S3 job whose ARNs DescribeExport and DescribeImport
/// check alike: `<table ARN>/export/<id>` and `<table ARN>/import/<id>`.
#[derive(Clone, Copy)]
pub(crate) enum JobKind {
    Export,
    Import,
}

impl JobKind {
    fn word(self) -> &'static str {
        match self {
            JobKind::Export => "export",
            JobKind::Import => "import",
        }
    }

    /// ExportNotFoundException `Export not found: <detail>` (or the
    /// import's): DynamoDB repeats the prefix, `Export not found: Export
    /// not found: <arn>` (sic).
    pub(crate) fn not_found(self, detail: &str) -> DynamoError {
        let (kind, title) = match self {
            JobKind::Export => (ErrorKind::ExportNotFound, "Export"),
            JobKind::Import => (ErrorKind::ImportNotFound, "Import"),
        };
        DynamoError::new(kind, format!("{title} not found: {detail}"))
    }
}

impl Engine {
    /// What DynamoDB checks of a job's ARN before looking it up
    /// (DDB-EXPORT-006, DDB-IMPORT-010): its shape, a table ARN (with a
    /// valid table name) followed by `/export/<id>` or `/import/<id>`
    /// (ValidationException `Invalid Export ARN` for a table ARN, the other
    /// kind's ARN or junk), the account (AccessDeniedException), then the
    /// region (not found: `Invalid export arn`).
    pub(crate) fn check_job_arn(&self, arn: &str, kind: JobKind) -> Result<()> {
        let word = kind.word();
        let Some((region, account)) = job_arn_parts(arn, word) else {
            let title = if word == "export" { "Export" } else { "Import" };
            return Err(DynamoError::validation(format!("Invalid {title} ARN")));
        };
        if account != self.account {
            return Err(DynamoError::new(
                ErrorKind::AccessDenied,
                "Access is denied",
            ));
        }
        if region != self.request_region() {
            return Err(kind.not_found(&format!("Invalid {word} arn")));
        }
        Ok(())
    }
}

/// The region and account of `arn:<partition>:dynamodb:<region>:<account>:
/// table/<name>/<word>/<id>`, or None when it is not that shape.
fn job_arn_parts<'a>(arn: &'a str, word: &str) -> Option<(&'a str, &'a str)> {
    let parts: Vec<&str> = arn.splitn(6, ':').collect();
    let ["arn", partition, "dynamodb", region, account, resource] = parts[..] else {
        return None;
    };
    let (table, id) = resource
        .strip_prefix("table/")?
        .split_once(&format!("/{word}/"))?;
    let name_char = |c: char| c.is_ascii_alphanumeric() || "_.-".contains(c);
    let valid = partition.starts_with("aws")
        && !region.is_empty()
        && account.len() == 12
        && account.bytes().all(|b| b.is_ascii_digit())
        && (3..=255).contains(&table.len())
        && table.chars().all(name_char)
        && !id.is_empty()
        && !id.contains('/');
    valid.then_some((region, account))
}

/// ListExports' NextToken tag: "exports\0" (ListImports' is "imports\0").
pub(crate) const EXPORTS_TAG: u64 = 0x6578_706f_7274_7300;

/// A NextToken of ListExports or ListImports: 112 lowercase hex digits,
/// because ListImports' model asks for `([0-9a-f]{16})+` of at least 112
/// and botocore checks that length before sending. The first 16 are the
/// operation's tag, so that each refuses the other's token as DynamoDB
/// does; the next 16 the id the next page starts at; the rest zeros.
pub(crate) fn page_token(tag: u64, id: u64) -> String {
    format!("{tag:016x}{id:016x}{:080}", 0)
}

/// The id a token of [`page_token`] names, or DynamoDB's
/// ValidationException for any other string (DDB-EXPORT-006).
pub(crate) fn read_page_token(tag: u64, token: &str) -> Result<u64> {
    let invalid = || {
        DynamoError::validation(format!(
            "Invalid Request: Provided nextToken is invalid: {token}"
        ))
    };
    let hex = |b: u8| b.is_ascii_digit() || (b'a'..=b'f').contains(&b);
    if token.len() != 112 || !token.bytes().all(hex) {
        return Err(invalid());
    }
    let (head, id, rest) = (&token[..16], &token[16..32], &token[32..]);
    if head != format!("{tag:016x}") || rest.bytes().any(|b| b != b'0') {
        return Err(invalid());
    }
    u64::from_str_radix(id, 16).map_err(|_| invalid())
}

/// One page of a listing, newest (highest id) first: the entries from id
/// `next` down, at most `max`, and the token of the page after it.
pub(crate) fn newest_first<T>(
    mut entries: Vec<(u64, T)>,
    max: usize,
    next: Option<u64>,
    tag: u64,
) -> (Vec<T>, Option<String>) {
    entries.retain(|(id, _)| next.is_none_or(|start| *id <= start));
    entries.sort_by_key(|(id, _)| std::cmp::Reverse(*id));
    let token = entries.get(max).map(|(id, _)| page_token(tag, *id));
    entries.truncate(max);
    (entries.into_iter().map(|(_, entry)| entry).collect(), token)
}

fn md5_digest(bytes: &[u8]) -> Vec<u8> {
    use md5::Digest;
    md5::Md5::digest(bytes).to_vec()
}

fn md5_base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(md5_digest(bytes))
}

/// An item as an Ion struct: DynamoDB's export mapping (strings, decimals,
/// blobs, booleans, null, structs, lists, and sets as lists annotated
/// `$dynamodb_SS`, `$dynamodb_NS`, `$dynamodb_BS`).
fn ion_map(item: &Item) -> String {
    let fields: Vec<String> = (item.iter())
        .map(|(name, value)| format!("{}:{}", ion_string(name), ion_value(value)))
        .collect();
    format!("{{{}}}", fields.join(","))
}

fn ion_value(value: &AttributeValue) -> String {
    use base64::Engine as _;
    let blob = |b: &[u8]| {
        format!(
            "{{{{{}}}}}",
            base64::engine::general_purpose::STANDARD.encode(b)
        )
    };
    let list = |items: Vec<String>| format!("[{}]", items.join(","));
    match value {
        AttributeValue::S(s) => ion_string(s),
        AttributeValue::N(n) => ion_decimal(&n.to_string()),
        AttributeValue::B(b) => blob(b),
        AttributeValue::Bool(b) => b.to_string(),
        AttributeValue::Null => "null".into(),
        AttributeValue::M(m) => ion_map(m),
        AttributeValue::L(l) => list(l.iter().map(ion_value).collect()),
        AttributeValue::Ss(s) => format!(
            "$dynamodb_SS::{}",
            list(s.iter().map(|s| ion_string(s)).collect())
        ),
        AttributeValue::Ns(n) => format!(
            "$dynamodb_NS::{}",
            list(n.iter().map(|n| ion_decimal(&n.to_string())).collect())
        ),
        AttributeValue::Bs(b) => format!(
            "$dynamodb_BS::{}",
            list(b.iter().map(|b| blob(b)).collect())
        ),
    }
}

/// An Ion string: JSON's escaping is valid Ion.
fn ion_string(s: &str) -> String {
    serde_json::to_string(s).expect("plain data always serialises")
}

/// A number as an Ion decimal: `1` is an Ion int, so a point is added;
/// an exponent is written with `d`.
fn ion_decimal(number: &str) -> String {
    match number.split_once(['e', 'E']) {
        Some((mantissa, exponent)) => format!("{mantissa}d{exponent}"),
        None if number.contains('.') => number.to_string(),
        None => format!("{number}."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn store_errors_become_dynamodbs_failure_code_and_s3s_sentence() {
        let raw = "cannot write s3://b/k: Generic S3 error: status 404: <?xml version=\"1.0\"?><Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message></Error>";
        assert_eq!(
            store_failure(raw),
            (
                "S3NoSuchBucket".into(),
                "cannot write s3://b/k: The specified bucket does not exist".into()
            )
        );
        let (code, message) = store_failure("cannot write s3://b/k: connection refused");
        assert_eq!(
            (code.as_str(), message.as_str()),
            ("S3Unavailable", "cannot write s3://b/k: connection refused")
        );
    }

    #[test]
    fn page_tokens_are_112_hex_digits_that_only_their_own_listing_reads() {
        let token = page_token(EXPORTS_TAG, 0x2a);
        assert_eq!(token.len(), 112);
        assert!(token
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        assert_eq!(read_page_token(EXPORTS_TAG, &token).unwrap(), 0x2a);
        let imports_tag = 0x696d_706f_7274_7300;
        for foreign in [
            page_token(imports_tag, 0x2a),
            "3".into(),
            token.to_uppercase(),
        ] {
            let refused = read_page_token(EXPORTS_TAG, &foreign).unwrap_err();
            assert_eq!(
                refused.message,
                format!("Invalid Request: Provided nextToken is invalid: {foreign}")
            );
        }
    }

    #[test]
    fn pages_run_newest_first_and_each_token_starts_the_next() {
        let entries = || (1..=5u64).map(|id| (id, id)).collect::<Vec<_>>();
        let (first, token) = newest_first(entries(), 2, None, EXPORTS_TAG);
        assert_eq!(first, [5, 4]);
        let next = read_page_token(EXPORTS_TAG, &token.unwrap()).unwrap();
        let (second, token) = newest_first(entries(), 2, Some(next), EXPORTS_TAG);
        assert_eq!(second, [3, 2]);
        let next = read_page_token(EXPORTS_TAG, &token.unwrap()).unwrap();
        assert_eq!(
            newest_first(entries(), 2, Some(next), EXPORTS_TAG),
            (vec![1], None)
        );
    }

    #[test]
    fn job_arns_need_a_valid_table_arn_then_their_own_word_and_an_id() {
        let table = "arn:aws:dynamodb:us-east-1:000000000000:table/orders";
        let arn = format!("{table}/export/0");
        let parts = job_arn_parts(&arn, "export");
        assert_eq!(parts, Some(("us-east-1", "000000000000")));
        for junk in [
            table.to_string(),
            format!("{table}/import/01796374227026-0000ffff"),
            format!("{table}/export/"),
            format!("{table}/export/a/b"),
            "arn:aws:dynamodb:us-east-1:000000000000:table/x/export/1".into(),
            "arn:aws:s3:us-east-1:000000000000:table/orders/export/1".into(),
            "x".repeat(40),
        ] {
            assert_eq!(job_arn_parts(&junk, "export"), None, "{junk}");
        }
    }

    #[test]
    fn numbers_are_ion_decimals() {
        assert_eq!(ion_decimal("12"), "12.");
        assert_eq!(ion_decimal("-1.5"), "-1.5");
        assert_eq!(ion_decimal("1E+30"), "1d+30");
    }

    #[test]
    fn items_are_ion_structs_with_annotated_sets() {
        let mut item = Item::new();
        item.insert("s".into(), AttributeValue::S("a\"b".into()));
        item.insert("ss".into(), AttributeValue::Ss(vec!["x".into()]));
        item.insert("b".into(), AttributeValue::B(vec![1, 2]));
        let text = ion_map(&item);
        assert!(text.contains("\"s\":\"a\\\"b\""), "{text}");
        assert!(text.contains("\"ss\":$dynamodb_SS::[\"x\"]"), "{text}");
        assert!(text.contains("\"b\":{{AQI=}}"), "{text}");
    }
}
