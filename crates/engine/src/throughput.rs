//! Provisioned throughput: tables in PROVISIONED mode get their configured
//! read and write units per second, with DynamoDB's burst behaviour (unused
//! capacity is banked for up to [`burst_seconds`](Throughput::new) seconds,
//! 300 in DynamoDB). An operation is admitted while the bucket is positive and
//! then charged what it actually consumed, so a bucket may go negative and the
//! next requests wait for it to refill — which is how DynamoDB behaves too.
//! PAY_PER_REQUEST tables are never throttled.

use crate::clock::Clock;
use ferrodyn_types::{DynamoError, ErrorKind, Result};
use parking_lot::Mutex;
use std::sync::Arc;

/// Which capacity an operation spends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capacity {
    Read,
    Write,
}

/// A token bucket on the engine's clock (also one partition's read or
/// write capacity, partition_limits.rs).
#[derive(Clone)]
pub(crate) struct Bucket {
    /// Units per second; 0 means unlimited (on-demand).
    rate: f64,
    tokens: f64,
    /// Seconds of unused capacity the bucket banks.
    burst_seconds: f64,
    /// When `tokens` was last brought up to date, on the engine's clock (ms).
    updated: u64,
}

impl Bucket {
    pub(crate) fn full(rate: u64, burst_seconds: f64, now: u64) -> Bucket {
        Bucket {
            rate: rate as f64,
            tokens: rate as f64 * burst_seconds,
            burst_seconds,
            updated: now,
        }
    }

    fn refill(&mut self, now: u64) {
        let elapsed = now.saturating_sub(self.updated) as f64 / 1000.0;
        self.tokens = (self.tokens + elapsed * self.rate).min(self.rate * self.burst_seconds);
        self.updated = self.updated.max(now);
    }

    /// Whether an operation may start at `now`: the bucket is positive.
    pub(crate) fn admits(&mut self, now: u64) -> bool {
        self.refill(now);
        self.tokens > 0.0
    }

    /// Takes what an admitted operation consumed (it may go negative).
    pub(crate) fn spend(&mut self, units: f64, now: u64) {
        self.refill(now);
        self.tokens -= units;
    }
}

/// The read and write buckets of one table (or one global secondary index).
/// Buckets refill by the engine's clock, so a manual test clock that
/// advances also refills them.
pub struct Throughput {
    read: Mutex<Bucket>,
    write: Mutex<Bucket>,
    clock: Arc<Clock>,
}

impl Throughput {
    /// Buckets for `read`/`write` units per second (0 = on-demand), starting
    /// full: a new table has a whole burst window of unused capacity.
    pub fn new(read: u64, write: u64, burst_seconds: f64, clock: Arc<Clock>) -> Throughput {
        let now = clock.now_millis();
        Throughput {
            read: Mutex::new(Bucket::full(read, burst_seconds, now)),
            write: Mutex::new(Bucket::full(write, burst_seconds, now)),
            clock,
        }
    }

    /// Changes the rates (UpdateTable, or a GSI configured by its table),
    /// keeping banked capacity within the new burst limit.
    pub fn set_rates(&self, read: u64, write: u64, burst_seconds: f64) {
        let now = self.clock.now_millis();
        for (bucket, rate) in [(&self.read, read), (&self.write, write)] {
            let mut b = bucket.lock();
            if b.rate == 0.0 {
                // From unlimited to provisioned: a whole burst window, as new.
                *b = Bucket::full(rate, burst_seconds, now);
                continue;
            }
            b.refill(now);
            b.rate = rate as f64;
            b.burst_seconds = burst_seconds;
            b.tokens = b.tokens.min(b.rate * b.burst_seconds);
        }
    }

    fn bucket(&self, kind: Capacity) -> &Mutex<Bucket> {
        match kind {
            Capacity::Read => &self.read,
            Capacity::Write => &self.write,
        }
    }

    /// True if an operation of this kind may run now.
    pub fn has_capacity(&self, kind: Capacity) -> bool {
        let mut bucket = self.bucket(kind).lock();
        if bucket.rate == 0.0 {
            return true;
        }
        bucket.refill(self.clock.now_millis());
        bucket.tokens > 0.0
    }

    /// Admits an operation or fails with DynamoDB's throttling error.
    pub fn admit(&self, kind: Capacity) -> Result<()> {
        if self.has_capacity(kind) {
            Ok(())
        } else {
            Err(exceeded())
        }
    }

    /// Charges what an admitted operation consumed.
    pub fn charge(&self, kind: Capacity, units: f64) {
        let mut bucket = self.bucket(kind).lock();
        if bucket.rate > 0.0 {
            bucket.refill(self.clock.now_millis());
            bucket.tokens -= units;
        }
    }
}

/// The exception when a GSI, not the table, is out of write capacity.
pub fn index_exceeded() -> DynamoError {
    DynamoError::new(
        ErrorKind::ProvisionedThroughputExceeded,
        "The level of configured provisioned throughput for one or more global secondary indexes of the table was exceeded. Consider increasing your provisioning level for the under-provisioned global secondary indexes with the UpdateTable API",
    )
}

/// DynamoDB's ProvisionedThroughputExceededException.
pub fn exceeded() -> DynamoError {
    DynamoError::new(
        ErrorKind::ProvisionedThroughputExceeded,
        "The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.",
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ClockMode;

    fn wall() -> Arc<Clock> {
        Arc::new(Clock::new(ClockMode::Wall))
    }

    #[test]
    fn on_demand_is_never_throttled() {
        let t = Throughput::new(0, 0, 300.0, wall());
        for _ in 0..1000 {
            t.admit(Capacity::Write).unwrap();
            t.charge(Capacity::Write, 10.0);
        }
    }

    #[test]
    fn provisioned_tables_throttle_after_the_burst_is_spent() {
        let t = Throughput::new(1, 1, 2.0, wall());
        // Two seconds of one unit each are banked; a 3-unit write overdraws.
        t.admit(Capacity::Write).unwrap();
        t.charge(Capacity::Write, 3.0);
        assert_eq!(
            t.admit(Capacity::Write).unwrap_err().kind,
            ErrorKind::ProvisionedThroughputExceeded
        );
        // Reads have their own bucket.
        t.admit(Capacity::Read).unwrap();
    }

    #[test]
    fn a_manual_clock_refills_only_when_it_moves() {
        let clock = Arc::new(Clock::new(ClockMode::Manual));
        let t = Throughput::new(1, 1, 2.0, Arc::clone(&clock));
        t.charge(Capacity::Write, 3.0);
        assert!(!t.has_capacity(Capacity::Write));
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(
            !t.has_capacity(Capacity::Write),
            "wall time does not refill"
        );
        clock
            .advance(std::time::Duration::from_millis(1500))
            .unwrap();
        assert!(t.has_capacity(Capacity::Write), "-1 + 1.5 units");
    }
}
