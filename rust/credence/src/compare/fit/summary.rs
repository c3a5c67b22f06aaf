//! A fit in numbers: the brms-style summary of each quantity, the sampler diagnostics, and
//! [`FitSummary`], every answer of a fit in one serialisable value (the JSON contract).

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::pair_blocks;
use super::quantities::ObsInputs;
pub(crate) use super::summary_serde::by_name;
use super::summary_serde::{OrderedMap, OrderedPairs};
use crate::compare::diagnostics::clean::FitDiagnostics;
use crate::compare::diagnostics::{COLUMN_BLOCK, sorted_draws, summary_diagnostics};

/// Posterior summary of one reported quantity (the columns of brms' summary).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParamSummary {
    /// Name, e.g. `mu[Ensemble]`.
    pub name: String,
    /// Posterior mean.
    pub mean: f64,
    /// Posterior sd.
    pub sd: f64,
    /// 2.5% quantile.
    #[serde(rename = "q2.5")]
    pub q2_5: f64,
    /// Median.
    pub q50: f64,
    /// 97.5% quantile.
    #[serde(rename = "q97.5")]
    pub q97_5: f64,
    /// R-hat (max of bulk and folded rank-normalised split R-hat).
    pub rhat: f64,
    /// Bulk effective sample size.
    pub ess_bulk: f64,
    /// Tail effective sample size.
    pub ess_tail: f64,
}

/// Summary statistics of one quantity's chains.
pub(super) fn summarize(name: &str, chains: &[Vec<f64>]) -> ParamSummary {
    summarize_fitted(name, chains, None)
}

/// [`summarize`], with R-hat and ESS from `fitted` when given: the same draws on the scale the
/// model was fitted on (standardised). The diagnostics do not change under that affine map, but
/// posterior's rule that draws within machine epsilon of each other are constant is absolute,
/// so draws of a metric of scale 1e-30 would have none on their own scale.
pub(super) fn summarize_fitted(name: &str, chains: &[Vec<f64>], fitted: Option<&[Vec<f64>]>) -> ParamSummary {
    let refs: Vec<&[f64]> = chains.iter().map(Vec::as_slice).collect();
    let (rhat, ess_bulk, ess_tail, sorted) = match fitted {
        Some(fitted) => {
            let fitted: Vec<&[f64]> = fitted.iter().map(Vec::as_slice).collect();
            let (rhat, ess_bulk, ess_tail, _) = summary_diagnostics(&fitted);
            (rhat, ess_bulk, ess_tail, sorted_draws(&refs))
        }
        None => summary_diagnostics(&refs),
    };
    let (mean, sd) = crate::summary::mean_sd(&sorted);
    let q = |p: f64| crate::metrics::sample_quantile(&sorted, p);
    ParamSummary {
        name: name.to_owned(),
        mean,
        sd,
        q2_5: q(0.025),
        q50: q(0.5),
        q97_5: q(0.975),
        rhat,
        ess_bulk,
        ess_tail,
    }
}

/// What ChEES adds to a fit's record: its superchains, adapted step size and trajectory
/// length, and nested R-hat (set by every ChEES fit).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheesSummary {
    /// Superchains (chains of one superchain share their initial point).
    pub superchains: usize,
    /// Chains per superchain.
    pub chains_per_superchain: usize,
    /// Adapted step size.
    pub step_size: f64,
    /// Adapted (unjittered) trajectory length T.
    pub trajectory_length: f64,
    /// Mean leapfrog steps per iteration after warmup.
    pub mean_leapfrog_steps: f64,
    /// Iterations whose step count was capped, warmup included.
    pub max_leapfrog_hits: usize,
    /// Nested R-hat of every summarised quantity, in the order of the parameters.
    #[serde(with = "by_name")]
    pub nested_rhat: Vec<(String, f64)>,
    /// Largest nested R-hat (NaN ignored; null when none is defined).
    pub max_nested_rhat: f64,
    /// Adapted inverse mass matrix (its diagonal, on the unconstrained scale; not in the JSON).
    #[serde(skip)]
    pub inv_mass: Vec<f64>,
}

