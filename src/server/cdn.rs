//! The CDN routes: `GET`/`HEAD /live/<account>/<file>/<name>` and the
//! stable links `GET`/`HEAD /p/<account>/<path>`, the HTTP of them: which
//! file (or path) and signature the request names (what may be served, and
//! the counting of its bytes, is `service::cdn`'s), and the file's SHA-256 as
//! `Content-Digest` on a whole-file 200; conditional requests and ranges are
//! `conditional`'s, the file's headers `file_headers`' (for both routes).

use super::conditional::{not_modified, put, ranged};
use super::error::ApiError;
use super::file_headers::{file_headers, Route, Served};
use super::variant;
use crate::domain::digest;
use crate::domain::transform::Transform;
use crate::service::cdn::{self, Content};
use crate::service::download::Socket;
use crate::service::App;
use crate::service::ServiceError;
use axum::body::Body;
use axum::extract::{Extension, Path, Query, RawQuery, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

/// A signed URL's query: `expires` (unix seconds) and `signature`.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct SignatureParams {
    expires: Option<String>,
    signature: Option<String>,
}

pub(crate) async fn serve_file(
    State(app): State<Arc<App>>,
    method: Method,
    Path((account_id, file_id, name)): Path<(String, String, String)>,
    Query(query): Query<SignatureParams>,
    RawQuery(raw): RawQuery,
    socket: Option<Extension<Arc<Socket>>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    // The connection's socket (`server::conn` gives it): a download reads
    // ahead of it by one window, and is charged what it accepts.
    let socket = socket.map(|Extension(s)| s);
    let (transform, scope) = variant_of(raw.as_deref())?;
    let found = cdn::open(
        &app,
        &account_id,
        &file_id,
        &name,
        query.expires,
        query.signature,
        scope.as_deref(),
    )
    .await?;
    let route = Route::Live;
    Ok(respond(&app, &method, found, (route, transform), &headers, socket).await?)
}

/// The image variant a CDN URL's query asks for, and its canonical
/// parameters (what a signature covers), if it asks for one.
fn variant_of(raw: Option<&str>) -> Result<(Option<Transform>, Option<String>), ServiceError> {
    let transform =
        Transform::from_query(raw.unwrap_or("")).map_err(|e| ServiceError::BadRequest(e.0))?;
    Ok((transform, transform.map(|t| t.canonical())))
}

/// How many times a stable link looks its path up again when the file it
/// found went before its bytes were read (deleted meanwhile; a replaced
/// file's bytes stay a while, `db::REPLACED_KEPT_MS`).
const PATH_LOOKUPS: usize = 3;

/// A stable link: the newest file at `path` (docs/api.md, "Paths and stable
/// links"), as `/live/…` serves a file, but by default `Cache-Control:
/// no-cache` on a public one and its variants (a re-published file is seen
/// at once; its ETag revalidates it): `file_headers`, [`Route::Path`].
pub(crate) async fn serve_path(
    State(app): State<Arc<App>>,
    method: Method,
    Path((account_id, path)): Path<(String, String)>,
    Query(query): Query<SignatureParams>,
    RawQuery(raw): RawQuery,
    socket: Option<Extension<Arc<Socket>>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let socket = socket.map(|Extension(s)| s);
    let (transform, scope) = variant_of(raw.as_deref())?;
    let mut lookups = 0;
    loop {
        lookups += 1;
        let found = cdn::open_path(
            &app,
            &account_id,
            &path,
            query.expires.clone(),
            query.signature.clone(),
            scope.as_deref(),
        )
        .await?;
        let asked = (Route::Path, transform);
        match respond(&app, &method, found, asked, &headers, socket.clone()).await {
            Ok(response) => return Ok(response),
            // Its bytes went after its row was read: the path again.
            Err(ServiceError::NotFound(_)) if lookups < PATH_LOOKUPS => {}
            Err(e) => return Err(e.into()),
        }
    }
}

/// The answer for a file the caller may read at `route`: a variant of it,
/// or the file (conditionals, a range, HEAD).
async fn respond(
    app: &Arc<App>,
    method: &Method,
    found: cdn::Found,
    (route, transform): (Route, Option<Transform>),
    headers: &HeaderMap,
    socket: Option<Arc<Socket>>,
) -> Result<Response, ServiceError> {
    if let Some(t) = transform {
        return variant::serve(app, method, found, (route, t), headers)
            .await
            .map_err(|ApiError(e)| e);
    }
    let row = &found.row;
    let etag = format!("\"{}\"", row.sha256);
    let mut h = file_headers(row, &Served::file(route, row, &etag));
    if not_modified(headers, &etag, row.created_at) {
        return Ok((StatusCode::NOT_MODIFIED, h).into_response());
    }
    let Some((status, offset, len)) = ranged(&mut h, headers, &etag, row.created_at, row.size)?
    else {
        // The digest of the whole content (RFC 9530): never on a part.
        if let Some(d) = digest::content_digest(&row.sha256) {
            put(&mut h, header::HeaderName::from_static(digest::HEADER), &d);
        }
        return whole(app, method, found, h, socket).await;
    };
    if method == Method::HEAD {
        return Ok((status, h).into_response());
    }
    let body = body(found.content(app, offset, len, socket).await?);
    Ok((status, h, body).into_response())
}

async fn whole(
    app: &Arc<App>,
    method: &Method,
    found: cdn::Found,
    mut h: HeaderMap,
    socket: Option<Arc<Socket>>,
) -> Result<Response, ServiceError> {
    let size = found.row.size;
    put(&mut h, header::CONTENT_LENGTH, &size.to_string());
    if *method == Method::HEAD {
        return Ok((StatusCode::OK, h).into_response());
    }
    let body = body(found.content(app, 0, size, socket).await?);
    Ok((StatusCode::OK, h, body).into_response())
}

fn body(content: Content) -> Body {
    match content {
        Content::Inline(bytes) => Body::from(bytes),
        Content::Stream(counted) => Body::from_stream(counted),
    }
}
