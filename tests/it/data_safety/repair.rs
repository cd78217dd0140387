//! `filestore admin verify --repair-from SRC`: a flipped byte and a deleted
//! blob are put back from a backup taken before, their marks cleared, and
//! the CDN serves them whole again (exit 0); a file the backup does not
//! hold stays damaged (exit 1).

use super::{blob_path, flip_byte, run_admin, DATA};
use crate::common::{Backend, TestServer};
use serde_json::{json, Value};

fn marked(srv: &TestServer) -> i64 {
    srv.count("SELECT COUNT(*) FROM files WHERE damaged_at IS NOT NULL")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_repair_from_a_backup_puts_back_flipped_and_lost_blobs() {
    let srv = TestServer::on(Backend::LocalBlobs).await;
    let backups = tempfile::tempdir().unwrap();
    let dest = backups.path().join("b");
    let dest = dest.to_str().unwrap();
    let mut files = Vec::new();
    for name in ["a.bin", "b.bin"] {
        let v = srv.upload_ok(name, DATA(), &[]).await;
        files.push((
            v["id"].as_str().unwrap().to_string(),
            v["url"].as_str().unwrap().to_string(),
        ));
    }
    let (code, out, err) = run_admin(&srv, &["backup", dest]);
    assert_eq!(code, Some(0), "{out}{err}");
    // Uploaded after the backup: its bytes are in no backup.
    let mut late_data = DATA();
    late_data.reverse();
    let late = srv.upload_ok("late.bin", late_data, &[]).await;
    let late = late["id"].as_str().unwrap().to_string();

    let [(flipped, flipped_url), (gone, gone_url)] = &files[..] else {
        unreachable!()
    };
    flip_byte(&blob_path(&srv, flipped), 100);
    std::fs::remove_file(blob_path(&srv, gone)).unwrap();
    flip_byte(&blob_path(&srv, &late), 100);

    // The late file cannot be repaired: exit 1, it alone still damaged.
    let (code, out, err) = run_admin(&srv, &["verify", "--repair-from", dest, "--json"]);
    assert_eq!(code, Some(1), "{out}{err}");
    let report: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(report["missing"], json!([]), "{report}");
    assert_eq!(
        report["damaged"],
        json!([{"id": late, "path": "late.bin"}]),
        "{report}"
    );
    let mut repaired: Vec<String> = report["repaired"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_string())
        .collect();
    repaired.sort();
    let mut want = vec![flipped.clone(), gone.clone()];
    want.sort();
    assert_eq!(repaired, want);
    assert_eq!(marked(&srv), 1);
    for url in [flipped_url, gone_url] {
        let r = srv.http.get(url).send().await.unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(&r.bytes().await.unwrap()[..], &DATA()[..]);
    }

    // With the late file gone, a repair finds all repaired: exit 0.
    let r = srv.delete_as(&srv.secret_key, &late).await;
    assert_eq!(r.status(), 200);
    flip_byte(&blob_path(&srv, flipped), 7);
    let (code, out, err) = run_admin(&srv, &["verify", "--repair-from", dest]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("repaired"), "{out}");
    assert_eq!(marked(&srv), 0);
    srv.eventually(5, "the CDN serves it again", || async {
        let r = srv.http.get(flipped_url).send().await.unwrap();
        r.status() == 200 && r.bytes().await.unwrap()[..] == DATA()[..]
    })
    .await;

    // A backup that is not there: refused before anything is checked.
    flip_byte(&blob_path(&srv, gone), 7);
    let nowhere = backups.path().join("nowhere");
    let nowhere = nowhere.to_str().unwrap();
    let (code, _, err) = run_admin(&srv, &["verify", "--repair-from", nowhere]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains(nowhere), "{err}");
    assert_eq!(marked(&srv), 0);
}
