//! The storage key space: every key prefix and fixed key layout the engine
//! writes into the one ordered map of the `Storage` trait, with the ranges
//! that cover them and the decoders that read them back. Nothing else in the
//! engine (or above it) knows a prefix byte or a byte offset.
//!
//! | key | value |
//! |---|---|
//! | `'c' catalog-name` | the table's catalog record (JSON) |
//! | `'s' table` | the table's item count and bytes (folded base) |
//! | `'s' table n` | a change to them not yet folded (`stats`) |
//! | `'q' table index` | one index's item count and bytes (folded base) |
//! | `'q' table index n` | a change to them not yet folded |
//! | `'p' table` | the table was deleted; its data is being purged |
//! | `"mnext_table_id"` | the table-id allocator |
//! | `'i' table hash(pk) pk [sk]` | an item (see `keys`: the key values' encoding) |
//! | `'x' table index hash(ipk) ipk [isk] base-key` | a secondary-index entry |
//! | `'x' table u32::MAX hash(pk) pk` | the item-collection size of a partition |
//! | `'x' table vindex hash(pk) pk [sk]` | a vector-index entry: the f32 vector and the search-schema values (`vectors::entry`) |
//! | `'r' table seq` | a stream record |
//! | `'k' table consumer` | a change-log consumer's cursor (`kinesis`: `kinesis/<n>`) |
//! | `'t' token` | shared storage only: a ClientRequestToken record |
//! | `'a' backup` | an on-demand backup's record (`backups`) |
//! | `'b' backup table-data-key` | a backup's copy of one key of its table's data (`'s'`, `'q'` folded bases, `'x'`, `'i'`) |
//! | `'d' backup` | a deleted (or abandoned) backup whose data is being purged |
//! | `'o' table` | the job restoring table `table` from a backup (`restore`) |
//! | `"mnext_backup_id"` | the backup-id allocator |
//! | `'e' export` | an export to S3 (`exports`) |
//! | `"mnext_export_id"` | the export-id allocator |
//! | `'g' import` | an import from S3 (`imports`) |
//! | `"mnext_import_id"` | the import-id allocator |
//! | `'u' bulk operation` | a bulk put from S3 (`bulk_loads`) |
//! | `"mnext_bulk_id"` | the bulk-operation-id allocator |
//! | `"mlease"` | shared storage only: which node runs background work, until when |
//! | `"mtransfer/" job` | shared storage only: a running S3 transfer's heartbeat (`transfers`) |
//!
//! Every key of a table's data (`'s'`, `'q'`, `'i'`, `'x'`, `'k'`, `'r'`) starts with
//! its prefix byte and table id, so it can be re-homed under another id
//! ([`rehomed`], for restored snapshots).
//!
//! `table` is the table id (u64, big-endian), `index` an index id (u32,
//! big-endian), `seq` a stream sequence number (u64, big-endian); ids are
//! never reused, so a re-created table or index never sees old keys.

/// Catalog records, by catalog name.
const CATALOG: u8 = b'c';
/// Table statistics.
const STATS: u8 = b's';
/// Index statistics.
const INDEX_STATS: u8 = b'q';
/// Purge markers of deleted tables.
const PURGE: u8 = b'p';
/// Items.
const ITEM: u8 = b'i';
/// Secondary-index entries (and item-collection sizes).
const INDEX: u8 = b'x';
/// Stream records.
const STREAM_RECORD: u8 = b'r';
/// Change-log consumers' cursors (docs/design/change-log.md, point 2).
const CURSOR: u8 = b'k';
/// Item versions of global tables' replicas (replication/versions.rs).
const VERSION: u8 = b'v';

/// ClientRequestToken records (shared storage).
const TOKEN: u8 = b't';
/// Backup records.
const BACKUP: u8 = b'a';
/// Backups' data.
const BACKUP_DATA: u8 = b'b';
/// Purge markers of deleted backups.
const BACKUP_PURGE: u8 = b'd';
/// Restore jobs, by the id of the table they fill.
const RESTORE_JOB: u8 = b'o';

/// Export records.
const EXPORT: u8 = b'e';

/// Import records.
const IMPORT: u8 = b'g';

