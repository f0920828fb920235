//! Reading one stream shard (shards.rs) out of the change log
//! (streams.rs): GetRecords' pages (its shard's records only, at most 1,000
//! and 1 MB), the trim point after which records are past the streams' 24
//! hours (TrimmedDataAccessException before it), TRIM_HORIZON and
//! AT_TIMESTAMP positions, and reclaiming the log nobody may read.

use crate::shared::{Shard, StreamInfo};
use crate::streams::{StoredRecord, RETENTION_SECONDS};
use crate::table::Table;
use crate::{keyspace, Engine};
use ferrodyn_types::{DynamoError, ErrorKind, Result};
use serde_json::Value;
use std::ops::Bound;
use std::sync::atomic::Ordering;

/// Most bytes of records one GetRecords returns (DynamoDB: 1 MB).
const PAGE_BYTES: usize = 1024 * 1024;
/// Most log keys one GetRecords reads looking for its shard's records; it
/// may then answer with fewer records (DynamoDB's pages may be empty too).
const SCAN_BUDGET: usize = 10_000;
/// Log keys read per storage scan.
const LOG_PAGE: usize = 1_000;

/// One page of a shard's records.
pub struct ShardPage {
    pub records: Vec<StoredRecord>,
    /// Where the next page starts; None once a closed shard is read to its
    /// end.
    pub next: Option<u64>,
}

