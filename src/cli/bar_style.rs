//! The look of the progress bars: templates that fit the terminal's width
//! (the total's bar, or a file's label, takes what the rest leaves), and
//! `{rate}` and `{left}` (ETA) keys that count only the bytes this run
//! moved, not those a resumed transfer found already there.

use indicatif::{ProgressState, ProgressStyle};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The total bar: its bar takes the width the rest leaves (57 columns of
/// text at most around it).
pub(super) const TOTAL_TEMPLATE: &str = "{spinner} {msg:>11} [{wide_bar:.cyan/blue}] \
    {decimal_bytes}/{decimal_total_bytes} {rate} ETA {left}";
/// A file's bar: its label takes the width the rest leaves (59 columns).
pub(super) const FILE_TEMPLATE: &str = "  {wide_msg} [{bar:12}] {percent:>3}% \
    {decimal_bytes}/{decimal_total_bytes} {rate} ETA {left}";

/// Seconds of a transfer before its rate means something.
const RATE_AFTER: f64 = 0.25;

/// The bytes per second this run moved (position less what was `resumed`).
fn rate(state: &ProgressState, resumed: &AtomicU64) -> Option<f64> {
    per_second(
        state.pos(),
        resumed.load(Ordering::Relaxed),
        state.elapsed().as_secs_f64(),
    )
}

/// The rate of a transfer at `pos` after `secs`, of which `resumed` bytes
/// were there before it started; None too early to tell, or before a byte.
fn per_second(pos: u64, resumed: u64, secs: f64) -> Option<f64> {
    let moved = pos.saturating_sub(resumed);
    #[allow(clippy::cast_precision_loss)] // a rate, shown to 3 digits
    (secs >= RATE_AFTER && moved > 0).then(|| moved as f64 / secs)
}

/// A style whose `{rate}` and `{left}` (ETA) count this run's bytes only.
pub(super) fn style(template: &str, resumed: &Arc<AtomicU64>) -> ProgressStyle {
    let for_rate = resumed.clone();
    let for_left = resumed.clone();
    ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ")
        .with_key(
            "rate",
            move |s: &ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = match rate(s, &for_rate) {
                    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                    Some(r) => write!(w, "{}/s", crate::domain::units::human_bytes(r as u64)),
                    None => write!(w, "-"),
                };
            },
        )
        .with_key(
            "left",
            move |s: &ProgressState, w: &mut dyn std::fmt::Write| {
                let left = s.len().unwrap_or(0).saturating_sub(s.pos());
                let _ = match rate(s, &for_left) {
                    #[allow(
                        clippy::cast_possible_truncation,
                        clippy::cast_sign_loss,
                        clippy::cast_precision_loss
                    )]
                    Some(r) => write!(
                        w,
                        "{}",
                        super::format::span((left as f64 / r).ceil() as i64)
                    ),
                    None => write!(w, "-"),
                };
            },
        )
}

#[cfg(test)]
mod tests {
    use super::per_second;

    #[test]
    fn a_resumed_transfer_rates_only_what_this_run_moved() {
        // 900 MB found there, 10 MB sent in 2 s: 5 MB/s, not 455 MB/s.
        let r = per_second(910_000_000, 900_000_000, 2.0).unwrap();
        assert!((r - 5_000_000.0).abs() < 1.0, "{r}");
        assert_eq!(per_second(900_000_000, 900_000_000, 2.0), None);
        assert_eq!(per_second(1000, 0, 0.1), None, "too early to tell");
    }
}
