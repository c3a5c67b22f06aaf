//! Planning an experiment by simulation: how many realizations settle a comparison.
//!
//! The predictive MDD ([`Fit::mdd`]) answers "how many realizations?" with one normal
//! approximation. [`plan`] answers it the way a statistician would with unlimited time
//! (O'Hagan & Stevens' *assurance*): for each candidate number of realizations R,
//!
//! 1. draw the world: hyperparameters and method means from the pilot fit's posterior (one
//!    posterior draw per simulation, spread evenly over all kept draws), or stated values
//!    ([`Stated`], no pilot);
//! 2. simulate a new table of R realizations for the methods (new realization effects from
//!    sigma_gamma, new residuals from each method's sigma; for the beta-binomial new counts
//!    from p, phi and the pilot's trials);
//! 3. fit every simulated table with the same model as the pilot, batched ChEES-HMC on the
//!    chosen [`Backend`] (all simulated tables of all R, in batches of 256), and fit again by
//!    NUTS on the CPU the few tables whose batched fit is not clean (divergences, nested
//!    R-hat > 1.01 or bulk-ESS < 400: designs with one very precise method keep some ChEES
//!    fits unclean, where NUTS is clean, see benches/README.md);
//! 4. count the tables whose fit reaches the decision: P(A better than B | y) >= level, or
//!    with a region of practical equivalence eps, P(A better than B by more than eps | y) >=
//!    level ([`Decision`]).
//!
//! The assurance at R is that share, with its Monte Carlo error sqrt(a (1 - a) / S); the
//! smallest R of the grid whose assurance reaches the requested power is the plan. Simulation s
//! uses the same world and the same first realizations at every R (common random numbers, so
//! the curve is smooth in R), on its own seeded stream; the fits use Philox streams keyed by
//! the seed and the table's position: results depend on the inputs and the seed only, not on
//! the thread count, and equal the CPU's on the GPU up to the device's rounding.
//!
//! Assumptions (the issue leaves them open): a simulated table is analysed alone (a new
//! experiment, not pooled with the pilot); a pilot fit with divergences or R-hat > 1.01 is
//! refused (its draws are not the posterior); when more than a quarter of a batch of 256
//! simulated fits is unclean the NUTS refits are skipped (such worlds are hard for any
//! sampler and would only take long); fits still unclean after the NUTS refit count, and
//! are reported per R with the refits; fits that fail are left out of
//! the share and reported; with [`Stated`] values the world is fixed, so the assurance is the
//! classical power of the Bayesian decision.

use std::time::Instant;

use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rand_distr::Distribution;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::backend::{Backend, fit_many_chees_on};
use crate::compare::diagnostics::{ESS_MIN, RHAT_MAX};
use crate::compare::fit::{Fit, FitOptions, fit};
use crate::compare::model::design::Design;
use crate::compare::model::priors::standard_normal;
use crate::compare::model::{Family, GaussianOptions, Likelihood};
use crate::compare::sampler::chees::{CheesFit, CheesOptions, CheesSettings};
use crate::compare::sampler::nuts::SamplerSettings;
use crate::error::{Error, Result};
use crate::seeds::stream_seed;
use crate::special::{norm_cdf, norm_quantile};

/// When a simulated experiment counts as settled.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// Posterior probability that must be reached (default 0.95).
    pub level: f64,
    /// Region of practical equivalence: with `Some(eps)`, A must be better than B by more than
    /// eps with probability `level`; `None` asks only that A be better.
    pub rope: Option<f64>,
}

impl Default for Decision {
    fn default() -> Self {
        Self { level: 0.95, rope: None }
    }
}

impl Decision {
    fn validate(&self) -> Result<()> {
        if !(self.level > 0.0 && self.level < 1.0) {
            return Err(Error::argument("decision level", self.level, "a probability in (0, 1)"));
        }
        if let Some(eps) = self.rope
            && !(eps > 0.0 && eps.is_finite())
        {
            return Err(Error::argument("rope", eps, "a finite margin > 0"));
        }
        Ok(())
    }

    /// In words, e.g. `P(A better than B) >= 0.95`.
    pub fn describe(&self, a: &str, b: &str) -> String {
        match self.rope {
            None => format!("P({a} better than {b}) >= {}", self.level),
            Some(eps) => format!("P({a} better than {b} by more than {eps}) >= {}", self.level),
        }
    }
}

/// Superchains of a simulated fit by default: 6 x 4 chains instead of a single fit's 10 x 4.
/// Measured on 400 simulated fits (6 methods, R = 5..50, benches/README.md): the same
/// assurance to 0.01 at 64% of the cost; the 2% of fits it leaves unclean (against none) are
/// fitted again by NUTS. A 4-point curve of 1000 simulations each then takes 52 s on 2 cores.
pub const PLAN_SUPERCHAINS: usize = 6;

