//! Item versions of global tables: what last-writer-wins compares.
//!
//! Every write of a replica stores its item's version beside the item
//! (`'v' | table id | hash | key`, keyspace.rs), in the item's batch: the
//! commit time in microseconds of the region that made the change, and that
//! region's name, which breaks ties. A deleted item keeps its version as a
//! tombstone, so that an older write arriving late cannot bring it back.
//!
//! Versions come from a hybrid logical clock: a local write's version is
//! above the wall clock, above every version this engine issued or applied,
//! and above the version of the item it overwrites. So a write always wins
//! over what it overwrote, wherever that came from, even when another
//! region's clock runs ahead: replicas that apply the same set of changes
//! keep, for each item, the one with the highest version, whatever order
//! the changes arrive in.

pub use crate::shared::{ItemVersion, VersionChange};
use std::sync::atomic::{AtomicU64, Ordering};

/// The engine's hybrid logical clock for item versions.
#[derive(Default)]
pub struct VersionClock {
    last: AtomicU64,
}

impl VersionClock {
    /// A fresh version time: above `now`, every time issued or observed,
    /// and `floor` (the overwritten item's version).
    pub fn next(&self, now: u64, floor: Option<&ItemVersion>) -> u64 {
        let floor = floor.map_or(0, |v| v.micros);
        let mut last = self.last.load(Ordering::SeqCst);
        loop {
            let candidate = now.max(last + 1).max(floor + 1);
            match (self.last).compare_exchange(last, candidate, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => return candidate,
                Err(actual) => last = actual,
            }
        }
    }

    /// Keeps later versions above one applied from another region.
    pub fn observe(&self, micros: u64) {
        self.last.fetch_max(micros, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_order_by_time_then_region_and_round_trip() {
        let a = ItemVersion {
            micros: 5,
            origin: "us-east-1".into(),
        };
        let b = ItemVersion {
            micros: 5,
            origin: "us-west-2".into(),
        };
        assert!(a < b);
        assert_eq!(
            ItemVersion::decode(&b.encode(true)),
            Some((b.clone(), true))
        );
        assert_eq!(ItemVersion::decode(&a.encode(false)), Some((a, false)));
    }

    #[test]
    fn the_clock_stays_above_what_it_issued_observed_and_overwrote() {
        let clock = VersionClock::default();
        assert_eq!(clock.next(100, None), 100);
        assert_eq!(clock.next(100, None), 101);
        clock.observe(500);
        assert_eq!(clock.next(100, None), 501);
        let ahead = ItemVersion {
            micros: 900,
            origin: "eu-west-1".into(),
        };
        assert_eq!(clock.next(100, Some(&ahead)), 901);
    }
}
