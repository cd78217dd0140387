//! PostgreSQL over TLS, against a throwaway cluster of its own with
//! `ssl = on` and a test CA made with `openssl` (no FILESTORE_TEST_DATABASE_URL
//! needed). User `tls` may log in only over TLS (`hostssl`), user `anyone`
//! either way; both with SCRAM passwords. One cluster for every case.
//!
//! Needs PostgreSQL's server binaries (PGBIN, default the newest
//! /usr/lib/postgresql/*/bin) and `openssl`; without them it is skipped,
//! saying why, unless FILESTORE_REQUIRE_TOOLS=1 (CI), where it fails. As
//! root the cluster runs as the `postgres` user (initdb refuses root).

use crate::common::process::{filestore, free_port, Serve};
use crate::common::upload_form;
use filestore::testing::db::PgStore;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The cluster: stopped (immediately) when dropped.
struct Cluster {
    pgbin: PathBuf,
    dir: tempfile::TempDir,
    port: u16,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.dir.path().join("data");
        let _ = as_pg(&format!(
            "{}/pg_ctl -D {} -m immediate stop",
            self.pgbin.display(),
            data.display()
        ));
    }
}

impl Cluster {
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// A URL for `user` on `db`, through `host`, with more parameters.
    fn url(&self, user: &str, host: &str, db: &str, params: &str) -> String {
        format!("postgres://{user}:pw@{host}:{}/{db}?{params}", self.port)
    }
}

/// Runs a shell command, as the `postgres` user when root.
fn as_pg(cmd: &str) -> std::process::Output {
    let mut c = if rustix::process::geteuid().is_root() {
        let mut c = Command::new("su");
        c.args(["postgres", "-c", cmd]);
        c
    } else {
        let mut c = Command::new("sh");
        c.args(["-c", cmd]);
        c
    };
    c.output().expect("run a PostgreSQL command")
}

