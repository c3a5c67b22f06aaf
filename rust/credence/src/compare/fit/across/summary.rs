//! [`AcrossSummary`]: every answer of an across-data-sets fit in one serialisable value (the
//! JSON contract the CLI writes, the report embeds and the R package returns).

use serde::{Deserialize, Serialize};

use super::super::ParamSummary;
use super::super::summary::{ALL_PAIRS_UP_TO, Pairwise, by_name, parameters};
use super::{AcrossFit, Rope, VarianceShare};
use crate::compare::diagnostics::clean::FitDiagnostics;
use crate::compare::fit::Pairs;
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
/// `prob_best_new` (`{method: P(best on a new data set)}`), `prob_best_on` (`{dataset:
/// {method: P(best there)}}`), `variance_share` (`{mean, q2.5, q97.5}`), `pairs` (`all` or
/// `ranked`, as [`super::super::Pairs`]), `pairwise` (`{A: {B: {prob_better_new,
/// prob_better_new_mcse, prob_better_on: {dataset: p}, rope}}}`), `rope_eps`, `diagnostics`,
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
        let wanted = |i: usize, j: usize| !ranked || rank[i].abs_diff(rank[j]) == 1 || rank[i] == 0 || rank[j] == 0;
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
        let pairwise = Pairwise::build(&methods, &wanted, pair).transpose()?;
        let prob_best_on = design
            .datasets()
            .iter()
            .map(|d| Ok((d.clone(), BestOn(fit.prob_best_on(d)?))))
            .collect::<crate::Result<_>>()?;
        Ok(Self {
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
            prob_best_new: fit.prob_best_new()?,
            prob_best_on,
            variance_share: fit.variance_share()?,
            pairs: if ranked { Pairs::Ranked } else { Pairs::All },
            pairwise,
            rope_eps: rope,
            diagnostics: fit.diagnostics(),
            sampler: fit.options().sampler,
            warnings: fit.warnings().to_vec(),
            seconds: fit.seconds(),
        })
    }
}
