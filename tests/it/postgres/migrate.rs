//! Upgrades on a shared database (CONTRACT §17): `serve` sets up an empty
//! database, but moves an existing older schema only with `--migrate` (or
//! after `admin migrate`), else refuses to start naming the command.

use super::*;
use crate::common::process::{admin, filestore, Serve};

/// The migrations since the previous release's schema (8).
const SINCE_RELEASE: i64 = 21;

/// This binary's migrations, and SQL that takes a database back to the
/// previous release's schema (before the last [`SINCE_RELEASE`]).
fn back_to_the_release(url: &str) -> i64 {
    let migrations = std::fs::read_dir(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/src/db/postgres/migrations"
    ))
    .unwrap()
    .count() as i64;
    for sql in [
        "DROP TABLE console_sessions",
        "DROP TABLE webhook_deliveries",
        "DROP TABLE usage_days",
        "ALTER TABLE files DROP COLUMN crc32",
        "DROP TABLE scrub_turn",
        "ALTER TABLE files DROP COLUMN damaged_at",
        "ALTER TABLE files DROP COLUMN attrs",
        "DROP TABLE s3_parts",
        "DROP TABLE s3_uploads",
        "DROP TABLE s3_markers",
        "DROP TABLE s3_buckets",
        "ALTER TABLE upload_tokens DROP COLUMN replace",
        "ALTER TABLE tus_uploads DROP COLUMN at_path",
        "DROP FUNCTION filestore_files_at",
        "DROP TRIGGER files_counted_in ON files",
        "DROP TRIGGER files_counted_out ON files",
        "DROP FUNCTION files_counted_in()",
        "DROP FUNCTION files_counted_out()",
        "ALTER TABLE accounts DROP COLUMN file_count",
        "DROP INDEX files_without_md5",
        "DROP INDEX files_by_path",
        "DROP FUNCTION filestore_commit",
        "ALTER TABLE files DROP COLUMN md5",
        "ALTER TABLE tus_uploads DROP COLUMN md5_state",
        "DROP TABLE stranger_slots",
        "ALTER TABLE usage_periods DROP COLUMN stranger_uploads",
        "DROP TABLE webhook_event_batches",
        "DROP TABLE plans",
        "DROP TRIGGER image_variants_go_with_their_file ON files",
        "DROP FUNCTION image_variants_go_with_their_file()",
        "DROP TABLE image_variants",
    ] {
        pg::execute(url, sql);
    }
    pg::execute(
        url,
        &format!(
            "DELETE FROM schema_version WHERE version > {}",
            migrations - SINCE_RELEASE
        ),
    );
    migrations
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_older_schema_moves_only_when_asked() {
    if pg::admin_url().is_none() {
        return skipped();
    }
    let dir = tempfile::tempdir().unwrap();
    let url = pg::database_for(dir.path()).await.unwrap();
    // An empty database is set up by serve itself.
    let mut first = Serve::new(dir.path()).database_url(Some(&url)).start();
    first.stop_cleanly();
    let migrations = back_to_the_release(&url);
    // serve without --migrate refuses, naming the command; nothing moves.
    let out = filestore()
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.path())
        .env("FILESTORE_DATABASE_URL", &url)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("version {}", migrations - SINCE_RELEASE))
            && err.contains("filestore admin migrate")
            && err.contains("--migrate"),
        "{err}"
    );
    assert_eq!(
        pg::count(&url, "SELECT MAX(version)::BIGINT FROM schema_version"),
        migrations - SINCE_RELEASE
    );
    // Other admin commands do not move it either.
    let out = admin(dir.path(), Some(&url), &["account", "list"]);
    assert!(!out.status.success());
    // admin migrate does; then serve starts.
    let out = admin(dir.path(), Some(&url), &["migrate", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        pg::count(&url, "SELECT MAX(version)::BIGINT FROM schema_version"),
        migrations
    );
    let mut again = Serve::new(dir.path()).database_url(Some(&url)).start();
    again.stop_cleanly();
    // serve --migrate moves it too.
    back_to_the_release(&url);
    let mut migrating = Serve::new(dir.path())
        .database_url(Some(&url))
        .args(&["--migrate"])
        .start();
    migrating.stop_cleanly();
    assert_eq!(
        pg::count(&url, "SELECT MAX(version)::BIGINT FROM schema_version"),
        migrations
    );
}

/// A node of this release on a schema a newer release migrated: it runs on
/// when that release records the schema as readable by this one (its
/// migrations only added), and refuses when it does not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_newer_schema_runs_this_release_when_it_says_it_may() {
    if pg::admin_url().is_none() {
        return skipped();
    }
    let dir = tempfile::tempdir().unwrap();
    let url = pg::database_for(dir.path()).await.unwrap();
    drop(PgStore::connect(&url).await.unwrap());
    let mine = pg::count(&url, "SELECT MAX(version)::BIGINT FROM schema_version");
    // The next release adds a migration and says schema `mine` still reads it.
    pg::execute(&url, "CREATE TABLE next_release_thing (x INT)");
    pg::execute(
        &url,
        &format!(
            "INSERT INTO schema_version (version, applied_at) VALUES ({}, 0)",
            mine + 1
        ),
    );
    pg::execute(
        &url,
        &format!("UPDATE schema_compat SET readable_from = {mine}"),
    );
    let node = PgStore::connect(&url)
        .await
        .expect("runs on the newer schema");
    drop(node);
    assert_eq!(
        pg::count(&url, "SELECT readable_from::BIGINT FROM schema_compat"),
        mine,
        "an older node leaves the newer release's record alone"
    );
    // A release that contracted (dropped what this one uses) says so.
    pg::execute(
        &url,
        &format!("UPDATE schema_compat SET readable_from = {}", mine + 1),
    );
    let refused = PgStore::connect(&url).await.unwrap_err().to_string();
    assert!(refused.contains("not readable"), "{refused}");
}
