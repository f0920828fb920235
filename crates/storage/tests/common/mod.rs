//! The behaviour every backend must share. Each `check_*` function takes a
//! fresh, empty store; `storage_suite!` turns them into `#[test]`s for one
//! backend, so both backends run exactly the same assertions.

#![allow(dead_code)] // each test binary uses a different subset

use std::ops::Bound::{self, Excluded, Included, Unbounded};

use ferrodyn_storage::{Key, ReadCheck, Storage, StorageError, Value, WriteOp};

pub fn put(s: &dyn Storage, k: &[u8], v: &[u8]) {
    s.write(vec![WriteOp::Put(k.to_vec(), v.to_vec())]).unwrap();
}

pub fn del(s: &dyn Storage, k: &[u8]) {
    s.write(vec![WriteOp::Delete(k.to_vec())]).unwrap();
}

pub fn keys(entries: &[(Key, Value)]) -> Vec<&[u8]> {
    entries.iter().map(|(k, _)| k.as_slice()).collect()
}

fn scan_keys(
    s: &dyn Storage,
    start: Bound<&[u8]>,
    end: Bound<&[u8]>,
    rev: bool,
    limit: usize,
) -> Vec<Key> {
    s.scan(start, end, rev, limit)
        .unwrap()
        .into_iter()
        .map(|(k, _)| k)
        .collect()
}

fn v(items: &[&[u8]]) -> Vec<Key> {
    items.iter().map(|k| k.to_vec()).collect()
}

/// Puts five keys a, b, c, d, e (values "A".."E").
fn abcde(s: &dyn Storage) {
    let ops = [b"a", b"b", b"c", b"d", b"e"]
        .iter()
        .map(|k| WriteOp::Put(k.to_vec(), k.to_ascii_uppercase()))
        .collect();
    s.write(ops).unwrap();
}

pub fn check_get_put_delete(s: &dyn Storage) {
    assert_eq!(s.get(b"k").unwrap(), None);
    put(s, b"k", b"v1");
    assert_eq!(s.get(b"k").unwrap(), Some(b"v1".to_vec()));
    del(s, b"k");
    assert_eq!(s.get(b"k").unwrap(), None);
    // Deleting a missing key is fine.
    del(s, b"never-there");
    assert_eq!(s.get(b"never-there").unwrap(), None);
    // Prefix keys are distinct keys.
    put(s, b"ab", b"2");
    assert_eq!(s.get(b"a").unwrap(), None);
    assert_eq!(s.get(b"abc").unwrap(), None);
}

pub fn check_overwrite(s: &dyn Storage) {
    put(s, b"k", b"one");
    put(s, b"k", b"two");
    assert_eq!(s.get(b"k").unwrap(), Some(b"two".to_vec()));
    let all = s.scan(Unbounded, Unbounded, false, 10).unwrap();
    assert_eq!(all, vec![(b"k".to_vec(), b"two".to_vec())]);
    // Delete then re-put.
    del(s, b"k");
    put(s, b"k", b"three");
    assert_eq!(s.get(b"k").unwrap(), Some(b"three".to_vec()));
}

pub fn check_empty_value(s: &dyn Storage) {
    put(s, b"empty", b"");
    assert_eq!(s.get(b"empty").unwrap(), Some(Vec::new()));
    let all = s.scan(Unbounded, Unbounded, false, 10).unwrap();
    assert_eq!(all, vec![(b"empty".to_vec(), Vec::new())]);
}

