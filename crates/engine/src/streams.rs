//! DynamoDB Streams: a change record for every item write of a table whose
//! stream is enabled, kept for 24 hours and read through shard iterators.
//!
//! Records are stored under `'r' | table id | sequence number` and written in
//! the same storage batch as the item change they describe, so a reader of
//! the stream sees exactly the committed changes. Sequence numbers come from
//! one engine-wide atomic counter, taken while the write holds its item's
//! lock, so the records of one item are in commit order (DynamoDB promises
//! order per item only); writes of different items commit in any order, and
//! readers stop below the oldest number still being committed
//! ([`SequenceGate`]) so that none is skipped.
//! Each enabled stream (a table may disable and re-enable its stream, getting
//! a new one) owns the range of sequence numbers written while it was on and
//! has a single shard. The same log is written for the table's other
//! readers even without a stream: point-in-time recovery, Kinesis
//! destinations and replicas (whole changes), and on shared storage the
//! other nodes' vector indexes (keys only, vector_ops/follow.rs).

use crate::items::PlannedWrite;
pub use crate::shared::{ChangeSource, Shard, StreamInfo};
use crate::table::Table;
use crate::Engine;
use ferrodyn_types::{item_size, Item};
use parking_lot::Mutex;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// How long records are kept, in seconds.
pub const RETENTION_SECONDS: f64 = 24.0 * 3600.0;

/// Sequence numbers as DynamoDB shows them: decimal strings of 21 digits.
pub fn format_sequence(seq: u64) -> String {
    format!("{seq:021}")
}

impl Engine {
    /// Brings the table's list of streams in line with its description after
    /// CreateTable or UpdateTable: a newly enabled stream starts at the next
    /// sequence number, a disabled one ends at the last. The caller holds the
    /// table's writes (`Table::exclusive`), so none is in flight.
    pub(crate) fn sync_streams(&self, table: &Table) {
        let description = table.describe();
        let next = self.sequence_boundary();
        let wanted = description
            .stream_specification
            .as_ref()
            .filter(|s| s.stream_enabled)
            .and_then(|s| {
                Some((
                    description.latest_stream_arn.clone()?,
                    s.stream_view_type.clone()?,
                ))
            });
        let current = table.current_stream();
        match (current, wanted) {
            (Some(current), Some((arn, _))) if current.arn == arn => {}
            (current, wanted) => {
                let now_ms = self.clock.now_millis();
                if current.is_some() {
                    // Disabled: its open shards close without children.
                    table.edit_streams(|streams| {
                        if let Some(stream) = streams.last_mut().filter(|s| s.enabled()) {
                            stream.end_seq = Some(next.saturating_sub(1));
                            crate::shards::close_open(stream, next.saturating_sub(1), now_ms);
                        }
                    });
                }
                if let Some((arn, view_type)) = wanted {
                    let shards =
                        crate::shards::first_shards(&arn, &table.partitions(), next, now_ms);
                    table.add_stream(StreamInfo {
                        label: description.latest_stream_label.clone().unwrap_or_default(),
                        arn,
                        view_type,
                        start_seq: next,
                        end_seq: None,
                        created: self.now_seconds(),
                        shards,
                    });
                }
            }
        }
    }

    /// The sequence number at which a change to the table's streams takes
    /// effect: every record numbered below it belongs before the change.
    /// The caller holds the table's writes (`Table::exclusive`), so on
    /// embedded storage none is in flight; on shared storage it is a fresh
    /// hybrid-clock reading, above every record any node has committed
    /// (this node's counter knows only its own), and a node whose write was
    /// planned before the change re-plans when its commit finds the catalog
    /// record changed, numbering it anew above the boundary it then loads.
    pub(crate) fn sequence_boundary(&self) -> u64 {
        if self.shared() {
            self.allocate_sequence()
        } else {
            self.next_stream_seq.load(Ordering::SeqCst)
        }
    }

    /// Keeps this node's sequence numbers above every shard boundary a
    /// loaded catalog record holds (see [`Engine::sequence_boundary`]).
    pub(crate) fn observe_shard_boundaries(&self, streams: &[StreamInfo]) {
        let highest = streams
            .iter()
            .flat_map(|s| s.shards.iter().map(|shard| shard.start_seq))
            .max();
        if let Some(highest) = highest {
            self.next_stream_seq
                .fetch_max(highest + 1, Ordering::SeqCst);
        }
    }

