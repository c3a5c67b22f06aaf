//! Simulation-based calibration (Talts, Betancourt, Simpson, Vehtari & Gelman 2018): draw
//! parameters from the prior, data from the model, fit, and record the rank of each true value
//! among thinned posterior draws. For a correct sampler and model code the ranks are uniform.

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use statrs::function::gamma::checked_gamma_ur;

use crate::compare::fit::across::{AcrossFitOptions, fit_across};
use crate::compare::fit::{Fit, FitOptions, build_model, fit};
use crate::compare::model::across::design::AcrossDesign;
use crate::compare::model::across::{AcrossModel, AcrossOptions};
use crate::compare::model::collapsed::Geometry;
use crate::compare::model::design::Design;
use crate::compare::model::{Family, Posterior};
use crate::compare::sampler::Sampler;
use crate::compare::sampler::nuts::{NutsSettings, stream_seed};
use crate::error::{Error, Result};

/// A quantity whose calibration is checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum SbcQuantity {
    /// A reported parameter by name, e.g. `sigma[A]`.
    Param(String),
    /// The difference of two reported parameters, e.g. mu\[A\] - mu\[B\].
    Difference(String, String),
    /// The rank (1 = lowest) of the first parameter among all of them, e.g. of mu\[A\] among
    /// mu\[A\], mu\[B\], mu\[C\]: the rank posterior's calibration
    /// ([`crate::compare::Fit::rank_posterior`]). A discrete quantity: draws equal to the true
    /// rank count below it with a uniformly drawn share (Talts et al. 2018, section 4.1), so its
    /// ranks are uniform too.
    Rank(Vec<String>),
}

impl SbcQuantity {
    fn label(&self) -> String {
        match self {
            SbcQuantity::Param(p) => p.clone(),
            SbcQuantity::Difference(a, b) => format!("{a} - {b}"),
            SbcQuantity::Rank(among) => format!("rank of {} among {}", among[0], among.len()),
        }
    }
}

/// Settings of a calibration run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SbcOptions {
    /// Number of simulated data sets.
    pub n_sims: usize,
    /// Posterior draws kept per fit after even thinning (ranks take values 0..=thin_to).
    pub thin_to: usize,
    /// The sampler of each fit (its seed is replaced per simulation). The default, NUTS with
    /// 2 chains of 300 warmup + 250 draws, keeps the crate's extension rule (`max_draws`:
    /// longer chains while the fit is not clean), so calibration is checked with it.
    /// [`sbc_across`] takes NUTS only.
    pub sampler: Sampler,
    /// Seed of the whole run.
    pub seed: u64,
}

impl Default for SbcOptions {
    fn default() -> Self {
        Self {
            n_sims: 200,
            thin_to: 99,
            sampler: Sampler::Nuts(NutsSettings {
                chains: 2,
                warmup: 300,
                draws: 250,
                target_accept: 0.9,
                ..Default::default()
            }),
            seed: 1,
        }
    }
}

/// What a quantity reads from a row of parameters (beside its first parameter).
enum Pick {
    /// The parameter minus this one, if any.
    Value(Option<usize>),
    /// The parameter's rank among itself and these.
    Rank(Vec<usize>),
}

/// Ranks of every quantity in every simulation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SbcResult {
    /// Quantity labels.
    pub quantities: Vec<String>,
    /// ranks\[q\]\[s\]: rank of quantity q's true value in simulation s, in 0..=thin_to.
    pub ranks: Vec<Vec<usize>>,
    /// Draws per fit after thinning.
    pub thin_to: usize,
    /// Divergent transitions summed over all fits.
    pub divergences: usize,
}

/// One uniformity test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SbcTest {
    /// Quantity label.
    pub quantity: String,
    /// Pearson chi-square statistic of the binned ranks.
    pub chi_square: f64,
    /// Degrees of freedom (bins - 1).
    pub df: usize,
    /// Upper-tail p-value.
    pub p_value: f64,
}