pub fn check_key_limits(s: &dyn Storage) {
    // The empty key and keys over 65535 bytes are rejected (fjall cannot
    // store them), and the whole batch with them: nothing is applied.
    let too_long = vec![b'k'; 65_536];
    for bad in [Vec::new(), too_long] {
        let err = s
            .write(vec![
                WriteOp::Put(b"ok".to_vec(), b"1".to_vec()),
                WriteOp::Put(bad.clone(), b"v".to_vec()),
            ])
            .unwrap_err();
        assert!(matches!(err, StorageError::InvalidKey { .. }), "{err}");
        assert!(s.write(vec![WriteOp::Delete(bad)]).is_err());
    }
    assert_eq!(s.get(b"ok").unwrap(), None);
    // The longest allowed key works.
    let longest = vec![b'k'; 65_535];
    put(s, &longest, b"v");
    assert_eq!(s.get(&longest).unwrap(), Some(b"v".to_vec()));
    // Reads with an empty key are harmless.
    assert_eq!(s.get(b"").unwrap(), None);
    assert_eq!(s.get(&vec![b'k'; 70_000]).unwrap(), None);
    let huge = vec![b'k'; 70_000];
    assert_eq!(
        s.scan(Included(&b""[..]), Included(&huge[..]), false, 10)
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        s.scan(Excluded(&huge[..]), Unbounded, true, 10)
            .unwrap()
            .len(),
        0
    );
}

pub fn check_binary_keys(s: &dyn Storage) {
    let ks: Vec<Vec<u8>> = vec![
        vec![0x00],
        vec![0x00, 0x00],
        vec![0x00, 0xFF],
        vec![0x01],
        vec![0x7F, 0x00, 0x7F],
        vec![0xFE, 0xFF],
        vec![0xFF],
        vec![0xFF, 0x00],
        vec![0xFF, 0xFF, 0xFF],
    ];
    // Insert in scrambled order; values are binary too.
    let mut ops = Vec::new();
    for k in ks.iter().rev() {
        let mut val = k.clone();
        val.extend_from_slice(&[0x00, 0xFF]);
        ops.push(WriteOp::Put(k.clone(), val));
    }
    s.write(ops).unwrap();
    for k in &ks {
        let mut val = k.clone();
        val.extend_from_slice(&[0x00, 0xFF]);
        assert_eq!(s.get(k).unwrap(), Some(val));
    }
    // Unsigned byte order, shorter prefix first.
    assert_eq!(scan_keys(s, Unbounded, Unbounded, false, 100), ks);
    let mut rev = ks.clone();
    rev.reverse();
    assert_eq!(scan_keys(s, Unbounded, Unbounded, true, 100), rev);
    // A range bounded by 0x00/0xFF bytes.
    assert_eq!(
        scan_keys(s, Excluded(&[0x00][..]), Excluded(&[0xFF][..]), false, 100),
        ks[1..6].to_vec()
    );
    assert_eq!(
        scan_keys(s, Included(&[0xFF][..]), Unbounded, false, 100),
        ks[6..].to_vec()
    );
}

pub fn check_atomic_batch(s: &dyn Storage) {
    put(s, b"gone", b"x");
    put(s, b"stay", b"y");
    s.write(vec![
        WriteOp::Put(b"a".to_vec(), b"1".to_vec()),
        WriteOp::Delete(b"gone".to_vec()),
        WriteOp::Put(b"b".to_vec(), b"2".to_vec()),
        // Later ops on the same key win, in order.
        WriteOp::Put(b"c".to_vec(), b"first".to_vec()),
        WriteOp::Put(b"c".to_vec(), b"second".to_vec()),
        WriteOp::Put(b"d".to_vec(), b"temp".to_vec()),
        WriteOp::Delete(b"d".to_vec()),
        WriteOp::Delete(b"e".to_vec()),
        WriteOp::Put(b"e".to_vec(), b"back".to_vec()),
    ])
    .unwrap();
    assert_eq!(s.get(b"a").unwrap(), Some(b"1".to_vec()));
    assert_eq!(s.get(b"b").unwrap(), Some(b"2".to_vec()));
    assert_eq!(s.get(b"c").unwrap(), Some(b"second".to_vec()));
    assert_eq!(s.get(b"d").unwrap(), None);
    assert_eq!(s.get(b"e").unwrap(), Some(b"back".to_vec()));
    assert_eq!(s.get(b"gone").unwrap(), None);
    assert_eq!(s.get(b"stay").unwrap(), Some(b"y".to_vec()));
    // An empty batch is a no-op.
    s.write(Vec::new()).unwrap();
    assert_eq!(
        scan_keys(s, Unbounded, Unbounded, false, 100),
        v(&[b"a", b"b", b"c", b"e", b"stay"])
    );
}

