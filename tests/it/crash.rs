//! kill -9 in the middle of 100 concurrent uploads, then a restart: every
//! upload that was answered 201 is there, byte for byte; nothing else is
//! (rows and blobs match one to one, usage is the sum of the sizes, no spool
//! file is left). On SQLite, or on PostgreSQL when the suite runs there
//! (`FILESTORE_TEST_DATABASE_URL`): the database outlives the process.

use crate::common::process::{free_port, Serve, ServeProcess};
use crate::common::{count, get_bytes, pg, upload_form};
use filestore::testing::db::sqlite::Db;
use sha2::{Digest, Sha256};
use std::path::Path;
use std::time::Duration;

/// The metadata of a crashing server: its SQLite file, or its PostgreSQL
/// database when the suite runs there.
struct Meta {
    sqlite: Option<Db>,
    pg: Option<String>,
    data: std::path::PathBuf,
}

impl Meta {
    async fn of(data: &Path) -> Meta {
        Meta {
            sqlite: None,
            pg: pg::database_for(data).await,
            data: data.to_path_buf(),
        }
    }

    /// After the server's first start (which creates the SQLite file).
    fn opened(mut self) -> Meta {
        if self.pg.is_none() {
            self.sqlite = Some(Db::open(&self.data.join("filestore.db")).unwrap());
        }
        self
    }

    fn count(&self, sql: &str) -> i64 {
        match (&self.sqlite, &self.pg) {
            (Some(db), _) => count(db, sql),
            (None, Some(url)) => pg::count(url, sql),
            (None, None) => panic!("the database is not open yet"),
        }
    }

    /// The first column of the first row, as text.
    fn text(&self, sql: &str) -> String {
        match (&self.sqlite, &self.pg) {
            (Some(db), _) => db.conn().unwrap().query_row(sql, [], |r| r.get(0)).unwrap(),
            (None, Some(url)) => pg::text(url, sql),
            (None, None) => panic!("the database is not open yet"),
        }
    }

    fn file_ids(&self) -> Vec<String> {
        let agg = match self.sqlite {
            Some(_) => "SELECT COALESCE(group_concat(id, ','), '') FROM files",
            None => "SELECT COALESCE(string_agg(id, ','), '') FROM files",
        };
        let ids = self.text(agg);
        ids.split(',')
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect()
    }
}

/// `serve` on the crashing server's data dir and database, on `port`
/// (a restart comes back where it was).
fn serve(meta: &Meta, port: u16) -> ServeProcess {
    Serve::new(&meta.data)
        .database_url(meta.pg.as_deref())
        .port(port)
        .env("FILESTORE_DEFAULT_PLAN", "pro")
        .start()
}

