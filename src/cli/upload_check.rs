//! What `upload` says of each file: the one line of a stored file, and
//! `--dry-run`'s verdicts (the server's rules for names and folders,
//! `walk::refusal`), without sending anything.

use super::context::Ctx;
use super::format;
use super::output::stderr_line;
use super::walk::{self, Job};
use crate::api::FileRecord;
use crate::client::error::exit;
use crate::client::ClientError;

/// One stored file in a line: `uploaded docs/a.txt (7 B) as f_…` (its
/// record, url included: `filestore get PATH`, or `--json`).
pub(super) fn done_line(r: &FileRecord) -> String {
    format!(
        "uploaded {} ({}) as {}",
        format::path(r.folder.as_deref(), &r.name),
        format::bytes(r.size),
        r.id
    )
}

/// `--dry-run`: each file where it would go, or why the server would
/// refuse it (its name or folder, by the server's rules); nothing sent.
/// Exit 1 when something would be refused (or could not be read).
pub(super) fn dry_run(
    jobs: &[Job],
    problems: &[ClientError],
    ctx: &Ctx,
) -> Result<u8, ClientError> {
    let mut refused = problems.len();
    for p in problems {
        stderr_line(&format!("error: {p}"));
    }
    for job in jobs {
        let path = format::path(job.folder.as_deref(), &job.name);
        let why = walk::refusal(job);
        if ctx.out.is_json() {
            ctx.out.record(&serde_json::json!({
                "source": job.label,
                "path": path,
                "size": job.size,
                "refused": why,
                "dry_run": true,
            }))?;
        } else if let Some(why) = &why {
            ctx.out
                .line(&format!("would refuse {}: {why}", job.label))?;
        } else {
            ctx.out.line(&format!(
                "would upload {} ({}) to {path}",
                job.label,
                format::bytes(job.size)
            ))?;
        }
        refused += usize::from(why.is_some());
    }
    Ok(if refused > 0 { exit::OTHER } else { exit::OK })
}
