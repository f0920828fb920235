//! Capacity units and monthly price estimates, by DynamoDB's billing rules:
//!
//! - a write costs one write unit per started 1 KB of item, a read one read
//!   unit per started 4 KB (strongly consistent);
//! - an eventually consistent read costs half, a transactional read or
//!   write twice;
//! - on-demand bills request units per million; provisioned bills capacity
//!   units per hour, sized for the peak rate divided by the target
//!   utilisation (auto scaling's target, 1.0 for exactly the rate).
//!
//! The report of capacity a running server actually consumed is not here:
//! it needs a server endpoint that does not exist yet.

pub mod prices;

pub use prices::Prices;

use std::fmt;

/// Bytes per write unit.
pub const WRITE_UNIT_BYTES: u64 = 1024;
/// Bytes per read unit.
pub const READ_UNIT_BYTES: u64 = 4096;

/// Write units for one standard write of an item of `size` bytes.
pub fn write_units(size: u64) -> u64 {
    size.div_ceil(WRITE_UNIT_BYTES).max(1)
}

/// Read units for one strongly consistent read of an item of `size` bytes.
pub fn read_units(size: u64) -> u64 {
    size.div_ceil(READ_UNIT_BYTES).max(1)
}

/// An access pattern: one item size and the rates of each kind of
/// operation on it, per second.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Workload {
    pub item_size: u64,
    pub writes: f64,
    pub transactional_writes: f64,
    pub strong_reads: f64,
    pub eventual_reads: f64,
    pub transactional_reads: f64,
}

impl Workload {
    /// Write units consumed per second.
    pub fn write_units_per_second(&self) -> f64 {
        let units = write_units(self.item_size) as f64;
        units * (self.writes + 2.0 * self.transactional_writes)
    }

    /// Read units consumed per second.
    pub fn read_units_per_second(&self) -> f64 {
        let units = read_units(self.item_size) as f64;
        units * (self.strong_reads + 0.5 * self.eventual_reads + 2.0 * self.transactional_reads)
    }
}

/// Money per month, by part.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Monthly {
    pub writes: f64,
    pub reads: f64,
    pub storage: f64,
}

impl Monthly {
    pub fn total(&self) -> f64 {
        self.writes + self.reads + self.storage
    }
}

/// The estimate for a set of workloads.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    pub write_units_per_second: f64,
    pub read_units_per_second: f64,
    /// Provisioned capacity to buy (rate ÷ utilisation, rounded up).
    pub provisioned_wcu: u64,
    pub provisioned_rcu: u64,
    pub on_demand: Monthly,
    pub provisioned: Monthly,
    pub currency: String,
    pub utilization: f64,
}

/// Estimates capacity and monthly cost of `workloads` together, with
/// `storage_gb` stored and provisioned capacity sized at `utilization`
/// (0 < u ≤ 1).
pub fn estimate(
    workloads: &[Workload],
    storage_gb: f64,
    utilization: f64,
    prices: &Prices,
) -> Estimate {
    let wps: f64 = workloads.iter().map(Workload::write_units_per_second).sum();
    let rps: f64 = workloads.iter().map(Workload::read_units_per_second).sum();
    let hours = prices.hours_per_month;
    let seconds = hours * 3600.0;
    let storage = storage_gb * prices.storage.gb_month;
    let utilization = utilization.clamp(0.01, 1.0);
    // A provisioned table has at least 1 RCU and 1 WCU.
    let provisioned_wcu = ((wps / utilization).ceil() as u64).max(1);
    let provisioned_rcu = ((rps / utilization).ceil() as u64).max(1);
    Estimate {
        write_units_per_second: wps,
        read_units_per_second: rps,
        provisioned_wcu,
        provisioned_rcu,
        on_demand: Monthly {
            writes: wps * seconds / 1e6 * prices.on_demand.write_per_million,
            reads: rps * seconds / 1e6 * prices.on_demand.read_per_million,
            storage,
        },
        provisioned: Monthly {
            writes: provisioned_wcu as f64 * prices.provisioned.wcu_hour * hours,
            reads: provisioned_rcu as f64 * prices.provisioned.rcu_hour * hours,
            storage,
        },
        currency: prices.currency.clone(),
        utilization,
    }
}

