//! Several nodes over one shared database: each node's search structures
//! follow the vector entries the other nodes commit.
//!
//! A node builds an index's in-memory structure from the stored entries
//! when it loads the index, and its own writes update it as they commit
//! (items.rs). The writes of other nodes reach it through the table's
//! change log, the one every log reader shares: on shared storage a table
//! with a vector index logs a keys-only record of each write (streams.rs)
//! unless it logs more already, and this node's follower thread reads the
//! records as they settle (cluster.rs: about two seconds behind, which is
//! within what DynamoDB promises, since it too copies each write into the
//! index after the write) and sets each written item's entry to what
//! storage holds *now*, under the item's lock. Reading the stored entry
//! rather than the record makes following idempotent and proof against
//! order: re-reading an item this node wrote itself changes nothing
//! (store.rs compares vectors), and the item's last record, read after its
//! last write committed, leaves the stored entry whatever came before.
//!
//! Records logged only for followers are kept [`FOLLOWED_LOG_SECONDS`]
//! (shard_reads.rs trims them); a node that has not read the log for half
//! that time (stopped, or cut off from the database) may have missed some,
//! so it fills its structures again from the stored entries.

use crate::keyspace::{stream_seq_of, vector_entry_key};
use crate::locks::{Holder, LockKey, LockSet};
use crate::table::Table;
use crate::vectors::{Entry, VectorIndex};
use crate::Engine;
use ferrodyn_types::{Item, Result};
use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// How long the change log keeps records written only for followers (a
/// table with no stream, recovery, Kinesis destination or replica).
pub(crate) const FOLLOWED_LOG_SECONDS: u64 = 600;
/// A node that read no log for this long fills its structures again.
const LAPSE_MILLIS: u64 = FOLLOWED_LOG_SECONDS * 1000 / 2;
/// How often the follower reads the logs.
const FOLLOW_INTERVAL: Duration = Duration::from_millis(200);
/// Records read per storage scan.
const FOLLOW_PAGE: usize = 1000;

/// What the follower reads of a log record.
#[derive(serde::Deserialize)]
struct LoggedKeys {
    dynamodb: LoggedBody,
}

#[derive(serde::Deserialize)]
struct LoggedBody {
    #[serde(rename = "Keys")]
    keys: Item,
}

impl Engine {
    /// Starts the follower thread (shared storage only).
    pub(crate) fn start_vector_follower(self: &Arc<Self>) {
        if !self.shared() {
            return;
        }
        self.run_periodically(
            "ferrodyn-vectors",
            FOLLOW_INTERVAL,
            "vector follower",
            |e| e.follow_vector_writes(),
        );
    }

    /// Marks a structure about to be filled from the stored entries: it
    /// follows the log from the settled sequence on (every write committing
    /// after the fill read its entry has a later number).
    pub(crate) fn start_following(&self, index: &VectorIndex) {
        if self.shared() {
            let settled = self.settled_sequence();
            index.followed_to.store(settled, Ordering::SeqCst);
            index.followed_at.store(now_millis(), Ordering::SeqCst);
        }
    }

    /// One pass: every table with a vector index takes the settled part of
    /// its log.
    pub(crate) fn follow_vector_writes(&self) -> Result<()> {
        let tables: Vec<Arc<Table>> = (self.tables.read().values())
            .filter(|t| t.has_vector_index() && !t.is_creating())
            .cloned()
            .collect();
        for table in tables {
            self.follow_table(&table)?;
        }
        Ok(())
    }

    fn follow_table(&self, table: &Table) -> Result<()> {
        let indexes = table.vector_indexes();
        for index in &indexes {
            let at = index.followed_at.load(Ordering::SeqCst);
            if at != 0 && now_millis().saturating_sub(at) > LAPSE_MILLIS {
                self.refill_vector_store(table.id, index)?;
            }
        }
        let to = self.settled_sequence();
        let Some(mut from) = indexes
            .iter()
            .map(|i| i.followed_to.load(Ordering::SeqCst))
            .min()
        else {
            return Ok(());
        };
        while from < to {
            let page = self.log_page(table.id, from, to - 1, FOLLOW_PAGE)?;
            let mut written = HashSet::new();
            for (_, value) in &page {
                let logged: LoggedKeys =
                    serde_json::from_slice(value).map_err(crate::storage_error)?;
                written.insert(table.schema.encode(table.id, &logged.dynamodb.keys));
            }
            for item_key in written {
                self.follow_item(table, &indexes, item_key)?;
            }
            from = match page.last() {
                Some((key, _)) if page.len() == FOLLOW_PAGE => {
                    stream_seq_of(key).expect("record keys carry a sequence number") + 1
                }
                _ => to,
            };
            for index in &indexes {
                index.followed_to.fetch_max(from, Ordering::SeqCst);
                index.followed_at.store(now_millis(), Ordering::SeqCst);
            }
        }
        Ok(())
    }

    /// Sets the item's entry in each index to the stored one.
    fn follow_item(
        &self,
        table: &Table,
        indexes: &[Arc<VectorIndex>],
        item: Vec<u8>,
    ) -> Result<()> {
        let _held = self.hold_for_reading(item.clone());
        for index in indexes {
            let key = vector_entry_key(table.id, index.id, &item);
            let stored = self.storage.get(&key).map_err(crate::storage_error)?;
            let entry = stored.map(|v| Entry::decode(index, &v)).transpose()?;
            index.store.set(&item, entry.as_ref());
        }
        Ok(())
    }

    /// The item's lock, shared with readers: a write of the item waits
    /// until its entry is set, so no entry read before a local write is set
    /// after it. A write holding the lock is waited for, in short sleeps
    /// (a reader is refused rather than queued behind a writer).
    fn hold_for_reading(&self, item: Vec<u8>) -> LockSet<'_> {
        let keys = [LockKey {
            key: item,
            item: true,
        }];
        loop {
            match self.locks.acquire(Holder::Read, &keys) {
                Ok(held) => return held,
                Err(_) => std::thread::sleep(Duration::from_millis(1)),
            }
        }
    }

    /// Fills the structure again from the stored entries, dropping the
    /// items that have none any more.
    fn refill_vector_store(&self, table_id: u64, index: &VectorIndex) -> Result<()> {
        self.start_following(index);
        let mut present = HashSet::new();
        self.fill_vector_store(table_id, index, &mut |item| {
            present.insert(item.to_vec());
        })?;
        index.store.retain(|item| present.contains(item));
        Ok(())
    }

    /// The first sequence number the log keeps when only followers read
    /// it (shared storage's sequence numbers are hybrid clocks).
    pub(crate) fn followed_log_start(&self) -> u64 {
        let micros = now_millis().saturating_sub(FOLLOWED_LOG_SECONDS * 1000) * 1000;
        micros << 8
    }
}

fn now_millis() -> u64 {
    crate::cluster::now_millis()
}
