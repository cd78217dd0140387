//! Checksums of a file's bytes (docs/decisions.md, "Checksums"), the rules the server and the
//! client share: the hex SHA-256 of the File record and of the upload's
//! `sha256` form field, and RFC 9530's `Content-Digest: sha-256=:<base64>:`.
//!
//! `Content-Digest` is an RFC 8941 Dictionary: it may list several
//! algorithms (`sha-512=:…:, sha-256=:…:`), with parameters; members of
//! other algorithms are ignored, but the whole value must parse, and the
//! `sha-256` member (the last one, if repeated) must be a Byte Sequence of
//! 32 bytes. A value without a `sha-256` member asks for no check.

use base64::alphabet::STANDARD as ALPHABET;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};
use base64::engine::DecodePaddingMode;
use base64::Engine;

/// A SHA-256 digest.
pub type Sha256Digest = [u8; 32];

/// What the `sha256` form field accepts: 64 hex digits, either case; or
/// empty, which is none (as an HTML form sends a field left blank).
pub const SHA256_FIELD_PATTERN: &str = "^([0-9a-fA-F]{64})?$";

/// The header's name (RFC 9530), as `http` spells header names.
pub const HEADER: &str = "content-digest";

/// The `Content-Digest` member name of SHA-256.
const SHA256_KEY: &str = "sha-256";

