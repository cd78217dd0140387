//! The console's sign-in (`POST /console/session`), its check (`GET`) and
//! sign-out (`DELETE`), and how a `/v1` request presents a session: its
//! HttpOnly cookie, accepted only from the console's own page (the CSRF
//! rule, [`from_page`]).

use crate::api::{WhoAmI, WhoAmIAccount, WhoAmIKey};
use crate::server::error::ApiError;
use crate::service::caller::Caller;
use crate::service::{App, ServiceError};
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use std::sync::Arc;

/// The most a sign-in's body may hold (the route's body limit).
pub(crate) const SIGN_IN_MAX: usize = 8 * 1024;

/// The session cookie's name.
pub(crate) const COOKIE: &str = "filestore_console";

/// The header the console's page sends with every request: a page of
/// another origin cannot send it without a CORS preflight, which no route
/// grants for it.
pub(crate) const PAGE_HEADER: &str = "x-filestore-console";

/// The session id the request's cookie holds, if any.
pub(crate) fn cookie(headers: &HeaderMap) -> Option<&str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value.trim())
        .filter(|value| !value.is_empty())
}

/// The CSRF rule: a request the session cookie authenticates must come from
/// the console's page. It carries `X-Filestore-Console: 1` (a form or a
/// page of another origin cannot send it), its `Sec-Fetch-Site`, when the
/// browser sends one, is `same-origin`, and its `Origin`, when sent, is the
/// origin of `base_url` or the one the request is addressed to (`Host`).
/// Otherwise 403: the request changes nothing.
pub(crate) fn from_page(headers: &HeaderMap, base_url: &str) -> Result<(), ServiceError> {
    let refuse = |why: &str| {
        Err(ServiceError::Forbidden(format!(
            "a request signed in with the console's session must come from the console's page: {why}"
        )))
    };
    if headers
        .get(PAGE_HEADER)
        .is_none_or(|v| v.as_bytes() != b"1")
    {
        return refuse("it lacks the header X-Filestore-Console: 1");
    }
    if let Some(site) = headers.get("sec-fetch-site") {
        if site.as_bytes() != b"same-origin" {
            return refuse("it comes from another site or origin (Sec-Fetch-Site)");
        }
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
        let addressed = origin
            .split_once("://")
            .is_some_and(|(_, authority)| Some(authority) == host);
        if origin != origin_of(base_url) && !addressed {
            return refuse("its Origin is another origin");
        }
    }
    Ok(())
}

/// `scheme://host[:port]` of `url`.
pub(crate) fn origin_of(url: &str) -> &str {
    let start = url.find("://").map_or(0, |i| i + 3);
    let end = url[start..].find('/').map_or(url.len(), |i| start + i);
    &url[..end]
}

/// The signed-in caller, as `GET /v1/whoami` shows it.
fn who(caller: Caller) -> WhoAmI {
    WhoAmI {
        account: WhoAmIAccount {
            id: caller.account.id,
            name: caller.account.name,
        },
        key: WhoAmIKey {
            id: caller.key.id,
            kind: caller.key.kind.to_string(),
        },
        plan: caller.account.plan,
    }
}

/// The `Set-Cookie` of a session (`id`), or of its removal (None).
fn set_cookie(app: &App, id: Option<&str>) -> HeaderValue {
    cookie_header(id, app.config.base_url.starts_with("https://"))
}

/// The `Set-Cookie` value: `Secure` when the console is served over https.
fn cookie_header(id: Option<&str>, https: bool) -> HeaderValue {
    let secure = if https { "; Secure" } else { "" };
    let value = match id {
        Some(id) => format!("{COOKIE}={id}; Path=/; HttpOnly; SameSite=Strict{secure}"),
        None => format!("{COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0{secure}"),
    };
    HeaderValue::from_str(&value).unwrap_or_else(|_| HeaderValue::from_static(""))
}

/// The secret key a sign-in sends: `key=` of a form, or `{"key": ...}`.
fn sent_key(headers: &HeaderMap, body: &[u8]) -> Result<String, ServiceError> {
    let json = headers
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    let key = if json {
        #[derive(serde::Deserialize)]
        struct SignIn {
            key: String,
        }
        serde_json::from_slice::<SignIn>(body)
            .map_err(|e| {
                ServiceError::BadRequest(format!("the body must be {{\"key\": \"sk_…\"}}: {e}"))
            })?
            .key
    } else {
        form_urlencoded::parse(body)
            .find(|(name, _)| name == "key")
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default()
    };
    Ok(key)
}

