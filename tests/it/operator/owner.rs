//! The bootstrap account `default` is on the built-in plan `owner` (no
//! storage or monthly limits, files up to 5 TiB); `server.default_plan`
//! decides the accounts made later; an existing `default` keeps its plan.

use crate::common::pg;
use crate::common::process::{admin, Serve, ServeProcess};
use crate::common::upload_form;
use serde_json::Value;

/// 12 MB: past free's 10 MB files.
const PAST_FREE: usize = 12_000_000;

async fn upload_status(server: &ServeProcess, key: &str, size: usize) -> u16 {
    reqwest::Client::new()
        .post(server.url("/v1/upload"))
        .bearer_auth(key)
        .multipart(upload_form("big.bin", vec![7; size], &[]))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

/// `admin ARGS --json` on the server's data (and database): its one record.
fn admin_json(server: &ServeProcess, args: &[&str]) -> Value {
    let mut all = args.to_vec();
    all.push("--json");
    let out = admin(&server.data, server.database_url.as_deref(), &all);
    assert!(out.status.success(), "{args:?}: {out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fresh_default_account_is_on_owner_and_keeps_a_plan_it_had() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let db = pg::database_for(&data).await;
    let mut server = Serve::new(&data).database_url(db.as_deref()).start();
    let key = server.key();
    let accounts = admin(&data, db.as_deref(), &["account", "list", "--json"]);
    let default: Value = serde_json::from_str(
        String::from_utf8_lossy(&accounts.stdout)
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        (&default["name"], &default["plan"]),
        (&"default".into(), &"owner".into())
    );
    // Past free's largest file, and no quota in the usage record.
    assert_eq!(upload_status(&server, &key, PAST_FREE).await, 201);
    let usage: Value = reqwest::Client::new()
        .get(server.url("/v1/usage"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(usage["plan"], "owner");
    assert_eq!(usage["storage_bytes"], PAST_FREE as u64);
    assert_eq!(usage["limits"]["storage_bytes"], i64::MAX);
    assert_eq!(usage["limits"]["upload_count"], i64::MAX);
    // `admin plan list` shows owner with the others.
    let plans = admin(&data, db.as_deref(), &["plan", "list"]);
    let text = String::from_utf8_lossy(&plans.stdout);
    let owner = text.lines().find(|l| l.starts_with("owner ")).expect(&text);
    assert!(
        owner.contains("storage=unlimited") && owner.contains("uploads=unlimited/month"),
        "{owner}"
    );
    // An account made later is on server.default_plan.
    let later = admin_json(&server, &["account", "create", "--name", "later"]);
    assert_eq!(later["plan"], "free");

    // A default account on free (as a data dir of an earlier release has
    // it) stays on free across a restart.
    let set = admin_json(&server, &["account", "set", "default", "--plan", "free"]);
    assert_eq!(set["plan"], "free");
    assert!(server.terminate().success());
    let server = Serve::new(&data).database_url(db.as_deref()).start();
    assert!(server.key.is_none(), "no second bootstrap");
    let accounts = admin(&data, db.as_deref(), &["account", "list", "--json"]);
    let default: Value = serde_json::from_str(
        String::from_utf8_lossy(&accounts.stdout)
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        (&default["name"], &default["plan"]),
        (&"default".into(), &"free".into())
    );
    assert_eq!(upload_status(&server, &key, PAST_FREE).await, 413);
}
