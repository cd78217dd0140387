//! `serve` holds its data dir: a second `serve` on it exits 1 naming the
//! first one's pid, while `admin` commands still run beside it; on
//! PostgreSQL, a data dir whose SQLite database holds files is refused.

use crate::common::process::{admin, filestore, Serve};
use crate::common::{pg, upload_form};

/// `filestore serve` on `data` that is expected to stop at once: (exit code, stderr).
fn serve_refused(data: &std::path::Path, database_url: Option<&str>) -> (Option<i32>, String) {
    let mut cmd = filestore();
    cmd.args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(data);
    if let Some(url) = database_url {
        cmd.env("FILESTORE_DATABASE_URL", url);
    }
    let out = cmd.output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_serve_on_the_data_dir_names_the_first_and_admin_still_runs() {
    let dir = tempfile::tempdir().unwrap();
    let mut first = Serve::new(dir.path()).start();
    let (code, err) = serve_refused(dir.path(), None);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains(&format!("pid {}", first.pid())) && err.contains("in use"),
        "{err}"
    );
    // The first still serves, and admin runs beside it.
    let out = admin(dir.path(), None, &["account", "list", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let status = reqwest::get(first.url("/v1/health"))
        .await
        .unwrap()
        .status();
    assert_eq!(status, 200);
    // Once it stops (even killed), the dir is free again.
    first.kill_9();
    let mut again = Serve::new(dir.path()).start();
    again.terminate();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_on_postgresql_refuses_a_data_dir_whose_sqlite_holds_files() {
    let Some(_) = pg::admin_url() else {
        eprintln!("skipped: set FILESTORE_TEST_DATABASE_URL to run this PostgreSQL test");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // A node on SQLite with one file.
    let mut node = Serve::new(dir.path()).start();
    let key = node.key();
    let form = upload_form("a.txt", b"kept".to_vec(), &[]);
    let r = reqwest::Client::new()
        .post(node.url("/v1/upload"))
        .bearer_auth(&key)
        .multipart(form)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    node.stop_cleanly();
    let url = pg::database_for(dir.path()).await.unwrap();
    let (code, err) = serve_refused(dir.path(), Some(&url));
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("filestore.db")
            && err.contains("1 file(s)")
            && err.contains("admin backup")
            && err.contains("admin restore")
            && err.contains("--database"),
        "{err}"
    );
    // A data dir whose SQLite holds no files (or that has none) starts.
    let empty = tempfile::tempdir().unwrap();
    let mut served = Serve::new(empty.path()).database_url(Some(&url)).start();
    served.terminate();
}