/// The key of the next import id to hand out.
pub const NEXT_IMPORT_ID: &[u8] = b"mnext_import_id";

/// Bulk operation records.
const BULK: u8 = b'u';

/// The key of the next bulk operation id to hand out.
pub const NEXT_BULK_ID: &[u8] = b"mnext_bulk_id";

/// The key of the next export id to hand out.
pub const NEXT_EXPORT_ID: &[u8] = b"mnext_export_id";

/// The key of the next backup id to hand out.
pub const NEXT_BACKUP_ID: &[u8] = b"mnext_backup_id";

/// The background-work lease (shared storage).
pub const LEASE: &[u8] = b"mlease";

/// The key of the next table id to hand out.
pub const NEXT_TABLE_ID: &[u8] = b"mnext_table_id";

/// The index id reserved, in the index-entry space, for the item-collection
/// sizes of a table with an LSI (it sorts after every real index id).
pub const COLLECTION_RECORD_ID: u32 = u32::MAX;

/// Bytes of `prefix | table id`.
const TABLE_PREFIX_LEN: usize = 1 + 8;

fn with_table(prefix: u8, table_id: u64) -> Vec<u8> {
    with_table_and_room(prefix, table_id, 16)
}

/// `prefix | table id`, with room for `room` more bytes.
fn with_table_and_room(prefix: u8, table_id: u64, room: usize) -> Vec<u8> {
    let mut key = Vec::with_capacity(TABLE_PREFIX_LEN + room);
    key.push(prefix);
    key.extend_from_slice(&table_id.to_be_bytes());
    key
}

// ---------------------------------------------------------------- catalog

/// The catalog record of a table (see `region` for catalog names).
pub fn catalog_key(catalog_name: &str) -> Vec<u8> {
    let mut key = vec![CATALOG];
    key.extend_from_slice(catalog_name.as_bytes());
    key
}

/// The prefix of every catalog record.
pub fn catalog_records() -> Vec<u8> {
    vec![CATALOG]
}

/// The catalog name a catalog-record key holds.
pub fn catalog_name_of(key: &[u8]) -> String {
    String::from_utf8_lossy(key.get(1..).unwrap_or_default()).into_owned()
}

/// A table's item count and bytes.
pub fn stats_key(table_id: u64) -> Vec<u8> {
    with_table(STATS, table_id)
}

/// One index's item count and bytes.
pub fn index_stats_key(table_id: u64, index_id: u32) -> Vec<u8> {
    let mut key = with_table(INDEX_STATS, table_id);
    key.extend_from_slice(&index_id.to_be_bytes());
    key
}

/// The record of one ClientRequestToken.
pub fn token_key(token: &str) -> Vec<u8> {
    let mut key = vec![TOKEN];
    key.extend_from_slice(token.as_bytes());
    key
}

/// The marker of a deleted table whose data is still being purged.
pub fn purge_key(table_id: u64) -> Vec<u8> {
    with_table(PURGE, table_id)
}

/// The prefix of every purge marker.
pub fn purge_markers() -> Vec<u8> {
    vec![PURGE]
}

/// The table id a purge marker names.
pub fn purged_table_of(key: &[u8]) -> Option<u64> {
    key.get(1..TABLE_PREFIX_LEN)?
        .try_into()
        .ok()
        .map(u64::from_be_bytes)
}

// ---------------------------------------------------------------- table data

/// The prefix under which all of a table's items live.
pub fn table_items(table_id: u64) -> Vec<u8> {
    with_table(ITEM, table_id)
}

/// [`table_items`] with room for `room` more bytes: an item key encoded
/// into it needs no reallocation (and is stored without spare capacity).
pub fn table_items_with_room(table_id: u64, room: usize) -> Vec<u8> {
    with_table_and_room(ITEM, table_id, room)
}

/// The prefix of every entry of one secondary index.
pub fn index_entries(table_id: u64, index_id: u32) -> Vec<u8> {
    let mut key = with_table(INDEX, table_id);
    key.extend_from_slice(&index_id.to_be_bytes());
    key
}

