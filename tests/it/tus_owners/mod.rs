//! Resumable uploads and who holds them: an upload is its creating key's
//! (and its account's secret keys'), an account holds at most its plan's
//! `open_uploads` incomplete ones, a public key's upload that receives no
//! byte for 10 minutes expires, secret keys list and cancel them, usage
//! reports what they reserve, and a lease held elsewhere answers 423 (free
//! at once, on PostgreSQL, when its node's database session is gone). A
//! PATCH receiving bytes keeps its upload alive however long it runs; a
//! termination ends a PATCH in progress; a PATCH whose lease lapsed
//! unrenewed stops; an `Idempotency-Key` is its upload's creator's; a
//! refused creation does no work in the blob store.
//! On SQLite or PostgreSQL, whichever the suite runs on.

use crate::common::cluster::second_node;
use crate::common::cluster::{OCTETS, TUS};
use crate::common::{error_code, pg, TestOptions, TestServer};
use filestore::testing::domain::tus::encode_metadata;
use serde_json::Value;
use std::time::Duration;

mod expiry;
mod leases;
mod ownership;
mod quota;
mod termination;

const ORIGIN: &str = "https://app.example.com";

/// A key as a tus client uses it (a public key sends its page's origin).
struct Client<'s> {
    srv: &'s TestServer,
    key: String,
    origin: Option<&'static str>,
}

impl<'s> Client<'s> {
    fn secret(srv: &'s TestServer, key: &str) -> Client<'s> {
        Client {
            srv,
            key: key.to_string(),
            origin: None,
        }
    }

    async fn public(srv: &'s TestServer) -> Client<'s> {
        Client {
            srv,
            key: srv.new_key("public", &[ORIGIN]).await,
            origin: Some(ORIGIN),
        }
    }

    fn request(&self, method: reqwest::Method, url: &str) -> reqwest::RequestBuilder {
        let mut r = self
            .srv
            .http
            .request(method, url)
            .bearer_auth(&self.key)
            .header(TUS.0, TUS.1);
        if let Some(origin) = self.origin {
            r = r.header("origin", origin);
        }
        r
    }

    async fn create(&self, length: u64) -> reqwest::Response {
        self.request(reqwest::Method::POST, &self.srv.url("/v1/uploads"))
            .header("upload-length", length)
            .header("upload-metadata", encode_metadata(&[("filename", "o.bin")]))
            .send()
            .await
            .unwrap()
    }

    /// Creates an upload: its URL.
    async fn created(&self, length: u64) -> String {
        let r = self.create(length).await;
        assert_eq!(r.status(), 201, "{:?}", r.text().await);
        r.headers()["location"].to_str().unwrap().to_string()
    }

    async fn head(&self, url: &str) -> reqwest::Response {
        self.request(reqwest::Method::HEAD, url)
            .send()
            .await
            .unwrap()
    }

    async fn status(&self, url: &str) -> reqwest::Response {
        self.request(reqwest::Method::GET, url)
            .send()
            .await
            .unwrap()
    }

    async fn patch(&self, url: &str, offset: u64, body: Vec<u8>) -> reqwest::Response {
        self.request(reqwest::Method::PATCH, url)
            .header(OCTETS.0, OCTETS.1)
            .header("upload-offset", offset)
            .body(body)
            .send()
            .await
            .unwrap()
    }

    async fn delete(&self, url: &str) -> reqwest::Response {
        self.request(reqwest::Method::DELETE, url)
            .send()
            .await
            .unwrap()
    }

    /// `GET /v1/uploads`: status and body.
    async fn list(&self) -> (u16, Value) {
        let r = self
            .request(reqwest::Method::GET, &self.srv.url("/v1/uploads"))
            .send()
            .await
            .unwrap();
        let status = r.status().as_u16();
        (status, r.json().await.unwrap_or(Value::Null))
    }
}

type Chunk = Result<bytes::Bytes, std::io::Error>;

/// A PATCH at offset 0 whose body trickles in: the sender of its chunks and
/// the request in flight.
fn trickle(
    c: &Client<'_>,
    url: &str,
) -> (
    tokio::sync::mpsc::Sender<Chunk>,
    tokio::task::JoinHandle<reqwest::Result<reqwest::Response>>,
) {
    let (tx, rx) = tokio::sync::mpsc::channel::<Chunk>(4);
    let body = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|chunk| (chunk, rx))
    });
    let request = c
        .request(reqwest::Method::PATCH, url)
        .header(OCTETS.0, OCTETS.1)
        .header("upload-offset", 0)
        .body(reqwest::Body::wrap_stream(body));
    (tx, tokio::spawn(request.send()))
}