    /// The records the planned writes produce on their tables' streams, as
    /// storage puts. Called with the writes' locks held, just before commit;
    /// their sequence numbers stay unreadable until [`StreamBatch::finish`].
    pub(crate) fn stream_records(
        &self,
        writes: &[PlannedWrite],
        source: ChangeSource,
    ) -> StreamBatch<'_> {
        let mut out = StreamBatch {
            gate: &self.stream_gate,
            entries: Vec::new(),
        };
        // One reading for the records' seconds, milliseconds and microseconds.
        let micros = self.clock.now_micros();
        for write in writes {
            let streams = write.table.streams_ref();
            let stream = streams.last().filter(|s| s.enabled());
            let recovery = write.table.logs_whole_changes();
            // Shared storage: the other nodes' vector search structures
            // follow this write through its keys (vector_ops/follow.rs).
            let followed = self.shared() && write.table.has_vector_index();
            if stream.is_none() && !recovery && !followed {
                continue;
            }
            let logged = Logged {
                stream,
                recovery,
                followed,
            };
            let region = self.region_of(&write.table.catalog_name);
            let Some(record) = change_record(&write.table, logged, write, (source, micros), region)
            else {
                continue;
            };
            // Shared storage: a hybrid clock unique across nodes (cluster.rs);
            // the gate orders this process's writers only.
            let seq = if self.shared() {
                self.allocate_sequence()
            } else {
                self.stream_gate.open(&self.next_stream_seq)
            };
            let mut record = record;
            record.dynamodb.sequence_number = format_sequence(seq);
            out.entries.push((
                seq,
                crate::keyspace::stream_record_key_with_hash(
                    write.table.id,
                    seq,
                    write.partition_hash(),
                ),
                serde_json::to_vec(&record).expect("plain data always serialises"),
            ));
        }
        out
    }

    /// The lowest sequence number a consumer of the table's log (a Kinesis
    /// destination, another region's replica) has not passed (u64::MAX:
    /// none): the log is kept from there on, however old.
    pub(crate) fn consumers_floor(&self, table: &Table) -> ferrodyn_types::Result<u64> {
        Ok(self
            .kinesis_floor(table)?
            .min(self.replication_floor(table)?))
    }

    /// The highest sequence number a reader may read up to: every record
    /// below it is committed or will never exist.
    pub(crate) fn readable_sequence(&self) -> u64 {
        // Shared storage: other nodes' commits are not in this process's
        // gate; a reader waits until numbers are old enough that their
        // writes have committed (cluster.rs), or it would read past one
        // committing late and never see it.
        if self.shared() {
            return self.settled_sequence();
        }
        self.stream_gate.readable(&self.next_stream_seq)
    }
}

/// Stream sequence numbers handed out to writes that have not committed
/// yet. Sequence numbers are taken in parallel and committed in any order,
/// so a reader that read record n+1 before record n landed would skip n
/// for ever; readers therefore stop below the oldest open number.
#[derive(Default)]
pub struct SequenceGate {
    open: Mutex<BTreeSet<u64>>,
}

impl SequenceGate {
    fn open(&self, next: &AtomicU64) -> u64 {
        let mut open = self.open.lock();
        let seq = next.fetch_add(1, Ordering::SeqCst);
        open.insert(seq);
        seq
    }

    fn close(&self, seqs: impl Iterator<Item = u64>) {
        let mut open = self.open.lock();
        for seq in seqs {
            open.remove(&seq);
        }
    }

    /// One past the last readable sequence number.
    fn readable(&self, next: &AtomicU64) -> u64 {
        let open = self.open.lock();
        open.first()
            .copied()
            .unwrap_or_else(|| next.load(Ordering::SeqCst))
    }
}

/// The stream records of one commit: (sequence number, key, record).
pub(crate) struct StreamBatch<'a> {
    gate: &'a SequenceGate,
    pub entries: Vec<(u64, Vec<u8>, Vec<u8>)>,
}

impl StreamBatch<'_> {
    /// The commit is over (written or failed): its numbers become readable.
    pub(crate) fn finish(self) {}
}

impl Drop for StreamBatch<'_> {
    fn drop(&mut self) {
        if !self.entries.is_empty() {
            self.gate.close(self.entries.iter().map(|(seq, _, _)| *seq));
        }
    }
}

/// Who reads a table's change log now: its enabled stream (if any), and
/// point-in-time recovery (which needs both images of every change).
#[derive(Clone, Copy)]
struct Logged<'a> {
    stream: Option<&'a StreamInfo>,
    recovery: bool,
    /// Logged for other nodes' vector indexes: the keys suffice.
    followed: bool,
}

