//! A node killed (-9) while its upload was mid-way in an S3 multipart
//! upload: a surviving node on the same PostgreSQL database aborts that
//! multipart upload once the dead node's session has been gone a while
//! (30 s), well within the 10 minutes allowed; the multipart upload behind
//! a resumable upload the dead node had started is kept, since the upload
//! is the row's, not the node's, and the survivor finishes it.
//!
//! Needs `FILESTORE_TEST_DATABASE_URL` (`contrib/pg-test.sh s3_dead_node`)
//! and `weed` on PATH (a SeaweedFS of this test's own, which it freezes for
//! a moment); skips, saying why, without them.

use crate::common::get_bytes;
use crate::common::process::{Serve, ServeProcess};
use crate::common::s3::{self, Seaweed};
use crate::common::{pg, sha256_hex, Backend, TestOptions, TestServer};
use filestore::testing::config::StorageConfig;
use filestore::testing::domain::tus::encode_metadata;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

/// Plan `t`, the nodes' default (`cluster::config_toml`).
const PLANS: &str = "[plans.t]
max_file_size = 100_000_000
storage = 1_000_000_000
uploads = 100_000
rate_limit = 100_000
rate_window = \"1m\"
";
const TUS: (&str, &str) = ("tus-resumable", "1.0.0");
const MIB: usize = 1024 * 1024;
/// The survivor takes about 30 s; the bound is kept wide for a loaded machine.
const ABORT_BOUND: Duration = Duration::from_mins(2);

/// `filestore serve` as a child process on `config`, once it answers.
fn spawn_node(config: &Path, dir: &Path) -> (ServeProcess, String) {
    let node = Serve::new(&dir.join("data")).config(config).start();
    let base = node.base.clone();
    (node, base)
}

/// The upload ids of the incomplete multipart uploads under `cfg`'s prefix.
async fn multipart_ids(cfg: &StorageConfig) -> BTreeSet<String> {
    s3::raw_client(cfg)
        .await
        .list_multipart_uploads()
        .bucket(cfg.bucket.as_deref().unwrap_or_default())
        .prefix(s3::key_prefix(cfg))
        .send()
        .await
        .expect("ListMultipartUploads")
        .uploads()
        .iter()
        .filter_map(|u| u.upload_id().map(str::to_string))
        .collect()
}

fn bytes(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

fn report(what: &str, took: Duration) {
    let _ = writeln!(std::io::stderr(), "s3_dead_node: {what} in {took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_dead_nodes_multipart_upload_is_aborted_by_a_survivor() {
    if pg::admin_url().is_none() {
        let _ = writeln!(
            std::io::stderr(),
            "skipping s3_dead_node: FILESTORE_TEST_DATABASE_URL unset \
             (contrib/pg-test.sh s3_dead_node runs it)"
        );
        return;
    }
    let Some(weed) = tokio::task::block_in_place(|| Seaweed::start("dead-node")) else {
        return;
    };
    let cfg = weed.config("t/dead-node");
    // The survivor, in process, bootstraps the database; its collector
    // runs every 200 ms.
    let s = TestServer::start_with(TestOptions {
        plans_toml: Some(format!("[server]\ndefault_plan = \"t\"\n{PLANS}")),
        backend: Some(Backend::S3(Box::new(cfg.clone()))),
        reap_interval: Some(Duration::from_millis(200)),
        ..Default::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        crate::common::cluster::config_toml(s.database_url(), &cfg, PLANS),
    )
    .unwrap();
    let (mut child, node) = spawn_node(&config, dir.path());
    let http = reqwest::Client::new();

    // On the node that will die: a resumable upload with one 8 MiB part in
    // S3 and the rest to come...
    let whole = bytes(10 * MIB, 7);
    let r = http
        .post(format!("{node}/v1/uploads"))
        .bearer_auth(&s.secret_key)
        .header(TUS.0, TUS.1)
        .header("upload-length", whole.len())
        .header(
            "upload-metadata",
            encode_metadata(&[("filename", "kept.bin")]),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let location = r.headers()["location"].to_str().unwrap().to_string();
    let tus_path = location.strip_prefix(&node).unwrap().to_string();
    let cut = 9 * MIB;
    let r = http
        .patch(&location)
        .bearer_auth(&s.secret_key)
        .header(TUS.0, TUS.1)
        .header("content-type", "application/offset+octet-stream")
        .header("upload-offset", 0)
        .body(whole[..cut].to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    let kept = multipart_ids(&cfg).await;
    assert_eq!(kept.len(), 1, "the resumable upload's multipart upload");

    // ...and a 64 MiB upload, caught while its parts go up.
    let form = TestServer::form("lost.bin", bytes(64 * MIB, 1), &[]);
    let upload = tokio::spawn(
        http.post(format!("{node}/v1/upload"))
            .bearer_auth(&s.secret_key)
            .multipart(form)
            .send(),
    );
    let started = Instant::now();
    let lost = loop {
        let now: BTreeSet<String> = multipart_ids(&cfg).await;
        let new: Vec<String> = now.difference(&kept).cloned().collect();
        if let Some(id) = new.into_iter().next() {
            break id;
        }
        assert!(
            started.elapsed() < Duration::from_mins(1) && !upload.is_finished(),
            "the upload's multipart upload never showed"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    // The store frozen while the node dies: no part lands after it, and
    // the upload cannot complete first.
    weed.pause();
    child.kill_9();
    let died = Instant::now();
    weed.resume();
    let failed = upload.await.unwrap();
    assert!(
        failed.as_ref().map_or(true, |r| !r.status().is_success()),
        "the upload did not succeed: {failed:?}"
    );
    assert!(multipart_ids(&cfg).await.contains(&lost));

    // The survivor aborts the dead node's multipart upload.
    loop {
        let left = multipart_ids(&cfg).await;
        if !left.contains(&lost) {
            assert!(left.is_superset(&kept), "the resumable upload's is kept");
            break;
        }
        assert!(
            died.elapsed() < ABORT_BOUND,
            "multipart upload {lost} still there after {ABORT_BOUND:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    report("kill -9 to the multipart upload aborted", died.elapsed());
    s.eventually(10, "the dead node's guard gone with its blob", || async {
        s.count("SELECT COUNT(*) FROM blob_deletions") == 0
    })
    .await;
    // Nothing of the lost upload was stored; the resumable one finishes on
    // the survivor.
    assert!(s3::object_keys(&cfg).await.is_empty());
    let r = http
        .patch(s.url(&tus_path))
        .bearer_auth(&s.secret_key)
        .header(TUS.0, TUS.1)
        .header("content-type", "application/offset+octet-stream")
        .header("upload-offset", cut)
        .body(whole[cut..].to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 204);
    let file_id = r.headers()["x-file-id"].to_str().unwrap().to_string();
    let (status, rec) = s
        .get_json(&s.secret_key, &format!("/v1/files/{file_id}"))
        .await;
    assert_eq!(status, 200);
    assert_eq!(rec["sha256"], sha256_hex(&whole).as_str());
    let got = get_bytes(&http, rec["url"].as_str().unwrap()).await;
    assert!(got == whole, "the resumable upload's bytes, whole");
    assert!(multipart_ids(&cfg).await.is_empty());
}