/// The entry of one item in a vector index: the index's prefix followed by
/// the item's key after its table prefix (`'x' table vindex hash(pk) pk [sk]`),
/// so a vector index's entries share the secondary-index family (purges,
/// backups, restores and the orphan sweep treat them alike) and each names
/// its item.
pub fn vector_entry_key(table_id: u64, index_id: u32, item_key: &[u8]) -> Vec<u8> {
    let suffix = &item_key[TABLE_PREFIX_LEN..];
    let mut key = Vec::with_capacity(TABLE_PREFIX_LEN + 4 + suffix.len());
    key.extend_from_slice(&index_entries(table_id, index_id));
    key.extend_from_slice(suffix);
    key
}

/// The item key a vector-index entry key names (see [`vector_entry_key`]).
pub fn item_key_of_vector_entry(table_id: u64, entry_key: &[u8]) -> Vec<u8> {
    let mut key = table_items(table_id);
    key.extend_from_slice(&entry_key[TABLE_PREFIX_LEN + 4..]);
    key
}

/// The index id an index-entry key (or collection-size key) belongs to.
pub fn index_id_of(key: &[u8]) -> Option<u32> {
    key.get(TABLE_PREFIX_LEN..TABLE_PREFIX_LEN + 4)?
        .try_into()
        .ok()
        .map(u32::from_be_bytes)
}

/// The size record of the item collection whose item keys start with
/// `partition` (an item partition prefix, from `keys::partition_prefix`):
/// it keeps that prefix's hash and partition key after the reserved index id.
pub fn collection_size_key(table_id: u64, partition: &[u8]) -> Vec<u8> {
    let tail = partition.get(TABLE_PREFIX_LEN..).unwrap_or_default();
    let mut key = index_entries(table_id, COLLECTION_RECORD_ID);
    key.extend_from_slice(tail);
    key
}

/// The start of the stream records with sequence number `seq` (a bound for
/// scans; a stored record's key goes on with its item's partition hash).
pub fn stream_record_key(table_id: u64, seq: u64) -> Vec<u8> {
    let mut key = with_table(STREAM_RECORD, table_id);
    key.extend_from_slice(&seq.to_be_bytes());
    key
}

/// A stream record's key: the sequence number, then the partition hash of
/// the item it describes, so a shard (one range of hashes) is read without
/// decoding other shards' records. Records written before shards followed
/// partitions end after the sequence number.
pub fn stream_record_key_with_hash(table_id: u64, seq: u64, hash: u64) -> Vec<u8> {
    let mut key = stream_record_key(table_id, seq);
    key.extend_from_slice(&hash.to_be_bytes());
    key
}

/// The item partition hash a stream-record key carries, if it has one.
pub fn stream_hash_of(key: &[u8]) -> Option<u64> {
    key.get(TABLE_PREFIX_LEN + 8..TABLE_PREFIX_LEN + 16)?
        .try_into()
        .ok()
        .map(u64::from_be_bytes)
}

/// The partition hash an item key starts with (after its table prefix).
pub fn item_hash_of(key: &[u8]) -> u64 {
    key.get(TABLE_PREFIX_LEN..TABLE_PREFIX_LEN + 8)
        .and_then(|bytes| bytes.try_into().ok())
        .map_or(0, u64::from_be_bytes)
}

/// The prefix of every index entry (and collection size) of a table.
pub fn table_index_entries(table_id: u64) -> Vec<u8> {
    with_table(INDEX, table_id)
}

/// The sequence number a stream-record key holds.
pub fn stream_seq_of(key: &[u8]) -> Option<u64> {
    key.get(TABLE_PREFIX_LEN..TABLE_PREFIX_LEN + 8)?
        .try_into()
        .ok()
        .map(u64::from_be_bytes)
}

/// The cursor of change-log consumer `consumer` of a table.
pub fn cursor_key(table_id: u64, consumer: &str) -> Vec<u8> {
    let mut key = with_table(CURSOR, table_id);
    key.extend_from_slice(consumer.as_bytes());
    key
}

