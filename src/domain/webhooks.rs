//! Webhooks (CONTRACT §12): the events, the subscription's rules, the
//! Standard Webhooks signature and the retry schedule. No I/O here: the
//! outbox lives in the metadata store, the sender in `service::webhooks`.

use super::backoff::Backoff;
use crate::clock::millis;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;
use std::time::Duration;

pub const FILE_CREATED: &str = "file.created";
pub const FILE_DELETED: &str = "file.deleted";
pub const FILE_EXPIRED: &str = "file.expired";

/// Every event, in the order `events` lists them by default.
pub const EVENTS: [&str; 3] = [FILE_CREATED, FILE_DELETED, FILE_EXPIRED];

/// A delivery that has not succeeded this long after its event is dropped.
pub const GIVE_UP_AFTER: Duration = Duration::from_secs(24 * 3600);

/// Waits between attempts: 1 s, 2 s, 4 s… up to an hour.
pub const RETRY: Backoff = Backoff::new(Duration::from_secs(1), Duration::from_secs(3600));

/// How long one attempt may take (connect, send, the answer's status).
pub const DELIVERY_TIMEOUT: Duration = Duration::from_secs(10);

/// A claimed event is not handed to another sender before this (longer than
/// an attempt): a node that dies mid-attempt leaves it to be sent again.
pub const CLAIM_LEASE: Duration = Duration::from_secs(60);

/// The events a subscription asks for: every event when none is named;
/// each named once, known, in the canonical order.
pub fn events(asked: &[String]) -> Result<Vec<String>, String> {
    for e in asked {
        if !EVENTS.contains(&e.as_str()) {
            return Err(format!(
                "unknown event {e:?} (events: {})",
                EVENTS.join(", ")
            ));
        }
    }
    Ok(EVENTS
        .iter()
        .filter(|e| asked.is_empty() || asked.iter().any(|a| a == *e))
        .map(|e| e.to_string())
        .collect())
}

/// A receiver's URL: absolute http(s), with a host, no credentials, no
/// fragment, at most 2048 bytes.
pub fn url(raw: &str) -> Result<String, String> {
    let bad = |why: &str| Err(format!("webhook url {raw:?}: {why}"));
    if raw.len() > 2048 {
        return bad("longer than 2048 bytes");
    }
    let Ok(u) = reqwest::Url::parse(raw) else {
        return bad("not an absolute URL");
    };
    if !matches!(u.scheme(), "http" | "https") {
        return bad("not http or https");
    }
    if u.host_str().is_none_or(str::is_empty) {
        return bad("no host");
    }
    if !u.username().is_empty() || u.password().is_some() {
        return bad("credentials do not belong in it");
    }
    if u.fragment().is_some() {
        return bad("a fragment is never sent");
    }
    Ok(u.to_string())
}

/// A new signing secret: `whsec_` and the base64 of 32 random bytes.
pub fn new_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!("whsec_{}", STANDARD.encode(bytes))
}

/// A message id (`webhook-id`): `msg_` and 128 random bits.
pub fn message_id() -> String {
    let mut bytes = [0u8; 16];
    rand::rng().fill_bytes(&mut bytes);
    format!("msg_{}", hex::encode(bytes))
}

/// `webhook-signature` of `body` sent as message `id` at unix second
/// `timestamp`: `v1,` and the base64 of HMAC-SHA256 keyed with the secret's
/// bytes (the base64 after `whsec_`) over `<id>.<timestamp>.<body>`.
pub fn signature(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> Result<String, String> {
    let key = STANDARD
        .decode(secret.strip_prefix("whsec_").unwrap_or(secret))
        .map_err(|e| format!("webhook secret is not base64: {e}"))?;
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).map_err(|e| e.to_string())?;
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(body);
    Ok(format!(
        "v1,{}",
        STANDARD.encode(mac.finalize().into_bytes())
    ))
}

/// When to try again after failed attempt number `attempts` (1 for the
/// first) of an event made at `event_ms`, or None when it is given up.
pub fn retry_at(event_ms: i64, attempts: u32, now_ms: i64) -> Option<i64> {
    let wait = RETRY.step(attempts.saturating_sub(1));
    let at = now_ms.saturating_add(millis(wait));
    let give_up = event_ms.saturating_add(millis(GIVE_UP_AFTER));
    (at <= give_up).then_some(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signs_as_the_standard_webhooks_example() {
        // The example of the Standard Webhooks specification and libraries.
        let sig = signature(
            "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            "msg_p5jXN8AQM9LWM0D4loKWxJek",
            1_614_265_330,
            br#"{"test": 2432232314}"#,
        )
        .unwrap();
        assert_eq!(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
        assert!(signature("whsec_!!", "m", 1, b"").is_err());
    }

    #[test]
    fn events_default_to_all_and_refuse_unknown_ones() {
        assert_eq!(events(&[]).unwrap(), EVENTS);
        let asked = vec![
            FILE_EXPIRED.to_string(),
            FILE_CREATED.to_string(),
            FILE_CREATED.to_string(),
        ];
        assert_eq!(events(&asked).unwrap(), [FILE_CREATED, FILE_EXPIRED]);
        assert!(events(&["file.updated".to_string()]).is_err());
    }

    #[test]
    fn urls() {
        assert_eq!(
            url("https://h.example/hook?x=1").unwrap(),
            "https://h.example/hook?x=1"
        );
        assert_eq!(url("http://127.0.0.1:9").unwrap(), "http://127.0.0.1:9/");
        for bad in [
            "ftp://h/",
            "/hook",
            "https://u:p@h/",
            "https://h/#f",
            "nonsense",
            "",
        ] {
            assert!(url(bad).is_err(), "{bad}");
        }
        assert!(url(&format!("https://h/{}", "a".repeat(2048))).is_err());
    }

    #[test]
    fn secrets_and_ids_have_their_shapes() {
        let s = new_secret();
        assert_eq!(STANDARD.decode(&s["whsec_".len()..]).unwrap().len(), 32);
        let m = message_id();
        assert!(m.starts_with("msg_") && m.len() == 36);
    }

    #[test]
    fn retries_double_up_to_an_hour_for_a_day() {
        let t0 = 1_700_000_000_000;
        assert_eq!(retry_at(t0, 1, t0), Some(t0 + 1_000));
        assert_eq!(retry_at(t0, 2, t0 + 1_000), Some(t0 + 3_000));
        assert_eq!(retry_at(t0, 30, t0), Some(t0 + 3_600_000));
        let day = 24 * 3_600_000;
        assert_eq!(retry_at(t0, 30, t0 + day - 3_600_000), Some(t0 + day));
        assert_eq!(retry_at(t0, 30, t0 + day - 3_599_999), None);
    }
}