impl Engine {
    /// Up to `limit` records of `shard` from sequence number `from` on, at
    /// most 1 MB of them (always one, however large), projected to the
    /// stream's view type.
    pub fn read_shard(
        &self,
        table: &Table,
        stream: &StreamInfo,
        shard: &Shard,
        from: u64,
        limit: usize,
    ) -> Result<ShardPage> {
        if self.trimmed_before(table, shard, from)? {
            return Err(trimmed());
        }
        let end = shard.end_seq.unwrap_or(u64::MAX);
        let readable = end.min(self.readable_sequence().saturating_sub(1));
        let horizon = (self.now_seconds() - RETENTION_SECONDS).floor();
        let mut records = Vec::new();
        let (mut position, mut bytes, mut scanned) = (from, 0usize, 0usize);
        let mut exhausted = false;
        'pages: while scanned < SCAN_BUDGET {
            if position > readable {
                exhausted = true;
                break;
            }
            let entries = self.log_page(table.id, position, readable, LOG_PAGE)?;
            let full = entries.len() == LOG_PAGE;
            for (key, value) in entries {
                let seq =
                    keyspace::stream_seq_of(&key).expect("record keys carry a sequence number");
                // Keys without a hash predate shards that split: their
                // stream has one shard over every key.
                let held = keyspace::stream_hash_of(&key)
                    .map_or(shard.covers(seq), |hash| shard.holds(hash, seq));
                if held {
                    if !records.is_empty() && bytes + value.len() > PAGE_BYTES {
                        break 'pages; // the next page starts with it
                    }
                    let mut record: Value =
                        serde_json::from_slice(&value).map_err(crate::storage_error)?;
                    if created(&record) >= horizon {
                        crate::streams::project(&mut record, &stream.view_type);
                        bytes += value.len();
                        records.push(StoredRecord { seq, record });
                    }
                }
                scanned += 1;
                position = seq + 1;
                if records.len() == limit {
                    break 'pages;
                }
            }
            if !full {
                exhausted = true;
                break;
            }
        }
        // A closed shard whose whole range is committed and was read
        // through has no next page (on shared storage, once its numbers
        // have settled: `readable` reaches `end` only then).
        let done = exhausted && readable == end;
        if let Some(closed_at) = self.closed_meanwhile(table, stream, shard)? {
            // Another node closed it: what follows its end is its children's.
            records.retain(|r| r.seq <= closed_at);
            position = position.min(closed_at + 1);
        }
        Ok(ShardPage {
            records,
            next: (!done).then_some(position),
        })
    }

    /// On shared storage, the end of an open shard that another node has
    /// closed since this node loaded the catalog: read after the records, so
    /// that any child record the page holds (committed only after the close)
    /// is known to be past it.
    fn closed_meanwhile(
        &self,
        table: &Table,
        stream: &StreamInfo,
        shard: &Shard,
    ) -> Result<Option<u64>> {
        if !self.shared() || !shard.is_open() {
            return Ok(None);
        }
        let known = self.tables.read().get(&table.catalog_name).cloned();
        let Some(table) = known.filter(|t| t.id == table.id) else {
            return Ok(None);
        };
        let fresh = self.refresh_table(&table)?;
        let streams = fresh.streams();
        let now = streams
            .iter()
            .find(|s| s.arn == stream.arn)
            .map(StreamInfo::shards);
        let found = now.into_iter().flatten().find(|s| s.id == shard.id);
        Ok(found.and_then(|s| s.end_seq))
    }

    /// Change-log keys and values of table `table_id` numbered `from..=to`.
    pub(crate) fn log_page(
        &self,
        table_id: u64,
        from: u64,
        to: u64,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let start = keyspace::stream_record_key(table_id, from);
        let end = keyspace::stream_record_key(table_id, to.saturating_add(1));
        (self.storage)
            .scan(Bound::Included(&start), Bound::Excluded(&end), false, limit)
            .map_err(crate::storage_error)
    }

    /// The first sequence number of the table's log whose record is still
    /// within the streams' 24 hours: every record below it is trimmed.
    /// Remembered per table and moved forward from where it was.
    pub fn trim_point(&self, table: &Table) -> Result<u64> {
        let horizon = (self.now_seconds() - RETENTION_SECONDS).floor();
        let mut point = table.trim_point.load(Ordering::Relaxed);
        loop {
            let page = self.log_page(table.id, point, u64::MAX - 1, LOG_PAGE)?;
            let full = page.len() == LOG_PAGE;
            for (key, value) in page {
                let record: Value = serde_json::from_slice(&value).map_err(crate::storage_error)?;
                let seq =
                    keyspace::stream_seq_of(&key).expect("record keys carry a sequence number");
                if created(&record) >= horizon {
                    table.trim_point.store(seq, Ordering::Relaxed);
                    return Ok(seq);
                }
                point = seq + 1;
            }
            if !full {
                table.trim_point.store(point, Ordering::Relaxed);
                return Ok(point);
            }
        }
    }

    /// Whether a reader at `from` in `shard` missed records that are now
    /// trimmed (records it would have read, below the trim point).
    fn trimmed_before(&self, table: &Table, shard: &Shard, from: u64) -> Result<bool> {
        let point = self.trim_point(table)?;
        if from >= point {
            return Ok(false);
        }
        if from < table.log_reclaimed_to.load(Ordering::Relaxed) {
            return Ok(true); // deleted: whatever was there is gone
        }
        let page = self.log_page(table.id, from, point - 1, LOG_PAGE)?;
        let full = page.len() == LOG_PAGE;
        let held = page.iter().any(|(key, _)| {
            let seq = keyspace::stream_seq_of(key).unwrap_or(0);
            keyspace::stream_hash_of(key).map_or(shard.covers(seq), |hash| shard.holds(hash, seq))
        });
        Ok(held || full)
    }

    /// Where TRIM_HORIZON starts in `shard`: its oldest record not trimmed.
    pub fn trim_horizon(&self, table: &Table, shard: &Shard) -> Result<u64> {
        Ok(shard.start_seq.max(self.trim_point(table)?))
    }

    /// Where AT_TIMESTAMP `at` (seconds) starts in `shard`: its first record
    /// written at or after `at`, or the trim horizon when `at` is older.
    pub fn position_at(&self, table: &Table, shard: &Shard, at: f64) -> Result<u64> {
        let mut position = self.trim_horizon(table, shard)?;
        let end = shard.end_seq.unwrap_or(u64::MAX - 1);
        loop {
            let page = self.log_page(table.id, position, end, LOG_PAGE)?;
            let full = page.len() == LOG_PAGE;
            for (key, value) in page {
                let seq =
                    keyspace::stream_seq_of(&key).expect("record keys carry a sequence number");
                let record: Value = serde_json::from_slice(&value).map_err(crate::storage_error)?;
                if created(&record) >= at.floor() {
                    return Ok(seq);
                }
                position = seq + 1;
            }
            if !full {
                return Ok(position);
            }
        }
    }

    /// Deletes the change-log records of a table no reader needs: older
    /// than the streams' 24 hours (or, for a log only other nodes' vector
    /// indexes read, their minutes) and delivered to every live Kinesis
    /// destination and replica, when point-in-time recovery (which keeps
    /// its own period, recovery.rs) is off.
    pub(crate) fn reclaim_stream_log(&self, table: &Table) -> Result<()> {
        if table.recovery().is_some() {
            return Ok(());
        }
        // A log no stream ever read is kept for other nodes' vector
        // search structures alone (vector_ops/follow.rs): minutes.
        let followed_only = table.streams_ref().is_empty() && !table.logs_whole_changes();
        let kept_from = if self.shared() && followed_only {
            self.followed_log_start()
        } else {
            self.trim_point(table)?
        };
        let point = kept_from.min(self.consumers_floor(table)?);
        if point > table.log_reclaimed_to.load(Ordering::Relaxed) {
            self.trim_log(table.id, point)?;
            table.log_reclaimed_to.store(point, Ordering::Relaxed);
        }
        Ok(())
    }
}

/// A record's ApproximateCreationDateTime (seconds).
fn created(record: &Value) -> f64 {
    record["dynamodb"]["ApproximateCreationDateTime"]
        .as_f64()
        .unwrap_or(0.0)
}

/// DynamoDB Streams' answer for a position whose records were trimmed.
pub fn trimmed() -> DynamoError {
    DynamoError::new(
        ErrorKind::TrimmedDataAccess,
        "The data you are trying to access has been trimmed",
    )
}
