//! Validation of what callers send: folders, file names, `expires`, list
//! limits, `expires_in`, content types (docs/decisions.md, "API rules").

use std::time::Duration;

pub const MAX_EXPIRES: Duration = Duration::from_hours(365 * 24);
pub const MAX_SIGNED_URL_SECS: u64 = 604_800;

/// The most bytes a folder may hold.
pub const MAX_FOLDER: usize = 1024;
/// The most bytes one segment of a folder (or a file name) may hold.
pub const MAX_SEGMENT: usize = 255;

/// A folder: 1–[`MAX_FOLDER`] bytes of `/`-separated segments, each
/// 1–[`MAX_SEGMENT`] bytes of any characters but control characters
/// (Unicode category Cc) and bidirectional formatting characters
/// ([`BIDI_FORMATTING`]); no empty, `.` or `..` segment. Leading and
/// trailing `/` are trimmed; empty input is the root (docs/api.md,
/// "Folders").
pub fn folder(raw: &str) -> Result<Option<String>, String> {
    let trimmed = raw.trim_matches('/');
    if raw.is_empty() {
        return Ok(None);
    }
    if raw.len() > MAX_FOLDER {
        return Err(format!("folder is longer than {MAX_FOLDER} bytes"));
    }
    if trimmed.is_empty() {
        return Err("folder must name at least one segment".into());
    }
    for seg in trimmed.split('/') {
        if seg.is_empty() || seg == "." || seg == ".." {
            return Err(format!("folder segment {seg:?} is not allowed"));
        }
        if seg.len() > MAX_SEGMENT {
            return Err(format!(
                "folder segment {:?}... is longer than {MAX_SEGMENT} bytes",
                seg.chars().take(16).collect::<String>()
            ));
        }
        if let Some(c) = seg.chars().find(|c| c.is_control()) {
            return Err(format!(
                "folder has a control character (U+{:04X})",
                u32::from(c)
            ));
        }
        if let Some(c) = bidi(seg) {
            return Err(format!("folder {}", bidi_refusal(c)));
        }
    }
    Ok(Some(trimmed.to_string()))
}

/// Bidirectional formatting characters: the marks (LRM, RLM, ALM), the
/// embeddings and overrides (U+202A–U+202E) and the isolates
/// (U+2066–U+2069). A name holding one shows otherwise than it is
/// (`invoice\u{202E}fdp.exe` reads as `invoiceexe.pdf`), in every listing,
/// console and terminal that renders it, so no door stores one
/// (docs/api.md, the upload's `file`).
pub const BIDI_FORMATTING: [char; 12] = [
    '\u{200E}', '\u{200F}', '\u{061C}', '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}',
    '\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}',
];

/// The first bidirectional formatting character of `s`, if any.
pub fn bidi(s: &str) -> Option<char> {
    s.chars().find(|c| BIDI_FORMATTING.contains(c))
}

/// The end of a refusal of a name or folder holding `c`.
fn bidi_refusal(c: char) -> String {
    format!(
        "has a bidirectional formatting character (U+{:04X}), which would show it otherwise than it is",
        u32::from(c)
    )
}

/// A stored file name: the client's name without any directory part (`/` or
/// `\`), 1–255 bytes, no control characters and no bidirectional
/// formatting characters ([`BIDI_FORMATTING`]).
pub fn file_name(raw: &str) -> Result<String, String> {
    let base = raw.rsplit(['/', '\\']).next().unwrap_or("");
    if base.is_empty() || base == "." || base == ".." {
        return Err("the file part needs a file name".into());
    }
    if base.len() > MAX_SEGMENT {
        return Err(format!("file name is longer than {MAX_SEGMENT} bytes"));
    }
    if base.chars().any(char::is_control) {
        return Err("file name has control characters".into());
    }
    if let Some(c) = bidi(base) {
        return Err(format!("file name {}", bidi_refusal(c)));
    }
    Ok(base.to_string())
}