fn body(i: usize) -> Vec<u8> {
    // Small (inline) and large (blob) files, each with its own bytes.
    let len = if i.is_multiple_of(2) {
        3_000 + i
    } else {
        3_000_000 + i * 1000
    };
    (0..len).map(|j| ((j * 31 + i * 7) % 251) as u8).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_mid_uploads_loses_nothing_acknowledged_and_leaves_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let (data, port) = (dir.path().join("data"), free_port());
    let db = Meta::of(&data).await;
    let mut child = serve(&db, port);
    let key = child.key();
    let db = db.opened();
    let http = reqwest::Client::new();
    let base = format!("http://127.0.0.1:{port}");
    let answered = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for i in 0..100 {
        let (http, base, key) = (http.clone(), base.clone(), key.clone());
        let answered = answered.clone();
        tasks.push(tokio::spawn(async move {
            let form = upload_form(&format!("f{i}.bin"), body(i), &[]);
            let r = http
                .post(format!("{base}/v1/upload"))
                .bearer_auth(key)
                .multipart(form)
                .send()
                .await
                .ok()?;
            if r.status() != 201 {
                return None;
            }
            let rec: serde_json::Value = r.json().await.ok()?;
            answered.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            Some((i, rec["id"].as_str()?.to_string()))
        }));
    }
    // Let some finish, then kill the server in the middle of the rest.
    let acked = kill_after(&mut child, &answered, 20, tasks).await;
    assert!(
        !acked.is_empty() && acked.len() < 100,
        "the kill should land mid-way ({} of 100 answered)",
        acked.len()
    );

    let mut child = serve(&db, port);
    // The restart queues what the crash left; the collector removes it.
    let count = |sql: &str| db.count(sql);
    collected(&db).await;
    // Every acknowledged upload is there, byte for byte, with its SHA-256.
    for (i, id) in &acked {
        let r = http
            .get(format!("{base}/v1/files/{id}"))
            .bearer_auth(&key)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "acknowledged file {id} lost");
        let rec: serde_json::Value = r.json().await.unwrap();
        let bytes = get_bytes(&http, rec["url"].as_str().unwrap()).await;
        let expected = body(*i);
        assert_eq!(bytes.len(), expected.len(), "{id}");
        assert!(bytes[..] == expected[..], "{id}: bytes differ");
        let sha = db.text(&format!("SELECT sha256 FROM files WHERE id = '{id}'"));
        assert_eq!(sha, hex::encode(Sha256::digest(&expected)));
    }
    let rows = count("SELECT COUNT(*) FROM files") as usize;
    assert!(
        rows >= acked.len(),
        "{rows} rows, {} acknowledged",
        acked.len()
    );
    eprintln!(
        "kill -9: {} of 100 uploads answered 201 before it, {rows} files after the restart",
        acked.len()
    );
    check_rows_blobs_usage(&db, &data);

    // The same during deletes: kill -9 while every file is being deleted.
    let mut ids = db.file_ids();
    let deleted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for id in ids.clone() {
        let (http, base, key, deleted) = (http.clone(), base.clone(), key.clone(), deleted.clone());
        tasks.push(tokio::spawn(async move {
            let r = http
                .delete(format!("{base}/v1/files/{id}"))
                .bearer_auth(key)
                .send()
                .await
                .ok()?;
            (r.status() == 200).then(|| {
                deleted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                id
            })
        }));
    }
    let gone = kill_after(&mut child, &deleted, ids.len() / 3, tasks).await;
    let mut child = serve(&db, port);
    collected(&db).await;
    // Each file is either whole (row and readable bytes) or gone (404);
    // every delete that answered 200 is gone.
    ids.sort();
    for id in &ids {
        let r = http
            .get(format!("{base}/v1/files/{id}"))
            .bearer_auth(&key)
            .send()
            .await
            .unwrap();
        match r.status().as_u16() {
            404 => {}
            200 => {
                assert!(!gone.contains(id), "{id} was deleted (200) but is back");
                let rec: serde_json::Value = r.json().await.unwrap();
                let got = http.get(rec["url"].as_str().unwrap()).send().await.unwrap();
                assert_eq!(got.status(), 200, "{id} has a row but no bytes");
                let len = got.bytes().await.unwrap().len() as u64;
                assert_eq!(len, rec["size"].as_u64().unwrap());
            }
            other => panic!("{id}: {other}"),
        }
    }
    eprintln!(
        "kill -9 during deletes: {} of {} answered 200 before it",
        gone.len(),
        ids.len()
    );
    check_rows_blobs_usage(&db, &data);
    child.kill_9();
}

