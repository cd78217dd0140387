//! Plans (`[plans.<name>]`): the built-in free, hobby and pro of the API reference (docs/api.md, "Plans"),
//! and `owner`, the bootstrap account's (no storage or monthly limits); what a
//! config file changes or adds, and the size and duration values the config
//! accepts.

use crate::domain::quota::Share;
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
    /// Per month: a count, or `"unlimited"`.
    #[serde(default, deserialize_with = "opt_uploads")]
    pub uploads: Option<u64>,
    pub rate_limit: Option<u64>,
    #[serde(default, deserialize_with = "opt_duration")]
    pub rate_window: Option<Duration>,
    /// Uploads receiving bytes at once per account.
    pub concurrent_uploads: Option<u64>,
    /// Incomplete resumable uploads per account.
    pub open_uploads: Option<u64>,
    /// The part of each per-account limit the account's public keys and
    /// upload tokens may hold together (`0 < x ≤ 1`).
    pub public_share: Option<f64>,
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
    /// Uploads (multipart bodies and tus PATCHes) receiving bytes at once
    /// per account; over it, 429.
    pub concurrent_uploads: u64,
    /// Incomplete resumable uploads per account; over it, 429.
    pub open_uploads: u64,
    /// What the account's strangers (public keys and upload tokens, all
    /// together) may hold of `concurrent_uploads`, `open_uploads`, the
    /// storage (as reservations) and the monthly uploads; past it, 429.
    pub public_share: Share,
}

/// A limit that is none: storage, bandwidth or monthly uploads of the
/// `owner` plan, or a configured `"unlimited"`. The largest signed 64-bit
/// integer, so that both databases and every JSON reader take it as a
/// number (a usage record shows it as is; clients show "no limit").
pub(crate) const UNLIMITED: u64 = i64::MAX.unsigned_abs();

/// The built-in plans, by name (`owner` is the bootstrap account's).
const BUILTIN: [&str; 4] = ["free", "hobby", "owner", "pro"];

/// `concurrent_uploads` and `open_uploads` of a configured plan that does not
/// set them (the built-in plans have their own).
const CONFIGURED_CONCURRENT_UPLOADS: u64 = 64;
const CONFIGURED_OPEN_UPLOADS: u64 = 256;

impl Plan {
    /// The limits the quota rule reads from this plan.
    pub fn quota(&self) -> crate::domain::quota::Quota {
        crate::domain::quota::Quota {
            storage: self.storage,
            uploads_per_period: self.uploads,
            open_uploads: self.open_uploads,
        }
    }

    fn builtin(name: &str) -> Option<Plan> {
        let (max, storage, bandwidth, uploads, concurrent, open) = match name {
            "free" => (10_000_000, 1_000_000_000, 5_000_000_000, 1_000, 8, 16),
            "hobby" => (100_000_000, 10_000_000_000, 50_000_000_000, 50_000, 32, 64),
            "pro" => (
                500_000_000,
                100_000_000_000,
                500_000_000_000,
                500_000,
                128,
                256,
            ),
            // The operator's own account (`default`): no storage or monthly
            // limits, files up to 5 TiB (S3's largest object); requests and
            // isolation as pro.
            "owner" => (5 << 40, UNLIMITED, UNLIMITED, UNLIMITED, 128, 256),
            _ => return None,
        };
        Some(Plan {
            name: name.to_string(),
            max_file_size: max,
            storage,
            bandwidth,
            uploads,
            rate_limit: 100,
            rate_window: Duration::from_mins(1),
            concurrent_uploads: concurrent,
            open_uploads: open,
            public_share: Share::HALF,
        })
    }

    fn with(mut self, o: &PlanOverride) -> Result<Plan, String> {
        self.max_file_size = o.max_file_size.unwrap_or(self.max_file_size);
        self.storage = o.storage.unwrap_or(self.storage);
        self.bandwidth = o.bandwidth.unwrap_or(self.bandwidth);
        self.uploads = o.uploads.unwrap_or(self.uploads);
        self.rate_limit = o.rate_limit.unwrap_or(self.rate_limit);
        self.rate_window = o.rate_window.unwrap_or(self.rate_window);
        self.concurrent_uploads = o.concurrent_uploads.unwrap_or(self.concurrent_uploads);
        self.open_uploads = o.open_uploads.unwrap_or(self.open_uploads);
        if let Some(share) = o.public_share {
            self.public_share = Share::from_fraction(share)?;
        }
        Ok(self)
    }
}

