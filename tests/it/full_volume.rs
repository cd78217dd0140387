//! Deletes on a data volume another process has filled to the last byte,
//! once or continuously: they answer 200 (they write into room the server
//! keeps allocated inside SQLite's own files), while uploads get 507.
//! The volume is a small tmpfs the test mounts (`common::tmpfs`).

use crate::common::tmpfs::Volume;
use crate::common::{TestOptions, TestServer};
use std::io::Write;
use std::path::Path;
use std::time::Duration;

/// Writes zeros to `path` until the volume has no byte left.
fn fill(path: &Path) {
    let mut f = std::fs::File::create(path).expect("filler");
    let block = vec![0u8; 64 * 1024];
    loop {
        if f.write_all(&block).is_err() {
            break;
        }
    }
    // The last partial blocks.
    let small = [0u8; 512];
    while f.write_all(&small).is_ok() {}
    let _ = f.sync_all();
    let free = free_bytes(path.parent().unwrap());
    assert_eq!(free, 0, "the volume is full");
}

fn free_bytes(dir: &Path) -> u64 {
    let s = rustix::fs::statvfs(dir).unwrap();
    s.f_bavail * s.f_frsize
}

/// A server whose data dir is on `volume` (2 MiB kept free), its collector
/// passing every `reap`, holding `n` files: small ones (inline in SQLite)
/// and, every other one, `blob` bytes (a blob on the volume); their ids.
async fn server_with_files(
    volume: &Volume,
    reap: Duration,
    n: usize,
    blob: usize,
) -> (TestServer, Vec<String>) {
    let srv = TestServer::start_with(TestOptions {
        data_dir: Some(volume.path().join("data")),
        plans_toml: Some("[storage]\nmin_free_space = \"2MiB\"\n".into()),
        reap_interval: Some(reap),
        ..Default::default()
    })
    .await;
    let mut ids = Vec::new();
    for i in 0..n {
        let size = if i % 2 == 0 { 1000 } else { blob };
        let rec = srv
            .upload_ok(&format!("f{i}.bin"), vec![b'a'; size], &[])
            .await;
        ids.push(rec["id"].as_str().unwrap().to_string());
    }
    (srv, ids)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deletes_answer_200_on_a_volume_filled_to_zero_by_another_process() {
    let Some(volume) = Volume::mount(48) else {
        return;
    };
    // No collector pass: the room is kept at start; the test tops it up
    // itself (deletes still remove their blobs at once).
    let (srv, ids) = server_with_files(&volume, Duration::from_hours(1), 20, 300_000).await;
    let key = srv.secret_key.clone();
    let filler = volume.path().join("filler");
    let sqlite = !srv.on_postgres();
    // Twice: the volume filled to its last byte, ten deletes. (On
    // PostgreSQL the database is not on this volume: no room is kept.)
    for round in ids.chunks(10) {
        assert_eq!(srv.app.disk.room_kept(), sqlite);
        fill(&filler);
        let r = srv.upload("more.bin", vec![b'b'; 140_000], &[]).await;
        assert_eq!(r.status().as_u16(), 507, "uploads are refused");
        let (status, health) = srv.get_json("", "/v1/health").await;
        assert_eq!(status, 503);
        assert_eq!(health["checks"]["storage"]["status"], "error");
        for id in round {
            let r = srv.delete_as(&key, id).await;
            let status = r.status().as_u16();
            let body = r.text().await.unwrap();
            assert_eq!(status, 200, "delete {id} on a full volume: {body}");
            let (status, _) = srv.get_json(&key, &format!("/v1/files/{id}")).await;
            assert_eq!(status, 404);
        }
        // The freed blobs (1.5 MB) leave room to top the room up: it is
        // on a volume that is still below the reserve.
        std::fs::remove_file(&filler).unwrap();
        srv.app.disk.keep_room();
        assert_eq!(srv.app.disk.room_kept(), sqlite);
    }
    let usage = srv.usage().await;
    assert_eq!(usage["storage_bytes"], 0);
    srv.upload_ok("after.bin", vec![b'c'; 140_000], &[]).await;
    srv.stop().await;
}

/// Takes every byte the volume frees, as soon as it is freed, until `stop`:
/// another process that keeps the volume full (a log, a runaway job).
fn refill(path: &Path, stop: &std::sync::atomic::AtomicBool) {
    use std::sync::atomic::Ordering;
    let mut f = std::fs::File::create(path).expect("refiller");
    let block = vec![0u8; 64 * 1024];
    let small = [0u8; 512];
    while !stop.load(Ordering::Relaxed) {
        if f.write_all(&block).is_ok() {
            continue;
        }
        while f.write_all(&small).is_ok() {}
        std::thread::sleep(Duration::from_micros(200));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deletes_answer_200_while_another_process_keeps_the_volume_full() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let Some(volume) = Volume::mount(48) else {
        return;
    };
    let (srv, ids) = server_with_files(&volume, Duration::from_millis(200), 24, 200_000).await;
    let key = srv.secret_key.clone();
    let stop = Arc::new(AtomicBool::new(false));
    let filler = volume.path().join("filler");
    let refiller = {
        let (stop, filler) = (stop.clone(), filler.clone());
        std::thread::spawn(move || refill(&filler, &stop))
    };
    let mut refused = Vec::new();
    // The deletes one at a time, the refiller taking whatever each frees
    // (and the collector's passes meeting a volume with no room).
    // Filled within seconds (300 ms on a quiet machine; a busy one took
    // longer): waited for, up to 30 s.
    let filled_by = std::time::Instant::now() + Duration::from_secs(30);
    while free_bytes(volume.path()) >= 64 * 1024 && std::time::Instant::now() < filled_by {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(free_bytes(volume.path()) < 64 * 1024, "the volume is full");
    for id in &ids {
        let r = srv.delete_as(&key, id).await;
        let status = r.status().as_u16();
        if status != 200 {
            refused.push(format!("{id}: {status} {}", r.text().await.unwrap()));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop.store(true, Ordering::Relaxed);
    refiller.join().unwrap();
    assert!(refused.is_empty(), "deletes refused: {refused:#?}");
    for id in &ids {
        let (status, _) = srv.get_json(&key, &format!("/v1/files/{id}")).await;
        assert_eq!(status, 404);
    }
    std::fs::remove_file(&filler).unwrap();
    assert_eq!(srv.usage().await["storage_bytes"], 0);
    srv.upload_ok("after.bin", vec![b'c'; 140_000], &[]).await;
    srv.stop().await;
}