/// The sampler a fit ran and its settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplerSummary {
    /// `nuts` or `chees`: the sampler asked for (its chains, draws and seed lay out the draws
    /// of an exact model too).
    pub name: crate::compare::sampler::SamplerName,
    /// The posterior was drawn exactly (the paired model): no sampler ran, no warmup.
    #[serde(default)]
    pub exact: bool,
    /// Chains in all (ChEES: superchains x chains per superchain).
    pub chains: usize,
    /// Warmup iterations per chain.
    pub warmup: u64,
    /// Kept draws per chain (after any extension of a fit that was not clean).
    pub draws: usize,
    /// Seed.
    pub seed: u64,
    /// Target acceptance of the step-size adaptation.
    pub target_accept: f64,
    /// Energy error beyond which a leapfrog step is halved (`null`: fixed steps).
    pub max_energy_error: Option<f64>,
    /// Gradient evaluations of all chains, warmup included.
    pub gradient_evals: u64,
    /// ChEES's own record (`null` for NUTS).
    pub chees: Option<CheesSummary>,
}

/// The data a fit saw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DataSummary {
    /// Observations (rows).
    pub observations: usize,
    /// Methods, in the design's order (first appearance in the table).
    pub methods: Vec<String>,
    /// Realizations (0 without a pair column).
    pub realizations: usize,
}

/// Every ordered pair of methods up to this many methods ([`Pairs::Auto`]); beyond it the
/// M (M - 1) pairs (a million for a sweep of a thousand configurations) would dwarf the fit.
pub const ALL_PAIRS_UP_TO: usize = 20;

/// Which pairs of methods a summary compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pairs {
    /// [`Pairs::All`] up to [`ALL_PAIRS_UP_TO`] methods, [`Pairs::Ranked`] beyond (default).
    #[default]
    Auto,
    /// Every ordered pair: M (M - 1) of them.
    All,
    /// The methods ranked by posterior mean, best first: each one against the next in the
    /// ranking, and the best against every other, in both directions (about 4 M pairs).
    Ranked,
}

impl std::str::FromStr for Pairs {
    type Err = crate::Error;
    /// Parses `auto`, `all` or `ranked`.
    fn from_str(s: &str) -> crate::Result<Self> {
        crate::error::parse_choice("pairs", s, &[("auto", Pairs::Auto), ("all", Pairs::All), ("ranked", Pairs::Ranked)])
    }
}

/// The scale of a fit's parameters and MDDs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Units {
    /// The metric's own units (Gaussian).
    Response,
    /// Probabilities: p and the MDD (beta-binomial; its tau and sigma_gamma are on the logit
    /// scale, phi a precision).
    Probability,
}

/// What [`FitSummary::new`] computes beyond the fit itself.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SummaryOptions {
    /// Power of the minimum detectable difference (default 0.8).
    pub power: f64,
    /// New realizations the MDD plans for (default 1).
    pub r_new: f64,
    /// Half-width eps of a region of practical equivalence: with it, P(|mu_A - mu_B| < eps)
    /// for every pair compared.
    pub rope: Option<f64>,
    /// Which pairs are compared (default: all of them for up to [`ALL_PAIRS_UP_TO`] methods).
    #[serde(default)]
    pub pairs: Pairs,
}

impl Default for SummaryOptions {
    fn default() -> Self {
        Self { power: 0.8, r_new: 1.0, rope: None, pairs: Pairs::Auto }
    }
}

/// A value for every ordered pair (A, B) of methods, A != B, methods in the design's order;
/// in JSON `{"A": {"B": value}}`.
#[derive(Debug, Clone, PartialEq)]
pub struct Pairwise<T>(pub Vec<(String, Vec<(String, T)>)>);

impl<T> Pairwise<T> {
    /// The value of (a, b).
    pub fn get(&self, a: &str, b: &str) -> Option<&T> {
        let row = &self.0.iter().find(|(x, _)| x == a)?.1;
        row.iter().find(|(y, _)| y == b).map(|(_, v)| v)
    }

    /// `value` of the answer of each pair (i, j) in `pairs` (indices into `methods`): rows and
    /// columns in the order of `methods`, rows without a pair left out.
    pub(crate) fn from_pairs<A>(
        methods: &[String],
        pairs: impl IntoIterator<Item = ((usize, usize), A)>,
        value: impl Fn(A) -> T,
    ) -> Self {
        let mut rows: Vec<Vec<(usize, A)>> = methods.iter().map(|_| Vec::new()).collect();
        for ((i, j), a) in pairs {
            if let Some(row) = rows.get_mut(i) {
                row.push((j, a));
            }
        }
        let rows = rows.into_iter().zip(methods).filter(|(row, _)| !row.is_empty()).map(|(mut row, a)| {
            row.sort_unstable_by_key(|x| x.0);
            (a.clone(), row.into_iter().filter_map(|(j, v)| Some((methods.get(j)?.clone(), value(v)))).collect())
        });
        Pairwise(rows.collect())
    }
}