impl SbcResult {
    /// Chi-square test of uniform ranks with `bins` equal bins (thin_to + 1 must be a multiple).
    pub fn chi_square(&self, bins: usize) -> Result<Vec<SbcTest>> {
        let values = self.thin_to + 1;
        if bins < 2 || !values.is_multiple_of(bins) {
            return Err(Error::argument("bins", bins, format!("a divisor of {values} that is at least 2")));
        }
        let width = values / bins;
        Ok(self
            .quantities
            .iter()
            .zip(&self.ranks)
            .map(|(q, ranks)| {
                let mut counts = vec![0.0; bins];
                ranks.iter().for_each(|&r| counts[r / width] += 1.0);
                let expected = ranks.len() as f64 / bins as f64;
                let stat = counts.iter().map(|c| (c - expected).powi(2) / expected).sum::<f64>();
                let df = bins - 1;
                // Q(df/2, stat/2); a statistic of exactly 0 (perfectly uniform) has p-value 1.
                let p_value = checked_gamma_ur(df as f64 / 2.0, stat / 2.0).unwrap_or(1.0);
                SbcTest { quantity: q.clone(), chi_square: stat, df, p_value }
            })
            .collect())
    }
}

/// Runs simulation-based calibration on designs shaped like `template` (its labels, pairing
/// and trials are kept; the response is simulated), in parallel over simulations, every fit
/// by `options.sampler` (NUTS or batched ChEES).
pub fn sbc(template: &Design, family: &Family, quantities: &[SbcQuantity], options: &SbcOptions) -> Result<SbcResult> {
    sbc_with(template, family, quantities, options, |design, seed| {
        let sampler = options.sampler.with_seed(seed);
        fit(design, &FitOptions { family: *family, sampler, higher_is_better: false })
    })
}

/// The calibration loop with any fitting function (design, seed) -> fit.
fn sbc_with(
    template: &Design,
    family: &Family,
    quantities: &[SbcQuantity],
    options: &SbcOptions,
    fit_one: impl Fn(&Design, u64) -> Result<Fit> + Sync,
) -> Result<SbcResult> {
    let model = build_model(template, family, None, Geometry::PerChain)?;
    calibrate(model.as_ref(), quantities, options, |y, seed| {
        let f = fit_one(&template.with_response(y)?, seed)?;
        Ok((f.rows().concat(), f.diagnostics().divergences))
    })
}

/// Runs simulation-based calibration of the across-data-sets model on designs shaped like
/// `template` (its data sets, methods and realizations are kept; the response is simulated),
/// every fit by NUTS with `options.sampler` (seed replaced per simulation).
pub fn sbc_across(
    template: &AcrossDesign,
    model_options: &AcrossOptions,
    quantities: &[SbcQuantity],
    options: &SbcOptions,
) -> Result<SbcResult> {
    if model_options.method_effects == crate::compare::MethodEffects::Flat {
        return Err(Error::argument(
            "method effects",
            "flat",
            "a proper prior (pooled): calibration draws the truth from the prior",
        ));
    }
    let model = AcrossModel::new(template, *model_options)?;
    calibrate(&model, quantities, options, |y, seed| {
        let Sampler::Nuts(sampler) = options.sampler.with_seed(seed) else {
            return Err(Error::argument("sampler", "chees", "NUTS (the across model samples by NUTS)"));
        };
        // The template's resolved level prior for every fit: the one the truth was drawn from.
        let o = AcrossFitOptions { model: model.options(), sampler, higher_is_better: false };
        let f = fit_across(&template.with_response(y)?, &o)?;
        Ok((f.rows().into_iter().flatten().copied().collect(), f.diagnostics().divergences))
    })
}

