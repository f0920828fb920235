//! The engine's clock: what "now" is for everything time-based that a
//! client can observe. By default it is the wall clock. A manual clock
//! (`ferrodyn serve --clock manual`, for tests) starts at the wall clock's
//! time and then moves only when told ([`Clock::advance`], [`Clock::set`]),
//! so a test can make a Time to Live pass, a stream record age out of its 24
//! hours or a ClientRequestToken expire without waiting.
//!
//! Read through the clock: TTL expiry, stream retention and shard-iterator
//! expiry, provisioned burst capacity, ClientRequestToken windows, table and
//! index timestamps, stream labels, resource-policy revision ids. On the
//! wall clock whatever the mode: request signatures' X-Amz-Date window (the
//! client signs with its own clock), connection timeouts, the interval
//! between TTL sweeps, and ids that only need to be unique (stream event
//! ids).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How the clock moves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ClockMode {
    /// The wall clock.
    #[default]
    Wall,
    /// Frozen at start-up's wall-clock time until advanced or set.
    Manual,
}

/// Milliseconds since the epoch on the wall clock.
fn wall_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The engine's "now".
#[derive(Debug)]
pub struct Clock {
    manual: AtomicBool,
    /// The manual clock's time, in milliseconds since the epoch.
    millis: AtomicU64,
}

/// Why the manual clock refused to move.
#[derive(Debug, PartialEq, Eq)]
pub enum ClockError {
    /// The clock follows the wall clock (`--clock manual` was not given).
    NotManual,
    /// Time does not go back: TTL sweeps, stream retention and capacity
    /// already acted on the later time.
    Backwards { now_millis: u64, asked_millis: u64 },
}

impl std::fmt::Display for ClockError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ClockError::NotManual => f.write_str(
                "the clock follows the wall clock; start the server with --clock manual to move it",
            ),
            ClockError::Backwards {
                now_millis,
                asked_millis,
            } => write!(
                f,
                "the clock cannot go back (it is at {now_millis} ms since the epoch, asked for \
                 {asked_millis})"
            ),
        }
    }
}

impl Clock {
    pub fn new(mode: ClockMode) -> Clock {
        Clock {
            manual: AtomicBool::new(mode == ClockMode::Manual),
            millis: AtomicU64::new(wall_millis()),
        }
    }

    pub fn mode(&self) -> ClockMode {
        if self.manual.load(Ordering::Relaxed) {
            ClockMode::Manual
        } else {
            ClockMode::Wall
        }
    }

    /// Now, in milliseconds since the epoch.
    pub fn now_millis(&self) -> u64 {
        match self.mode() {
            ClockMode::Wall => wall_millis(),
            ClockMode::Manual => self.millis.load(Ordering::SeqCst),
        }
    }

    /// Now, in microseconds since the epoch (a manual clock counts whole
    /// milliseconds): Kinesis destinations with MICROSECOND precision.
    pub fn now_micros(&self) -> u64 {
        match self.mode() {
            ClockMode::Wall => std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_micros() as u64),
            ClockMode::Manual => self.millis.load(Ordering::SeqCst) * 1000,
        }
    }

    /// Now, in seconds since the epoch to the millisecond (as DynamoDB
    /// reports timestamps).
    pub fn now_seconds(&self) -> f64 {
        self.now_millis() as f64 / 1000.0
    }

    /// Moves the manual clock forward by `by`; returns the new time.
    pub fn advance(&self, by: Duration) -> Result<u64, ClockError> {
        if self.mode() != ClockMode::Manual {
            return Err(ClockError::NotManual);
        }
        let by = by.as_millis().min(u64::MAX as u128) as u64;
        let before = self.millis.fetch_add(by, Ordering::SeqCst);
        Ok(before + by)
    }

    /// Sets the manual clock to `millis` since the epoch, which may not be
    /// before its current time.
    pub fn set(&self, millis: u64) -> Result<u64, ClockError> {
        if self.mode() != ClockMode::Manual {
            return Err(ClockError::NotManual);
        }
        let now = self.millis.load(Ordering::SeqCst);
        if millis < now {
            return Err(ClockError::Backwards {
                now_millis: now,
                asked_millis: millis,
            });
        }
        self.millis.fetch_max(millis, Ordering::SeqCst);
        Ok(self.millis.load(Ordering::SeqCst))
    }
}

impl crate::Engine {
    /// Moves the manual clock forward by `by`, then deletes what Time to
    /// Live finds expired at the new time, expired SYSTEM backups and
    /// recovery history past its period (so a test sees it at once, not at
    /// the next sweep); returns how many items it deleted.
    pub fn advance_clock(&self, by: Duration) -> ferrodyn_types::Result<usize> {
        self.clock.advance(by).map_err(clock_error)?;
        self.expire_after_clock_move()
    }

    /// Sets the manual clock to `millis` since the epoch, as
    /// [`advance_clock`](Self::advance_clock) does.
    pub fn set_clock(&self, millis: u64) -> ferrodyn_types::Result<usize> {
        self.clock.set(millis).map_err(clock_error)?;
        self.expire_after_clock_move()
    }

    fn expire_after_clock_move(&self) -> ferrodyn_types::Result<usize> {
        self.expire_backups(self.now_seconds())?;
        self.maintain_recovery(self.now_seconds())?;
        // Shards past their lifetime roll over before the answer, so a test
        // that moved the clock sees them closed.
        self.partition_upkeep()?;
        self.expire_items(self.now_seconds())
    }
}

fn clock_error(error: ClockError) -> ferrodyn_types::DynamoError {
    ferrodyn_types::DynamoError::validation(error.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_clock_moves_only_when_told_and_never_back() {
        let clock = Clock::new(ClockMode::Manual);
        let start = clock.now_millis();
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(clock.now_millis(), start);
        assert_eq!(
            clock.advance(Duration::from_secs(90_000)),
            Ok(start + 90_000_000)
        );
        let later = start + 100_000_000;
        assert_eq!(clock.set(later), Ok(later));
        assert!(matches!(
            clock.set(start),
            Err(ClockError::Backwards { .. })
        ));
        assert_eq!(clock.now_seconds(), later as f64 / 1000.0);
    }

    #[test]
    fn the_wall_clock_cannot_be_moved() {
        let clock = Clock::new(ClockMode::Wall);
        assert_eq!(
            clock.advance(Duration::from_secs(1)),
            Err(ClockError::NotManual)
        );
        assert_eq!(clock.set(0), Err(ClockError::NotManual));
        let before = wall_millis();
        assert!(clock.now_millis() >= before);
    }
}