/// RFC 8941 Byte Sequences are base64 with the standard alphabet; padding
/// may be left out ("parsers SHOULD NOT fail when padding is not present").
const SF_BASE64: GeneralPurpose = GeneralPurpose::new(
    &ALPHABET,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// Parses a hex SHA-256: exactly 64 hex digits, upper or lower case.
pub fn parse_hex(s: &str) -> Result<Sha256Digest, String> {
    let bad = || format!("sha256 must be 64 hex digits, got {:?}", shorten(s));
    if s.len() != 64 {
        return Err(bad());
    }
    let mut out = [0u8; 32];
    hex::decode_to_slice(s, &mut out).map_err(|_| bad())?;
    Ok(out)
}

/// A hex SHA-256 in its one written form: lower case.
pub fn normalise_hex(s: &str) -> Result<String, String> {
    parse_hex(s).map(hex::encode)
}

/// The `Content-Digest` value of bytes whose hex SHA-256 is `hex`; None if
/// `hex` is not one.
pub fn content_digest(hex: &str) -> Option<String> {
    parse_hex(hex).ok().map(|d| content_digest_of(&d))
}

/// `sha-256=:<base64>:`.
pub fn content_digest_of(digest: &Sha256Digest) -> String {
    format!("{SHA256_KEY}=:{}:", STANDARD.encode(digest))
}

/// The SHA-256 a `Content-Digest` value announces: None when it names no
/// `sha-256`; an error when it is not an RFC 8941 Dictionary or its
/// `sha-256` member is not 32 bytes. Several field lines are joined with
/// `, ` first, as RFC 9110 combines them.
pub fn parse_content_digest(value: &str) -> Result<Option<Sha256Digest>, String> {
    let members =
        dictionary(value).map_err(|e| format!("Content-Digest is not a valid dictionary: {e}"))?;
    match members.into_iter().rev().find(|(k, _)| k == SHA256_KEY) {
        None => Ok(None),
        Some((_, Member::Bytes(b))) => {
            let len = b.len();
            Sha256Digest::try_from(b)
                .map(Some)
                .map_err(|_| format!("Content-Digest sha-256 is {len} bytes long, not 32"))
        }
        Some(_) => Err("Content-Digest sha-256 must be a byte sequence (:base64:)".into()),
    }
}

fn shorten(s: &str) -> String {
    s.chars().take(80).collect()
}

/// A dictionary member's value, as far as digests care.
#[derive(Debug)]
enum Member {
    Bytes(Vec<u8>),
    Other,
}

/// The members of an RFC 8941 Dictionary, in order (§4.2.2).
fn dictionary(value: &str) -> Result<Vec<(String, Member)>, String> {
    let mut p = Parser {
        s: value.as_bytes(),
        i: 0,
    };
    let mut members = Vec::new();
    p.skip(b" ");
    if p.done() {
        return Ok(members);
    }
    loop {
        let key = p.key()?;
        let member = if p.eat(b'=') {
            if p.peek() == Some(b'(') {
                p.inner_list()?;
                Member::Other
            } else {
                let item = p.bare_item()?;
                p.parameters()?;
                item
            }
        } else {
            // A bare key is the boolean true.
            p.parameters()?;
            Member::Other
        };
        members.push((key, member));
        p.skip(b" \t");
        if p.done() {
            return Ok(members);
        }
        if !p.eat(b',') {
            return Err(p.unexpected());
        }
        p.skip(b" \t");
        if p.done() {
            return Err("a trailing comma".into());
        }
    }
}

/// A cursor over a field value (RFC 8941 §4.2).
struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn done(&self) -> bool {
        self.i >= self.s.len()
    }

    fn eat(&mut self, b: u8) -> bool {
        let hit = self.peek() == Some(b);
        self.i += usize::from(hit);
        hit
    }

    fn skip(&mut self, set: &[u8]) {
        while self.peek().is_some_and(|b| set.contains(&b)) {
            self.i += 1;
        }
    }

    /// Takes bytes while `ok` holds; gives them.
    fn take_while(&mut self, ok: impl Fn(u8) -> bool) -> &[u8] {
        let from = self.i;
        while self.peek().is_some_and(&ok) {
            self.i += 1;
        }
        &self.s[from..self.i]
    }

    fn unexpected(&self) -> String {
        match self.peek() {
            Some(b) => format!("unexpected {:?} at {}", char::from(b), self.i),
            None => "unexpected end".into(),
        }
    }

    fn key(&mut self) -> Result<String, String> {
        if !self
            .peek()
            .is_some_and(|b| b.is_ascii_lowercase() || b == b'*')
        {
            return Err(self.unexpected());
        }
        let key = self
            .take_while(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"_-.*".contains(&b));
        Ok(String::from_utf8_lossy(key).into_owned())
    }

    fn parameters(&mut self) -> Result<(), String> {
        while self.eat(b';') {
            self.skip(b" ");
            self.key()?;
            if self.eat(b'=') {
                self.bare_item()?;
            }
        }
        Ok(())
    }

    fn inner_list(&mut self) -> Result<(), String> {
        self.eat(b'(');
        loop {
            self.skip(b" ");
            if self.eat(b')') {
                return self.parameters();
            }
            self.bare_item()?;
            self.parameters()?;
            if !matches!(self.peek(), Some(b' ' | b')')) {
                return Err(self.unexpected());
            }
        }
    }

    fn bare_item(&mut self) -> Result<Member, String> {
        match self.peek() {
            Some(b'-' | b'0'..=b'9') => self.number().map(|()| Member::Other),
            Some(b'"') => self.string().map(|()| Member::Other),
            Some(b':') => self.byte_sequence().map(Member::Bytes),
            Some(b'?') => {
                self.i += 1;
                match self.peek() {
                    Some(b'0' | b'1') => {
                        self.i += 1;
                        Ok(Member::Other)
                    }
                    _ => Err(self.unexpected()),
                }
            }
            Some(b) if b.is_ascii_alphabetic() || b == b'*' => {
                self.take_while(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~:/".contains(&b));
                Ok(Member::Other)
            }
            _ => Err(self.unexpected()),
        }
    }

    /// An Integer (up to 15 digits) or a Decimal (up to 12 digits, a dot,
    /// 1 to 3 digits).
    fn number(&mut self) -> Result<(), String> {
        self.eat(b'-');
        let whole = self.take_while(|b| b.is_ascii_digit()).len();
        if whole == 0 {
            return Err(self.unexpected());
        }
        if !self.eat(b'.') {
            return if whole <= 15 {
                Ok(())
            } else {
                Err("an integer of more than 15 digits".into())
            };
        }
        let fraction = self.take_while(|b| b.is_ascii_digit()).len();
        if whole > 12 || !(1..=3).contains(&fraction) {
            return Err("a malformed decimal".into());
        }
        Ok(())
    }

    fn string(&mut self) -> Result<(), String> {
        self.eat(b'"');
        loop {
            match self.peek() {
                Some(b'"') => {
                    self.i += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    self.i += 1;
                    if !matches!(self.peek(), Some(b'"' | b'\\')) {
                        return Err(self.unexpected());
                    }
                    self.i += 1;
                }
                Some(0x20..=0x7e) => self.i += 1,
                _ => return Err(self.unexpected()),
            }
        }
    }

    fn byte_sequence(&mut self) -> Result<Vec<u8>, String> {
        self.eat(b':');
        let b64 = self
            .take_while(|b| b.is_ascii_alphanumeric() || b"+/=".contains(&b))
            .to_vec();
        if !self.eat(b':') {
            return Err(self.unexpected());
        }
        SF_BASE64
            .decode(b64)
            .map_err(|e| format!("a byte sequence that is not base64: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 9530's example: the SHA-256 of `{"hello": "world"}`.
    const HELLO: &str = "X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=";
    const HELLO_HEX: &str = "5f8f04f6a3a892aaabbddb6cf273894493773960d4a325b105fee46eef4304f1";

    #[test]
    fn hex_is_64_digits_either_case_written_lower() {
        assert_eq!(normalise_hex(&HELLO_HEX.to_uppercase()).unwrap(), HELLO_HEX);
        assert_eq!(hex::encode(parse_hex(HELLO_HEX).unwrap()), HELLO_HEX);
        for bad in [
            "",
            &HELLO_HEX[1..],
            &format!("{HELLO_HEX}0"),
            &format!(" {}", &HELLO_HEX[1..]),
            &HELLO_HEX.replace('5', "g"),
            "é".repeat(32).as_str(),
        ] {
            assert!(parse_hex(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn content_digest_is_the_base64_of_the_bytes() {
        assert_eq!(
            content_digest(HELLO_HEX).unwrap(),
            format!("sha-256=:{HELLO}:")
        );
        assert_eq!(content_digest("nope"), None);
    }

    #[test]
    fn the_sha256_member_is_found_among_others() {
        let hello = parse_hex(HELLO_HEX).unwrap();
        let sha512 = format!(":{}:", STANDARD.encode([7u8; 64]));
        for value in [
            format!("sha-256=:{HELLO}:"),
            format!("  sha-256=:{HELLO}:  "),
            format!("sha-512={sha512}, sha-256=:{HELLO}:"),
            format!("sha-256=:{HELLO}:,sha-512={sha512}"),
            format!("sha-256=:{}:", HELLO.trim_end_matches('=')),
            format!("sha-256=:{HELLO}:;q=1;x=\"a\\\"b\", md5=?1, id=(a 1 2.5 \"s\");p"),
            format!(
                "sha-256=:{}:, sha-256=:{HELLO}:",
                STANDARD.encode([0u8; 32])
            ),
            format!("unixsum=30637, sha-256=:{HELLO}:, crc32c=tok/en:x"),
        ] {
            assert_eq!(parse_content_digest(&value), Ok(Some(hello)), "{value}");
        }
        for none in ["", "   ", "sha-512=:AAAA:", "md5=1, unixcksum=2"] {
            assert_eq!(parse_content_digest(none), Ok(None), "{none:?}");
        }
    }

    #[test]
    fn malformed_values_and_wrong_lengths_are_refused() {
        for bad in [
            "sha-256".to_string(),
            "sha-256=abc".into(),
            "sha-256=1".into(),
            "sha-256=:AAAA:".into(),
            format!("sha-256=:{HELLO}"),
            format!("sha-256={HELLO}"),
            format!("SHA-256=:{HELLO}:"),
            format!("sha-256=:{HELLO}:,"),
            format!("sha-256=:{HELLO}:;"),
            format!("sha-256=:{HELLO}: x"),
            format!("sha-256=:{HELLO}:, sha-512=:!!:"),
            format!("sha-256=:{HELLO}:, a=\"unterminated"),
            format!("sha-256=:{HELLO}:, a=(1 2"),
            format!("sha-256=:{HELLO}:, a=1234567890123456"),
            format!("sha-256=:{HELLO}:, a=1.2345"),
            format!(",sha-256=:{HELLO}:"),
            format!("sha-256=:{HELLO}:, ?1"),
        ] {
            assert!(parse_content_digest(&bad).is_err(), "{bad:?}");
        }
    }
}
