//! Plans live in the database (CONTRACT §17): every node enforces the plans
//! stored there, not its own config's; a node's `[plans.*]` is written there
//! at its start (and by `admin plan apply`), saying what it changed; a node
//! refuses to start while an account is on a plan nobody defines; `admin
//! account set --plan` refuses an unknown plan.

use crate::common::process::admin;
use crate::common::{error_code, TestOptions, TestServer};
use filestore::testing::clock::Clock;
use filestore::testing::config::{Config, Env, FileConfig, Overrides};
use filestore::testing::service::App;

const TEAM: &str = "[plans.team]\nmax_file_size = 1000\n";

/// A node's config over `data` (and the test's database, if on PostgreSQL).
fn config(srv: &TestServer, toml_text: &str) -> Config {
    let file: FileConfig = toml::from_str(toml_text).unwrap();
    let mut c = Config::resolve(
        file,
        &Env::empty(),
        &Overrides {
            data_dir: Some(srv.data_dir.clone()),
            ..Default::default()
        },
    )
    .unwrap();
    if srv.on_postgres() {
        c.database_url = Some(filestore::testing::config::Secret::new(
            srv.database_url().to_string(),
        ));
    }
    c
}

fn url_of(srv: &TestServer) -> Option<String> {
    srv.on_postgres().then(|| srv.database_url().to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_node_enforces_the_plans_in_the_database() {
    // Node A knows plan "team" (1000-byte files) from its config.
    let a = TestServer::start_with(TestOptions {
        plans_toml: Some(TEAM.into()),
        ..Default::default()
    })
    .await;
    let (acc, key) = a.new_account("t", "team").await;
    // Node B on the same database has no [plans.team] at all: it enforces
    // the database's team plan, not free's 10 MB, and says so in usage.
    let b = App::open(config(&a, ""), Clock::new()).await.unwrap();
    let account = filestore::testing::service::admin::find_account(&*b.meta, &acc)
        .await
        .unwrap();
    let plan = b.plan_of(&account);
    assert_eq!((plan.name.as_str(), plan.max_file_size), ("team", 1000));
    let r = a.upload_as(&key, "big.bin", vec![0; 2000], &[]).await;
    assert_eq!(error_code(r).await.0, 413);
    // `admin plan list` shows what the database has.
    let out = admin(
        &a.data_dir,
        url_of(&a).as_deref(),
        &["plan", "list", "--json"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["name"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(names, ["free", "hobby", "owner", "pro", "team"]);
    // `admin plan apply` with another config changes team for every node,
    // and says what it changed; node A enforces it within a collector pass.
    let cfg = a.data_dir.join("other.toml");
    std::fs::write(&cfg, "[plans.team]\nmax_file_size = 5000\n").unwrap();
    let out = admin(
        &a.data_dir,
        url_of(&a).as_deref(),
        &["plan", "apply", "--config", cfg.to_str().unwrap()],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && err.contains("max_file_size 1000 -> 5000"),
        "{err}"
    );
    a.eventually(10, "node A enforces the applied plan", || async {
        a.upload_as(&key, "big.bin", vec![0; 2000], &[])
            .await
            .status()
            == 201
    })
    .await;
    // A plan nobody defines is refused by admin.
    let out = admin(
        &a.data_dir,
        url_of(&a).as_deref(),
        &["account", "set", &acc, "--plan", "platinum"],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("platinum"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_refuses_to_start_with_accounts_on_unknown_plans() {
    let a = TestServer::start().await;
    let (_, _) = a.new_account("ghostly", "free").await;
    let sql = "UPDATE accounts SET plan = 'ghost' WHERE name = 'ghostly'";
    if a.on_postgres() {
        crate::common::pg::execute(a.database_url(), sql);
    } else {
        a.sqlite().unwrap().execute_batch(sql).unwrap();
    }
    let Err(e) = App::open(config(&a, ""), Clock::new()).await else {
        panic!("a node started with an account on plan ghost");
    };
    let why = e.to_string();
    assert!(
        why.contains("\"ghost\"") && why.contains("ghostly"),
        "{why}"
    );
    // The same config defining ghost starts, and writes it for every node.
    let b = App::open(config(&a, "[plans.ghost]\nuploads = 7\n"), Clock::new())
        .await
        .unwrap();
    assert_eq!(b.plans().get("ghost").unwrap().uploads, 7);
}
