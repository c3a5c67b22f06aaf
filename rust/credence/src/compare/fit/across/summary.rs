//! [`AcrossSummary`]: every answer of an across-data-sets fit in one serialisable value (the
//! JSON contract the CLI writes, the report embeds and the R package returns).

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::super::pair_blocks::compared_pairs;
use super::super::ranks::SummaryRanks;
use super::super::summary::{ALL_PAIRS_UP_TO, Pairwise, by_name, parameters};
use super::super::{ExpectedRank, ParamSummary};
use super::{AcrossFit, Rope, VarianceShare};
use crate::compare::diagnostics::clean::FitDiagnostics;
use crate::compare::fit::Pairs;
use crate::compare::fit::aggregates::BOOTSTRAP_REPS;
use crate::compare::fit::cd::{CdGroups, ClassicCd, classic_cd_across};
use crate::compare::fit::profiles::{AcrossChecks, across_checks};
use crate::compare::model::across::AcrossOptions;
use crate::compare::sampler::nuts::NutsSettings;

/// One pair's answers on a new data set and on each data set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AcrossPair {
    /// P(A better than B on a new data set | y).
    pub prob_better_new: f64,
    /// Its Monte Carlo standard error.
    pub prob_better_new_mcse: f64,
    /// P(A better than B on each data set where both ran | y), `{dataset: p}`.
    #[serde(with = "by_name")]
    pub prob_better_on: Vec<(String, f64)>,
    /// The baycomp-style ROPE decision on a new data set (with a ROPE).
    pub rope: Option<Rope>,
}

/// Every answer of an [`AcrossFit`] in one value.
///
/// The JSON contract (keys as written): `model` (the options and priors), `form`, `data`
/// (`observations`, `datasets`, `methods`, `realizations`), `scale` (`as_given` or
/// `per_data_set`), `higher_is_better`, `parameters` (`{name: {mean, sd, q2.5, q50, q97.5,
/// rhat, ess_bulk, ess_tail}}`: tau_delta, tau_u, df, delta\[m\], nu\[d\], mu\[d,m\], the
/// sigmas, sigma_gamma\[d\]), `ranking` (methods best first by the posterior mean of delta),
/// `prob_best_new` (`{method: P(best on a new data set)}`), `prob_best_new_mcse`,
/// `rank_probs_new` (`{method: [P(rank 1), ..., P(rank M)]}` on a new data set, up to
/// [`super::super::RANKS_UP_TO`] methods), `rank_probs_new_mcse`, `expected_rank_new`
/// (`{method: {mean, mcse, q2.5, q97.5}}`), `prob_best_on` (`{dataset: {method: P(best
/// there)}}`), `variance_share` (`{mean, q2.5, q97.5}`), `pairs` (`all` or
/// `ranked`, as [`super::super::Pairs`]), `pairwise` (`{A: {B: {prob_better_new,
/// prob_better_new_mcse, prob_better_on: {dataset: p}, rope}}}`), `rope_eps`, `checks`
/// (`{aggregates, profiles}`: rliable's cross-checks on normalised scores), `classic_cd`
/// (data sets as blocks), `cd` (`{level, bayesian, classic}`: the CD diagrams' groups),
/// `diagnostics`,
/// `sampler`, `warnings`, `seconds`. Non-finite numbers are `null`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AcrossSummary {
    /// The model's options and priors.
    pub model: AcrossOptions,
    /// How the sampler saw the model.
    pub form: String,
    /// The data.
    pub data: AcrossData,
    /// `as_given` or `per_data_set` (effects in data-set sds).
    pub scale: String,
    /// Whether higher metric values are better.
    pub higher_is_better: bool,
    /// Posterior summaries of the main quantities.
    #[serde(with = "parameters")]
    pub parameters: Vec<ParamSummary>,
    /// Methods best first by the posterior mean of delta.
    pub ranking: Vec<String>,
    /// P(each method is the best on a new data set).
    #[serde(with = "by_name")]
    pub prob_best_new: Vec<(String, f64)>,
    /// Monte Carlo standard errors of `prob_best_new`.
    #[serde(with = "by_name")]
    pub prob_best_new_mcse: Vec<(String, f64)>,
    /// P(rank = k on a new data set) for k = 1..M, per method (empty beyond
    /// [`super::super::RANKS_UP_TO`] methods; see [`AcrossFit::ranks_new`]).
    #[serde(with = "by_name")]
    pub rank_probs_new: Vec<(String, Vec<f64>)>,
    /// Monte Carlo standard errors of `rank_probs_new`.
    #[serde(with = "by_name")]
    pub rank_probs_new_mcse: Vec<(String, Vec<f64>)>,
    /// The expected rank on a new data set with its MCSE and 95% interval.
    #[serde(with = "by_name")]
    pub expected_rank_new: Vec<(String, ExpectedRank)>,
    /// P(each method is the best on each data set).
    #[serde(with = "by_name")]
    pub prob_best_on: Vec<(String, BestOn)>,
    /// The method share of the methods' variation.
    pub variance_share: VarianceShare,
    /// `all` (every ordered pair) or `ranked` (each method against the next in the ranking
    /// and the best against every other), as in [`super::super::FitSummary`].
    pub pairs: Pairs,
    /// The answers of each compared pair.
    pub pairwise: Pairwise<AcrossPair>,
    /// Half-width of the region of practical equivalence, if asked for.
    pub rope_eps: Option<f64>,
    /// rliable's frequentist cross-checks on min-max normalised scores (see
    /// [`crate::compare::across_checks`]); `null` when they cannot be computed.
    pub checks: Option<AcrossChecks>,
    /// The classic Friedman/Nemenyi analysis with data sets as the blocks (Demsar 2006; `null`
    /// with fewer than two complete data sets; see [`crate::compare::classic_cd_across`]).
    pub classic_cd: Option<ClassicCd>,
    /// The groups of the Bayesian and classic CD diagrams at [`crate::compare::SETTLED_LEVEL`].
    pub cd: CdGroups,
    /// Sampler diagnostics.
    pub diagnostics: FitDiagnostics,
    /// The sampler settings.
    pub sampler: NutsSettings,
    /// Warnings in plain language.
    pub warnings: Vec<String>,
    /// Wall-clock seconds of the fit.
    pub seconds: f64,
}