/// Every prefix under which a dropped table's data lives, for its purge:
/// statistics delta records, index entries and collection sizes, index
/// statistics, consumers' cursors, stream records, item versions, then
/// the items.
pub fn table_data(table_id: u64) -> [Vec<u8>; 7] {
    [
        stats_key(table_id),
        table_index_entries(table_id),
        with_table(INDEX_STATS, table_id),
        with_table(CURSOR, table_id),
        with_table(STREAM_RECORD, table_id),
        with_table(VERSION, table_id),
        table_items(table_id),
    ]
}

/// The version key of the item stored under `item_key`: `'v' | table id
/// | hash | key`, the item key under another prefix.
pub fn version_key_of(item_key: &[u8]) -> Vec<u8> {
    let mut key = item_key.to_vec();
    key[0] = VERSION;
    key
}

/// The prefix of every item version of table `table_id`.
pub fn table_versions(table_id: u64) -> Vec<u8> {
    with_table(VERSION, table_id)
}

/// The item key a version key (see [`version_key_of`]) belongs to.
pub fn item_key_of_version(version_key: &[u8]) -> Vec<u8> {
    let mut key = version_key.to_vec();
    key[0] = ITEM;
    key
}

/// Key `key`, one of [`table_data`]'s (all `prefix | table id | rest`),
/// under table id `table_id` instead (a restored snapshot's, snapshots.rs).
pub fn rehomed(key: &[u8], table_id: u64) -> Vec<u8> {
    assert!(
        key.len() >= TABLE_PREFIX_LEN,
        "a table-data key holds its table id"
    );
    let mut out = with_table_and_room(key[0], table_id, key.len() - TABLE_PREFIX_LEN);
    out.extend_from_slice(&key[TABLE_PREFIX_LEN..]);
    out
}

// ---------------------------------------------------------------- backups

/// A backup's record.
pub fn backup_record_key(backup_id: u64) -> Vec<u8> {
    with_table(BACKUP, backup_id)
}

/// The prefix of every backup record.
pub fn backup_records() -> Vec<u8> {
    vec![BACKUP]
}

/// The prefix of a backup's data.
pub fn backup_data(backup_id: u64) -> Vec<u8> {
    with_table(BACKUP_DATA, backup_id)
}

/// Where a backup keeps its copy of `table_key` (one of [`backup_sources`]' keys).
pub fn backup_data_key(backup_id: u64, table_key: &[u8]) -> Vec<u8> {
    let mut key = with_table_and_room(BACKUP_DATA, backup_id, table_key.len());
    key.extend_from_slice(table_key);
    key
}

/// The table-data key a backup-data key holds a copy of.
pub fn table_key_of_backup_data(key: &[u8]) -> &[u8] {
    key.get(TABLE_PREFIX_LEN..).unwrap_or_default()
}

/// The marker of a backup whose data is being purged.
pub fn backup_purge_key(backup_id: u64) -> Vec<u8> {
    with_table(BACKUP_PURGE, backup_id)
}

/// The prefix of every backup purge marker.
pub fn backup_purge_markers() -> Vec<u8> {
    vec![BACKUP_PURGE]
}

/// The restore job filling table `table_id`.
pub fn restore_job_key(table_id: u64) -> Vec<u8> {
    with_table(RESTORE_JOB, table_id)
}

/// An export's record.
pub fn export_key(export_id: u64) -> Vec<u8> {
    with_table(EXPORT, export_id)
}

/// The prefix of every export record.
pub fn export_records() -> Vec<u8> {
    vec![EXPORT]
}

/// An import's record.
pub fn import_key(import_id: u64) -> Vec<u8> {
    with_table(IMPORT, import_id)
}

/// The prefix of every import record.
pub fn import_records() -> Vec<u8> {
    vec![IMPORT]
}

/// The heartbeat of a running transfer job (`export-7`, `bulk-put-2`).
pub fn transfer_heartbeat_key(job: &str) -> Vec<u8> {
    [TRANSFER_HEARTBEATS, job.as_bytes()].concat()
}

/// The prefix of every transfer heartbeat.
pub const TRANSFER_HEARTBEATS: &[u8] = b"mtransfer/";

/// A bulk operation's record.
pub fn bulk_key(bulk_id: u64) -> Vec<u8> {
    with_table(BULK, bulk_id)
}

/// The prefix of every bulk operation record.
pub fn bulk_records() -> Vec<u8> {
    vec![BULK]
}

