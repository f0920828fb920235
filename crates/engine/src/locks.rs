//! Item locks: the concurrency control of every item write, and DynamoDB's
//! transaction-conflict rules.
//!
//! A write holds the storage keys it reads and writes (its item, and the
//! size record of its item collection on tables with an LSI) from planning
//! (read, check, compute) until its storage batch is committed, so every
//! read-check-write is atomic with respect to every other write of the same
//! keys, while writes of different keys run in parallel. A request acquires
//! all its keys up front, in ascending key order, and only ever waits for a
//! key while holding keys below it: a cycle of waits would need someone
//! waiting for a key below one it holds, so there is none (no deadlock).
//!
//! Who holds a key decides what a newcomer does ([`Holder`]), following the
//! developer guide's "Transaction conflict handling" under the default
//! [`ConflictPolicy::Reject`]:
//!
//! | newcomer \ holder          | transaction | write / batch | TransactGet |
//! |----------------------------|-------------|---------------|-------------|
//! | TransactWriteItems         | conflict    | wait          | wait        |
//! | PutItem/UpdateItem/Delete  | conflict    | wait          | wait        |
//! | BatchWriteItem, TTL        | wait        | wait          | wait        |
//! | TransactGetItems           | conflict    | conflict      | share       |
//!
//! A newcomer never waits for a conflict: it fails at once (the caller
//! reports TransactionConflict). The guide lists no conflict for
//! BatchWriteItem's own requests (its isolation table: each action is
//! serializable), so those wait their turn. Keys that are not items (the
//! item-collection records) always wait. Under [`ConflictPolicy::Queue`]
//! every conflict waits instead, like DynamoDB Local's serial execution.
//!
//! The table is split into shards by key hash, each a mutex-protected
//! table of the keys currently held plus a condition variable for waiters;
//! an unheld key has no entry. A key is hashed once per request: the hash
//! picks the shard and finds the key's slot, and the lock set remembers
//! it with the slot's id, so releasing neither hashes nor compares keys
//! again and the caller keeps its keys (planning uses them as the storage
//! keys of its writes).

use hashbrown::HashTable;
use parking_lot::{Condvar, Mutex};
use smallvec::SmallVec;

/// Shards of the lock table (a power of two).
const SHARDS: usize = 64;

/// What a request does when a key it needs is held in a conflicting way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ConflictPolicy {
    /// DynamoDB's behaviour: fail with TransactionConflict at once.
    #[default]
    Reject,
    /// Wait for the holder to finish (DynamoDB Local's serial behaviour).
    Queue,
}

/// The kind of request holding (or asking for) a key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Holder {
    /// A TransactWriteItems (or ExecuteTransaction) in flight.
    Transaction,
    /// A PutItem, UpdateItem or DeleteItem.
    Write,
    /// A BatchWriteItem request or a Time to Live deletion: never rejected.
    Batch,
    /// A TransactGetItems: shared with other readers.
    Read,
    /// Another region's write to an MRSC replica (replication/strong.rs):
    /// never waits, under any conflict policy, so two regions writing one
    /// item cannot wait for each other.
    Proposal,
}

impl Holder {
    fn exclusive(self) -> bool {
        self != Holder::Read
    }

    /// Whether a newcomer of this kind is rejected by a key held as `held`.
    fn rejected_by(self, held: Holder) -> bool {
        match self {
            Holder::Transaction | Holder::Write => held == Holder::Transaction,
            Holder::Batch => false,
            Holder::Proposal => true,
            Holder::Read => held.exclusive(),
        }
    }
}

/// One key a request asks for.
#[derive(Clone, Debug)]
pub struct LockKey {
    pub key: Vec<u8>,
    /// True for an item (conflict rules apply); false for a record that
    /// only orders writers (always waited for).
    pub item: bool,
}

/// The state of one held key.
#[derive(Default)]
struct Entry {
    /// The exclusive holder, if any.
    exclusive: Option<Holder>,
    /// How many TransactGetItems share the key.
    readers: u32,
    /// Requests waiting for the key.
    waiters: u32,
}

