//! Fits by batched ChEES-HMC: one design or many, each a [`Fit`] with ChEES's own diagnostics.

use std::time::Instant;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::{CheesSummary, Fit, FitOptions, assemble, prepare};
use crate::compare::diagnostics::nested_rhat::nested_rhat;
use crate::compare::model::Family;
use crate::compare::model::collapsed::Geometry;
use crate::compare::model::design::Design;
use crate::compare::sampler::chees::{ChainDevice, CheesSettings, run_chees_on};
use crate::compare::sampler::nuts::SamplerSettings;
use crate::error::Result;

/// Options of [`fit_chees`] and [`fit_many_chees`].
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct CheesOptions {
    /// Model family and its options.
    pub family: Family,
    /// Sampler settings.
    pub sampler: CheesSettings,
    /// Higher metric values are better (as in [`FitOptions`]).
    pub higher_is_better: bool,
}

/// A ChEES fit: the [`Fit`] (all its quantities and diagnostics work as for NUTS; its
/// `options().sampler` records chains, warmup, draws, seed and target acceptance) and what is
/// particular to ChEES.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheesFit {
    /// The fit.
    pub fit: Fit,
    /// Nested R-hat of every summarised quantity, in the order of [`Fit::summary`].
    pub nested_rhat: Vec<(String, f64)>,
    /// Adapted step size.
    pub step_size: f64,
    /// Adapted (unjittered) trajectory length T.
    pub trajectory_length: f64,
    /// Mean leapfrog steps per iteration after warmup.
    pub mean_leapfrog_steps: f64,
    /// Iterations whose step count was capped at `max_leapfrog`, warmup included.
    pub max_leapfrog_hits: usize,
    /// Adapted inverse mass matrix (its diagonal, on the unconstrained scale).
    pub inv_mass: Vec<f64>,
}

impl CheesFit {
    /// Largest nested R-hat over the summarised quantities (NaN ignored).
    pub fn max_nested_rhat(&self) -> f64 {
        self.nested_rhat.iter().map(|x| x.1).filter(|r| !r.is_nan()).fold(f64::NAN, f64::max)
    }
}

/// Fits one design by batched ChEES-HMC (design index 0 of the Philox layout, so this equals
/// the first result of [`fit_many_chees`]).
pub fn fit_chees(design: &Design, options: &CheesOptions) -> Result<CheesFit> {
    fit_indexed(design, options, 0)
}

/// Fits many designs by ChEES-HMC, in parallel over designs (design i uses Philox streams
/// with design index i); results in input order and independent of the thread count.
pub fn fit_many_chees(designs: &[Design], options: &CheesOptions) -> Vec<Result<CheesFit>> {
    designs.par_iter().enumerate().map(|(i, d)| fit_indexed(d, options, i as u32)).collect()
}

fn fit_indexed(design: &Design, options: &CheesOptions, data_set: u32) -> Result<CheesFit> {
    fit_indexed_on(design, options, data_set, None)
}

/// Like [`fit_indexed`], the transitions on `device` when given.
pub(crate) fn fit_indexed_on(
    design: &Design,
    options: &CheesOptions,
    data_set: u32,
    device: Option<&dyn ChainDevice>,
) -> Result<CheesFit> {
    let start = Instant::now();
    let s = options.sampler;
    s.validate()?;
    let mut fit_options = FitOptions {
        family: options.family,
        sampler: SamplerSettings {
            chains: s.chains(),
            warmup: s.warmup,
            draws: s.draws,
            seed: s.seed,
            target_accept: s.target_accept,
            walnuts: s.walnuts,
            ..Default::default()
        },
        higher_is_better: options.higher_is_better,
    };
    let prepared = prepare(design, &fit_options, None, Geometry::Pooled)?;
    let run = run_chees_on(prepared.model.as_ref(), &s, data_set, device)?;
    fit_options.sampler.warmup = run.warmup as u64;
    let mut fit = assemble(design, &fit_options, prepared, &run.chains, start);
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
    fit.set_chees(CheesSummary {
        superchains: s.superchains,
        chains_per_superchain: s.chains_per_superchain,
        step_size: run.step_size,
        trajectory_length: run.trajectory_length,
        mean_leapfrog_steps: run.mean_leapfrog_steps,
        max_leapfrog_hits: run.max_leapfrog_hits,
        nested_rhat: nested.clone(),
        max_nested_rhat: worst,
    });
    let out = CheesFit {
        fit: {
            if worst > 1.01 {
                fit.push_warning(format!("largest nested R-hat is {worst:.3} > 1.01: the superchains disagree"));
            }
            if run.max_leapfrog_hits > 0 {
                fit.push_warning(format!(
                    "{} iteration(s) were capped at {} leapfrog steps",
                    run.max_leapfrog_hits, s.max_leapfrog
                ));
            }
            fit
        },
        nested_rhat: nested,
        step_size: run.step_size,
        trajectory_length: run.trajectory_length,
        mean_leapfrog_steps: run.mean_leapfrog_steps,
        max_leapfrog_hits: run.max_leapfrog_hits,
        inv_mass: run.inv_mass,
    };
    Ok(out)
}

/// Where many ChEES fits run at once: the CPU ([`CpuBatch`], the reference) or a device
/// (`credence::backend::Batched`). What a plan ([`crate::compare::plan`]) fits its simulated
/// tables with; the seam keeps the comparison code free of the device code.
pub trait BatchFitter: Sync {
    /// Fits `designs` (design i on Philox design index i); results in input order.
    fn fit_batch(&self, designs: &[Design], options: &CheesOptions) -> Result<Vec<Result<CheesFit>>>;
    /// Where designs shaped like `design` are fitted under `options`: `cpu`, or the device's
    /// name when it runs them.
    fn runs_on(&self, design: &Design, options: &CheesOptions) -> String;
}

/// Batched ChEES fits on the CPU ([`fit_many_chees`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuBatch;

impl BatchFitter for CpuBatch {
    fn fit_batch(&self, designs: &[Design], options: &CheesOptions) -> Result<Vec<Result<CheesFit>>> {
        Ok(fit_many_chees(designs, options))
    }

    fn runs_on(&self, _design: &Design, _options: &CheesOptions) -> String {
        "cpu".into()
    }
}