/// A plan's limits as the database keeps them (`plans.spec`): JSON, so a new
/// limit is a new key. A key a spec lacks takes `free`'s value.
#[derive(Debug, serde::Serialize, Deserialize)]
struct Spec {
    max_file_size: u64,
    storage: u64,
    bandwidth: u64,
    uploads: u64,
    rate_limit: u64,
    rate_window_ms: u64,
    concurrent_uploads: u64,
    open_uploads: u64,
    /// Absent from the specs written before it: half.
    #[serde(default = "half")]
    public_share: f64,
}

fn half() -> f64 {
    Share::HALF.fraction()
}

impl Plan {
    /// The limits as stored.
    pub fn spec(&self) -> String {
        serde_json::to_string(&Spec {
            max_file_size: self.max_file_size,
            storage: self.storage,
            bandwidth: self.bandwidth,
            uploads: self.uploads,
            rate_limit: self.rate_limit,
            rate_window_ms: u64::try_from(self.rate_window.as_millis()).unwrap_or(u64::MAX),
            concurrent_uploads: self.concurrent_uploads,
            open_uploads: self.open_uploads,
            public_share: self.public_share.fraction(),
        })
        .expect("a plan serializes")
    }

    /// The plan `name` of a stored spec; an unreadable one is an error.
    pub fn from_spec(name: &str, spec: &str) -> Result<Plan, String> {
        let s: Spec = serde_json::from_str(spec)
            .map_err(|e| format!("plan {name:?} in the database: {e}"))?;
        Ok(Plan {
            name: name.to_string(),
            max_file_size: s.max_file_size,
            storage: s.storage,
            bandwidth: s.bandwidth,
            uploads: s.uploads,
            rate_limit: s.rate_limit.max(1),
            rate_window: Duration::from_millis(s.rate_window_ms.max(1)),
            concurrent_uploads: s.concurrent_uploads.max(1),
            open_uploads: s.open_uploads.max(1),
            public_share: Share::from_fraction(s.public_share)
                .map_err(|e| format!("plan {name:?} in the database: {e}"))?,
        })
    }
}

/// Every plan in force, by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plans(BTreeMap<String, Plan>);

impl Plans {
    pub fn from_overrides(
        overrides: &BTreeMap<String, PlanOverride>,
    ) -> Result<Plans, super::error::ConfigError> {
        let mut plans = BTreeMap::new();
        for name in BUILTIN {
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
            let base = Plan::builtin(name).unwrap_or_else(|| Plan {
                name: name.clone(),
                concurrent_uploads: CONFIGURED_CONCURRENT_UPLOADS,
                open_uploads: CONFIGURED_OPEN_UPLOADS,
                ..Plan::builtin("free").expect("builtin")
            });
            let plan = base.with(o).map_err(|e| format!("plan {name}: {e}"))?;
            if plan.rate_limit == 0 || plan.rate_window.is_zero() {
                return Err(
                    format!("plan {name}: rate_limit and rate_window must be positive").into(),
                );
            }
            if plan.concurrent_uploads == 0 || plan.open_uploads == 0 {
                return Err(format!(
                    "plan {name}: concurrent_uploads and open_uploads must be at least 1"
                )
                .into());
            }
            plans.insert(name.clone(), plan);
        }
        Ok(Plans(plans))
    }

    pub fn get(&self, name: &str) -> Option<&Plan> {
        self.0.get(name)
    }

    /// The plans of `list`, by name.
    pub fn from_list(list: impl IntoIterator<Item = Plan>) -> Plans {
        Plans(list.into_iter().map(|p| (p.name.clone(), p)).collect())
    }

    /// Every plan, in name order.
    pub fn iter(&self) -> impl Iterator<Item = &Plan> {
        self.0.values()
    }

    /// The built-in plans' names (free, hobby, owner, pro).
    pub fn builtin_names() -> [&'static str; 4] {
        BUILTIN
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
/// `KiB`/`MiB`/`GiB`/`TiB` powers of 1024, case-insensitive), or
/// `unlimited` ([`UNLIMITED`]).
pub(crate) fn parse_bytes(s: &str) -> Result<u64, String> {
    if s.trim().eq_ignore_ascii_case("unlimited") {
        return Ok(UNLIMITED);
    }
    s.trim()
        .parse::<bytesize::ByteSize>()
        .map(|b| b.as_u64())
        .map_err(|e| format!("bad size {s:?}: {e}"))
}

/// Monthly uploads: an integer, or `"unlimited"`.
fn opt_uploads<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    opt_count(d, |s| {
        if s.trim().eq_ignore_ascii_case("unlimited") {
            Ok(UNLIMITED)
        } else {
            Err(format!("uploads {s:?}: a whole number, or \"unlimited\""))
        }
    })
}

pub(super) fn opt_bytes<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    opt_count(d, parse_bytes)
}

