//! What a plan needs from its source: the worlds from a pilot fit's posterior or from stated
//! values, and the predictive-MDD approximation beside them.

use std::sync::Arc;

use super::world::{Simulations, World};
use super::{PlanOptions, PlanSource, Stated};
use crate::compare::diagnostics::clean::{CLEAN, beside};
use crate::compare::fit::Fit;
use crate::compare::model::design::Design;
use crate::compare::model::{Family, Likelihood};
use crate::error::{Error, Result};
use crate::limits;
use crate::special::{norm_cdf, norm_quantile};

/// What a plan needs from its source.
pub(crate) struct Setup {
    pub(super) methods: Vec<String>,
    pub(super) worlds: Vec<World>,
    pub(super) trials: Option<Vec<u64>>,
    /// Each method's share of realizations without a value in the pilot (failed trainings):
    /// the simulated tables lack it as often.
    pub(super) missing: Vec<f64>,
    pub(super) family: Family,
    pub(super) higher_is_better: bool,
    pub(super) target: Option<f64>,
    /// (MDD, detection probability) of the predictive approximation at R new realizations.
    pub(super) mdd: Box<dyn Fn(usize) -> Result<(f64, f64)> + Sync + 'static>,
    pub(super) source: &'static str,
}

impl Setup {
    /// A small table of the layout of this plan's tables.
    pub(super) fn sample_design(&self) -> Result<Design> {
        let sims = Simulations {
            methods: self.methods.clone(),
            trials: self.trials.clone(),
            tables: vec![(0..2).map(|i| self.methods.iter().map(|_| i as f64).collect()).collect()],
        };
        sims.design(0, 2)
    }

    pub(crate) fn new(source: PlanSource<'_>, options: &PlanOptions) -> Result<Self> {
        validate(options)?;
        match source {
            PlanSource::Pilot(fit) => Self::pilot(fit, options),
            PlanSource::Stated(stated) => Self::stated(stated, options),
        }
    }

    fn pilot(fit: &Fit, options: &PlanOptions) -> Result<Self> {
        // Worlds from a posterior the sampler did not explore would be a silent wrong number.
        if !fit.is_clean() {
            let d = fit.diagnostics();
            return Err(Error::argument(
                "pilot fit",
                format!(
                    "{} divergences, largest R-hat {}, smallest bulk-ESS {}",
                    d.divergences,
                    beside(fit.sampler_rhat(), CLEAN.rhat_max, 3),
                    beside(d.min_ess_bulk, CLEAN.ess_bulk_min, 0)
                ),
                format!(
                    "a clean fit (no divergence, R-hat <= {}, bulk-ESS >= {}) to draw the simulated worlds from",
                    CLEAN.rhat_max, CLEAN.ess_bulk_min
                ),
            ));
        }
        // The methods in their canonical order, so the simulated tables (whose draws follow the
        // order of the methods) depend on the pilot's content, not on the order of its rows.
        let canonical = fit.design().canonical();
        let all = canonical.groups();
        let methods = match &options.methods {
            None => all.to_vec(),
            Some(m) => {
                if let Some(x) = m.iter().find(|x| !all.contains(x)) {
                    return Err(Error::argument("methods", x, format!("one of the pilot's: {}", all.join(", "))));
                }
                m.clone()
            }
        };
        for x in [&options.a, &options.b] {
            if !methods.contains(x) {
                return Err(Error::argument("method", x, format!("one of {}", methods.join(", "))));
            }
        }
        let names = fit.names();
        let col = |name: &str| names.iter().position(|n| *n == name);
        let need = |name: String| col(&name).ok_or_else(|| Error::argument("pilot fit", name, "a fitted quantity"));
        let rows = fit.rows();
        if rows.is_empty() {
            return Err(Error::argument("pilot fit", "no draws", "a fit with draws"));
        }
        let sg = col("sigma_gamma");
        let picks: Vec<&[f64]> = (0..options.sims)
            .map(|s| rows[((s as f64 + 0.5) * rows.len() as f64 / options.sims as f64) as usize])
            .collect();
        // Each arm: the world of one pilot draw (a row of the fit's draws), and the trials.
        type WorldOf = Box<dyn Fn(&[f64]) -> World>;
        let (world, trials): (WorldOf, _) = match fit.options().family {
            Family::Gaussian(o) => {
                let mu: Vec<usize> = methods.iter().map(|m| need(format!("mu[{m}]"))).collect::<Result<_>>()?;
                let sigma: Vec<usize> = methods.iter().map(|m| need(format!("sigma[{m}]"))).collect::<Result<_>>()?;
                let nu = (o.likelihood == Likelihood::StudentT).then(|| need("nu".into())).transpose()?;
                let world = move |row: &[f64]| World::Gaussian {
                    mu: mu.iter().map(|&k| row[k]).collect(),
                    sigma: sigma.iter().map(|&k| row[k]).collect(),
                    sigma_gamma: sg.map_or(0.0, |k| row[k]),
                    nu: nu.map(|k| row[k]),
                };
                (Box::new(world), None)
            }
            Family::Paired(o) => {
                let shared = o.shared_variance();
                let mu: Vec<usize> = methods.iter().map(|m| need(format!("mu[{m}]"))).collect::<Result<_>>()?;
                let sigma_of = fit
                    .covariance_of_row(&methods)
                    .ok_or_else(|| Error::argument("pilot fit", "no covariance factor", "a paired fit's L[a,b]"))?;
                let k = methods.len();
                // The canonical design: the pool (and so the resampled shapes) follows the realizations' labels,
                // not the order of the table's rows.
                let shapes = whitened_residuals(&canonical, &methods).map(Arc::new);
                let world = move |row: &[f64]| {
                    let sigma = sigma_of(row);
                    World::Paired {
                        mu: mu.iter().map(|&c| row[c]).collect(),
                        chol: World::cholesky(&sigma, k),
                        shapes: shapes.clone(),
                        shared,
                    }
                };
                (Box::new(world), None)
            }
            Family::BetaBinomial(o) => {
                let p: Vec<usize> = methods.iter().map(|m| need(format!("p[{m}]"))).collect::<Result<_>>()?;
                let phi: Vec<usize> = if o.phi_per_method {
                    methods.iter().map(|m| need(format!("phi[{m}]"))).collect::<Result<_>>()?
                } else {
                    vec![need("phi".into())?; methods.len()]
                };
                let trials = pilot_trials(fit.design(), &methods);
                let per_cell = trials.clone();
                let world = move |row: &[f64]| World::BetaBinomial {
                    p: p.iter().map(|&k| row[k]).collect(),
                    phi: phi.iter().map(|&k| row[k]).collect(),
                    sigma_gamma: sg.map_or(0.0, |k| row[k]),
                    trials: per_cell.clone(),
                };
                (Box::new(world), Some(trials))
            }
        };
        let worlds = picks.iter().map(|row| world(row)).collect();
        let pilot = fit.clone();
        let (a, b, power) = (options.a.clone(), options.b.clone(), options.power);
        let missing = pilot_missing(fit.design(), &methods);
        Ok(Self {
            methods,
            worlds,
            trials,
            missing,
            family: fit.options().family,
            higher_is_better: fit.options().higher_is_better,
            target: fit.target(),
            mdd: Box::new(move |r| pilot.mdd(&a, &b, power, r as f64).map(|m| (m.mdd, m.detection_probability))),
            source: "pilot",
        })
    }

