//! Progress on stderr, behind a small trait so commands never care how it is
//! shown: indicatif bars on a terminal, one plain line per finished file when
//! stderr is not a terminal (or under `--json`, `CI=true`, `TERM=dumb`), and
//! nothing but errors under `--quiet`. Bars fit the terminal's width (their
//! message or bar takes what is left), and their rate and ETA count only
//! the bytes moved by this run, not those a resumed transfer found there.

use super::bar_style::{style, FILE_TEMPLATE, TOTAL_TEMPLATE};
use super::output::{shown, stderr_line};
use crate::client::Meter;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget};
use std::io::IsTerminal;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// How progress is shown for a whole command.
pub(crate) trait Progress: Send + Sync {
    /// Announces the work: `files` transfers of `bytes` bytes in total.
    fn plan(&self, files: u64, bytes: u64);
    /// A transfer of `size` bytes starts.
    fn start(&self, label: &str, size: u64) -> Arc<dyn Transfer>;
    /// An informational line (retries, summaries); dropped under `--quiet`.
    fn note(&self, line: &str);
    /// An error line; always shown.
    fn error(&self, line: &str);
    /// All transfers are over: take the bars down (before a summary).
    fn finish(&self) {}
    /// Runs `f` (which prints results on stdout) with the bars hidden, so
    /// the two never interleave on one terminal.
    fn suspend(&self, f: &mut dyn FnMut()) {
        f();
    }
}

/// One running transfer.
pub(crate) trait Transfer: Meter {
    /// It finished; `line` describes it for the plain-lines mode (an empty
    /// one: the command's result line says it all).
    fn done(&self, line: &str);
    /// It failed (its error is reported through [`Progress::error`]).
    fn failed(&self);
}

/// Which kind of progress to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Bars on a terminal.
    Bars,
    /// A plain line per finished file.
    Lines,
    /// Errors only.
    Quiet,
}

impl Mode {
    /// Picks the mode from the flags and the environment (`CI`, `TERM`,
    /// whether stderr is a terminal).
    pub(crate) fn detect(quiet: bool, json: bool) -> Mode {
        let env = |k: &str| std::env::var(k).unwrap_or_default();
        Mode::choose(
            quiet,
            json,
            ci_flag(&env("CI")),
            env("TERM") == "dumb",
            std::io::stderr().is_terminal(),
        )
    }

    /// The mode for these facts: nothing but errors under `--quiet`; bars
    /// only on a terminal and not under `--json`, `CI=true` or `TERM=dumb`;
    /// plain lines otherwise.
    // A decision table over five independent facts, each a plain yes or no.
    #[allow(clippy::fn_params_excessive_bools)]
    pub(crate) fn choose(
        quiet: bool,
        json: bool,
        ci: bool,
        term_dumb: bool,
        stderr_is_tty: bool,
    ) -> Mode {
        if quiet {
            Mode::Quiet
        } else if json || ci || term_dumb || !stderr_is_tty {
            Mode::Lines
        } else {
            Mode::Bars
        }
    }

    /// The progress implementation of this mode.
    pub(crate) fn build(self) -> Arc<dyn Progress> {
        match self {
            Mode::Bars => Arc::new(Bars::new()),
            Mode::Lines => Arc::new(Lines { quiet: false }),
            Mode::Quiet => Arc::new(Lines { quiet: true }),
        }
    }
}

/// Whether a `CI` value means "running in CI": set, and not `0` or `false`.
fn ci_flag(value: &str) -> bool {
    !matches!(
        value.trim().to_ascii_lowercase().as_str(),
        "" | "0" | "false"
    )
}

/// Plain lines on stderr (or nothing under `--quiet`).
struct Lines {
    quiet: bool,
}

impl Progress for Lines {
    fn plan(&self, _files: u64, _bytes: u64) {}

    fn start(&self, _label: &str, _size: u64) -> Arc<dyn Transfer> {
        Arc::new(LineTransfer { quiet: self.quiet })
    }

    fn note(&self, line: &str) {
        if !self.quiet {
            stderr_line(line);
        }
    }

    fn error(&self, line: &str) {
        stderr_line(line);
    }
}

struct LineTransfer {
    quiet: bool,
}

impl Meter for LineTransfer {
    fn add(&self, _n: u64) {}
    fn reset(&self) {}
}

impl Transfer for LineTransfer {
    fn done(&self, line: &str) {
        if !self.quiet && !line.is_empty() {
            stderr_line(line);
        }
    }
    fn failed(&self) {}
}

/// indicatif bars: a total bar when there are several files, and a bar per
/// active transfer.
struct Bars {
    multi: MultiProgress,
    total: std::sync::Mutex<Option<ProgressBar>>,
    /// Bytes the total bar found already there (resumed transfers).
    total_resumed: Arc<AtomicU64>,
    files: Arc<AtomicU64>,
    finished: Arc<AtomicU64>,
}

impl Bars {
    fn new() -> Self {
        Bars {
            multi: MultiProgress::with_draw_target(ProgressDrawTarget::stderr()),
            total: std::sync::Mutex::new(None),
            total_resumed: Arc::default(),
            files: Arc::new(AtomicU64::new(0)),
            finished: Arc::new(AtomicU64::new(0)),
        }
    }

    fn total(&self) -> Option<ProgressBar> {
        self.total.lock().map_or(None, |t| t.clone())
    }
}

