//! Tests of [`Config::resolve`]: the layers' precedence and the checks.

use super::*;

#[test]
fn precedence_is_flags_env_file() {
    let file: FileConfig = toml::from_str(
        "[server]\nlisten = \"127.0.0.1:1\"\ndata_dir = \"/f\"\n[plans.tiny]\nmax_file_size = \"1kB\"\n",
    )
    .unwrap();
    let env = Env::empty().with("FILESTORE_LISTEN", "127.0.0.1:2");
    let c = Config::resolve(file.clone(), &env, &Overrides::default()).unwrap();
    assert_eq!(c.listen, "127.0.0.1:2");
    assert_eq!(c.base_url, "http://127.0.0.1:2");
    assert_eq!(c.data_dir, PathBuf::from("/f"));
    let flags = Overrides {
        listen: Some("127.0.0.1:3".into()),
        ..Default::default()
    };
    let c = Config::resolve(file, &env, &flags).unwrap();
    assert_eq!(c.listen, "127.0.0.1:3");
    let tiny = c.plans.get("tiny").unwrap();
    assert_eq!(tiny.max_file_size, 1000);
    assert_eq!(tiny.storage, 1_000_000_000, "new plans start from free");
}

#[test]
fn bad_values_are_refused() {
    let file: FileConfig = toml::from_str("[server]\ndefault_plan = \"gold\"\n").unwrap();
    assert!(Config::resolve(file, &Env::empty(), &Overrides::default()).is_err());
    assert!(toml::from_str::<FileConfig>("[server]\nlisten_typo = 1\n").is_err());
    let file: FileConfig = toml::from_str("[storage]\nbackend = \"s3\"\n").unwrap();
    assert!(Config::resolve(file, &Env::empty(), &Overrides::default()).is_err());
    assert!(
        toml::from_str::<FileConfig>("[storage]\nbackend = \"lcoal\"\n").is_err(),
        "a typo is an error, not a fallback"
    );
    let env = Env::empty().with("FILESTORE_STORAGE_BACKEND", "s4");
    assert!(Config::resolve(FileConfig::default(), &env, &Overrides::default()).is_err());
    for bad in [
        "[server]\nsigning_secret = \"\"\n",
        "[server]\nsigning_secret = \"short\"\n",
        "[server]\nreap_interval = \"0s\"\n",
        "[storage]\ninline_max = \"2MiB\"\n",
        "[webhooks]\nreceivers = \"private\"\n",
    ] {
        let file: FileConfig = toml::from_str(bad).unwrap();
        assert!(
            Config::resolve(file, &Env::empty(), &Overrides::default()).is_err(),
            "{bad}"
        );
    }
}

#[test]
fn the_example_config_is_valid_and_matches_the_defaults() {
    let file: FileConfig = toml::from_str(include_str!("../../config.example.toml")).unwrap();
    let c = Config::resolve(file, &Env::empty(), &Overrides::default()).unwrap();
    assert_eq!(c.plans, Plans::default());
    assert_eq!(c.listen, DEFAULT_LISTEN);
    assert_eq!(c.storage.backend, BackendKind::Local);
    assert_eq!(c.reap_interval, Duration::from_secs(5));
    assert_eq!(c.limits.min_upload_rate, DEFAULT_MIN_UPLOAD_RATE);
    assert_eq!(c.statement_timeout, DEFAULT_STATEMENT_TIMEOUT);
    assert_eq!(c.s3.listen, None, "the example leaves the S3 door off");
    assert_eq!(c.s3.region, DEFAULT_S3_REGION);
    assert_eq!(
        c.console,
        super::Console {
            enabled: true,
            session_idle: Duration::from_hours(12),
        }
    );
}

#[test]
fn min_upload_rate_and_statement_timeout_parse() {
    let resolve = |text: &str, env: Env| {
        let file: FileConfig = toml::from_str(text).unwrap();
        Config::resolve(file, &env, &Overrides::default())
    };
    let rate = |text: &str| resolve(text, Env::empty()).unwrap().limits.min_upload_rate;
    assert_eq!(rate(""), 1024);
    assert_eq!(rate("[server]\nmin_upload_rate = \"2KiB/s\"\n"), 2048);
    assert_eq!(rate("[server]\nmin_upload_rate = \"10kB\"\n"), 10_000);
    assert_eq!(rate("[server]\nmin_upload_rate = 0\n"), 0);
    let env = Env::empty().with("FILESTORE_MIN_UPLOAD_RATE", "512");
    assert_eq!(resolve("", env).unwrap().limits.min_upload_rate, 512);
    assert!(toml::from_str::<FileConfig>("[server]\nmin_upload_rate = \"fast\"\n").is_err());
    let t = resolve("[database]\nstatement_timeout = \"250ms\"\n", Env::empty()).unwrap();
    assert_eq!(t.statement_timeout, Duration::from_millis(250));
    assert!(resolve("[database]\nstatement_timeout = \"0s\"\n", Env::empty()).is_err());
}