/// Options of [`plan`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanOptions {
    /// The method hoped to be better.
    pub a: String,
    /// The method it is compared with.
    pub b: String,
    /// Candidate numbers of realizations (each at least 2).
    pub realizations: Vec<usize>,
    /// Simulated experiments per number of realizations.
    pub sims: usize,
    /// When an experiment counts as settled.
    pub decision: Decision,
    /// The assurance the plan must reach (default 0.8).
    pub power: f64,
    /// Methods in the simulated tables (must include A and B); `None`: all of the pilot's.
    pub methods: Option<Vec<String>>,
    /// Sampler of the simulated fits (default: [`PLAN_SUPERCHAINS`] superchains; its seed is
    /// replaced by one derived from `seed` per batch of fits).
    pub sampler: CheesSettings,
    /// Where the simulated fits run.
    pub backend: Backend,
    /// Seed of the simulations and the fits.
    pub seed: u64,
}

impl Default for PlanOptions {
    fn default() -> Self {
        Self {
            a: String::new(),
            b: String::new(),
            realizations: vec![5, 10, 20, 50],
            sims: 1000,
            decision: Decision::default(),
            power: 0.8,
            methods: None,
            sampler: CheesSettings { superchains: PLAN_SUPERCHAINS, ..CheesSettings::default() },
            backend: Backend::Auto,
            seed: 1,
        }
    }
}

/// The world of a plan without a pilot study: two methods with a stated gap and spreads.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stated {
    /// How much better A is than B on the metric's scale (mu_B - mu_A when lower is better,
    /// mu_A - mu_B when higher is better).
    pub effect: f64,
    /// Residual sd of A's metric across realizations.
    pub sigma_a: f64,
    /// Residual sd of B's metric across realizations.
    pub sigma_b: f64,
    /// sd of the realization effect both methods share (0: none).
    pub sigma_gamma: f64,
    /// Higher metric values are better.
    pub higher_is_better: bool,
    /// The model the simulated tables are fitted with (Gaussian only).
    pub family: Family,
}

impl Default for Stated {
    fn default() -> Self {
        Self {
            effect: 0.0,
            sigma_a: 1.0,
            sigma_b: 1.0,
            sigma_gamma: 0.0,
            higher_is_better: false,
            family: Family::Gaussian(GaussianOptions::default()),
        }
    }
}

/// Where the worlds of a plan come from.
#[derive(Debug, Clone, Copy)]
pub enum PlanSource<'a> {
    /// A pilot fit: each simulation takes one posterior draw.
    Pilot(&'a Fit),
    /// Stated values (no pilot).
    Stated(&'a Stated),
}

/// The plan at one number of realizations.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PlanPoint {
    /// Realizations per simulated experiment.
    pub r: usize,
    /// Share of simulated experiments that reach the decision.
    pub assurance: f64,
    /// Monte Carlo standard error of the assurance, sqrt(a (1 - a) / fits).
    pub assurance_mcse: f64,
    /// Mean of P(A better than B | y) over the simulated experiments.
    pub expected_prob_better: f64,
    /// Simulated experiments fitted (failed fits excluded).
    pub fits: usize,
    /// Fits the batched sampler left unclean and NUTS fitted again.
    pub refit: usize,
    /// Fits still with divergences, R-hat > 1.01 or bulk-ESS < 400 after the NUTS refit
    /// (counted in the share).
    pub unclean: usize,
    /// Fits that failed (left out of the share).
    pub failed: usize,
    /// The predictive-MDD approximation at this R: MDD at the requested power.
    pub mdd: f64,
    /// The predictive-MDD approximation's detection probability Phi(|gap| / sigma_pred).
    pub mdd_detection_probability: f64,
}

/// The result of [`plan`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// The method hoped to be better.
    pub a: String,
    /// The method it is compared with.
    pub b: String,
    /// Methods in the simulated tables.
    pub methods: Vec<String>,
    /// `pilot` or `stated`.
    pub source: String,
    /// The decision rule.
    pub decision: Decision,
    /// The requested power.
    pub power: f64,
    /// Simulations per R.
    pub sims: usize,
    /// One point per R, in increasing R.
    pub points: Vec<PlanPoint>,
    /// Smallest R of the grid whose assurance reaches the power (`None`: none does).
    pub smallest_r: Option<usize>,
    /// Where the fits ran (`cpu` or `cuda`).
    pub backend: Backend,
    /// Seed.
    pub seed: u64,
    /// Wall-clock seconds.
    pub seconds: f64,
    /// Plain-language warnings (unclean or failed simulated fits, no R reaching the power).
    pub warnings: Vec<String>,
}

