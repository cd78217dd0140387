//! The type of a file as its bytes say, not as its name or its sender say:
//! what an upload policy's `types` are checked against (docs/decisions.md,
//! "Upload tokens"). Magic numbers come from the `infer` crate; what it does
//! not know (it has no signature for text) is text when the bytes are UTF-8
//! text, else `application/octet-stream`.
//!
//! Sniffing is not validation: a file that starts like a PNG and goes on as
//! something else (a polyglot) passes as `image/png`. What it stops is the
//! common case, an executable or an HTML page named `cat.png`.

/// How many leading bytes decide ([`infer`] reads this many from a path; an
/// ELF header alone needs 53).
pub const SNIFF_LEN: usize = 8192;

/// The fallback for bytes nothing recognizes.
pub const OCTET_STREAM: &str = "application/octet-stream";

/// The MIME type of a file whose first bytes (up to [`SNIFF_LEN`], or the
/// whole file when shorter) are `head`. `declared` is what the sender said;
/// it is only used to name a text file more precisely (`text/csv`,
/// `application/json`) once the bytes are known to be text.
pub fn sniff(head: &[u8], declared: Option<&str>) -> String {
    let head = &head[..head.len().min(SNIFF_LEN)];
    if let Some(t) = infer::get(head) {
        let mime = t.mime_type();
        if mime == "text/xml" && is_svg(head) {
            return "image/svg+xml".into();
        }
        return mime.to_string();
    }
    if !is_text(head) {
        return OCTET_STREAM.into();
    }
    if is_svg(head) {
        return "image/svg+xml".into();
    }
    match declared.map(essence) {
        Some(d) if plain_text_type(&d) => d,
        _ => "text/plain".into(),
    }
}

/// Whether `sniffed` is one of `allowed` (`type/subtype` exactly, or
/// `type/*`). `image/*` does not take SVG, which can carry script: a policy
/// that wants SVG names `image/svg+xml`.
pub fn allowed(allowed: &[String], sniffed: &str) -> bool {
    allowed.iter().any(|a| match a.strip_suffix("/*") {
        Some(top) => sniffed.split('/').next() == Some(top) && sniffed != "image/svg+xml",
        None => a.eq_ignore_ascii_case(sniffed),
    })
}

/// A file's first bytes as they stream in, kept until there are `want`
/// of them (at most [`SNIFF_LEN`]): what both ways of uploading sniff.
pub(crate) struct Head {
    bytes: Vec<u8>,
    want: usize,
    given: bool,
}

impl Head {
    /// A head of `want` bytes, of which `so_far` came already.
    pub(crate) fn new(want: usize, so_far: &[u8]) -> Head {
        let want = want.min(SNIFF_LEN);
        let mut bytes = Vec::with_capacity(want);
        bytes.extend_from_slice(&so_far[..so_far.len().min(want)]);
        Head {
            bytes,
            want,
            given: false,
        }
    }

    /// Takes the next chunk; the head, the first time it is complete.
    pub(crate) fn push(&mut self, chunk: &[u8]) -> Option<&[u8]> {
        if self.given {
            return None;
        }
        let take = chunk.len().min(self.want - self.bytes.len());
        self.bytes.extend_from_slice(&chunk[..take]);
        self.take_if(self.bytes.len() == self.want)
    }

    /// The file has ended: what came of the head, unless it was given.
    pub(crate) fn end(&mut self) -> Option<&[u8]> {
        self.take_if(true)
    }

    fn take_if(&mut self, ready: bool) -> Option<&[u8]> {
        if self.given || !ready {
            return None;
        }
        self.given = true;
        Some(&self.bytes)
    }
}

/// What [`parse_type`] accepts, as the OpenAPI document says it.
pub const TYPE_PATTERN: &str = r"^[A-Za-z0-9!#$&^_.+-]{1,127}/([A-Za-z0-9!#$&^_.+-]{1,127}|\*)$";

/// Whether `raw` is a policy's type: `type/subtype` or `type/*`, lowercase
/// token characters. Returns it normalised (lowercase).
pub fn parse_type(raw: &str) -> Result<String, String> {
    let t = raw.to_ascii_lowercase();
    let ok_part = |p: &str| {
        !p.is_empty()
            && p.len() <= 127
            && p.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b))
    };
    match t.split_once('/') {
        Some((top, "*")) if ok_part(top) => Ok(t),
        Some((top, sub)) if ok_part(top) && ok_part(sub) => Ok(t),
        _ => Err(format!(
            "type {raw:?}: use a MIME type (image/png) or a family (image/*)"
        )),
    }
}

