//! The webhook sender's hold on where it connects (`[webhooks] receivers`,
//! `domain::webhooks::receivers`): a resolver that hands reqwest only the
//! addresses the rule allows (a name that resolves to none of them fails
//! the attempt), and the same rule on a receiver written as an address,
//! which reqwest connects to without resolving.

use crate::domain::webhooks::receivers::Receivers;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use std::net::{IpAddr, SocketAddr};

/// Resolves names as the system does, keeping the allowed addresses only.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Guarded(pub(crate) Receivers);

impl Resolve for Guarded {
    fn resolve(&self, name: Name) -> Resolving {
        let rule = self.0;
        let host = name.as_str().to_string();
        Box::pin(async move {
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let allowed: Vec<SocketAddr> = found
                .iter()
                .copied()
                .filter(|a| rule.allows(a.ip()))
                .collect();
            if allowed.is_empty() && !found.is_empty() {
                return Err(refused(&host).into());
            }
            Ok(Box::new(allowed.into_iter()) as Addrs)
        })
    }
}

/// Why an attempt to `host` was not made.
fn refused(host: &str) -> String {
    format!(
        "the receiver {host} is at an address the server's [webhooks] receivers does not \
         allow (private, link-local or reserved)"
    )
}

/// An error naming the rule when `url`'s host is an address the rule does
/// not allow (a name is judged by [`Guarded`] when the sender connects).
pub(crate) fn check_literal(rule: Receivers, url: &str) -> Result<(), String> {
    let Ok(parsed) = reqwest::Url::parse(url) else {
        return Ok(()); // reqwest refuses it on its own
    };
    let host = parsed.host_str().unwrap_or_default();
    let ip = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .parse::<IpAddr>()
        .ok();
    match ip {
        Some(ip) if !rule.allows(ip) => Err(refused(&ip.to_string())),
        _ => Ok(()),
    }
}
