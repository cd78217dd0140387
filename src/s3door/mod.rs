//! The S3 door (CONTRACT §18): the account's files spoken to in the S3
//! protocol on a listener of their own. `s3s` parses the requests, checks
//! their SigV4 signatures (header, presigned, aws-chunked chunk and trailer
//! signatures) and writes the XML; this door maps its operations onto the
//! service core, as `server` maps /v1's, and renders the core's refusals as
//! S3's errors. It reaches no database: every rule is the core's.

mod auth;

use crate::service::App;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use axum::Router;
use std::sync::Arc;

/// What every request of the door shares.
#[derive(Clone)]
pub(crate) struct Door {
    s3: s3s::service::S3Service,
}

/// The operations, on the service core.
#[derive(Clone)]
pub(crate) struct Ops {
    pub(crate) app: Arc<App>,
}

#[async_trait::async_trait]
impl s3s::S3 for Ops {}

/// The door's whole application, served by `server::conn` like /v1's.
pub(crate) fn router(app: Arc<App>) -> Router {
    let mut builder = s3s::service::S3ServiceBuilder::new(Ops { app: app.clone() });
    builder.set_auth(auth::Credentials { app: app.clone() });
    builder.set_access(auth::Admission { app: app.clone() });
    let mut config = s3s::config::S3Config::default();
    // DeleteObjects of 1,000 keys is about 100 KB of XML: nothing bigger is
    // read into memory.
    config.xml_max_body_size = 2 << 20;
    builder.set_config(Arc::new(s3s::config::StaticConfigProvider::new(Arc::new(
        config,
    ))));
    if let Some(domain) = &app.config.s3.domain {
        if let Ok(host) = s3s::host::SingleDomain::new(domain) {
            builder.set_host(host);
        }
    }
    let door = Door {
        s3: builder.build(),
    };
    Router::new().fallback(serve).with_state(door)
}

async fn serve(State(door): State<Door>, req: Request) -> Response {
    let req = req.map(s3s::Body::http_body_unsync);
    match door.s3.call(req).await {
        Ok(resp) => resp.map(Body::new),
        Err(e) => {
            tracing::error!(error = ?e, "S3 door: unanswered request");
            Response::builder()
                .status(500)
                .body(Body::empty())
                .expect("a static response")
        }
    }
}
