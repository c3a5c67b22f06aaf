//! What batched ChEES-HMC adds to a fit (nested R-hat, step size, trajectory length), and the
//! seam where many ChEES fits run at once: the CPU ([`CpuBatch`]) or a device.

use super::{CheesSummary, Fit, FitOptions, fit_many};
use crate::compare::diagnostics::nested_rhat::nested_rhat;
use crate::compare::model::design::Design;
use crate::compare::sampler::chees::{CheesRun, CheesSettings};
use crate::error::Result;

/// ChEES's record of a fit: its adaptation and the nested R-hat of every summarised quantity.
pub(super) fn record(fit: &Fit, run: &CheesRun, s: &CheesSettings) -> Result<CheesSummary> {
    let nested = fit
        .summary()
        .iter()
        .map(|p| {
            let draws = fit.draws(&p.name)?;
            let refs: Vec<&[f64]> = draws.iter().map(Vec::as_slice).collect();
            Ok((p.name.clone(), nested_rhat(&refs, s.chains_per_superchain)?))
        })
        .collect::<Result<Vec<_>>>()?;
    let worst = nested.iter().map(|x| x.1).filter(|r| !r.is_nan()).fold(f64::NAN, f64::max);
    Ok(CheesSummary {
        superchains: s.superchains,
        chains_per_superchain: s.chains_per_superchain,
        step_size: run.step_size,
        trajectory_length: run.trajectory_length,
        mean_leapfrog_steps: run.mean_leapfrog_steps,
        max_leapfrog_hits: run.max_leapfrog_hits,
        nested_rhat: nested,
        max_nested_rhat: worst,
        inv_mass: run.inv_mass.clone(),
    })
}

/// Where many fits run at once: the CPU ([`CpuBatch`], the reference) or a device
/// (`credence::backend::Batched`). What a plan ([`crate::compare::plan`]) fits its simulated
/// tables with; the seam keeps the comparison code free of the device code.
pub trait BatchFitter: Sync {
    /// Fits `designs` (with ChEES, design i on Philox design index i); results in input order.
    fn fit_batch(&self, designs: &[Design], options: &FitOptions) -> Result<Vec<Result<Fit>>>;
    /// Where designs shaped like `design` are fitted under `options`: `cpu`, or the device's
    /// name when it runs them.
    fn runs_on(&self, design: &Design, options: &FitOptions) -> String;
}

/// Batched fits on the CPU ([`fit_many`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuBatch;

impl BatchFitter for CpuBatch {
    fn fit_batch(&self, designs: &[Design], options: &FitOptions) -> Result<Vec<Result<Fit>>> {
        Ok(fit_many(designs, options))
    }

    fn runs_on(&self, _design: &Design, _options: &FitOptions) -> String {
        "cpu".into()
    }
}

/// Fits a batch again where ChEES left it short: every fit `again` selects (unclean ones, and
/// for the plan failed ones too) is replaced by `refit(i)`, a NUTS fit of design i, in
/// parallel. Returns the indices refitted, ascending. The one refit rule of the report's
/// batches ([`crate::backend::fit_many_refit_on`]) and of a plan's simulated fits.
pub(crate) fn refit_where(
    fits: &mut [Result<Fit>],
    again: impl Fn(&Result<Fit>) -> bool,
    refit: impl Fn(usize) -> Result<Fit> + Sync,
) -> Vec<usize> {
    use rayon::prelude::*;
    let chosen: Vec<usize> = (0..fits.len()).filter(|&i| again(&fits[i])).collect();
    let refits: Vec<(usize, Result<Fit>)> = chosen.par_iter().map(|&i| (i, refit(i))).collect();
    for (i, f) in refits {
        fits[i] = f;
    }
    chosen
}