#[test]
fn memory_budget_and_stall_timeout_parse() {
    let resolve = |text: &str| {
        let file: FileConfig = toml::from_str(text).unwrap();
        Config::resolve(file, &Env::empty(), &Overrides::default())
    };
    let d = resolve("").unwrap().limits;
    assert_eq!(d.stall_timeout, DEFAULT_STALL_TIMEOUT);
    assert_eq!(d.memory_budget, limits::default_memory_budget());
    let c = resolve("[server]\nmemory_budget = \"512MiB\"\nstall_timeout = \"3s\"\n").unwrap();
    assert_eq!(c.limits.memory_budget, 512 << 20);
    assert_eq!(c.limits.stall_timeout, Duration::from_secs(3));
    assert_eq!(
        resolve("[server]\nmemory_budget = 2147483648\n")
            .unwrap()
            .limits
            .memory_budget,
        2 << 30
    );
    for bad in [
        "[server]\nmemory_budget = \"1MiB\"\n",
        "[server]\nstall_timeout = \"0s\"\n",
    ] {
        let err = resolve(bad).unwrap_err().to_string();
        assert!(
            err.contains("memory_budget") || err.contains("stall_timeout"),
            "{bad}: {err}"
        );
    }
    assert!(toml::from_str::<FileConfig>("[server]\nmemory_budget = \"lots\"\n").is_err());
}

#[test]
fn the_several_nodes_example_is_valid() {
    let dir = tempfile::tempdir().unwrap();
    let (db, s3) = (dir.path().join("db"), dir.path().join("s3"));
    std::fs::write(&db, "postgres://filestore:pw@db:5432/filestore\n").unwrap();
    std::fs::write(&s3, "s3-secret\n").unwrap();
    let text = include_str!("../../contrib/several-nodes/filestore.toml")
        .replace("/run/secrets/filestore-database-url", db.to_str().unwrap())
        .replace("/run/secrets/s3-secret", s3.to_str().unwrap());
    let file: FileConfig = toml::from_str(&text).unwrap();
    let c = Config::resolve(file, &Env::empty(), &Overrides::default()).unwrap();
    assert_eq!(c.storage.backend, BackendKind::S3);
    assert_eq!(
        c.database_url.as_ref().map(|u| u.expose().to_string()),
        Some("postgres://filestore:pw@db:5432/filestore".to_string())
    );
    assert_eq!(c.base_url, "https://files.example.com");
}

#[test]
fn secrets_come_from_a_value_or_a_file_not_both() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("signing");
    std::fs::write(&path, format!("{}\n", "s".repeat(40))).unwrap();
    let resolve = |toml_text: String, env: Env| {
        let file: FileConfig = toml::from_str(&toml_text).unwrap();
        Config::resolve(file, &env, &Overrides::default())
    };
    let p = path.display();
    let c = resolve(
        format!("[server]\nsigning_secret_file = \"{p}\"\n"),
        Env::empty(),
    )
    .unwrap();
    assert_eq!(c.signing_secret.unwrap().expose(), "s".repeat(40));
    let env = Env::empty().with("FILESTORE_SIGNING_SECRET_FILE", &p.to_string());
    let c = resolve(String::new(), env).unwrap();
    assert_eq!(c.signing_secret.unwrap().expose(), "s".repeat(40));
    let c = resolve(
        format!("[storage]\nsecret_access_key_file = \"{p}\"\n"),
        Env::empty(),
    )
    .unwrap();
    assert_eq!(
        c.storage.secret_access_key.unwrap().expose(),
        "s".repeat(40)
    );
    let both = format!(
        "[server]\nsigning_secret = \"{}\"\nsigning_secret_file = \"{p}\"\n",
        "t".repeat(40)
    );
    assert!(matches!(
        resolve(both, Env::empty()),
        Err(ConfigError::Invalid(m)) if m.contains("not both")
    ));
    let missing = "[storage]\nsecret_access_key_file = \"/nonexistent/s\"\n".to_string();
    assert!(matches!(
        resolve(missing, Env::empty()),
        Err(ConfigError::SecretFile {
            setting: "storage.secret_access_key_file",
            ..
        })
    ));
    // The environment overrides the file, whichever form each uses.
    let env = Env::empty().with("FILESTORE_SIGNING_SECRET", &"e".repeat(40));
    let c = resolve(format!("[server]\nsigning_secret_file = \"{p}\"\n"), env).unwrap();
    assert_eq!(c.signing_secret.unwrap().expose(), "e".repeat(40));
    let env = Env::empty()
        .with("FILESTORE_SIGNING_SECRET", &"e".repeat(40))
        .with("FILESTORE_SIGNING_SECRET_FILE", &p.to_string());
    assert!(resolve(String::new(), env).is_err(), "both in one layer");
    // A short secret from a file is refused like a short value.
    std::fs::write(&path, "short\n").unwrap();
    assert!(resolve(
        format!("[server]\nsigning_secret_file = \"{p}\"\n"),
        Env::empty()
    )
    .is_err());
}