/// The view type under which both images are kept.
const BOTH_IMAGES: &str = "NEW_AND_OLD_IMAGES";
/// The view type of records kept only for their keys.
const KEYS_ONLY: &str = "KEYS_ONLY";

/// Which images a view type shows: (new, old).
fn images_of(view_type: &str) -> (bool, bool) {
    match view_type {
        "NEW_IMAGE" => (true, false),
        "OLD_IMAGE" => (false, true),
        BOTH_IMAGES => (true, true),
        _ => (false, false),
    }
}

/// The change-log record of one write, or None for a write that changed
/// nothing (DynamoDB emits no record for no-op writes). It is a stream
/// record in DynamoDB's shape; when point-in-time recovery logs it, it holds
/// both images and a `ferrodyn` member (commit time, image sizes) that
/// [`project`] takes off before a stream reader sees it.
fn change_record<'w>(
    table: &Table,
    logged: Logged<'_>,
    write: &'w PlannedWrite,
    (source, micros): (ChangeSource, u64),
    region: &'w str,
) -> Option<ChangeRecord<'w>> {
    let now = (micros / 1000) as f64 / 1000.0;
    let (old, new) = (write.old.as_ref(), write.new.as_ref());
    let event = match (old, new) {
        (None, None) => return None,
        (Some(o), Some(n)) if crate::shared::same_item(o, n) => return None,
        (None, Some(_)) => "INSERT",
        (Some(_), Some(_)) => "MODIFY",
        (Some(_), None) => "REMOVE",
    };
    let view_type = match (logged.stream, logged.recovery) {
        (_, true) => BOTH_IMAGES,
        (Some(stream), false) => stream.view_type.as_str(),
        (None, false) if logged.followed => KEYS_ONLY,
        (None, false) => return None,
    };
    let keys = table.schema.extract(old.or(new).expect("one image exists"));
    let keys_bytes = item_size(&keys);
    let (with_new, with_old) = images_of(view_type);
    let new_bytes = new.map_or(0, item_size);
    let old_bytes = old.map_or(0, item_size);
    let shown = images_of(logged.stream.map_or("", |s| s.view_type.as_str()));
    let size_bytes =
        keys_bytes + if shown.0 { new_bytes } else { 0 } + if shown.1 { old_bytes } else { 0 };
    // Unique per stream (or per table's log) and item; the time makes it
    // unique per change.
    let log = (logged.stream).map_or_else(|| table.id.to_string(), |s| s.arn.clone());
    let event_id = format!(
        "{:016x}{:016x}",
        crate::keys::partition_hash(&ferrodyn_types::AttributeValue::S(format!(
            "{log}:{keys:?}"
        ))),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
    );
    Some(ChangeRecord {
        event_id,
        event_name: event,
        event_version: "1.1",
        event_source: "aws:dynamodb",
        aws_region: region,
        dynamodb: ChangeBody {
            approximate_creation_date_time: now.floor(),
            keys,
            new_image: new.filter(|_| with_new),
            old_image: old.filter(|_| with_old),
            sequence_number: String::new(),
            size_bytes,
            stream_view_type: logged
                .stream
                .map_or(view_type, |s| s.view_type.as_str())
                .to_string(),
        },
        user_identity: (source == ChangeSource::TimeToLive)
            .then(|| json!({ "type": "Service", "principalId": "dynamodb.amazonaws.com" })),
        recovery: logged.recovery.then_some(RecoveryFacts {
            commit_millis: micros / 1000,
            commit_micros: micros,
            keys_bytes,
            new_bytes,
            old_bytes,
            version: write.version.as_ref().map(|v| &v.new),
        }),
    })
}

/// A change-log record as stored: a DynamoDB Streams record, serialised
/// straight from the write's images (building a `serde_json::Value` of both
/// images first cost PutItem a tenth of its CPU with recovery on).
#[derive(serde::Serialize)]
pub(crate) struct ChangeRecord<'w> {
    #[serde(rename = "eventID")]
    event_id: String,
    #[serde(rename = "eventName")]
    event_name: &'static str,
    #[serde(rename = "eventVersion")]
    event_version: &'static str,
    #[serde(rename = "eventSource")]
    event_source: &'static str,
    #[serde(rename = "awsRegion")]
    aws_region: &'w str,
    dynamodb: ChangeBody<'w>,
    #[serde(rename = "userIdentity", skip_serializing_if = "Option::is_none")]
    user_identity: Option<Value>,
    /// [`RECOVERY_MEMBER`]: present when point-in-time recovery logs it.
    #[serde(rename = "ferrodyn", skip_serializing_if = "Option::is_none")]
    recovery: Option<RecoveryFacts<'w>>,
}

