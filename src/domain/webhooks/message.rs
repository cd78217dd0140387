//! What is sent: the events, a subscription's receiver URL, its signing
//! secret, message ids, and the Standard Webhooks signature.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

pub const FILE_CREATED: &str = "file.created";
pub const FILE_DELETED: &str = "file.deleted";
pub const FILE_EXPIRED: &str = "file.expired";
/// A rename or move (`PATCH /v1/files/{id}`): `data` is the file as it is now.
pub const FILE_UPDATED: &str = "file.updated";

/// Every event, in the order `events` lists them by default.
pub const EVENTS: [&str; 4] = [FILE_CREATED, FILE_DELETED, FILE_EXPIRED, FILE_UPDATED];
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
        .map(ToString::to_string)
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
        assert_eq!(events(&[FILE_UPDATED.to_string()]).unwrap(), [FILE_UPDATED]);
        assert!(events(&["file.moved".to_string()]).is_err());
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
}
