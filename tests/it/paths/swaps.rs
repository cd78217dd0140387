//! A stable link never fails while its path is re-published: readers in a
//! loop on `/p/…` while the path is replaced again and again see only
//! 200s, each body one of the published versions whole (a read that found
//! a replaced file's row still reads its blob, kept a while; one that finds
//! its bytes gone looks the path up again).

use crate::common::{Backend, TestServer};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

both_stores!(stable_links_never_fail_while_the_path_is_replaced);

const READERS: usize = 8;
const SWAPS: usize = 24;

/// Version `i`: its own length and bytes, large enough to be a blob when
/// the store keeps blobs.
fn version(i: usize) -> Vec<u8> {
    let mut v = format!("version {i}:").into_bytes();
    v.resize(48 * 1024 + i, b'a' + (i % 26) as u8);
    v
}

async fn stable_links_never_fail_while_the_path_is_replaced(b: Backend) {
    let srv = Arc::new(TestServer::on(b).await);
    let fields = [("folder", "site/latest"), ("replace", "true")];
    let first = srv.upload_ok("page.bin", version(0), &fields).await;
    let link = first["path_url"].as_str().unwrap().to_string();
    let versions: Arc<Vec<Vec<u8>>> = Arc::new((0..=SWAPS).map(version).collect());
    let done = Arc::new(AtomicBool::new(false));
    let mut readers = Vec::new();
    for _ in 0..READERS {
        let (srv, link, versions, done) =
            (srv.clone(), link.clone(), versions.clone(), done.clone());
        readers.push(tokio::spawn(async move {
            let mut seen: BTreeMap<u16, usize> = BTreeMap::new();
            let mut reads = 0;
            while !done.load(Ordering::Acquire) || reads < 5 {
                reads += 1;
                let r = srv.http.get(&link).send().await.unwrap();
                let status = r.status().as_u16();
                *seen.entry(status).or_default() += 1;
                if status == 200 {
                    let body = r.bytes().await.expect("a whole body");
                    assert!(
                        versions.iter().any(|v| v[..] == body[..]),
                        "a body of {} bytes that is no published version",
                        body.len()
                    );
                }
            }
            seen
        }));
    }
    for i in 1..=SWAPS {
        let f = srv.upload_ok("page.bin", version(i), &fields).await;
        assert_eq!(f["path_url"].as_str(), Some(&*link));
    }
    done.store(true, Ordering::Release);
    let mut statuses: BTreeMap<u16, usize> = BTreeMap::new();
    for r in readers {
        for (status, n) in r.await.unwrap() {
            *statuses.entry(status).or_default() += n;
        }
    }
    eprintln!("statuses during {SWAPS} replaces by {READERS} readers: {statuses:?}");
    assert_eq!(
        statuses.keys().copied().collect::<Vec<_>>(),
        [200],
        "{statuses:?}"
    );
    // One file at the path at the end: the last published.
    assert_eq!(super::replace::ids_in(&srv, "site/latest").await.len(), 1);
    let r = srv.http.get(&link).send().await.unwrap();
    assert_eq!(r.bytes().await.unwrap(), version(SWAPS));
}
