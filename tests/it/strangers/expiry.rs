//! A resumable upload a stranger created expires 10 minutes after its last
//! byte (§13), and its reservation goes with it.

use super::*;
use std::time::Duration;

/// A PATCH of `bytes` at `offset` by `who`.
async fn patch(srv: &TestServer, who: &Who, url: &str, offset: u64, bytes: &[u8]) -> u16 {
    who.on(srv.http.patch(url))
        .header("tus-resumable", "1.0.0")
        .header("upload-offset", offset.to_string())
        .header("content-type", "application/offset+octet-stream")
        .body(bytes.to_vec())
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_strangers_reservation_goes_10_minutes_after_its_last_byte() {
    let srv = server("storage = 1000\nmax_file_size = 1000").await;
    let (page, _) = strangers(&srv, 1).await;
    let r = tus_create(&srv, &page, 500).await;
    let url = r.headers()["location"].to_str().unwrap().to_string();
    created(r).await;
    let (retry, _) = refused(tus_create(&srv, &page, 1).await).await;
    assert!(retry <= 600, "{retry}");
    // A byte at 9 minutes: 10 more from then.
    srv.clock.advance(Duration::from_mins(9));
    assert_eq!(patch(&srv, &page, &url, 0, b"0123456789").await, 204);
    srv.clock.advance(Duration::from_mins(9));
    refused(tus_create(&srv, &page, 1).await).await;
    assert_eq!(srv.usage().await["reserved_bytes"], 500);
    // 11 minutes after its last byte: expired, its reservation free.
    srv.clock.advance(Duration::from_mins(2));
    assert_eq!(srv.usage().await["reserved_bytes"], 0);
    created(tus_create(&srv, &page, 500).await).await;
    let status = page
        .on(srv.http.head(&url))
        .header("tus-resumable", "1.0.0")
        .send()
        .await
        .unwrap()
        .status()
        .as_u16();
    assert!(
        status == 404 || status == 410,
        "the expired upload: {status}"
    );
    srv.stop().await;
}