#[test]
fn the_database_url_comes_from_the_env_or_the_file_and_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db-url");
    std::fs::write(&path, "postgres://u:pw@db/fs\n").unwrap();
    let resolve = |toml_text: &str, env: Env| {
        let file: FileConfig = toml::from_str(toml_text).unwrap();
        Config::resolve(file, &env, &Overrides::default())
    };
    let c = resolve("", Env::empty()).unwrap();
    assert!(c.database_url.is_none(), "SQLite by default");
    let c = resolve("[database]\nurl = \"postgres://f@h/d\"\n", Env::empty()).unwrap();
    assert_eq!(c.database_url.unwrap().expose(), "postgres://f@h/d");
    let p = path.display();
    let c = resolve(&format!("[database]\nurl_file = \"{p}\"\n"), Env::empty()).unwrap();
    assert_eq!(c.database_url.unwrap().expose(), "postgres://u:pw@db/fs");
    let env = Env::empty().with("FILESTORE_DATABASE_URL", "postgresql://e@h/d");
    let c = resolve("[database]\nurl = \"postgres://f@h/d\"\n", env).unwrap();
    assert_eq!(c.database_url.unwrap().expose(), "postgresql://e@h/d");
    let env = Env::empty().with("FILESTORE_DATABASE_URL_FILE", &p.to_string());
    let c = resolve("", env).unwrap();
    assert_eq!(c.database_url.unwrap().expose(), "postgres://u:pw@db/fs");
    assert!(resolve("[database]\nurl = \"mysql://h/d\"\n", Env::empty()).is_err());
    assert!(resolve(
        &format!("[database]\nurl = \"postgres://h/d\"\nurl_file = \"{p}\"\n"),
        Env::empty()
    )
    .is_err());
    assert!(!format!(
        "{:?}",
        resolve(
            "[database]\nurl = \"postgres://u:hunter2@h/d\"\n",
            Env::empty()
        )
        .unwrap()
    )
    .contains("hunter2"));
}

#[test]
fn the_database_urls_tls_settings_are_checked_with_the_config() {
    let resolve = |url: &str| {
        let file: FileConfig = toml::from_str(&format!("[database]\nurl = \"{url}\"\n")).unwrap();
        Config::resolve(file, &Env::empty(), &Overrides::default()).map_err(|e| e.to_string())
    };
    assert!(resolve("postgres://h/d?sslmode=require").is_ok());
    let e = resolve("postgres://h/d?sslmode=verify").unwrap_err();
    assert!(e.contains("sslmode=\"verify\" is not one of"), "{e}");
    let e =
        resolve("postgres://h/d?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem").unwrap_err();
    assert!(
        e.contains("sslrootcert /nonexistent/ca.pem") && e.contains("No such file"),
        "{e}"
    );
}

#[test]
fn images_memory_parses_and_has_a_floor() {
    let resolve = |text: &str| {
        let file: FileConfig = toml::from_str(text).unwrap();
        Config::resolve(file, &Env::empty(), &Overrides::default())
    };
    assert_eq!(
        resolve("").unwrap().images.memory,
        super::DEFAULT_IMAGES_MEMORY
    );
    let memory = |text: &str| resolve(text).unwrap().images.memory;
    assert_eq!(memory("[images]\nmemory = \"64MiB\"\n"), 64 << 20);
    assert_eq!(memory("[images]\nmemory = 100000000\n"), 100_000_000);
    let e = resolve("[images]\nmemory = \"1MiB\"\n").unwrap_err();
    assert!(e.to_string().contains("images.memory"), "{e}");
}