#[derive(serde::Serialize)]
#[serde(rename_all = "PascalCase")]
struct ChangeBody<'w> {
    approximate_creation_date_time: f64,
    keys: Item,
    #[serde(skip_serializing_if = "Option::is_none")]
    new_image: Option<&'w Item>,
    #[serde(skip_serializing_if = "Option::is_none")]
    old_image: Option<&'w Item>,
    sequence_number: String,
    size_bytes: usize,
    stream_view_type: String,
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct RecoveryFacts<'w> {
    commit_millis: u64,
    /// Kinesis destinations with MICROSECOND precision (kinesis.rs).
    commit_micros: u64,
    keys_bytes: usize,
    new_bytes: usize,
    old_bytes: usize,
    /// Global tables: the change's item version, whose region says where
    /// it was made (replication/ sends a region's own changes).
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<&'w crate::shared::ItemVersion>,
}

/// The member of a log record that only point-in-time recovery reads.
pub(crate) const RECOVERY_MEMBER: &str = "ferrodyn";

/// A logged record as a stream of view type `view_type` shows it: the
/// images that view keeps, its SizeBytes, no recovery member. Records
/// written for the stream alone are stored that way already.
pub(crate) fn project(record: &mut Value, view_type: &str) {
    let Some(recovery) = record
        .as_object_mut()
        .and_then(|r| r.remove(RECOVERY_MEMBER))
    else {
        return;
    };
    let (with_new, with_old) = images_of(view_type);
    let body = &mut record["dynamodb"];
    let Some(body_map) = body.as_object_mut() else {
        return;
    };
    if !with_new {
        body_map.remove("NewImage");
    }
    if !with_old {
        body_map.remove("OldImage");
    }
    let bytes = |name: &str| recovery[name].as_u64().unwrap_or(0);
    let size = bytes("keysBytes")
        + if with_new { bytes("newBytes") } else { 0 }
        + if with_old { bytes("oldBytes") } else { 0 };
    body_map.insert("SizeBytes".into(), json!(size));
    body_map.insert("StreamViewType".into(), json!(view_type));
}

/// One stored record and its sequence number.
pub struct StoredRecord {
    pub seq: u64,
    pub record: Value,
}

