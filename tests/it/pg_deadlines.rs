//! PostgreSQL deadlines: a frozen database (every process of its cluster
//! stopped with SIGSTOP) or a statement stuck behind another session's lock
//! answers 503 `unavailable` within `database.statement_timeout` (1 s here)
//! plus a wide margin, health says degraded, and requests succeed again once
//! the database runs again. The cluster is a throwaway one of this test's
//! own (freezing the suite's shared one would stall every other test).
//!
//! Runs with `FILESTORE_TEST_DATABASE_URL` set (`contrib/pg-test.sh
//! pg_deadlines`) and PostgreSQL's server binaries (`PGBIN`, else
//! `/usr/lib/postgresql/*/bin`); skips, saying why, otherwise.

use crate::common::{error_code, pg, TestOptions, TestServer};
use std::io::Write;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

/// The server's `statement_timeout` in this test.
const LIMIT: Duration = Duration::from_secs(1);
/// What a deadline may overrun by on a busy test machine: an answer later
/// than `LIMIT + MARGIN` is a hang.
const MARGIN: Duration = Duration::from_secs(4);

/// A PostgreSQL cluster of this test's own, stopped (and thawed first if
/// frozen) when dropped.
struct Cluster {
    bin: PathBuf,
    dir: tempfile::TempDir,
    port: u16,
}

/// The directory of `initdb` and `pg_ctl`: `PGBIN`, else the newest
/// `/usr/lib/postgresql/*/bin` that has them.
fn pg_bin() -> Option<PathBuf> {
    if let Some(bin) = std::env::var_os("PGBIN") {
        return Some(PathBuf::from(bin));
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|b| b.join("initdb").exists())
        .collect();
    found.sort_by_key(|b| {
        b.parent()
            .and_then(|v| v.file_name())
            .and_then(|v| v.to_str()?.parse::<u32>().ok())
    });
    found.pop()
}

fn running_as_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// Runs `cmd` (a shell command line), as the `postgres` user when root
/// (initdb refuses root).
fn as_pg(cmd: &str) {
    let status = if running_as_root() {
        Command::new("su").args(["postgres", "-c", cmd]).status()
    } else {
        Command::new("sh").args(["-c", cmd]).status()
    };
    assert!(status.is_ok_and(|s| s.success()), "{cmd} failed");
}

impl Cluster {
    fn start(bin: PathBuf) -> Cluster {
        let dir = tempfile::Builder::new()
            .prefix("filestore-pg-deadlines-")
            .tempdir()
            .unwrap();
        if running_as_root() {
            let ok = Command::new("chown")
                .args(["postgres"])
                .arg(dir.path())
                .status();
            assert!(ok.is_ok_and(|s| s.success()), "chown postgres");
        }
        let port = crate::common::process::free_port();
        let (b, d) = (bin.display(), dir.path().display());
        as_pg(&format!(
            "{b}/initdb -D {d}/data -A trust -U postgres >{d}/initdb.log 2>&1"
        ));
        as_pg(&format!(
            "{b}/pg_ctl -D {d}/data -l {d}/log -w -o \
             '-p {port} -k {d} -c listen_addresses=127.0.0.1 -c fsync=off' start >/dev/null"
        ));
        Cluster { bin, dir, port }
    }

    fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// The postmaster and every process it started (backends, background
    /// workers).
    fn pids(&self) -> Vec<String> {
        let pidfile = self.dir.path().join("data/postmaster.pid");
        let text = std::fs::read_to_string(pidfile).expect("postmaster.pid");
        let master = text.lines().next().unwrap().trim().to_string();
        let mut pids = vec![master.clone()];
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            // pid (comm) state ppid …: comm may hold spaces, so after ')'.
            let ppid = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1).map(str::to_string));
            if ppid.as_deref() == Some(master.as_str()) {
                pids.push(entry.file_name().to_string_lossy().into_owned());
            }
        }
        pids
    }

    fn signal(&self, sig: &str) {
        let status = Command::new("kill")
            .arg(format!("-{sig}"))
            .args(self.pids())
            .status();
        assert!(status.is_ok_and(|s| s.success()), "kill -{sig}");
    }

    fn freeze(&self) {
        self.signal("STOP");
    }

    fn thaw(&self) {
        self.signal("CONT");
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new("kill").arg("-CONT").args(self.pids()).status();
        let (b, d) = (self.bin.display(), self.dir.path().display());
        as_pg(&format!(
            "{b}/pg_ctl -D {d}/data -m immediate stop >/dev/null"
        ));
    }
}

/// The cluster and a server on it with a 1 s statement_timeout, or None
/// (with the reason on stderr).
async fn setup(test: &str) -> Option<(Cluster, TestServer)> {
    let skip = |why: &str| {
        let _ = writeln!(std::io::stderr(), "skipping pg_deadlines::{test}: {why}");
    };
    if pg::admin_url().is_none() {
        skip("FILESTORE_TEST_DATABASE_URL unset (contrib/pg-test.sh pg_deadlines runs it)");
        return None;
    }
    let Some(bin) = pg_bin().filter(|b| b.join("pg_ctl").exists()) else {
        skip("no PostgreSQL server binaries (set PGBIN)");
        return None;
    };
    let cluster = tokio::task::block_in_place(|| Cluster::start(bin));
    let server = TestServer::start_with(TestOptions {
        plans_toml: Some(format!(
            "[database]\nstatement_timeout = \"{}ms\"\n",
            LIMIT.as_millis()
        )),
        database_url: Some(cluster.url()),
        ..Default::default()
    })
    .await;
    Some((cluster, server))
}

