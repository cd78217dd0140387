//! The small API calls: a file's record, the listings, deletion, signed
//! URLs, upload tokens and usage.

use super::answer::{read_json, Fetched};
use super::error::ClientError;
use super::http::Client;
use std::collections::HashSet;
use std::sync::atomic::{AtomicU32, Ordering};

/// The cursors of one listing, followed page by page: a cursor given twice
/// is a server going round in circles (a protocol error), not more pages.
#[derive(Debug, Default)]
pub(crate) struct Cursors(HashSet<String>);

impl Cursors {
    /// The cursor of the page after `page`; None when the listing is done.
    pub(crate) fn next(
        &mut self,
        page: &crate::api::FileList,
    ) -> Result<Option<String>, ClientError> {
        match &page.cursor {
            Some(c) if page.has_more => {
                if !self.0.insert(c.clone()) {
                    return Err(ClientError::Protocol(format!(
                        "the server gave the listing's cursor {c:?} twice"
                    )));
                }
                Ok(Some(c.clone()))
            }
            _ => Ok(None),
        }
    }
}

impl Client {
    /// `GET /v1/files/{id}`.
    pub(crate) async fn get_file(
        &self,
        id: &str,
    ) -> Result<Fetched<crate::api::FileRecord>, ClientError> {
        let url = self.file_url(id, "");
        read_json(
            self.send(|| self.request(reqwest::Method::GET, &url))
                .await?,
        )
        .await
    }

    /// `GET /v1/files/at?path=P`: the newest file at a path (404 when none).
    pub(crate) async fn file_at(
        &self,
        path: &str,
    ) -> Result<Fetched<crate::api::FileRecord>, ClientError> {
        let mut url = reqwest::Url::parse(&self.url("files/at"))
            .map_err(|e| ClientError::usage(format!("invalid server URL: {e}")))?;
        url.query_pairs_mut().append_pair("path", path);
        read_json(
            self.send(|| self.request(reqwest::Method::GET, url.as_str()))
                .await?,
        )
        .await
    }