impl<T: Serialize> Serialize for Pairwise<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut outer = s.serialize_map(Some(self.0.len()))?;
        for (a, row) in &self.0 {
            outer.serialize_entry(a, &OrderedMap(row))?;
        }
        outer.end()
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Pairwise<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let rows: OrderedPairs<OrderedPairs<T>> = Deserialize::deserialize(d)?;
        Ok(Pairwise(rows.0.into_iter().map(|(a, row)| (a, row.0)).collect()))
    }
}

/// Serde for the parameter summaries as `{"name": {"mean": ..., ...}}` in order.
pub(crate) mod parameters {
    use serde::ser::SerializeMap;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::{OrderedPairs, ParamSummary};

    /// A summary without its name (the name is the key).
    #[derive(Serialize, Deserialize)]
    struct Stats {
        mean: f64,
        sd: f64,
        #[serde(rename = "q2.5")]
        q2_5: f64,
        q50: f64,
        #[serde(rename = "q97.5")]
        q97_5: f64,
        rhat: f64,
        ess_bulk: f64,
        ess_tail: f64,
    }

    pub(crate) fn serialize<S: Serializer>(v: &[ParamSummary], s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(v.len()))?;
        for p in v {
            let stats = Stats {
                mean: p.mean,
                sd: p.sd,
                q2_5: p.q2_5,
                q50: p.q50,
                q97_5: p.q97_5,
                rhat: p.rhat,
                ess_bulk: p.ess_bulk,
                ess_tail: p.ess_tail,
            };
            m.serialize_entry(&p.name, &stats)?;
        }
        m.end()
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<ParamSummary>, D::Error> {
        let pairs: OrderedPairs<Stats> = OrderedPairs::deserialize(d)?;
        Ok(pairs
            .0
            .into_iter()
            .map(|(name, s)| ParamSummary {
                name,
                mean: s.mean,
                sd: s.sd,
                q2_5: s.q2_5,
                q50: s.q50,
                q97_5: s.q97_5,
                rhat: s.rhat,
                ess_bulk: s.ess_bulk,
                ess_tail: s.ess_tail,
            })
            .collect())
    }
}

