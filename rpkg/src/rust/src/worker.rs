//! Long core work (fits, plans) off R's main thread, so that R stays responsive: the work runs
//! on a worker thread, on the threads the user gave (`cores`), while the main thread, the only
//! one that may call R, prints its progress and checks for Ctrl-C every [`POLL`]. On Ctrl-C it
//! asks the core to stop (`credence::interrupt`), waits for the worker, and returns the core's
//! `interrupted` error, which R turns into an interrupt condition.

use std::sync::mpsc::{RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use credence::interrupt;
use credence::request::Progress;
use extendr_api::prelude::*;

use crate::{count, msg};

type R<T> = std::result::Result<T, String>;

unsafe extern "C" {
    /// `src/entrypoint.c`: 1 when the user has pressed Ctrl-C. R's check runs inside
    /// `R_ToplevelExec`, so R's jump ends there and never crosses a Rust frame.
    fn credence_interrupt_pending() -> std::os::raw::c_int;
}

/// How often the main thread checks for Ctrl-C.
const POLL: Duration = Duration::from_millis(100);

/// The threads from R's `cores` (`NULL`: all cores, rayon's global pool).
pub(crate) fn threads(cores: Nullable<f64>) -> R<Option<usize>> {
    cores.into_option().map(|c| count("cores", c).map(|c| c as usize)).transpose()
}

/// The progress to show from R's `progress` option: `NULL` once the work has run a while,
/// `TRUE` from the start, `FALSE` none. `make` is [`Progress::fit`] or [`Progress::plan`].
pub(crate) fn progress(option: Nullable<bool>, make: fn(bool) -> Progress) -> Option<Progress> {
    match option.into_option() {
        None => Some(make(false)),
        Some(true) => Some(make(true)),
        Some(false) => None,
    }
}

/// Runs `work` (given the progress callback to pass to the core) on a worker thread with
/// `threads` threads, printing `progress`' lines to R's stderr and stopping the work on Ctrl-C.
pub(crate) fn run<T: Send>(
    threads: Option<usize>,
    mut progress: Option<Progress>,
    work: impl FnOnce(&(dyn Fn(u64, u64) + Sync)) -> credence::Result<T> + Send,
) -> R<T> {
    interrupt::clear();
    let (report, reports) = channel::<(u64, u64)>();
    let joined = std::thread::scope(|scope| {
        let worker = scope.spawn(move || {
            let tell = move |done, total| {
                // Nobody listening only means the main thread has stopped printing.
                let _ = report.send((done, total));
            };
            interrupt::on_threads(threads, || work(&tell)).and_then(|out| out)
        });
        let mut polled = Instant::now();
        loop {
            match reports.recv_timeout(POLL) {
                Ok((done, total)) => {
                    if let Some(line) = progress.as_mut().and_then(|p| p.line(done, total)) {
                        reprintln!("{line}");
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                // The worker has finished (its callback, the last sender, is gone).
                Err(RecvTimeoutError::Disconnected) => break,
            }
            if polled.elapsed() >= POLL && !interrupt::requested() {
                polled = Instant::now();
                // SAFETY: called on R's main thread (this one), as R requires.
                if unsafe { credence_interrupt_pending() } != 0 {
                    interrupt::request();
                }
            }
        }
        worker.join()
    });
    let stopped = interrupt::requested();
    interrupt::clear();
    match joined {
        // Ctrl-C was pressed: R's interrupt is consumed, so it is reported even if the work
        // finished meanwhile.
        _ if stopped => Err(msg(credence::Error::Interrupted)),
        Ok(out) => out.map_err(msg),
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Err(format!("the core's worker thread panicked (a bug; please report it): {what}"))
        }
    }
}
