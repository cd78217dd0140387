//! A file's metadata (docs/api.md, the upload form's `metadata`): a JSON object of
//! string values the client attaches to an upload, stored and returned with
//! the file.

use std::collections::BTreeMap;

/// A file's metadata, sorted by key (so its JSON form is stable).
pub type Metadata = BTreeMap<String, String>;

/// At most this many keys.
pub const MAX_KEYS: usize = 16;
/// A key is 1 to this many bytes of `[a-z0-9_-]`.
pub const MAX_KEY_LEN: usize = 64;
/// At most this many bytes "in all": the length of the compact JSON
/// serialization ([`to_json`], no whitespace, keys sorted) of the whole
/// object, braces, quotes and escapes included.
pub const MAX_BYTES: usize = 4096;

/// Parses and checks metadata as a client sends it (the upload form's
/// `metadata` field, tus's decoded `metadata` value): a JSON object whose
/// values are all strings, keys `[a-z0-9_-]{1,64}`, at most [`MAX_KEYS`]
/// keys, at most [`MAX_BYTES`] in all (see there). The error is the 400's
/// message.
pub fn parse(raw: &str) -> Result<Metadata, String> {
    let value: serde_json::Value =
        serde_json::from_str(raw).map_err(|e| format!("metadata is not valid JSON: {e}"))?;
    let serde_json::Value::Object(object) = value else {
        return Err("metadata must be a JSON object of strings".into());
    };
    let mut out = Metadata::new();
    for (key, value) in object {
        let serde_json::Value::String(value) = value else {
            return Err(format!("metadata value of {key:?} must be a string"));
        };
        out.insert(key, value);
    }
    check(&out)?;
    Ok(out)
}

/// Checks metadata already in map form against the rules of [`parse`].
pub fn check(m: &Metadata) -> Result<(), String> {
    if m.len() > MAX_KEYS {
        return Err(format!("metadata has {} keys: at most {MAX_KEYS}", m.len()));
    }
    for key in m.keys() {
        if !valid_key(key) {
            return Err(format!(
                "metadata key {key:?}: use 1-{MAX_KEY_LEN} characters of a-z 0-9 _ -"
            ));
        }
    }
    // (A NUL is no text: PostgreSQL refuses it in its JSON operators.)
    if let Some(key) = m.iter().find_map(|(k, v)| v.contains('\0').then_some(k)) {
        return Err(format!(
            "metadata value of {key:?} contains a NUL character"
        ));
    }
    let len = to_json(m).len();
    if len > MAX_BYTES {
        return Err(format!(
            "metadata is {len} bytes as compact JSON: at most {MAX_BYTES}"
        ));
    }
    Ok(())
}

/// What [`valid_key`] accepts, as the OpenAPI document says it.
pub const KEY_PATTERN: &str = "^[a-z0-9_-]{1,64}$";

/// A key: 1–64 bytes of `[a-z0-9_-]`.
pub fn valid_key(key: &str) -> bool {
    (1..=MAX_KEY_LEN).contains(&key.len())
        && key
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
}

/// The compact JSON form (how it is stored, and what [`MAX_BYTES`] measures).
pub fn to_json(m: &Metadata) -> String {
    // A map of strings always serializes.
    serde_json::to_string(m).unwrap_or_else(|_| "{}".into())
}

/// Reads the stored form; a stored value that is not an object of strings
/// (it never should be) reads as no metadata rather than failing the row.
pub(crate) fn from_stored(raw: &str) -> Metadata {
    serde_json::from_str(raw).unwrap_or_default()
}

/// The most `metadata.KEY=VALUE` filters one listing takes.
pub const MAX_FILTERS: usize = MAX_KEYS;