pub fn check_scan_bounds(s: &dyn Storage) {
    abcde(s);
    let (b, d): (&[u8], &[u8]) = (b"b", b"d");
    assert_eq!(
        scan_keys(s, Unbounded, Unbounded, false, 100),
        v(&[b"a", b"b", b"c", b"d", b"e"])
    );
    assert_eq!(
        scan_keys(s, Included(b), Excluded(d), false, 100),
        v(&[b"b", b"c"])
    );
    assert_eq!(
        scan_keys(s, Included(b), Included(d), false, 100),
        v(&[b"b", b"c", b"d"])
    );
    assert_eq!(
        scan_keys(s, Excluded(b), Excluded(d), false, 100),
        v(&[b"c"])
    );
    assert_eq!(
        scan_keys(s, Excluded(b), Included(d), false, 100),
        v(&[b"c", b"d"])
    );
    assert_eq!(
        scan_keys(s, Unbounded, Excluded(d), false, 100),
        v(&[b"a", b"b", b"c"])
    );
    assert_eq!(
        scan_keys(s, Excluded(b), Unbounded, false, 100),
        v(&[b"c", b"d", b"e"])
    );
    // Bounds that are not stored keys.
    assert_eq!(
        scan_keys(s, Included(&b"bb"[..]), Included(&b"cc"[..]), false, 100),
        v(&[b"c"])
    );
    assert_eq!(
        scan_keys(s, Included(&b"0"[..]), Excluded(&b"a"[..]), false, 100),
        Vec::<Key>::new()
    );
    assert_eq!(
        scan_keys(s, Excluded(&b"e"[..]), Unbounded, false, 100),
        Vec::<Key>::new()
    );
    // Empty and inverted ranges are empty, not panics.
    assert!(scan_keys(s, Included(b), Excluded(b), false, 100).is_empty());
    assert!(scan_keys(s, Excluded(b), Included(b), false, 100).is_empty());
    assert!(scan_keys(s, Excluded(b), Excluded(b), false, 100).is_empty());
    assert!(scan_keys(s, Included(d), Included(b), false, 100).is_empty());
    assert!(scan_keys(s, Included(d), Excluded(b), true, 100).is_empty());
    assert_eq!(
        scan_keys(s, Included(b), Included(b), false, 100),
        v(&[b"b"])
    );
    // Values come with their keys.
    assert_eq!(
        s.scan(Included(b), Excluded(d), false, 100).unwrap(),
        vec![
            (b"b".to_vec(), b"B".to_vec()),
            (b"c".to_vec(), b"C".to_vec())
        ]
    );
}

pub fn check_reverse_scan(s: &dyn Storage) {
    abcde(s);
    let (b, d): (&[u8], &[u8]) = (b"b", b"d");
    assert_eq!(
        scan_keys(s, Unbounded, Unbounded, true, 100),
        v(&[b"e", b"d", b"c", b"b", b"a"])
    );
    assert_eq!(
        scan_keys(s, Included(b), Excluded(d), true, 100),
        v(&[b"c", b"b"])
    );
    assert_eq!(
        scan_keys(s, Included(b), Included(d), true, 100),
        v(&[b"d", b"c", b"b"])
    );
    assert_eq!(
        scan_keys(s, Excluded(b), Excluded(d), true, 100),
        v(&[b"c"])
    );
    assert_eq!(
        scan_keys(s, Unbounded, Included(d), true, 2),
        v(&[b"d", b"c"])
    );
    assert_eq!(
        scan_keys(s, Excluded(b), Unbounded, true, 2),
        v(&[b"e", b"d"])
    );
    assert_eq!(
        s.scan(Unbounded, Excluded(b), true, 100).unwrap(),
        vec![(b"a".to_vec(), b"A".to_vec())]
    );
}

