//! Who asked, and a name for the asking: every request of the /v1 + CDN
//! door gets a request id, returned as `X-Request-Id` on its response and
//! written with the client's address into its access line (JSON fields
//! `client` and `request_id`), so that a user's report ("request
//! 3f2a… failed") leads to its line.
//!
//! An `X-Request-Id` the request brings is kept when it is sane (1–128
//! bytes of letters, digits and `-_.:@/+=`): a proxy or load balancer in
//! front that names its requests, or a client that names its own, then
//! finds the same id in this log as in theirs. It is a label only: nothing
//! trusts it, and being so narrow it cannot break a log line or a header.
//! Anything else (too long, spaces, quotes, control characters, non-ASCII)
//! is replaced by a fresh id: 32 hex digits, 128 random bits, unique across
//! nodes. The client is the connection's peer: behind a proxy that is the
//! proxy (no `X-Forwarded-For` is believed: any client could write one).

use axum::http::{HeaderMap, HeaderName, HeaderValue};
use std::net::IpAddr;

/// The header, on requests and responses.
pub(crate) static X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The longest request id kept.
const MAX_LEN: usize = 128;

/// A request's client and id, in its extensions from the connection loop on.
#[derive(Debug, Clone)]
pub(crate) struct Tag {
    pub(crate) client: IpAddr,
    pub(crate) id: HeaderValue,
}

impl Tag {
    /// The tag of a request from `client` with `headers`.
    pub(crate) fn of(client: IpAddr, headers: &HeaderMap) -> Tag {
        let kept = headers
            .get(&X_REQUEST_ID)
            .filter(|v| sane(v.as_bytes()))
            .cloned();
        Tag {
            client,
            id: kept.unwrap_or_else(fresh),
        }
    }

    /// The id as text (always ASCII).
    pub(crate) fn id(&self) -> &str {
        self.id.to_str().unwrap_or_default()
    }
}

/// Whether an id a request brought is kept.
fn sane(id: &[u8]) -> bool {
    (1..=MAX_LEN).contains(&id.len())
        && id
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.:@/+=".contains(b))
}

/// A new id: 128 random bits as 32 hex digits.
fn fresh() -> HeaderValue {
    let id = format!("{:032x}", rand::random::<u128>());
    HeaderValue::from_str(&id).expect("hex digits are a header value")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tag(sent: Option<&[u8]>) -> Tag {
        let mut h = HeaderMap::new();
        if let Some(v) = sent {
            h.insert(&X_REQUEST_ID, HeaderValue::from_bytes(v).unwrap());
        }
        Tag::of(IpAddr::from([127, 0, 0, 1]), &h)
    }

    fn is_fresh(t: &Tag) -> bool {
        t.id().len() == 32 && t.id().bytes().all(|b| b.is_ascii_hexdigit())
    }

    #[test]
    fn a_sane_id_is_kept_anything_else_replaced() {
        for kept in [&b"abc"[..], b"req-1.2_3:4@a/b+c=", &[b'a'; 128]] {
            assert_eq!(tag(Some(kept)).id().as_bytes(), kept);
        }
        for replaced in [
            &b""[..],
            &[b'a'; 129],
            b"two words",
            b"quote\"d",
            b"tab\there",
            b"\xc3\xa4",
            b"semi;colon",
        ] {
            let t = tag(Some(replaced));
            assert!(is_fresh(&t), "{replaced:?} gave {:?}", t.id());
        }
        let (a, b) = (tag(None), tag(None));
        assert!(is_fresh(&a) && is_fresh(&b));
        assert_ne!(a.id(), b.id());
    }
}
