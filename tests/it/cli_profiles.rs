//! Profiles and who the client is (issue 45, CONTRACT §22): `login` asks
//! for the key on a terminal (echo off), `logout`, `whoami`, `profile
//! list`, and the only saved profile standing in for `default`.

use crate::cli_common::Cli;
use crate::common::TestServer;
use std::io::{Read, Write};
use std::process::{Command, Stdio};

/// `filestore ARGS` on a pseudo-terminal (util-linux `script`); `answer`
/// is typed once `prompt` is on the screen. Gives everything the terminal
/// showed and the exit status; None where `script` is missing.
fn on_a_terminal(cli: &Cli, args: &[&str], prompt: &str, answer: &str) -> Option<(String, i32)> {
    let inner = cli.command(args, false);
    let quote = |s: &std::ffi::OsStr| format!("'{}'", s.to_string_lossy().replace('\'', r"'\''"));
    let line = std::iter::once(quote(inner.get_program()))
        .chain(inner.get_args().map(quote))
        .collect::<Vec<_>>()
        .join(" ");
    let mut cmd = Command::new("script");
    cmd.args(["-qefc", &line, "/dev/null"])
        .current_dir(cli.cwd());
    for (k, v) in inner.get_envs() {
        match v {
            Some(v) => cmd.env(k, v),
            None => cmd.env_remove(k),
        };
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut out = child.stdout.take().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 256];
    // Type only once the question is asked (echo is off by then).
    while !String::from_utf8_lossy(&seen).contains(prompt) {
        let n = out.read(&mut buf).unwrap();
        assert!(n > 0, "no prompt: {}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buf[..n]);
    }
    stdin.write_all(format!("{answer}\n").as_bytes()).unwrap();
    stdin.flush().unwrap();
    out.read_to_end(&mut seen).unwrap();
    let status = child.wait().unwrap().code().unwrap_or(-1);
    drop(stdin);
    Some((String::from_utf8_lossy(&seen).into_owned(), status))
}

#[tokio::test(flavor = "multi_thread")]
async fn login_on_a_terminal_asks_for_the_key_without_showing_it() {
    let srv = TestServer::start().await;
    let cli = Cli::new(&srv.base_url, &srv.secret_key);
    let args = ["login", "--server", srv.base_url.as_str()];
    let Some((screen, status)) = on_a_terminal(&cli, &args, "API key for", &srv.secret_key) else {
        eprintln!("skipped: no `script` (util-linux) to give the CLI a terminal");
        return;
    };
    assert_eq!(status, 0, "{screen}");
    assert!(
        !screen.contains(&srv.secret_key),
        "the key was shown: {screen}"
    );
    assert!(screen.contains("saved profile \"default\""), "{screen}");
    let saved = std::fs::read_to_string(cli.config_file()).unwrap();
    assert!(saved.contains(&srv.secret_key), "{saved}");
    // The saved profile works.
    cli.run_bare(&["usage"], None).await.expect(0);

    // Off a terminal, without --api-key: today's usage error.
    let bare = Cli::new("", "");
    let r = bare
        .run_bare(&["login", "--server", &srv.base_url], None)
        .await;
    r.expect_error(2, "usage");
    assert!(r.stderr.contains("no API key configured"), "{r:?}");
}

/// Saves a profile `name` for the server with `login --api-key -`.
async fn login(cli: &Cli, srv: &TestServer, name: &str) {
    cli.run_bare(
        &[
            "login",
            "--server",
            &srv.base_url,
            "--api-key",
            "-",
            "--profile",
            name,
        ],
        Some(format!("{}\n", srv.secret_key).into_bytes()),
    )
    .await
    .expect(0);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_only_profile_is_used_and_several_are_named() {
    let srv = TestServer::start().await;
    let cli = Cli::new("", "");
    login(&cli, &srv, "work").await;
    // No `default`, one profile: that one.
    cli.run_bare(&["usage"], None).await.expect(0);

    login(&cli, &srv, "home").await;
    let r = cli.run_bare(&["usage"], None).await;
    r.expect_error(2, "usage");
    assert!(
        r.stderr
            .contains("several saved (home, work): pass --profile NAME"),
        "{r:?}"
    );

    let list = cli.run_bare(&["profile", "list"], None).await;
    list.expect(0);
    assert!(
        !list.stdout.contains(&srv.secret_key),
        "never a key: {list:?}"
    );
    let names: Vec<&str> = list
        .stdout
        .lines()
        .map(|l| l[2..].split_whitespace().next().unwrap())
        .collect();
    assert_eq!(names, ["home", "work"], "{list:?}");
    assert!(list.stdout.contains(&srv.base_url));
    let json = cli.run_bare(&["profile", "list", "--json"], None).await;
    let recs = json.json_lines();
    assert_eq!(recs[0]["name"], "home");
    assert_eq!(recs[1]["server"], srv.base_url.as_str());

    // logout --profile forgets one; the other is then the only one.
    cli.run_bare(&["logout", "--profile", "home"], None)
        .await
        .expect(0);
    let list = cli.run_bare(&["profile", "list", "--json"], None).await;
    assert_eq!(list.json_lines().len(), 1);
    assert_eq!(list.json_lines()[0]["in_use"], true);
    cli.run_bare(&["usage"], None).await.expect(0);
    cli.run_bare(&["logout"], None).await.expect(0);
    let r = cli.run_bare(&["logout", "--profile", "gone"], None).await;
    r.expect_error(2, "usage");
    assert!(r.stderr.contains("profile \"gone\" not found"), "{r:?}");

    // A login without --profile writes `default`, never over the only one.
    login(&cli, &srv, "work").await;
    cli.run_bare(
        &["login", "--server", &srv.base_url, "--api-key", "-"],
        Some(format!("{}\n", srv.secret_key).into_bytes()),
    )
    .await
    .expect(0);
    let list = cli.run_bare(&["profile", "list", "--json"], None).await;
    let names: Vec<_> = list
        .json_lines()
        .iter()
        .map(|p| p["name"].clone())
        .collect();
    assert_eq!(names, ["default", "work"], "{list:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn whoami_says_the_server_account_key_and_plan() {
    let srv = TestServer::start().await;
    let cli = Cli::new(&srv.base_url, &srv.secret_key);
    let key_id = srv.text(&format!(
        "SELECT id FROM api_keys WHERE account_id = '{}' AND kind = 'secret' ORDER BY created_at LIMIT 1",
        srv.account_id
    ));
    let name = srv.text(&format!(
        "SELECT name FROM accounts WHERE id = '{}'",
        srv.account_id
    ));
    let r = cli.run(&["whoami", "--json"]).await;
    r.expect(0);
    let me = r.json();
    let keys: Vec<&String> = me.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["server", "account", "key", "plan"]);
    assert_eq!(me["server"], srv.base_url.as_str());
    assert_eq!(
        me["account"],
        serde_json::json!({"id": srv.account_id, "name": name})
    );
    assert_eq!(
        me["key"],
        serde_json::json!({"id": key_id, "kind": "secret"})
    );
    assert_eq!(me["plan"], srv.usage().await["plan"]);
    let human = cli.run(&["whoami"]).await;
    human.expect(0);
    assert!(
        human.stdout.contains(&srv.account_id) && human.stdout.contains(&key_id),
        "{human:?}"
    );
    assert!(!human.stdout.contains(&srv.secret_key), "{human:?}");
    Cli::new(&srv.base_url, "sk_bad")
        .run(&["whoami"])
        .await
        .expect_error(3, "unauthorized");
}
