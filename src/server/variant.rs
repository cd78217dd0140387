//! The HTTP of an image variant on the CDN route (`?w=&h=&fit=&format=&q=`):
//! its own ETag (the file's SHA-256 and the settled parameters, known before
//! any render, so a revalidation is a 304 at once), `Vary: Accept` when the
//! format follows `Accept`, ranges and HEAD as for a file; of what the file
//! carries from S3 only its caching and `Content-Language`
//! (`file_headers`). What is rendered
//! and stored is `service::images`'.

use super::conditional::{not_modified, put, ranged};
use super::error::ApiError;
use super::file_headers::{file_headers, Route, Served};
use crate::db::FileRow;
use crate::domain::transform::{Format, Transform};
use crate::service::cdn::{self, Found};
use crate::service::images::{self, Plan};
use crate::service::App;
use axum::body::Body;
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

pub(super) async fn serve(
    app: &Arc<App>,
    method: &Method,
    found: Found,
    (route, t): (Route, Transform),
    headers: &HeaderMap,
) -> Result<Response, ApiError> {
    let accept = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok());
    let plan = images::plan(app, &found.row, t, accept)?;
    let row = &found.row;
    if not_modified(headers, &plan.etag, row.created_at) {
        let h = variant_headers(row, route, &plan, plan.output.content_type());
        return Ok((StatusCode::NOT_MODIFIED, h).into_response());
    }
    let (v, bytes) = images::variant_with_bytes(app, &found, &plan).await?;
    // The type written (format=auto may have settled on WebP for a large
    // variant) names the body and its file name.
    let mut h = variant_headers(row, route, &plan, &v.content_type);
    let (status, offset, len) =
        if let Some(part) = ranged(&mut h, headers, &plan.etag, row.created_at, v.size)? {
            part
        } else {
            put(&mut h, header::CONTENT_LENGTH, &v.size.to_string());
            (StatusCode::OK, 0, v.size)
        };
    if method == Method::HEAD {
        return Ok((status, h).into_response());
    }
    if let Some(bytes) = bytes {
        // Both ends are within the variant, whose length is `bytes`'.
        let body = cdn::held_slice(app, &row.account_id, &bytes, offset, len);
        return Ok((status, h, Body::from(body)).into_response());
    }
    let stream = images::content(app, &v, &row.account_id, offset, len).await?;
    Ok((status, h, Body::from_stream(stream)).into_response())
}

/// The headers of the variant `plan` of `row` at `route` as `content_type`
/// (the plan's for a 304, the type written for its bytes): its ETag, its
/// type, its name with that type's extension, `Vary: Accept` when the
/// format follows `Accept`, and the file's other headers (`file_headers`).
/// The full path's and the hot path's (`server::hot`).
pub(super) fn variant_headers(
    row: &FileRow,
    route: Route,
    plan: &Plan,
    content_type: &str,
) -> HeaderMap {
    let name = renamed(&row.name, content_type.trim_start_matches("image/"));
    let served = Served {
        route,
        etag: &plan.etag,
        content_type,
        name: &name,
        variant: true,
    };
    let mut h = file_headers(row, &served);
    if plan.transform.format == Format::Auto {
        put(&mut h, header::VARY, "Accept");
    }
    h
}

/// The file's name with the variant's extension (`cat.jpg` as WebP is
/// `cat.webp`; a name without one gets it added).
fn renamed(name: &str, ext: &str) -> String {
    let stem = match name.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() => stem,
        _ => name,
    };
    format!("{stem}.{ext}")
}

#[cfg(test)]
mod tests {
    use super::renamed;

    #[test]
    fn names_take_the_variant_extension() {
        assert_eq!(renamed("cat.jpg", "webp"), "cat.webp");
        assert_eq!(renamed("a.b.png", "avif"), "a.b.avif");
        assert_eq!(renamed("photo", "jpeg"), "photo.jpeg");
        assert_eq!(renamed(".hidden", "png"), ".hidden.png");
    }
}