pub fn check_limit(s: &dyn Storage) {
    abcde(s);
    assert!(scan_keys(s, Unbounded, Unbounded, false, 0).is_empty());
    assert!(scan_keys(s, Unbounded, Unbounded, true, 0).is_empty());
    assert_eq!(scan_keys(s, Unbounded, Unbounded, false, 1), v(&[b"a"]));
    assert_eq!(scan_keys(s, Unbounded, Unbounded, true, 1), v(&[b"e"]));
    assert_eq!(scan_keys(s, Unbounded, Unbounded, false, 5).len(), 5);
    assert_eq!(
        scan_keys(s, Unbounded, Unbounded, false, usize::MAX).len(),
        5
    );
    // Paging: resume after the last key of the previous page.
    let mut seen = Vec::new();
    let mut start: Option<Key> = None;
    loop {
        let lower = match &start {
            Some(k) => Excluded(k.as_slice()),
            None => Unbounded,
        };
        let page = scan_keys(s, lower, Unbounded, false, 2);
        if page.is_empty() {
            break;
        }
        start = page.last().cloned();
        seen.extend(page);
    }
    assert_eq!(seen, v(&[b"a", b"b", b"c", b"d", b"e"]));
}

pub fn check_deleted_keys_hidden_from_scan(s: &dyn Storage) {
    abcde(s);
    s.write(vec![
        WriteOp::Delete(b"b".to_vec()),
        WriteOp::Delete(b"d".to_vec()),
    ])
    .unwrap();
    assert_eq!(
        scan_keys(s, Unbounded, Unbounded, false, 100),
        v(&[b"a", b"c", b"e"])
    );
    assert_eq!(
        scan_keys(s, Unbounded, Unbounded, true, 2),
        v(&[b"e", b"c"])
    );
}

pub fn check_large_value(s: &dyn Storage) {
    // A value bigger than a DynamoDB item (400 KB) and than fjall's journal
    // compression threshold and I/O buffer.
    let big: Vec<u8> = (0..500_000u32).map(|i| (i * 7 % 251) as u8).collect();
    put(s, b"big", &big);
    assert_eq!(s.get(b"big").unwrap(), Some(big));
}

pub fn check_flush(s: &dyn Storage) {
    put(s, b"k", b"v");
    s.flush().unwrap();
    assert_eq!(s.get(b"k").unwrap(), Some(b"v".to_vec()));
}

/// Readers running alongside a writer only ever see whole batches: every
/// batch sets keys x0..x9 to the same counter value.
pub fn check_concurrent_readers_see_whole_batches(s: std::sync::Arc<dyn Storage>) {
    let batch = |n: u32| -> Vec<WriteOp> {
        (0..10u8)
            .map(|i| WriteOp::Put(vec![b'x', i], n.to_be_bytes().to_vec()))
            .collect()
    };
    s.write(batch(0)).unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (s, stop) = (s.clone(), stop.clone());
            std::thread::spawn(move || {
                let (mut checks, mut reverse) = (0u32, false);
                while !stop.load(std::sync::atomic::Ordering::Relaxed) || checks == 0 {
                    reverse = !reverse;
                    let page = s.scan(Unbounded, Unbounded, reverse, 100).unwrap();
                    assert_eq!(page.len(), 10);
                    assert!(
                        page.iter().all(|(_, v)| *v == page[0].1),
                        "torn batch: {page:?}"
                    );
                    checks += 1;
                }
            })
        })
        .collect();
    for n in 1..300 {
        s.write(batch(n)).unwrap();
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for r in readers {
        r.join().unwrap();
    }
}

