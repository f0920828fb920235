//! The price table: editable data (TOML) shipped with the crate, with
//! us-east-1 list prices built in and any other table loadable from a file.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// The built-in table (`prices/us-east-1.toml`).
pub const US_EAST_1: &str = include_str!("../../prices/us-east-1.toml");

/// Prices in one currency for one region and table class.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prices {
    pub region: String,
    pub currency: String,
    #[serde(default)]
    pub as_of: String,
    pub hours_per_month: f64,
    pub on_demand: OnDemand,
    pub provisioned: Provisioned,
    pub storage: Storage,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OnDemand {
    /// Per million write request units.
    pub write_per_million: f64,
    /// Per million read request units.
    pub read_per_million: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Provisioned {
    /// Per WCU-hour.
    pub wcu_hour: f64,
    /// Per RCU-hour.
    pub rcu_hour: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Storage {
    pub gb_month: f64,
}

impl Prices {
    /// The built-in us-east-1 table.
    pub fn builtin() -> Prices {
        Prices::parse(US_EAST_1).expect("the shipped price table parses")
    }

    /// Parses a price table in TOML.
    pub fn parse(text: &str) -> Result<Prices, String> {
        toml::from_str(text).map_err(|e| format!("bad price table: {e}"))
    }

    /// Reads a price table file.
    pub fn load(path: &Path) -> Result<Prices, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Prices::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_table_parses() {
        let p = Prices::builtin();
        assert_eq!(p.region, "us-east-1");
        assert_eq!(p.hours_per_month, 730.0);
        assert!(p.on_demand.write_per_million > p.on_demand.read_per_million);
    }

    #[test]
    fn a_broken_table_says_what_is_wrong() {
        let err = Prices::parse("region = 1").unwrap_err();
        assert!(err.starts_with("bad price table"), "{err}");
    }
}
