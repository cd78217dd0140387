//! Identifiers and API key secrets.

use rand::RngCore;
use sha2::{Digest, Sha256};

fn random_hex(bytes: usize) -> String {
    let mut buf = vec![0u8; bytes];
    rand::rng().fill_bytes(&mut buf);
    hex::encode(buf)
}

/// `f_` + 128 random bits.
pub fn file_id() -> String {
    format!("f_{}", random_hex(16))
}

pub fn account_id() -> String {
    format!("acc_{}", random_hex(12))
}

pub fn key_id() -> String {
    format!("key_{}", random_hex(12))
}

/// Key kinds and their secret prefixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    Secret,
    Public,
}

impl KeyKind {
    pub fn as_str(self) -> &'static str {
        match self {
            KeyKind::Secret => "secret",
            KeyKind::Public => "public",
        }
    }

    pub fn parse(s: &str) -> Option<KeyKind> {
        match s {
            "secret" => Some(KeyKind::Secret),
            "public" => Some(KeyKind::Public),
            _ => None,
        }
    }

    fn prefix(self) -> &'static str {
        match self {
            KeyKind::Secret => "sk_",
            KeyKind::Public => "pk_",
        }
    }
}

/// A new key secret: `sk_`/`pk_` + 192 random bits.
pub fn key_secret(kind: KeyKind) -> String {
    format!("{}{}", kind.prefix(), random_hex(24))
}

/// What the database keeps of a key.
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
        assert!(f.starts_with("f_") && f.len() == 34);
        assert_ne!(file_id(), file_id());
        assert!(key_secret(KeyKind::Secret).starts_with("sk_"));
        assert!(key_secret(KeyKind::Public).starts_with("pk_"));
        assert_eq!(key_hash("sk_x"), key_hash("sk_x"));
        assert_ne!(key_hash("sk_x"), key_hash("sk_y"));
    }
}
