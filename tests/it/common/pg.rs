//! The suite on PostgreSQL: with `FILESTORE_TEST_DATABASE_URL` set (a URL
//! of a database the tests may create databases from, e.g.
//! `postgres://postgres@127.0.0.1:5432/postgres`), every test server gets a
//! database of its own (`CREATE DATABASE`), kept across restarts of the same
//! data dir (in this process). `contrib/pg-test.sh` starts a throwaway PostgreSQL and runs the
//! suite on it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The admin URL, when the suite runs on PostgreSQL.
pub fn admin_url() -> Option<String> {
    std::env::var("FILESTORE_TEST_DATABASE_URL")
        .ok()
        .filter(|u| !u.is_empty())
}

/// The databases of the data dirs the test servers ran on (a restart on the
/// same data dir finds its database again).
static DATABASES: std::sync::Mutex<BTreeMap<PathBuf, String>> =
    std::sync::Mutex::new(BTreeMap::new());

/// The database of the test server on `data_dir` (created on its first
/// start), or None on SQLite.
pub async fn database_for(data_dir: &Path) -> Option<String> {
    let admin = admin_url()?;
    let known = DATABASES.lock().unwrap().get(data_dir).cloned();
    let name = if let Some(name) = known {
        name
    } else {
        let name = format!("fs_test_{}", hex::encode(rand::random::<[u8; 8]>()));
        let (client, conn) = tokio_postgres::connect(&admin, tokio_postgres::NoTls)
            .await
            .expect("FILESTORE_TEST_DATABASE_URL connects");
        let task = tokio::spawn(conn);
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .await
            .expect("create the test database");
        drop(client);
        let _ = task.await;
        DATABASES
            .lock()
            .unwrap()
            .insert(data_dir.to_path_buf(), name.clone());
        name
    };
    Some(with_database(&admin, &name))
}

/// The admin URL with its database replaced by `name`.
pub fn url_of(name: &str) -> Option<String> {
    Some(with_database(&admin_url()?, name))
}

/// `url` with its database replaced by `name`.
fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, format!("?{q}")),
        None => (url, String::new()),
    };
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    let host_part = match base[scheme_end..].find('/') {
        Some(i) => &base[..scheme_end + i],
        None => base,
    };
    format!("{host_part}/{name}{query}")
}

/// Runs `work` with a client of a connection of its own, on a thread of its
/// own (the caller may be inside a runtime, of any flavour).
fn on_own_connection<T, F, Fut>(url: &str, work: F) -> T
where
    T: Send + 'static,
    F: FnOnce(tokio_postgres::Client) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = T>,
{
    let url = url.to_string();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
                .await
                .expect("test database connects");
            tokio::spawn(conn);
            work(client).await
        })
    })
    .join()
    .expect("database thread")
}

/// Runs one statement; its rows, turned into values by `get`.
fn rows<T: Send + 'static>(url: &str, sql: &str, get: fn(&tokio_postgres::Row) -> T) -> Vec<T> {
    let sql = sql.to_string();
    on_own_connection(url, move |client| async move {
        let rows = client.query(&sql, &[]).await.expect(&sql);
        rows.iter().map(get).collect()
    })
}

fn first_row<T: Send + 'static>(url: &str, sql: &str, get: fn(&tokio_postgres::Row) -> T) -> T {
    rows(url, sql, get)
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("no row: {sql}"))
}

/// Runs several statements (a migration's file).
pub fn batch(url: &str, sql: &str) {
    let sql = sql.to_string();
    on_own_connection(url, move |client| async move {
        client
            .batch_execute(&sql)
            .await
            .expect("the statements run");
    });
}

/// Runs a statement that returns no rows (`ALTER …`).
pub fn execute(url: &str, sql: &str) {
    rows(url, sql, |_| ());
}

/// One number (`SELECT COUNT(*) …`).
pub fn count(url: &str, sql: &str) -> i64 {
    first_row(url, sql, |r| r.get(0))
}

/// One text value.
pub fn text(url: &str, sql: &str) -> String {
    first_row(url, sql, |r| r.get(0))
}