    fn stated(s: &Stated, options: &PlanOptions) -> Result<Self> {
        match s.family {
            Family::Gaussian(o) if o.likelihood == Likelihood::Normal => {}
            Family::Paired(_) => {}
            _ => {
                return Err(Error::argument(
                    "family",
                    "beta-binomial or Student-t",
                    "the paired model or the additive one with a Normal likelihood for a plan from stated values",
                ));
            }
        }
        if !s.effect.is_finite() {
            return Err(Error::argument("effect", s.effect, "a finite number"));
        }
        for (name, v) in [("sigma_a", s.sigma_a), ("sigma_b", s.sigma_b)] {
            // Its square (a variance) must be finite too: 1e308 would simulate infinite values.
            if !(v > 0.0 && (v * v).is_finite()) {
                return Err(Error::argument(name, v, "a finite sd > 0 whose square is finite (below 1e154)"));
            }
        }
        if !(s.sigma_gamma >= 0.0 && (s.sigma_gamma * s.sigma_gamma).is_finite()) {
            return Err(Error::argument("sigma_gamma", s.sigma_gamma, "a finite sd >= 0"));
        }
        if options.methods.as_ref().is_some_and(|m| m.len() != 2 || !m.contains(&options.a) || !m.contains(&options.b))
        {
            return Err(Error::argument("methods", "a subset", "only A and B in a plan from stated values"));
        }
        // A at 0 and B at the gap, in the direction in which A is better.
        let mu_b = if s.higher_is_better { -s.effect } else { s.effect };
        let world = match s.family {
            // The same two methods as one normal draw per realization: the shared realization
            // effect is their covariance.
            Family::Paired(o) => {
                let g2 = s.sigma_gamma.powi(2);
                let sigma = [s.sigma_a.powi(2) + g2, g2, g2, s.sigma_b.powi(2) + g2];
                World::Paired {
                    mu: vec![0.0, mu_b],
                    chol: World::cholesky(&sigma, 2),
                    shapes: None,
                    shared: o.shared_variance(),
                }
            }
            _ => World::Gaussian {
                mu: vec![0.0, mu_b],
                sigma: vec![s.sigma_a, s.sigma_b],
                sigma_gamma: s.sigma_gamma,
                nu: None,
            },
        };
        let (effect, var, power) = (s.effect, s.sigma_a.powi(2) + s.sigma_b.powi(2), options.power);
        let effective = match s.family {
            Family::Paired(o) => o,
            _ => crate::compare::PairedOptions::default(),
        };
        Ok(Self {
            methods: vec![options.a.clone(), options.b.clone()],
            worlds: vec![world; options.sims],
            trials: None,
            missing: vec![0.0; 2],
            family: s.family,
            higher_is_better: s.higher_is_better,
            target: None,
            mdd: Box::new(move |r| {
                let sd = (var / effective.effective_realizations(r as f64)).sqrt();
                Ok((norm_quantile(power) * sd, norm_cdf(effect.abs() / sd)))
            }),
            source: "stated",
        })
    }
}

