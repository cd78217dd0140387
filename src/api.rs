//! Wire types shared by the server and the client: exactly the records of SPEC.md.

use serde::{Deserialize, Serialize};

/// A stored file, as upload, get and list return it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRecord {
    pub id: String,
    pub url: Option<String>,
    pub name: String,
    pub folder: Option<String>,
    pub size: u64,
    #[serde(rename = "type")]
    pub content_type: String,
    pub private: bool,
    pub expires_at: Option<String>,
    pub created_at: String,
}

/// One page of `GET /v1/files`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileList {
    pub files: Vec<FileRecord>,
    pub has_more: bool,
    pub cursor: Option<String>,
}

/// Answer of `POST /v1/files/{id}/signed-url`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignedUrl {
    pub url: String,
    pub expires_at: String,
}

/// Body of `POST /v1/files/{id}/signed-url`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct SignedUrlRequest {
    pub expires_in: u64,
}

/// Answer of `DELETE /v1/files/{id}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeleteResult {
    pub success: bool,
}

/// Answer of `GET /v1/usage`: the spec's four fields, plus (an addition, so
/// that clients can show "used of quota") the plan's name and its limits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub storage_bytes: u64,
    pub bandwidth_bytes: u64,
    pub upload_count: u64,
    pub period_start: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<UsageLimits>,
}

/// The plan's limits, in the units of the usage counters they bound:
/// storage quota, monthly bandwidth (fair use), monthly uploads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageLimits {
    pub storage_bytes: u64,
    pub bandwidth_bytes: u64,
    pub upload_count: u64,
}

/// One dependency of the health report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HealthCheck {
    pub status: String,
    pub latency_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Answer of `GET /v1/health`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Health {
    pub status: String,
    pub timestamp: String,
    pub checks: std::collections::BTreeMap<String, HealthCheck>,
}

/// The envelope of every error response: `{"error": {"code", "message"}}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ErrorDetail {
    pub code: String,
    pub message: String,
}
