//! `admin backup DEST`: a consistent snapshot of the metadata, the blobs
//! it names that DEST lacks, and the manifest, last.

use super::repo::{blob_path, Repo, Unsynced};
use super::{spool, spool_bytes, BackupError, Entry, Header, Spooled};
use crate::config::Config;
use crate::db::dump::{Cell, Item, TableHead};
use crate::db::{DbError, MetaStore, Migrate, PgStore};
use crate::domain::secret::Secret;
use crate::storage::{DynBlobStore, StorageError};
use base64::Engine as _;
use futures_util::stream::FuturesUnordered;
use futures_util::{FutureExt, StreamExt};
use serde::Serialize;
use sha2::Digest;
use std::collections::HashSet;
use std::io::{BufRead, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// What `admin backup` prints.
#[derive(Debug, Serialize)]
pub(crate) struct Summary {
    pub files: u64,
    pub bytes: u64,
    pub new_blobs: u64,
    pub new_bytes: u64,
    pub seconds: f64,
    /// The backup's id (`backups/<id>/`), in the human line only.
    #[serde(skip)]
    pub id: String,
}

/// Blobs copied at once.
const COPIES: usize = 16;

/// The metadata store a backup reads.
enum Source {
    Sqlite(PathBuf, crate::db::DynMetaStore),
    Pg(PgStore),
}

impl Source {
    fn meta(&self) -> &dyn MetaStore {
        match self {
            Source::Sqlite(_, m) => &**m,
            Source::Pg(p) => p,
        }
    }
}

/// Takes a backup of the server `config` names into `dest`.
pub(crate) async fn backup(
    config: &Config,
    dest: &str,
    endpoint: Option<&str>,
) -> Result<Summary, BackupError> {
    let started = std::time::Instant::now();
    let repo = Repo::open(dest, endpoint, &config.storage).await?;
    let source = if let Some(url) = config.database_url.as_ref().map(Secret::expose) {
        Source::Pg(PgStore::open(url, config.statement_timeout, Migrate::OnlyEmpty).await?)
    } else {
        let meta = crate::db::open_with(
            &config.data_dir,
            None,
            config.statement_timeout,
            Migrate::OnlyEmpty,
        )
        .await?;
        Source::Sqlite(config.data_dir.join(crate::db::SQLITE_FILE), meta)
    };
    let store = super::blob_store(config).await?;
    let now = chrono::Utc::now();
    let id = format!(
        "{}-{:08x}",
        now.format("%Y%m%dT%H%M%S%.3fZ"),
        rand::random::<u32>()
    );
    let hold_ms = i64::try_from(super::HOLD.as_millis()).unwrap_or(i64::MAX);
    source
        .meta()
        .hold_blobs(&id, now.timestamp_millis() + hold_ms)
        .await?;
    let result = async {
        let scratch = repo.scratch(&id)?;
        let run = Run {
            repo,
            store,
            scratch: scratch.path().to_path_buf(),
            seen: Arc::default(),
            unsynced: Unsynced::default(),
        };
        let renew = renew_hold(&source, &id);
        tokio::pin!(renew);
        let work = take(&run, &source, &id, now.timestamp_millis());
        tokio::select! {
            r = work => r,
            e = &mut renew => Err(e),
        }
    }
    .await;
    let _ = source
        .meta()
        .release_blobs(&id, chrono::Utc::now().timestamp_millis())
        .await;
    let (header, new_blobs, new_bytes) = result?;
    Ok(Summary {
        files: header.files,
        bytes: header.bytes,
        new_blobs,
        new_bytes,
        seconds: (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
        id,
    })
}

/// Renews the hold every quarter of its length; returns only on failure.
async fn renew_hold(source: &Source, id: &str) -> BackupError {
    let hold_ms = i64::try_from(super::HOLD.as_millis()).unwrap_or(i64::MAX);
    loop {
        tokio::time::sleep(super::HOLD / 4).await;
        let until = chrono::Utc::now().timestamp_millis() + hold_ms;
        if let Err(e) = source.meta().hold_blobs(id, until).await {
            return e.into();
        }
    }
}

struct Run {
    repo: Repo,
    store: DynBlobStore,
    scratch: PathBuf,
    /// The blobs this run put in the repository (or is putting).
    seen: Arc<Mutex<HashSet<[u8; 32]>>>,
    /// The directories of the blobs it put, fsynced before the manifest.
    unsynced: Unsynced,
}

/// Where the columns that name blobs are in the rows of `files` and
/// `s3_parts`, and the signing secret in `meta`.
enum Watch {
    None,
    Files {
        id: usize,
        sha256: usize,
        size: usize,
        key: usize,
        inline: Option<usize>,
    },
    Parts {
        upload: usize,
        number: usize,
        sha256: usize,
        size: usize,
        key: usize,
    },
    Meta {
        key: usize,
        value: usize,
    },
}

fn watch(head: &TableHead) -> Watch {
    let at = |name: &str| head.columns.iter().position(|c| c == name);
    let all = |names: &[&str]| names.iter().map(|n| at(n)).collect::<Option<Vec<_>>>();
    match head.table.as_str() {
        "files" => match all(&["id", "sha256", "size", "blob_key"]) {
            Some(v) => Watch::Files {
                id: v[0],
                sha256: v[1],
                size: v[2],
                key: v[3],
                inline: at("inline"),
            },
            None => Watch::None,
        },
        "s3_parts" => match all(&["upload_id", "number", "sha256", "size", "blob_key"]) {
            Some(v) => Watch::Parts {
                upload: v[0],
                number: v[1],
                sha256: v[2],
                size: v[3],
                key: v[4],
            },
            None => Watch::None,
        },
        "meta" => match all(&["key", "value"]) {
            Some(v) => Watch::Meta {
                key: v[0],
                value: v[1],
            },
            None => Watch::None,
        },
        _ => Watch::None,
    }
}

fn text(row: &[Cell], i: usize) -> String {
    match &row[i] {
        Cell::Text(s) => s.clone(),
        Cell::Int(n) => n.to_string(),
        _ => String::new(),
    }
}

fn size(row: &[Cell], i: usize) -> u64 {
    row[i]
        .as_int()
        .and_then(|n| u64::try_from(n).ok())
        .unwrap_or(0)
}

/// A row as a JSON array (bytes in base64).
fn row_json(row: &[Cell]) -> serde_json::Value {
    serde_json::Value::Array(
        row.iter()
            .map(|c| match c {
                Cell::Null => serde_json::Value::Null,
                Cell::Int(n) => (*n).into(),
                Cell::Bool(b) => (*b).into(),
                Cell::Text(s) => s.as_str().into(),
                Cell::Bytes(b) => base64::engine::general_purpose::STANDARD.encode(b).into(),
            })
            .collect(),
    )
}

/// A file of lines, hashed as it is written.
struct Lines {
    out: BufWriter<std::fs::File>,
    path: tempfile::TempPath,
    hash: sha2::Sha256,
    bytes: u64,
}

impl Lines {
    fn new(dir: &Path) -> Result<Lines, BackupError> {
        let (file, path) = tempfile::NamedTempFile::new_in(dir)
            .map_err(|e| BackupError::io(dir, e))?
            .into_parts();
        Ok(Lines {
            out: BufWriter::with_capacity(256 * 1024, file),
            path,
            hash: sha2::Sha256::new(),
            bytes: 0,
        })
    }

    fn line<T: Serialize>(&mut self, value: &T) -> Result<(), BackupError> {
        let mut line =
            serde_json::to_vec(value).map_err(|e| BackupError::Invalid(e.to_string()))?;
        line.push(b'\n');
        self.hash.update(&line);
        self.bytes += line.len() as u64;
        self.out
            .write_all(&line)
            .map_err(|e| BackupError::io(&self.path, e))
    }

    /// Flushed and fsynced: its path, SHA-256 and length.
    fn finish(self) -> Result<(tempfile::TempPath, String, u64), BackupError> {
        let file = self
            .out
            .into_inner()
            .map_err(|e| BackupError::io(&self.path, e.into_error()))?;
        file.sync_all()
            .map_err(|e| BackupError::io(&self.path, e))?;
        Ok((self.path, hex::encode(self.hash.finalize()), self.bytes))
    }
}

/// Copies still running, at most [`COPIES`]; each says the bytes it put
/// in the repository (None: the blob was there).
struct Copies<'a> {
    running:
        FuturesUnordered<futures_util::future::BoxFuture<'a, Result<Option<u64>, BackupError>>>,
    new_blobs: u64,
    new_bytes: u64,
}

impl<'a> Copies<'a> {
    async fn push(
        &mut self,
        copy: futures_util::future::BoxFuture<'a, Result<Option<u64>, BackupError>>,
    ) -> Result<(), BackupError> {
        self.running.push(copy);
        while self.running.len() >= COPIES {
            self.settle_one().await?;
        }
        Ok(())
    }

    async fn settle_one(&mut self) -> Result<(), BackupError> {
        if let Some(r) = self.running.next().await {
            if let Some(n) = r? {
                self.new_blobs += 1;
                self.new_bytes += n;
            }
        }
        Ok(())
    }

    async fn drain(&mut self) -> Result<(), BackupError> {
        while !self.running.is_empty() {
            self.settle_one().await?;
        }
        Ok(())
    }
}

/// A blob whose bytes did not come out right: the files named at the end.
#[derive(Default)]
struct Bad {
    missing: Vec<String>,
    damaged: Vec<String>,
}

async fn take(
    run: &Run,
    source: &Source,
    id: &str,
    created_at: i64,
) -> Result<(Header, u64, u64), BackupError> {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Result<Item, DbError>>(256);
    let producer = match source {
        Source::Sqlite(path, _) => {
            let path = path.clone();
            tokio::task::spawn_blocking(move || {
                if let Err(e) = crate::db::dump::sqlite::snapshot(&path, &tx) {
                    let _ = tx.blocking_send(Err(e));
                }
            })
        }
        Source::Pg(store) => {
            let store = store.clone();
            tokio::spawn(async move {
                if let Err(e) = crate::db::dump::postgres::snapshot(&store, &tx).await {
                    let _ = tx.send(Err(e)).await;
                }
            })
        }
    };
    let mut dump = Lines::new(&run.scratch)?;
    let mut entries = Lines::new(&run.scratch)?;
    let mut copies = Copies {
        running: FuturesUnordered::new(),
        new_blobs: 0,
        new_bytes: 0,
    };
    let bad = Arc::new(Mutex::new(Bad::default()));
    let mut header = Header {
        format: super::FORMAT.into(),
        version: super::VERSION,
        id: id.to_string(),
        created_at,
        database: match source {
            Source::Sqlite(..) => "sqlite".into(),
            Source::Pg(_) => "postgres".into(),
        },
        files: 0,
        bytes: 0,
        parts: 0,
        signing_secret: None,
        dump_sha256: String::new(),
        dump_bytes: 0,
    };
    let mut watching = Watch::None;
    while let Some(item) = rx.recv().await {
        match item? {
            Item::Table(head) => {
                watching = watch(&head);
                dump.line(&head)?;
            }
            Item::Row(row) => {
                match watching {
                    Watch::Files {
                        id,
                        sha256,
                        size: sz,
                        key,
                        inline,
                    } => {
                        let e = Entry {
                            file: Some(text(&row, id)),
                            part: None,
                            sha256: text(&row, sha256),
                            size: size(&row, sz),
                            key: text(&row, key),
                            inline: inline.and_then(|i| row[i].as_bool()).unwrap_or(false),
                        };
                        header.files += 1;
                        header.bytes += e.size;
                        entries.line(&e)?;
                    }
                    Watch::Parts {
                        upload,
                        number,
                        sha256,
                        size: sz,
                        key,
                    } => {
                        header.parts += 1;
                        entries.line(&Entry {
                            file: None,
                            part: Some(format!("{}/{}", text(&row, upload), text(&row, number))),
                            sha256: text(&row, sha256),
                            size: size(&row, sz),
                            key: text(&row, key),
                            inline: false,
                        })?;
                    }
                    Watch::Meta { key, value } => {
                        if text(&row, key) == "signing_secret" {
                            header.signing_secret = Some(text(&row, value));
                        }
                    }
                    Watch::None => {}
                }
                dump.line(&row_json(&row))?;
            }
            Item::Inline { sha256, data } => {
                let bad = Arc::clone(&bad);
                copies
                    .push(
                        async move {
                            let r = put_inline(run, &sha256, &data).await?;
                            if r.is_none() && super::sha256_hex(&data) != sha256 {
                                bad.lock().expect("not poisoned").damaged.push(sha256);
                            }
                            Ok(r)
                        }
                        .boxed(),
                    )
                    .await?;
            }
        }
    }
    producer
        .await
        .map_err(|e| BackupError::Invalid(format!("the snapshot failed: {e}")))?;
    // The snapshot is read: its transaction is over. The blobs it names
    // are kept by the hold while they are copied.
    let (dump_path, dump_sha, dump_bytes) = dump.finish()?;
    let (entries_path, _, _) = entries.finish()?;
    let list = std::fs::File::open(&entries_path).map_err(|e| BackupError::io(&entries_path, e))?;
    for line in std::io::BufReader::new(list).lines() {
        let line = line.map_err(|e| BackupError::io(&entries_path, e))?;
        let e: Entry =
            serde_json::from_str(&line).map_err(|e| BackupError::Invalid(e.to_string()))?;
        if e.inline {
            continue;
        }
        let bad = Arc::clone(&bad);
        copies
            .push(async move { copy_blob(run, &e, &bad).await }.boxed())
            .await?;
    }
    copies.drain().await?;
    let bad = std::mem::take(&mut *bad.lock().expect("not poisoned"));
    if !bad.missing.is_empty() || !bad.damaged.is_empty() {
        let mut why = Vec::new();
        if !bad.missing.is_empty() {
            why.push(format!("blob missing: {}", bad.missing.join(", ")));
        }
        if !bad.damaged.is_empty() {
            why.push(format!(
                "bytes do not match their sha256: {}",
                bad.damaged.join(", ")
            ));
        }
        return Err(BackupError::Damaged(format!(
            "no backup written: {} (`admin verify --repair-from` an earlier backup)",
            why.join("; ")
        )));
    }
    // Every blob's name durable before the backup can be complete.
    run.repo.sync_deferred(&run.unsynced).await?;
    header.dump_sha256 = dump_sha;
    header.dump_bytes = dump_bytes;
    let dir = format!("{}/{id}", super::BACKUPS);
    run.repo
        .put(&format!("{dir}/{}", super::DUMP), dump_path)
        .await?;
    // The manifest: its header, then every blob's line; in place last.
    let mut manifest = Lines::new(&run.scratch)?;
    manifest.line(&header)?;
    let list = std::fs::File::open(&entries_path).map_err(|e| BackupError::io(&entries_path, e))?;
    for line in std::io::BufReader::new(list).lines() {
        let line = line.map_err(|e| BackupError::io(&entries_path, e))?;
        let raw: serde_json::Value =
            serde_json::from_str(&line).map_err(|e| BackupError::Invalid(e.to_string()))?;
        manifest.line(&raw)?;
    }
    let (manifest_path, _, _) = manifest.finish()?;
    run.repo
        .put(&format!("{dir}/{}", super::MANIFEST), manifest_path)
        .await?;
    Ok((header, copies.new_blobs, copies.new_bytes))
}

/// Claims `sha256` for this run: false when it put (or is putting) it already.
fn claim(run: &Run, sha256: &str) -> bool {
    let mut key = [0u8; 32];
    if hex::decode_to_slice(sha256, &mut key).is_err() {
        return true;
    }
    run.seen.lock().expect("not poisoned").insert(key)
}

/// Puts an inline file's bytes in the repository unless there already
/// (None), or unless they do not match their sha256 (None, named by the caller).
async fn put_inline(run: &Run, sha256: &str, data: &[u8]) -> Result<Option<u64>, BackupError> {
    if !super::repo::is_sha256(sha256) || super::sha256_hex(data) != sha256 || !claim(run, sha256) {
        return Ok(None);
    }
    let rel = blob_path(sha256);
    if run.repo.size(&rel).await? == Some(data.len() as u64) {
        return Ok(None);
    }
    let tmp = spool_bytes(data, &run.scratch)?;
    run.repo.put_deferred(&rel, tmp, &run.unsynced).await?;
    Ok(Some(data.len() as u64))
}

/// Copies a blob from the store to the repository unless there already.
async fn copy_blob(run: &Run, e: &Entry, bad: &Mutex<Bad>) -> Result<Option<u64>, BackupError> {
    if !super::repo::is_sha256(&e.sha256) {
        bad.lock()
            .expect("not poisoned")
            .damaged
            .push(e.name().to_string());
        return Ok(None);
    }
    if !claim(run, &e.sha256) {
        return Ok(None);
    }
    let rel = blob_path(&e.sha256);
    if run.repo.size(&rel).await? == Some(e.size) {
        return Ok(None);
    }
    let stream = if e.size == 0 {
        futures_util::stream::empty().boxed()
    } else {
        match run.store.get(&e.key, 0, e.size).await {
            Ok(s) => s,
            Err(StorageError::NotFound(_)) => {
                bad.lock()
                    .expect("not poisoned")
                    .missing
                    .push(e.name().to_string());
                return Ok(None);
            }
            Err(err) => return Err(err.into()),
        }
    };
    match spool(stream, &run.scratch, &e.sha256, e.size).await? {
        Spooled::Ok(tmp) => {
            run.repo.put_deferred(&rel, tmp, &run.unsynced).await?;
            Ok(Some(e.size))
        }
        Spooled::Mismatch => {
            bad.lock()
                .expect("not poisoned")
                .damaged
                .push(e.name().to_string());
            Ok(None)
        }
    }
}