/// Every answer of a fit in one value, made in one place and read by every face: `credence
/// fit --json` writes it, the report embeds it for each fit, the R package returns it as a
/// list (`fit_summary()`) and prints its tables from it, the notebook displays it.
///
/// The JSON contract (keys as written, methods and parameters in the fit's order):
/// `model` (the family and its options), `form` (how the sampler saw the model), `data`
/// (`observations`, `methods`, `realizations`), `units`, `higher_is_better`, `target`,
/// `repeats` (`{column, per_cell, methods: [{method, training_sd, df, means_sd,
/// training_share}], warning}` or `null`), `items` (only for per-item scores: `{column,
/// layout, per_realization, scores, df}`), `parameters` (`{name: {mean, sd, q2.5, q50, q97.5, rhat, ess_bulk, ess_tail}}`),
/// `ranking` (the methods best first by posterior mean), `prob_best` and `prob_best_mcse`
/// (`{method: P(best)}`), `rank_probs` and `rank_probs_mcse` (`{method: [P(rank 1), ...,
/// P(rank M)]}`) and `expected_rank` (`{method: {mean, mcse, q2.5, q97.5}}`), both `{}` beyond
/// [`super::RANKS_UP_TO`] methods (see [`super::MethodRanks`]), `cd` (`{level, bayesian,
/// classic}`: the CD diagrams' groups), `classic_cd` (`{average_ranks:
/// {method: rank}, blocks, incomplete_blocks, critical_difference, alpha, friedman_chi2,
/// friedman_p}` or `null`), `aggregates` (`{reps, seed, methods: {method: {runs, mean, iqm}},
/// prob_improvement: {A: {B: ...}}}`, each estimate `{estimate, lower, upper}`), `pairs` (`all`, or `ranked` for many
/// methods: see [`Pairs`]), `prob_better` and `prob_better_mcse` (`{A: {B: P(A better than
/// B)}}` and its Monte Carlo error), `power`, `r_new`, `mdd` (`{A: {B: {mdd, sigma_pred, gap,
/// detection_probability}}}`), `rope_eps` and `rope` (`{A: {B: P(|mu_A - mu_B| < eps)}}`, both
/// `null` without a ROPE), `diagnostics` (`divergences`, `treedepth_hits`, `max_rhat`,
/// `min_ess_bulk`), `sampler` (see [`SamplerSummary`]), `warnings`, `seconds`.
///
/// Non-finite numbers are written as `null` (JSON has no NaN): an R-hat or ESS that is not
/// defined (a constant quantity), an MDD of a degenerate pair. R reads them as `NA`.
///
/// ```
/// use credence::compare::{fit, Design, FitOptions, FitSummary, SummaryOptions};
/// let g = ["A", "A", "A", "B", "B", "B"].map(String::from).to_vec();
/// let d = Design::new(g, None, vec![0.10, 0.12, 0.11, 0.20, 0.22, 0.19], None)?;
/// let f = fit(&d, &FitOptions::default())?;
/// let s = FitSummary::new(&f, &SummaryOptions { rope: Some(0.01), ..Default::default() })?;
/// assert_eq!(s.prob_better.get("A", "B"), Some(&f.prob_better("A", "B")?.0));
/// let json = serde_json::to_value(&s).unwrap();
/// assert!(json["parameters"]["mu[A]"]["mean"].is_number());
/// assert!(json["rope"]["B"]["A"].is_number());
/// # Ok::<(), credence::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FitSummary {
    /// The model family with its options and priors.
    pub model: crate::compare::Family,
    /// How the sampler saw the model ([`super::Draws::form`]).
    pub form: String,
    /// The data.
    pub data: DataSummary,
    /// The scale of the parameters and the MDD.
    pub units: Units,
    /// Whether higher metric values are better.
    pub higher_is_better: bool,
    /// "Better" means closer to this value ([`super::Fit::with_target`]).
    pub target: Option<f64>,
    /// Repeated trainings within a realization, averaged before the fit: each method's
    /// training sd and its share of the realization means' variance (`null` without a repeat
    /// column; [`crate::compare::Repeats`]).
    #[serde(default)]
    pub repeats: Option<crate::compare::Repeats>,
    /// Per-item scores behind the realization means (`credence fit --item`): the item column,
    /// shared or nested items, items per realization, scores and degrees of freedom; absent
    /// from the JSON for a table of one value per method and realization.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<crate::compare::ItemSummary>,
    /// Posterior summaries of the main quantities.
    #[serde(with = "parameters")]
    pub parameters: Vec<ParamSummary>,
    /// The methods ranked by the posterior mean of mu (p for the beta-binomial), best first.
    pub ranking: Vec<String>,
    /// P(the method is the best | y), per method (see [`super::MethodRanks`]).
    #[serde(with = "by_name", default)]
    pub prob_best: Vec<(String, f64)>,
    /// Monte Carlo standard error of `prob_best`.
    #[serde(with = "by_name", default)]
    pub prob_best_mcse: Vec<(String, f64)>,
    /// P(rank = k | y) for k = 1..M, per method; empty beyond [`super::RANKS_UP_TO`] methods.
    #[serde(with = "by_name", default)]
    pub rank_probs: Vec<(String, Vec<f64>)>,
    /// Monte Carlo standard errors of `rank_probs`.
    #[serde(with = "by_name", default)]
    pub rank_probs_mcse: Vec<(String, Vec<f64>)>,
    /// E[rank | y] with its MCSE and 95% interval, per method; empty beyond
    /// [`super::RANKS_UP_TO`] methods.
    #[serde(with = "by_name", default)]
    pub expected_rank: Vec<(String, super::ExpectedRank)>,
    /// The frequentist cross-check, labelled as such: Friedman's test and the Nemenyi critical
    /// difference at 0.05 of the methods' ranks within realizations (`null` for an unpaired
    /// design, fewer than two complete realizations, or cross-validation folds, which it would
    /// take as independent; see [`crate::compare::ClassicCd`]).
    #[serde(default)]
    pub classic_cd: Option<crate::compare::ClassicCd>,
    /// The groups of the Bayesian and classic CD diagrams at [`super::SETTLED_LEVEL`].
    pub cd: super::cd::CdGroups,
    /// The frequentist cross-checks of rliable, labelled as such: each method's mean and IQM
    /// with stratified-bootstrap 95% intervals and the probability of improvement, seeded by
    /// the fit's seed (`null` when a score is not finite; see [`crate::compare::Aggregates`]).
    #[serde(default)]
    pub aggregates: Option<crate::compare::Aggregates>,
    /// Which pairs the pairwise answers hold: `all` (every ordered pair) or `ranked` (each
    /// method against the next in the ranking, and the best against every other); never
    /// `auto`.
    pub pairs: Pairs,
    /// P(A better than B | y).
    pub prob_better: Pairwise<f64>,
    /// Monte Carlo standard error of `prob_better`.
    pub prob_better_mcse: Pairwise<f64>,
    /// Power of the MDD.
    pub power: f64,
    /// New realizations the MDD plans for.
    pub r_new: f64,
    /// The predictive minimum detectable difference of each pair.
    pub mdd: Pairwise<super::Mdd>,
    /// Half-width of the region of practical equivalence, if asked for.
    pub rope_eps: Option<f64>,
    /// P(|mu_A - mu_B| < eps | y) for every pair, if asked for.
    pub rope: Option<Pairwise<f64>>,
    /// Sampler diagnostics.
    pub diagnostics: FitDiagnostics,
    /// The sampler and its settings.
    pub sampler: SamplerSummary,
    /// Warnings in plain language (the fit's; faces add their own, e.g. about the table).
    pub warnings: Vec<String>,
    /// Wall-clock seconds of the fit.
    pub seconds: f64,
}