impl fmt::Display for Estimate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.currency;
        writeln!(
            f,
            "capacity: {:.2} write units/s, {:.2} read units/s",
            self.write_units_per_second, self.read_units_per_second
        )?;
        writeln!(f, "monthly estimate ({c}):")?;
        writeln!(
            f,
            "                 writes      reads    storage      total"
        )?;
        for (name, m) in [
            ("on-demand", self.on_demand),
            ("provisioned", self.provisioned),
        ] {
            writeln!(
                f,
                "  {name:<11} {:>10.2} {:>10.2} {:>10.2} {:>10.2}",
                m.writes,
                m.reads,
                m.storage,
                m.total()
            )?;
        }
        write!(
            f,
            "provisioned at {} WCU and {} RCU ({:.0}% target utilisation)",
            self.provisioned_wcu,
            self.provisioned_rcu,
            self.utilization * 100.0
        )
    }
}

/// Parses a size such as `400`, `400B`, `2KB`, `1.5 KB` or `1MB` (KB = 1024
/// bytes, as DynamoDB counts) into bytes.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim().to_ascii_uppercase();
    let (number, factor) = if let Some(n) = t.strip_suffix("MB") {
        (n, 1024.0 * 1024.0)
    } else if let Some(n) = t.strip_suffix("KB").or_else(|| t.strip_suffix('K')) {
        (n, 1024.0)
    } else {
        (t.strip_suffix('B').unwrap_or(&t), 1.0)
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a size (try 400, 2KB or 1.5KB)"))?;
    if !(0.0..=400.0 * 1024.0 + 1.0).contains(&(value * factor)) {
        return Err(format!("`{text}`: an item is at most 400 KB"));
    }
    Ok((value * factor).ceil() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_round_up_per_started_kilobyte() {
        assert_eq!(write_units(1), 1);
        assert_eq!(write_units(1024), 1);
        assert_eq!(write_units(1025), 2);
        assert_eq!(read_units(4096), 1);
        assert_eq!(read_units(4097), 2);
        assert_eq!(read_units(0), 1);
    }

    #[test]
    fn transactions_double_and_eventual_reads_halve() {
        let w = Workload {
            item_size: 3 * 1024 + 1, // 4 write units, 1 read unit
            writes: 10.0,
            transactional_writes: 1.0,
            strong_reads: 4.0,
            eventual_reads: 10.0,
            transactional_reads: 1.0,
        };
        assert_eq!(w.write_units_per_second(), 4.0 * 10.0 + 4.0 * 2.0);
        assert_eq!(w.read_units_per_second(), 4.0 + 5.0 + 2.0);
    }

    #[test]
    fn monthly_prices_follow_the_table() {
        let prices = Prices::builtin();
        let w = Workload {
            item_size: 1000,
            writes: 100.0,
            eventual_reads: 200.0,
            ..Workload::default()
        };
        let e = estimate(&[w], 10.0, 1.0, &prices);
        // 100 WRU/s × 2,628,000 s = 262.8 M WRU × $0.625/M = $164.25.
        assert!(
            (e.on_demand.writes - 164.25).abs() < 1e-9,
            "{}",
            e.on_demand.writes
        );
        // 100 RRU/s → 262.8 M × $0.125/M = $32.85.
        assert!((e.on_demand.reads - 32.85).abs() < 1e-9);
        // 100 WCU × $0.00065 × 730 h = $47.45; 100 RCU × $0.00013 × 730 = $9.49.
        assert_eq!(e.provisioned_wcu, 100);
        assert!((e.provisioned.writes - 47.45).abs() < 1e-9);
        assert!((e.provisioned.reads - 9.49).abs() < 1e-9);
        assert!((e.on_demand.storage - 2.5).abs() < 1e-9);
        let at_70 = estimate(
            &[Workload {
                item_size: 1000,
                writes: 100.0,
                ..Workload::default()
            }],
            0.0,
            0.7,
            &prices,
        );
        assert_eq!(at_70.provisioned_wcu, 143);
        assert_eq!(at_70.provisioned_rcu, 1);
    }

    #[test]
    fn sizes_read_like_people_write_them() {
        assert_eq!(parse_size("400").unwrap(), 400);
        assert_eq!(parse_size("2KB").unwrap(), 2048);
        assert_eq!(parse_size("1.5 kb").unwrap(), 1536);
        assert_eq!(parse_size("400KB").unwrap(), 409_600);
        assert!(parse_size("1MB").is_err());
        assert!(parse_size("big").is_err());
    }
}
