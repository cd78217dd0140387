//! How a stored file becomes the /v1 File record (docs/api.md, "Records"):
//! the /v1 door's rendering of the service's value, also the `data` of
//! every webhook delivery.

use crate::api::{
    BulkDeleteResult, FileList, FileRecord, Folder, FolderList, SignedUrl, Usage, UsageLimits,
};
use crate::clock::rfc3339_ms;
use crate::domain::files::StoredFile;
use crate::service::files::{self, BulkDeleted, Page, SignedLink};
use crate::service::links::{cdn_path_url, cdn_stable_url};
use crate::service::webhooks::OutboxEvent;
use crate::service::App;

/// The usage record (`GET /v1/usage`, and `admin account usage`).
pub(crate) fn usage(s: crate::service::usage::Standing) -> Usage {
    Usage {
        storage_bytes: s.storage_bytes,
        reserved_bytes: s.reserved_bytes,
        bandwidth_bytes: s.bandwidth_bytes,
        upload_count: s.upload_count,
        period_start: s.period_start,
        plan: Some(s.plan),
        limits: Some(UsageLimits {
            storage_bytes: s.limits.storage_bytes,
            bandwidth_bytes: s.limits.bandwidth_bytes,
            upload_count: s.limits.upload_count,
        }),
    }
}

pub(crate) fn record(app: &App, f: &StoredFile) -> FileRecord {
    FileRecord {
        id: f.id.clone(),
        url: (!f.private).then(|| cdn_path_url(app, f)),
        path_url: (!f.private).then(|| cdn_stable_url(app, f)),
        name: f.name.clone(),
        folder: f.folder.clone(),
        size: f.size,
        content_type: f.content_type.clone(),
        private: f.private,
        expires_at: f.expires_at.map(rfc3339_ms),
        created_at: rfc3339_ms(f.created_at),
        sha256: f.sha256.clone(),
        metadata: f.metadata.clone(),
    }
}

/// A page of files as `GET /v1/files` shows it.
pub(crate) fn file_list(app: &App, page: Page<StoredFile>) -> FileList {
    FileList {
        files: page.items.iter().map(|f| record(app, f)).collect(),
        has_more: page.has_more,
        cursor: page.cursor,
    }
}

/// A page of subfolders as `GET /v1/folders` shows it.
pub(crate) fn folder_list(page: Page<files::Folder>) -> FolderList {
    FolderList {
        folders: page
            .items
            .into_iter()
            .map(|f| Folder {
                name: f.name,
                path: f.path,
            })
            .collect(),
        has_more: page.has_more,
        cursor: page.cursor,
    }
}

/// A signed link as `POST /v1/files/{id}/signed-url` shows it.
pub(crate) fn signed_url(link: SignedLink) -> SignedUrl {
    SignedUrl {
        url: link.url,
        expires_at: rfc3339_ms(link.expires.saturating_mul(1000)),
    }
}

/// What a bulk delete did, as `POST /v1/files/delete` shows it.
pub(crate) fn bulk_deleted(done: BulkDeleted) -> BulkDeleteResult {
    BulkDeleteResult {
        deleted: done.deleted,
        not_found: done.not_found,
    }
}

/// The body of a delivery: the event's type, its time, and the file record
/// as the API shows it.
pub(crate) fn event_body(app: &App, event: &OutboxEvent) -> Vec<u8> {
    let payload = serde_json::json!({
        "type": event.kind,
        "timestamp": rfc3339_ms(event.created_at),
        "data": record(app, &event.file),
    });
    serde_json::to_vec(&payload).unwrap_or_default()
}
