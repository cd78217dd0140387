//! The client commands end to end: the real binary against an in-process
//! server — upload (files, trees, stdin), list, get, download, sign, delete,
//! usage, health, in human and `--json` form.

use crate::cli_common::{pattern, write_file, Cli};
use crate::common::TestServer;
use std::collections::BTreeSet;

async fn setup() -> (TestServer, Cli) {
    let srv = TestServer::start().await;
    let cli = Cli::new(&srv.base_url, &srv.secret_key);
    (srv, cli)
}

#[tokio::test(flavor = "multi_thread")]
async fn upload_get_download_delete_roundtrip() {
    let (_srv, cli) = setup().await;
    let content = pattern(300_000, 7);
    let path = write_file(&cli.cwd(), "src/report.bin", &content);
    let up = cli
        .run(&[
            "upload",
            path.to_str().unwrap(),
            "--folder",
            "docs/q1",
            "--json",
        ])
        .await;
    up.expect(0);
    let lines = up.json_lines();
    assert_eq!(lines.len(), 1, "{up:?}");
    let rec = &lines[0];
    assert_eq!(rec["name"], "report.bin");
    assert_eq!(rec["folder"], "docs/q1");
    assert_eq!(rec["size"], 300_000);
    assert_eq!(rec["private"], false);
    let id = rec["id"].as_str().unwrap().to_string();

    let got = cli.run(&["get", &id, "--json"]).await;
    got.expect(0);
    let got = got.json();
    assert_eq!(got["id"], rec["id"]);
    assert_eq!(got["url"], rec["url"]);

    let human = cli.run(&["get", &id]).await;
    human.expect(0);
    assert!(human.stdout.contains("report.bin") && human.stdout.contains("docs/q1"));

    // Byte-exact to a file, to a directory, and to stdout.
    let out = cli.cwd().join("copy.bin");
    cli.run(&["download", &id, "-o", out.to_str().unwrap()])
        .await
        .expect(0);
    assert!(std::fs::read(&out).unwrap() == content, "download differs");
    let dir = cli.cwd().join("dl");
    std::fs::create_dir_all(&dir).unwrap();
    cli.run(&["download", &id, "-o", dir.to_str().unwrap()])
        .await
        .expect(0);
    assert!(
        std::fs::read(dir.join("report.bin")).unwrap() == content,
        "download differs"
    );
    // -o DIR never replaces DIR/name silently either.
    std::fs::write(dir.join("report.bin"), b"mine").unwrap();
    let r = cli
        .run(&["download", &id, "-o", dir.to_str().unwrap()])
        .await;
    r.expect_error(2, "usage");
    assert!(r.stderr.contains("--force"), "{r:?}");
    assert_eq!(std::fs::read(dir.join("report.bin")).unwrap(), b"mine");
    cli.run(&["download", &id, "-o", dir.to_str().unwrap(), "--force"])
        .await
        .expect(0);
    assert!(
        std::fs::read(dir.join("report.bin")).unwrap() == content,
        "download differs"
    );
    let piped = cli.run(&["download", &id, "-o", "-"]).await;
    piped.expect(0);
    assert!(piped.bytes == content, "stdout differs from the upload");
    // Default target: the name in the current directory, never replaced silently.
    cli.run(&["download", &id]).await.expect(0);
    assert!(
        std::fs::read(cli.cwd().join("report.bin")).unwrap() == content,
        "download differs"
    );
    cli.run(&["download", &id]).await.expect_error(2, "usage");
    cli.run(&["download", &id, "--force"]).await.expect(0);
    let leftovers: Vec<_> = std::fs::read_dir(cli.cwd())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".part"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");

    let del = cli.run(&["delete", &id, "--json"]).await;
    del.expect(0);
    assert_eq!(del.json(), serde_json::json!({"id": id, "success": true}));
    cli.run(&["get", &id]).await.expect_error(4, "not_found");
    cli.run(&["delete", &id]).await.expect_error(4, "not_found");
}