/// The prefix of every restore job.
pub fn restore_jobs() -> Vec<u8> {
    vec![RESTORE_JOB]
}

/// The id a backup record, backup purge marker or restore job key names
/// (all `prefix | id`).
pub fn id_of(key: &[u8]) -> Option<u64> {
    key.get(1..TABLE_PREFIX_LEN)?
        .try_into()
        .ok()
        .map(u64::from_be_bytes)
}

/// What a backup copies of table `table_id`: its statistics (folded into
/// bases on the way), index entries and collection sizes, index statistics
/// and items; not its stream records (a restored table has no stream).
pub fn backup_sources(table_id: u64) -> [Vec<u8>; 4] {
    [
        stats_key(table_id),
        table_index_entries(table_id),
        with_table(INDEX_STATS, table_id),
        table_items(table_id),
    ]
}

/// The index a table-data key belongs to: an index entry (`'x'`) or an
/// index's statistics (`'q'`); None for every other key.
pub fn index_of_table_key(key: &[u8]) -> Option<u32> {
    match *key.first()? {
        INDEX | INDEX_STATS => index_id_of(key),
        _ => None,
    }
}

/// Whether `key` (a table-data key) is a statistics key (`'s'` or `'q'`):
/// a base, or a delta when longer than its base.
pub fn stats_base_len(key: &[u8]) -> Option<usize> {
    match *key.first()? {
        STATS => Some(TABLE_PREFIX_LEN),
        INDEX_STATS => Some(TABLE_PREFIX_LEN + 4),
        _ => None,
    }
}

// ---------------------------------------------------------------- ranges

/// The first key after every key starting with `prefix` (None: no such key,
/// the prefix is all 0xff).
pub fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_end_handles_ff() {
        assert_eq!(prefix_end(&[1, 2]), Some(vec![1, 3]));
        assert_eq!(prefix_end(&[1, 0xff]), Some(vec![2]));
        assert_eq!(prefix_end(&[0xff]), None);
    }

    #[test]
    fn keys_decode_back_to_what_they_hold() {
        assert_eq!(
            catalog_name_of(&catalog_key("us-east-2/users")),
            "us-east-2/users"
        );
        assert_eq!(purged_table_of(&purge_key(42)), Some(42));
        assert_eq!(id_of(&backup_record_key(5)), Some(5));
        assert_eq!(id_of(&restore_job_key(6)), Some(6));
        let item = [table_items(7), b"k".to_vec()].concat();
        assert_eq!(table_key_of_backup_data(&backup_data_key(3, &item)), item);
        assert_eq!(stats_base_len(&stats_key(7)), Some(9));
        assert_eq!(stats_base_len(&index_stats_key(7, 1)), Some(13));
        assert_eq!(stream_seq_of(&stream_record_key(7, 99)), Some(99));
        let entry = index_entries(7, 3);
        assert_eq!(index_id_of(&entry), Some(3));
        let collection = collection_size_key(7, &[table_items(7), b"hash+pk".to_vec()].concat());
        assert_eq!(index_id_of(&collection), Some(COLLECTION_RECORD_ID));
        assert!(collection.ends_with(b"hash+pk"));
    }

    #[test]
    fn each_kind_of_key_has_its_own_range() {
        let kinds = [
            catalog_key("t"),
            stats_key(1),
            index_stats_key(1, 1),
            purge_key(1),
            table_items(1),
            index_entries(1, 1),
            stream_record_key(1, 1),
            cursor_key(1, "kinesis/1"),
            NEXT_TABLE_ID.to_vec(),
            backup_record_key(1),
            backup_data(1),
            backup_purge_key(1),
            restore_job_key(1),
            export_key(1),
            import_key(1),
            bulk_key(1),
        ];
        let firsts: std::collections::HashSet<u8> = kinds.iter().map(|k| k[0]).collect();
        assert_eq!(firsts.len(), kinds.len(), "one prefix byte per kind");
        // A table's data ranges end exactly where the next table's begin.
        for (mine, next) in table_data(1).into_iter().zip(table_data(2)) {
            assert_eq!(prefix_end(&mine), Some(next));
        }
    }
}
