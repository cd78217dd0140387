//! The single writer: every write of the server goes through one connection on
//! one thread, with group commit.
//!
//! With `synchronous = FULL` each commit costs an fsync of the WAL, and an
//! acknowledged upload must have paid for one (a 201 survives a power cut). So
//! the writer takes every job that is waiting, runs each in its own savepoint
//! inside one `BEGIN IMMEDIATE` transaction, commits once, and only then
//! answers them all: N concurrent uploads share one fsync instead of paying N.
//! A job that fails rolls back to its savepoint and leaves the others alone; a
//! commit that fails fails every job of the batch (none of them is stored).
//!
//! Savepoints keep the pages they change in a journal, which SQLite spills
//! to a temporary file past 64 KiB: a batch of a dozen uploads opened,
//! wrote and unlinked one in `/var/tmp`, a tenth of an upload's cost. A
//! *small* job (one row or a few: an upload's commit) may keep its journal
//! in memory (`temp_store = MEMORY`), so a batch of small jobs only is run
//! that way: at most [`MAX_BATCH`] jobs of a few pages each, some MiB at
//! worst. A batch with any other job (a folder's delete, thousands of rows)
//! keeps the file journal, and memory stays flat.

use crate::db::error::DbError;
use rusqlite::Connection;
use std::panic::{catch_unwind, AssertUnwindSafe};
use tokio::sync::{mpsc, oneshot};

/// Most jobs committed together: bounds the time one transaction holds the
/// write lock (and the latency the first job of a batch waits).
const MAX_BATCH: usize = 256;
/// Jobs waiting for the writer; senders wait beyond that (backpressure).
const QUEUE: usize = 4096;

/// One unit of work of the writer: runs inside the batch's transaction, and
/// is told the batch's fate once it has committed (or not).
trait Job: Send {
    /// Runs the job; false when it failed (its savepoint is rolled back).
    fn run(&mut self, conn: &mut Connection) -> bool;
    /// Whether the job changes a few rows only (its journal fits in memory).
    fn small(&self) -> bool;
    /// Answers the caller: the job's own result when the batch committed.
    fn finish(self: Box<Self>, committed: Result<(), &DbError>);
}

struct Typed<T, F> {
    f: Option<F>,
    small: bool,
    out: Option<Result<T, DbError>>,
    reply: oneshot::Sender<Result<T, DbError>>,
}

impl<T, F> Job for Typed<T, F>
where
    T: Send,
    F: FnOnce(&mut Connection) -> Result<T, DbError> + Send,
{
    fn run(&mut self, conn: &mut Connection) -> bool {
        let f = self.f.take().expect("a job runs once");
        let out = catch_unwind(AssertUnwindSafe(|| f(conn)))
            .unwrap_or_else(|_| Err(DbError::Task("a database write panicked".into())));
        let ok = out.is_ok();
        self.out = Some(out);
        ok
    }

    fn small(&self) -> bool {
        self.small
    }

    fn finish(self: Box<Self>, committed: Result<(), &DbError>) {
        let out = match (self.out, committed) {
            (Some(Err(e)), _) => Err(e),
            (Some(Ok(v)), Ok(())) => Ok(v),
            (_, Err(e)) => Err(e.shared("commit failed")),
            (None, Ok(())) => Err(DbError::Task("job never ran".into())),
        };
        let _ = self.reply.send(out);
    }
}

/// The handle of the writer thread; cheap to clone. The thread ends when the
/// last handle is dropped, after finishing what was queued.
#[derive(Clone)]
pub(crate) struct Writer {
    jobs: mpsc::Sender<Box<dyn Job>>,
}

impl Writer {
    /// Starts the writer thread on `conn`.
    pub(crate) fn spawn(conn: Connection) -> std::io::Result<Writer> {
        let (tx, rx) = mpsc::channel(QUEUE);
        std::thread::Builder::new()
            .name("filestore-db-writer".into())
            .spawn(move || writer_loop(conn, rx))?;
        Ok(Writer { jobs: tx })
    }

    /// Runs `f` in the next group commit; answers once it is durable.
    /// `small`: `f` changes a few rows only (see the module's note).
    pub(crate) async fn write<T, F>(&self, small: bool, f: F) -> Result<T, DbError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, DbError> + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let job = Box::new(Typed {
            f: Some(f),
            small,
            out: None,
            reply,
        });
        self.jobs
            .send(job)
            .await
            .map_err(|_| DbError::Task("the database writer has stopped".into()))?;
        answer
            .await
            .map_err(|_| DbError::Task("the database writer dropped a job".into()))?
    }
}

fn writer_loop(mut conn: Connection, mut rx: mpsc::Receiver<Box<dyn Job>>) {
    let mut batch: Vec<Box<dyn Job>> = Vec::with_capacity(MAX_BATCH);
    let mut in_memory = false;
    while let Some(first) = rx.blocking_recv() {
        batch.push(first);
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let small = batch.iter().all(|j| j.small());
        if let Err(e) = journal_in_memory(&conn, &mut in_memory, small) {
            // The batch runs with the journal where it was: slower, or a
            // little more memory, never a failed job.
            tracing::warn!(error = %e, "could not move the savepoint journal");
        }
        let committed = run_batch(&mut conn, &mut batch);
        for job in batch.drain(..) {
            job.finish(committed.as_ref().copied());
        }
    }
}

