//! A backup taken while 50 clients upload and delete restores every file
//! acknowledged before it began, byte for byte, and nothing else.

use super::{backup, bytes, contents, db_of, restored_with};
use crate::common::{TestOptions, TestServer};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// Files above the inline limit (128 KiB) go to the blob store; below, inline.
const SMALL: usize = 2_000;
const LARGE: usize = 140_000;

/// 50 clients at once, none refused for their rate or count.
const WIDE: &str = r#"
[server]
default_plan = "wide"
[plans.wide]
max_file_size = "10MiB"
storage = "1GiB"
uploads = 100000
rate_limit = 100000
rate_window = "1m"
concurrent_uploads = 1000
open_uploads = 1000
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_during_50_concurrent_uploads_and_deletes_restores_every_file_acknowledged_before_it(
) {
    let srv = Arc::new(
        TestServer::start_with(TestOptions {
            plans_toml: Some(WIDE.into()),
            ..Default::default()
        })
        .await,
    );
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("backups");
    // Acknowledged before the backup begins: kept, or deleted while it runs.
    let mut before = BTreeMap::new();
    for i in 0..40u64 {
        let data = bytes(if i % 2 == 0 { SMALL } else { LARGE }, i);
        let f = srv
            .upload_ok(&format!("seed-{i}.bin"), data.clone(), &[])
            .await;
        before.insert(f["id"].as_str().unwrap().to_string(), data);
    }
    let seeds: Vec<String> = before.keys().cloned().collect();
    let during = Arc::new(Mutex::new(BTreeMap::<String, Vec<u8>>::new()));
    let go = Arc::new(tokio::sync::Barrier::new(51));
    let mut clients = Vec::new();
    for c in 0..50u64 {
        let (srv, during, go) = (Arc::clone(&srv), Arc::clone(&during), Arc::clone(&go));
        // Clients 0..20 delete a seed each (after the backup began).
        let victim = (c < 20).then(|| seeds[c as usize * 2].clone());
        clients.push(tokio::spawn(async move {
            go.wait().await;
            if let Some(id) = victim {
                assert_eq!(srv.delete_as(&srv.secret_key, &id).await.status(), 200);
            }
            for n in 0..4u64 {
                let seed = 1_000 + c * 10 + n;
                let data = bytes(if n % 2 == 0 { SMALL } else { LARGE }, seed);
                let f = srv
                    .upload_ok(&format!("c{c}-{n}.bin"), data.clone(), &[])
                    .await;
                let id = f["id"].as_str().unwrap().to_string();
                if n == 1 {
                    assert_eq!(srv.delete_as(&srv.secret_key, &id).await.status(), 200);
                }
                during.lock().unwrap().insert(id, data);
            }
        }));
    }
    let (data, db) = (srv.data_dir.clone(), db_of(&srv));
    let dest2 = dest.clone();
    let taken = tokio::task::spawn_blocking(move || backup(&data, db.as_deref(), &dest2));
    go.wait().await;
    for c in clients {
        c.await.unwrap();
    }
    let record = taken.await.unwrap();
    assert!(record["files"].as_u64().unwrap() >= 20, "{record}");
    for key in ["files", "bytes", "new_blobs", "new_bytes", "seconds"] {
        assert!(record[key].is_number(), "{key} in {record}");
    }
    // No hold is left behind.
    assert_eq!(
        srv.count("SELECT COUNT(*) FROM meta WHERE key LIKE 'blob_hold:%'"),
        0
    );

    let restored = restored_with(dir.path(), "restored", &dest, Some(WIDE)).await;
    let got = contents(&restored).await;
    let deleted: Vec<&String> = seeds.iter().step_by(2).take(20).collect();
    for (id, data) in &before {
        match got.get(id) {
            Some((_, b)) => assert!(b == data, "{id}: bytes differ"),
            None => assert!(
                deleted.contains(&id),
                "{id} acknowledged before the backup is missing"
            ),
        }
    }
    let during = during.lock().unwrap().clone();
    for (id, (_, b)) in &got {
        let expected = before.get(id).or_else(|| during.get(id));
        let expected = expected.unwrap_or_else(|| panic!("{id}: a file nobody uploaded"));
        assert!(b == expected, "{id}: bytes differ");
    }
    assert_eq!(record["files"].as_u64().unwrap() as usize, got.len());
}
