//! What a file carries for S3 beyond /v1's record (CONTRACT §18,
//! `domain::object::ObjectAttrs`): kept by both databases through every
//! read and every copy of a row (`store`), and served by the CDN routes
//! by the rule of docs/api.md, "CDN routes" (`cdn`).

mod cdn;
mod store;

use filestore::testing::domain::object::{ChecksumAlgorithm, ObjectAttrs, ObjectChecksum};

/// Attributes with every field set.
pub fn every_attr() -> ObjectAttrs {
    ObjectAttrs {
        cache_control: Some("public, max-age=31536000, immutable".into()),
        content_disposition: Some("attachment; filename=\"report.txt\"".into()),
        content_encoding: Some("gzip".into()),
        content_language: Some("fr-CA".into()),
        expires: Some("Wed, 21 Oct 2037 07:28:00 GMT".into()),
        checksum: Some(ObjectChecksum {
            algorithm: ChecksumAlgorithm::Crc32c,
            value: "yZRlqg==".into(),
            composite: true,
        }),
        etag: Some("0123456789abcdef0123456789abcdef-2".into()),
        parts: vec![5 << 20, 7],
    }
}