impl Engine {
    /// Sets the sequence counter past every record and stream on disk
    /// (at start-up).
    pub(crate) fn restore_stream_sequence(&self) -> ferrodyn_types::Result<()> {
        let mut next = 1u64;
        for table in self.tables.read().values() {
            for stream in table.streams() {
                next = next
                    .max(stream.start_seq)
                    .max(stream.end_seq.map_or(0, |e| e + 1));
            }
            let start = crate::keyspace::stream_record_key(table.id, 0);
            let end = crate::keyspace::stream_record_key(table.id, u64::MAX);
            let last = self
                .storage
                .scan(Bound::Included(&start), Bound::Included(&end), true, 1)
                .map_err(crate::storage_error)?;
            if let Some((key, _)) = last.first() {
                let seq = crate::keyspace::stream_seq_of(key)
                    .expect("record keys carry a sequence number");
                next = next.max(seq + 1);
            }
        }
        self.next_stream_seq
            .store(next, std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }

    /// Every stream of every table (or of one table), with its table.
    pub fn list_streams(&self, table_name: Option<&str>) -> Vec<(Arc<Table>, StreamInfo)> {
        let tables = self.tables.read();
        let region = self.request_region();
        let mut out: Vec<(Arc<Table>, StreamInfo)> = tables
            .values()
            .filter(|t| self.name_in_region(&t.catalog_name, &region).is_some())
            .filter(|t| table_name.is_none_or(|n| t.name == n))
            .flat_map(|t| t.streams().into_iter().map(move |s| (Arc::clone(t), s)))
            .collect();
        out.sort_by(|a, b| a.1.arn.cmp(&b.1.arn));
        out
    }

    /// The stream with this ARN and its table. On shared storage an ARN
    /// this node does not know reloads the catalog first (the table may
    /// have been created or changed through another node within the last
    /// second), as an unknown table name does.
    pub fn find_stream(&self, arn: &str) -> Option<(Arc<Table>, StreamInfo)> {
        self.find_stream_where(|_, s| s.arn == arn)
    }

    /// The stream a shard iterator names: its table's id and the stream's
    /// first sequence number (reloading as [`Engine::find_stream`] does).
    pub fn find_stream_of(
        &self,
        table_id: u64,
        start_seq: u64,
    ) -> Option<(Arc<Table>, StreamInfo)> {
        self.find_stream_where(|t, s| t.id == table_id && s.start_seq == start_seq)
    }

    fn find_stream_where(
        &self,
        wanted: impl Fn(&Table, &StreamInfo) -> bool,
    ) -> Option<(Arc<Table>, StreamInfo)> {
        let find = || {
            self.list_streams(None)
                .into_iter()
                .find(|(t, s)| wanted(t, s))
        };
        find().or_else(|| {
            (self.shared() && self.reload_catalog().is_ok())
                .then(find)
                .flatten()
        })
    }

    /// How many change-log records table `table_id` keeps, and their bytes.
    pub(crate) fn change_log_size(&self, table_id: u64) -> ferrodyn_types::Result<(u64, u64)> {
        let (mut records, mut bytes) = (0u64, 0u64);
        let mut start = crate::keyspace::stream_record_key(table_id, 0);
        let end = crate::keyspace::stream_record_key(table_id, u64::MAX);
        loop {
            let page = (self.storage)
                .scan(Bound::Excluded(&start), Bound::Included(&end), false, 1000)
                .map_err(crate::storage_error)?;
            for (key, value) in &page {
                records += 1;
                bytes += (key.len() + value.len()) as u64;
            }
            match page.last() {
                Some((key, _)) if page.len() == 1000 => start = key.clone(),
                _ => return Ok((records, bytes)),
            }
        }
    }

    /// The next sequence number to be assigned (the position of LATEST).
    pub fn next_sequence(&self) -> u64 {
        if self.shared() {
            return self.allocate_sequence(); // every node's clock, not this node's last write
        }
        self.next_stream_seq
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Up to `limit` records of `table` with sequence numbers in
    /// `from..=to`, oldest first, skipping records past the retention period.
    pub fn read_stream(
        &self,
        table: &Table,
        from: u64,
        to: u64,
        limit: usize,
    ) -> ferrodyn_types::Result<Vec<StoredRecord>> {
        Ok(self.read_stream_page(table, from, to, limit)?.records)
    }

    /// [`Engine::read_stream`], also saying whether the page reached `to`:
    /// every record up to `to` is in it or before it. Sequence numbers are
    /// not dense (shared storage's hybrid clock, statistics deltas, other
    /// tables' records), so a closed shard is read to its end when a page
    /// reaches its end number, not when a record carries it.
    pub fn read_stream_page(
        &self,
        table: &Table,
        from: u64,
        to: u64,
        limit: usize,
    ) -> ferrodyn_types::Result<StreamPage> {
        // Nothing at or past a number still being committed.
        let readable = to.min(self.readable_sequence().saturating_sub(1));
        if from > readable {
            return Ok(StreamPage {
                records: Vec::new(),
                reached_end: from > to,
            });
        }
        let to_requested = to;
        let to = readable;
        let start = crate::keyspace::stream_record_key(table.id, from);
        // Keys go on after the number (the item's hash): up to the next one.
        let end = crate::keyspace::stream_record_key(table.id, to.saturating_add(1));
        let entries = self
            .storage
            .scan(Bound::Included(&start), Bound::Excluded(&end), false, limit)
            .map_err(crate::storage_error)?;
        let scanned = entries.len();
        let oldest = self.now_seconds() - RETENTION_SECONDS;
        let streams = table.streams();
        let mut out = Vec::with_capacity(entries.len());
        for (key, value) in entries {
            let seq =
                crate::keyspace::stream_seq_of(&key).expect("record keys carry a sequence number");
            let mut record: Value = serde_json::from_slice(&value).map_err(crate::storage_error)?;
            if let Some(stream) = streams.iter().find(|s| s.covers(seq)) {
                project(&mut record, &stream.view_type);
            }
            let created = record["dynamodb"]["ApproximateCreationDateTime"]
                .as_f64()
                .unwrap_or(0.0);
            if created >= oldest.floor() {
                out.push(StoredRecord { seq, record });
            }
        }
        Ok(StreamPage {
            reached_end: scanned < limit && to >= to_requested,
            records: out,
        })
    }
}

/// One page of a shard: its records, and whether it read up to the end of
/// the range asked for.
pub struct StreamPage {
    pub records: Vec<StoredRecord>,
    pub reached_end: bool,
}
