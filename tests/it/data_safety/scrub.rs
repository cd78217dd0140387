//! The background scrub (`[storage] scrub_rate`) of the real binary finds a
//! flipped byte and a deleted blob, marks both damaged; the metric
//! `filestore_damaged_files` and health's `storage` check say so. On
//! PostgreSQL one node scrubs at a time.

use super::{flip_byte, DATA};
use crate::common::meta::stores;
use crate::common::pg;
use crate::common::process::{free_port, Serve, ServeProcess};
use crate::common::{error_code, upload_form};
use serde_json::Value;

/// Uploads `name` (300 KiB: a blob, not inline) to `node`: its file id.
async fn upload(http: &reqwest::Client, node: &ServeProcess, name: &str) -> String {
    let r = http
        .post(node.url("/v1/upload"))
        .bearer_auth(node.key())
        .multipart(upload_form(name, DATA(), &[]))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let v: Value = r.json().await.unwrap();
    v["id"].as_str().unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_scrub_finds_a_flipped_byte_and_a_deleted_blob_and_health_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let db = pg::database_for(dir.path()).await;
    let config = dir.path().join("config.toml");
    std::fs::write(&config, "[storage]\nscrub_rate = \"64MiB/s\"\n").unwrap();
    let node = Serve::new(&data)
        .config(&config)
        .database_url(db.as_deref())
        .metrics(free_port())
        .start();
    let http = reqwest::Client::new();
    let account = node.account.clone().unwrap();
    let flipped = upload(&http, &node, "flipped.bin").await;
    let gone = upload(&http, &node, "gone.bin").await;
    let sound = upload(&http, &node, "sound.bin").await;
    let blobs = data.join("blobs").join(&account);
    flip_byte(&blobs.join(&flipped), 1234);
    std::fs::remove_file(blobs.join(&gone)).unwrap();
    // Nothing read them: the scrub finds both (its next pass within seconds).
    let deadline = std::time::Instant::now() + std::time::Duration::from_mins(1);
    let health = loop {
        let r = http.get(node.url("/v1/health")).send().await.unwrap();
        let status = r.status().as_u16();
        let h: Value = r.json().await.unwrap();
        if h["checks"]["storage"]["status"] == "degraded"
            && h["checks"]["storage"]["error"]
                .as_str()
                .is_some_and(|e| e.starts_with("2 damaged"))
        {
            break (status, h);
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the scrub found nothing: {h}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    // The node serves: the store is degraded, not down.
    assert_eq!(health.0, 200, "{}", health.1);
    assert_eq!(health.1["status"], "degraded");
    let note = health.1["checks"]["storage"]["error"].as_str().unwrap();
    assert!(note.contains("admin verify --repair-from"), "{note}");
    assert_eq!(
        node.metric(&http, "filestore_damaged_files", "").await,
        Some(2.0)
    );
    for (id, name) in [(&flipped, "flipped.bin"), (&gone, "gone.bin")] {
        let r = http
            .get(node.url(&format!("/live/{account}/{id}/{name}")))
            .send()
            .await
            .unwrap();
        assert_eq!(error_code(r).await, (500, "damaged".into()));
    }
    let r = http
        .get(node.url(&format!("/live/{account}/{sound}/sound.bin")))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.bytes().await.unwrap().len(), DATA().len());
}

/// On PostgreSQL the scrub's turn is one node's at a time: another gets it
/// once the holder's lease ran out, from where it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_node_scrubs_at_a_time_and_another_goes_on_from_its_place() {
    if pg::admin_url().is_none() {
        eprintln!("skipped: set FILESTORE_TEST_DATABASE_URL to run this two-node test");
        return;
    }
    let (_dir, nodes) = stores(2).await;
    let (a, b) = (&nodes[0], &nodes[1]);
    let lease = 60_000;
    assert_eq!(
        a.scrub_turn(1_000, lease).await.unwrap().as_deref(),
        Some("")
    );
    assert_eq!(b.scrub_turn(2_000, lease).await.unwrap(), None);
    assert!(a.scrub_moved("f_5", 3_000, lease).await.unwrap());
    assert_eq!(b.scrub_turn(4_000, lease).await.unwrap(), None);
    // A's lease (renewed at 3 s) runs out at 63 s: B takes over from f_5.
    assert_eq!(
        b.scrub_turn(63_001, lease).await.unwrap().as_deref(),
        Some("f_5")
    );
    assert!(!a.scrub_moved("f_9", 63_002, lease).await.unwrap());
    assert_eq!(a.scrub_turn(63_003, lease).await.unwrap(), None);
}