    /// `GET /v1/files` with the given filter (a folder, and `metadata.KEY=VALUE`
    /// pairs that must all match), page size and cursor.
    pub(crate) async fn list(
        &self,
        folder: Option<&str>,
        recursive: bool,
        metadata: &[(String, String)],
        limit: u32,
        cursor: Option<&str>,
    ) -> Result<Fetched<crate::api::FileList>, ClientError> {
        let mut url = reqwest::Url::parse(&self.url("files"))
            .map_err(|e| ClientError::usage(format!("invalid server URL: {e}")))?;
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("limit", &limit.to_string());
            if let Some(f) = folder {
                q.append_pair("folder", f);
                if recursive {
                    q.append_pair("recursive", "true");
                }
            }
            for (key, value) in metadata {
                q.append_pair(&format!("metadata.{key}"), value);
            }
            if let Some(c) = cursor {
                q.append_pair("cursor", c);
            }
        }
        let resp = self
            .send(|| self.request(reqwest::Method::GET, url.as_str()))
            .await?;
        read_json(resp).await
    }

    /// `GET /v1/folders?parent=P`: one page of the immediate subfolders of
    /// `parent` (None: the root) that hold a file at any depth, by name.
    pub(crate) async fn folders(
        &self,
        parent: Option<&str>,
        limit: u32,
        cursor: Option<&str>,
    ) -> Result<Fetched<crate::api::FolderList>, ClientError> {
        let mut url = reqwest::Url::parse(&self.url("folders"))
            .map_err(|e| ClientError::usage(format!("invalid server URL: {e}")))?;
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("limit", &limit.to_string());
            if let Some(p) = parent {
                q.append_pair("parent", p);
            }
            if let Some(c) = cursor {
                q.append_pair("cursor", c);
            }
        }
        let resp = self
            .send(|| self.request(reqwest::Method::GET, url.as_str()))
            .await?;
        read_json(resp).await
    }

    /// `DELETE /v1/files/{id}`. A 404 to a retry means an earlier attempt
    /// deleted the file but its answer was lost: that is a success.
    pub(crate) async fn delete(
        &self,
        id: &str,
    ) -> Result<Fetched<crate::api::DeleteResult>, ClientError> {
        let url = self.file_url(id, "");
        let attempts = AtomicU32::new(0);
        let result = self
            .send(|| {
                attempts.fetch_add(1, Ordering::Relaxed);
                self.request(reqwest::Method::DELETE, &url)
            })
            .await;
        match result {
            Ok(resp) => read_json(resp).await,
            Err(e) if e.status() == Some(404) && attempts.load(Ordering::Relaxed) > 1 => {
                tracing::debug!(%id, "a retried delete found the file gone: deleted earlier");
                Ok(Fetched {
                    record: crate::api::DeleteResult { success: true },
                    raw: serde_json::json!({ "success": true }),
                })
            }
            Err(e) => Err(e),
        }
    }

    /// `PATCH /v1/files/{id}`: a rename or move (the same change twice
    /// gives the same record, so it is retried as a read is).
    pub(crate) async fn update_file(
        &self,
        id: &str,
        body: &crate::api::FileUpdate,
    ) -> Result<Fetched<crate::api::FileRecord>, ClientError> {
        let url = self.file_url(id, "");
        let resp = self
            .send(|| self.request(reqwest::Method::PATCH, &url).json(body))
            .await?;
        read_json(resp).await
    }

    /// `POST /v1/files/{id}/copy`: a new file with the same bytes. Sent
    /// with one `Idempotency-Key` for all its attempts, so a retry whose
    /// first answer was lost gets the same copy, made once.
    pub(crate) async fn copy_file(
        &self,
        id: &str,
        body: &crate::api::FileCopy,
    ) -> Result<Fetched<crate::api::FileRecord>, ClientError> {
        let url = self.file_url(id, "/copy");
        let key = super::upload::idempotency_key();
        let resp = self
            .send(|| {
                self.request(reqwest::Method::POST, &url)
                    .header("Idempotency-Key", key.as_str())
                    .json(body)
            })
            .await?;
        read_json(resp).await
    }

    /// `DELETE /v1/folders?folder=F`: every file in F and below (a retry
    /// deletes what is left, so it is retried).
    pub(crate) async fn delete_folder(
        &self,
        folder: &str,
    ) -> Result<Fetched<crate::api::FolderDeleteResult>, ClientError> {
        let mut url = reqwest::Url::parse(&self.url("folders"))
            .map_err(|e| ClientError::usage(format!("invalid server URL: {e}")))?;
        url.query_pairs_mut().append_pair("folder", folder);
        let resp = self
            .send(|| self.request(reqwest::Method::DELETE, url.as_str()))
            .await?;
        read_json(resp).await
    }

    /// `POST /v1/files/{id}/signed-url`.
    pub(crate) async fn sign(
        &self,
        id: &str,
        expires_in: u64,
        transform: Option<crate::api::TransformRequest>,
    ) -> Result<Fetched<crate::api::SignedUrl>, ClientError> {
        let url = self.file_url(id, "/signed-url");
        let body = crate::api::SignedUrlRequest {
            expires_in,
            transform,
            by_path: None,
        };
        let resp = self
            .send(|| self.request(reqwest::Method::POST, &url).json(&body))
            .await?;
        read_json(resp).await
    }

    /// `POST /v1/upload-tokens`: a new upload token, with its secret and URL.
    pub(crate) async fn create_upload_token(
        &self,
        body: &crate::api::UploadTokenRequest,
    ) -> Result<Fetched<crate::api::UploadToken>, ClientError> {
        let url = self.url("upload-tokens");
        let resp = self
            .send(|| self.request(reqwest::Method::POST, &url).json(body))
            .await?;
        read_json(resp).await
    }

    /// `GET /v1/upload-tokens`: the active upload tokens.
    pub(crate) async fn upload_tokens(
        &self,
    ) -> Result<Fetched<crate::api::UploadTokenList>, ClientError> {
        let url = self.url("upload-tokens");
        read_json(
            self.send(|| self.request(reqwest::Method::GET, &url))
                .await?,
        )
        .await
    }

    /// `DELETE /v1/upload-tokens/{id}` (revoking twice is the same, so it
    /// is retried).
    pub(crate) async fn revoke_upload_token(
        &self,
        id: &str,
    ) -> Result<Fetched<crate::api::DeleteResult>, ClientError> {
        let url = self.item_url("upload-tokens", id, "");
        read_json(
            self.send(|| self.request(reqwest::Method::DELETE, &url))
                .await?,
        )
        .await
    }

    /// `GET /v1/s3/credentials`: the calling key's S3 credential and door.
    pub(crate) async fn s3_credentials(
        &self,
    ) -> Result<Fetched<crate::api::S3Credentials>, ClientError> {
        let url = self.url("s3/credentials");
        read_json(
            self.send(|| self.request(reqwest::Method::GET, &url))
                .await?,
        )
        .await
    }

    /// `GET /v1/whoami`: the calling key and its account.
    pub(crate) async fn whoami(&self) -> Result<Fetched<crate::api::WhoAmI>, ClientError> {
        let url = self.url("whoami");
        read_json(
            self.send(|| self.request(reqwest::Method::GET, &url))
                .await?,
        )
        .await
    }

    /// `GET /v1/usage`.
    pub(crate) async fn usage(&self) -> Result<Fetched<crate::api::Usage>, ClientError> {
        let url = self.url("usage");
        read_json(
            self.send(|| self.request(reqwest::Method::GET, &url))
                .await?,
        )
        .await
    }
}
