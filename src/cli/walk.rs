//! Turns the paths given to `upload` into a list of files to send, each with
//! the folder it goes to. A directory (with `-r`) uploads its contents: with
//! `--folder releases/v1`, `dist/a/b.txt` of `dist/` goes to folder
//! `releases/v1/a` as `b.txt`. Symbolic links to files are followed; links
//! to directories are skipped (no cycles), with a note for the user.

use crate::client::ClientError;
use crate::domain::validate;
use std::path::{Path, PathBuf};

/// One file to upload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Job {
    /// Where to read it.
    pub source: PathBuf,
    /// What to call it in messages.
    pub label: String,
    /// The name it is stored under.
    pub name: String,
    /// The folder it is stored in.
    pub folder: Option<String>,
    /// Its size in bytes.
    pub size: u64,
}

/// `base` and `rel` joined with `/`; `None` when both are empty.
pub(crate) fn join_folder(base: Option<&str>, rel: &[String]) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    if let Some(b) = base {
        parts.extend(b.split('/').filter(|s| !s.is_empty()));
    }
    parts.extend(rel.iter().map(String::as_str));
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// Why the server would refuse `job` where it goes (its folder, its name,
/// by the server's own rules, `domain::validate`), if it would.
pub(crate) fn refusal(job: &Job) -> Option<String> {
    let folder = job.folder.as_deref().unwrap_or("");
    if let Err(e) = validate::folder(folder) {
        return Some(e);
    }
    match validate::file_name(&job.name) {
        Err(e) => Some(e),
        Ok(n) if n != job.name => Some(format!("the server would store {:?} as {n:?}", job.name)),
        Ok(_) => None,
    }
}

fn utf8_name(path: &Path) -> Result<String, ClientError> {
    path.file_name()
        .and_then(|n| n.to_str())
        .map(str::to_string)
        .ok_or_else(|| {
            ClientError::usage(format!(
                "{}: the file name is not valid UTF-8 (or there is none)",
                path.display()
            ))
        })
}

/// What [`expand`] found.
#[derive(Debug, Default)]
pub(crate) struct Expansion {
    /// The files to upload.
    pub jobs: Vec<Job>,
    /// Problems with some paths (missing, a directory without `-r`,
    /// unreadable): the others go on.
    pub errors: Vec<ClientError>,
    /// Informational lines for the user (skipped links to directories).
    pub notes: Vec<String>,
    /// The directories not walked (links to directories): what is below
    /// them is unknown, not absent.
    pub skipped_dirs: Vec<PathBuf>,
}

/// Expands `paths` into jobs, errors and notes.
pub(crate) fn expand(paths: &[PathBuf], recursive: bool, folder: Option<&str>) -> Expansion {
    let mut found = Expansion::default();
    for path in paths {
        let label = path.display().to_string();
        match std::fs::metadata(path) {
            Err(e) => found.errors.push(ClientError::io(&label, e)),
            Ok(meta) if meta.is_dir() => {
                if recursive {
                    walk_dir(path, &mut Vec::new(), folder, &mut found);
                } else {
                    found.errors.push(ClientError::usage(format!(
                        "{label}: is a directory (use -r to upload its contents)"
                    )));
                }
            }
            Ok(meta) if !meta.is_file() => found.errors.push(ClientError::usage(format!(
                "{label}: not a regular file (use \"-\" to upload a stream from standard input)"
            ))),
            Ok(meta) => match utf8_name(path) {
                Ok(name) => found.jobs.push(Job {
                    source: path.clone(),
                    label,
                    name,
                    folder: join_folder(folder, &[]),
                    size: meta.len(),
                }),
                Err(e) => found.errors.push(e),
            },
        }
    }
    found
}

/// Walks `dir` (sorted, depth first), `rel` being its path below the root.
fn walk_dir(dir: &Path, rel: &mut Vec<String>, folder: Option<&str>, out: &mut Expansion) {
    let entries = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) => return out.errors.push(ClientError::io(dir.display(), e)),
    };
    let mut paths: Vec<PathBuf> = Vec::new();
    for entry in entries {
        match entry {
            Ok(e) => paths.push(e.path()),
            Err(e) => out.errors.push(ClientError::io(dir.display(), e)),
        }
    }
    paths.sort();
    for path in paths {
        let label = path.display().to_string();
        let link = std::fs::symlink_metadata(&path).map(|m| m.file_type().is_symlink());
        let meta = match std::fs::metadata(&path) {
            Ok(m) => m,
            Err(e) => {
                out.errors.push(ClientError::io(&label, e));
                continue;
            }
        };
        let name = match utf8_name(&path) {
            Ok(n) => n,
            Err(e) => {
                out.errors.push(e);
                continue;
            }
        };
        if meta.is_dir() {
            if matches!(link, Ok(true)) {
                out.notes
                    .push(format!("skipped {label}: a symbolic link to a directory"));
                out.skipped_dirs.push(path);
                continue;
            }
            rel.push(name);
            walk_dir(&path, rel, folder, out);
            rel.pop();
        } else if meta.is_file() {
            out.jobs.push(Job {
                source: path,
                label,
                name,
                folder: join_folder(folder, rel),
                size: meta.len(),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folders_join_and_trim() {
        assert_eq!(join_folder(None, &[]), None);
        assert_eq!(join_folder(Some("/a/b/"), &[]), Some("a/b".into()));
        assert_eq!(
            join_folder(Some("rel/v1"), &["x".into(), "y".into()]),
            Some("rel/v1/x/y".into())
        );
        assert_eq!(join_folder(None, &["x".into()]), Some("x".into()));
    }

    #[test]
    fn directories_keep_relative_paths() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("dist");
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("top.txt"), "1").unwrap();
        std::fs::write(root.join("a/b/deep.txt"), "22").unwrap();
        let Expansion {
            jobs,
            errors,
            notes,
            skipped_dirs,
        } = expand(std::slice::from_ref(&root), true, Some("rel"));
        assert!(
            errors.is_empty() && notes.is_empty() && skipped_dirs.is_empty(),
            "{errors:?} {notes:?}"
        );
        let got: Vec<_> = jobs
            .iter()
            .map(|j| (j.folder.clone().unwrap(), j.name.clone(), j.size))
            .collect();
        assert_eq!(
            got,
            vec![
                ("rel/a/b".into(), "deep.txt".into(), 2),
                ("rel".into(), "top.txt".into(), 1)
            ]
        );
        let found = expand(&[root, dir.path().join("missing")], false, None);
        assert!(found.jobs.is_empty());
        assert_eq!(found.errors.len(), 2);
    }

    #[cfg(unix)]
    #[test]
    fn links_to_directories_are_skipped_with_a_note() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("tree");
        std::fs::create_dir_all(root.join("real")).unwrap();
        std::fs::write(root.join("real/f.txt"), "1").unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("loop")).unwrap();
        std::os::unix::fs::symlink(root.join("real/f.txt"), root.join("g.txt")).unwrap();
        let found = expand(std::slice::from_ref(&root), true, None);
        assert!(found.errors.is_empty(), "{:?}", found.errors);
        let names: Vec<_> = found.jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["g.txt", "f.txt"], "files behind links are followed");
        assert_eq!(found.notes.len(), 1, "{:?}", found.notes);
        assert!(found.notes[0].contains("loop"), "{:?}", found.notes);
        assert_eq!(found.skipped_dirs, [root.join("loop")]);
    }
}