/// The `type/subtype` of a declared content type, lowercase.
fn essence(declared: &str) -> String {
    declared
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// Text types the bytes cannot tell apart and that are not active content
/// (not HTML, not XML, not SVG): the sender's word is taken for these.
fn plain_text_type(t: &str) -> bool {
    matches!(
        t,
        "text/plain"
            | "text/csv"
            | "text/markdown"
            | "text/tab-separated-values"
            | "application/json"
            | "application/x-ndjson"
    )
}

/// UTF-8 (a character cut at the end of `head` allowed) without control
/// characters other than tab, newline, form feed and carriage return.
fn is_text(head: &[u8]) -> bool {
    let valid = match std::str::from_utf8(head) {
        Ok(s) => s,
        // Cut in the middle of a character at the end only.
        Err(e) if e.error_len().is_none() => {
            std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or_default()
        }
        Err(_) => return false,
    };
    valid
        .chars()
        .all(|c| !c.is_control() || matches!(c, '\t' | '\n' | '\r' | '\x0c'))
}

/// Text whose first element (after an XML declaration, comments, a
/// doctype and white space) is `<svg`.
fn is_svg(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    let mut rest = text.trim_start_matches('\u{feff}').trim_start();
    loop {
        if let Some(r) = rest.strip_prefix("<?") {
            rest = r.split_once("?>").map_or("", |(_, r)| r).trim_start();
        } else if let Some(r) = rest.strip_prefix("<!--") {
            rest = r.split_once("-->").map_or("", |(_, r)| r).trim_start();
        } else if let Some(r) = rest.strip_prefix("<!") {
            rest = r.split_once('>').map_or("", |(_, r)| r).trim_start();
        } else {
            break;
        }
    }
    rest.get(..4)
        .is_some_and(|p| p.eq_ignore_ascii_case("<svg"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0";

    fn elf() -> Vec<u8> {
        let mut b = b"\x7fELF\x02\x01\x01\0".to_vec();
        b.resize(64, 0);
        b[16] = 2; // ET_EXEC
        b[18] = 0x3e; // x86-64
        b
    }

    #[test]
    fn magic_numbers_win_over_names_and_declared_types() {
        assert_eq!(sniff(PNG, Some("text/html")), "image/png");
        assert_eq!(sniff(b"\xff\xd8\xff\xe0\0\x10JFIF\0", None), "image/jpeg");
        assert_eq!(sniff(b"GIF89a\x01\0\x01\0", None), "image/gif");
        assert_eq!(sniff(b"%PDF-1.7\n", Some("image/png")), "application/pdf");
        let exe = sniff(&elf(), Some("image/png"));
        assert!(exe.starts_with("application/"), "{exe}");
        let mut mz = b"MZ\x90\0".to_vec();
        mz.resize(128, 0);
        assert!(sniff(&mz, Some("image/png")).starts_with("application/"));
    }

    #[test]
    fn text_takes_a_plain_declared_type_and_nothing_active() {
        assert_eq!(sniff(b"a,b\n1,2\n", Some("text/csv")), "text/csv");
        assert_eq!(
            sniff(b"{\"a\": 1}", Some("application/json; charset=utf-8")),
            "application/json"
        );
        assert_eq!(sniff(b"hello", Some("image/png")), "text/plain");
        assert_eq!(sniff(b"hello", None), "text/plain");
        assert_eq!(
            sniff(b"<html><body>x</body></html>", Some("image/png")),
            "text/html"
        );
        assert_eq!(sniff("été".as_bytes(), None), "text/plain");
        // A character cut by the sniff window is still text.
        assert_eq!(sniff(&"é".as_bytes()[..1], None), "text/plain");
        assert_eq!(sniff(b"", None), "text/plain");
    }

    #[test]
    fn binary_nothing_knows_is_octet_stream() {
        assert_eq!(
            sniff(b"\0\x01\x02\x03garbage", Some("image/png")),
            OCTET_STREAM
        );
        assert_eq!(sniff(&[0xfe, 0xfe, 0xfe], None), OCTET_STREAM);
        // A short ELF header is not named, but it is not an image either.
        assert_eq!(sniff(&elf()[..20], None), OCTET_STREAM);
    }

    #[test]
    fn svg_is_recognised_and_not_an_image_family_member() {
        let svg = b"<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>";
        assert_eq!(sniff(svg, None), "image/svg+xml");
        let xml = b"<?xml version=\"1.0\"?>\n<!-- c -->\n<!DOCTYPE svg>\n<svg></svg>";
        assert_eq!(sniff(xml, None), "image/svg+xml");
        let fam = vec!["image/*".to_string()];
        assert!(allowed(&fam, "image/png"));
        assert!(!allowed(&fam, "image/svg+xml"));
        assert!(allowed(&["image/svg+xml".to_string()], "image/svg+xml"));
    }

    #[test]
    fn allowed_matches_exact_types_and_families() {
        let list = vec!["image/png".to_string(), "text/*".to_string()];
        assert!(allowed(&list, "image/png"));
        assert!(!allowed(&list, "image/jpeg"));
        assert!(allowed(&list, "text/csv"));
        assert!(!allowed(&list, "application/octet-stream"));
        assert!(!allowed(&[], "image/png"));
    }

    #[test]
    fn a_head_is_given_once_when_complete_or_at_the_end() {
        let mut h = Head::new(4, b"a");
        assert_eq!(h.push(b"b"), None);
        assert_eq!(h.push(b"cdef"), Some(&b"abcd"[..]));
        assert_eq!(h.push(b"g"), None);
        assert_eq!(h.end(), None);
        let mut short = Head::new(SNIFF_LEN, b"");
        assert_eq!(short.push(b"xy"), None);
        assert_eq!(short.end(), Some(&b"xy"[..]));
        assert_eq!(short.end(), None);
    }

    #[test]
    fn policy_types_parse() {
        assert_eq!(parse_type("Image/PNG").unwrap(), "image/png");
        assert_eq!(parse_type("image/*").unwrap(), "image/*");
        for bad in [
            "",
            "image",
            "*/*",
            "image/",
            "/png",
            "image/png/x",
            "im age/png",
        ] {
            assert!(parse_type(bad).is_err(), "{bad}");
        }
    }
}