/// `POST /console/session`: a secret key exchanged for a session (201, its
/// cookie set, and who signed in).
pub(crate) async fn sign_in(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    same_origin(&headers, &app.config.base_url)?;
    // A key is some fifty bytes: a body past [`SIGN_IN_MAX`] is refused
    // before it is held (strangers post here without any key).
    let body = body.map_err(|e| {
        ServiceError::BadRequest(format!(
            "a sign-in is a secret key in at most {SIGN_IN_MAX} bytes: {}",
            e.body_text()
        ))
    })?;
    let key = sent_key(&headers, &body)?;
    let (id, caller) = app.console_sign_in(&key).await?;
    let mut response = (StatusCode::CREATED, Json(who(caller))).into_response();
    response
        .headers_mut()
        .insert(header::SET_COOKIE, set_cookie(&app, Some(&id)));
    Ok(response)
}

/// A sign-in (whose page has no session yet, so no header to send) is
/// refused from another origin: no page of another site may sign a
/// visitor in to an account of its choosing.
fn same_origin(headers: &HeaderMap, base_url: &str) -> Result<(), ServiceError> {
    let mut marked = headers.clone();
    marked.insert(PAGE_HEADER, HeaderValue::from_static("1"));
    from_page(&marked, base_url)
}

/// `GET /console/session`: who the session's cookie signs in (200), or 401.
pub(crate) async fn current(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
) -> Result<Json<WhoAmI>, ApiError> {
    from_page(&headers, &app.config.base_url)?;
    let id = cookie(&headers)
        .ok_or_else(|| ServiceError::Unauthorized("not signed in to the console".into()))?;
    Ok(Json(who(app.console_caller(id).await?)))
}

/// `DELETE /console/session`: signs out (204; the cookie cleared).
pub(crate) async fn sign_out(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    from_page(&headers, &app.config.base_url)?;
    if let Some(id) = cookie(&headers) {
        app.console_sign_out(id).await?;
    }
    let mut response = StatusCode::NO_CONTENT.into_response();
    response
        .headers_mut()
        .insert(header::SET_COOKIE, set_cookie(&app, None));
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn the_cookie_is_found_among_others() {
        let h = headers(&[("cookie", "a=1; filestore_console=cs_x; b=2")]);
        assert_eq!(cookie(&h), Some("cs_x"));
        assert_eq!(cookie(&headers(&[("cookie", "a=1")])), None);
        assert_eq!(cookie(&headers(&[("cookie", "filestore_console=")])), None);
    }

    #[test]
    fn the_cookie_is_http_only_strict_and_secure_over_https() {
        let set = |id, https| cookie_header(id, https).to_str().unwrap().to_string();
        assert_eq!(
            set(Some("cs_1"), true),
            "filestore_console=cs_1; Path=/; HttpOnly; SameSite=Strict; Secure"
        );
        assert_eq!(
            set(Some("cs_1"), false),
            "filestore_console=cs_1; Path=/; HttpOnly; SameSite=Strict"
        );
        assert!(set(None, true).contains("Max-Age=0") && set(None, true).ends_with("; Secure"));
    }

    #[test]
    fn only_the_page_passes() {
        let base = "http://files.example:8080";
        let ok = |h: &[(&'static str, &'static str)]| from_page(&headers(h), base).is_ok();
        assert!(ok(&[("x-filestore-console", "1")]));
        assert!(!ok(&[]));
        assert!(!ok(&[
            ("x-filestore-console", "1"),
            ("sec-fetch-site", "cross-site")
        ]));
        assert!(!ok(&[
            ("x-filestore-console", "1"),
            ("sec-fetch-site", "same-site")
        ]));
        assert!(ok(&[
            ("x-filestore-console", "1"),
            ("sec-fetch-site", "same-origin")
        ]));
        assert!(ok(&[
            ("x-filestore-console", "1"),
            ("origin", "http://files.example:8080")
        ]));
        assert!(!ok(&[
            ("x-filestore-console", "1"),
            ("origin", "http://evil.example")
        ]));
        assert!(ok(&[
            ("x-filestore-console", "1"),
            ("origin", "http://127.0.0.1:9"),
            ("host", "127.0.0.1:9")
        ]));
        assert_eq!(origin_of("https://a.example/x/y"), "https://a.example");
        assert_eq!(origin_of("http://a:1"), "http://a:1");
    }
}
