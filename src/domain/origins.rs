//! Allowed browser origins of public keys: `scheme://host[:port]`, or
//! `scheme://*.domain[:port]` for any subdomain of `domain` (not the domain itself).

/// Checks and normalises (lower case, no trailing slash) an origin pattern.
pub(crate) fn parse_pattern(s: &str) -> Result<String, String> {
    let lower = s.trim().trim_end_matches('/').to_ascii_lowercase();
    let (scheme, rest) = lower
        .split_once("://")
        .ok_or_else(|| format!("origin {s:?}: expected scheme://host[:port]"))?;
    if scheme != "http" && scheme != "https" {
        return Err(format!("origin {s:?}: scheme must be http or https"));
    }
    let host = match rest.rsplit_once(':') {
        Some((h, p)) => {
            p.parse::<u16>()
                .map_err(|_| format!("origin {s:?}: bad port"))?;
            h
        }
        None => rest,
    };
    let bare = host.strip_prefix("*.").unwrap_or(host);
    let host_ok = !bare.is_empty()
        && bare.split('.').all(|label| {
            !label.is_empty()
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        });
    if !host_ok {
        return Err(format!("origin {s:?}: bad host (paths, queries and wildcards other than a leading *. are not allowed)"));
    }
    Ok(lower)
}

/// Whether the request's `Origin` matches one normalised pattern.
pub(crate) fn matches(pattern: &str, origin: &str) -> bool {
    let origin = origin.trim_end_matches('/').to_ascii_lowercase();
    if let Some((scheme, rest)) = pattern.split_once("://*.") {
        let Some((o_scheme, o_rest)) = origin.split_once("://") else {
            return false;
        };
        // "*.example.com[:port]": the origin ends with ".example.com[:port]"
        // and has at least one label before it.
        return o_scheme == scheme
            && o_rest.len() > rest.len() + 1
            && o_rest.ends_with(rest)
            && o_rest.as_bytes()[o_rest.len() - rest.len() - 1] == b'.';
    }
    pattern == origin
}

pub(crate) fn any_matches(patterns: &[String], origin: &str) -> bool {
    patterns.iter().any(|p| matches(p, origin))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_and_wildcard() {
        let p = parse_pattern("https://App.example.com/").unwrap();
        assert!(matches(&p, "https://app.example.com"));
        assert!(!matches(&p, "http://app.example.com"));
        assert!(!matches(&p, "https://app.example.com:444"));
        let w = parse_pattern("https://*.example.com").unwrap();
        assert!(matches(&w, "https://a.example.com"));
        assert!(matches(&w, "https://a.b.example.com"));
        assert!(!matches(&w, "https://example.com"));
        assert!(!matches(&w, "https://evil-example.com"));
        assert!(!matches(&w, "https://a.example.com.evil.io"));
        assert!(!matches(&w, "https://a.example.com:8443"));
        let wp = parse_pattern("http://*.local.test:8080").unwrap();
        assert!(matches(&wp, "http://x.local.test:8080"));
    }

    #[test]
    fn bad_patterns() {
        for bad in [
            "example.com",
            "ftp://x.com",
            "https://x.com/path",
            "https://*",
            "https://a.*.com",
            "https://x.com:99999",
        ] {
            assert!(parse_pattern(bad).is_err(), "{bad}");
        }
    }
}