/// `reclaim_range` then deleting what is left empties the range and leaves
/// every key outside it as it was (`value_len` sizes the values, so a
/// durable backend can be made to write files; `settle` runs just before
/// `reclaim_range`).
pub fn check_reclaim_range_sized(
    s: &dyn Storage,
    count: u32,
    value_len: usize,
    settle: impl FnOnce(),
) {
    let value = vec![7u8; value_len];
    put(s, b"a", b"before");
    for chunk in (0..count).collect::<Vec<_>>().chunks(500) {
        let ops = chunk
            .iter()
            .map(|i| WriteOp::Put(format!("b{i:08}").into_bytes(), value.clone()))
            .collect();
        s.write(ops).unwrap();
    }
    put(s, b"c", b"after");
    del(s, b"b00000005");
    settle();
    s.reclaim_range(b"b", Some(b"c")).unwrap();
    loop {
        let left = s.scan(Included(b"b"), Excluded(b"c"), false, 1000).unwrap();
        if left.is_empty() {
            break;
        }
        s.write(left.into_iter().map(|(k, _)| WriteOp::Delete(k)).collect())
            .unwrap();
    }
    assert!(scan_keys(s, Included(b"b"), Excluded(b"c"), false, 10).is_empty());
    assert_eq!(s.get(b"a").unwrap().as_deref(), Some(&b"before"[..]));
    assert_eq!(s.get(b"c").unwrap().as_deref(), Some(&b"after"[..]));
}

pub fn check_reclaim_range(s: &dyn Storage) {
    check_reclaim_range_sized(s, 1000, 16, || {});
}

fn check(key: &[u8], expected: Option<&[u8]>) -> ReadCheck {
    ReadCheck {
        key: key.to_vec(),
        expected: expected.map(<[u8]>::to_vec),
    }
}

/// A checked write commits while what it read still holds (values and
/// absences) and is refused whole, naming nothing changed, once it does not.
pub fn check_checked_write(s: &dyn Storage) {
    put(s, b"a", b"1");
    let ops = |v: &[u8]| vec![WriteOp::Put(b"b".to_vec(), v.to_vec())];
    s.write_checked(vec![check(b"a", Some(b"1")), check(b"b", None)], ops(b"x"))
        .unwrap();
    assert_eq!(s.get(b"b").unwrap(), Some(b"x".to_vec()));
    // "b" is no longer absent; "a" no longer holds "2".
    for stale in [check(b"b", None), check(b"a", Some(b"2"))] {
        let err = s.write_checked(vec![stale], ops(b"y")).unwrap_err();
        assert!(matches!(err, StorageError::Conflict { .. }), "{err}");
    }
    assert_eq!(s.get(b"b").unwrap(), Some(b"x".to_vec()));
    // A key checked absent and put (PostgreSQL inserts it plainly) beside
    // other changes: refused whole when it exists.
    let beside = vec![
        WriteOp::Put(b"c".to_vec(), b"1".to_vec()),
        WriteOp::Delete(b"a".to_vec()),
        WriteOp::Put(b"b".to_vec(), b"z".to_vec()),
    ];
    let err = s
        .write_checked(vec![check(b"b", None)], beside)
        .unwrap_err();
    assert!(matches!(err, StorageError::Conflict { .. }), "{err}");
    assert_eq!(s.get(b"c").unwrap(), None);
    assert_eq!(s.get(b"a").unwrap(), Some(b"1".to_vec()));
    assert_eq!(s.get(b"b").unwrap(), Some(b"x".to_vec()));
    // Checks without ops, ops without checks.
    s.write_checked(vec![check(b"a", Some(b"1"))], Vec::new())
        .unwrap();
    s.write_checked(Vec::new(), vec![WriteOp::Delete(b"a".to_vec())])
        .unwrap();
    s.write_checked(vec![check(b"a", None)], Vec::new())
        .unwrap();
}