/// Every ordered pair of `methods` over `draws` draws (`pairs all`), refused with its size
/// beyond [`crate::limits::MAX_PAIR_DRAWS`] rather than run for many minutes.
pub(crate) fn check_all_pairs(methods: usize, draws: u64) -> crate::Result<()> {
    let m = methods as u64;
    let pairs = m.saturating_mul(m.saturating_sub(1));
    let work = pairs.saturating_mul(draws);
    if work <= crate::limits::MAX_PAIR_DRAWS {
        return Ok(());
    }
    Err(crate::Error::argument(
        "pairs",
        "all",
        format!(
            "at most {} pair-draws: {m} methods give {pairs} ordered pairs over {draws} draws ({work}); use pairs \
             ranked (each method against the next and the best), or fewer draws",
            crate::limits::MAX_PAIR_DRAWS
        ),
    ))
}

impl FitSummary {
    /// The summary of `method`'s compared quantity: mu\[method\] (Gaussian) or p\[method\]
    /// (beta-binomial).
    pub fn method_parameter(&self, method: &str) -> Option<&ParamSummary> {
        let name = format!("{}[{method}]", self.model.compared_parameter());
        self.parameters.iter().find(|p| p.name == name)
    }

    /// Each parameter's R-hat as the clean standard judges the fit, in the order of
    /// `parameters`, with its column heading: a ChEES fit's nested R-hat ("nested Rhat"; NaN
    /// for a quantity it has none of), else split R-hat ("Rhat"). What the printed tables show;
    /// split R-hat stays in `parameters`.
    pub fn sampler_rhats(&self) -> (&'static str, Vec<f64>) {
        match &self.sampler.chees {
            Some(c) => {
                let nested: std::collections::HashMap<&str, f64> =
                    c.nested_rhat.iter().map(|(k, r)| (k.as_str(), *r)).collect();
                let rhat = |name: &str| nested.get(name).copied().unwrap_or(f64::NAN);
                ("nested Rhat", self.parameters.iter().map(|p| rhat(&p.name)).collect())
            }
            None => ("Rhat", self.parameters.iter().map(|p| p.rhat).collect()),
        }
    }

