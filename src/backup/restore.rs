//! `admin restore SRC`: the newest backup of SRC into an empty data dir or
//! PostgreSQL database, every blob checked against its SHA-256.

use super::repo::{blob_path, Repo};
use super::{spool, BackupError, Entry, Header, Spooled};
use crate::config::{BackendKind, Config};
use crate::db::dump::{Cell, ColType, TableHead};
use crate::db::{Migrate, PgStore};
use crate::domain::secret::Secret;
use crate::storage::DynBlobStore;
use base64::Engine as _;
use futures_util::{StreamExt, TryStreamExt};
use serde::Serialize;
use sha2::Digest;
use std::path::{Path, PathBuf};
use tokio::io::AsyncBufReadExt;

/// What `admin restore` prints.
#[derive(Debug, Serialize)]
pub(crate) struct Restored {
    pub backup: String,
    pub files: u64,
    pub bytes: u64,
    pub seconds: f64,
}

/// The database being loaded.
enum Load {
    Sqlite(crate::db::dump::sqlite::Load),
    Pg(Box<crate::db::dump::postgres::Load>, Box<PgStore>),
}

impl Load {
    async fn table(&mut self, head: &TableHead) -> Result<(), BackupError> {
        match self {
            Load::Sqlite(l) => l.table(head)?,
            Load::Pg(l, _) => l.table(head).await?,
        }
        Ok(())
    }

    async fn row(&mut self, row: Vec<Cell>) -> Result<(), BackupError> {
        match self {
            Load::Sqlite(l) => l.row(row)?,
            Load::Pg(l, _) => l.row(row).await?,
        }
        Ok(())
    }

    async fn inline(&mut self, key: &str, data: &[u8]) -> Result<(), BackupError> {
        match self {
            Load::Sqlite(l) => l.inline(key, data)?,
            Load::Pg(l, _) => l.inline(key, data).await?,
        }
        Ok(())
    }

    async fn finish(self) -> Result<(), BackupError> {
        match self {
            Load::Sqlite(l) => l.finish()?,
            Load::Pg(l, _store) => l.finish().await?,
        }
        Ok(())
    }
}

