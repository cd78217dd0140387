//! Folder archives an account has being sent at once are capped (each
//! holds a few MiB of buffers for as long as its client reads, however
//! slowly): past the cap, 429 with `Retry-After`; a place comes back when an
//! archive ends or its client goes away. The route counts in the key's
//! rate window too.

use crate::common::TestServer;
use futures_util::StreamExt;
use std::time::Duration;

/// Stalled readers hold their places; a fifth archive waits its turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn archives_at_once_are_capped_per_account() {
    const MIB: usize = 1 << 20;
    let srv = TestServer::start().await;
    srv.set_account(&srv.account_id, Some("pro"), None).await;
    // 48 MiB: more than the socket buffers and the archive's queue hold,
    // so an archive whose client does not read stays in progress.
    let body = futures_util::stream::iter(0..48).map(|i: u8| Ok::<_, std::io::Error>(vec![i; MIB]));
    let part =
        reqwest::multipart::Part::stream(reqwest::Body::wrap_stream(body)).file_name("large.bin");
    let form = reqwest::multipart::Form::new()
        .text("folder", "media")
        .part("file", part);
    let r = srv.post_form(&srv.secret_key, form).await;
    assert_eq!(r.status(), 201, "{}", r.text().await.unwrap_or_default());

    let url = srv.url("/v1/folders/zip?folder=media");
    let get = || srv.http.get(&url).bearer_auth(&srv.secret_key).send();
    let mut held = Vec::new();
    for _ in 0..4 {
        let r = get().await.unwrap();
        assert_eq!(r.status(), 200);
        assert!(
            r.headers().contains_key("x-ratelimit-limit"),
            "rate limited"
        );
        held.push(r);
    }
    let refused = get().await.unwrap();
    assert_eq!(refused.status(), 429);
    assert!(refused.headers().contains_key("retry-after"));
    let body: serde_json::Value = refused.json().await.unwrap();
    assert_eq!(body["error"]["code"], "rate_limit_exceeded", "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("folder archives"),
        "{body}"
    );

    // One client goes away: its place comes back once the server notices.
    drop(held.pop());
    let taken = std::sync::Mutex::new(Vec::new());
    srv.eventually(10, "a place for another archive", || async {
        let r = get().await.unwrap();
        let ok = r.status() == 200;
        if ok {
            taken.lock().unwrap().push(r);
        }
        ok
    })
    .await;
    assert_eq!(get().await.unwrap().status(), 429, "four again");

    // Read to the end, an archive gives its place back too.
    drop(held);
    drop(taken);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let whole = get().await.unwrap();
    assert_eq!(whole.status(), 200);
    let mut n = 0usize;
    let mut s = whole.bytes_stream();
    while let Some(chunk) = s.next().await {
        n += chunk.unwrap().len();
    }
    assert!(n > 48 * MIB, "{n}");
}