impl Progress for Bars {
    fn plan(&self, files: u64, bytes: u64) {
        self.files.store(files, Ordering::Relaxed);
        if files > 1 {
            let bar = self.multi.add(
                ProgressBar::new(bytes).with_style(style(TOTAL_TEMPLATE, &self.total_resumed)),
            );
            bar.set_message(format!("0/{files} files"));
            bar.enable_steady_tick(std::time::Duration::from_millis(200));
            if let Ok(mut t) = self.total.lock() {
                *t = Some(bar);
            }
        }
    }

    fn start(&self, label: &str, size: u64) -> Arc<dyn Transfer> {
        let resumed: Arc<AtomicU64> = Arc::default();
        let bar = self
            .multi
            .add(ProgressBar::new(size).with_style(style(FILE_TEMPLATE, &resumed)));
        bar.set_message(shown(label).into_owned());
        Arc::new(BarTransfer {
            bar,
            resumed,
            total_resumed: self.total_resumed.clone(),
            total: self.total(),
            files: self.files.clone(),
            finished: self.finished.clone(),
        })
    }

    fn note(&self, line: &str) {
        let _ = self.multi.println(shown(line));
    }

    fn error(&self, line: &str) {
        if self.multi.println(shown(line)).is_err() {
            stderr_line(line);
        }
    }

    fn suspend(&self, f: &mut dyn FnMut()) {
        self.multi.suspend(f);
    }

    fn finish(&self) {
        if let Some(t) = self.total() {
            t.finish_and_clear();
        }
        let _ = self.multi.clear();
    }
}

impl Drop for Bars {
    fn drop(&mut self) {
        self.finish();
    }
}

struct BarTransfer {
    bar: ProgressBar,
    /// Bytes already there when this transfer started (not in its rate).
    resumed: Arc<AtomicU64>,
    total_resumed: Arc<AtomicU64>,
    total: Option<ProgressBar>,
    files: Arc<AtomicU64>,
    finished: Arc<AtomicU64>,
}

impl BarTransfer {
    fn close(&self) {
        self.bar.finish_and_clear();
        let n = self.finished.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(t) = &self.total {
            t.set_message(format!("{n}/{} files", self.files.load(Ordering::Relaxed)));
        }
    }
}

impl Meter for BarTransfer {
    fn add(&self, n: u64) {
        self.bar.inc(n);
        if let Some(t) = &self.total {
            t.inc(n);
        }
    }

    fn resumed(&self, n: u64) {
        self.resumed.fetch_add(n, Ordering::Relaxed);
        self.total_resumed.fetch_add(n, Ordering::Relaxed);
        self.add(n);
    }

    fn reset(&self) {
        if let Some(t) = &self.total {
            t.dec(self.bar.position());
        }
        // Starting over: what was found there is gone from the position.
        let found = self.resumed.swap(0, Ordering::Relaxed);
        self.total_resumed.fetch_sub(
            found.min(self.total_resumed.load(Ordering::Relaxed)),
            Ordering::Relaxed,
        );
        self.bar.set_position(0);
    }
}

impl Transfer for BarTransfer {
    fn done(&self, line: &str) {
        // A lone transfer says how it ended (several have the total bar).
        if self.total.is_none() && !line.is_empty() {
            self.bar.println(shown(line));
        }
        self.close();
    }

    fn failed(&self) {
        // Keep the total honest: a failed file's bytes will not arrive.
        if let Some(t) = &self.total {
            let missing = self
                .bar
                .length()
                .unwrap_or(0)
                .saturating_sub(self.bar.position());
            t.inc(missing);
        }
        self.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_combination_picks_the_right_mode() {
        let flags = [false, true];
        let mut seen = 0;
        for quiet in flags {
            for json in flags {
                for ci in flags {
                    for dumb in flags {
                        for tty in flags {
                            let want = if quiet {
                                Mode::Quiet
                            } else if tty && !json && !ci && !dumb {
                                Mode::Bars
                            } else {
                                Mode::Lines
                            };
                            let got = Mode::choose(quiet, json, ci, dumb, tty);
                            assert_eq!(
                                got, want,
                                "q={quiet} j={json} ci={ci} dumb={dumb} tty={tty}"
                            );
                            seen += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(seen, 32);
        // The cases docs/decisions.md ("Command line") spells out.
        assert_eq!(Mode::choose(false, false, false, false, true), Mode::Bars);
        assert_eq!(Mode::choose(false, false, false, false, false), Mode::Lines);
        assert_eq!(Mode::choose(true, false, false, false, true), Mode::Quiet);
        assert_eq!(Mode::choose(true, true, true, true, false), Mode::Quiet);
    }

    #[test]
    fn what_a_bar_found_there_leaves_with_a_restart() {
        let bars = Bars::new();
        let t = bars.start("x", 100);
        t.resumed(60);
        assert_eq!(bars.total_resumed.load(Ordering::Relaxed), 60);
        t.add(10);
        t.reset();
        t.add(5);
        drop(t);
        assert_eq!(bars.total_resumed.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn ci_values() {
        for on in ["true", "TRUE", "1", "yes"] {
            assert!(ci_flag(on), "{on}");
        }
        for off in ["", "0", "false", "False", " "] {
            assert!(!ci_flag(off), "{off:?}");
        }
    }
}