/// A client that gives up (a failed test, not a hung one) long after any
/// deadline.
fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .timeout(Duration::from_mins(1))
        .build()
        .unwrap()
}

/// List, usage and an upload: each answer's status and error code, and how
/// long it took.
async fn requests(s: &TestServer) -> Vec<(&'static str, u16, String, Duration)> {
    let http = client();
    let key = &s.secret_key;
    let timed = |name: &'static str, req: reqwest::RequestBuilder| async move {
        let started = Instant::now();
        let r = req.send().await.expect(name);
        let took = started.elapsed();
        let status = r.status().as_u16();
        let code = if status >= 400 {
            error_code(r).await.1
        } else {
            String::new()
        };
        (name, status, code, took)
    };
    let form = TestServer::form("a.txt", b"during the freeze".to_vec(), &[]);
    let (list, usage, upload) = tokio::join!(
        timed("list", http.get(s.url("/v1/files")).bearer_auth(key)),
        timed("usage", http.get(s.url("/v1/usage")).bearer_auth(key)),
        timed(
            "upload",
            http.post(s.url("/v1/upload"))
                .bearer_auth(key)
                .multipart(form)
        ),
    );
    vec![list, usage, upload]
}

/// Health's status and how long it took.
async fn health(s: &TestServer) -> (u16, String, Duration) {
    let started = Instant::now();
    let r = client().get(s.url("/v1/health")).send().await.unwrap();
    let took = started.elapsed();
    let status = r.status().as_u16();
    let body: serde_json::Value = r.json().await.unwrap();
    (
        status,
        body["status"].as_str().unwrap_or("").to_string(),
        took,
    )
}

fn report(what: &str, took: Duration) {
    let _ = writeln!(std::io::stderr(), "pg_deadlines: {what} in {took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn frozen_database_answers_503_within_the_deadline_then_recovers() {
    let Some((cluster, s)) = setup("frozen_database").await else {
        return;
    };
    for (name, status, code, _) in requests(&s).await {
        assert!(
            status == 200 || status == 201,
            "{name} before: {status} {code}"
        );
    }
    cluster.freeze();
    let frozen_at = Instant::now();
    // Twice: the first round finds the pooled connections frozen, the
    // second needs new ones, which cannot be opened.
    for round in 1..=2 {
        let ((hstatus, hbody, htook), answers) = tokio::join!(health(&s), requests(&s));
        for (name, status, code, took) in answers {
            report(
                &format!("frozen, round {round}: {name} {status} {code}"),
                took,
            );
            assert_eq!((status, code.as_str()), (503, "unavailable"), "{name}");
            assert!(took < LIMIT + MARGIN, "{name} took {took:?}");
        }
        report(&format!("frozen, round {round}: health {hstatus}"), htook);
        assert_eq!((hstatus, hbody.as_str()), (503, "degraded"));
        assert!(htook < LIMIT + MARGIN, "health took {htook:?}");
    }
    report("SIGSTOP to the end of both rounds", frozen_at.elapsed());
    cluster.thaw();
    let thawed = Instant::now();
    loop {
        let answers = requests(&s).await;
        if answers.iter().all(|(_, st, _, _)| *st == 200 || *st == 201) {
            break;
        }
        assert!(
            thawed.elapsed() < Duration::from_secs(30),
            "no recovery after SIGCONT: {answers:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    report(
        "SIGCONT to list, usage and upload answering",
        thawed.elapsed(),
    );
    let (status, _, _) = health(&s).await;
    assert_eq!(status, 200);
    let (status, body) = s.get_json(&s.secret_key, "/v1/files").await;
    assert_eq!(status, 200);
    assert_eq!(
        body["files"].as_array().map(Vec::len),
        Some(2),
        "the uploads before and after the freeze, none during it: {body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_statement_stuck_behind_a_lock_answers_503_within_the_deadline() {
    let Some((cluster, s)) = setup("locked_table").await else {
        return;
    };
    for (name, status, code, _) in requests(&s).await {
        assert!(
            status == 200 || status == 201,
            "{name} before: {status} {code}"
        );
    }
    // Another session holds every table the requests read or write.
    let (mut locker, conn) = tokio_postgres::connect(&cluster.url(), tokio_postgres::NoTls)
        .await
        .unwrap();
    tokio::spawn(conn);
    let tx = locker.transaction().await.unwrap();
    tx.batch_execute("LOCK TABLE files, accounts, usage_periods IN ACCESS EXCLUSIVE MODE")
        .await
        .unwrap();
    for (name, status, code, took) in requests(&s).await {
        report(&format!("locked: {name} {status} {code}"), took);
        assert_eq!((status, code.as_str()), (503, "unavailable"), "{name}");
        assert!(took < LIMIT + MARGIN, "{name} took {took:?}");
    }
    tx.rollback().await.unwrap();
    for (name, status, code, _) in requests(&s).await {
        assert!(
            status == 200 || status == 201,
            "{name} after: {status} {code}"
        );
    }
}
