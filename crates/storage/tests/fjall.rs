//! The shared suite against the fjall backend, plus what only a durable
//! backend has: reopening.

mod common;

use std::ops::Bound::Unbounded;
use std::sync::Arc;

use ferrodyn_storage::{open_fjall, Durability, FjallOptions, FjallStorage, Storage, WriteOp};

fn fresh(durability: Durability) -> (Arc<dyn Storage>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let s = open_fjall(dir.path(), durability).unwrap();
    (s, dir)
}

storage_suite!(fresh(Durability::Buffered));

mod sync_durability {
    use super::*;
    storage_suite!(fresh(Durability::Sync));
}

mod no_durability {
    use super::*;
    storage_suite!(fresh(Durability::None));
}

fn sample_ops(n: u32) -> Vec<WriteOp> {
    (0..n)
        .map(|i| {
            WriteOp::Put(
                format!("key{i:05}").into_bytes(),
                vec![i as u8; (i % 50) as usize],
            )
        })
        .collect()
}

#[test]
fn reopen_keeps_data() {
    for durability in [Durability::Buffered, Durability::Sync, Durability::None] {
        let dir = tempfile::tempdir().unwrap();
        {
            let s = open_fjall(dir.path(), durability).unwrap();
            s.write(sample_ops(1000)).unwrap();
            s.write(vec![
                WriteOp::Delete(b"key00007".to_vec()),
                WriteOp::Put(b"key00008".to_vec(), b"new".to_vec()),
            ])
            .unwrap();
            common::put(&*s, &[0x00, 0xFF], b"");
        }
        let s = open_fjall(dir.path(), durability).unwrap();
        let all = s.scan(Unbounded, Unbounded, false, usize::MAX).unwrap();
        assert_eq!(all.len(), 1000, "{durability:?}");
        assert_eq!(s.get(b"key00007").unwrap(), None);
        assert_eq!(s.get(b"key00008").unwrap(), Some(b"new".to_vec()));
        assert_eq!(s.get(b"key00999").unwrap(), Some(vec![999u32 as u8; 49]));
        assert_eq!(s.get(&[0x00, 0xFF]).unwrap(), Some(Vec::new()));
    }
}

/// Enough data to flush several memtables to table files, so reads after
/// reopening come from disk tables and not only the journal.
#[test]
fn reopen_after_memtable_flushes() {
    let dir = tempfile::tempdir().unwrap();
    let options = FjallOptions {
        max_memtable_bytes: 1024 * 1024,
        ..FjallOptions::default()
    };
    let value = vec![0xAB; 1000];
    {
        let s = FjallStorage::open(dir.path(), options).unwrap();
        for chunk in 0..40u32 {
            let ops = (0..100u32)
                .map(|i| WriteOp::Put((chunk * 100 + i).to_be_bytes().to_vec(), value.clone()))
                .collect();
            s.write(ops).unwrap();
        }
        // Overwrite and delete some, so tombstones land in later tables.
        let ops = (0..4000u32)
            .step_by(3)
            .map(|i| WriteOp::Delete(i.to_be_bytes().to_vec()))
            .collect();
        s.write(ops).unwrap();
        s.flush().unwrap();
    }
    let s = FjallStorage::open(dir.path(), options).unwrap();
    let all = s.scan(Unbounded, Unbounded, false, usize::MAX).unwrap();
    let expected: Vec<Vec<u8>> = (0..4000u32)
        .filter(|i| i % 3 != 0)
        .map(|i| i.to_be_bytes().to_vec())
        .collect();
    assert_eq!(
        common::keys(&all),
        expected.iter().map(|k| k.as_slice()).collect::<Vec<_>>()
    );
    assert!(all.iter().all(|(_, v)| *v == value));
    let back = s.scan(Unbounded, Unbounded, true, 3).unwrap();
    assert_eq!(back[0].0, 3998u32.to_be_bytes().to_vec());
}

#[test]
fn second_open_of_same_directory_fails() {
    let dir = tempfile::tempdir().unwrap();
    let _first = open_fjall(dir.path(), Durability::Buffered).unwrap();
    assert!(open_fjall(dir.path(), Durability::Buffered).is_err());
}

/// `reclaim_range` over real table files (24 MB over an 8 MB memtable):
/// nothing outside the range is lost and nothing inside comes back, also
/// after reopening.
#[test]
fn reclaim_range_drops_files_and_keeps_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let tables = dir.path().join("keyspaces");
    let options = FjallOptions {
        max_memtable_bytes: 8 * 1024 * 1024,
        ..FjallOptions::default()
    };
    {
        let s = FjallStorage::open(dir.path(), options).unwrap();
        // fjall flushes memtables in the background: reclaim once files
        // exist. (Whether one lies wholly inside the range depends on how
        // compaction has merged them; the space measured on a real purge
        // is in BENCHMARKS.md.)
        let flushed = || {
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
            while table_bytes(&tables) < 16_000_000 && std::time::Instant::now() < deadline {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        };
        common::check_reclaim_range_sized(&s, 24_000, 1000, flushed);
        s.flush().unwrap();
    }
    let s = open_fjall(dir.path(), Durability::Buffered).unwrap();
    assert!(s
        .scan(
            std::ops::Bound::Included(b"b"),
            std::ops::Bound::Excluded(b"c"),
            false,
            10
        )
        .unwrap()
        .is_empty());
    assert_eq!(s.get(b"a").unwrap().as_deref(), Some(&b"before"[..]));
    assert_eq!(s.get(b"c").unwrap().as_deref(), Some(&b"after"[..]));
}

/// Bytes in the keyspaces' table files (the journal is preallocated, so
/// the whole directory's size says little).
fn table_bytes(path: &std::path::Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(path) else {
        return 0;
    };
    entries
        .flatten()
        .map(|entry| match entry.metadata() {
            Ok(m) if m.is_dir() => table_bytes(&entry.path()),
            Ok(m) if entry.path().parent().is_some_and(|p| p.ends_with("tables")) => m.len(),
            _ => 0,
        })
        .sum()
}
