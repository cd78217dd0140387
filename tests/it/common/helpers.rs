//! Small helpers every kind of test uses: an upload's multipart body, a
//! plain GET's bytes, a polling wait, an error's code, a SHA-256, a Python
//! module's presence.

use reqwest::multipart::{Form, Part};
use std::path::Path;
use std::time::Duration;

/// The error code of an error response.
pub async fn error_code(r: reqwest::Response) -> (u16, String) {
    let status = r.status().as_u16();
    let body: serde_json::Value = r.json().await.expect("error body is JSON");
    let code = body["error"]["code"]
        .as_str()
        .expect("envelope has error.code")
        .to_string();
    assert!(
        body["error"]["message"].is_string(),
        "envelope has error.message: {body}"
    );
    (status, code)
}

/// The multipart body of `POST /v1/upload`: `fields` as text, then the
/// file part `name` with `bytes`.
pub fn upload_form(name: &str, bytes: Vec<u8>, fields: &[(&str, &str)]) -> Form {
    let mut form = Form::new();
    for (k, v) in fields {
        form = form.text(k.to_string(), v.to_string());
    }
    form.part("file", Part::bytes(bytes).file_name(name.to_string()))
}

/// `GET url` (no key: a File's url, a signed URL): the body, whatever the
/// status.
pub async fn get_bytes(http: &reqwest::Client, url: impl reqwest::IntoUrl) -> Vec<u8> {
    let r = http.get(url).send().await.unwrap();
    r.bytes().await.unwrap().to_vec()
}

/// Polls `check` every `every` for up to `secs` seconds; panics, naming
/// `what`, when it never holds.
pub async fn eventually<F, Fut>(secs: u64, every: Duration, what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(secs);
    while tokio::time::Instant::now() < deadline {
        if check().await {
            return;
        }
        tokio::time::sleep(every).await;
    }
    panic!("timed out after {secs}s waiting for: {what}");
}

/// The hex SHA-256 of `bytes`, as the File record has it.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

/// Why `python3` cannot import `module`, if it cannot (the outside clients
/// and receivers some tests drive are Python packages).
pub fn python_module_missing(module: &str) -> Option<String> {
    match std::process::Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .output()
    {
        Ok(out) if out.status.success() => None,
        Ok(out) => Some(
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .last()
                .unwrap_or("import failed")
                .to_string(),
        ),
        Err(e) => Some(format!("python3: {e}")),
    }
}

/// Reads the archive at `path` with Python's zipfile: each entry's name,
/// size and SHA-256, in the archive's order. Reading an entry to its end
/// checks its CRC-32.
pub fn read_zip(path: &Path) -> Vec<(String, u64, String)> {
    const SCRIPT: &str = r"
import hashlib, json, sys, zipfile
out = []
with zipfile.ZipFile(sys.argv[1]) as z:
    for info in z.infolist():
        h = hashlib.sha256()
        with z.open(info) as f:
            while True:
                b = f.read(1 << 20)
                if not b:
                    break
                h.update(b)
        out.append([info.filename, info.file_size, h.hexdigest()])
print(json.dumps(out))
";
    let out = std::process::Command::new("python3")
        .args(["-c", SCRIPT])
        .arg(path)
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "zipfile: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Vec<(String, u64, String)> = serde_json::from_slice(&out.stdout).unwrap();
    v
}
