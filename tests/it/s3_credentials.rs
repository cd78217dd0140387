//! The S3 door's credentials (CONTRACT §18, "Credentials"): every secret
//! key has one, shown by `admin key create`, `admin key s3`,
//! `GET /v1/s3/credentials` and `filestore s3 credentials`, all the same;
//! it signs requests the door accepts until the key is revoked. Public keys
//! and upload tokens have none.

use crate::cli_common::Cli;
use crate::common::process::{self, Serve};
use crate::common::{error_code, pg, s3door, TestOptions, TestServer};
use serde_json::{json, Value};

/// `admin` arguments that make a public key of the default account.
const PUBLIC_KEY: [&str; 8] = [
    "key",
    "create",
    "--account",
    "default",
    "--kind",
    "public",
    "--origin",
    "https://app.example.com",
];

async fn door() -> TestServer {
    TestServer::start_with(TestOptions {
        s3: true,
        ..Default::default()
    })
    .await
}

/// `filestore admin ARGS` on the server's data dir and database.
fn admin(srv: &TestServer, args: &[&str]) -> std::process::Output {
    let url = srv.on_postgres().then(|| srv.database_url().to_string());
    process::admin(&srv.data_dir, url.as_deref(), args)
}

/// `admin ARGS --json` that succeeds: its record.
#[track_caller]
fn admin_json(srv: &TestServer, args: &[&str]) -> Value {
    let mut args = args.to_vec();
    args.push("--json");
    let out = admin(srv, &args);
    assert!(out.status.success(), "admin {args:?}: {out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

async fn key_id(srv: &TestServer, key: &str) -> String {
    let (status, me) = srv.get_json(key, "/v1/whoami").await;
    assert_eq!(status, 200, "{me}");
    me["key"]["id"].as_str().unwrap().to_string()
}

/// A ListBuckets signed by `s3` passes the door's signature check: it is
/// answered (200), or refused only as not implemented (501).
async fn list_buckets_is_let_in(s3: &aws_sdk_s3::Client) {
    if let Err(e) = s3.list_buckets().send().await {
        let (status, code) = s3door::failure(&e);
        assert_eq!(
            (status, code.as_deref()),
            (Some(501), Some("NotImplemented")),
            "the signature is accepted: {e:?}"
        );
    }
}

async fn credentials_status(srv: &TestServer, key: &str) -> (u16, String) {
    let r = srv
        .http
        .get(srv.url("/v1/s3/credentials"))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    error_code(r).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_route_gives_a_secret_key_the_credential_admin_key_s3_prints() {
    let srv = door().await;
    let id = key_id(&srv, &srv.secret_key).await;
    let creds = s3door::credentials(&srv.http, &srv.base_url, &srv.secret_key).await;
    let fields: Vec<&String> = creds.as_object().unwrap().keys().collect();
    assert_eq!(
        fields,
        ["access_key_id", "secret_access_key", "endpoint", "region"]
    );
    assert_eq!(creds["access_key_id"], id.as_str());
    assert_eq!(creds["endpoint"], srv.s3_url.as_deref().unwrap());
    assert_eq!(creds["region"], "us-east-1");
    let secret = creds["secret_access_key"].as_str().unwrap();
    assert_eq!(secret.len(), 40, "{secret}");
    assert_ne!(secret, srv.secret_key, "the S3 secret is not the API key");
    list_buckets_is_let_in(&s3door::client(&creds)).await;

    let shown = admin_json(&srv, &["key", "s3", &id]);
    assert_eq!(
        shown,
        json!({"access_key_id": id, "secret_access_key": secret}),
        "admin key s3 derives the same secret as the server"
    );
    let text = admin(&srv, &["key", "s3", &id]);
    assert!(text.status.success(), "{text:?}");
    let text = String::from_utf8(text.stdout).unwrap();
    assert_eq!(
        text,
        format!("access_key_id      {id}\nsecret_access_key  {secret}\n")
    );
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn public_keys_upload_tokens_and_revoked_keys_get_no_credential() {
    let srv = door().await;
    let public = srv.new_key("public", &["https://app.example.com"]).await;
    assert_eq!(
        credentials_status(&srv, &public).await,
        (403, "forbidden".into())
    );
    let r = srv
        .http
        .post(srv.url("/v1/upload-tokens"))
        .bearer_auth(&srv.secret_key)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    let token: Value = r.json().await.unwrap();
    let token = token["token"].as_str().unwrap();
    assert_eq!(
        credentials_status(&srv, token).await,
        (401, "unauthorized".into())
    );
    let key = srv.new_key("secret", &[]).await;
    let id = key_id(&srv, &key).await;
    s3door::credentials(&srv.http, &srv.base_url, &key).await;
    admin_json(&srv, &["key", "revoke", &id]);
    assert_eq!(
        credentials_status(&srv, &key).await,
        (401, "unauthorized".into())
    );
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_key_create_prints_a_secret_keys_s3_credential_beside_it() {
    let srv = door().await;
    let k = admin_json(
        &srv,
        &["key", "create", "--account", "default", "--kind", "secret"],
    );
    let id = k["id"].as_str().unwrap();
    assert_eq!(k["s3_access_key_id"], id);
    let key = k["key"].as_str().unwrap();
    let creds = s3door::credentials(&srv.http, &srv.base_url, key).await;
    assert_eq!(k["s3_secret_access_key"], creds["secret_access_key"]);

    let out = admin(
        &srv,
        &["key", "create", "--account", "default", "--kind", "secret"],
    );
    assert!(out.status.success(), "{out:?}");
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(
        lines[0].starts_with("sk_"),
        "the key stays the first line: {text}"
    );
    let id = lines[2]
        .strip_prefix("s3_access_key_id      ")
        .unwrap_or_else(|| panic!("{text}"));
    assert!(id.starts_with("key_") && lines[1].contains(id), "{text}");
    let secret = lines[3]
        .strip_prefix("s3_secret_access_key  ")
        .unwrap_or_else(|| panic!("{text}"));
    let creds = s3door::credentials(&srv.http, &srv.base_url, lines[0]).await;
    assert_eq!(creds["secret_access_key"], secret);

    let public = admin_json(&srv, &PUBLIC_KEY);
    assert!(public["key"].as_str().unwrap().starts_with("pk_"));
    for field in ["s3_access_key_id", "s3_secret_access_key"] {
        assert!(
            public.get(field).is_none(),
            "a public key has no {field}: {public}"
        );
    }
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn admin_key_s3_refuses_unknown_public_and_revoked_keys() {
    let srv = TestServer::start().await;
    let refused = |args: &[&str], status: i32, code: &str| {
        let out = admin(&srv, args);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(status), "{args:?}: {stderr}");
        assert!(
            stderr.starts_with(&format!("error: {code}: ")),
            "{args:?}: {stderr}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
        stderr
    };
    let e = refused(
        &["key", "s3", "key_000000000000000000000000"],
        4,
        "not_found",
    );
    assert!(e.contains("no key"), "{e}");
    let public = admin_json(&srv, &PUBLIC_KEY);
    let e = refused(&["key", "s3", public["id"].as_str().unwrap()], 2, "invalid");
    assert!(e.contains("public key"), "{e}");
    let key = srv.new_key("secret", &[]).await;
    let id = key_id(&srv, &key).await;
    admin_json(&srv, &["key", "revoke", &id]);
    let e = refused(&["key", "s3", &id, "--json"], 2, "invalid");
    assert!(e.contains("revoked"), "{e}");
    srv.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filestore_s3_credentials_prints_exports_a_shell_evaluates() {
    let srv = door().await;
    let creds = s3door::credentials(&srv.http, &srv.base_url, &srv.secret_key).await;
    let cli = Cli::new(&srv.base_url, &srv.secret_key);
    let run = cli.run(&["s3", "credentials"]).await;
    run.expect(0);
    let want = format!(
        "export AWS_ACCESS_KEY_ID={}\nexport AWS_SECRET_ACCESS_KEY={}\n\
         export AWS_ENDPOINT_URL={}\nexport AWS_REGION=us-east-1\n",
        creds["access_key_id"].as_str().unwrap(),
        creds["secret_access_key"].as_str().unwrap(),
        srv.s3_url.as_deref().unwrap(),
    );
    assert_eq!(run.stdout, want);
    let shell = std::process::Command::new("sh")
        .args([
            "-c",
            r#"eval "$EXPORTS" && printf '%s\n' "$AWS_ACCESS_KEY_ID" "$AWS_SECRET_ACCESS_KEY" "$AWS_ENDPOINT_URL" "$AWS_REGION""#,
        ])
        .env("EXPORTS", &run.stdout)
        .output()
        .unwrap();
    assert!(shell.status.success(), "{shell:?}");
    assert_eq!(
        String::from_utf8(shell.stdout).unwrap(),
        format!(
            "{}\n{}\n{}\nus-east-1\n",
            creds["access_key_id"].as_str().unwrap(),
            creds["secret_access_key"].as_str().unwrap(),
            srv.s3_url.as_deref().unwrap()
        )
    );

    let run = cli.run(&["s3", "credentials", "--json"]).await;
    run.expect(0);
    assert_eq!(run.json(), creds);

    let public = srv.new_key("public", &["https://app.example.com"]).await;
    let run = Cli::new(&srv.base_url, &public)
        .run(&["s3", "credentials"])
        .await;
    run.expect_error(3, "forbidden");
    assert!(run.stdout.is_empty(), "{run:?}");
    srv.stop().await;
}

/// `serve --s3-listen 127.0.0.1:0`: the credential the route gives (its
/// endpoint the port really bound) signs a ListBuckets the door accepts;
/// a wrong secret is SignatureDoesNotMatch, and once the key is revoked
/// its credential is InvalidAccessKeyId.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_credential_signs_requests_to_the_door_until_the_key_is_revoked() {
    let dir = tempfile::tempdir().unwrap();
    let url = pg::database_for(dir.path()).await;
    let serve = Serve::new(dir.path())
        .database_url(url.as_deref())
        .s3()
        .start();
    let http = reqwest::Client::new();
    let key = serve.key();
    let creds = s3door::credentials(&http, &serve.base, &key).await;
    let s3_url = serve
        .s3_url
        .clone()
        .expect("the start-up line names the door");
    assert!(!s3_url.ends_with(":0"), "the port bound: {s3_url}");
    assert_eq!(creds["endpoint"], s3_url.as_str());

    let s3 = s3door::client(&creds);
    list_buckets_is_let_in(&s3).await;
    let secret = creds["secret_access_key"].as_str().unwrap();
    // The last character changed (to `x`, or to `y` when it was an `x`:
    // one secret in 64 ends in `x`, which once made this "wrong" secret
    // the right one).
    let (head, last) = secret.split_at(secret.len() - 1);
    let wrong = format!("{head}{}", if last == "x" { "y" } else { "x" });
    assert_ne!(wrong, secret);
    let id = creds["access_key_id"].as_str().unwrap();
    let forged = s3door::client_with(&s3_url, id, &wrong, "us-east-1");
    let e = forged.list_buckets().send().await.unwrap_err();
    assert_eq!(
        s3door::failure(&e),
        (Some(403), Some("SignatureDoesNotMatch".into()))
    );

    let out = process::admin(dir.path(), url.as_deref(), &["key", "revoke", id]);
    assert!(out.status.success(), "{out:?}");
    let e = s3.list_buckets().send().await.unwrap_err();
    assert_eq!(
        s3door::failure(&e),
        (Some(403), Some("InvalidAccessKeyId".into())),
        "revoked: refused at once"
    );
}