#[test]
fn the_s3_door_is_off_by_default_with_aws_defaults() {
    let c = Config::resolve(FileConfig::default(), &Env::empty(), &Overrides::default()).unwrap();
    assert_eq!(
        c.s3,
        S3Door {
            listen: None,
            region: "us-east-1".into(),
            url: "http://127.0.0.1:8333".into(),
            domain: None,
        }
    );
    let file: FileConfig = toml::from_str("[s3]\nlisten = \"0.0.0.0:9000\"\n").unwrap();
    let c = Config::resolve(file, &Env::empty(), &Overrides::default()).unwrap();
    assert_eq!(c.s3.listen.as_deref(), Some("0.0.0.0:9000"));
    assert_eq!(
        c.s3.url, "http://0.0.0.0:9000",
        "the url follows the listener"
    );
}

#[test]
fn s3_settings_take_flags_then_env_then_file() {
    let file: FileConfig = toml::from_str(
        "[s3]\nlisten = \"127.0.0.1:1\"\nregion = \"eu-west-1\"\n\
         url = \"https://s3.example.com/\"\ndomain = \".S3.Example.com.\"\n",
    )
    .unwrap();
    let c = Config::resolve(file.clone(), &Env::empty(), &Overrides::default()).unwrap();
    assert_eq!(
        c.s3,
        S3Door {
            listen: Some("127.0.0.1:1".into()),
            region: "eu-west-1".into(),
            url: "https://s3.example.com".into(),
            domain: Some("s3.example.com".into()),
        }
    );
    let env = Env::empty()
        .with("FILESTORE_S3_LISTEN", "127.0.0.1:2")
        .with("FILESTORE_S3_DOOR_REGION", "auto")
        .with("FILESTORE_S3_DOOR_URL", "http://files.internal:8333")
        .with("FILESTORE_S3_DOOR_DOMAIN", "files.internal:8333");
    let c = Config::resolve(file.clone(), &env, &Overrides::default()).unwrap();
    assert_eq!(
        c.s3,
        S3Door {
            listen: Some("127.0.0.1:2".into()),
            region: "auto".into(),
            url: "http://files.internal:8333".into(),
            domain: Some("files.internal:8333".into()),
        }
    );
    let flags = Overrides {
        s3_listen: Some("127.0.0.1:3".into()),
        ..Default::default()
    };
    let c = Config::resolve(file, &env, &flags).unwrap();
    assert_eq!(c.s3.listen.as_deref(), Some("127.0.0.1:3"));
    assert_eq!(c.s3.url, "http://files.internal:8333", "a url set stays");
    let c = Config::resolve(FileConfig::default(), &Env::empty(), &flags).unwrap();
    assert_eq!(
        c.s3.url, "http://127.0.0.1:3",
        "the default url follows --s3-listen"
    );
}

#[test]
fn bad_s3_settings_are_refused_naming_the_key() {
    for (text, key) in [
        ("[s3]\nregion = \"\"\n", "s3.region"),
        ("[s3]\nregion = \"us east 1\"\n", "s3.region"),
        ("[s3]\nregion = \"eu_west_1\"\n", "s3.region"),
        ("[s3]\nurl = \"s3.example.com\"\n", "s3.url"),
        ("[s3]\nurl = \"ftp://s3.example.com\"\n", "s3.url"),
        ("[s3]\ndomain = \"s3.example.com/x\"\n", "s3.domain"),
        ("[s3]\ndomain = \"s3..example.com\"\n", "s3.domain"),
        ("[s3]\ndomain = \"s3.example.com:port\"\n", "s3.domain"),
    ] {
        let file: FileConfig = toml::from_str(text).unwrap();
        let e = Config::resolve(file, &Env::empty(), &Overrides::default()).unwrap_err();
        assert!(e.to_string().contains(key), "{text}: {e}");
    }
    let env = Env::empty().with("FILESTORE_S3_DOOR_REGION", "eu/west");
    let e = Config::resolve(FileConfig::default(), &env, &Overrides::default()).unwrap_err();
    assert!(e.to_string().contains("s3.region"), "{e}");
    let env = Env::empty().with("FILESTORE_S3_DOOR_URL", "localhost:8333");
    let e = Config::resolve(FileConfig::default(), &env, &Overrides::default()).unwrap_err();
    assert!(e.to_string().contains("s3.url"), "{e}");
    assert!(
        toml::from_str::<FileConfig>("[s3]\nlisten_addr = \"127.0.0.1:1\"\n").is_err(),
        "a typo in [s3] is an error"
    );
}