/// The fewest complete realizations from which a paired pilot's new tables resample its
/// whitened residuals instead of drawing normal ones: below, the pilot shows too little of its
/// shape (and with no more realizations than methods the whitening is not defined).
pub(crate) const PLAN_RESAMPLE_MIN: usize = 30;

/// The pilot's realizations with every one of `methods`, centred and whitened by the Cholesky
/// factor of their sample covariance, scaled by sqrt(n / (n - 1)) so that drawing them with
/// replacement gives covariance I: the shapes of the new realizations. `None` with fewer than
/// [`PLAN_RESAMPLE_MIN`] such realizations or a singular covariance.
pub(super) fn whitened_residuals(design: &Design, methods: &[String]) -> Option<Vec<Vec<f64>>> {
    let k = methods.len();
    let cols: Vec<usize> = methods.iter().map(|m| design.group_index(m)).collect::<Option<_>>()?;
    let mut cells = vec![vec![f64::NAN; k]; design.n_pairs()];
    for j in 0..design.n_obs() {
        if let Some(c) = cols.iter().position(|&g| g == design.group()[j]) {
            cells[design.pair()[j]][c] = design.y()[j];
        }
    }
    let rows: Vec<Vec<f64>> = cells.into_iter().filter(|r| r.iter().all(|v| v.is_finite())).collect();
    let n = rows.len();
    if n < PLAN_RESAMPLE_MIN || n <= k {
        return None;
    }
    let mean: Vec<f64> = (0..k).map(|c| rows.iter().map(|r| r[c]).sum::<f64>() / n as f64).collect();
    let mut cov = vec![0.0; k * k];
    for r in &rows {
        for a in 0..k {
            for b in 0..k {
                cov[a * k + b] += (r[a] - mean[a]) * (r[b] - mean[b]) / (n as f64 - 1.0);
            }
        }
    }
    let l = World::cholesky(&cov, k);
    if l.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let scale = (n as f64 / (n as f64 - 1.0)).sqrt();
    Some(
        rows.iter()
            .map(|r| {
                let mut z: Vec<f64> = (0..k).map(|c| r[c] - mean[c]).collect();
                for a in 0..k {
                    let s: f64 = (0..a).map(|b| l[a * k + b] * z[b]).sum();
                    z[a] = (z[a] - s) / l[a * k + a];
                }
                z.iter().map(|v| v * scale).collect()
            })
            .collect(),
    )
}

/// Each method's share of the pilot's realizations on which it has no value (0 for an
/// unpaired pilot, whose rows are not realizations).
pub(super) fn pilot_missing(design: &Design, methods: &[String]) -> Vec<f64> {
    let r = design.n_pairs();
    methods
        .iter()
        .map(|m| {
            let Some(g) = design.group_index(m).filter(|_| r > 0) else { return 0.0 };
            let mut seen = vec![false; r];
            design.group().iter().zip(design.pair()).filter(|(k, _)| **k == g).for_each(|(_, &p)| seen[p] = true);
            1.0 - seen.iter().filter(|&&x| x).count() as f64 / r as f64
        })
        .collect()
}

/// Each method's trials in the pilot, rounded mean (the simulated tables use them).
pub(super) fn pilot_trials(design: &Design, methods: &[String]) -> Vec<u64> {
    let trials = design.trials().unwrap_or(&[]);
    methods
        .iter()
        .map(|m| {
            let g = design.group_index(m).unwrap_or(usize::MAX);
            let (sum, n) = design
                .group()
                .iter()
                .zip(trials)
                .filter(|(k, _)| **k == g)
                .fold((0.0, 0.0), |(s, c), (_, t)| (s + t, c + 1.0));
            (sum / n).round().max(1.0) as u64
        })
        .collect()
}

pub(super) fn validate(o: &PlanOptions) -> Result<()> {
    if o.a == o.b {
        return Err(Error::argument("methods A and B", &o.a, "two different methods"));
    }
    if o.realizations.is_empty() {
        return Err(Error::argument("realizations", "none", "at least one number of realizations"));
    }
    if let Some(methods) = &o.methods
        && let Some((_, j)) = crate::error::first_repeat(methods, |_| true)
    {
        return Err(Error::argument("methods", &methods[j], "each method once (it is listed twice)"));
    }
    if let Some(r) = o.realizations.iter().find(|&&r| r < 2) {
        return Err(Error::argument("realizations", r, "at least 2 per experiment"));
    }
    for &r in &o.realizations {
        limits::at_most("realizations", r as u64, limits::MAX_PLAN_REALIZATIONS)?;
    }
    limits::at_most("sims", o.sims as u64, limits::MAX_SIMS)?;
    if o.sims < 2 {
        return Err(Error::argument("sims", o.sims, "at least 2 simulations"));
    }
    if !(o.power > 0.0 && o.power < 1.0) {
        return Err(Error::argument("power", o.power, "a probability in (0, 1)"));
    }
    o.decision.validate()
}