/// What the plan keeps of one simulated fit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Outcome {
    /// P(A better than B | y).
    pub prob_better: f64,
    /// The probability the decision compares with its level.
    pub decision_prob: f64,
    /// No divergence, R-hat and ESS within the limits.
    pub clean: bool,
    /// Fitted again by NUTS because the batched fit was not clean.
    pub refit: bool,
}

impl Outcome {
    /// Reads the outcome of a fit (with the comparison target already applied).
    pub(crate) fn of(fit: &Fit, a: &str, b: &str, decision: &Decision, clean: bool) -> Result<Self> {
        let prob_better = fit.prob_better(a, b)?.0;
        let decision_prob = match decision.rope {
            None => prob_better,
            Some(eps) => fit.prob_better_by(a, b, eps)?,
        };
        Ok(Self { prob_better, decision_prob, clean, refit: false })
    }

    fn of_nuts(fit: &Fit, a: &str, b: &str, decision: &Decision) -> Result<Self> {
        let d = fit.diagnostics();
        let clean = d.divergences == 0
            && (d.max_rhat.is_nan() || d.max_rhat <= RHAT_MAX)
            && (d.min_ess_bulk.is_nan() || d.min_ess_bulk >= ESS_MIN);
        Ok(Self { refit: true, ..Self::of(fit, a, b, decision, clean)? })
    }

    fn of_chees(c: &CheesFit, a: &str, b: &str, decision: &Decision, target: Option<f64>) -> Result<Self> {
        let fit = match target {
            Some(t) => c.fit.clone().with_target(t)?,
            None => c.fit.clone(),
        };
        let d = fit.diagnostics();
        let nested = c.max_nested_rhat();
        let clean = d.divergences == 0
            && (nested.is_nan() || nested <= RHAT_MAX)
            && (d.min_ess_bulk.is_nan() || d.min_ess_bulk >= ESS_MIN);
        Self::of(&fit, a, b, decision, clean)
    }
}

/// One simulated world: what generates a new table.
#[derive(Debug, Clone, PartialEq)]
enum World {
    Gaussian { mu: Vec<f64>, sigma: Vec<f64>, sigma_gamma: f64, nu: Option<f64> },
    BetaBinomial { p: Vec<f64>, phi: Vec<f64>, sigma_gamma: f64, trials: Vec<u64> },
}

impl World {
    /// Values per realization (outer) and method (inner) for `r` realizations: realization i
    /// draws its effect and then each method's residual, so the first R realizations of a
    /// longer table are the table of R.
    fn simulate(&self, r: usize, rng: &mut ChaCha8Rng) -> Vec<Vec<f64>> {
        (0..r)
            .map(|_| match self {
                World::Gaussian { mu, sigma, sigma_gamma, nu } => {
                    let g = sigma_gamma * standard_normal(rng);
                    mu.iter()
                        .zip(sigma)
                        .map(|(m, s)| {
                            let e = match nu {
                                None => standard_normal(rng),
                                Some(nu) => {
                                    let chi2 =
                                        rand_distr::Gamma::new(0.5 * nu, 2.0).map(|d| d.sample(rng)).unwrap_or(*nu);
                                    standard_normal(rng) / (chi2 / nu).sqrt()
                                }
                            };
                            m + g + s * e
                        })
                        .collect()
                }
                World::BetaBinomial { p, phi, sigma_gamma, trials } => {
                    let g = sigma_gamma * standard_normal(rng);
                    p.iter()
                        .zip(phi)
                        .zip(trials)
                        .map(|((&p, &phi), &n)| {
                            let p = if *sigma_gamma > 0.0 { logistic((p / (1.0 - p)).ln() + g) } else { p };
                            let q = rand_distr::Beta::new(p * phi, (1.0 - p) * phi).map(|d| d.sample(rng)).unwrap_or(p);
                            rand_distr::Binomial::new(n, q.clamp(0.0, 1.0)).map(|d| d.sample(rng) as f64).unwrap_or(0.0)
                        })
                        .collect()
                }
            })
            .collect()
    }
}