/// Whether `dir` is absent or an empty directory.
fn empty_dir(dir: &Path) -> Result<bool, BackupError> {
    match std::fs::read_dir(dir) {
        Ok(mut entries) => Ok(entries.next().is_none()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(true),
        Err(e) => Err(BackupError::io(dir, e)),
    }
}

/// Restores the newest backup of `src` into the data dir, database and
/// blob store `config` names.
pub(crate) async fn restore(
    config: &Config,
    src: &str,
    endpoint: Option<&str>,
) -> Result<Restored, BackupError> {
    let started = std::time::Instant::now();
    let repo = Repo::open(src, endpoint, &config.storage).await?;
    let Some(id) = repo.backups().await?.pop() else {
        return Err(BackupError::Invalid(format!(
            "{} holds no complete backup",
            repo.describe()
        )));
    };
    let dir = format!("{}/{id}", super::BACKUPS);
    let manifest = lines(&repo, &format!("{dir}/{}", super::MANIFEST)).await?;
    tokio::pin!(manifest);
    let header: Header = match manifest.next().await {
        Some(line) => parse(&line?)?,
        None => return Err(BackupError::Invalid(format!("backup {id}: empty manifest"))),
    };
    if header.format != super::FORMAT || header.version != super::VERSION {
        return Err(BackupError::Invalid(format!(
            "backup {id}: format {} version {} is not this binary's",
            header.format, header.version
        )));
    }
    // The target: empty, then migrated.
    let data_dir = &config.data_dir;
    let url = config.database_url.as_ref().map(Secret::expose);
    let local = config.storage.backend == BackendKind::Local;
    if url.is_none() && !empty_dir(data_dir)? {
        return Err(BackupError::NotEmpty(format!(
            "data dir {}",
            data_dir.display()
        )));
    }
    if url.is_some() && local && !empty_dir(&data_dir.join("blobs"))? {
        return Err(BackupError::NotEmpty(format!(
            "blob store {}",
            data_dir.join("blobs").display()
        )));
    }
    crate::private_dir::create(data_dir).map_err(|e| BackupError::io(data_dir, e))?;
    let spool_dir: PathBuf = data_dir.join("tmp");
    crate::private_dir::create(&spool_dir).map_err(|e| BackupError::io(&spool_dir, e))?;
    let mut load = match url {
        Some(url) => {
            let store = PgStore::open(url, config.statement_timeout, Migrate::Always).await?;
            let l = crate::db::dump::postgres::Load::open(&store)
                .await
                .map_err(|e| match e {
                    crate::db::DbError::Invalid(why) => BackupError::NotEmpty(format!(
                        "database ({})",
                        why.trim_start_matches("the target database is not empty: ")
                    )),
                    other => other.into(),
                })?;
            Load::Pg(Box::new(l), Box::new(store))
        }
        None => Load::Sqlite(crate::db::dump::sqlite::Load::open(
            &data_dir.join(crate::db::SQLITE_FILE),
        )?),
    };
    let store = super::blob_store(config).await?;
    load_dump(&repo, &dir, &header, &mut load).await?;
    let mut bad = Vec::new();
    while let Some(line) = manifest.next().await {
        let e: Entry = parse(&line?)?;
        if !put_blob(&repo, &store, &spool_dir, &e, &mut load).await? {
            bad.push(e.name().to_string());
        }
    }
    if !bad.is_empty() {
        // Dropped without finishing: nothing of the rows is committed.
        drop(load);
        return Err(BackupError::Damaged(format!(
            "backup {id}: the bytes of these files are missing or do not match their sha256: {} \
             (nothing was restored; remove what the attempt left and restore from another backup)",
            bad.join(", ")
        )));
    }
    load.finish().await?;
    Ok(Restored {
        backup: id,
        files: header.files,
        bytes: header.bytes,
        seconds: (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
    })
}

/// The lines of the file `rel` of the repository.
async fn lines(
    repo: &Repo,
    rel: &str,
) -> Result<impl futures_util::Stream<Item = Result<String, BackupError>>, BackupError> {
    let stream = repo
        .get(rel)
        .await?
        .ok_or_else(|| BackupError::Invalid(format!("{}: no {rel}", repo.describe())))?;
    let reader =
        tokio::io::BufReader::with_capacity(256 * 1024, tokio_util::io::StreamReader::new(stream));
    let rel = rel.to_string();
    Ok(tokio_stream_lines(reader).map_err(move |e| BackupError::Repo(format!("{rel}: {e}"))))
}

fn tokio_stream_lines<R: tokio::io::AsyncBufRead + Unpin + Send + 'static>(
    reader: R,
) -> impl futures_util::Stream<Item = std::io::Result<String>> {
    futures_util::stream::unfold(reader.lines(), |mut l| async move {
        match l.next_line().await {
            Ok(Some(line)) => Some((Ok(line), l)),
            Ok(None) => None,
            Err(e) => Some((Err(e), l)),
        }
    })
}

fn parse<T: serde::de::DeserializeOwned>(line: &str) -> Result<T, BackupError> {
    serde_json::from_str(line).map_err(|e| BackupError::Invalid(format!("a backup's line: {e}")))
}

/// Loads the backup's dump, checking it against the manifest's SHA-256.
async fn load_dump(
    repo: &Repo,
    dir: &str,
    header: &Header,
    load: &mut Load,
) -> Result<(), BackupError> {
    let dump = lines(repo, &format!("{dir}/{}", super::DUMP)).await?;
    tokio::pin!(dump);
    let mut hash = sha2::Sha256::new();
    let mut types: Vec<ColType> = Vec::new();
    while let Some(line) = dump.next().await {
        let line = line?;
        hash.update(line.as_bytes());
        hash.update(b"\n");
        if line.starts_with('{') {
            let head: TableHead = parse(&line)?;
            types.clone_from(&head.types);
            load.table(&head).await?;
        } else {
            let values: Vec<serde_json::Value> = parse(&line)?;
            let row = values
                .into_iter()
                .zip(&types)
                .map(|(v, t)| cell(v, *t))
                .collect::<Result<Vec<_>, _>>()?;
            load.row(row).await?;
        }
    }
    if hex::encode(hash.finalize()) != header.dump_sha256 {
        return Err(BackupError::Damaged(format!(
            "backup {}: its dump does not match the manifest's sha256",
            header.id
        )));
    }
    Ok(())
}

fn cell(v: serde_json::Value, ty: ColType) -> Result<Cell, BackupError> {
    use serde_json::Value;
    Ok(match v {
        Value::Null => Cell::Null,
        Value::Bool(b) => Cell::Bool(b),
        Value::Number(n) => Cell::Int(
            n.as_i64()
                .ok_or_else(|| BackupError::Invalid(format!("a dump's number {n}")))?,
        ),
        Value::String(s) if ty == ColType::Bytes => Cell::Bytes(
            base64::engine::general_purpose::STANDARD
                .decode(s)
                .map_err(|e| BackupError::Invalid(format!("a dump's bytes: {e}")))?,
        ),
        Value::String(s) => Cell::Text(s),
        other => return Err(BackupError::Invalid(format!("a dump's value {other}"))),
    })
}

/// Puts one blob of the manifest where it goes (`inline_blobs`, or the
/// blob store); false when the backup's bytes are missing or wrong.
async fn put_blob(
    repo: &Repo,
    store: &DynBlobStore,
    spool_dir: &Path,
    e: &Entry,
    load: &mut Load,
) -> Result<bool, BackupError> {
    if !super::repo::is_sha256(&e.sha256) {
        return Ok(false);
    }
    let Some(mut stream) = repo.get(&blob_path(&e.sha256)).await? else {
        return Ok(false);
    };
    if e.inline {
        // Small (the database holds it): checked in memory, no file.
        let mut data = Vec::with_capacity(usize::try_from(e.size).unwrap_or(0));
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|err| BackupError::Repo(format!("reading a blob: {err}")))?;
            if (data.len() + chunk.len()) as u64 > e.size {
                return Ok(false);
            }
            data.extend_from_slice(&chunk);
        }
        if data.len() as u64 != e.size || super::sha256_hex(&data) != e.sha256 {
            return Ok(false);
        }
        load.inline(&e.key, &data).await?;
        return Ok(true);
    }
    let Spooled::Ok(tmp) = spool(stream, spool_dir, &e.sha256, e.size).await? else {
        return Ok(false);
    };
    store.put_file(&e.key, tmp, e.size).await?;
    Ok(true)
}