/// Waits until `n` requests are answered, kills the server (-9), and
/// returns what each request got (None: it failed or was cut off).
async fn kill_after<T>(
    child: &mut ServeProcess,
    answered: &std::sync::atomic::AtomicUsize,
    n: usize,
    tasks: Vec<tokio::task::JoinHandle<Option<T>>>,
) -> Vec<T> {
    let deadline = tokio::time::Instant::now() + Duration::from_mins(1);
    while answered.load(std::sync::atomic::Ordering::SeqCst) < n {
        assert!(
            tokio::time::Instant::now() < deadline,
            "no requests answered"
        );
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    child.kill_9();
    let mut got = Vec::new();
    for t in tasks {
        got.extend(t.await.unwrap());
    }
    got
}

/// Waits until the collector has removed what the crash left (at most 20 s).
async fn collected(db: &Meta) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        if db.count("SELECT COUNT(*) FROM blob_deletions") == 0 {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "collector never caught up"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Rows and blobs match one to one; usage is the sum of the sizes; no spool.
fn check_rows_blobs_usage(db: &Meta, data: &Path) {
    let count = |sql: &str| db.count(sql);
    // Rows and blobs match one to one; usage is the sum of the sizes.
    let blob_rows = count("SELECT COUNT(*) FROM files WHERE NOT inline") as usize;
    let inline_rows = count("SELECT COUNT(*) FROM files WHERE inline");
    assert_eq!(count("SELECT COUNT(*) FROM inline_blobs"), inline_rows);
    let blobs: usize = std::fs::read_dir(data.join("blobs"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|d| std::fs::read_dir(d.path()).unwrap().count())
        .sum();
    assert_eq!(blobs, blob_rows, "a blob for every row, no other");
    let sizes = count("SELECT CAST(COALESCE(SUM(size), 0) AS BIGINT) FROM files");
    assert_eq!(
        count("SELECT CAST(SUM(storage_bytes) AS BIGINT) FROM accounts"),
        sizes
    );
    assert_eq!(
        std::fs::read_dir(data.join("tmp")).unwrap().count(),
        0,
        "spool left"
    );
}

/// A resumable upload through `kill -9`: every PATCH answered 204 is still
/// there after the restart (HEAD gives its offset), the upload goes on from
/// it, and the file is the bytes sent, with their SHA-256.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_mid_resumable_upload_keeps_every_acknowledged_patch() {
    let dir = tempfile::tempdir().unwrap();
    let (data, port) = (dir.path().join("data"), free_port());
    let db = Meta::of(&data).await;
    let mut child = serve(&db, port);
    let key = child.key();
    let http = reqwest::Client::new();
    let base = format!("http://127.0.0.1:{port}");
    let bytes: Vec<u8> = (0..40_000_000usize)
        .map(|j| ((j * 13) % 251) as u8)
        .collect();
    let r = http
        .post(format!("{base}/v1/uploads"))
        .bearer_auth(&key)
        .header("tus-resumable", "1.0.0")
        .header("upload-length", bytes.len())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let url = r.headers()["location"].to_str().unwrap().to_string();
    let patch = |offset: usize, end: usize| {
        http.patch(&url)
            .bearer_auth(&key)
            .header("tus-resumable", "1.0.0")
            .header("content-type", "application/offset+octet-stream")
            .header("upload-offset", offset)
            .body(bytes[offset..end].to_vec())
            .send()
    };
    let piece = 4_000_000;
    for i in 0..3 {
        let r = patch(i * piece, (i + 1) * piece).await.unwrap();
        assert_eq!(r.status(), 204);
    }
    // A fourth PATCH in flight when the process dies.
    let in_flight = tokio::spawn(patch(3 * piece, bytes.len()));
    tokio::time::sleep(Duration::from_millis(30)).await;
    child.kill_9();
    let _ = in_flight.await;
    let mut child = serve(&db, port);
    let head = http
        .head(&url)
        .bearer_auth(&key)
        .header("tus-resumable", "1.0.0")
        .send()
        .await
        .unwrap();
    assert_eq!(head.status(), 200);
    let offset: usize = head.headers()["upload-offset"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(offset >= 3 * piece, "acknowledged PATCHes kept: {offset}");
    // On SQLite the restart ended the dead process's lease on the upload; on
    // PostgreSQL (other nodes may share it) the lease lapses within 10 s:
    // 409 until then, as a tus client that retries sees it.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let r = loop {
        let r = patch(offset, bytes.len()).await.unwrap();
        if r.status() != 409 || db.pg.is_none() || tokio::time::Instant::now() > deadline {
            break r;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    assert_eq!(r.status(), 204, "{:?}", r.text().await);
    let id = r.headers()["x-file-id"].to_str().unwrap().to_string();
    let rec: serde_json::Value = http
        .get(format!("{base}/v1/files/{id}"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(rec["sha256"], hex::encode(Sha256::digest(&bytes)).as_str());
    let got = get_bytes(&http, rec["url"].as_str().unwrap()).await;
    assert!(got[..] == bytes[..], "the file is the bytes sent");
    child.kill_9();
}