fn run(cmd: &mut Command) {
    let out = cmd.output().expect("run a command");
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// PostgreSQL's server binaries, or why there are none.
fn pgbin() -> Result<PathBuf, String> {
    let bin = match std::env::var_os("PGBIN") {
        Some(p) => PathBuf::from(p),
        None => std::fs::read_dir("/usr/lib/postgresql")
            .ok()
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .map(|e| e.path().join("bin"))
            .filter(|b| b.join("initdb").exists())
            .max_by_key(|b| {
                b.parent()
                    .and_then(|v| v.file_name()?.to_str()?.parse::<u32>().ok())
                    .unwrap_or(0)
            })
            .unwrap_or_else(|| PathBuf::from("/usr/lib/postgresql/15/bin")),
    };
    if !bin.join("initdb").exists() {
        return Err(format!(
            "no PostgreSQL server binaries in {}",
            bin.display()
        ));
    }
    if Command::new("openssl").arg("version").output().is_err() {
        return Err("no openssl command".into());
    }
    Ok(bin)
}

/// A CA (`name`.crt/.key in `dir`) of its own config, so that its
/// extensions do not depend on the system's openssl.cnf.
fn make_ca(dir: &Path, name: &str) {
    let cnf = dir.join(format!("{name}.cnf"));
    std::fs::write(
        &cnf,
        format!(
            "[req]\ndistinguished_name = dn\nx509_extensions = v3_ca\nprompt = no\n\
             [dn]\nCN = filestore test {name}\n\
             [v3_ca]\nbasicConstraints = critical,CA:TRUE\n\
             keyUsage = critical,keyCertSign,cRLSign\nsubjectKeyIdentifier = hash\n"
        ),
    )
    .unwrap();
    run(Command::new("openssl")
        .current_dir(dir)
        .args(["req", "-x509", "-newkey", "ec", "-pkeyopt"])
        .args(["ec_paramgen_curve:P-256", "-nodes", "-days", "2"])
        .args(["-keyout", &format!("{name}.key"), "-out"])
        .arg(format!("{name}.crt"))
        .arg("-config")
        .arg(&cnf));
}

/// The server's key and certificate (CN and SAN 127.0.0.1 and localhost),
/// signed by the CA `ca`.
fn make_server_cert(dir: &Path, ca: &str) {
    std::fs::write(
        dir.join("server.ext"),
        "basicConstraints = CA:FALSE\nkeyUsage = digitalSignature\n\
         extendedKeyUsage = serverAuth\nsubjectAltName = IP:127.0.0.1,DNS:localhost\n",
    )
    .unwrap();
    run(Command::new("openssl")
        .current_dir(dir)
        .args([
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
        ])
        .args(["-nodes", "-keyout", "server.key", "-out", "server.csr"])
        .args(["-subj", "/CN=127.0.0.1"]));
    run(Command::new("openssl")
        .current_dir(dir)
        .args(["x509", "-req", "-in", "server.csr", "-days", "2"])
        .args(["-CA", &format!("{ca}.crt"), "-CAkey", &format!("{ca}.key")])
        .args([
            "-CAcreateserial",
            "-out",
            "server.crt",
            "-extfile",
            "server.ext",
        ]));
    // PostgreSQL refuses a key others may read.
    let owner_only = <std::fs::Permissions as std::os::unix::fs::PermissionsExt>::from_mode(0o600);
    std::fs::set_permissions(dir.join("server.key"), owner_only).unwrap();
}

/// Starts the cluster: `ssl = on`, TCP on 127.0.0.1 only; roles `tls`
/// (hostssl only) and `anyone` (host), each owning a database of its name.
async fn start_cluster(pgbin: PathBuf) -> Cluster {
    let dir = tempfile::tempdir().unwrap();
    let root = rustix::process::geteuid().is_root();
    make_ca(dir.path(), "ca");
    make_ca(dir.path(), "wrong-ca");
    make_server_cert(dir.path(), "ca");
    if root {
        run(Command::new("chown")
            .arg("-R")
            .arg("postgres")
            .arg(dir.path()));
    }
    let port = free_port();
    let cluster = Cluster { pgbin, dir, port };
    let data = cluster.path("data");
    let out = as_pg(&format!(
        "{}/initdb -D {} -A trust -U postgres",
        cluster.pgbin.display(),
        data.display()
    ));
    assert!(out.status.success(), "initdb: {out:?}");
    let server = |f: &str| cluster.path(f).display().to_string();
    let mut conf = std::fs::OpenOptions::new()
        .append(true)
        .open(data.join("postgresql.conf"))
        .unwrap();
    std::io::Write::write_all(
        &mut conf,
        format!(
            "\nssl = on\nssl_cert_file = '{}'\nssl_key_file = '{}'\n\
             listen_addresses = '127.0.0.1'\nport = {port}\nunix_socket_directories = '{}'\n\
             fsync = off\npassword_encryption = 'scram-sha-256'\n",
            server("server.crt"),
            server("server.key"),
            cluster.dir.path().display(),
        )
        .as_bytes(),
    )
    .unwrap();
    std::fs::write(
        data.join("pg_hba.conf"),
        "local all postgres trust\n\
         hostssl all tls 127.0.0.1/32 scram-sha-256\n\
         host all anyone 127.0.0.1/32 scram-sha-256\n",
    )
    .unwrap();
    let out = as_pg(&format!(
        "{}/pg_ctl -D {} -l {} -w start",
        cluster.pgbin.display(),
        data.display(),
        cluster.path("log").display()
    ));
    assert!(
        out.status.success(),
        "pg_ctl start: {out:?}\n{}",
        std::fs::read_to_string(cluster.path("log")).unwrap_or_default()
    );
    // Roles and databases, as `postgres` on the Unix socket.
    let (client, conn) = tokio_postgres::connect(
        &format!(
            "host={} port={port} user=postgres dbname=postgres",
            cluster.dir.path().display()
        ),
        tokio_postgres::NoTls,
    )
    .await
    .expect("the cluster's socket");
    tokio::spawn(conn);
    for sql in [
        "CREATE ROLE tls LOGIN PASSWORD 'pw'",
        "CREATE DATABASE tls OWNER tls",
        "CREATE ROLE anyone LOGIN PASSWORD 'pw'",
        "CREATE DATABASE anyone OWNER anyone",
    ] {
        client.batch_execute(sql).await.expect(sql);
    }
    cluster
}

/// Connects a store (the pool and the node's session) to `url`; the error's
/// text when it fails.
async fn connect(url: &str) -> Result<PgStore, String> {
    PgStore::connect(url).await.map_err(|e| e.to_string())
}

/// Whether the pool's session is over TLS, as the server sees it.
async fn session_is_tls(store: &PgStore) -> bool {
    let client = store.pool().get().await.unwrap();
    client
        .query_one(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .await
        .unwrap()
        .get(0)
}

/// A fake server that answers the TLS request with "N" (no TLS), as one
/// with `ssl = off` does; its port.
async fn server_without_tls() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        while let Ok((mut s, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut request = [0u8; 8];
                if s.read_exact(&mut request).await.is_ok() {
                    let _ = s.write_all(b"N").await;
                }
            });
        }
    });
    port
}