fn logistic(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// The simulated experiments of one plan: methods, worlds and, per simulation, the values of
/// the largest table.
struct Simulations {
    methods: Vec<String>,
    trials: Option<Vec<u64>>,
    tables: Vec<Vec<Vec<f64>>>,
}

impl Simulations {
    /// The design of simulation `s` with its first `r` realizations.
    fn design(&self, s: usize, r: usize) -> Result<Design> {
        let m = self.methods.len();
        let mut group = Vec::with_capacity(r * m);
        let mut pair = Vec::with_capacity(r * m);
        let mut y = Vec::with_capacity(r * m);
        let mut trials = self.trials.as_ref().map(|_| Vec::with_capacity(r * m));
        for (i, row) in self.tables[s][..r].iter().enumerate() {
            for (k, v) in row.iter().enumerate() {
                group.push(self.methods[k].clone());
                pair.push((i + 1).to_string());
                y.push(*v);
                if let (Some(t), Some(n)) = (trials.as_mut(), self.trials.as_ref()) {
                    t.push(n[k] as f64);
                }
            }
        }
        Design::new(group, Some(pair), y, trials)
    }
}

/// Plans an experiment: the assurance of the decision at each number of realizations, with the
/// predictive-MDD approximation side by side (see the module docs).
///
/// ```
/// use credence::backend::Backend;
/// use credence::compare::{plan, CheesSettings, PlanOptions, PlanSource, Stated};
/// let stated = Stated { effect: 0.3, sigma_a: 0.2, sigma_b: 0.2, ..Default::default() };
/// let options = PlanOptions {
///     a: "A".into(),
///     b: "B".into(),
///     realizations: vec![3, 6],
///     sims: 8,
///     sampler: CheesSettings { superchains: 2, chains_per_superchain: 2, warmup: 30, draws: 20, ..Default::default() },
///     backend: Backend::Cpu,
///     ..Default::default()
/// };
/// let p = plan(PlanSource::Stated(&stated), &options)?;
/// assert_eq!(p.points.len(), 2);
/// assert!(p.points.iter().all(|x| (0.0..=1.0).contains(&x.assurance)));
/// # Ok::<(), credence::Error>(())
/// ```
pub fn plan(source: PlanSource<'_>, options: &PlanOptions) -> Result<Plan> {
    plan_with_progress(source, options, &|_, _| {})
}

/// [`plan`], calling `progress(done, total)` after each batch of simulated fits.
pub fn plan_with_progress(
    source: PlanSource<'_>,
    options: &PlanOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Plan> {
    let start = Instant::now();
    let setup = Setup::new(source, options)?;
    let backend = options.backend.resolve()?;
    let chees =
        CheesOptions { family: setup.family, sampler: options.sampler, higher_is_better: setup.higher_is_better };
    chees.sampler.validate()?;
    let fitter = |designs: &[Design], chunk: usize| -> Result<Vec<Result<Outcome>>> {
        let sampler = CheesSettings { seed: stream_seed(options.seed, chunk as u64 + 1), ..chees.sampler };
        let o = CheesOptions { sampler, ..chees };
        let mut out: Vec<Result<Outcome>> = fit_many_chees_on(options.backend, designs, &o)?
            .into_iter()
            .map(|r| r.and_then(|c| Outcome::of_chees(&c, &options.a, &options.b, &options.decision, setup.target)))
            .collect();
        // Fits ChEES leaves unclean are fitted again by NUTS (the single-fit sampler, clean on
        // the small-design families where batched ChEES keeps a few fits unclean).
        let mut again: Vec<usize> = (0..out.len()).filter(|&i| matches!(&out[i], Ok(x) if !x.clean)).collect();
        // When most of a batch is unclean the worlds themselves are hard (e.g. a sigma at 0):
        // NUTS would not fix them either, only take long, so they stay unclean and reported.
        if again.len() > designs.len() / MAX_REFIT_SHARE {
            again.clear();
        }
        let refits: Vec<(usize, Result<Outcome>)> = again
            .par_iter()
            .map(|&i| {
                let seed = stream_seed(options.seed, (chunk * BATCH + i) as u64 + (1 << 40));
                let fo = FitOptions {
                    family: setup.family,
                    sampler: SamplerSettings { seed, ..Default::default() },
                    higher_is_better: setup.higher_is_better,
                };
                let refit = fit(&designs[i], &fo).and_then(|f| match setup.target {
                    Some(t) => f.with_target(t),
                    None => Ok(f),
                });
                (i, refit.and_then(|f| Outcome::of_nuts(&f, &options.a, &options.b, &options.decision)))
            })
            .collect();
        for (i, r) in refits {
            out[i] = r;
        }
        Ok(out)
    };
    let mut p = run(&setup, options, fitter, progress)?;
    // Auto falls back to the CPU for a model the kernel does not implement (Student-t).
    p.backend = match backend {
        Backend::Cuda if options.backend == Backend::Auto && setup.kernel_unsupported(&chees) => Backend::Cpu,
        b => b,
    };
    p.seconds = start.elapsed().as_secs_f64();
    Ok(p)
}

/// NUTS refits a batch at most for one in this many of its fits.
const MAX_REFIT_SHARE: usize = 4;

/// Simulated fits per call of the fitter: bounds the memory the fits' draws take at once; each
/// batch has its own sampler seed, so the results do not depend on anything but the seed.
const BATCH: usize = 256;

/// What a plan needs from its source.
pub(crate) struct Setup {
    methods: Vec<String>,
    worlds: Vec<World>,
    trials: Option<Vec<u64>>,
    family: Family,
    higher_is_better: bool,
    target: Option<f64>,
    /// (MDD, detection probability) of the predictive approximation at R new realizations.
    mdd: Box<dyn Fn(usize) -> Result<(f64, f64)> + Sync + 'static>,
    source: &'static str,
}

impl Setup {
    /// Whether the ChEES kernel cannot fit this plan's tables (checked on a small table of
    /// the same layout).
    fn kernel_unsupported(&self, chees: &CheesOptions) -> bool {
        let sims = Simulations {
            methods: self.methods.clone(),
            trials: self.trials.clone(),
            tables: vec![(0..2).map(|i| self.methods.iter().map(|_| i as f64).collect()).collect()],
        };
        sims.design(0, 2).map_or(true, |d| crate::backend::chees_kernel_unsupported(&d, chees).is_some())
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
        let d = fit.diagnostics();
        if d.divergences > 0 || d.max_rhat > RHAT_MAX || d.max_rhat.is_nan() {
            return Err(Error::argument(
                "pilot fit",
                format!("{} divergences, largest R-hat {:.3}", d.divergences, d.max_rhat),
                "a clean fit (no divergence, R-hat <= 1.01) to draw the simulated worlds from",
            ));
        }
        let all = fit.design().groups();
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
        let (worlds, trials) = match fit.options().family {
            Family::Gaussian(o) => {
                let mu: Vec<usize> = methods.iter().map(|m| need(format!("mu[{m}]"))).collect::<Result<_>>()?;
                let sigma: Vec<usize> = methods.iter().map(|m| need(format!("sigma[{m}]"))).collect::<Result<_>>()?;
                let nu = (o.likelihood == Likelihood::StudentT).then(|| need("nu".into())).transpose()?;
                let worlds = picks
                    .iter()
                    .map(|row| World::Gaussian {
                        mu: mu.iter().map(|&k| row[k]).collect(),
                        sigma: sigma.iter().map(|&k| row[k]).collect(),
                        sigma_gamma: sg.map_or(0.0, |k| row[k]),
                        nu: nu.map(|k| row[k]),
                    })
                    .collect();
                (worlds, None)
            }
            Family::BetaBinomial(o) => {
                let p: Vec<usize> = methods.iter().map(|m| need(format!("p[{m}]"))).collect::<Result<_>>()?;
                let phi: Vec<usize> = if o.phi_per_method {
                    methods.iter().map(|m| need(format!("phi[{m}]"))).collect::<Result<_>>()?
                } else {
                    vec![need("phi".into())?; methods.len()]
                };
                let trials = pilot_trials(fit.design(), &methods);
                let worlds = picks
                    .iter()
                    .map(|row| World::BetaBinomial {
                        p: p.iter().map(|&k| row[k]).collect(),
                        phi: phi.iter().map(|&k| row[k]).collect(),
                        sigma_gamma: sg.map_or(0.0, |k| row[k]),
                        trials: trials.clone(),
                    })
                    .collect();
                (worlds, Some(trials))
            }
        };
        let pilot = fit.clone();
        let (a, b, power) = (options.a.clone(), options.b.clone(), options.power);
        Ok(Self {
            methods,
            worlds,
            trials,
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
            _ => {
                return Err(Error::argument(
                    "family",
                    "beta-binomial or Student-t",
                    "the Gaussian family with a Normal likelihood for a plan from stated values",
                ));
            }
        }
        if !s.effect.is_finite() {
            return Err(Error::argument("effect", s.effect, "a finite number"));
        }
        for (name, v) in [("sigma_a", s.sigma_a), ("sigma_b", s.sigma_b)] {
            if !(v > 0.0 && v.is_finite()) {
                return Err(Error::argument(name, v, "a finite sd > 0"));
            }
        }
        if !(s.sigma_gamma >= 0.0 && s.sigma_gamma.is_finite()) {
            return Err(Error::argument("sigma_gamma", s.sigma_gamma, "a finite sd >= 0"));
        }
        if options.methods.as_ref().is_some_and(|m| m.len() != 2 || !m.contains(&options.a) || !m.contains(&options.b))
        {
            return Err(Error::argument("methods", "a subset", "only A and B in a plan from stated values"));
        }
        // A at 0 and B at the gap, in the direction in which A is better.
        let mu_b = if s.higher_is_better { -s.effect } else { s.effect };
        let world = World::Gaussian {
            mu: vec![0.0, mu_b],
            sigma: vec![s.sigma_a, s.sigma_b],
            sigma_gamma: s.sigma_gamma,
            nu: None,
        };
        let (effect, var, power) = (s.effect, s.sigma_a.powi(2) + s.sigma_b.powi(2), options.power);
        Ok(Self {
            methods: vec![options.a.clone(), options.b.clone()],
            worlds: vec![world; options.sims],
            trials: None,
            family: s.family,
            higher_is_better: s.higher_is_better,
            target: None,
            mdd: Box::new(move |r| {
                let sd = (var / r as f64).sqrt();
                Ok((norm_quantile(power) * sd, norm_cdf(effect.abs() / sd)))
            }),
            source: "stated",
        })
    }
}

/// Each method's trials in the pilot, rounded mean (the simulated tables use them).
fn pilot_trials(design: &Design, methods: &[String]) -> Vec<u64> {
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

fn validate(o: &PlanOptions) -> Result<()> {
    if o.a == o.b {
        return Err(Error::argument("methods A and B", &o.a, "two different methods"));
    }
    if o.realizations.is_empty() {
        return Err(Error::argument("realizations", "none", "at least one number of realizations"));
    }
    if let Some(r) = o.realizations.iter().find(|&&r| r < 2) {
        return Err(Error::argument("realizations", r, "at least 2 per experiment"));
    }
    if o.sims < 2 {
        return Err(Error::argument("sims", o.sims, "at least 2 simulations"));
    }
    if !(o.power > 0.0 && o.power < 1.0) {
        return Err(Error::argument("power", o.power, "a probability in (0, 1)"));
    }
    o.decision.validate()
}

/// Simulates, fits (through `fitter`, called with batches of designs and the batch's index) and
/// summarises; `backend` and `seconds` are left for the caller.
pub(crate) fn run(
    setup: &Setup,
    options: &PlanOptions,
    fitter: impl Fn(&[Design], usize) -> Result<Vec<Result<Outcome>>>,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Plan> {
    let mut rs = options.realizations.clone();
    rs.sort_unstable();
    rs.dedup();
    let r_max = *rs.last().unwrap_or(&2);
    let tables = setup
        .worlds
        .iter()
        .enumerate()
        .map(|(s, w)| w.simulate(r_max, &mut ChaCha8Rng::seed_from_u64(stream_seed(options.seed, s as u64))))
        .collect();
    let sims = Simulations { methods: setup.methods.clone(), trials: setup.trials.clone(), tables };
    // Every (R, simulation) pair, R-major; fitted in batches.
    let jobs: Vec<(usize, usize)> = rs.iter().flat_map(|&r| (0..options.sims).map(move |s| (r, s))).collect();
    let mut outcomes: Vec<Result<Outcome>> = Vec::with_capacity(jobs.len());
    for (k, batch) in jobs.chunks(BATCH).enumerate() {
        let designs: Vec<Design> = batch.iter().map(|&(r, s)| sims.design(s, r)).collect::<Result<_>>()?;
        outcomes.extend(fitter(&designs, k)?);
        progress(outcomes.len(), jobs.len());
    }
    let mut points = Vec::with_capacity(rs.len());
    let mut warnings = Vec::new();
    for (j, &r) in rs.iter().enumerate() {
        let slice = &outcomes[j * options.sims..(j + 1) * options.sims];
        let ok: Vec<&Outcome> = slice.iter().filter_map(|o| o.as_ref().ok()).collect();
        let failed = slice.len() - ok.len();
        if ok.is_empty() {
            let why = slice.iter().find_map(|o| o.as_ref().err()).map(|e| e.to_string()).unwrap_or_default();
            return Err(Error::argument("plan", format!("R = {r}"), format!("simulated fits that succeed ({why})")));
        }
        let n = ok.len() as f64;
        let settled = ok.iter().filter(|o| o.decision_prob >= options.decision.level).count() as f64;
        let assurance = settled / n;
        let unclean = ok.iter().filter(|o| !o.clean).count();
        let refit = ok.iter().filter(|o| o.refit).count();
        if unclean > 0 {
            warnings.push(format!("R = {r}: {unclean} of {} simulated fits were not clean", ok.len()));
        }
        if failed > 0 {
            warnings.push(format!("R = {r}: {failed} simulated fits failed and are left out"));
        }
        let (mdd, mdd_detection_probability) = (setup.mdd)(r)?;
        points.push(PlanPoint {
            r,
            assurance,
            assurance_mcse: (assurance * (1.0 - assurance) / n).sqrt(),
            expected_prob_better: ok.iter().map(|o| o.prob_better).sum::<f64>() / n,
            fits: ok.len(),
            refit,
            unclean,
            failed,
            mdd,
            mdd_detection_probability,
        });
    }
    let smallest_r = points.iter().find(|p| p.assurance >= options.power).map(|p| p.r);
    if smallest_r.is_none() {
        warnings.push(format!(
            "no R up to {r_max} reaches assurance {}: try more realizations (the largest reached {:.3})",
            options.power,
            points.iter().map(|p| p.assurance).fold(0.0, f64::max)
        ));
    }
    Ok(Plan {
        a: options.a.clone(),
        b: options.b.clone(),
        methods: setup.methods.clone(),
        source: setup.source.into(),
        decision: options.decision,
        power: options.power,
        sims: options.sims,
        points,
        smallest_r,
        backend: options.backend,
        seed: options.seed,
        seconds: 0.0,
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::fit::{FitOptions, fit_with};
    use crate::compare::model::gaussian::KnownHyper;
    use crate::compare::post::planning::ClosedForm;
    use crate::compare::sampler::nuts::SamplerSettings;

    const MU0: f64 = 0.0;
    const TAU: f64 = 1.0;

    fn stated() -> Stated {
        Stated { effect: 0.1, sigma_a: 0.2, sigma_b: 0.25, ..Default::default() }
    }

    fn options(rs: &[usize], sims: usize, rope: Option<f64>) -> PlanOptions {
        PlanOptions {
            a: "A".into(),
            b: "B".into(),
            realizations: rs.to_vec(),
            sims,
            decision: Decision { level: 0.9, rope },
            seed: 7,
            ..Default::default()
        }
    }

    /// Assurance of the known-hyperparameter posterior (no realization effect), in closed
    /// form: with V_k = 1 / (1/tau^2 + R/sigma_k^2) and posterior means m_k = V_k (mu0/tau^2 +
    /// R ybar_k/sigma_k^2), D = m_B - m_A is normal over data sets (ybar_k ~ N(mu_k,
    /// sigma_k^2/R)), and the decision is D > eps + z_level sqrt(V_A + V_B).
    fn closed_assurance(s: &Stated, r: usize, level: f64, eps: f64) -> f64 {
        let r = r as f64;
        let v = |sd: f64| 1.0 / (1.0 / (TAU * TAU) + r / (sd * sd));
        let (va, vb) = (v(s.sigma_a), v(s.sigma_b));
        let mean = vb * (MU0 / (TAU * TAU) + r * s.effect / s.sigma_b.powi(2)) - va * (MU0 / (TAU * TAU));
        let sd = (vb * vb * r / s.sigma_b.powi(2) + va * va * r / s.sigma_a.powi(2)).sqrt();
        1.0 - norm_cdf((eps + norm_quantile(level) * (va + vb).sqrt() - mean) / sd)
    }

    fn check(plan: &Plan, s: &Stated, eps: f64) {
        for p in &plan.points {
            let want = closed_assurance(s, p.r, plan.decision.level, eps);
            let mc = (want * (1.0 - want) / p.fits as f64).sqrt();
            assert!((p.assurance - want).abs() < 4.0 * mc + 0.01, "R = {}: {} vs closed form {want}", p.r, p.assurance);
        }
    }

    /// The simulation, decision and aggregation against the closed form, each table's
    /// posterior computed exactly (the known-hyperparameter posterior is conjugate).
    #[test]
    fn assurance_matches_the_closed_form_with_exact_posteriors() {
        let s = stated();
        for eps in [0.0, 0.05] {
            let o = options(&[16, 4, 8, 32], 2000, (eps > 0.0).then_some(eps));
            let setup = Setup::new(PlanSource::Stated(&s), &o).unwrap();
            let exact = |designs: &[Design], _: usize| {
                Ok(designs
                    .iter()
                    .map(|d| {
                        let c = ClosedForm::new(d, MU0, TAU, &[s.sigma_a, s.sigma_b])?;
                        let gap = (c.mean[1] - c.mean[0]) / (c.var[0] + c.var[1]).sqrt();
                        let spread = (c.var[0] + c.var[1]).sqrt();
                        Ok(Outcome {
                            prob_better: norm_cdf(gap),
                            decision_prob: norm_cdf((c.mean[1] - c.mean[0] - eps) / spread),
                            clean: true,
                            refit: false,
                        })
                    })
                    .collect())
            };
            let p = run(&setup, &o, exact, &|_, _| {}).unwrap();
            assert_eq!(p.points.iter().map(|x| x.r).collect::<Vec<_>>(), vec![4, 8, 16, 32]);
            check(&p, &s, eps);
            // The assurance grows with R here, and the plan names the first R reaching 0.8.
            assert!(p.points.windows(2).all(|w| w[0].assurance <= w[1].assurance + 0.02));
            let first = p.points.iter().find(|x| x.assurance >= 0.8).map(|x| x.r);
            assert_eq!(p.smallest_r, first);
        }
    }

    /// The same with every table fitted by the sampler (NUTS with the hyperparameters held at
    /// their values): the Monte Carlo error of each fit's P must not bias the decisions.
    #[test]
    fn assurance_matches_the_closed_form_with_sampled_posteriors() {
        let s = stated();
        let o = options(&[4, 16], 150, None);
        let setup = Setup::new(PlanSource::Stated(&s), &o).unwrap();
        let fo = FitOptions {
            family: Family::Gaussian(GaussianOptions { realization_effect: false, ..Default::default() }),
            sampler: SamplerSettings { warmup: 200, draws: 400, max_draws: Some(400), ..Default::default() },
            higher_is_better: false,
        };
        let sampled = |designs: &[Design], _: usize| {
            use rayon::prelude::*;
            Ok(designs
                .par_iter()
                .map(|d| {
                    let known = KnownHyper { mu0: MU0, tau: TAU, sigma: vec![s.sigma_a, s.sigma_b] };
                    let f = fit_with(d, &fo, Some(known))?;
                    Outcome::of(&f, "A", "B", &o.decision, f.diagnostics().divergences == 0)
                })
                .collect())
        };
        let p = run(&setup, &o, sampled, &|_, _| {}).unwrap();
        check(&p, &s, 0.0);
    }

    fn small() -> CheesSettings {
        CheesSettings { superchains: 2, chains_per_superchain: 2, warmup: 30, draws: 20, ..Default::default() }
    }

    #[test]
    fn plans_do_not_depend_on_the_thread_count() {
        let s = Stated { sigma_gamma: 0.1, ..stated() };
        let o = PlanOptions { sampler: small(), backend: Backend::Cpu, ..options(&[3, 5], 6, None) };
        let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let p1 = one.install(|| plan(PlanSource::Stated(&s), &o)).unwrap();
        let p2 = plan(PlanSource::Stated(&s), &o).unwrap();
        assert_eq!(p1.points, p2.points);
        assert_eq!(p1.backend, Backend::Cpu);
        let other = plan(PlanSource::Stated(&s), &PlanOptions { seed: 8, ..o.clone() }).unwrap();
        assert_ne!(other.points, p1.points);
    }

    #[test]
    fn a_pilot_fit_gives_worlds_from_its_posterior() {
        // A pilot with a clear gap between A and B and a third method.
        let (mut g, mut pr, mut y) = (vec![], vec![], vec![]);
        for r in 0..8 {
            for (k, (m, mean)) in [("A", 0.0), ("B", 0.4), ("C", 0.2)].into_iter().enumerate() {
                g.push(m.to_string());
                pr.push(r.to_string());
                y.push(mean + 0.1 * (((r * 7 + k * 3) % 5) as f64 - 2.0) + 0.05 * r as f64);
            }
        }
        let d = Design::new(g, Some(pr), y, None).unwrap();
        let pilot = crate::compare::fit(&d, &FitOptions::default()).unwrap();
        let o = PlanOptions {
            sampler: small(),
            backend: Backend::Cpu,
            methods: Some(vec!["A".into(), "B".into()]),
            ..options(&[4], 8, None)
        };
        let p = plan(PlanSource::Pilot(&pilot), &o).unwrap();
        assert_eq!(p.methods, ["A", "B"]);
        assert_eq!(p.source, "pilot");
        let want = pilot.mdd("A", "B", 0.8, 4.0).unwrap();
        assert_eq!(p.points[0].mdd, want.mdd);
        assert!(p.points[0].expected_prob_better > 0.75, "{:?}", p.points[0]);
        // Bad requests are typed errors naming what is wrong.
        let e = plan(PlanSource::Pilot(&pilot), &PlanOptions { b: "Z".into(), ..o.clone() }).unwrap_err();
        assert!(e.to_string().contains("Z"), "{e}");
        let e = plan(PlanSource::Pilot(&pilot), &PlanOptions { realizations: vec![1], ..o.clone() }).unwrap_err();
        assert!(e.to_string().contains("at least 2"), "{e}");
        let e = plan(PlanSource::Pilot(&pilot), &PlanOptions { b: "A".into(), ..o.clone() }).unwrap_err();
        assert!(e.to_string().contains("two different"), "{e}");
        // A pilot whose residuals are all 0 (every method moves with the realization alone)
        // has a broken fit (sigma at its boundary: divergences, R-hat far above 1.01): refused,
        // not planned from draws that are not the posterior.
        let flat: Vec<f64> =
            d.group().iter().zip(d.pair()).map(|(&k, &i)| [0.0, 0.4, 0.2][k] + 0.05 * i as f64).collect();
        let broken = crate::compare::fit(&d.with_response(flat).unwrap(), &FitOptions::default()).unwrap();
        let e = plan(PlanSource::Pilot(&broken), &o).unwrap_err();
        assert!(e.to_string().contains("a clean fit"), "{e}");
    }
}