/// Seconds of the duration form docs/api.md gives `expires`: a non-negative integer and one
/// of `s m h d w` (`30s`, `15m`, `1h`, `7d`, `2w`); None for anything else
/// (or an overflow). Shared by the server (`expires`) and the CLI.
pub fn unit_duration_secs(raw: &str) -> Option<u64> {
    let unit = raw.chars().last()?;
    let num = &raw[..raw.len() - unit.len_utf8()];
    if num.is_empty() || !num.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let per = match unit {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        'd' => 86_400,
        'w' => 7 * 86_400,
        _ => return None,
    };
    num.parse::<u64>().ok()?.checked_mul(per)
}

/// `expires`: a positive integer then one of `s m h d w`, at most 365 days.
pub fn expires(raw: &str) -> Result<Duration, String> {
    let bad = || {
        format!("expires {raw:?}: use a positive number and a unit s, m, h, d or w (e.g. 1h, 7d), at most 365d")
    };
    match unit_duration_secs(raw) {
        Some(secs) if secs > 0 && secs <= MAX_EXPIRES.as_secs() => Ok(Duration::from_secs(secs)),
        _ => Err(bad()),
    }
}

/// An `Idempotency-Key`: 1-255 visible ASCII characters.
pub fn idempotency_key(key: &str) -> Result<(), String> {
    if key.is_empty() || key.len() > 255 || !key.bytes().all(|b| b.is_ascii_graphic()) {
        return Err("Idempotency-Key: 1-255 visible ASCII characters".into());
    }
    Ok(())
}

/// An `Idempotency-Key` as remembered: scoped to the API key that sent it
/// (`key_id`), so that another key of the account (a page's public key) can
/// neither replay a request of this one, reading back its file, nor use the
/// key first and have this one's later request answered with its file.
pub fn idempotency_scope(key_id: &str, key: &str) -> String {
    format!("{key_id}/{key}")
}

/// A form boolean: true/false (also 1/0, yes/no, on/off), any case; empty
/// is false.
pub fn boolean(raw: &str) -> Result<bool, String> {
    match raw.to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" | "" => Ok(false),
        _ => Err(format!("private {raw:?}: use true or false")),
    }
}

/// Page size: 1–100, default 50.
pub fn limit(raw: Option<&str>) -> Result<u32, String> {
    match raw {
        None => Ok(50),
        Some(s) => match s.parse::<u32>() {
            Ok(n) if (1..=100).contains(&n) => Ok(n),
            _ => Err(format!("limit {s:?}: use an integer from 1 to 100")),
        },
    }
}

/// A page size of `GET /v1/folders`: 1–1000, 100 when absent.
pub fn folders_limit(raw: Option<&str>) -> Result<u32, String> {
    match raw {
        None => Ok(100),
        Some(s) => match s.parse::<u32>() {
            Ok(n) if (1..=1000).contains(&n) => Ok(n),
            _ => Err(format!("limit {s:?}: use an integer from 1 to 1000")),
        },
    }
}

/// The OpenAPI `pattern` of a folder: exactly what [`folder`] accepts but
/// for the lengths (the schema's `maxLength` counts characters, the rule
/// bytes). A segment is any characters but `/`, control and bidirectional
/// formatting characters, and not `.` or `..`: up to two dots and another
/// character, or three dots, then anything. Empty is the root.
pub(crate) const FOLDER_PATTERN: &str = concat!(
    r"^(/*",
    r"(\.{0,2}[^/.\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]|\.{3})[^/\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]*",
    r"(/(\.{0,2}[^/.\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]|\.{3})[^/\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]*)*",
    r"/*)?$"
);

/// The OpenAPI `pattern` of a folder that is not the root: [`FOLDER_PATTERN`]
/// without its empty alternative.
pub(crate) const NON_ROOT_FOLDER_PATTERN: &str = concat!(
    r"^/*",
    r"(\.{0,2}[^/.\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]|\.{3})[^/\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]*",
    r"(/(\.{0,2}[^/.\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]|\.{3})[^/\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]*)*",
    r"/*$"
);