/// Every sslmode against one cluster with `ssl = on`: verify-full with the
/// right CA serves (a real `serve` and an upload, `admin` too), with a wrong
/// CA or a host name the certificate does not name it fails naming why;
/// verify-ca does not check the name; require needs no CA; prefer uses TLS
/// when the server offers it; disable is refused by a hostssl-only server,
/// and require by a server without TLS, each with a clear message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_over_tls_in_every_sslmode() {
    let pgbin = match pgbin() {
        Ok(b) => b,
        Err(why) => {
            assert!(
                std::env::var_os("FILESTORE_REQUIRE_TOOLS").is_none(),
                "FILESTORE_REQUIRE_TOOLS=1 but {why}"
            );
            eprintln!("skipped: {why} (PGBIN names PostgreSQL's bin directory)");
            return;
        }
    };
    let cluster = start_cluster(pgbin).await;
    let ca = cluster.path("ca.crt").display().to_string();
    let wrong = cluster.path("wrong-ca.crt").display().to_string();

    // verify-full with the right CA: `serve` starts (its pool and node
    // session over TLS: `tls` may not log in otherwise) and stores an
    // upload; channel_binding=require proves SCRAM-SHA-256-PLUS is bound
    // to the TLS session (our tls-server-end-point hash is the server's).
    let good = cluster.url(
        "tls",
        "localhost",
        "tls",
        &format!("sslmode=verify-full&sslrootcert={ca}&channel_binding=require"),
    );
    let data = cluster.path("serve-data");
    let served = Serve::new(&data).database_url(Some(&good)).start();
    let r = reqwest::Client::new()
        .post(served.url("/v1/upload"))
        .bearer_auth(served.key())
        .multipart(upload_form("tls.txt", b"over TLS".to_vec(), &[]))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201, "{}", r.text().await.unwrap());
    let admin = filestore()
        .args(["admin", "account", "list", "--json", "--data-dir"])
        .arg(&data)
        .env("FILESTORE_DATABASE_URL", &good)
        .output()
        .unwrap();
    assert!(
        admin.status.success(),
        "admin over TLS: {}",
        String::from_utf8_lossy(&admin.stderr)
    );
    drop(served);

    // verify-full with a wrong CA: `serve` does not start, and says why.
    let out = filestore()
        .args(["serve", "--data-dir"])
        .arg(cluster.path("refused-data"))
        .args(["--listen", &format!("127.0.0.1:{}", free_port())])
        .env(
            "FILESTORE_DATABASE_URL",
            cluster.url(
                "tls",
                "localhost",
                "tls",
                &format!("sslmode=verify-full&sslrootcert={wrong}"),
            ),
        )
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("verify-full, wrong CA, serve: {stderr}");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "TLS: the server's certificate is not signed by the CA in {wrong} (sslrootcert)"
        )),
        "{stderr}"
    );

    // verify-full to a host name the certificate does not name (the same
    // server, reached through hostaddr): refused, naming the names it has.
    let other_name = |mode: &str| {
        cluster.url(
            "tls",
            "db.example",
            "tls",
            &format!("hostaddr=127.0.0.1&sslmode={mode}&sslrootcert={ca}"),
        )
    };
    let e = connect(&other_name("verify-full")).await.unwrap_err();
    eprintln!("refused: {e}");
    assert!(
        e.contains("TLS: the server's certificate is not valid for the host name db.example")
            && e.ends_with("it names 127.0.0.1, localhost"),
        "{e}"
    );
    // verify-ca checks the chain, not the name.
    let store = connect(&other_name("verify-ca")).await.expect("verify-ca");
    assert!(session_is_tls(&store).await);
    drop(store);
    let e = connect(&cluster.url(
        "tls",
        "localhost",
        "tls",
        &format!("sslmode=verify-ca&sslrootcert={wrong}"),
    ))
    .await
    .unwrap_err();
    eprintln!("refused: {e}");
    assert!(e.contains("not signed by the CA in"), "{e}");

    // require: TLS with no CA to check against.
    let store = connect(&cluster.url("tls", "127.0.0.1", "tls", "sslmode=require"))
        .await
        .expect("require");
    assert!(session_is_tls(&store).await);
    drop(store);
    // With a sslrootcert, require checks the chain (as libpq does).
    let e = connect(&cluster.url(
        "tls",
        "127.0.0.1",
        "tls",
        &format!("sslmode=require&sslrootcert={wrong}"),
    ))
    .await
    .unwrap_err();
    assert!(e.contains("not signed by the CA in"), "{e}");

    // prefer (also the default): TLS, since the server offers it, though
    // `anyone` may log in in plain text; disable is plain text.
    for params in ["sslmode=prefer", ""] {
        let store = connect(&cluster.url("anyone", "127.0.0.1", "anyone", params))
            .await
            .expect("prefer");
        assert!(session_is_tls(&store).await, "{params:?} uses TLS");
    }
    let plain = connect(&cluster.url("anyone", "127.0.0.1", "anyone", "sslmode=disable"))
        .await
        .expect("disable");
    assert!(!session_is_tls(&plain).await, "disable is plain text");
    drop(plain);

    // disable against hostssl only: refused, saying TLS is needed.
    let e = connect(&cluster.url("tls", "127.0.0.1", "tls", "sslmode=disable"))
        .await
        .unwrap_err();
    eprintln!("refused: {e}");
    assert!(
        e.contains("no encryption") && e.contains("the server takes this connection only over TLS"),
        "{e}"
    );

    // require against a server that does not do TLS.
    let port = server_without_tls().await;
    let e = connect(&format!(
        "postgres://tls:pw@127.0.0.1:{port}/tls?sslmode=require"
    ))
    .await
    .unwrap_err();
    eprintln!("refused: {e}");
    assert!(
        e.contains("the server does not accept TLS (sslmode=require)"),
        "{e}"
    );
}
