//! What a file carries for S3 beyond /v1's record (CONTRACT §18): the
//! content headers given at PUT, returned on GET/HEAD and by the CDN route
//! for the file; the checksum the sender gave; a multipart object's ETag and
//! part sizes. Empty for files /v1 stored.

use serde::{Deserialize, Serialize};

/// The S3 attributes of a stored file (all absent for most files).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObjectAttrs {
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "cc")]
    pub cache_control: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "cd")]
    pub content_disposition: Option<String>,
    /// Without the `aws-chunked` token (the door removes it).
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "ce")]
    pub content_encoding: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "cl")]
    pub content_language: Option<String>,
    /// The `Expires` header as given (an HTTP date).
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "ex")]
    pub expires: Option<String>,
    /// The checksum the sender gave (and the door verified).
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "ck")]
    pub checksum: Option<ObjectChecksum>,
    /// A multipart object's ETag, `<hex md5 of the parts' md5s>-<parts>`
    /// (unquoted); None: the ETag is the file's MD5.
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "et")]
    pub etag: Option<String>,
    /// A multipart object's part sizes, in order (`partNumber` reads).
    #[serde(default, skip_serializing_if = "Vec::is_empty", rename = "ps")]
    pub parts: Vec<u64>,
}

impl ObjectAttrs {
    pub fn is_empty(&self) -> bool {
        *self == ObjectAttrs::default()
    }

    /// How the databases keep them: None when empty, else compact JSON.
    pub fn stored(&self) -> Option<String> {
        (!self.is_empty()).then(|| serde_json::to_string(self).expect("plain strings and numbers"))
    }

    /// The attributes [`ObjectAttrs::stored`] kept (unreadable: none).
    pub fn from_stored(text: Option<&str>) -> ObjectAttrs {
        text.and_then(|t| serde_json::from_str(t).ok())
            .unwrap_or_default()
    }
}

/// An S3 checksum algorithm (`x-amz-checksum-*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ChecksumAlgorithm {
    #[serde(rename = "CRC32")]
    Crc32,
    #[serde(rename = "CRC32C")]
    Crc32c,
    #[serde(rename = "CRC64NVME")]
    Crc64Nvme,
    #[serde(rename = "SHA1")]
    Sha1,
    #[serde(rename = "SHA256")]
    Sha256,
}

/// A checksum of an object: its algorithm, its value as S3 writes it
/// (base64 of the digest), and whether it covers the whole object or is
/// a multipart object's checksum of its parts' checksums (`-N` suffixed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObjectChecksum {
    #[serde(rename = "a")]
    pub algorithm: ChecksumAlgorithm,
    #[serde(rename = "v")]
    pub value: String,
    #[serde(default, rename = "c", skip_serializing_if = "std::ops::Not::not")]
    pub composite: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_are_kept_as_compact_json_and_none_when_empty() {
        assert_eq!(ObjectAttrs::default().stored(), None);
        let a = ObjectAttrs {
            cache_control: Some("max-age=60".into()),
            checksum: Some(ObjectChecksum {
                algorithm: ChecksumAlgorithm::Crc32,
                value: "AAAAAA==".into(),
                composite: false,
            }),
            etag: Some("0123-2".into()),
            parts: vec![5, 1],
            ..ObjectAttrs::default()
        };
        let text = a.stored().unwrap();
        assert_eq!(
            text,
            r#"{"cc":"max-age=60","ck":{"a":"CRC32","v":"AAAAAA=="},"et":"0123-2","ps":[5,1]}"#
        );
        assert_eq!(ObjectAttrs::from_stored(Some(&text)), a);
        assert_eq!(
            ObjectAttrs::from_stored(Some("not json")),
            ObjectAttrs::default()
        );
    }
}
