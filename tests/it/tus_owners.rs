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
use crate::common::{error_code, pg, TestOptions, TestServer};
use filestore::testing::domain::tus::encode_metadata;
use serde_json::Value;
use std::time::Duration;

const TUS: (&str, &str) = ("tus-resumable", "1.0.0");
const OCTETS: (&str, &str) = ("content-type", "application/offset+octet-stream");
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_is_its_creators_and_the_accounts_secret_keys() {
    let srv = TestServer::start().await;
    let owner = Client::public(&srv).await;
    let other_public = Client::public(&srv).await;
    let secret = Client::secret(&srv, &srv.secret_key);
    let (_, foreign_key) = srv.new_account("other", "free").await;
    let foreign = Client::secret(&srv, &foreign_key);

    // A public key's upload: no other public key of the account, and no
    // key of another account, can see, continue, read or end it.
    let url = owner.created(10).await;
    for c in [&other_public, &foreign] {
        assert_eq!(c.head(&url).await.status(), 404);
        let r = c.status(&url).await;
        assert_eq!(error_code(r).await, (404, "not_found".into()));
        let r = c.patch(&url, 0, vec![1; 4]).await;
        assert_eq!(error_code(r).await, (404, "not_found".into()));
        let r = c.delete(&url).await;
        assert_eq!(error_code(r).await, (404, "not_found".into()));
    }
    // Its creator continues it; a secret key of the account may too.
    assert_eq!(owner.patch(&url, 0, vec![1; 4]).await.status(), 204);
    let r = secret.head(&url).await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["upload-offset"], "4");
    assert_eq!(secret.patch(&url, 4, vec![2; 3]).await.status(), 204);
    let r = owner.head(&url).await;
    assert_eq!(r.headers()["upload-offset"], "7");

    // A secret key's upload is not a public key's to touch.
    let theirs = secret.created(5).await;
    assert_eq!(owner.head(&theirs).await.status(), 404);
    let r = owner.patch(&theirs, 0, vec![3; 5]).await;
    assert_eq!(error_code(r).await, (404, "not_found".into()));
    let r = owner.delete(&theirs).await;
    assert_eq!(error_code(r).await, (404, "not_found".into()));
    assert_eq!(secret.head(&theirs).await.headers()["upload-offset"], "0");

    // The completing PATCH by the creator; the status is the creator's and
    // the secret key's only.
    let r = owner.patch(&url, 7, vec![4; 3]).await;
    assert_eq!(r.status(), 204);
    let file_id = r.headers()["x-file-id"].to_str().unwrap().to_string();
    for c in [&owner, &secret] {
        let body: Value = c.status(&url).await.json().await.unwrap();
        assert_eq!(body["file"]["id"], file_id.as_str());
    }
    assert_eq!(other_public.status(&url).await.status(), 404);

    // A secret key ends a public key's upload.
    let abandoned = owner.created(8).await;
    assert_eq!(secret.delete(&abandoned).await.status(), 204);
    assert_eq!(owner.head(&abandoned).await.status(), 404);
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_account_holds_at_most_its_plans_open_uploads() {
    let srv = TestServer::start_with(TestOptions {
        plans_toml: Some("[plans.free]\nopen_uploads = 2\n".into()),
        ..Default::default()
    })
    .await;
    let secret = Client::secret(&srv, &srv.secret_key);
    let public = Client::public(&srv).await;
    let first = secret.created(10).await;
    let second = public.created(10).await;
    // A third, whoever asks: 429 with Retry-After until the first of the
    // open ones expires (the public key's, 10 minutes from now).
    for c in [&secret, &public] {
        let r = c.create(10).await;
        assert_eq!(r.status(), 429);
        let wait = seconds(&r, "retry-after");
        assert!((599..=600).contains(&wait), "Retry-After {wait}");
        assert_eq!(r.headers()["x-ratelimit-limit"], "2");
        assert_eq!(
            error_code(r).await,
            (429, "rate_limit_exceeded".into()),
            "past open_uploads"
        );
    }
    // Another account is not held by this one's uploads.
    let (_, other_key) = srv.new_account("other", "free").await;
    let other = Client::secret(&srv, &other_key);
    other.created(10).await;
    // Completing one frees its place at once; so does ending one.
    assert_eq!(secret.patch(&first, 0, vec![1; 10]).await.status(), 204);
    let third = secret.created(10).await;
    assert_eq!(secret.create(10).await.status(), 429);
    assert_eq!(secret.delete(&third).await.status(), 204);
    secret.created(10).await;
    assert_eq!(secret.create(10).await.status(), 429);
    // And so does one expiring (the public key's, untouched for 10 minutes).
    srv.clock.advance(Duration::from_secs(601));
    assert_eq!(public.head(&second).await.status(), 410);
    secret.created(10).await;
    srv.stop().await;
}

