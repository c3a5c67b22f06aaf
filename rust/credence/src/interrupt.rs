//! A request from outside to stop long work (a fit's chains, a plan's simulated fits), and the
//! threads such work runs on.
//!
//! The faces set the request (the R package when the user presses Ctrl-C: R's API may only be
//! called from R's main thread, so the work runs on another thread and is told to stop through
//! this flag); the samplers check it once per iteration and return [`Error::Interrupted`]. The
//! flag is process-wide: one face's call at a time uses it, and clears it before it starts.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{Error, Result};

static STOP: AtomicBool = AtomicBool::new(false);

/// Asks the running work to stop: its samplers return [`Error::Interrupted`] at their next
/// iteration.
pub fn request() {
    STOP.store(true, Ordering::Relaxed);
}

/// Withdraws the request (before new work starts, so an old request does not stop it).
pub fn clear() {
    STOP.store(false, Ordering::Relaxed);
}

/// Whether a stop has been requested.
pub fn requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// [`Error::Interrupted`] when a stop has been requested; the check of every iteration.
pub fn check() -> Result<()> {
    if requested() { Err(Error::Interrupted) } else { Ok(()) }
}

thread_local! {
    /// Set on the thread that runs [`on_threads`]' work while it runs: there a fit's chains
    /// share the pool's threads, rather than running one after another as inside a rayon task.
    static POOL_TOP: Cell<bool> = const { Cell::new(false) };
}

/// Runs `work` with `threads` threads for everything parallel in it (rayon's tasks and the
/// chains of a fit); `None` runs it on the calling thread with rayon's global pool (all cores).
/// Results depend on the data and the seeds only, never on the number of threads.
pub fn on_threads<T: Send>(threads: Option<usize>, work: impl FnOnce() -> T + Send) -> Result<T> {
    let Some(n) = threads else { return Ok(work()) };
    if n == 0 {
        return Err(Error::argument("cores", n, "a whole number of threads >= 1"));
    }
    crate::limits::at_most("cores", n as u64, crate::limits::MAX_THREADS)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build()
        .map_err(|e| Error::argument("cores", n, format!("a thread count rayon can start ({e})")))?;
    Ok(pool.install(|| {
        let before = POOL_TOP.replace(true);
        let out = work();
        POOL_TOP.set(before);
        out
    }))
}

/// Whether the calling thread runs [`on_threads`]' work itself (not a task inside it).
pub(crate) fn at_pool_top() -> bool {
    POOL_TOP.get()
}
