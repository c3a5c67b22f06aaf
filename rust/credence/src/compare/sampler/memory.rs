//! Whether the draws a run asks for fit in memory, checked before anything is allocated
//! through the one resource guard ([`crate::limits::memory`]).

use crate::error::Result;

/// Copies of the draws alive at once: the chains' own, the fit's, and one quantity's columns
/// while it is summarised (the sampler statistics count with the first).
const COPIES: u128 = 3;

/// The fewest kept draws per chain a fit takes (diagnostics split chains in half).
const MIN_DRAWS: u128 = 4;

/// Checks that `chains` x `draws` kept draws of `outputs` quantities (and their sampler
/// statistics of `stats_bytes` each) fit in memory; the error names the draws per chain that
/// would.
pub(crate) fn check(chains: usize, draws: u64, outputs: usize, stats_bytes: usize) -> Result<()> {
    let per_draw = outputs as u128 * 8 + stats_bytes as u128;
    // Chains that would not fit even with the fewest draws a fit takes are the chains' fault.
    let fewest = COPIES * MIN_DRAWS * per_draw;
    crate::limits::memory("chains", chains as u64, fewest, 0, &format!("chains of {MIN_DRAWS} draws"))?;
    let what = format!("draws per chain of {chains} chains x {outputs} quantities");
    crate::limits::memory("draws", draws, COPIES * chains as u128 * per_draw, 0, &what)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_billion_chains_are_the_chains_fault_not_the_draws() {
        if let Err(e) = check(1_000_000_000, 4, 1_000, 48) {
            assert!(e.to_string().contains("chains = 1000000000"), "{e}");
        }
    }

    #[test]
    fn a_billion_draws_of_a_small_model_do_not_fit() {
        assert!(check(4, 1000, 10, 48).is_ok());
        let e = check(4, 1_000_000_000, 20, 48);
        assert!(e.is_err() || crate::limits::memory_limit().is_none());
        if let Err(e) = e {
            assert!(e.to_string().contains("draws = 1000000000") && e.to_string().contains("at most"), "{e}");
        }
    }
}
