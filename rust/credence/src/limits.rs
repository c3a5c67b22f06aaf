//! The one resource guard every command and face uses: each size a user sets has a documented
//! upper bound ([`at_most`] with the constants below), and what a request would hold in memory
//! is estimated before anything is allocated ([`memory`]). A request beyond either is a typed
//! error naming the setting, the estimate and the limit, never an aborted process (in R it would
//! take the user's session with it) or a run that cannot end.

use crate::error::{Error, Result};

/// Reliability-diagram bins (`--bins`): far beyond any calibration estimate's resolution.
pub const MAX_BINS: u64 = 100_000;
/// Simulated experiments per number of realizations of a plan (`--sims`, `--plan-sims`): its
/// Monte Carlo error is then at most 0.0016.
pub const MAX_SIMS: u64 = 100_000;
/// Realizations of a planned experiment (`--r`, `--plan-r`): each one is a trained model.
pub const MAX_PLAN_REALIZATIONS: u64 = 10_000;
/// Realizations and training seeds of a study (`--realizations`, `--train-seeds`).
pub const MAX_STUDY_REPEATS: u64 = 100_000;
/// Jobs of one data set's study grid (sizes x methods x realizations x training seeds): each
/// trains a network, and the grid is listed in memory before it runs.
pub const MAX_STUDY_JOBS: u64 = 10_000_000;
/// Scale of the study methods' epochs (`--epoch-scale`).
pub const MAX_EPOCH_SCALE: f64 = 1_000.0;
/// Warmup iterations per chain (`--warmup`): not kept, so bounded by time, not memory.
pub const MAX_WARMUP: u64 = 1_000_000;
/// Bootstrap replicates of a quantile interval (`--replicates`).
pub const MAX_REPLICATES: u64 = 10_000_000;
/// Ordered pairs times draws of a summary that compares every pair (`--pairs all`): 1000
/// methods (999 000 pairs) over 4 x 800 draws take about 40 s on 2 cores; three times the
/// methods would take nine times as long.
pub const MAX_PAIR_DRAWS: u64 = 10_000_000_000;
/// Threads a face may ask for (R's `cores`): each one holds a stack, and more threads than
/// cores only add switching.
pub const MAX_THREADS: u64 = 1_024;
/// Environment variable that lowers the memory a request may plan to hold: bytes, or a number
/// with a `K`, `M` or `G` suffix (powers of 1024).
pub const MEMORY_ENV: &str = "CREDENCE_MAX_MEMORY";

/// Refuses `name = value` above `max` (the documented bound of that setting; a NaN value is
/// above every bound).
pub fn at_most<T: PartialOrd + std::fmt::Display>(name: &str, value: T, max: T) -> Result<()> {
    if value <= max {
        return Ok(());
    }
    Err(Error::argument(name, value, format!("at most {max} (credence::limits)")))
}

/// Refuses `name = value` when `value` units of `unit_bytes` each, plus `fixed_bytes`, exceed
/// the memory limit ([`memory_limit`]); `what` says what one unit is, for the message.
pub fn memory(name: &str, value: u64, unit_bytes: u128, fixed_bytes: u128, what: &str) -> Result<()> {
    memory_against(name, value, unit_bytes, fixed_bytes, what, memory_limit())
}

/// Bytes a request may plan to hold: the memory the operating system says is available
/// (`MemAvailable` of /proc/meminfo), or less with [`MEMORY_ENV`]; `None` where neither says.
pub fn memory_limit() -> Option<u128> {
    let env = std::env::var(MEMORY_ENV).ok().and_then(|v| parse_bytes(&v));
    let os = (|| {
        let text = std::fs::read_to_string("/proc/meminfo").ok()?;
        let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
        Some(line.split_whitespace().nth(1)?.parse::<u128>().ok()? * 1024)
    })();
    match (env, os) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn parse_bytes(v: &str) -> Option<u128> {
    let v = v.trim();
    let (num, shift) = match v.chars().last()?.to_ascii_uppercase() {
        'K' => (&v[..v.len() - 1], 10),
        'M' => (&v[..v.len() - 1], 20),
        'G' => (&v[..v.len() - 1], 30),
        _ => (v, 0),
    };
    Some(num.trim().parse::<u128>().ok()? << shift)
}

fn memory_against(name: &str, value: u64, unit: u128, fixed: u128, what: &str, limit: Option<u128>) -> Result<()> {
    let need = fixed.saturating_add(unit.saturating_mul(value as u128));
    let Some(limit) = limit else { return Ok(()) };
    if need <= limit {
        return Ok(());
    }
    let most = limit.saturating_sub(fixed) / unit.max(1);
    let gib = |b: u128| b as f64 / (1u128 << 30) as f64;
    Err(Error::argument(
        name,
        value,
        format!(
            "at most {most} here: {value} {what} need {:.1} GiB, and {:.1} GiB of memory may be used \
             (what is available, or less with {MEMORY_ENV})",
            gib(need),
            gib(limit)
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_size_beyond_its_bound_or_the_memory_is_an_error_naming_it() {
        assert!(at_most("sims", MAX_SIMS, MAX_SIMS).is_ok());
        let e = at_most("sims", 1_000_000_000, MAX_SIMS).unwrap_err().to_string();
        assert!(e.contains("sims = 1000000000") && e.contains("at most 100000"), "{e}");
        let gib = 1u128 << 30;
        assert!(memory_against("draws", 1000, 1000, 0, "draws", Some(gib)).is_ok());
        let e = memory_against("draws", u64::MAX, 1 << 20, 10, "draws of 1 MiB", Some(gib)).unwrap_err().to_string();
        assert!(e.contains("draws = 18446744073709551615") && e.contains("at most 1023 here"), "{e}");
        // Without a figure nothing is refused.
        assert!(memory_against("draws", u64::MAX, 8, 0, "x", None).is_ok());
        assert_eq!(parse_bytes("2G"), Some(2 << 30));
        assert_eq!(parse_bytes(" 512 m"), Some(512 << 20));
        assert_eq!(parse_bytes("1000"), Some(1000));
        assert_eq!(parse_bytes("lots"), None);
    }
}