/// The OpenAPI `pattern` of a form boolean: exactly what [`boolean`] accepts.
pub(crate) const BOOLEAN_PATTERN: &str =
    "^([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]|1|0|[Yy][Ee][Ss]|[Nn][Oo]|[Oo][Nn]|[Oo][Ff][Ff])?$";

/// The OpenAPI `pattern` of `expires`: exactly what [`expires`] accepts
/// (leading zeros included, at most [`MAX_EXPIRES`] in every unit), or empty
/// (no expiry).
pub(crate) fn expires_pattern() -> String {
    let max = MAX_EXPIRES.as_secs();
    let units: Vec<String> = [
        ('s', 1),
        ('m', 60),
        ('h', 3600),
        ('d', 86_400),
        ('w', 604_800),
    ]
    .iter()
    .map(|(unit, per)| format!("0*({}){unit}", one_to(max / per)))
    .collect();
    format!("^({})?$", units.join("|"))
}

/// A regex (no anchors) of the decimal numbers 1..=n, without leading zeros.
fn one_to(n: u64) -> String {
    let digits: Vec<u32> = n
        .to_string()
        .chars()
        .filter_map(|c| c.to_digit(10))
        .collect();
    let len = digits.len();
    let mut parts = Vec::new();
    if len > 1 {
        // Every number with fewer digits.
        parts.push(format!("[1-9][0-9]{{0,{}}}", len - 2));
    }
    // Numbers of n's length, up to n: a prefix of n, then a smaller digit,
    // then anything.
    for (i, &d) in digits.iter().enumerate() {
        let lowest = u32::from(i == 0);
        if d > lowest {
            let prefix: String = digits[..i].iter().map(ToString::to_string).collect();
            parts.push(format!(
                "{prefix}[{lowest}-{}][0-9]{{{}}}",
                d - 1,
                len - i - 1
            ));
        }
    }
    parts.push(n.to_string());
    parts.join("|")
}

/// A JSON number that is a non-negative integer (`86` or `86.0`: JSON
/// Schema's `integer` is any number without a fraction).
pub(crate) fn json_integer(v: &serde_json::Value) -> Option<u64> {
    if let Some(n) = v.as_u64() {
        return Some(n);
    }
    let f = v.as_f64()?;
    // Below 2^53 every integer is exact in an f64; past it the value is
    // out of any range this API takes anyway.
    if f.fract() == 0.0 && (0.0..9_007_199_254_740_992.0).contains(&f) {
        format!("{f:.0}").parse().ok()
    } else {
        None
    }
}

/// `expires_in`: 1–604800 seconds.
pub fn expires_in(n: u64) -> Result<u64, String> {
    if (1..=MAX_SIGNED_URL_SECS).contains(&n) {
        Ok(n)
    } else {
        Err(format!(
            "expires_in must be an integer from 1 to {MAX_SIGNED_URL_SECS}"
        ))
    }
}

