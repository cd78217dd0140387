//! `filestore sync DIR --folder F` end to end: the real binary against an
//! in-process server — first publish, a run with nothing to do (no write
//! request at all), changes with and without `--delete`, `--dry-run`,
//! `--json`, a corrupt hash cache, duplicates left by `upload`.

use crate::cli_common::{pattern, write_file, Action, Cli, Proxy, Rule};
use crate::common::TestServer;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

async fn setup() -> (TestServer, Cli) {
    let srv = TestServer::start().await;
    let cli = with_cache(Cli::new(&srv.base_url, &srv.secret_key));
    (srv, cli)
}

/// The client's cache dir inside its home, whatever the caller's XDG_CACHE_HOME.
fn with_cache(mut cli: Cli) -> Cli {
    let cache = cli.home.path().join("cache");
    cli.envs.push((
        "XDG_CACHE_HOME".into(),
        cache.to_string_lossy().into_owned(),
    ));
    cli
}

/// A tree of five files, two of them nested.
/// A file written, its mtime a minute back: old enough for the hash cache
/// to remember it (a file modified just now is hashed again next run).
fn settled_file(root: &std::path::Path, rel: &str, content: &[u8]) -> PathBuf {
    let p = write_file(root, rel, content);
    let past = std::time::SystemTime::now() - std::time::Duration::from_mins(1);
    std::fs::File::options()
        .write(true)
        .open(&p)
        .unwrap()
        .set_modified(past)
        .unwrap();
    p
}

fn tree(cli: &Cli) -> PathBuf {
    let root = cli.cwd().join("site");
    settled_file(&root, "index.html", b"<h1>hi</h1>");
    settled_file(&root, "a.txt", &pattern(1000, 1));
    settled_file(&root, "b.txt", &pattern(2000, 2));
    settled_file(&root, "css/site.css", b"body{}");
    settled_file(&root, "css/img/logo.bin", &pattern(70_000, 3));
    root
}