/// An optional count given as an integer, or as a string `parse` reads.
pub(super) fn opt_count<'de, D: Deserializer<'de>>(
    d: D,
    parse: fn(&str) -> Result<u64, String>,
) -> Result<Option<u64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        N(u64),
        S(String),
    }
    match Option::<Raw>::deserialize(d)? {
        None => Ok(None),
        Some(Raw::N(n)) => Ok(Some(n)),
        Some(Raw::S(s)) => parse(&s).map(Some).map_err(serde::de::Error::custom),
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
        let caps = |n: &str| {
            let plan = p.get(n).unwrap();
            (plan.concurrent_uploads, plan.open_uploads)
        };
        assert_eq!(caps("free"), (8, 16));
        assert_eq!(caps("hobby"), (32, 64));
        assert_eq!(caps("pro"), (128, 256));
    }

    #[test]
    fn owner_has_no_storage_or_monthly_limits_and_pros_rates() {
        let p = Plans::default();
        let (owner, pro) = (p.get("owner").unwrap(), p.get("pro").unwrap());
        assert_eq!(owner.max_file_size, 5 * 1024 * 1024 * 1024 * 1024);
        assert_eq!(
            (owner.storage, owner.bandwidth, owner.uploads),
            (UNLIMITED, UNLIMITED, UNLIMITED)
        );
        assert_eq!(
            (
                owner.rate_limit,
                owner.rate_window,
                owner.concurrent_uploads,
                owner.open_uploads,
                owner.public_share
            ),
            (
                pro.rate_limit,
                pro.rate_window,
                pro.concurrent_uploads,
                pro.open_uploads,
                pro.public_share
            )
        );
        assert_eq!(Plan::from_spec("owner", &owner.spec()).unwrap(), *owner);
        assert_eq!(Plans::builtin_names(), ["free", "hobby", "owner", "pro"]);
        let o: BTreeMap<String, PlanOverride> =
            toml::from_str("[team]\nstorage = \"unlimited\"\nuploads = \"Unlimited\"\n").unwrap();
        let team = Plans::from_overrides(&o)
            .unwrap()
            .get("team")
            .unwrap()
            .clone();
        assert_eq!((team.storage, team.uploads), (UNLIMITED, UNLIMITED));
        assert!(
            toml::from_str::<BTreeMap<String, PlanOverride>>("[t]\nuploads = \"lots\"\n").is_err()
        );
    }

    #[test]
    fn a_configured_plan_gets_the_configured_caps_a_builtin_keeps_its_own() {
        let overrides: BTreeMap<String, PlanOverride> = toml::from_str(
            "[team]\nstorage = 5\n[free]\nstorage = 7\n[wide]\nconcurrent_uploads = 3\nopen_uploads = 4\n",
        )
        .unwrap();
        let p = Plans::from_overrides(&overrides).unwrap();
        let team = p.get("team").unwrap();
        assert_eq!((team.concurrent_uploads, team.open_uploads), (64, 256));
        assert_eq!(team.max_file_size, 10_000_000, "other keys are free's");
        let free = p.get("free").unwrap();
        assert_eq!(
            (free.concurrent_uploads, free.open_uploads, free.storage),
            (8, 16, 7)
        );
        let wide = p.get("wide").unwrap();
        assert_eq!((wide.concurrent_uploads, wide.open_uploads), (3, 4));
        let zero: BTreeMap<String, PlanOverride> =
            toml::from_str("[z]\nconcurrent_uploads = 0\n").unwrap();
        assert!(Plans::from_overrides(&zero).is_err());
    }

    #[test]
    fn public_share_is_half_unless_set_and_within_0_and_1() {
        assert_eq!(
            Plans::default().get("free").unwrap().public_share,
            Share::HALF
        );
        let set: BTreeMap<String, PlanOverride> =
            toml::from_str("[free]\npublic_share = 0.25\n").unwrap();
        let free = Plans::from_overrides(&set)
            .unwrap()
            .get("free")
            .unwrap()
            .clone();
        assert_eq!(free.public_share.of(16), 4);
        let again = Plan::from_spec("free", &free.spec()).unwrap();
        assert_eq!(again, free, "the share is stored with the plan");
        let old = r#"{"max_file_size":1,"storage":1,"bandwidth":1,"uploads":1,"rate_limit":1,
            "rate_window_ms":1,"concurrent_uploads":1,"open_uploads":1}"#;
        assert_eq!(Plan::from_spec("x", old).unwrap().public_share, Share::HALF);
        for bad in ["0", "0.0", "-0.5", "1.5"] {
            let o: BTreeMap<String, PlanOverride> =
                toml::from_str(&format!("[free]\npublic_share = {bad}\n")).unwrap();
            let err = Plans::from_overrides(&o).unwrap_err().to_string();
            assert!(err.contains("public_share"), "{bad}: {err}");
        }
    }
}
