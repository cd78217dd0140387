//! Plans (`[plans.<name>]`): the built-in free, hobby and pro of the spec,
//! what a config file changes or adds, and the size and duration values the
//! config accepts.

use serde::{Deserialize, Deserializer};
use std::collections::BTreeMap;
use std::time::Duration;

/// A plan as written in `[plans.<name>]`; missing keys take the built-in
/// plan of the same name, or `free`'s values for a new name.
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct PlanOverride {
    #[serde(default, deserialize_with = "opt_bytes")]
    pub max_file_size: Option<u64>,
    #[serde(default, deserialize_with = "opt_bytes")]
    pub storage: Option<u64>,
    #[serde(default, deserialize_with = "opt_bytes")]
    pub bandwidth: Option<u64>,
    pub uploads: Option<u64>,
    pub rate_limit: Option<u64>,
    #[serde(default, deserialize_with = "opt_duration")]
    pub rate_window: Option<Duration>,
}

/// A plan in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub name: String,
    pub max_file_size: u64,
    pub storage: u64,
    pub bandwidth: u64,
    pub uploads: u64,
    pub rate_limit: u64,
    pub rate_window: Duration,
}

impl Plan {
    fn builtin(name: &str) -> Option<Plan> {
        let (max, storage, bandwidth, uploads) = match name {
            "free" => (10_000_000, 1_000_000_000, 5_000_000_000, 1_000),
            "hobby" => (100_000_000, 10_000_000_000, 50_000_000_000, 50_000),
            "pro" => (500_000_000, 100_000_000_000, 500_000_000_000, 500_000),
            _ => return None,
        };
        Some(Plan {
            name: name.to_string(),
            max_file_size: max,
            storage,
            bandwidth,
            uploads,
            rate_limit: 100,
            rate_window: Duration::from_secs(60),
        })
    }

    fn with(mut self, o: &PlanOverride) -> Plan {
        self.max_file_size = o.max_file_size.unwrap_or(self.max_file_size);
        self.storage = o.storage.unwrap_or(self.storage);
        self.bandwidth = o.bandwidth.unwrap_or(self.bandwidth);
        self.uploads = o.uploads.unwrap_or(self.uploads);
        self.rate_limit = o.rate_limit.unwrap_or(self.rate_limit);
        self.rate_window = o.rate_window.unwrap_or(self.rate_window);
        self
    }
}

/// Every plan in force, by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plans(BTreeMap<String, Plan>);

impl Plans {
    pub fn from_overrides(
        overrides: &BTreeMap<String, PlanOverride>,
    ) -> Result<Plans, super::ConfigError> {
        let mut plans = BTreeMap::new();
        for name in ["free", "hobby", "pro"] {
            plans.insert(name.to_string(), Plan::builtin(name).expect("builtin"));
        }
        for (name, o) in overrides {
            if name.is_empty()
                || !name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            {
                return Err(format!("plan name {name:?}: use letters, digits, - and _").into());
            }
            let mut base = Plan::builtin(name).unwrap_or_else(|| Plan::builtin("free").unwrap());
            base.name = name.clone();
            let plan = base.with(o);
            if plan.rate_limit == 0 || plan.rate_window.is_zero() {
                return Err(
                    format!("plan {name}: rate_limit and rate_window must be positive").into(),
                );
            }
            plans.insert(name.clone(), plan);
        }
        Ok(Plans(plans))
    }

    pub fn get(&self, name: &str) -> Option<&Plan> {
        self.0.get(name)
    }

    pub fn names(&self) -> Vec<String> {
        self.0.keys().cloned().collect()
    }
}

impl Default for Plans {
    fn default() -> Self {
        Plans::from_overrides(&BTreeMap::new()).expect("builtin plans are valid")
    }
}

/// Parses a size: an integer of bytes, or a string like `10MB`, `1GiB`,
/// `500kB`, `1.5GB` (the `bytesize` crate: SI units are powers of 1000,
/// `KiB`/`MiB`/`GiB`/`TiB` powers of 1024, case-insensitive).
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    s.trim()
        .parse::<bytesize::ByteSize>()
        .map(|b| b.as_u64())
        .map_err(|e| format!("bad size {s:?}: {e}"))
}

pub(super) fn opt_bytes<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        N(u64),
        S(String),
    }
    match Option::<Raw>::deserialize(d)? {
        None => Ok(None),
        Some(Raw::N(n)) => Ok(Some(n)),
        Some(Raw::S(s)) => parse_bytes(&s).map(Some).map_err(serde::de::Error::custom),
    }
}

pub(super) fn opt_duration<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    match Option::<String>::deserialize(d)? {
        None => Ok(None),
        Some(s) => humantime::parse_duration(&s)
            .map(Some)
            .map_err(|e| serde::de::Error::custom(format!("duration {s:?}: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_bytes("10MB").unwrap(), 10_000_000);
        assert_eq!(parse_bytes("1GiB").unwrap(), 1 << 30);
        assert_eq!(parse_bytes("500kB").unwrap(), 500_000);
        assert_eq!(parse_bytes("64 KiB").unwrap(), 65_536);
        assert_eq!(parse_bytes("1.5GB").unwrap(), 1_500_000_000);
        assert_eq!(parse_bytes("1000").unwrap(), 1000);
        assert!(parse_bytes("ten").is_err());
        assert!(parse_bytes("5 parsecs").is_err());
    }

    #[test]
    fn builtin_plans_match_the_spec() {
        let p = Plans::default();
        assert_eq!(p.get("free").unwrap().max_file_size, 10_000_000);
        assert_eq!(p.get("hobby").unwrap().max_file_size, 100_000_000);
        assert_eq!(p.get("pro").unwrap().max_file_size, 500_000_000);
        assert_eq!(p.get("pro").unwrap().uploads, 500_000);
    }
}
