//! Provisioned throughput: tables in PROVISIONED mode get their configured
//! read and write units per second, with DynamoDB's burst behaviour (unused
//! capacity is banked for up to [`burst_seconds`](Throughput::new) seconds,
//! 300 in DynamoDB). An operation is admitted while the bucket is positive and
//! then charged what it actually consumed, so a bucket may go negative and the
//! next requests wait for it to refill — which is how DynamoDB behaves too.
//! PAY_PER_REQUEST tables are never throttled.

use ferrodyn_types::{DynamoError, ErrorKind, Result};
use parking_lot::Mutex;
use std::time::Instant;

/// Which capacity an operation spends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Capacity {
    Read,
    Write,
}

struct Bucket {
    /// Units per second; 0 means unlimited (on-demand).
    rate: f64,
    tokens: f64,
    /// Seconds of unused capacity the bucket banks.
    burst_seconds: f64,
    updated: Instant,
}

impl Bucket {
    fn full(rate: u64, burst_seconds: f64) -> Bucket {
        Bucket {
            rate: rate as f64,
            tokens: rate as f64 * burst_seconds,
            burst_seconds,
            updated: Instant::now(),
        }
    }

    fn refill(&mut self) {
        let now = Instant::now();
        let elapsed = now.duration_since(self.updated).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.rate).min(self.rate * self.burst_seconds);
        self.updated = now;
    }
}

/// The read and write buckets of one table (or one global secondary index).
pub struct Throughput {
    read: Mutex<Bucket>,
    write: Mutex<Bucket>,
}

impl Throughput {
    /// Buckets for `read`/`write` units per second (0 = on-demand), starting
    /// full: a new table has a whole burst window of unused capacity.
    pub fn new(read: u64, write: u64, burst_seconds: f64) -> Throughput {
        Throughput {
            read: Mutex::new(Bucket::full(read, burst_seconds)),
            write: Mutex::new(Bucket::full(write, burst_seconds)),
        }
    }

    /// Changes the rates (UpdateTable, or a GSI configured by its table),
    /// keeping banked capacity within the new burst limit.
    pub fn set_rates(&self, read: u64, write: u64, burst_seconds: f64) {
        for (bucket, rate) in [(&self.read, read), (&self.write, write)] {
            let mut b = bucket.lock();
            if b.rate == 0.0 {
                // From unlimited to provisioned: a whole burst window, as new.
                *b = Bucket::full(rate, burst_seconds);
                continue;
            }
            b.refill();
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
        bucket.refill();
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
            bucket.refill();
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

    #[test]
    fn on_demand_is_never_throttled() {
        let t = Throughput::new(0, 0, 300.0);
        for _ in 0..1000 {
            t.admit(Capacity::Write).unwrap();
            t.charge(Capacity::Write, 10.0);
        }
    }

    #[test]
    fn provisioned_tables_throttle_after_the_burst_is_spent() {
        let t = Throughput::new(1, 1, 2.0);
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
}