/// Lost updates are impossible: threads that each read a counter and
/// write it back incremented, checked against what they read and retried
/// on conflict, leave exactly one increment per attempt that committed.
pub fn check_concurrent_checked_increments(s: std::sync::Arc<dyn Storage>) {
    const THREADS: u64 = 4;
    const EACH: u64 = 25;
    let workers: Vec<_> = (0..THREADS)
        .map(|_| {
            let s = s.clone();
            std::thread::spawn(move || {
                for _ in 0..EACH {
                    loop {
                        let old = s.get(b"counter").unwrap();
                        let n = old
                            .as_ref()
                            .map_or(0, |v| u64::from_be_bytes(v[..].try_into().unwrap()));
                        let ops = vec![WriteOp::Put(
                            b"counter".to_vec(),
                            (n + 1).to_be_bytes().to_vec(),
                        )];
                        let checks = vec![ReadCheck {
                            key: b"counter".to_vec(),
                            expected: old,
                        }];
                        match s.write_checked(checks, ops) {
                            Ok(()) => break,
                            Err(StorageError::Conflict { .. }) => continue,
                            Err(e) => panic!("{e}"),
                        }
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let total = u64::from_be_bytes(s.get(b"counter").unwrap().unwrap()[..].try_into().unwrap());
    assert_eq!(total, THREADS * EACH);
}

/// A view sees its ranges as they were when it opened: later puts,
/// overwrites and deletes do not show, in gets, forward and reverse scans
/// and limited pages; reads outside its ranges are refused; the live store
/// moves on.
pub fn check_view_is_one_instant(s: &dyn Storage) {
    abcde(s);
    put(s, b"z1", b"outside");
    let view = s
        .open_view(&[(b"a".to_vec(), Some(b"f".to_vec()))])
        .unwrap();
    put(s, b"b", b"B2"); // overwrite
    del(s, b"c"); // delete
    put(s, b"cc", b"new"); // insert between
    s.write(vec![
        WriteOp::Put(b"a".to_vec(), b"A2".to_vec()),
        WriteOp::Delete(b"e".to_vec()),
    ])
    .unwrap();
    assert_eq!(view.get(b"b").unwrap(), Some(b"B".to_vec()));
    assert_eq!(view.get(b"c").unwrap(), Some(b"C".to_vec()));
    assert_eq!(view.get(b"cc").unwrap(), None);
    let all = view
        .scan(Included(b"a"), Excluded(b"f"), false, 100)
        .unwrap();
    let expected: Vec<(Key, Value)> = [b"a", b"b", b"c", b"d", b"e"]
        .iter()
        .map(|k| (k.to_vec(), k.to_ascii_uppercase()))
        .collect();
    assert_eq!(all, expected);
    let back = view.scan(Included(b"a"), Excluded(b"f"), true, 2).unwrap();
    assert_eq!(keys(&back), vec![b"e".as_slice(), b"d"]);
    let page = view.scan(Excluded(b"b"), Excluded(b"f"), false, 2).unwrap();
    assert_eq!(keys(&page), vec![b"c".as_slice(), b"d"]);
    assert!(matches!(view.get(b"z1"), Err(StorageError::OutsideView)));
    assert!(matches!(
        view.scan(Included(b"a"), Unbounded, false, 10),
        Err(StorageError::OutsideView)
    ));
    let live = s.scan(Included(b"a"), Excluded(b"f"), false, 100).unwrap();
    assert_eq!(
        keys(&live),
        vec![b"a".as_slice(), b"b", b"cc", b"d"],
        "the live store moved on"
    );
    drop(view);
    // A view opened now sees the present.
    let now = s.open_view(&[(b"a".to_vec(), None)]).unwrap();
    assert_eq!(now.get(b"a").unwrap(), Some(b"A2".to_vec()));
}

/// Two views opened at different instants each keep their own instant, and
/// a view survives `reclaim_range` and deletion of everything it covers.
pub fn check_views_keep_their_own_instants(s: &dyn Storage) {
    let range = || vec![(b"k".to_vec(), Some(b"l".to_vec()))];
    put(s, b"k1", b"one");
    let first = s.open_view(&range()).unwrap();
    put(s, b"k1", b"two");
    put(s, b"k2", b"two");
    let second = s.open_view(&range()).unwrap();
    s.reclaim_range(b"k", Some(b"l")).unwrap();
    s.write(vec![
        WriteOp::Delete(b"k1".to_vec()),
        WriteOp::Delete(b"k2".to_vec()),
    ])
    .unwrap();
    let read = |view: &dyn ferrodyn_storage::StorageView| {
        view.scan(Included(b"k"), Excluded(b"l"), false, 10)
            .unwrap()
    };
    assert_eq!(read(&*first), vec![(b"k1".to_vec(), b"one".to_vec())]);
    assert_eq!(
        read(&*second),
        vec![
            (b"k1".to_vec(), b"two".to_vec()),
            (b"k2".to_vec(), b"two".to_vec())
        ]
    );
    drop(first);
    assert_eq!(
        read(&*second).len(),
        2,
        "dropping one view leaves the other"
    );
    assert_eq!(
        s.scan(Included(b"k"), Excluded(b"l"), false, 10).unwrap(),
        vec![]
    );
}

/// A view paged through while a writer rewrites every key sees one batch's
/// values throughout (each batch sets every key to the same counter).
pub fn check_view_pages_under_writers(s: std::sync::Arc<dyn Storage>) {
    let batch = |n: u32| -> Vec<WriteOp> {
        (0..200u8)
            .map(|i| WriteOp::Put(vec![b'y', i], n.to_be_bytes().to_vec()))
            .collect()
    };
    s.write(batch(0)).unwrap();
    let writer = {
        let s = s.clone();
        std::thread::spawn(move || {
            for n in 1..100 {
                s.write(batch(n)).unwrap();
            }
        })
    };
    let view = s
        .open_view(&[(b"y".to_vec(), Some(b"z".to_vec()))])
        .unwrap();
    let mut seen = Vec::new();
    let mut last: Option<Key> = None;
    loop {
        let start = last.as_deref().map_or(Included(b"y".as_slice()), Excluded);
        let page = view.scan(start, Excluded(b"z"), false, 7).unwrap();
        let Some((key, _)) = page.last() else { break };
        last = Some(key.clone());
        seen.extend(page);
    }
    writer.join().unwrap();
    assert_eq!(seen.len(), 200);
    assert!(seen.iter().all(|(_, v)| *v == seen[0].1), "a torn view");
}

/// Expands to one `#[test]` per shared check. `$make` is an expression that
/// yields `(Arc<dyn Storage>, guard)`; the guard (e.g. a temp dir) lives for
/// the whole test. Attributes after it (`storage_suite!(make(), #[ignore =
/// "..."])`) go on every test.
#[macro_export]
macro_rules! storage_suite {
    ($make:expr $(, #[$attr:meta])*) => {
        $crate::storage_suite!(@tests [$(#[$attr])*] $make;
            check_get_put_delete,
            check_overwrite,
            check_empty_value,
            check_key_limits,
            check_binary_keys,
            check_atomic_batch,
            check_scan_bounds,
            check_reverse_scan,
            check_limit,
            check_deleted_keys_hidden_from_scan,
            check_large_value,
            check_flush,
            check_reclaim_range,
            check_checked_write,
            check_view_is_one_instant,
            check_views_keep_their_own_instants,
        );
        $crate::storage_suite!(@test [$(#[$attr])*] $make;
            check_view_pages_under_writers, shared);
        $crate::storage_suite!(@test [$(#[$attr])*] $make;
            check_concurrent_checked_increments, shared);
        $crate::storage_suite!(@test [$(#[$attr])*] $make;
            check_concurrent_readers_see_whole_batches, shared);
    };
    // The attributes travel as one bracketed token tree, so each test can
    // repeat them.
    (@tests $attrs:tt $make:expr; $($name:ident),* $(,)?) => {
        $( $crate::storage_suite!(@test $attrs $make; $name, borrowed); )*
    };
    // `borrowed` checks take `&dyn Storage`, `shared` ones the `Arc` (they
    // hand it to threads).
    (@test [$(#[$attr:meta])*] $make:expr; $name:ident, borrowed) => {
        $(#[$attr])*
        #[test]
        fn $name() {
            let (s, _guard) = $make;
            common::$name(&*s);
        }
    };
    (@test [$(#[$attr:meta])*] $make:expr; $name:ident, shared) => {
        $(#[$attr])*
        #[test]
        fn $name() {
            let (s, _guard) = $make;
            common::$name(s);
        }
    };
}