/// Creations at once never pass `open_uploads` together: the count is
/// checked in the transaction that creates the upload.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn creations_at_once_never_pass_open_uploads_together() {
    let srv = TestServer::start_with(TestOptions {
        plans_toml: Some("[plans.free]\nopen_uploads = 3\n".into()),
        ..Default::default()
    })
    .await;
    let secret = Client::secret(&srv, &srv.secret_key);
    let creating: Vec<_> = (0..20).map(|_| secret.create(10)).collect();
    let mut statuses: Vec<u16> = futures_util::future::join_all(creating)
        .await
        .iter()
        .map(|r| r.status().as_u16())
        .collect();
    statuses.sort_unstable();
    assert_eq!(statuses[..3], [201; 3]);
    assert_eq!(statuses[3..], [429; 17]);
    let (_, body) = secret.list().await;
    assert_eq!(body["uploads"].as_array().unwrap().len(), 3);
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_public_keys_upload_expires_after_ten_minutes_without_a_byte() {
    let srv = TestServer::start().await;
    let public = Client::public(&srv).await;
    let secret = Client::secret(&srv, &srv.secret_key);
    let url = public.created(100).await;
    let kept = secret.created(100).await;
    let r = public.head(&url).await;
    expires_in(&srv, &r, 600);
    // A secret key's upload keeps the day.
    expires_in(&srv, &secret.head(&kept).await, 24 * 3600);
    // Bytes after 9 minutes: 10 more minutes from then.
    srv.clock.advance(Duration::from_mins(9));
    let r = public.patch(&url, 0, vec![1; 10]).await;
    assert_eq!(r.status(), 204);
    expires_in(&srv, &r, 600);
    // A PATCH without bytes does not keep it.
    srv.clock.advance(Duration::from_mins(5));
    let r = public.patch(&url, 10, Vec::new()).await;
    assert_eq!(r.status(), 204);
    expires_in(&srv, &r, 300);
    // 10 minutes after its last byte it is gone, its reservation with it;
    // the secret key's upload, as old, is not.
    srv.clock.advance(Duration::from_mins(5));
    let r = public.head(&url).await;
    assert_eq!(r.status(), 410);
    let r = public.patch(&url, 10, vec![1; 10]).await;
    assert_eq!(error_code(r).await, (410, "upload_expired".into()));
    assert_eq!(secret.head(&kept).await.status(), 200);
    srv.eventually(10, "the expired upload is removed", || async {
        public.head(&url).await.status() == 404
    })
    .await;
    assert_eq!(srv.usage().await["reserved_bytes"], 100);
    srv.stop().await;
}

