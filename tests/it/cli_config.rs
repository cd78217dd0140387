//! Settings and the shell surface: `login` and profiles (mode 0600, key from
//! stdin), flags > env > profile, global flags on either side of the
//! subcommand, help with exit codes, completions, and a closed stdout.

use crate::cli_common::Cli;
use crate::common::TestServer;
use std::process::Stdio;

#[tokio::test(flavor = "multi_thread")]
async fn login_reads_the_key_from_stdin_and_saves_a_private_profile() {
    let srv = TestServer::start().await;
    let cli = Cli::new("", "");
    let key_line = format!("{}\n", srv.secret_key);
    let r = cli
        .run_bare(
            &["login", "--server", &srv.base_url, "--api-key", "-"],
            Some(key_line.into_bytes()),
        )
        .await;
    r.expect(0);
    assert!(r.stdout.is_empty(), "{r:?}");
    assert!(
        !r.stderr.contains(&srv.secret_key),
        "the key is never echoed"
    );
    let path = cli.config_file();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{path:?}");
    }
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("[profiles.default]") && text.contains(&srv.secret_key),
        "{text}"
    );

    // The profile is used when neither flags nor env say otherwise.
    srv.upload_ok("a.txt", b"a".to_vec(), &[]).await;
    let list = cli.run_bare(&["list", "--json"], None).await;
    list.expect(0);
    assert_eq!(list.json_lines().len(), 1);

    // A second, named profile.
    let other = srv.new_key("secret", &[]).await;
    cli.run_bare(
        &[
            "login",
            "--server",
            &srv.base_url,
            "--api-key",
            &other,
            "--profile",
            "ci",
            "--json",
        ],
        None,
    )
    .await
    .expect(0);
    cli.run_bare(&["usage", "--profile", "ci"], None)
        .await
        .expect(0);
    cli.run_bare(&["usage", "--profile", "nope"], None)
        .await
        .expect_error(2, "usage");
    let mut by_env = Cli::new("", "");
    by_env.home = cli.home;
    by_env.envs.push(("FILESTORE_PROFILE".into(), "ci".into()));
    by_env.run_bare(&["usage"], None).await.expect(0);
}

#[tokio::test(flavor = "multi_thread")]
async fn login_creates_a_named_profile_from_the_environment() {
    // FILESTORE_URL=… FILESTORE_API_KEY=… filestore login --profile ci: the
    // profile does not exist yet, and need not, since env gives both settings.
    let srv = TestServer::start().await;
    let cli = Cli::new(&srv.base_url, &srv.secret_key);
    let r = cli.run(&["login", "--profile", "ci", "--json"]).await;
    r.expect(0);
    assert_eq!(r.json()["profile"], "ci");
    let text = std::fs::read_to_string(cli.config_file()).unwrap();
    assert!(
        text.contains("[profiles.ci]") && text.contains(&srv.secret_key),
        "{text}"
    );
    // FILESTORE_PROFILE naming a missing profile, with env settings: fine too.
    let mut by_env = Cli::new(&srv.base_url, &srv.secret_key);
    by_env
        .envs
        .push(("FILESTORE_PROFILE".into(), "staging".into()));
    by_env.run(&["usage"]).await.expect(0);
    // Without env settings, the missing profile is the error.
    let r = by_env.run_bare(&["usage"], None).await;
    r.expect_error(2, "usage");
    assert!(r.stderr.contains("profile \"staging\" not found"), "{r:?}");
    // The saved one now works alone.
    let mut saved = Cli::new("", "");
    saved.home = cli.home;
    saved
        .run_bare(&["usage", "--profile", "ci"], None)
        .await
        .expect(0);
}

#[tokio::test(flavor = "multi_thread")]
async fn login_refuses_a_bad_key_and_saves_nothing() {
    let srv = TestServer::start().await;
    let cli = Cli::new("", "");
    let r = cli
        .run_bare(
            &["login", "--server", &srv.base_url, "--api-key", "sk_wrong"],
            None,
        )
        .await;
    r.expect_error(3, "unauthorized");
    assert!(!cli.config_file().exists());
    // A public key only uploads from browser pages: a profile of it would
    // fail every command (cli_frictions::login_refuses_a_public_key).
    let pk = srv.new_key("public", &["https://x.example"]).await;
    let r = cli
        .run_bare(
            &[
                "login",
                "--server",
                &srv.base_url,
                "--api-key",
                &pk,
                "--json",
            ],
            None,
        )
        .await;
    r.expect_error(2, "usage");
    assert!(!cli.config_file().exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn flags_beat_env_beat_profile() {
    let srv = TestServer::start().await;
    let cli = Cli::new("", "");
    cli.run_bare(
        &[
            "login",
            "--server",
            "http://127.0.0.1:9",
            "--api-key",
            "sk_stale",
            "--no-verify",
        ],
        None,
    )
    .await
    .expect(0);
    // env over the profile: works.
    let mut env = Cli::new(&srv.base_url, &srv.secret_key);
    env.home = cli.home;
    env.run(&["usage"]).await.expect(0);
    // flags over env: the bad flag key is used.
    env.run(&["usage", "--api-key", "sk_bad"])
        .await
        .expect_error(3, "unauthorized");
    // Global flags before or after the subcommand.
    env.run(&["--json", "usage"]).await.expect(0).json();
    env.run(&["usage", "--json", "--server", &srv.base_url])
        .await
        .expect(0)
        .json();
    env.run(&["-q", "--api-key", &srv.secret_key, "list"])
        .await
        .expect(0);
}

#[tokio::test(flavor = "multi_thread")]
async fn help_documents_exit_codes_and_completions_generate() {
    let cli = Cli::new("", "");
    let top = cli.run_bare(&["--help"], None).await;
    top.expect(0);
    assert!(top.stdout.contains("Exit codes") && top.stdout.contains("6  server or network error"));
    for sub in [
        "upload", "list", "get", "download", "sign", "delete", "usage", "health", "login",
    ] {
        let h = cli.run_bare(&[sub, "--help"], None).await;
        h.expect(0);
        assert!(h.stdout.contains("Exit codes"), "{sub}: {h:?}");
    }
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let c = cli.run_bare(&["completions", shell], None).await;
        c.expect(0);
        assert!(c.stdout.contains("upload"), "{shell}");
    }
    cli.run_bare(&["completions", "tcsh"], None)
        .await
        .expect_error(2, "usage");
    let v = cli.run_bare(&["--version"], None).await;
    v.expect(0);
    assert!(v.stdout.starts_with("filestore "));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_closed_stdout_is_success() {
    let srv = TestServer::start().await;
    for i in 0..30 {
        srv.upload_ok(&format!("f{i}.txt"), vec![b'x'; 10], &[])
            .await;
    }
    let cli = Cli::new(&srv.base_url, &srv.secret_key);
    let mut cmd = cli.command(&["list", "--all"], true);
    let out = tokio::task::spawn_blocking(move || {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        child.wait_with_output().unwrap()
    })
    .await
    .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