/// `{method: P(best)}` on one data set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BestOn(#[serde(with = "by_name")] pub Vec<(String, f64)>);

/// The data an across fit saw.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AcrossData {
    /// Observations (rows).
    pub observations: usize,
    /// Data sets, in natural order.
    pub datasets: Vec<String>,
    /// Methods, in natural order.
    pub methods: Vec<String>,
    /// Realizations over all data sets (0 without a pair column).
    pub realizations: usize,
}

impl AcrossSummary {
    /// Summarises `fit`; `rope` is the half-width eps of the ROPE decision (none without it).
    pub fn new(fit: &AcrossFit, rope: Option<f64>) -> crate::Result<Self> {
        let design = fit.design();
        let methods = design.methods().to_vec();
        let ranking = fit.ranking()?;
        let ranked = methods.len() > ALL_PAIRS_UP_TO;
        let rank: Vec<usize> =
            methods.iter().map(|m| ranking.iter().position(|r| r == m).unwrap_or(usize::MAX)).collect();
        let pair = |i: usize, j: usize| -> crate::Result<AcrossPair> {
            let (a, b) = (&methods[i], &methods[j]);
            let (p, mcse) = fit.prob_better_new(a, b)?;
            let on = design
                .datasets()
                .iter()
                .enumerate()
                .filter(|&(d, _)| design.has_cell(d, i) && design.has_cell(d, j))
                .map(|(_, ds)| Ok((ds.clone(), fit.prob_better_on(ds, a, b)?)))
                .collect::<crate::Result<_>>()?;
            let rope = rope.map(|eps| fit.rope_new(a, b, eps)).transpose()?;
            Ok(AcrossPair { prob_better_new: p, prob_better_new_mcse: mcse, prob_better_on: on, rope })
        };
        // Computed in parallel, checked in row order: the first failing pair's error is returned.
        let answers: Vec<_> = compared_pairs(&rank, ranked)
            .into_par_iter()
            .map(|(i, j)| ((i, j), pair(i, j)))
            .collect::<Vec<_>>()
            .into_iter()
            .map(|(ij, answer)| Ok((ij, answer?)))
            .collect::<crate::Result<_>>()?;
        let pairwise = Pairwise::from_pairs(&methods, answers, |a| a);
        let prob_best_on = design
            .datasets()
            .iter()
            .map(|d| Ok((d.clone(), BestOn(fit.prob_best_on(d)?))))
            .collect::<crate::Result<_>>()?;
        let ranks = SummaryRanks::new(&methods, fit.ranks_new()?);
        let checks =
            across_checks(design, fit.options().higher_is_better, fit.options().sampler.seed, BOOTSTRAP_REPS).ok();
        let mut out = Self {
            model: fit.options().model,
            form: fit.form().to_owned(),
            data: AcrossData {
                observations: design.n_obs(),
                datasets: design.datasets().to_vec(),
                methods,
                realizations: design.realizations().len(),
            },
            scale: if fit.per_dataset_scale().is_some() { "per_data_set" } else { "as_given" }.into(),
            higher_is_better: fit.options().higher_is_better,
            parameters: fit.summary().to_vec(),
            ranking,
            prob_best_new: ranks.prob_best,
            prob_best_new_mcse: ranks.prob_best_mcse,
            rank_probs_new: ranks.rank_probs,
            rank_probs_new_mcse: ranks.rank_probs_mcse,
            expected_rank_new: ranks.expected_rank,
            prob_best_on,
            variance_share: fit.variance_share()?,
            pairs: if ranked { Pairs::Ranked } else { Pairs::All },
            pairwise,
            rope_eps: rope,
            checks,
            classic_cd: classic_cd_across(design, fit.options().higher_is_better, 0.05).ok(),
            cd: CdGroups::default(),
            diagnostics: fit.diagnostics(),
            sampler: fit.options().sampler,
            warnings: fit.warnings().to_vec(),
            seconds: fit.seconds(),
        };
        let level = crate::compare::SETTLED_LEVEL;
        out.cd = CdGroups::new(level, out.cd_groups(level), out.classic_cd.as_ref());
        Ok(out)
    }
}