    /// Summarises `fit`; errors only for options out of range (power outside (0, 1), r_new
    /// below 1, a ROPE that is not a finite number > 0).
    pub fn new(fit: &super::Fit, options: &SummaryOptions) -> crate::Result<Self> {
        use crate::compare::Family;
        let design = fit.design();
        let methods = design.groups().to_vec();
        let ranking = fit.ranking()?;
        let ranked = match options.pairs {
            Pairs::All => false,
            Pairs::Ranked => true,
            Pairs::Auto => methods.len() > ALL_PAIRS_UP_TO,
        };
        if let Some(eps) = options.rope {
            super::quantities::check_rope(eps)?;
        }
        super::quantities::check_mdd_options(options.power, options.r_new)?;
        if !ranked {
            check_all_pairs(methods.len(), (fit.n_draws() * fit.n_chains()) as u64)?;
        }
        let s = &fit.options().sampler;
        let exact = fit.drawn_exactly();
        // Each method's mean predictive variance, its draws gathered in blocks of methods that
        // share one pass over the rows, in parallel.
        let inputs: Vec<ObsInputs> =
            methods.iter().map(|m| fit.obs_variance_inputs(m)).collect::<crate::Result<_>>()?;
        let noise: Vec<f64> = inputs
            .par_chunks(COLUMN_BLOCK)
            .flat_map_iter(|block| {
                let ks: Vec<usize> = block.iter().flat_map(ObsInputs::outputs).collect();
                let mut columns = fit.columns(&ks).into_iter();
                let mut next = move || columns.next().unwrap_or_default();
                block.iter().map(|o| (o, next(), o.extra.map(|_| next()))).collect::<Vec<_>>()
            })
            .map(|(o, main, extra)| o.mean(&main, extra.as_deref()))
            .collect();
        let noise = super::quantities::PairNoise { variance: noise, covariance: fit.mean_covariance() };
        let (answers, ranks) = pair_blocks::pairs_and_ranks(fit, &ranking, ranked, &noise, options)?;
        let ranks = super::ranks::SummaryRanks::new(&methods, ranks);
        let each = || answers.iter().map(|(&ij, a)| (ij, a));
        let probs = Pairwise::from_pairs(&methods, each(), |a| a.prob);
        let rope = options.rope.map(|_| Pairwise::from_pairs(&methods, each(), |a| a.rope.unwrap_or(f64::NAN)));
        let mdd = Pairwise::from_pairs(&methods, each(), |a| a.mdd);
        let mut warnings = fit.warnings().to_vec();
        let broken: Vec<String> = mdd
            .0
            .iter()
            .flat_map(|(a, row)| row.iter().map(move |(b, m)| (a, b, m)))
            .filter(|(a, b, m)| {
                a < b && ![m.mdd, m.sigma_pred, m.gap, m.detection_probability].iter().all(|v| v.is_finite())
            })
            .map(|(a, b, _)| format!("{a} vs {b}"))
            .collect();
        if !broken.is_empty() {
            warnings.push(format!("the minimum detectable difference of {} is not finite", broken.join(", ")));
        }
        let mut out = Self {
            model: fit.options().family,
            form: fit.form().to_owned(),
            data: DataSummary {
                observations: design.n_obs(),
                methods: methods.clone(),
                realizations: design.n_pairs(),
            },
            units: match fit.options().family {
                Family::Gaussian(_) | Family::Paired(_) => Units::Response,
                Family::BetaBinomial(_) => Units::Probability,
            },
            higher_is_better: fit.options().higher_is_better,
            target: fit.target(),
            repeats: fit.repeats().cloned(),
            items: super::item_noise::item_summary(fit)?,
            parameters: fit.summary().to_vec(),
            ranking,
            prob_best: ranks.prob_best,
            prob_best_mcse: ranks.prob_best_mcse,
            rank_probs: ranks.rank_probs,
            rank_probs_mcse: ranks.rank_probs_mcse,
            expected_rank: ranks.expected_rank,
            // Friedman's test takes its blocks as independent, which folds of one data set are not.
            classic_cd: match fit.options().family {
                crate::compare::Family::Paired(o) if o.cv_test_fraction > 0.0 => None,
                _ => super::cd::classic_cd(design, fit.options().higher_is_better, fit.target(), 0.05).ok(),
            },
            cd: Default::default(),
            aggregates: super::aggregates::aggregates(design, fit.options().higher_is_better, fit.target(), s.seed())
                .ok(),
            pairs: if ranked { Pairs::Ranked } else { Pairs::All },
            prob_better: Pairwise(
                probs.0.iter().map(|(a, r)| (a.clone(), r.iter().map(|(b, p)| (b.clone(), p.0)).collect())).collect(),
            ),
            prob_better_mcse: Pairwise(
                probs.0.into_iter().map(|(a, r)| (a, r.into_iter().map(|(b, p)| (b, p.1)).collect())).collect(),
            ),
            power: options.power,
            r_new: options.r_new,
            mdd,
            rope_eps: options.rope,
            rope,
            diagnostics: fit.diagnostics(),
            sampler: SamplerSummary {
                name: s.name(),
                exact,
                chains: fit.n_chains(),
                warmup: if exact { 0 } else { s.warmup() },
                draws: fit.n_draws(),
                seed: s.seed(),
                target_accept: s.target_accept(),
                max_energy_error: s.walnuts(),
                gradient_evals: fit.gradient_evals(),
                chees: fit.chees().cloned(),
            },
            warnings,
            seconds: fit.seconds(),
        };
        let level = super::SETTLED_LEVEL;
        out.cd = super::cd::CdGroups::new(level, out.cd_groups(level), out.classic_cd.as_ref());
        Ok(out)
    }
}
