//! Whether the draws a run asks for fit in memory, checked before anything is allocated: a
//! request too large is a typed error, never an aborted process (in R it would take the
//! user's session with it).

use crate::error::{Error, Result};

/// Copies of the draws alive at once: the chains' own, the fit's, and one quantity's columns
/// while it is summarised (the sampler statistics count with the first).
const COPIES: u128 = 3;

/// Bytes the operating system says are available (`MemAvailable` of /proc/meminfo), `None`
/// where it does not say.
fn available() -> Option<u128> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u128 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Checks that `chains` x `draws` kept draws of `outputs` quantities (and their sampler
/// statistics of `stats_bytes` each) fit in the memory available; the error names the
/// setting, what the run needs and what there is.
pub(crate) fn check(chains: usize, draws: u64, outputs: usize, stats_bytes: usize) -> Result<()> {
    check_against(chains, draws, outputs, stats_bytes, available())
}

fn check_against(chains: usize, draws: u64, outputs: usize, stats_bytes: usize, avail: Option<u128>) -> Result<()> {
    let per_draw = outputs as u128 * 8 + stats_bytes as u128;
    let need = COPIES * chains as u128 * draws as u128 * per_draw;
    let Some(avail) = avail else { return Ok(()) };
    if need <= avail {
        return Ok(());
    }
    let most = avail / (COPIES * chains.max(1) as u128 * per_draw.max(1));
    let gib = |b: u128| b as f64 / (1u128 << 30) as f64;
    Err(Error::argument(
        "draws",
        draws,
        format!(
            "at most {most} per chain here: {chains} chains x {draws} draws x {outputs} quantities need \
             {:.1} GiB, and {:.1} GiB of memory are available",
            gib(need),
            gib(avail)
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_beyond_the_memory_is_an_error_naming_the_largest_that_fits() {
        let gib = 1u128 << 30;
        assert!(check_against(4, 1000, 10, 48, Some(gib)).is_ok());
        let e = check_against(4, 1_000_000_000, 10, 48, Some(gib)).unwrap_err().to_string();
        assert!(e.contains("draws") && e.contains("1000000000") && e.contains("at most 699050 per chain"), "{e}");
        // Without a figure from the system nothing is refused.
        assert!(check_against(4, u64::MAX, 10, 48, None).is_ok());
        // The real machine: a billion draws of a small model do not fit in 24 GiB.
        assert!(check(4, 1_000_000_000, 20, 48).is_err() || available().is_none());
    }
}