impl Entry {
    fn grants(&self, holder: Holder) -> bool {
        self.exclusive.is_none() && (holder == Holder::Read || self.readers == 0)
    }

    /// The holder a newcomer meets (the exclusive one, else a reader).
    fn holder(&self) -> Holder {
        self.exclusive.unwrap_or(Holder::Read)
    }

    fn unused(&self) -> bool {
        self.exclusive.is_none() && self.readers == 0 && self.waiters == 0
    }
}

/// A word-at-a-time multiplicative hash (FxHash's mixing step) with a
/// final avalanche, so that the shard (middle bits) and the slot (low and
/// top bits) are both well spread: keys are short and the tables small
/// (only keys held right now), so a cheap hash beats SipHash; flooding one
/// shard with colliding keys would need that many requests in flight.
fn key_hash(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0;
    let mut mix = |word: u64| {
        hash = (hash.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    };
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        mix(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
    }
    let mut tail = [0u8; 8];
    let rest = chunks.remainder();
    tail[..rest.len()].copy_from_slice(rest);
    mix(u64::from_le_bytes(tail) ^ ((rest.len() as u64) << 56));
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(0xff51_afd7_ed55_8ccd);
    hash ^ (hash >> 33)
}

/// The shard of a key hash: bits the shard's own table does not use (it
/// takes the low bits for the slot and the top seven as a tag).
fn shard_of(hash: u64) -> usize {
    (hash >> 40) as usize & (SHARDS - 1)
}

/// One held key.
struct Slot {
    key: Box<[u8]>,
    hash: u64,
    /// Tells this slot from every other of its shard while it exists.
    id: u64,
    entry: Entry,
}

/// The keys of one shard held right now.
#[derive(Default)]
struct Slots {
    table: HashTable<Slot>,
    next_id: u64,
}

impl Slots {
    /// The id of the slot of `key`, created if absent.
    fn slot_for(&mut self, hash: u64, key: &[u8]) -> u64 {
        if let Some(slot) = self.table.find(hash, |s| *s.key == *key) {
            return slot.id;
        }
        self.next_id += 1;
        let slot = Slot {
            key: key.into(),
            hash,
            id: self.next_id,
            entry: Entry::default(),
        };
        self.table.insert_unique(hash, slot, |s| s.hash);
        self.next_id
    }

    fn entry(&mut self, hash: u64, id: u64) -> &mut Entry {
        let slot = self.table.find_mut(hash, |s| s.id == id);
        &mut slot.expect("a held or awaited key keeps its slot").entry
    }

    /// Drops the slot if no one holds or awaits it any more.
    fn remove_if_unused(&mut self, hash: u64, id: u64) {
        if let Ok(slot) = self.table.find_entry(hash, |s| s.id == id) {
            if slot.get().entry.unused() {
                slot.remove();
            }
        }
    }
}

#[derive(Default)]
struct Shard {
    held: Mutex<Slots>,
    released: Condvar,
}

/// The engine's table of held keys.
pub struct LockTable {
    shards: Vec<Shard>,
    policy: ConflictPolicy,
}

/// A key a lock set holds: where its slot is.
struct Grant {
    hash: u64,
    id: u64,
}

/// Keys a request holds; dropping it releases them.
pub struct LockSet<'a> {
    table: &'a LockTable,
    holder: Holder,
    grants: SmallVec<[Grant; 2]>,
}

/// A request that met a conflicting holder: the positions (in the caller's
/// key list) of the item keys that conflicted.
#[derive(Debug, PartialEq, Eq)]
pub struct Conflict {
    pub positions: Vec<usize>,
}

enum Outcome {
    Granted(Grant),
    Conflict,
    /// Not acquired because the request has already failed.
    Skipped,
}

impl LockTable {
    pub fn new(policy: ConflictPolicy) -> LockTable {
        LockTable {
            shards: (0..SHARDS).map(|_| Shard::default()).collect(),
            policy,
        }
    }

    pub fn policy(&self) -> ConflictPolicy {
        self.policy
    }