/// The attack: a page's public key reserves the account's whole storage
/// quota with uploads that never send a byte. The account's own uploads are
/// refused only until a secret key ends those reservations, or for the 10
/// minutes they live untouched, not for a day.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_public_keys_untouched_reservations_hold_the_quota_for_minutes_only() {
    let srv = TestServer::start_with(TestOptions {
        plans_toml: Some("[plans.free]\nstorage = 2000\n".into()),
        reap_interval: Some(Duration::from_millis(100)),
        ..Default::default()
    })
    .await;
    let public = Client::public(&srv).await;
    let secret = Client::secret(&srv, &srv.secret_key);
    let refused = || async {
        let r = srv.upload("mine.txt", vec![1; 10], &[]).await;
        error_code(r).await == (413, "storage_limit_exceeded".into())
    };
    public.created(1000).await;
    public.created(1000).await;
    assert!(refused().await, "the reservations hold the quota");
    // A secret key ends them at once.
    let (_, body) = secret.list().await;
    for u in body["uploads"].as_array().unwrap() {
        let url = srv.url(&format!("/v1/uploads/{}", u["id"].as_str().unwrap()));
        assert_eq!(secret.delete(&url).await.status(), 204);
    }
    assert_eq!(srv.upload("mine.txt", vec![1; 10], &[]).await.status(), 201);
    // Or, left alone, they go 10 minutes later.
    srv.clock.advance(Duration::from_secs(1));
    public.created(990).await;
    public.created(1000).await;
    assert!(refused().await);
    srv.clock.advance(Duration::from_mins(9));
    assert!(refused().await, "still held after 9 minutes");
    srv.clock.advance(Duration::from_mins(1));
    srv.eventually(10, "the untouched reservations expire", || async {
        srv.upload("later.txt", vec![1; 10], &[]).await.status() == 201
    })
    .await;
    assert_eq!(srv.usage().await["reserved_bytes"], 0);
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secret_keys_list_and_end_the_accounts_open_uploads() {
    let srv = TestServer::start().await;
    let secret = Client::secret(&srv, &srv.secret_key);
    let public = Client::public(&srv).await;
    let (_, other_key) = srv.new_account("other", "free").await;
    let other = Client::secret(&srv, &other_key);
    assert_eq!(srv.usage().await["reserved_bytes"], 0);

    let by_secret = secret.created(1000).await;
    srv.clock.advance(Duration::from_secs(1));
    let by_public = public.created(300).await;
    assert_eq!(
        public.patch(&by_public, 0, vec![7; 120]).await.status(),
        204
    );
    srv.clock.advance(Duration::from_secs(1));
    let done = secret.created(5).await;
    assert_eq!(secret.patch(&done, 0, vec![1; 5]).await.status(), 204);
    other.created(50).await;

    // Newest first; complete uploads and other accounts' are not listed.
    let (status, body) = secret.list().await;
    assert_eq!(status, 200, "{body}");
    let uploads = body["uploads"].as_array().unwrap();
    let ids: Vec<&str> = uploads.iter().map(|u| u["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [id_of(&by_public), id_of(&by_secret)]);
    let p = &uploads[0];
    assert_eq!((&p["offset"], &p["length"]), (&120.into(), &300.into()));
    assert_eq!(p["created_by"], key_id(&srv, &public.key).await.as_str());
    assert_eq!(
        uploads[1]["created_by"],
        key_id(&srv, &srv.secret_key).await.as_str()
    );
    assert!(p["expires_at"].as_str().unwrap().ends_with('Z'));
    // What they hold against the quota.
    let usage = srv.usage().await;
    assert_eq!(
        (&usage["reserved_bytes"], &usage["storage_bytes"]),
        (&1300.into(), &5.into())
    );

    // Public keys may not list (403), no key is 401.
    let (status, _) = public.list().await;
    assert_eq!(status, 403);
    let r = srv.http.get(srv.url("/v1/uploads")).send().await.unwrap();
    assert_eq!(error_code(r).await, (401, "unauthorized".into()));

    // The secret key cancels the public key's reservation.
    assert_eq!(secret.delete(&by_public).await.status(), 204);
    let (_, body) = secret.list().await;
    assert_eq!(body["uploads"].as_array().unwrap().len(), 1);
    assert_eq!(srv.usage().await["reserved_bytes"], 1000);
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_leased_elsewhere_answers_423_with_retry_after() {
    let srv = TestServer::start().await;
    let secret = Client::secret(&srv, &srv.secret_key);
    let url = secret.created(10).await;
    let id = id_of(&url);
    // A request elsewhere holds the upload's lease.
    let now = srv.clock.now_ms();
    let meta = &srv.app.meta;
    assert!(meta
        .lease_upload(&id, "elsewhere", now, now + 60_000)
        .await
        .unwrap());
    let r = secret.patch(&url, 0, vec![1; 10]).await;
    assert_eq!(r.status(), 423);
    assert_eq!(seconds(&r, "retry-after"), 1);
    assert_eq!(error_code(r).await, (423, "locked".into()));
    // Reading it is not held up; nothing was written.
    assert_eq!(secret.head(&url).await.headers()["upload-offset"], "0");
    // Once it is given back, the retried PATCH goes through.
    meta.release_upload(&id, "elsewhere").await.unwrap();
    let r = secret.patch(&url, 0, vec![1; 10]).await;
    assert_eq!(r.status(), 204);
    assert!(r.headers().contains_key("x-file-id"));
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_patch_whose_lease_was_taken_stops_and_records_nothing() {
    let srv = TestServer::start().await;
    let secret = Client::secret(&srv, &srv.secret_key);
    let bytes: Vec<u8> = (0..100u8).collect();
    let url = secret.created(100).await;
    let id = id_of(&url);
    // A PATCH whose body trickles in.
    let (tx, patching) = trickle(&secret, &url);
    tx.send(Ok(bytes::Bytes::from(bytes[..10].to_vec())))
        .await
        .unwrap();
    let lease = format!("SELECT COALESCE(lease_token, '') FROM tus_uploads WHERE id = '{id}'");
    srv.eventually(10, "the PATCH holds the lease", || async {
        !srv.text(&lease).is_empty()
    })
    .await;
    // It stalls past its lease, and another request takes the upload.
    srv.clock.advance(Duration::from_secs(11));
    let now = srv.clock.now_ms();
    assert!(srv
        .app
        .meta
        .lease_upload(&id, "taker", now, now + 60_000)
        .await
        .unwrap());
    // Its next bytes are refused once it has seen that (at its renewal).
    let mut sent = 10;
    while !patching.is_finished() && sent < 60 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        if tx
            .send(Ok(bytes::Bytes::from(vec![bytes[sent]])))
            .await
            .is_err()
        {
            break;
        }
        sent += 1;
    }
    drop(tx);
    let r = patching.await.unwrap().unwrap();
    assert_eq!(error_code(r).await, (423, "locked".into()));
    assert_eq!(secret.head(&url).await.headers()["upload-offset"], "0");
    // The taker's turn ends; the upload goes on from what was recorded.
    srv.app.meta.release_upload(&id, "taker").await.unwrap();
    let r = secret.patch(&url, 0, bytes.clone()).await;
    assert_eq!(r.status(), 204);
    holds(&srv, &r, &bytes).await;
    srv.stop().await;
}

/// Two nodes on one PostgreSQL database (and one data dir): node A's PATCH
/// in progress makes node B answer 423; once A's database session is gone
/// (as when A is killed: its session ends with it) B continues the upload at
/// once, and A's PATCH, whenever it ends, records nothing over B's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_of_a_node_whose_session_is_gone_is_free_at_once() {
    if pg::admin_url().is_none() {
        eprintln!(
            "skipped: set FILESTORE_TEST_DATABASE_URL to run this PostgreSQL (two-node) test; \
             on SQLite one node's restart ends every lease"
        );
        return;
    }
    let a = TestServer::start().await;
    let b = second_node(
        &a,
        TestOptions {
            data_dir: Some(a.data_dir.clone()),
            ..Default::default()
        },
    )
    .await;
    let on_a = Client::secret(&a, &a.secret_key);
    let on_b = Client::secret(&b, &a.secret_key);
    let bytes: Vec<u8> = (0..100u8).collect();
    let url = on_a.created(100).await;
    let id = id_of(&url);
    let url_b = url.replace(&a.base_url, &b.base_url);
    let (tx, patching) = trickle(&on_a, &url);
    tx.send(Ok(bytes::Bytes::from(bytes[..10].to_vec())))
        .await
        .unwrap();
    let lease = format!("SELECT COALESCE(lease_node::TEXT, '') FROM tus_uploads WHERE id = '{id}'");
    a.eventually(10, "A's PATCH holds the lease", || async {
        !a.text(&lease).is_empty()
    })
    .await;
    let node = a.text(&lease);
    let r = on_b.patch(&url_b, 0, bytes.clone()).await;
    assert_eq!(r.status(), 423, "held by a live node's request");
    // Node A's session goes (the backend holding its advisory lock; the
    // call returns once it has exited).
    let gone = pg::count(
        a.database_url(),
        &format!(
            "SELECT COUNT(pg_terminate_backend(pid, 5000)) FROM pg_locks
             WHERE locktype = 'advisory' AND objsubid = 2 AND objid = {node} AND granted"
        ),
    );
    assert_eq!(gone, 1, "node A's session");
    let r = on_b.patch(&url_b, 0, bytes.clone()).await;
    assert_eq!(r.status(), 204, "free at once: {:?}", r.text().await);
    let file_id = r.headers()["x-file-id"].to_str().unwrap().to_string();
    // A's PATCH ends: refused (its lease or its offset is gone).
    drop(tx);
    let r = patching.await.unwrap().unwrap();
    let (status, _) = error_code(r).await;
    assert!([409, 423].contains(&status), "{status}");
    let (status, file) = b
        .get_json(&a.secret_key, &format!("/v1/files/{file_id}"))
        .await;
    assert_eq!(status, 200);
    assert_eq!(file["sha256"], crate::common::sha256_hex(&bytes).as_str());
    assert_eq!(file["size"], 100);
    b.stop().await;
    a.stop().await;
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
    if let Some(db) = srv.app.sqlite() {
        db.conn()
            .unwrap()
            .execute_batch(&format!(
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
    match srv.app.sqlite() {
        Some(db) => db
            .conn()
            .unwrap()
            .execute_batch(&format!("DROP TRIGGER {name}"))
            .unwrap(),
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

/// One PATCH that takes longer than a public key's 10 minutes of idle time
/// (a whole file in one PATCH, on a slow link): its upload does not expire
/// under it, and it completes with every byte.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_patch_receiving_bytes_keeps_its_upload_alive_past_the_idle_time() {
    let srv = TestServer::start().await;
    let public = Client::public(&srv).await;
    let bytes: Vec<u8> = (0..100u8).collect();
    let url = public.created(100).await;
    let id = id_of(&url);
    let (tx, patching) = trickling(&srv, &public, &url, &bytes[..10]).await;
    // 12 minutes pass while the PATCH runs: at each renewal of its lease,
    // the upload lives 10 more minutes.
    for (step, part) in [(0, 10..40), (1, 40..70)] {
        srv.clock.advance(Duration::from_mins(6));
        let now = srv.clock.now_ms();
        srv.eventually(10, "a renewal keeps the upload alive", || async {
            stored_expiry(&srv, &id) >= now + 600_000
        })
        .await;
        tx.send(Ok(bytes::Bytes::from(bytes[part].to_vec())))
            .await
            .unwrap_or_else(|_| panic!("the PATCH ended at step {step}"));
    }
    tx.send(Ok(bytes::Bytes::from(bytes[70..].to_vec())))
        .await
        .unwrap();
    drop(tx);
    let r = ended(patching, "the PATCH").await;
    assert_eq!(r.status(), 204, "{:?}", r.text().await);
    holds(&srv, &r, &bytes).await;
    srv.stop().await;
}

/// A page's public key trickles a PATCH just fast enough to be kept: a
/// secret key of the account still cancels the upload at once, and the
/// PATCH stops (recording nothing) without waiting for its next byte.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delete_ends_a_patch_in_progress() {
    let srv = TestServer::start().await;
    let public = Client::public(&srv).await;
    let secret = Client::secret(&srv, &srv.secret_key);
    let url = public.created(100).await;
    let (tx, patching) = trickling(&srv, &public, &url, &[1; 10]).await;
    let deleting = secret.delete(&url);
    let r = tokio::time::timeout(Duration::from_secs(30), deleting)
        .await
        .expect("the DELETE waited behind the PATCH");
    assert_eq!(r.status(), 204);
    let r = ended(patching, "the PATCH").await;
    let (status, _) = error_code(r).await;
    assert!([404, 423].contains(&status), "{status}");
    drop(tx);
    assert_eq!(secret.head(&url).await.status(), 404);
    assert_eq!(srv.usage().await["reserved_bytes"], 0);

    // A request on another node holding the upload does not stop a
    // termination either: it loses its lease (its next renewal says so).
    let url = secret.created(10).await;
    let id = id_of(&url);
    let now = srv.clock.now_ms();
    let meta = &srv.app.meta;
    assert!(meta
        .lease_upload(&id, "elsewhere", now, now + 60_000)
        .await
        .unwrap());
    assert_eq!(secret.delete(&url).await.status(), 204);
    assert!(!meta
        .lease_upload(&id, "elsewhere", now, now + 60_000)
        .await
        .unwrap());
    assert_eq!(secret.head(&url).await.status(), 404);
    srv.stop().await;
}

/// A second PATCH of an upload while one runs on the same node is told to
/// come back (423, Retry-After), not queued behind it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_patch_on_the_same_node_answers_423() {
    let srv = TestServer::start().await;
    let secret = Client::secret(&srv, &srv.secret_key);
    let bytes: Vec<u8> = (0..100u8).collect();
    let url = secret.created(100).await;
    let (tx, patching) = trickling(&srv, &secret, &url, &bytes[..10]).await;
    let second = secret.patch(&url, 0, bytes.clone());
    let r = tokio::time::timeout(Duration::from_secs(30), second)
        .await
        .expect("the second PATCH waited behind the first");
    assert_eq!(r.status(), 423);
    assert_eq!(seconds(&r, "retry-after"), 1);
    assert_eq!(error_code(r).await, (423, "locked".into()));
    // The first goes on undisturbed.
    tx.send(Ok(bytes::Bytes::from(bytes[10..].to_vec())))
        .await
        .unwrap();
    drop(tx);
    let r = ended(patching, "the first PATCH").await;
    assert_eq!(r.status(), 204);
    holds(&srv, &r, &bytes).await;
    srv.stop().await;
}

/// A node cut off from the database (its renewals fail) stops its PATCH
/// once its lease has lapsed (another node may hold the upload by then),
/// even while no byte comes, and records nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_patch_whose_lease_lapsed_unrenewed_stops_and_records_nothing() {
    let srv = TestServer::start().await;
    let secret = Client::secret(&srv, &srv.secret_key);
    let bytes: Vec<u8> = (0..100u8).collect();
    let url = secret.created(100).await;
    let (tx, patching) = trickling(&srv, &secret, &url, &bytes[..10]).await;
    refuse(&srv, "cut_off", "UPDATE OF lease_until", "tus_uploads");
    srv.clock.advance(Duration::from_secs(11));
    let r = ended(patching, "the PATCH").await;
    assert_eq!(error_code(r).await, (423, "locked".into()));
    drop(tx);
    allow(&srv, "cut_off", "tus_uploads");
    assert_eq!(secret.head(&url).await.headers()["upload-offset"], "0");
    // Its lease (not given back: the release failed too) lapses.
    srv.clock.advance(Duration::from_secs(11));
    let r = secret.patch(&url, 0, bytes.clone()).await;
    assert_eq!(r.status(), 204, "{:?}", r.text().await);
    holds(&srv, &r, &bytes).await;
    srv.stop().await;
}

/// An `Idempotency-Key` answers its upload to the key that created it (or a
/// secret key of the account) only: another public key of the account gets
/// 400, no upload, and cannot append to it with its creation's body.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idempotency_key_replays_only_to_a_key_that_may_use_its_upload() {
    let srv = TestServer::start().await;
    let owner = Client::public(&srv).await;
    let other = Client::public(&srv).await;
    let secret = Client::secret(&srv, &srv.secret_key);
    let create = |c: &Client<'_>, body: Option<Vec<u8>>| {
        let mut r = c
            .request(reqwest::Method::POST, &srv.url("/v1/uploads"))
            .header("upload-length", 10)
            .header("idempotency-key", "one-key");
        if let Some(body) = body {
            r = r.header(OCTETS.0, OCTETS.1).body(body);
        }
        r.send()
    };
    let r = create(&owner, None).await.unwrap();
    assert_eq!(r.status(), 201);
    let url = r.headers()["location"].to_str().unwrap().to_string();
    for body in [None, Some(vec![9; 4])] {
        let r = create(&other, body).await.unwrap();
        assert_eq!(error_code(r).await, (400, "bad_request".into()));
    }
    assert_eq!(owner.head(&url).await.headers()["upload-offset"], "0");
    let (_, listed) = secret.list().await;
    assert_eq!(listed["uploads"].as_array().unwrap().len(), 1);
    // Its creator and the account's secret keys get it back.
    for c in [&owner, &secret] {
        let r = create(c, None).await.unwrap();
        assert_eq!(r.status(), 201);
        assert_eq!(r.headers()["location"], url.as_str());
    }
    let r = create(&owner, Some(vec![1; 10])).await.unwrap();
    assert_eq!(r.status(), 201);
    assert_eq!(r.headers()["upload-offset"], "10");
    srv.stop().await;
}

/// A creation the account's limits refuse is refused before any work in
/// the blob store (not even the guard of a blob to come).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_creation_does_no_store_work() {
    let srv = TestServer::start_with(TestOptions {
        plans_toml: Some("[plans.free]\nopen_uploads = 1\nstorage = 1000\n".into()),
        ..Default::default()
    })
    .await;
    let secret = Client::secret(&srv, &srv.secret_key);
    secret.created(10).await;
    let blobs = srv.blob_count().await;
    refuse(&srv, "no_store_work", "INSERT", "blob_deletions");
    let r = secret.create(10).await;
    assert_eq!(error_code(r).await, (429, "rate_limit_exceeded".into()));
    let r = secret.create(5000).await;
    assert_eq!(error_code(r).await, (413, "storage_limit_exceeded".into()));
    allow(&srv, "no_store_work", "blob_deletions");
    assert_eq!(srv.blob_count().await, blobs);
    srv.stop().await;
}

/// An upload that ends while its last PATCH runs (here its time is made to
/// run out under it) answers that PATCH 410, not a server error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_ended_under_its_last_patch_answers_410() {
    let srv = TestServer::start().await;
    let secret = Client::secret(&srv, &srv.secret_key);
    let url = secret.created(20).await;
    let id = id_of(&url);
    let (tx, patching) = trickling(&srv, &secret, &url, &[1; 10]).await;
    let past = format!("UPDATE tus_uploads SET expires_at = 1 WHERE id = '{id}'");
    match srv.app.sqlite() {
        Some(db) => {
            db.conn().unwrap().execute(&past, []).unwrap();
        }
        None => pg::execute(srv.database_url(), &past),
    }
    tx.send(Ok(bytes::Bytes::from(vec![2; 10]))).await.unwrap();
    drop(tx);
    let r = ended(patching, "the PATCH").await;
    assert_eq!(error_code(r).await, (410, "upload_expired".into()));
    srv.stop().await;
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
