//! tus interop with a client nobody here wrote: tuspy (PyPI `tuspy`, pinned
//! in .ci/run) uploads, is interrupted (a new uploader for the same URL, and
//! a connection cut mid-PATCH by a proxy), resumes and ends with the right
//! sha256, against the real binary on the local store and on S3 (a SeaweedFS
//! the script starts). The script is `tests/tus_interop/tuspy_test.py`.
//!
//! Skipped, with the reason printed, when `python3` cannot import tuspy;
//! CI sets FILESTORE_REQUIRE_TOOLS=1, which turns that into a failure (and
//! FILESTORE_REQUIRE_S3=1, which the script reads for its S3 run).

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/tus_interop/tuspy_test.py"
);
/// The script takes about 10 s alone; the limit allows for a busy machine.
const LIMIT: Duration = Duration::from_mins(10);

#[test]
fn tuspy_uploads_resumes_after_a_cut_and_gets_its_sha256_on_every_store() {
    if let Some(why) = crate::common::python_module_missing("tusclient.client") {
        assert!(
            std::env::var_os("FILESTORE_REQUIRE_TOOLS").is_none(),
            "FILESTORE_REQUIRE_TOOLS=1 but python3 cannot import tuspy: {why}"
        );
        // Straight to stderr: libtest captures `eprintln!` of passing tests.
        let _ = writeln!(
            std::io::stderr(),
            "skipped the tuspy interop test: python3 cannot import tuspy \
             (pip install tuspy==1.1.0): {why}"
        );
        return;
    }
    let out = tempfile::NamedTempFile::new().unwrap();
    let mut child = Command::new("python3")
        .arg("-u")
        .arg(SCRIPT)
        .arg(env!("CARGO_BIN_EXE_filestore"))
        .stdin(Stdio::null())
        .stdout(out.reopen().unwrap())
        .stderr(out.reopen().unwrap())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > LIMIT {
            // Its servers die with it (PR_SET_PDEATHSIG).
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let output = std::fs::read_to_string(out.path()).unwrap_or_default();
    match status {
        Some(s) if s.success() => {
            let summary: Vec<&str> = output
                .lines()
                .filter(|l| l.starts_with("   ") || l.starts_with("skipped"))
                .collect();
            let _ = writeln!(std::io::stderr(), "{}", summary.join("\n"));
        }
        Some(s) => panic!("tuspy_test.py failed ({s}):\n{output}"),
        None => panic!("tuspy_test.py did not finish in {LIMIT:?}:\n{output}"),
    }
}