/// The stored type: the part's Content-Type when specific, else guessed from
/// the name, else `application/octet-stream`.
pub fn content_type(part_type: Option<&str>, name: &str) -> String {
    let given = part_type
        .map(|t| t.trim().to_ascii_lowercase())
        .filter(|t| !t.is_empty() && t != "application/octet-stream")
        .filter(|t| t.parse::<mime_guess::mime::Mime>().is_ok());
    given.unwrap_or_else(|| {
        mime_guess::from_path(name).first().map_or_else(
            || "application/octet-stream".to_string(),
            |m| m.essence_str().to_string(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_integers_include_whole_floats() {
        use serde_json::json;
        for (v, want) in [
            (json!(86), Some(86)),
            (json!(86.0), Some(86)),
            (json!(0), Some(0)),
            (json!(86.5), None),
            (json!(-1), None),
            (json!(-1.0), None),
            (json!(1e300), None),
            (json!("86"), None),
            (json!(null), None),
        ] {
            assert_eq!(json_integer(&v), want, "{v}");
        }
    }

    #[test]
    fn folders() {
        assert_eq!(folder("").unwrap(), None);
        assert_eq!(
            folder("/releases/v1.2/").unwrap().as_deref(),
            Some("releases/v1.2")
        );
        for good in [
            "my docs/ünï+%",
            "a b",
            "é",
            "a?b",
            "*/\\/+%20",
            "...",
            ".a/..b/a..",
            "שלום/日本語",
            &"x".repeat(255),
            &vec!["y".repeat(255); 4].join("/"),
        ] {
            assert_eq!(folder(good).unwrap().as_deref(), Some(good), "{good}");
        }
        for bad in [
            "/",
            "a//b",
            "a/../b",
            "./a",
            "a/.",
            "..",
            "a\tb",
            "a\u{7f}",
            "a/\u{85}",
            "a\nb/c",
            &"x".repeat(256),
            &format!("a/{}/b", "é".repeat(128)),
            &vec!["y".repeat(255); 5].join("/"),
            &format!("{}/a", vec!["y".repeat(255); 4].join("/")),
        ] {
            assert!(folder(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn file_names() {
        assert_eq!(file_name("../../etc/passwd").unwrap(), "passwd");
        assert_eq!(
            file_name("C:\\Users\\me\\report.pdf").unwrap(),
            "report.pdf"
        );
        assert_eq!(file_name("résumé (1).pdf").unwrap(), "résumé (1).pdf");
        for bad in ["", "dir/", "..", "a\nb", &"x".repeat(256)] {
            assert!(file_name(bad).is_err(), "{bad:?}");
        }
        // Every bidirectional formatting character, anywhere in the name;
        // right-to-left letters themselves are names like any other.
        for c in BIDI_FORMATTING {
            let err = file_name(&format!("invoice{c}fdp.exe")).unwrap_err();
            assert!(err.contains(&format!("U+{:04X}", u32::from(c))), "{err}");
            assert!(folder(&format!("a/b{c}"))
                .unwrap_err()
                .contains("bidirectional"));
        }
        assert_eq!(file_name("שלום.txt").unwrap(), "שלום.txt");
        assert_eq!(file_name("a\u{200D}b").unwrap(), "a\u{200D}b");
    }

    #[test]
    fn expiry_durations() {
        assert_eq!(expires("30s").unwrap().as_secs(), 30);
        assert_eq!(expires("15m").unwrap().as_secs(), 900);
        assert_eq!(expires("1h").unwrap().as_secs(), 3600);
        assert_eq!(expires("7d").unwrap().as_secs(), 604_800);
        assert_eq!(expires("2w").unwrap().as_secs(), 1_209_600);
        assert_eq!(expires("365d").unwrap().as_secs(), 365 * 86_400);
        for bad in [
            "",
            "0h",
            "366d",
            "-1h",
            "1.5h",
            "1y",
            "h",
            "1 h",
            "99999999999999999999d",
            "1é",
            "é",
        ] {
            assert!(expires(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn limits_and_expires_in() {
        assert_eq!(limit(None).unwrap(), 50);
        assert_eq!(limit(Some("100")).unwrap(), 100);
        for bad in ["0", "101", "-1", "x"] {
            assert!(limit(Some(bad)).is_err());
        }
        assert_eq!(folders_limit(None).unwrap(), 100);
        assert_eq!(folders_limit(Some("1000")).unwrap(), 1000);
        for bad in ["0", "1001", "-1", "x", ""] {
            assert!(folders_limit(Some(bad)).is_err());
        }
        assert!(expires_in(0).is_err());
        assert!(expires_in(604_801).is_err());
        assert_eq!(expires_in(604_800).unwrap(), 604_800);
    }

    #[test]
    fn content_types() {
        assert_eq!(content_type(Some("image/png"), "x.bin"), "image/png");
        assert_eq!(
            content_type(Some("application/octet-stream"), "a.txt"),
            "text/plain"
        );
        assert_eq!(
            content_type(None, "a.unknownext"),
            "application/octet-stream"
        );
        assert_eq!(
            content_type(Some("not a type"), "a.json"),
            "application/json"
        );
    }
}
