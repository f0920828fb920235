//! Test helper for `tests/crash.rs`: writes numbered batches to a fjall store
//! forever and prints each batch's number on stdout once `write` has
//! returned (acknowledged). The test SIGKILLs it at a random moment, reopens
//! the store and checks that every acknowledged batch is there, whole.
//!
//! Usage: `ferrodyn-storage-crash-writer DIR FIRST_BATCH buffered|sync|none`

use std::io::Write;
use std::path::Path;

use ferrodyn_storage::{Durability, FjallOptions, FjallStorage, Storage, WriteOp};

/// Keys per batch; the test checks a batch is present with all of them or none.
pub const KEYS_PER_BATCH: u32 = 8;

/// Key `j` of batch `i`. Zero-padded so keys sort by batch.
fn key(i: u64, j: u32) -> Vec<u8> {
    format!("batch{i:010}/{j}").into_bytes()
}

/// Value of key `j` in batch `i`: its identity repeated to a size that varies
/// from batch to batch (40 B to ~3 KB), so batches straddle fjall's 8 KiB
/// journal buffer and sometimes its 4 KiB journal compression threshold.
fn value(i: u64, j: u32) -> Vec<u8> {
    let unit = format!("{i}:{j};");
    unit.repeat(4 + ((i * 7 + u64::from(j) * 13) % 300) as usize)
        .into_bytes()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, dir, first, durability] = args.as_slice() else {
        eprintln!("usage: ferrodyn-storage-crash-writer DIR FIRST_BATCH buffered|sync|none");
        std::process::exit(2);
    };
    let first: u64 = first.parse().expect("FIRST_BATCH is a number");
    let durability = match durability.as_str() {
        "buffered" => Durability::Buffered,
        "sync" => Durability::Sync,
        "none" => Durability::None,
        other => panic!("unknown durability {other}"),
    };
    let options = FjallOptions {
        durability,
        // Small memtables so flushes to table files (and journal rotation)
        // happen while the test is killing us.
        max_memtable_bytes: 1024 * 1024,
        ..FjallOptions::default()
    };
    let storage = FjallStorage::open(Path::new(dir), options).expect("open store");
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for i in first.. {
        let mut ops: Vec<WriteOp> = (0..KEYS_PER_BATCH)
            .map(|j| WriteOp::Put(key(i, j), value(i, j)))
            .collect();
        ops.push(WriteOp::Put(b"last".to_vec(), i.to_be_bytes().to_vec()));
        storage.write(ops).expect("write");
        // Acknowledge: only now may the test count batch i as durable.
        writeln!(out, "{i}").expect("stdout");
        out.flush().expect("stdout");
    }
}
