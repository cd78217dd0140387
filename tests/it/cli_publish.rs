//! A CI pipeline's release step (issue 45, CONTRACT §21): the same artifact
//! published three times to `releases/latest/app.tar.gz` with
//! `filestore upload --replace`. Its `/p/` link never changes, serves the
//! newest bytes right after each publish, and under concurrent GETs during
//! the swaps never answers anything but a whole published version: no 404,
//! no 5xx, no torn body. The path holds one file at the end.

use crate::cli_common::{pattern, write_file, Cli};
use crate::common::{Backend, TestServer};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

both_stores!(three_publishes_keep_one_link_that_serves_the_newest_without_a_gap);

/// GET loops on the link, counting statuses and which version each body was.
async fn readers(
    url: String,
    versions: Arc<Vec<Vec<u8>>>,
    stop: Arc<AtomicBool>,
) -> BTreeMap<String, u64> {
    let http = reqwest::Client::new();
    let mut seen = BTreeMap::new();
    while !stop.load(Ordering::Relaxed) {
        let r = http.get(&url).send().await.expect("the server answers");
        let status = r.status().as_u16();
        let body = r.bytes().await.expect("a whole body");
        let what = match versions.iter().position(|v| v[..] == body[..]) {
            Some(i) if status == 200 => format!("200 v{}", i + 1),
            _ => format!("{status} other ({} bytes)", body.len()),
        };
        *seen.entry(what).or_insert(0) += 1;
    }
    seen
}

async fn three_publishes_keep_one_link_that_serves_the_newest_without_a_gap(b: Backend) {
    let srv = TestServer::on(b).await;
    let cli = Cli::new(&srv.base_url, &srv.secret_key);
    // Past the inline limit, so each version is a blob of its own.
    let versions: Arc<Vec<Vec<u8>>> = Arc::new((1..=3).map(|v| pattern(300_000, v)).collect());
    let publish = |v: usize| {
        let path = write_file(&cli.cwd(), &format!("build{v}/app.tar.gz"), &versions[v]);
        let cli = &cli;
        async move {
            let run = cli
                .run(&[
                    "upload",
                    path.to_str().unwrap(),
                    "--folder",
                    "releases/latest",
                    "--replace",
                    "--json",
                ])
                .await;
            run.expect(0);
            run.json()
        }
    };
    let first = publish(0).await;
    let link = first["path_url"]
        .as_str()
        .expect("a public file's path_url")
        .to_string();
    assert!(
        link.ends_with("/releases/latest/app.tar.gz") && link.contains("/p/"),
        "{link}"
    );
    let stop = Arc::new(AtomicBool::new(false));
    let tasks: Vec<_> = (0..8)
        .map(|_| tokio::spawn(readers(link.clone(), versions.clone(), stop.clone())))
        .collect();
    let http = reqwest::Client::new();
    for v in 1..3 {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let record = publish(v).await;
        assert_eq!(
            record["path_url"].as_str(),
            Some(link.as_str()),
            "the link stays"
        );
        // Seen at once: the link is revalidated, never cached stale.
        let r = http.get(&link).send().await.unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(
            r.headers()["cache-control"].to_str().unwrap(),
            "no-cache",
            "revalidated each time"
        );
        assert!(
            r.bytes().await.unwrap()[..] == versions[v][..],
            "v{} served",
            v + 1
        );
    }
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    stop.store(true, Ordering::Relaxed);
    let mut seen = BTreeMap::new();
    for t in tasks {
        for (k, n) in t.await.unwrap() {
            *seen.entry(k).or_insert(0) += n;
        }
    }
    println!("GETs seen during three publishes: {seen:?}");
    assert!(
        seen.keys().all(|k| k.starts_with("200 v")),
        "only whole published versions: {seen:?}"
    );
    assert!(seen.contains_key("200 v3"), "{seen:?}");
    // One file at the path.
    let list = cli
        .run(&["list", "--folder", "releases/latest", "--json"])
        .await;
    list.expect(0);
    assert_eq!(list.json_lines().len(), 1, "{list:?}");
}