    /// Acquires every key for `holder`, in ascending key order, waiting
    /// where the rules say wait. If any item key conflicts, nothing is held
    /// and the conflicting positions are returned (the request never waits
    /// once it knows it will fail).
    pub fn acquire(&self, holder: Holder, keys: &[LockKey]) -> Result<LockSet<'_>, Conflict> {
        let mut order: SmallVec<[(usize, u64); 2]> = (keys.iter().enumerate())
            .map(|(position, wanted)| (position, key_hash(&wanted.key)))
            .collect();
        if order.len() > 1 {
            order.sort_unstable_by(|a, b| keys[a.0].key.cmp(&keys[b.0].key));
            order.dedup_by(|a, b| a.1 == b.1 && keys[a.0].key == keys[b.0].key);
        }
        let mut set = LockSet {
            table: self,
            holder,
            grants: SmallVec::with_capacity(order.len()),
        };
        let mut conflicts = Vec::new();
        for (position, hash) in order {
            match self.acquire_one(holder, &keys[position], hash, !conflicts.is_empty()) {
                Outcome::Granted(grant) => set.grants.push(grant),
                Outcome::Conflict => conflicts.push(position),
                Outcome::Skipped => {}
            }
        }
        if conflicts.is_empty() {
            Ok(set)
        } else {
            conflicts.sort_unstable();
            Err(Conflict {
                positions: conflicts,
            })
        }
    }

    fn acquire_one(&self, holder: Holder, wanted: &LockKey, hash: u64, failing: bool) -> Outcome {
        let shard = &self.shards[shard_of(hash)];
        let mut held = shard.held.lock();
        let id = held.slot_for(hash, &wanted.key);
        loop {
            let entry = held.entry(hash, id);
            if entry.grants(holder) {
                match holder {
                    Holder::Read => entry.readers += 1,
                    _ => entry.exclusive = Some(holder),
                }
                return Outcome::Granted(Grant { hash, id });
            }
            let rejected = wanted.item
                && (self.policy == ConflictPolicy::Reject || holder == Holder::Proposal)
                && holder.rejected_by(entry.holder());
            if rejected || failing {
                held.remove_if_unused(hash, id);
                return if rejected {
                    Outcome::Conflict
                } else {
                    Outcome::Skipped
                };
            }
            entry.waiters += 1;
            shard.released.wait(&mut held);
            held.entry(hash, id).waiters -= 1;
        }
    }

    fn release(&self, holder: Holder, grant: &Grant) {
        let shard = &self.shards[shard_of(grant.hash)];
        let mut held = shard.held.lock();
        let entry = held.entry(grant.hash, grant.id);
        match holder {
            Holder::Read => entry.readers -= 1,
            _ => entry.exclusive = None,
        }
        let waiting = entry.waiters > 0;
        held.remove_if_unused(grant.hash, grant.id);
        drop(held);
        if waiting {
            shard.released.notify_all();
        }
    }

    /// How many keys are held right now (tests).
    pub fn held_keys(&self) -> usize {
        self.shards.iter().map(|s| s.held.lock().table.len()).sum()
    }
}

