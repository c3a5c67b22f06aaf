//! What a face shows while a long fit or plan runs, in brms' manner: one line per tenth of the
//! work, e.g. `Sampling: 30% (2400/8000 iterations)`, once the work has run for
//! [`SHOW_AFTER`] (quick work shows nothing) or from the start when asked; slow work also
//! shows a line whenever [`HEARTBEAT`] has passed since the last one and the work has moved,
//! so a fit whose tenth takes minutes (ChEES on ten thousand methods) is never silent.

use std::time::{Duration, Instant};

/// How long work runs before its progress is shown (unless shown from the start).
pub const SHOW_AFTER: Duration = Duration::from_secs(1);

/// The longest silence between two lines of work that is moving.
pub const HEARTBEAT: Duration = Duration::from_secs(10);

/// The progress lines of one piece of work; the face feeds it the `(done, total)` reports of
/// the core's progress callback and prints the lines it returns.
#[derive(Debug, Clone)]
pub struct Progress {
    what: &'static str,
    unit: &'static str,
    start: Instant,
    always: bool,
    /// The tenth, total, done and time of the last line shown.
    last: Option<Shown>,
}

/// What the last line showed, and when.
#[derive(Debug, Clone, Copy)]
struct Shown {
    tenth: u64,
    total: u64,
    done: u64,
    at: Instant,
}

impl Progress {
    /// A fit's progress: iterations of all chains, warmup included (NUTS and ChEES report
    /// them). `always` shows it from the start.
    pub fn fit(always: bool) -> Self {
        Self { what: "Sampling", unit: "iterations", start: Instant::now(), always, last: None }
    }

    /// A plan's progress: its simulated fits.
    pub fn plan(always: bool) -> Self {
        Self { what: "Planning", unit: "simulated fits", ..Self::fit(always) }
    }

    /// An audit's progress: its fits of subsets.
    pub fn audit(always: bool) -> Self {
        Self { what: "Auditing", unit: "fits", ..Self::fit(always) }
    }

    /// A metric table's progress: the rows of its manifest.
    pub fn rows(always: bool) -> Self {
        Self { what: "Metrics", unit: "rows", ..Self::fit(always) }
    }

    /// The line to show for `done` of `total`, if any: at most one per tenth of the work (and
    /// one when the total changes, as when a fit that is not clean goes on), or after
    /// [`HEARTBEAT`] without one.
    pub fn line(&mut self, done: u64, total: u64) -> Option<String> {
        self.line_at(done, total, Instant::now())
    }

    /// [`Progress::line`] at the time `now`.
    fn line_at(&mut self, done: u64, total: u64, now: Instant) -> Option<String> {
        if total == 0 || (!self.always && now.duration_since(self.start) < SHOW_AFTER) {
            return None;
        }
        let done = done.min(total);
        let tenth = done * 10 / total;
        let quiet = |l: &Shown| {
            l.total == total && l.tenth >= tenth && (l.done >= done || now.duration_since(l.at) < HEARTBEAT)
        };
        if self.last.as_ref().is_some_and(quiet) {
            return None;
        }
        self.last = Some(Shown { tenth, total, done, at: now });
        Some(format!("{}: {}% ({done}/{total} {})", self.what, done * 100 / total, self.unit))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_tenth_and_none_for_quick_work() {
        let mut p = Progress::fit(true);
        let lines: Vec<String> = (0..=80).filter_map(|i| p.line(i * 100, 8000)).collect();
        assert_eq!(lines.len(), 11);
        assert_eq!(lines[0], "Sampling: 0% (0/8000 iterations)");
        assert_eq!(lines[3], "Sampling: 30% (2400/8000 iterations)");
        assert_eq!(lines[10], "Sampling: 100% (8000/8000 iterations)");
        // A longer run than planned shows its new total.
        assert_eq!(p.line(8100, 12000).as_deref(), Some("Sampling: 67% (8100/12000 iterations)"));
        assert_eq!(p.line(8200, 12000), None);
        assert_eq!(Progress::plan(true).line(5, 20).as_deref(), Some("Planning: 25% (5/20 simulated fits)"));
        // Work that has not run for SHOW_AFTER shows nothing unless asked.
        let mut quiet = Progress::fit(false);
        assert!((0..=10).all(|i| quiet.line(i, 10).is_none()));
        assert_eq!(Progress::fit(true).line(1, 0), None);
    }

    /// A slow tenth is not silent: a line after each HEARTBEAT once the work has moved, none
    /// while it stands still or within the heartbeat.
    #[test]
    fn slow_work_shows_a_line_per_heartbeat() {
        let mut p = Progress::fit(true);
        let t0 = p.start;
        let at = |s: u64| t0 + Duration::from_secs(s);
        assert_eq!(p.line_at(0, 1000, at(0)).as_deref(), Some("Sampling: 0% (0/1000 iterations)"));
        assert_eq!(p.line_at(3, 1000, at(5)), None);
        assert_eq!(p.line_at(5, 1000, at(11)).as_deref(), Some("Sampling: 0% (5/1000 iterations)"));
        assert_eq!(p.line_at(5, 1000, at(40)), None);
        assert_eq!(p.line_at(7, 1000, at(45)).as_deref(), Some("Sampling: 0% (7/1000 iterations)"));
        assert_eq!(p.line_at(100, 1000, at(46)).as_deref(), Some("Sampling: 10% (100/1000 iterations)"));
    }
}
