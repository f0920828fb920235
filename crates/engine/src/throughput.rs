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
    updated: Instant,
}

impl Bucket {
    fn refill(&mut self, burst_seconds: f64) {
        let now = Instant::now();
        let elapsed = now.duration_since(self.updated).as_secs_f64();
        self.tokens = (self.tokens + elapsed * self.rate).min(self.rate * burst_seconds);
        self.updated = now;
    }
}

/// The read and write buckets of one table.
pub struct Throughput {
    burst_seconds: f64,
    read: Mutex<Bucket>,
    write: Mutex<Bucket>,
}

impl Throughput {
    /// Buckets for `read`/`write` units per second (0 = on-demand), starting
    /// full: a new table has a whole burst window of unused capacity.
    pub fn new(read: u64, write: u64, burst_seconds: f64) -> Throughput {
        let bucket = |rate: u64| {
            Mutex::new(Bucket {
                rate: rate as f64,
                tokens: rate as f64 * burst_seconds,
                updated: Instant::now(),
            })
        };
        Throughput {
            burst_seconds,
            read: bucket(read),
            write: bucket(write),
        }
    }

    /// Changes the rates (UpdateTable), keeping banked capacity within the
    /// new burst limit.
    pub fn set_rates(&self, read: u64, write: u64) {
        for (bucket, rate) in [(&self.read, read), (&self.write, write)] {
            let mut b = bucket.lock();
            b.refill(self.burst_seconds);
            b.rate = rate as f64;
            b.tokens = b.tokens.min(b.rate * self.burst_seconds);
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
        bucket.refill(self.burst_seconds);
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
            bucket.refill(self.burst_seconds);
            bucket.tokens -= units;
        }
    }
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
