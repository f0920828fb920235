//! Model-based property test: random sequences of batches, gets, scans,
//! flushes and reopens run against each backend and against a `BTreeMap`
//! model; every read must agree with the model.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use ferrodyn_storage::{open_fjall, open_memory, Durability, Key, Storage, Value, WriteOp};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    Write(Vec<WriteOp>),
    Get(Key),
    Scan {
        start: Bound<Key>,
        end: Bound<Key>,
        reverse: bool,
        limit: usize,
    },
    Flush,
    /// Close and reopen (a no-op for the in-memory backend).
    Reopen,
}

/// Short keys over a small alphabet rich in 0x00/0xFF, so ops collide often.
fn key() -> impl Strategy<Value = Key> {
    let byte = prop_oneof![
        Just(0x00u8),
        Just(0x01),
        Just(b'a'),
        Just(b'b'),
        Just(0xFE),
        Just(0xFF),
        any::<u8>(),
    ];
    prop::collection::vec(byte, 1..4)
}

/// Bound keys may also be empty, which no stored key is.
fn bound() -> impl Strategy<Value = Bound<Key>> {
    let k = prop_oneof![key(), Just(Vec::new())];
    prop_oneof![
        1 => Just(Bound::Unbounded),
        2 => k.clone().prop_map(Bound::Included),
        2 => k.prop_map(Bound::Excluded),
    ]
}

fn write_op() -> impl Strategy<Value = WriteOp> {
    prop_oneof![
        3 => (key(), prop::collection::vec(any::<u8>(), 0..16)).prop_map(|(k, v)| WriteOp::Put(k, v)),
        1 => key().prop_map(WriteOp::Delete),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => prop::collection::vec(write_op(), 0..8).prop_map(Op::Write),
        3 => key().prop_map(Op::Get),
        4 => (bound(), bound(), any::<bool>(), 0usize..8).prop_map(|(start, end, reverse, limit)| Op::Scan { start, end, reverse, limit }),
        1 => Just(Op::Flush),
        1 => Just(Op::Reopen),
    ]
}

fn as_ref(b: &Bound<Key>) -> Bound<&[u8]> {
    match b {
        Bound::Included(k) => Bound::Included(k),
        Bound::Excluded(k) => Bound::Excluded(k),
        Bound::Unbounded => Bound::Unbounded,
    }
}

/// The model's scan: a plain filter, independent of `BTreeMap::range`.
fn model_scan(
    model: &BTreeMap<Key, Value>,
    start: &Bound<Key>,
    end: &Bound<Key>,
    reverse: bool,
    limit: usize,
) -> Vec<(Key, Value)> {
    let in_range = |k: &Key| {
        let above = match start {
            Bound::Included(s) => k >= s,
            Bound::Excluded(s) => k > s,
            Bound::Unbounded => true,
        };
        let below = match end {
            Bound::Included(e) => k <= e,
            Bound::Excluded(e) => k < e,
            Bound::Unbounded => true,
        };
        above && below
    };
    let mut hits: Vec<(Key, Value)> = model
        .iter()
        .filter(|(k, _)| in_range(k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if reverse {
        hits.reverse();
    }
    hits.truncate(limit);
    hits
}

fn run(
    ops: Vec<Op>,
    mut storage: Arc<dyn Storage>,
    mut reopen: impl FnMut(Arc<dyn Storage>) -> Arc<dyn Storage>,
) -> Result<(), TestCaseError> {
    let mut model: BTreeMap<Key, Value> = BTreeMap::new();
    for op in ops {
        match op {
            Op::Write(batch) => {
                for w in &batch {
                    match w {
                        WriteOp::Put(k, v) => model.insert(k.clone(), v.clone()),
                        WriteOp::Delete(k) => model.remove(k),
                    };
                }
                storage.write(batch).unwrap();
            }
            Op::Get(k) => prop_assert_eq!(storage.get(&k).unwrap(), model.get(&k).cloned()),
            Op::Scan {
                start,
                end,
                reverse,
                limit,
            } => {
                let got = storage
                    .scan(as_ref(&start), as_ref(&end), reverse, limit)
                    .unwrap();
                prop_assert_eq!(got, model_scan(&model, &start, &end, reverse, limit));
            }
            Op::Flush => storage.flush().unwrap(),
            Op::Reopen => storage = reopen(storage),
        }
    }
    // Finally the whole contents, both directions.
    let all = storage
        .scan(Bound::Unbounded, Bound::Unbounded, false, usize::MAX)
        .unwrap();
    prop_assert_eq!(
        all,
        model_scan(
            &model,
            &Bound::Unbounded,
            &Bound::Unbounded,
            false,
            usize::MAX
        )
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]
    #[test]
    fn memory_matches_model(ops in prop::collection::vec(op(), 1..60)) {
        run(ops, open_memory(), |s| s)?;
    }
}

proptest! {
    // Each case opens a real database (and reopens it), so fewer cases.
    #![proptest_config(ProptestConfig::with_cases(96))]
    #[test]
    fn fjall_matches_model(ops in prop::collection::vec(op(), 1..60), sync in any::<bool>()) {
        let dir = tempfile::tempdir().unwrap();
        let durability = if sync { Durability::Sync } else { Durability::Buffered };
        let path = dir.path().to_path_buf();
        let storage = open_fjall(&path, durability).unwrap();
        run(ops, storage, |old| {
            drop(old);
            open_fjall(&path, durability).unwrap()
        })?;
    }
}
