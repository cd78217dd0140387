//! Downloads under the memory budget (CONTRACT §23): a download whose client
//! reads nothing holds one window beyond its socket, is closed after
//! `stall_timeout` without progress, and is charged what its socket took.

use super::*;
use crate::common::process::{admin, Serve, ServeProcess};
use crate::common::{pg, upload_form};

/// Downloads the test opens and never reads.
const STALLED: usize = 300;

/// The serve process's peak RSS (`VmHWM`), in bytes.
fn peak_rss(server: &ServeProcess) -> u64 {
    let pid = server.pid();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in /proc/PID/status");
    kib * 1024
}

/// A multipart upload to `server` with `key`; the file's CDN path.
async fn upload_to(server: &ServeProcess, key: &str, name: &str, bytes: Vec<u8>) -> String {
    let r = reqwest::Client::new()
        .post(server.url("/v1/upload"))
        .bearer_auth(key)
        .multipart(upload_form(name, bytes, &[]))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201, "upload of {name}");
    let file: serde_json::Value = r.json().await.unwrap();
    let url = file["url"].as_str().unwrap();
    url[url.find("/live/").unwrap()..].to_string()
}

/// Hundreds of downloads of a large public file whose clients read nothing
/// (no key needed) take about a window each of the server's memory, not the
/// two 512 KiB chunks each held before (VmHWM grew by ≈ 700 KiB per
/// download: 2.5 GB under 4,090), and another account's health, list,
/// usage and CDN download answer meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn downloads_nobody_reads_hold_a_window_each() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        format!("{WIDE}\n").replace("[server]\n", "[server]\ndefault_plan = \"wide\"\n"),
    )
    .unwrap();
    let db = pg::database_for(&data).await;
    let server = Serve::new(&data)
        .config(&config)
        .database_url(db.as_deref())
        .start();
    let owner = server.key();
    let bytes: Vec<u8> = (0..BIG).map(|i| (i % 251) as u8).collect();
    let path = upload_to(&server, &owner, "big.bin", bytes).await;
    let config_arg = config.to_str().unwrap();
    let created = admin(
        &data,
        db.as_deref(),
        &[
            "account", "create", "--name", "victim", "--json", "--config", config_arg,
        ],
    );
    assert!(created.status.success(), "{created:?}");
    let key = admin(
        &data,
        db.as_deref(),
        &[
            "key",
            "create",
            "--account",
            "victim",
            "--kind",
            "secret",
            "--json",
            "--config",
            config_arg,
        ],
    );
    assert!(key.status.success(), "{key:?}");
    let key: serde_json::Value = serde_json::from_slice(&key.stdout).unwrap();
    let key = key["key"].as_str().unwrap().to_string();
    let theirs = upload_to(&server, &key, "theirs.bin", vec![7; 300_000]).await;
    // One download read whole first: what serving one takes is in the baseline.
    let whole = reqwest::get(server.url(&path)).await.unwrap();
    assert_eq!(whole.bytes().await.unwrap().len(), BIG);
    let before = peak_rss(&server);

    let addr = format!("127.0.0.1:{}", server.port);
    let mut stalled = Vec::new();
    for _ in 0..STALLED {
        stalled.push(stalled_download_at(&addr, &path).await);
    }
    // Every download has read what it may by now; the others answer.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let worst = others_answer_at(&server.base, &key, &server.url(&theirs), 3).await;
    let grown = peak_rss(&server).saturating_sub(before);
    let each = grown / STALLED as u64;
    println!(
        "{STALLED} downloads nobody reads: VmHWM +{} KiB ({} KiB each); worst health {:?}, list {:?}, usage {:?}, CDN {:?}",
        grown >> 10,
        each >> 10,
        worst[0],
        worst[1],
        worst[2],
        worst[3]
    );
    // A window is 64 KiB; the connection's own state a few tens more.
    assert!(
        each < 256 << 10,
        "{} KiB of memory per download nobody reads",
        each >> 10
    );
    drop(stalled);
}

/// A server whose downloads are closed after a second without progress.
async fn stall_server() -> TestServer {
    TestServer::start_with(TestOptions {
        plans_toml: Some(WIDE.replace("[server]\n", "[server]\nstall_timeout = \"1s\"\n")),
        ..Default::default()
    })
    .await
}

/// `server.stall_timeout`: a download that has sent nothing for that long
/// is closed (before, a download stalled for `idle_timeout`, 75 s, first).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_download_that_sends_nothing_is_closed_at_the_stall_timeout() {
    let srv = stall_server().await;
    let path = big_file(&srv).await;
    let s = stalled_download(&srv, &path).await;
    tokio::time::sleep(Duration::from_secs(4)).await;
    // What was sent before the stall is read; then the end, not the file.
    assert!(
        cut_short(s, Duration::from_secs(10)).await,
        "a download stalled for 4 s at stall_timeout = 1s was not closed"
    );
}

/// A download nobody reads is charged what its socket accepted (its send
/// buffer and the client's receive buffer), not what was read from the
/// store for it (a 512 KiB chunk at least, before).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_download_nobody_reads_is_charged_what_its_socket_took() {
    let srv = stall_server().await;
    let path = big_file(&srv).await;
    let before = srv.usage().await["bandwidth_bytes"].as_u64().unwrap();
    let s = stalled_download(&srv, &path).await;
    // Closed by the server after its stall; then counted and flushed.
    tokio::time::sleep(Duration::from_secs(3)).await;
    drop(s);
    srv.eventually(10, "the stalled download charged", || async {
        srv.usage().await["bandwidth_bytes"].as_u64().unwrap() > before
    })
    .await;
    let charged = srv.usage().await["bandwidth_bytes"].as_u64().unwrap() - before;
    println!("a download nobody read was charged {charged} bytes of {BIG}");
    assert!(
        charged < 384 << 10,
        "{charged} bytes charged for a download nobody read"
    );
}