/// The `metadata.KEY=VALUE` pairs of a query string (URL-decoded), in
/// order: each file listed has every one. A bad key is refused.
pub fn filters(query: Option<&str>) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for (name, value) in form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
        let Some(key) = name.strip_prefix("metadata.") else {
            continue;
        };
        if !valid_key(key) {
            return Err(format!(
                "metadata filter {name:?}: keys are 1-{MAX_KEY_LEN} characters of a-z 0-9 _ -"
            ));
        }
        out.push((key.to_string(), value.into_owned()));
    }
    if out.len() > MAX_FILTERS {
        return Err(format!("at most {MAX_FILTERS} metadata filters"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_an_object_of_strings() {
        let m = parse(r#"{"b":"2","a-1_x":"one"}"#).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(to_json(&m), r#"{"a-1_x":"one","b":"2"}"#);
        assert!(parse("{}").unwrap().is_empty());
    }

    #[test]
    fn refuses_what_is_not_an_object_of_strings() {
        for raw in [
            "[]",
            "\"x\"",
            "1",
            "null",
            "{",
            "",
            r#"{"a":1}"#,
            r#"{"a":null}"#,
            r#"{"a":{"b":"c"}}"#,
            r#"{"a":["b"]}"#,
        ] {
            assert!(parse(raw).is_err(), "{raw}");
        }
    }

    #[test]
    fn list_filters_from_a_query_string() {
        assert_eq!(filters(None).unwrap(), vec![]);
        assert_eq!(
            filters(Some("folder=a&metadata.user=u%201&limit=5&metadata.k-2=")).unwrap(),
            vec![
                ("user".to_string(), "u 1".to_string()),
                ("k-2".to_string(), String::new())
            ]
        );
        assert!(filters(Some("metadata.User=x")).is_err());
        assert!(filters(Some("metadata.=x")).is_err());
        let many: Vec<String> = (0..17).map(|i| format!("metadata.k{i}=v")).collect();
        assert!(filters(Some(&many.join("&"))).is_err());
    }

    #[test]
    fn refuses_a_nul_in_a_value() {
        assert!(parse(r#"{"a": "x\u0000y"}"#).unwrap_err().contains("NUL"));
    }

    #[test]
    fn refuses_bad_keys() {
        let long = "k".repeat(65);
        for key in ["", "A", "a b", "a.b", "é", long.as_str()] {
            let raw = serde_json::json!({ key: "v" }).to_string();
            assert!(parse(&raw).unwrap_err().contains("metadata key"), "{key}");
        }
        assert!(parse(&serde_json::json!({ "k".repeat(64): "v" }).to_string()).is_ok());
    }

    #[test]
    fn at_most_sixteen_keys() {
        let m: Metadata = (0..16).map(|i| (format!("k{i}"), "v".into())).collect();
        assert!(parse(&to_json(&m)).is_ok());
        let m: Metadata = (0..17).map(|i| (format!("k{i}"), "v".into())).collect();
        assert!(parse(&to_json(&m)).unwrap_err().contains("17 keys"));
    }

    #[test]
    fn at_most_four_kib_as_compact_json() {
        // {"a":"…"} is 8 bytes around the value.
        let fits = serde_json::json!({ "a": "x".repeat(MAX_BYTES - 8) }).to_string();
        assert_eq!(fits.len(), MAX_BYTES);
        assert!(parse(&fits).is_ok());
        let over = serde_json::json!({ "a": "x".repeat(MAX_BYTES - 7) }).to_string();
        assert!(parse(&over).unwrap_err().contains("at most 4096"));
        // Whitespace in what the client sent does not count.
        let spaced = format!("{{ \"a\" :  \"{}\" }}", "x".repeat(MAX_BYTES - 8));
        assert!(parse(&spaced).is_ok());
        // Escapes count as stored: a quote is two bytes.
        let quotes = serde_json::json!({ "a": "\"".repeat(MAX_BYTES / 2) }).to_string();
        assert!(parse(&quotes).is_err());
    }

    #[test]
    fn stored_form_round_trips() {
        let m = parse(r#"{"z":"\u00e9\n","a":""}"#).unwrap();
        assert_eq!(from_stored(&to_json(&m)), m);
        assert!(from_stored("not json").is_empty());
    }
}