/// The calibration loop: `fit_one(y, seed)` fits simulated responses and returns its draws'
/// rows of the model's outputs, flattened, with its divergences.
fn calibrate(
    model: &dyn Posterior,
    quantities: &[SbcQuantity],
    options: &SbcOptions,
    fit_one: impl Fn(Vec<f64>, u64) -> Result<(Vec<f64>, usize)> + Sync,
) -> Result<SbcResult> {
    if options.thin_to == 0 || options.n_sims == 0 {
        return Err(Error::argument(
            "SBC size",
            format!("{} sims x {} draws", options.n_sims, options.thin_to),
            "both >= 1",
        ));
    }
    let names: Vec<String> = model.outputs().iter().map(|o| o.name.clone()).collect();
    let index = |n: &str| {
        names
            .iter()
            .position(|x| x == n)
            .ok_or_else(|| Error::argument("SBC quantity", n, format!("one of {}", names.join(", "))))
    };
    // (parameter, parameter subtracted) or (parameter, the others it is ranked among).
    let picks: Vec<(usize, Pick)> = quantities
        .iter()
        .map(|q| match q {
            SbcQuantity::Param(p) => Ok((index(p)?, Pick::Value(None))),
            SbcQuantity::Difference(a, b) => Ok((index(a)?, Pick::Value(Some(index(b)?)))),
            SbcQuantity::Rank(among) if among.len() >= 2 => {
                Ok((index(&among[0])?, Pick::Rank(among[1..].iter().map(|n| index(n)).collect::<Result<_>>()?)))
            }
            SbcQuantity::Rank(among) => Err(Error::argument("SBC rank", among.join(", "), "two or more parameters")),
        })
        .collect::<Result<_>>()?;
    let value = |row: &[f64], (a, pick): &(usize, Pick)| match pick {
        Pick::Value(b) => row[*a] - b.map_or(0.0, |b| row[b]),
        Pick::Rank(others) => 1.0 + others.iter().filter(|&&j| row[j] < row[*a]).count() as f64,
    };
    let per_sim: Vec<Result<(Vec<usize>, usize)>> = (0..options.n_sims)
        .into_par_iter()
        .map(|s| {
            let mut rng = ChaCha8Rng::seed_from_u64(stream_seed(options.seed, s as u64));
            let truth = model.sample_prior(&mut rng);
            let y = model.simulate(&truth, &mut rng);
            let (flat, divergences) = fit_one(y, stream_seed(options.seed ^ 0x5bc, s as u64))?;
            let rows: Vec<&[f64]> = flat.chunks_exact(names.len()).collect();
            let step = rows.len() as f64 / options.thin_to as f64;
            let thinned: Vec<&[f64]> = (0..options.thin_to).map(|k| rows[(k as f64 * step) as usize]).collect();
            let ranks = picks
                .iter()
                .map(|p| {
                    let t = value(&truth, p);
                    let below = thinned.iter().filter(|row| value(row, p) < t).count();
                    // Ties (a discrete quantity's) take a uniform share: uniform ranks again.
                    let ties = thinned.iter().filter(|row| value(row, p) == t).count();
                    below + if ties > 0 { rng.random_range(0..=ties) } else { 0 }
                })
                .collect();
            Ok((ranks, divergences))
        })
        .collect();
    let mut ranks = vec![Vec::with_capacity(options.n_sims); picks.len()];
    let mut divergences = 0;
    for r in per_sim {
        let (sim_ranks, div) = r?;
        divergences += div;
        for (q, rank) in sim_ranks.into_iter().enumerate() {
            ranks[q].push(rank);
        }
    }
    Ok(SbcResult {
        quantities: quantities.iter().map(SbcQuantity::label).collect(),
        ranks,
        thin_to: options.thin_to,
        divergences,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chi_square_of_perfectly_uniform_ranks_is_zero() {
        let r =
            SbcResult { quantities: vec!["x".into()], ranks: vec![(0..100).collect()], thin_to: 99, divergences: 0 };
        let t = r.chi_square(10).unwrap();
        assert_eq!(t[0].chi_square, 0.0);
        assert!((t[0].p_value - 1.0).abs() < 1e-12);
        assert!(r.chi_square(7).is_err());
        // All ranks in one bin: p-value essentially 0.
        let bad = SbcResult { quantities: vec!["x".into()], ranks: vec![vec![0; 100]], thin_to: 99, divergences: 0 };
        assert!(bad.chi_square(10).unwrap()[0].p_value < 1e-10);
    }
}