#[tokio::test(flavor = "multi_thread")]
async fn private_files_download_through_signed_urls() {
    let (srv, cli) = setup().await;
    let content = pattern(5000, 3);
    let path = write_file(&cli.cwd(), "secret.txt", &content);
    let up = cli
        .run(&[
            "upload",
            path.to_str().unwrap(),
            "--private",
            "--expires",
            "1h",
            "--json",
        ])
        .await;
    up.expect(0);
    let rec = &up.json_lines()[0];
    assert!(rec["url"].is_null());
    assert!(rec["expires_at"].is_string());
    let id = rec["id"].as_str().unwrap();

    let out = cli.cwd().join("secret.copy");
    cli.run(&["download", id, "-o", out.to_str().unwrap()])
        .await
        .expect(0);
    assert!(std::fs::read(&out).unwrap() == content, "download differs");

    // sign prints only the URL, which works without a key.
    let signed = cli.run(&["sign", id, "--expires", "90s"]).await;
    signed.expect(0);
    let url = signed.stdout.trim();
    assert_eq!(signed.stdout.lines().count(), 1);
    assert!(url.contains("signature="), "{url}");
    let body = srv.http.get(url).send().await.unwrap();
    assert_eq!(body.status(), 200);
    assert_eq!(body.bytes().await.unwrap().to_vec(), content);

    let json = cli.run(&["sign", id, "--json"]).await;
    json.expect(0);
    let rec = json.json();
    assert!(rec["url"].is_string() && rec["expires_at"].is_string());

    // Over 7 days is refused before any request.
    cli.run(&["sign", id, "--expires", "8d"])
        .await
        .expect_error(2, "usage");
    cli.run(&["sign", id, "--expires", "604801"])
        .await
        .expect_error(2, "usage");
    cli.run(&["sign", id, "--expires", "604800"])
        .await
        .expect(0);
}

