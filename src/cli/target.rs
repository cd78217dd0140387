//! What `get`, `download`, `sign`, `mv`, `cp` and `delete` are given: a file
//! id (`f_…`) or a path (`folder/name`, or `name` in the root; anything
//! else, and whatever starts with `/`). A path means the newest file there
//! (`GET /v1/files/at`); `delete` removes every file at it.

use crate::api::FileRecord;
use crate::client::{Client, ClientError, Fetched};
use crate::domain::filepath;

/// The help text of a FILE argument.
pub(crate) const FILE_HELP: &str =
    "File id (f_…) or path (folder/name; a leading / forces a path): a path means its newest file";

/// A FILE argument, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// A file id.
    Id(String),
    /// A path, without a leading `/`.
    Path(String),
}

impl Target {
    /// Reads an argument: `f_…` is an id, anything else a path (a leading
    /// `/` makes `/f_x` the path `f_x`).
    pub(crate) fn parse(arg: &str) -> Target {
        if let Some(path) = arg.strip_prefix('/') {
            Target::Path(path.to_string())
        } else if arg.starts_with("f_") {
            Target::Id(arg.to_string())
        } else {
            Target::Path(arg.to_string())
        }
    }

    /// The path, checked as the server checks one: a usage error (exit 2)
    /// when no file can be at it.
    fn checked_path(path: &str) -> Result<&str, ClientError> {
        filepath::split(path)
            .map_err(|why| ClientError::usage(format!("invalid path {path:?}: {why}")))?;
        Ok(path)
    }
}

/// The 404 of a path without a file (exit 4).
fn nothing_at(path: &str) -> ClientError {
    ClientError::Api {
        status: 404,
        code: "not_found".into(),
        message: format!("no file at path {path:?}"),
    }
}

/// The newest file at `path`, with the not-found error naming the path.
async fn newest_at(client: &Client, path: &str) -> Result<Fetched<FileRecord>, ClientError> {
    match client.file_at(Target::checked_path(path)?).await {
        Err(e) if e.status() == Some(404) => Err(nothing_at(path)),
        other => other,
    }
}

/// The record of the file `arg` names.
pub(crate) async fn record(client: &Client, arg: &str) -> Result<Fetched<FileRecord>, ClientError> {
    match Target::parse(arg) {
        Target::Id(id) => client.get_file(&id).await,
        Target::Path(path) => newest_at(client, &path).await,
    }
}

/// The id of the file `arg` names (no request for an id).
pub(crate) async fn id(client: &Client, arg: &str) -> Result<String, ClientError> {
    match Target::parse(arg) {
        Target::Id(id) => Ok(id),
        Target::Path(path) => Ok(newest_at(client, &path).await?.record.id),
    }
}

/// The most files `delete PATH` removes at one path: a bound on its loop
/// (each round deletes the newest file there, so it ends when none is left).
const MAX_AT_ONE_PATH: usize = 100_000;

/// Deletes every file at `path`, newest first, until none is left; gives
/// their ids. No file there at all is the path's 404 (exit 4).
pub(crate) async fn delete_all_at(client: &Client, path: &str) -> Result<Vec<String>, ClientError> {
    let path = Target::checked_path(path)?;
    let mut deleted = Vec::new();
    while deleted.len() < MAX_AT_ONE_PATH {
        let id = match client.file_at(path).await {
            Ok(found) => found.record.id,
            Err(e) if e.status() == Some(404) => break,
            Err(e) => return Err(e),
        };
        match client.delete(&id).await {
            // Deleted by someone else meanwhile: the next round looks again.
            Err(e) if e.status() == Some(404) => {}
            Err(e) => return Err(e),
            Ok(_) => deleted.push(id),
        }
    }
    if deleted.is_empty() {
        return Err(nothing_at(path));
    }
    Ok(deleted)
}

#[cfg(test)]
mod tests {
    use super::Target;

    #[test]
    fn ids_and_paths() {
        assert_eq!(Target::parse("f_abc"), Target::Id("f_abc".into()));
        assert_eq!(Target::parse("/f_abc"), Target::Path("f_abc".into()));
        assert_eq!(Target::parse("a/b.txt"), Target::Path("a/b.txt".into()));
        assert_eq!(Target::parse("/a/b.txt"), Target::Path("a/b.txt".into()));
        assert_eq!(
            Target::parse("app.tar.gz"),
            Target::Path("app.tar.gz".into())
        );
        assert!(Target::checked_path("a/").is_err());
        assert!(Target::checked_path("a//b").is_err());
        assert!(Target::checked_path("a/b").is_ok());
    }
}
