//! `filestore admin verify [--json] [--rate SIZE]` beside a running server:
//! every file's blob there and matching its SHA-256 (exit 0), or the files
//! missing and damaged listed and marked (exit 1, the CDN answers 500
//! `damaged`); orphaned blobs listed, not removed, and no damage; a mark on
//! bytes that match again cleared. On the S3 blob store, the same check
//! through the service.

use super::{blob_path, flip_byte, DATA};
use crate::common::process::admin;
use crate::common::{error_code, Backend, TestServer};
use filestore::testing::service::verify::{verify, FileRef, Orphan};
use serde_json::{json, Value};

/// `admin verify ARGS` on `srv`'s data dir and database: (exit code, stdout, stderr).
fn run_verify(srv: &TestServer, args: &[&str]) -> (Option<i32>, String, String) {
    let url = srv
        .app
        .config
        .database_url
        .as_ref()
        .map(filestore::testing::config::Secret::expose);
    let mut all = vec!["verify"];
    all.extend_from_slice(args);
    let out = admin(&srv.data_dir, url, &all);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Which files of `srv` are marked damaged, in id order.
fn marked(srv: &TestServer) -> Vec<String> {
    let ids = srv.text(
        "SELECT COALESCE(MIN(id), '') || ',' || COALESCE(MAX(id), '') || ',' || COUNT(*) \
         FROM files WHERE damaged_at IS NOT NULL",
    );
    match ids.split(',').collect::<Vec<_>>()[..] {
        [_, _, "0"] => vec![],
        [one, _, "1"] => vec![one.to_string()],
        [first, last, "2"] => vec![first.to_string(), last.to_string()],
        _ => panic!("marked: {ids}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_verify_lists_and_marks_missing_and_damaged_files_and_orphans() {
    let srv = TestServer::on(Backend::LocalBlobs).await;
    let mut files = Vec::new();
    for name in ["a.bin", "b.bin", "c.bin"] {
        let v = srv.upload_ok(name, DATA(), &[("folder", "docs")]).await;
        files.push((
            v["id"].as_str().unwrap().to_string(),
            v["url"].as_str().unwrap().to_string(),
        ));
    }
    let [(flipped, flipped_url), (gone, gone_url), _] = &files[..] else {
        unreachable!()
    };
    // A blob nothing refers to: listed, never counted as damage.
    let orphan = format!("{}/orphan0blob", srv.account_id);
    std::fs::write(srv.data_dir.join("blobs").join(&orphan), b"left over").unwrap();
    let size = DATA().len() as u64;

    let (code, out, err) = run_verify(&srv, &["--json", "--rate", "256MiB/s"]);
    assert_eq!(code, Some(0), "{out}{err}");
    let report: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        report,
        json!({"files": 3, "bytes": 3 * size, "missing": [], "damaged": [],
               "orphaned": [{"blob": orphan}]})
    );

    flip_byte(&blob_path(&srv, flipped), 4321);
    std::fs::remove_file(blob_path(&srv, gone)).unwrap();
    let (code, out, err) = run_verify(&srv, &["--json"]);
    assert_eq!(code, Some(1), "{out}{err}");
    let report: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(
        report,
        json!({"files": 3, "bytes": 3 * size,
               "missing": [{"id": gone, "path": "docs/b.bin"}],
               "damaged": [{"id": flipped, "path": "docs/a.bin"}],
               "orphaned": [{"blob": orphan}]})
    );
    assert!(err.contains("admin verify --repair-from"), "{err}");
    // Both marked: the CDN never serves them (nor says 404), health says so.
    let mut both = vec![flipped.clone(), gone.clone()];
    both.sort();
    assert_eq!(marked(&srv), both);
    for url in [flipped_url, gone_url] {
        let r = srv.http.get(url).send().await.unwrap();
        assert_eq!(error_code(r).await, (500, "damaged".into()));
    }
    let (_, health) = srv.get_json(&srv.secret_key, "/v1/health").await;
    let note = health["checks"]["storage"]["error"].as_str().unwrap_or("");
    assert!(note.starts_with("2 damaged"), "{health}");
    // The orphan is still there.
    assert!(srv.data_dir.join("blobs").join(&orphan).exists());

    // Its bytes put back by hand: the next verify clears its mark.
    flip_byte(&blob_path(&srv, flipped), 4321);
    let (code, out, err) = run_verify(&srv, &[]);
    assert_eq!(code, Some(1), "{out}{err}");
    assert!(
        out.contains(&format!("missing   {gone}  docs/b.bin")),
        "{out}"
    );
    assert!(
        out.contains("3 files") && out.contains("1 missing, 0 damaged, 1 orphaned"),
        "{out}"
    );
    assert_eq!(marked(&srv), vec![gone.clone()]);
    // The CDN serves it whole again (what it kept of the file lasts a second).
    srv.eventually(5, "the CDN serves it again", || async {
        let r = srv.http.get(flipped_url).send().await.unwrap();
        r.status() == 200 && r.bytes().await.unwrap()[..] == DATA()[..]
    })
    .await;

    // A rate that is no size is a usage error.
    let (code, _, err) = run_verify(&srv, &["--rate", "fast"]);
    assert_eq!(code, Some(2), "{err}");
}

/// The same check on the S3 blob store (its listing of keys, its reads).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_on_the_s3_store_finds_a_flipped_byte_a_lost_blob_and_an_orphan() {
    let Some(backend) = Backend::s3("verify_on_s3") else {
        return;
    };
    let srv = TestServer::on(backend).await;
    let store = &srv.app.store;
    let put = |key: String, bytes: Vec<u8>| async move {
        let tmp = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(tmp.path(), &bytes).unwrap();
        let n = bytes.len() as u64;
        store.put_file(&key, tmp.into_temp_path(), n).await.unwrap();
    };
    let mut ids = Vec::new();
    for name in ["a.bin", "b.bin", "c.bin"] {
        let v = srv.upload_ok(name, DATA(), &[]).await;
        ids.push(v["id"].as_str().unwrap().to_string());
    }
    let key_of = |id: &str| srv.text(&format!("SELECT blob_key FROM files WHERE id = '{id}'"));
    let mut bytes = DATA();
    bytes[77] ^= 0xff;
    put(key_of(&ids[0]), bytes).await;
    store.delete(&key_of(&ids[1])).await.unwrap();
    let orphan = format!("{}/orphan0blob", srv.account_id);
    put(orphan.clone(), b"left over".to_vec()).await;

    let report = verify(&*srv.app.meta, &**store, 0, || 1_000).await.unwrap();
    assert_eq!((report.files, report.bytes), (3, 3 * DATA().len() as u64));
    let named = |i: usize, name: &str| FileRef {
        id: ids[i].clone(),
        path: name.into(),
    };
    assert_eq!(report.damaged, vec![named(0, "a.bin")]);
    assert_eq!(report.missing, vec![named(1, "b.bin")]);
    assert_eq!(report.orphaned, vec![Orphan { blob: orphan }]);
    assert!(!report.clean());
    let mut two = vec![ids[0].clone(), ids[1].clone()];
    two.sort();
    assert_eq!(marked(&srv), two);
}