impl Drop for LockSet<'_> {
    fn drop(&mut self) {
        for grant in &self.grants {
            self.table.release(self.holder, grant);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    fn item(key: &str) -> LockKey {
        LockKey {
            key: key.as_bytes().to_vec(),
            item: true,
        }
    }

    fn record(key: &str) -> LockKey {
        LockKey {
            key: key.as_bytes().to_vec(),
            item: false,
        }
    }

    #[test]
    fn a_transaction_rejects_writes_and_transactions_on_its_items() {
        let locks = LockTable::new(ConflictPolicy::Reject);
        let held = locks.acquire(Holder::Transaction, &[item("a"), item("b")]);
        let held = held.expect("free keys are granted");
        let conflict = locks
            .acquire(Holder::Transaction, &[item("c"), item("b"), item("a")])
            .err()
            .expect("held items conflict");
        assert_eq!(conflict.positions, vec![1, 2]);
        assert!(locks.acquire(Holder::Write, &[item("a")]).is_err());
        assert!(locks.acquire(Holder::Read, &[item("b")]).is_err());
        // A failed request holds nothing: only the transaction's two keys.
        assert_eq!(locks.held_keys(), 2);
        drop(held);
        assert_eq!(locks.held_keys(), 0);
        assert!(locks.acquire(Holder::Write, &[item("a")]).is_ok());
    }

    #[test]
    fn transact_get_conflicts_with_any_write_and_shares_with_reads() {
        let locks = LockTable::new(ConflictPolicy::Reject);
        let write = locks.acquire(Holder::Write, &[item("a")]).unwrap();
        assert!(locks.acquire(Holder::Read, &[item("a")]).is_err());
        drop(write);
        let batch = locks.acquire(Holder::Batch, &[item("a")]).unwrap();
        assert!(locks.acquire(Holder::Read, &[item("a")]).is_err());
        drop(batch);
        let first = locks.acquire(Holder::Read, &[item("a")]).unwrap();
        let second = locks.acquire(Holder::Read, &[item("a")]).unwrap();
        drop((first, second));
        assert_eq!(locks.held_keys(), 0);
    }

    /// Runs `request` on a thread while `holder` holds key "a"; returns
    /// whether it finished before the hold ended (it should wait).
    fn waits_for(locks: Arc<LockTable>, holder: Holder, newcomer: Holder, key: LockKey) -> bool {
        let held = locks.acquire(holder, &[item("a")]).unwrap();
        let finished = Arc::new(AtomicBool::new(false));
        let thread = {
            let (locks, finished) = (Arc::clone(&locks), Arc::clone(&finished));
            std::thread::spawn(move || {
                let granted = locks.acquire(newcomer, &[key]).is_ok();
                finished.store(true, Ordering::SeqCst);
                granted
            })
        };
        std::thread::sleep(Duration::from_millis(50));
        let early = finished.load(Ordering::SeqCst);
        drop(held);
        assert!(thread.join().unwrap(), "granted after the holder left");
        !early
    }

    #[test]
    fn writes_wait_for_writes_and_batches_wait_for_transactions() {
        let locks = Arc::new(LockTable::new(ConflictPolicy::Reject));
        assert!(waits_for(
            Arc::clone(&locks),
            Holder::Write,
            Holder::Write,
            item("a")
        ));
        assert!(waits_for(
            Arc::clone(&locks),
            Holder::Write,
            Holder::Transaction,
            item("a")
        ));
        assert!(waits_for(
            Arc::clone(&locks),
            Holder::Transaction,
            Holder::Batch,
            item("a")
        ));
        assert!(waits_for(
            Arc::clone(&locks),
            Holder::Read,
            Holder::Write,
            item("a")
        ));
        // A record (not an item) is waited for even behind a transaction.
        assert!(waits_for(
            Arc::clone(&locks),
            Holder::Transaction,
            Holder::Write,
            record("a")
        ));
        assert_eq!(locks.held_keys(), 0);
    }

    #[test]
    fn the_queue_policy_waits_instead_of_rejecting() {
        let locks = Arc::new(LockTable::new(ConflictPolicy::Queue));
        for newcomer in [Holder::Transaction, Holder::Write, Holder::Read] {
            assert!(waits_for(
                Arc::clone(&locks),
                Holder::Transaction,
                newcomer,
                item("a")
            ));
        }
    }

    #[test]
    fn opposite_orders_never_deadlock() {
        let locks = Arc::new(LockTable::new(ConflictPolicy::Queue));
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let locks = Arc::clone(&locks);
                std::thread::spawn(move || {
                    for i in 0..2_000 {
                        let mut keys = vec![item("x"), item("y"), record("z")];
                        if (t + i) % 2 == 0 {
                            keys.reverse();
                        }
                        let held = locks.acquire(Holder::Transaction, &keys).unwrap();
                        drop(held);
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        assert_eq!(locks.held_keys(), 0);
    }
}