/// The id of the upload at `url`.
fn id_of(url: &str) -> String {
    url.rsplit('/').next().unwrap().to_string()
}

/// The key id (`key_…`) of a key, as the server knows it.
async fn key_id(srv: &TestServer, key: &str) -> String {
    let hash = filestore::testing::domain::ids::key_hash(key);
    let (record, _) = srv.app.meta.key_by_hash(hash).await.unwrap().unwrap();
    record.id
}

fn seconds(r: &reqwest::Response, name: &str) -> i64 {
    r.headers()[name].to_str().unwrap().parse().unwrap()
}

/// Asserts that `Upload-Expires` is `secs` from the server's clock (give or
/// take the second or two a request takes, and the header's whole seconds).
fn expires_in(srv: &TestServer, r: &reqwest::Response, secs: i64) {
    let at = httpdate::parse_http_date(r.headers()["upload-expires"].to_str().unwrap()).unwrap();
    let at = at.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    let left = at - srv.clock.now_ms() / 1000;
    assert!(
        (secs - 2..=secs).contains(&left),
        "expires in {left} s, not {secs}"
    );
}

/// The upload's `expires_at` (ms) as the store holds it.
fn stored_expiry(srv: &TestServer, id: &str) -> i64 {
    srv.text(&format!(
        "SELECT CAST(expires_at AS TEXT) FROM tus_uploads WHERE id = '{id}'"
    ))
    .parse()
    .unwrap()
}

/// Makes `event` on `table` (e.g. `UPDATE OF lease_until`) fail, until
/// [`allow`]: a database that refuses one kind of write.
fn refuse(srv: &TestServer, name: &str, event: &str, table: &str) {
    if let Some(db) = srv.sqlite() {
        db.execute_batch(&format!(
            "CREATE TRIGGER {name} BEFORE {event} ON {table}
                 BEGIN SELECT RAISE(ABORT, '{name}'); END"
        ))
        .unwrap();
    } else {
        let url = srv.database_url();
        pg::execute(
            url,
            &format!(
                "CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql
                 AS $$ BEGIN RAISE EXCEPTION '{name}'; END $$"
            ),
        );
        pg::execute(
            url,
            &format!(
                "CREATE TRIGGER {name} BEFORE {event} ON {table}
                 FOR EACH ROW EXECUTE FUNCTION {name}()"
            ),
        );
    }
}

fn allow(srv: &TestServer, name: &str, table: &str) {
    match srv.sqlite() {
        Some(db) => db.execute_batch(&format!("DROP TRIGGER {name}")).unwrap(),
        None => pg::execute(
            srv.database_url(),
            &format!("DROP TRIGGER {name} ON {table}"),
        ),
    }
}

/// Waits (bounded: a hang fails the test) for a request in flight.
async fn ended(
    request: tokio::task::JoinHandle<reqwest::Result<reqwest::Response>>,
    what: &str,
) -> reqwest::Response {
    tokio::time::timeout(Duration::from_secs(30), request)
        .await
        .unwrap_or_else(|_| panic!("{what} never ended"))
        .unwrap()
        .unwrap()
}

/// Starts a trickling PATCH of `url` from `c` and sends its first bytes;
/// returns once it holds the upload's lease.
async fn trickling(
    srv: &TestServer,
    c: &Client<'_>,
    url: &str,
    first: &[u8],
) -> (
    tokio::sync::mpsc::Sender<Chunk>,
    tokio::task::JoinHandle<reqwest::Result<reqwest::Response>>,
) {
    let (tx, patching) = trickle(c, url);
    tx.send(Ok(bytes::Bytes::from(first.to_vec())))
        .await
        .unwrap();
    let id = id_of(url);
    let lease = format!("SELECT COALESCE(lease_token, '') FROM tus_uploads WHERE id = '{id}'");
    srv.eventually(10, "the PATCH holds the lease", || async {
        !srv.text(&lease).is_empty()
    })
    .await;
    (tx, patching)
}

/// The file a completing PATCH (`r`) names holds `bytes`.
async fn holds(srv: &TestServer, r: &reqwest::Response, bytes: &[u8]) {
    let file_id = r.headers()["x-file-id"].to_str().unwrap();
    let (status, file) = srv
        .get_json(&srv.secret_key, &format!("/v1/files/{file_id}"))
        .await;
    assert_eq!(status, 200);
    assert_eq!(file["sha256"], crate::common::sha256_hex(bytes).as_str());
}
