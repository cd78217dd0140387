//! The committed `man/` pages and `completions/` scripts must equal what the
//! current CLI generates. After changing a flag or a help text, refresh them:
//!
//!     FILESTORE_UPDATE_GENERATED=1 cargo test --test it generated_docs

use std::collections::BTreeMap;
use std::path::Path;

/// Compares (or, with FILESTORE_UPDATE_GENERATED=1, rewrites) one directory.
fn check(dir: &str, files: Vec<(String, Vec<u8>)>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let want: BTreeMap<String, Vec<u8>> = files.into_iter().collect();
    if std::env::var_os("FILESTORE_UPDATE_GENERATED").is_some_and(|v| v == "1") {
        if root.exists() {
            std::fs::remove_dir_all(&root).unwrap();
        }
        std::fs::create_dir_all(&root).unwrap();
        for (name, content) in &want {
            std::fs::write(root.join(name), content).unwrap();
        }
        return;
    }
    let mut have = BTreeMap::new();
    if let Ok(entries) = std::fs::read_dir(&root) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            have.insert(name, std::fs::read(e.path()).unwrap());
        }
    }
    let stale: Vec<&String> = want
        .keys()
        .filter(|k| have.get(*k) != want.get(*k))
        .chain(have.keys().filter(|k| !want.contains_key(*k)))
        .collect();
    assert!(
        stale.is_empty(),
        "{dir}/ is out of date with the CLI ({stale:?}); run: \
         FILESTORE_UPDATE_GENERATED=1 cargo test --test generated_docs"
    );
}

#[test]
fn man_pages_are_up_to_date() {
    check("man", filestore::testing::cli::man_pages().unwrap());
}

#[test]
fn completions_are_up_to_date() {
    check("completions", filestore::testing::cli::completion_scripts());
}

/// `contrib/filestore.service` passes `systemd-analyze verify` (where that
/// tool is present), pointed at the binary just built.
#[test]
fn the_systemd_unit_verifies() {
    let Ok(out) = std::process::Command::new("systemd-analyze")
        .arg("--version")
        .output()
    else {
        eprintln!("skipped: no systemd-analyze on this machine");
        return;
    };
    assert!(out.status.success());
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let unit = std::fs::read_to_string(root.join("contrib/filestore.service")).unwrap();
    assert!(unit.contains("ExecStart=/usr/local/bin/filestore serve"));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("filestore.service");
    std::fs::write(
        &path,
        unit.replace("/usr/local/bin/filestore", env!("CARGO_BIN_EXE_filestore")),
    )
    .unwrap();
    let out = std::process::Command::new("systemd-analyze")
        .arg("verify")
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