/// Remote files under `site`: relative path → (id, sha256), every one of them.
async fn remote(cli: &Cli) -> Vec<(String, String, String)> {
    let r = cli
        .run(&["list", "--folder", "site", "-r", "--all", "--json"])
        .await;
    r.expect(0);
    let mut out: Vec<_> = r
        .json_lines()
        .iter()
        .map(|f| {
            let folder = f["folder"].as_str().unwrap();
            let sub = folder.strip_prefix("site").unwrap().trim_start_matches('/');
            let name = f["name"].as_str().unwrap();
            let rel = if sub.is_empty() {
                name.to_string()
            } else {
                format!("{sub}/{name}")
            };
            (
                rel,
                f["id"].as_str().unwrap().to_string(),
                f["sha256"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    out.sort();
    out
}

fn paths(files: &[(String, String, String)]) -> Vec<&str> {
    files.iter().map(|f| f.0.as_str()).collect()
}

async fn sync(cli: &Cli, root: &std::path::Path, extra: &[&str]) -> crate::cli_common::Run {
    let mut args = vec!["sync", root.to_str().unwrap(), "--folder", "site"];
    args.extend_from_slice(extra);
    cli.run(&args).await
}

#[tokio::test(flavor = "multi_thread")]
async fn first_publish_then_a_run_with_nothing_to_do_writes_nothing() {
    let (srv, cli) = setup().await;
    let root = tree(&cli);
    let first = sync(&cli, &root, &[]).await;
    first.expect(0);
    assert_eq!(
        first.stdout.trim(),
        "uploaded 5, skipped 0, deleted 0",
        "{first:?}"
    );
    let files = remote(&cli).await;
    assert_eq!(
        paths(&files),
        [
            "a.txt",
            "b.txt",
            "css/img/logo.bin",
            "css/site.css",
            "index.html"
        ]
    );
    assert_eq!(srv.usage().await["upload_count"], 5);

    // Through a proxy that records every method: only GETs, and no upload.
    let methods = Arc::new(Mutex::new(Vec::<String>::new()));
    let seen = methods.clone();
    let rule: Rule = Arc::new(move |method: &str, path: &str, _n: usize| {
        seen.lock().unwrap().push(format!("{method} {path}"));
        Action::Forward
    });
    let proxy = Proxy::start(&srv.base_url, rule).await;
    // The same cache dir as the first run: the files are not hashed again.
    let mut via = Cli::new(&proxy.url, &srv.secret_key);
    via.envs.clone_from(&cli.envs);
    let again = sync(&via, &root, &[]).await;
    again.expect(0);
    assert_eq!(
        again.stdout.trim(),
        "uploaded 0, skipped 5, deleted 0",
        "{again:?}"
    );
    let methods = methods.lock().unwrap().clone();
    assert!(!methods.is_empty());
    assert!(
        methods.iter().all(|m| m.starts_with("GET /v1/files")),
        "{methods:?}"
    );
    assert_eq!(srv.usage().await["upload_count"], 5);
    assert_eq!(remote(&cli).await, files, "nothing changed remotely");
}

#[tokio::test(flavor = "multi_thread")]
async fn changes_upload_and_replace_and_delete_only_with_the_flag() {
    let (srv, cli) = setup().await;
    let root = tree(&cli);
    sync(&cli, &root, &[]).await.expect(0);
    let before: BTreeMap<String, (String, String)> = remote(&cli)
        .await
        .into_iter()
        .map(|(p, id, sha)| (p, (id, sha)))
        .collect();

    // Same size, other bytes (the hash decides), a new size, a new file, one gone.
    settled_file(&root, "a.txt", &pattern(1000, 9));
    settled_file(&root, "css/site.css", b"body{color:red}");
    settled_file(&root, "css/new.txt", b"new");
    std::fs::remove_file(root.join("b.txt")).unwrap();

    let run = sync(&cli, &root, &[]).await;
    run.expect(0);
    assert_eq!(
        run.stdout.trim(),
        "uploaded 3, skipped 2, deleted 0",
        "{run:?}"
    );
    let after = remote(&cli).await;
    assert_eq!(
        paths(&after),
        [
            "a.txt",
            "b.txt",
            "css/img/logo.bin",
            "css/new.txt",
            "css/site.css",
            "index.html"
        ],
        "one file a path: the replaced ones are gone; b.txt stays without --delete"
    );
    for (path, id, sha) in &after {
        let unchanged = ["b.txt", "css/img/logo.bin", "index.html"].contains(&path.as_str());
        if let Some((old_id, old_sha)) = before.get(path) {
            assert_eq!(unchanged, old_id == id, "{path}");
            assert_eq!(unchanged, old_sha == sha, "{path}");
        }
    }
    assert_eq!(srv.usage().await["upload_count"], 8);

    let del = sync(&cli, &root, &["--delete"]).await;
    del.expect(0);
    assert_eq!(
        del.stdout.trim(),
        "uploaded 0, skipped 5, deleted 1",
        "{del:?}"
    );
    assert!(!paths(&remote(&cli).await).contains(&"b.txt"));
    assert_eq!(srv.usage().await["upload_count"], 8);
}

#[tokio::test(flavor = "multi_thread")]
async fn dry_run_changes_nothing() {
    let (srv, cli) = setup().await;
    let root = tree(&cli);
    let dry = sync(&cli, &root, &["--dry-run"]).await;
    dry.expect(0);
    assert!(dry.stdout.contains("would upload\tcss/site.css"), "{dry:?}");
    assert!(
        dry.stdout
            .ends_with("dry run: would upload 5, skip 0, delete 0\n"),
        "{dry:?}"
    );
    assert!(remote(&cli).await.is_empty());
    assert_eq!(srv.usage().await["upload_count"], 0);

    sync(&cli, &root, &[]).await.expect(0);
    let files = remote(&cli).await;
    std::fs::remove_file(root.join("a.txt")).unwrap();
    settled_file(&root, "index.html", b"<h1>changed</h1>");
    let dry = sync(&cli, &root, &["--dry-run", "--delete", "--json"]).await;
    dry.expect(0);
    let lines = dry.json_lines();
    let a = lines.iter().find(|l| l["path"] == "a.txt").unwrap();
    assert_eq!(a["action"], "delete");
    assert_eq!(a["dry_run"], true);
    let index = lines.iter().find(|l| l["path"] == "index.html").unwrap();
    assert_eq!(index["action"], "upload");
    assert!(index["id"].is_null());
    let summary = lines.last().unwrap();
    assert_eq!(summary["action"], "summary");
    assert_eq!(
        (
            &summary["uploaded"],
            &summary["skipped"],
            &summary["deleted"]
        ),
        (&1.into(), &3.into(), &1.into())
    );
    assert_eq!(remote(&cli).await, files, "a dry run changes nothing");
    assert_eq!(srv.usage().await["upload_count"], 5);
}

#[tokio::test(flavor = "multi_thread")]
async fn json_lines_name_every_action_then_a_summary() {
    let (_srv, cli) = setup().await;
    let root = tree(&cli);
    let first = sync(&cli, &root, &["--json"]).await;
    first.expect(0);
    let lines = first.json_lines();
    assert_eq!(lines.len(), 6, "{first:?}");
    let files = remote(&cli).await;
    for line in &lines[..5] {
        assert_eq!(line["action"], "upload");
        let path = line["path"].as_str().unwrap();
        let id = line["id"].as_str().unwrap();
        assert!(
            files.iter().any(|(p, i, _)| p == path && i == id),
            "{line} in {files:?}"
        );
    }
    assert_eq!(lines[5]["action"], "summary");
    assert_eq!(lines[5]["uploaded"], 5);
    assert_eq!(lines[5]["failed"], 0);

    let again = sync(&cli, &root, &["--json"]).await;
    again.expect(0);
    let lines = again.json_lines();
    let skips: Vec<_> = lines
        .iter()
        .filter(|l| l["action"] == "skip")
        .map(|l| (l["path"].as_str().unwrap(), l["id"].as_str().unwrap()))
        .collect();
    let want: Vec<_> = files
        .iter()
        .map(|(p, i, _)| (p.as_str(), i.as_str()))
        .collect();
    assert_eq!(skips, want);
    assert_eq!(lines.last().unwrap()["skipped"], 5);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_corrupt_hash_cache_is_ignored_and_rewritten() {
    let (srv, cli) = setup().await;
    let root = tree(&cli);
    sync(&cli, &root, &[]).await.expect(0);
    let dir = cli.home.path().join("cache/filestore/sync");
    let caches: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(caches.len(), 1, "one cache file per synced directory");
    let text = std::fs::read_to_string(&caches[0]).unwrap();
    assert_eq!(text.lines().count(), 6, "a header and five files: {text}");

    std::fs::write(&caches[0], b"\xff\x00not a cache\n").unwrap();
    let run = sync(&cli, &root, &[]).await;
    run.expect(0);
    assert_eq!(
        run.stdout.trim(),
        "uploaded 0, skipped 5, deleted 0",
        "{run:?}"
    );
    assert_eq!(std::fs::read_to_string(&caches[0]).unwrap(), text);

    // A stale entry (same size and mtime claimed, another hash) only
    // matters for that file: here it is rehashed because its mtime differs.
    let stale = text.replacen(
        &text[text.find('\n').unwrap() + 1..][..64],
        &"0".repeat(64),
        1,
    );
    std::fs::write(&caches[0], stale).unwrap();
    settled_file(&root, "a.txt", &pattern(1000, 1));
    let run = sync(&cli, &root, &[]).await;
    run.expect(0);
    assert_eq!(
        run.stdout.trim(),
        "uploaded 0, skipped 5, deleted 0",
        "{run:?}"
    );
    assert_eq!(srv.usage().await["upload_count"], 5);
}

#[tokio::test(flavor = "multi_thread")]
async fn duplicates_from_upload_are_noted_and_replaced_together() {
    let (srv, cli) = setup().await;
    let root = cli.cwd().join("site");
    let f = settled_file(&root, "sub/dup.txt", b"one");
    for _ in 0..2 {
        cli.run(&["upload", f.to_str().unwrap(), "--folder", "site/sub"])
            .await
            .expect(0);
    }
    let run = sync(&cli, &root, &[]).await;
    run.expect(0);
    assert_eq!(
        run.stdout.trim(),
        "uploaded 0, skipped 1, deleted 0",
        "{run:?}"
    );
    assert!(
        run.stderr.contains("sub/dup.txt: 1 older remote file(s)"),
        "{run:?}"
    );

    settled_file(&root, "sub/dup.txt", b"two");
    let run = sync(&cli, &root, &["--json"]).await;
    run.expect(0);
    let up = &run.json_lines()[0];
    assert_eq!(up["action"], "upload");
    assert_eq!(up["replaces"].as_array().unwrap().len(), 2);
    let files = remote(&cli).await;
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(files[0].1, up["id"].as_str().unwrap());
    assert_eq!(srv.usage().await["upload_count"], 3);
}

#[tokio::test(flavor = "multi_thread")]
async fn usage_errors() {
    let (_srv, cli) = setup().await;
    let root = tree(&cli);
    cli.run(&["sync", root.to_str().unwrap()])
        .await
        .expect_error(2, "usage");
    cli.run(&["sync", root.to_str().unwrap(), "--folder", "/"])
        .await
        .expect_error(2, "usage");
    let file = root.join("a.txt");
    cli.run(&["sync", file.to_str().unwrap(), "--folder", "site"])
        .await
        .expect_error(2, "usage");
    cli.run(&["sync", "missing-dir", "--folder", "site"])
        .await
        .expect(1);
}

/// `--delete` deletes only what is known to be gone: nothing below a linked
/// directory the walk skipped, and nothing at all from a directory that
/// holds no file (an unmounted mount point looks like that).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn delete_spares_what_the_walk_could_not_see() {
    let (_srv, cli) = setup().await;
    let root = tree(&cli);
    sync(&cli, &root, &[]).await.expect(0);
    assert_eq!(remote(&cli).await.len(), 5);

    // css/ becomes a link to a directory elsewhere: skipped, not absent.
    let elsewhere = cli.cwd().join("elsewhere");
    std::fs::rename(root.join("css"), &elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, root.join("css")).unwrap();
    std::fs::remove_file(root.join("b.txt")).unwrap();
    let run = sync(&cli, &root, &["--delete"]).await;
    run.expect(0);
    assert_eq!(
        run.stdout.trim(),
        "uploaded 0, skipped 2, deleted 1",
        "{run:?}"
    );
    assert_eq!(
        paths(&remote(&cli).await),
        ["a.txt", "css/img/logo.bin", "css/site.css", "index.html"],
        "only b.txt went; css/ was not walked"
    );

    // An empty directory: refused before anything is deleted.
    let empty = cli.cwd().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    sync(&cli, &empty, &["--delete"])
        .await
        .expect_error(2, "usage");
    assert_eq!(remote(&cli).await.len(), 4, "nothing deleted");
    // Without --delete an empty directory is simply nothing to do.
    let run = sync(&cli, &empty, &[]).await;
    run.expect(0);
    assert_eq!(run.stdout.trim(), "uploaded 0, skipped 0, deleted 0");
}

/// A local name with `\` would be stored under another name (the server
/// takes `\` as a separator) and sent again on every run: it is refused,
/// the rest is published, and `--delete` then deletes nothing.
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread")]
async fn a_name_with_a_backslash_is_refused() {
    let (_srv, cli) = setup().await;
    let root = tree(&cli);
    settled_file(&root, "odd\\name.txt", b"x");
    let run = sync(&cli, &root, &["--delete"]).await;
    assert_eq!(run.status, 2, "{run:?}");
    assert!(run.stderr.contains("odd\\name.txt"), "{run:?}");
    assert_eq!(
        run.stdout.trim(),
        "uploaded 5, skipped 0, deleted 0, failed 1",
        "{run:?}"
    );
    assert!(!paths(&remote(&cli).await).contains(&"name.txt"));
}

/// A tree published with names in NFD (as macOS writes them) is the same
/// tree as one with those names in NFC (as Linux keeps them): nothing to do.
#[tokio::test(flavor = "multi_thread")]
async fn names_match_whatever_their_unicode_normalization() {
    let (srv, cli) = setup().await;
    // (A folder holds ASCII only: the names are what differ.)
    let (composed, decomposed) = ("men\u{fc}.txt", "menu\u{308}.txt");
    let mac = cli.cwd().join("mac");
    settled_file(&mac, &format!("cafe/{decomposed}"), b"soup");
    sync(&cli, &mac, &[]).await.expect(0);
    let linux = cli.cwd().join("linux");
    settled_file(&linux, &format!("cafe/{composed}"), b"soup");
    let again = sync(&cli, &linux, &["--delete"]).await;
    again.expect(0);
    assert_eq!(
        again.stdout.trim(),
        "uploaded 0, skipped 1, deleted 0",
        "{again:?}"
    );
    assert_eq!(srv.usage().await["upload_count"], 1);
    // A change is a replacement of that one file, not a second one.
    settled_file(&linux, &format!("cafe/{composed}"), b"stew");
    let changed = sync(&cli, &linux, &["--delete"]).await;
    changed.expect(0);
    assert_eq!(
        changed.stdout.trim(),
        "uploaded 1, skipped 0, deleted 0",
        "{changed:?}"
    );
    assert_eq!(remote(&cli).await.len(), 1);
}