/// Keeps savepoint journals in memory (`small`) or in a file that SQLite
/// spills to past 64 KiB, as the next batch needs (read at its `BEGIN`).
/// Changing `temp_store` drops TEMP tables and views: the writer's
/// connection must never make any.
fn journal_in_memory(conn: &Connection, now: &mut bool, small: bool) -> Result<(), DbError> {
    if *now != small {
        conn.execute_batch(if small {
            "PRAGMA temp_store = MEMORY"
        } else {
            "PRAGMA temp_store = DEFAULT"
        })?;
        *now = small;
    }
    Ok(())
}

/// Runs one statement of the batch's own (prepared once, then cached).
fn exec(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([]).map(|_| ())
}

fn run_batch(conn: &mut Connection, batch: &mut [Box<dyn Job>]) -> Result<(), DbError> {
    exec(conn, "BEGIN IMMEDIATE")?;
    for job in batch.iter_mut() {
        let step = exec(conn, "SAVEPOINT job").and_then(|()| {
            if !job.run(conn) {
                exec(conn, "ROLLBACK TO job")?;
            }
            exec(conn, "RELEASE job")
        });
        if let Err(e) = step {
            let _ = exec(conn, "ROLLBACK");
            return Err(e.into());
        }
    }
    if let Err(e) = exec(conn, "COMMIT") {
        let _ = exec(conn, "ROLLBACK");
        return Err(e.into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn writer() -> (tempfile::TempDir, Writer, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("w.db");
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t (v INTEGER UNIQUE);")
            .unwrap();
        (dir, Writer::spawn(conn).unwrap(), path)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failed_job_rolls_back_alone_and_concurrent_jobs_commit() {
        let (_dir, w, path) = writer();
        let mut tasks = Vec::new();
        for i in 0..200 {
            let w = w.clone();
            tasks.push(tokio::spawn(async move {
                // Every tenth job writes a row and then fails: its row must
                // go, whether its journal is in memory (small) or not.
                w.write(i % 3 == 0, move |c| {
                    c.execute("INSERT INTO t (v) VALUES (?1)", [i])?;
                    if i % 10 == 0 {
                        return Err(DbError::Invalid("refused".into()));
                    }
                    Ok(i)
                })
                .await
            }));
        }
        let mut ok = 0;
        for t in tasks {
            match t.await.unwrap() {
                Ok(_) => ok += 1,
                Err(DbError::Invalid(m)) => assert_eq!(m, "refused"),
                Err(e) => panic!("unexpected {e}"),
            }
        }
        assert_eq!(ok, 180);
        let n: i64 = Connection::open(&path)
            .unwrap()
            .query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 180);
    }

    #[tokio::test]
    async fn a_failed_commit_keeps_its_kind_for_every_job() {
        let full = DbError::DiskFull("database or disk is full".into());
        let e = full.shared("commit failed");
        assert!(matches!(e, DbError::DiskFull(_)), "{e:?}");
        assert!(e.to_string().contains("commit failed"));
        let gone = DbError::Pool("closed".into()).shared("commit failed");
        assert!(matches!(gone, DbError::Pool(_)));
        let other = DbError::Invalid("x".into()).shared("commit failed");
        assert!(matches!(other, DbError::Task(_)));
    }

    #[tokio::test]
    async fn a_panicking_job_is_an_error_and_the_writer_lives_on() {
        let (_dir, w, _) = writer();
        let r: Result<(), _> = w.write(false, |_| panic!("boom")).await;
        assert!(matches!(r, Err(DbError::Task(_))));
        let v = w
            .write(
                false,
                |c| Ok(c.execute("INSERT INTO t (v) VALUES (1)", [])?),
            )
            .await
            .unwrap();
        assert_eq!(v, 1);
    }

    /// The journal's place, as a job sees it: 2 is `MEMORY`, 0 the default.
    async fn temp_store(w: &Writer, small: bool) -> i64 {
        w.write(small, |c| {
            Ok(c.query_row("PRAGMA temp_store", [], |r| r.get::<_, i64>(0))?)
        })
        .await
        .unwrap()
    }

    #[tokio::test]
    async fn only_batches_of_small_jobs_keep_their_journal_in_memory() {
        let (_dir, w, _) = writer();
        assert_eq!(temp_store(&w, true).await, 2);
        assert_eq!(temp_store(&w, false).await, 0);
        assert_eq!(temp_store(&w, true).await, 2);
        // A large job among small ones: the whole batch keeps the file.
        // The writer is held by a first job until the three are queued, so
        // they make one batch.
        let (release, held) = std::sync::mpsc::channel::<()>();
        let (started, running) = tokio::sync::oneshot::channel::<()>();
        let hold = {
            let w = w.clone();
            tokio::spawn(async move {
                w.write(true, move |_| {
                    let _ = started.send(());
                    Ok(held.recv().ok())
                })
                .await
            })
        };
        running.await.unwrap();
        let three = {
            let w = w.clone();
            tokio::spawn(async move {
                tokio::join!(
                    temp_store(&w, true),
                    temp_store(&w, false),
                    temp_store(&w, true)
                )
            })
        };
        // The first job is running (taken off the queue), the three queued.
        while w.jobs.capacity() != QUEUE - 3 {
            tokio::task::yield_now().await;
        }
        release.send(()).unwrap();
        hold.await.unwrap().unwrap();
        assert_eq!(three.await.unwrap(), (0, 0, 0));
    }
}
