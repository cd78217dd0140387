//! Which addresses a webhook's deliveries may go to (`[webhooks] receivers`).
//!
//! Any account with a secret key subscribes receivers (`POST /v1/webhooks`,
//! the console), and the sender runs inside the operator's network: without
//! a rule an account could make the server knock on the cloud's metadata
//! service (169.254.169.254) or any private address, and read in its
//! deliveries' `http_status` what answered. The rule holds on every address
//! a receiver's name resolves to when the sender connects (not only when the
//! webhook was made: a name may be pointed elsewhere later).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

/// The addresses a delivery may go to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Receivers {
    /// Public (globally routed) addresses only.
    Public,
    /// Public ones and this machine's loopback (a receiver beside the
    /// server: the default; a single-machine install's own app).
    #[default]
    Loopback,
    /// Any address: private networks and link-local too (the operator's
    /// own network, when every account is trusted).
    Any,
}

impl FromStr for Receivers {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "public" => Ok(Receivers::Public),
            "loopback" => Ok(Receivers::Loopback),
            "any" => Ok(Receivers::Any),
            other => Err(format!(
                "{other:?} is not one of \"public\", \"loopback\", \"any\""
            )),
        }
    }
}

impl Receivers {
    /// Whether a delivery may connect to `ip`.
    pub fn allows(self, ip: IpAddr) -> bool {
        let ip = match ip {
            // An IPv4 address written as IPv6 is judged as itself.
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            v4 @ IpAddr::V4(_) => v4,
        };
        match self {
            Receivers::Any => true,
            Receivers::Loopback => ip.is_loopback() || public(ip),
            Receivers::Public => public(ip),
        }
    }
}

/// Globally routed: not loopback, private, shared (CGNAT), link-local,
/// unique-local, unspecified, multicast, broadcast, documentation or
/// otherwise reserved.
fn public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => public_v4(v4),
        IpAddr::V6(v6) => public_v6(v6),
    }
}

fn public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_multicast()
        || ip.is_broadcast()
        || ip.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // shared address space (CGNAT)
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 198 && (18..20).contains(&b)) // benchmarking
        || a >= 240) // reserved
}

fn public_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || (first & 0xfe00) == 0xfc00 // unique local
        || (first & 0xffc0) == 0xfe80 // link-local
        || (first & 0xffc0) == 0xfec0 // site-local (deprecated)
        || first == 0x2001 && ip.segments()[1] == 0x0db8 // documentation
        || first == 0x0064 && ip.segments()[1] == 0xff9b) // NAT64 (reaches IPv4 inside)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn public_addresses_pass_every_rule() {
        for a in [
            "93.184.215.14",
            "8.8.8.8",
            "2606:4700::1111",
            "::ffff:1.1.1.1",
        ] {
            for r in [Receivers::Public, Receivers::Loopback, Receivers::Any] {
                assert!(r.allows(ip(a)), "{a} under {r:?}");
            }
        }
    }

    #[test]
    fn loopback_only_under_loopback_and_any() {
        for a in ["127.0.0.1", "127.9.9.9", "::1", "::ffff:127.0.0.1"] {
            assert!(!Receivers::Public.allows(ip(a)), "{a}");
            assert!(Receivers::Loopback.allows(ip(a)), "{a}");
            assert!(Receivers::Any.allows(ip(a)), "{a}");
        }
    }

    #[test]
    fn private_and_link_local_only_under_any() {
        for a in [
            "169.254.169.254",
            "10.0.0.5",
            "172.16.3.4",
            "192.168.1.1",
            "100.64.0.1",
            "0.0.0.0",
            "224.0.0.1",
            "255.255.255.255",
            "fd00:ec2::254",
            "fe80::1",
            "::",
            "::ffff:10.1.2.3",
            "::ffff:169.254.169.254",
            "64:ff9b::a9fe:a9fe",
        ] {
            assert!(!Receivers::Public.allows(ip(a)), "{a}");
            assert!(!Receivers::Loopback.allows(ip(a)), "{a}");
            assert!(Receivers::Any.allows(ip(a)), "{a}");
        }
    }

    #[test]
    fn parses_its_three_names_only() {
        assert_eq!("public".parse(), Ok(Receivers::Public));
        assert_eq!("loopback".parse(), Ok(Receivers::Loopback));
        assert_eq!("any".parse(), Ok(Receivers::Any));
        assert!("private".parse::<Receivers>().is_err());
    }
}