#[tokio::test(flavor = "multi_thread")]
async fn directory_tree_uploads_concurrently_with_relative_folders() {
    let (srv, cli) = setup().await;
    let root = cli.cwd().join("dist");
    let mut want = BTreeSet::new();
    for i in 0..12 {
        let rel = match i % 3 {
            0 => format!("f{i}.txt"),
            1 => format!("js/f{i}.js"),
            _ => format!("assets/img/f{i}.png"),
        };
        write_file(&root, &rel, &pattern(1000 + i, i as u8));
        let (folder, name) = match rel.rsplit_once('/') {
            Some((d, n)) => (format!("releases/v1.2/{d}"), n.to_string()),
            None => ("releases/v1.2".to_string(), rel.clone()),
        };
        want.insert((folder, name));
    }
    // A link to a directory is skipped (no cycles), and said so on stderr.
    #[cfg(unix)]
    std::os::unix::fs::symlink(root.join("js"), root.join("linked")).unwrap();
    let up = cli
        .run(&[
            "upload",
            "-r",
            root.to_str().unwrap(),
            "--folder",
            "releases/v1.2",
            "-j",
            "4",
            "--json",
        ])
        .await;
    up.expect(0);
    let got: BTreeSet<(String, String)> = up
        .json_lines()
        .iter()
        .map(|r| {
            (
                r["folder"].as_str().unwrap().to_string(),
                r["name"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(got, want);
    // Every line is a record with a URL (`… --json | jq -r .url`).
    assert!(up
        .json_lines()
        .iter()
        .all(|r| r["url"].as_str().is_some_and(|u| u.starts_with("http"))));
    // Off a terminal: one plain line per finished file, no bar drawing.
    assert_eq!(
        up.stderr
            .lines()
            .filter(|l| l.starts_with("uploaded "))
            .count(),
        13,
        "{}",
        up.stderr
    );
    assert!(
        !up.stderr.contains('\r') && !up.stderr.contains('\x1b'),
        "{:?}",
        up.stderr
    );
    #[cfg(unix)]
    assert!(
        up.stderr
            .lines()
            .any(|l| l.starts_with("skipped ") && l.contains("linked")),
        "{}",
        up.stderr
    );

    let usage = srv.usage().await;
    assert_eq!(usage["upload_count"], 12);

    // A directory without -r is an error for that path only.
    let single = write_file(&cli.cwd(), "one.txt", b"1");
    let mixed = cli
        .run(&["upload", root.to_str().unwrap(), single.to_str().unwrap()])
        .await;
    mixed.expect_error(2, "usage");
    assert_eq!(
        mixed.stdout.lines().count(),
        1,
        "the file still uploads: {mixed:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn stdin_upload_with_a_name() {
    let (_srv, cli) = setup().await;
    let content = pattern(70_000, 9);
    let up = cli
        .run_stdin(
            &["upload", "-", "--name", "log.txt", "--json"],
            content.clone(),
        )
        .await;
    up.expect(0);
    let rec = &up.json_lines()[0];
    assert_eq!(rec["name"], "log.txt");
    assert_eq!(rec["size"], 70_000);
    let dl = cli
        .run(&["download", rec["id"].as_str().unwrap(), "-o", "-"])
        .await;
    dl.expect(0);
    assert!(dl.bytes == content, "stdin upload differs");

    let plain = cli.run_stdin(&["upload", "-"], b"hello".to_vec()).await;
    plain.expect(0);
    assert!(
        plain.stdout.starts_with("uploaded stdin (5 B) as f_"),
        "{plain:?}"
    );
    cli.run_stdin(&["upload", "-", "-"], vec![])
        .await
        .expect_error(2, "usage");
}

#[tokio::test(flavor = "multi_thread")]
async fn list_pages_filters_and_formats() {
    let (srv, cli) = setup().await;
    for i in 0..7 {
        let folder = if i < 4 { "a" } else { "b" };
        srv.upload_ok(
            &format!("n{i}.txt"),
            vec![b'x'; i + 1],
            &[("folder", folder)],
        )
        .await;
    }
    let all = cli.run(&["list", "--all", "--json"]).await;
    all.expect(0);
    let recs = all.json_lines();
    assert_eq!(recs.len(), 7);
    assert_eq!(recs[0]["name"], "n6.txt", "newest first");

    let paged = cli.run(&["list", "--limit", "3", "--json"]).await;
    paged.expect(0);
    assert_eq!(paged.json_lines().len(), 3);
    assert!(paged.stderr.contains("--cursor"), "{paged:?}");
    let small_pages = cli.run(&["list", "--all", "--json", "--folder", "a"]).await;
    assert_eq!(small_pages.json_lines().len(), 4);

    let human = cli.run(&["list", "--folder", "b"]).await;
    human.expect(0);
    let lines: Vec<&str> = human.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "header + 3: {human:?}");
    assert!(lines[0].starts_with("NAME"));
    assert!(
        lines[1].contains("b/n6.txt") && lines[1].contains("7 B") && lines[1].contains("public")
    );

    let empty = cli.run(&["list", "--folder", "none", "--json"]).await;
    empty.expect(0);
    assert!(empty.stdout.is_empty());

    // -r: a folder with its subfolders.
    srv.upload_ok("deep.txt", b"d".to_vec(), &[("folder", "b/v1.2")])
        .await;
    // Without -r, the subfolder heads the folder's own files.
    let exact = cli.run(&["list", "--folder", "b", "--json"]).await;
    let recs = exact.json_lines();
    assert_eq!(recs.len(), 1 + 3);
    assert_eq!(recs[0], serde_json::json!({"folder": "b/v1.2"}));
    let deep = cli
        .run(&["list", "--folder", "b", "-r", "--all", "--json"])
        .await;
    deep.expect(0);
    let recs = deep.json_lines();
    assert_eq!(recs.len(), 4);
    assert_eq!(recs[0]["folder"], "b/v1.2");
    cli.run(&["list", "-r"]).await.expect_error(2, "usage");
    cli.run(&["list", "--limit", "0"])
        .await
        .expect_error(2, "usage");
}

#[tokio::test(flavor = "multi_thread")]
async fn usage_and_health() {
    let (srv, cli) = setup().await;
    srv.upload_ok("a.txt", vec![1; 1234], &[]).await;
    let u = cli.run(&["usage", "--json"]).await;
    u.expect(0);
    let rec = u.json();
    assert_eq!(rec["storage_bytes"], 1234);
    assert_eq!(rec["upload_count"], 1);
    let human = cli.run(&["usage"]).await;
    human.expect(0);
    assert!(
        human.stdout.contains("1.23 kB of 1.00 GB (0.0%)")
            && human.stdout.contains("uploads    1 of 1000 (0.1%)"),
        "{human:?}"
    );
    // --json: the record as the server sent it, fields in the server's order.
    let first_key = u
        .stdout
        .trim_start()
        .trim_start_matches('{')
        .split(':')
        .next()
        .unwrap()
        .to_string();
    assert_eq!(first_key, "\"storage_bytes\"", "{u:?}");

    // Health needs no key.
    let mut anon = Cli::new(&srv.base_url, "");
    anon.envs.push(("FILESTORE_API_KEY".into(), String::new()));
    let h = anon.run(&["health", "--json"]).await;
    h.expect(0);
    assert_eq!(h.json()["status"], "ok");
    let h = anon.run(&["health"]).await;
    h.expect(0);
    assert!(h.stdout.starts_with("ok"));
    assert!(h.stdout.contains("database"));
}

#[tokio::test(flavor = "multi_thread")]
async fn delete_many_goes_on_after_a_failure() {
    let (srv, cli) = setup().await;
    let a = srv.upload_ok("a.txt", b"a".to_vec(), &[]).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let b = srv.upload_ok("b.txt", b"b".to_vec(), &[]).await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let r = cli.run(&["delete", &a, "f_missing", &b]).await;
    r.expect_error(4, "not_found");
    assert_eq!(r.stdout, format!("deleted {a}\ndeleted {b}\n"));
    let list = cli.run(&["list", "--json"]).await;
    assert!(list.stdout.is_empty());
}

/// `--expires` takes bare seconds on upload as it does on sign (sent as `Ns`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upload_expires_takes_bare_seconds_like_sign() {
    let (_srv, cli) = setup().await;
    let path = write_file(&cli.cwd(), "soon.txt", b"soon");
    let up = cli
        .run(&[
            "upload",
            path.to_str().unwrap(),
            "--expires",
            "3600",
            "--json",
        ])
        .await;
    up.expect(0);
    let rec = &up.json_lines()[0];
    let created =
        chrono::DateTime::parse_from_rfc3339(rec["created_at"].as_str().unwrap()).unwrap();
    let expires =
        chrono::DateTime::parse_from_rfc3339(rec["expires_at"].as_str().unwrap()).unwrap();
    assert_eq!((expires - created).num_seconds(), 3600);
}

/// At a terminal: a single upload's bar shows percent and ETA, and both the
/// upload and a download say how they ended (a download prints nothing on
/// stdout, so this line is all the user sees).
#[tokio::test(flavor = "multi_thread")]
async fn at_a_terminal_single_transfers_show_percent_eta_and_an_ending() {
    let (_srv, cli) = setup().await;
    let path = write_file(&cli.cwd(), "big.bin", &pattern(3_000_000, 3));
    let Some(up) = cli.run_on_a_terminal(&["upload", path.to_str().unwrap()]) else {
        eprintln!("skipped: no `script` (util-linux) to give the CLI a terminal");
        return;
    };
    let id = up
        .split_whitespace()
        .find(|w| w.starts_with("f_"))
        .unwrap_or_else(|| panic!("no id in {up:?}"))
        .to_string();
    assert!(up.contains('%') && up.contains("ETA"), "{up:?}");
    assert!(up.contains("big.bin (3.00 MB) as f_"), "{up:?}");
    let out = cli.cwd().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let down = cli
        .run_on_a_terminal(&["download", &id, "-o", out.to_str().unwrap()])
        .unwrap();
    assert!(down.contains(&format!("downloaded {id}")), "{down:?}");
    assert_eq!(
        std::fs::read(out.join("big.bin")).unwrap(),
        pattern(3_000_000, 3)
    );
}

/// A partial file that already holds every byte (a run stopped before its
/// rename) completes without a request; one that another download holds
/// locked is refused instead of written twice.
#[tokio::test(flavor = "multi_thread")]
async fn a_complete_partial_file_finishes_and_a_locked_one_is_refused() {
    let (srv, cli) = setup().await;
    let content = pattern(100_000, 9);
    let f = srv.upload_ok("whole.bin", content.clone(), &[]).await;
    let id = f["id"].as_str().unwrap();
    let dir = cli.cwd().join("out");
    std::fs::create_dir_all(&dir).unwrap();
    let part = dir.join(format!(".filestore-{id}.part"));

    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&part)
        .unwrap();
    rustix::fs::flock(&lock, rustix::fs::FlockOperation::NonBlockingLockExclusive).unwrap();
    let r = cli
        .run(&["download", id, "-o", dir.to_str().unwrap()])
        .await;
    r.expect_error(1, "io");
    assert!(r.stderr.contains("another download"), "{r:?}");
    drop(lock);

    std::fs::write(&part, &content).unwrap();
    let before = srv.usage().await["bandwidth_bytes"].as_u64().unwrap();
    cli.run(&["download", id, "-o", dir.to_str().unwrap()])
        .await
        .expect(0);
    assert_eq!(std::fs::read(dir.join("whole.bin")).unwrap(), content);
    assert!(!part.exists());
    assert_eq!(
        srv.usage().await["bandwidth_bytes"].as_u64().unwrap(),
        before,
        "no byte was fetched again"
    );
}
