//! Identifiers and API key secrets.

use rand::RngCore;
use sha2::{Digest, Sha256};

pub(crate) fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rand::rng().fill_bytes(&mut buf);
    hex::encode(buf)
}

/// `f_` + the creation time (unix ms, 12 hex digits) + 128 random bits.
/// Ids made one after another sort together, so the database's indexes on
/// them grow at their end instead of at a random page per upload (a third
/// of the pages a small upload writes, before this).
pub fn file_id() -> String {
    let ms = u64::try_from(chrono::Utc::now().timestamp_millis()).unwrap_or(0);
    format!("f_{:012x}{}", ms & 0xffff_ffff_ffff, random_hex(16))
}

/// An image variant's blob, of one render: `v_` and 128 random bits (hex).
/// Two nodes rendering the same variant at once write two blobs; the one
/// recorded second is collected.
pub fn variant_blob_id() -> String {
    format!("v_{}", random_hex(16))
}

/// A resumable upload's id: `u_` and 128 random bits (hex).
pub fn upload_id() -> String {
    format!("u_{}", random_hex(16))
}

/// An S3 multipart upload's id (CONTRACT §18): `mpu_` and 128 random
/// bits (hex); opaque to S3 clients.
pub fn multipart_upload_id() -> String {
    format!("mpu_{}", random_hex(16))
}

/// The blob of one sent part of an S3 multipart upload: `p_` and 128
/// random bits (hex). A part sent again gets a blob of its own.
pub fn part_blob_id() -> String {
    format!("p_{}", random_hex(16))
}

pub fn account_id() -> String {
    format!("acc_{}", random_hex(12))
}

pub fn key_id() -> String {
    format!("key_{}", random_hex(12))
}

pub fn webhook_id() -> String {
    format!("wh_{}", random_hex(12))
}

/// Key kinds and their secret prefixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum KeyKind {
    Secret,
    Public,
    /// An upload token (`upt_…`): not an API key, but a caller like one.
    Token,
}

impl std::fmt::Display for KeyKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl KeyKind {
    pub fn as_str(self) -> &'static str {
        match self {
            KeyKind::Secret => "secret",
            KeyKind::Public => "public",
            KeyKind::Token => "token",
        }
    }

    pub fn parse(s: &str) -> Option<KeyKind> {
        match s {
            "secret" => Some(KeyKind::Secret),
            "public" => Some(KeyKind::Public),
            _ => None,
        }
    }

    /// Whether a caller of this kind is a stranger of its account: a public
    /// key (anyone with the page that holds it) or an upload token (anyone
    /// with the link), held together to the plan's `public_share` of each
    /// per-account limit (`domain::quota::Share`).
    pub fn is_stranger(self) -> bool {
        self != KeyKind::Secret
    }

    /// How a key of this kind begins: `sk_`, `pk_`, `upt_`.
    pub fn prefix(self) -> &'static str {
        match self {
            KeyKind::Secret => "sk_",
            KeyKind::Public => "pk_",
            KeyKind::Token => "upt_",
        }
    }
}

/// A new key secret: `sk_`/`pk_` + 192 random bits.
pub fn key_secret(kind: KeyKind) -> String {
    format!("{}{}", kind.prefix(), random_hex(24))
}

/// An upload token's id (`ut_` + 96 random bits), the name it is managed by.
pub fn upload_token_id() -> String {
    format!("ut_{}", random_hex(12))
}

/// An upload token's secret: `upt_` + 256 random bits. The database keeps
/// only its [`key_hash`].
pub fn upload_token_secret() -> String {
    format!("upt_{}", random_hex(32))
}

/// Whether a key id (a caller's, an upload's `created_by`) is an upload
/// token's.
pub fn is_upload_token_id(id: &str) -> bool {
    id.starts_with("ut_")
}

/// The upload token that created an upload (its `created_by`), if one did.
pub fn upload_token_of(created_by: Option<&str>) -> Option<&str> {
    created_by.filter(|c| is_upload_token_id(c))
}

/// What the database keeps of a key (and of an upload token's secret).
pub fn key_hash(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

/// A random secret for signing URLs, as hex.
pub fn signing_secret() -> String {
    random_hex(32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        let f = file_id();
        assert!(f.starts_with("f_") && f.len() == 46, "{f}");
        assert!(f[2..].bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(file_id(), file_id());
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert!(
            file_id()[..14] > f[..14],
            "later ids sort after earlier ones"
        );
        assert!(key_secret(KeyKind::Secret).starts_with("sk_"));
        assert!(key_secret(KeyKind::Public).starts_with("pk_"));
        assert_eq!(key_hash("sk_x"), key_hash("sk_x"));
        assert_ne!(key_hash("sk_x"), key_hash("sk_y"));
        let t = upload_token_secret();
        assert!(t.starts_with("upt_") && t.len() == 4 + 64, "{t}");
        assert!(is_upload_token_id(&upload_token_id()));
        assert!(!is_upload_token_id(&key_id()));
    }
}
