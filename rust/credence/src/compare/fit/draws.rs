//! The draws of a fit and what every fit reports of them: the one fit stack that the single
//! and the across-data-sets fits share (names, roles, draws per chain, summaries,
//! diagnostics, warnings); each fit adds only its own answers.

use std::time::Instant;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::summary::{CheesSummary, ParamSummary, summarize, summarize_fitted};
use crate::compare::diagnostics::clean::{CLEAN, FitDiagnostics};
use crate::compare::diagnostics::{COLUMN_BLOCK, gather_columns};
use crate::compare::model::{Output, OutputKind, Role};
use crate::compare::sampler::nuts::{ChainOutput, DrawStats};
use crate::error::{Error, Result};

/// A fit's draws (per chain, on the reported scale) with their summaries, diagnostics and
/// warnings. [`super::Fit`] and [`super::across::AcrossFit`] dereference to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Draws {
    outputs: Vec<Output>,
    /// Per chain, draws x outputs, row-major.
    chains: Vec<Vec<f64>>,
    divergences: usize,
    treedepth_hits: usize,
    gradient_evals: u64,
    /// Per chain, the sampler statistics of each kept draw.
    sampler_stats: Vec<Vec<DrawStats>>,
    summary: Vec<ParamSummary>,
    warnings: Vec<String>,
    seconds: f64,
    /// How the sampler saw the model, in words.
    form: String,
    /// ChEES's record when batched ChEES made the draws.
    chees: Option<CheesSummary>,
    /// The outputs' indices sorted by name: a name's lookup in O(log n), which the pairwise
    /// answers of a fit of a thousand methods make millions of (rebuilt lazily when empty).
    #[serde(skip)]
    by_name: Vec<usize>,
}

/// What [`Draws::assemble`] needs besides the chains.
pub(crate) struct Assembly<'a> {
    /// The reported quantities, in the order reported.
    pub outputs: Vec<Output>,
    /// For each reported quantity, its column in the chains' rows.
    pub columns: &'a [usize],
    /// The (mean, sd) the response was standardised by before fitting: the draws are reported
    /// back on the original scale, and their diagnostics computed on the fitted one.
    pub standardization: Option<(f64, f64)>,
    /// Warnings found before sampling.
    pub warnings: Vec<String>,
    /// How the sampler saw the model.
    pub form: String,
    /// When the fit started.
    pub start: Instant,
}

impl Draws {
    /// The draws of sampled chains: reported quantities in their order and scale, summaries
    /// in parallel over blocks of quantities, warnings (non-finite summaries, then the clean
    /// standard's).
    pub(crate) fn assemble(a: Assembly<'_>, runs: Vec<ChainOutput>, model_outputs: usize) -> Self {
        let Assembly { outputs, columns, standardization, warnings, form, start } = a;
        let report = |o: &Output, v: f64| match (standardization, o.kind) {
            (None, _) | (_, OutputKind::Fixed) => v,
            (Some((mean, sd)), OutputKind::Location) => mean + sd * v,
            (Some((_, sd)), OutputKind::Scale) => sd * v,
        };
        // Every output in the model's order on the fitted scale: the sampler's rows are the
        // draws as they stand, kept without a copy (a second copy of 10 000 methods' draws was
        // half of such a fit's peak memory); otherwise each chain is rewritten and its sampler
        // rows freed before the next.
        let as_sampled = standardization.is_none()
            && columns.len() == model_outputs
            && columns.iter().enumerate().all(|(i, &k)| i == k);
        let (divergences, treedepth_hits, gradient_evals) =
            runs.iter().fold((0, 0, 0), |(d, t, g), r| (d + r.divergences, t + r.treedepth_hits, g + r.gradient_evals));
        let (mut chains, mut sampler_stats) = (Vec::with_capacity(runs.len()), Vec::with_capacity(runs.len()));
        for r in runs {
            sampler_stats.push(r.stats);
            chains.push(if as_sampled {
                r.draws
            } else {
                r.draws
                    .chunks_exact(model_outputs)
                    .flat_map(|row| columns.iter().zip(&outputs).map(move |(&k, o)| report(o, row[k])))
                    .collect()
            });
        }
        let mut draws = Draws {
            outputs,
            chains,
            divergences,
            treedepth_hits,
            gradient_evals,
            sampler_stats,
            summary: Vec::new(),
            warnings,
            seconds: 0.0,
            form,
            chees: None,
            by_name: Vec::new(),
        };
        draws.by_name = (0..draws.outputs.len()).collect();
        draws.by_name.sort_by(|&a, &b| draws.outputs[a].name.cmp(&draws.outputs[b].name));
        let summarised = Output::summarised(&draws.outputs);
        // Blocks of quantities, each block's draws gathered in one pass over the rows.
        draws.summary = summarised
            .par_chunks(COLUMN_BLOCK)
            .flat_map_iter(|ks| {
                let columns = draws.columns(ks);
                ks.iter().zip(columns).map(|(&k, chains)| {
                    let o = &draws.outputs[k];
                    // With standardisation, the diagnostics of the draws on the fitted scale.
                    let fitted = standardization.filter(|_| o.kind != OutputKind::Fixed).map(|(mean, sd)| {
                        let back = |v: f64| if o.kind == OutputKind::Location { (v - mean) / sd } else { v / sd };
                        chains.iter().map(|c| c.iter().map(|&v| back(v)).collect::<Vec<f64>>()).collect::<Vec<_>>()
                    });
                    summarize_fitted(&o.name, &chains, fitted.as_deref())
                })
            })
            .collect();
        draws.warnings.extend(non_finite_warnings(&draws.summary));
        draws.warnings.extend(CLEAN.warnings(&draws.diagnostics()));
        draws.seconds = start.elapsed().as_secs_f64();
        draws
    }

    /// Adds ChEES's record and its warnings (superchains that disagree, capped iterations).
    /// A ChEES fit's R-hat is nested R-hat (the clean standard's), so the split R-hat's
    /// warning goes: over 40 chains of 100-200 draws split R-hat runs above 1.01 where
    /// thousands of effective draws and the superchains agree.
    pub(crate) fn set_chees(&mut self, chees: CheesSummary, max_leapfrog: usize) {
        if let Some(split) = CLEAN.rhat_warning(self.diagnostics().max_rhat) {
            self.warnings.retain(|w| *w != split);
        }
        self.warnings.extend(CLEAN.nested_warning(chees.max_nested_rhat));
        if chees.max_leapfrog_hits > 0 {
            self.warnings
                .push(format!("{} iteration(s) were capped at {max_leapfrog} leapfrog steps", chees.max_leapfrog_hits));
        }
        self.chees = Some(chees);
    }

    /// The reported quantities (names, how they scale, their roles).
    pub fn outputs(&self) -> &[Output] {
        &self.outputs
    }
    /// Names of all reported quantities (summarised ones first, realization effects last).
    pub fn names(&self) -> Vec<&str> {
        self.outputs.iter().map(|o| o.name.as_str()).collect()
    }
    /// Adds `note` to the form ("; note").
    pub(crate) fn add_to_form(&mut self, note: &str) {
        self.form = format!("{}; {note}", self.form);
    }

    /// Adds a warning (a note about the data the fit was given).
    pub(crate) fn add_warning(&mut self, warning: String) {
        self.warnings.push(warning);
    }

    /// Warnings in plain language (data scale, divergences, R-hat, ESS, tree depth).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
    /// Wall-clock seconds of the fit.
    pub fn seconds(&self) -> f64 {
        self.seconds
    }
    /// Leapfrog steps (gradient evaluations) of all chains, warmup included.
    pub fn gradient_evals(&self) -> u64 {
        self.gradient_evals
    }
    /// Sampler statistics of each kept draw, one vector per chain (accept_stat, step size,
    /// tree depth, leapfrog steps, divergence, energy; bayesplot's `nuts_params`).
    pub fn sampler_stats(&self) -> &[Vec<DrawStats>] {
        &self.sampler_stats
    }
    /// Number of chains.
    pub fn n_chains(&self) -> usize {
        self.chains.len()
    }
    /// Kept draws per chain.
    pub fn n_draws(&self) -> usize {
        self.chains.first().map_or(0, |c| c.len() / self.outputs.len().max(1))
    }
    /// How the sampler saw the model, in words: for the Gaussian model with a Normal likelihood
    /// (the default) "collapsed" (only the log-scales sampled; mu0, mu and gamma integrated
    /// out and drawn from their exact conditional), otherwise which blocks were centred,
    /// non-centred or integrated out; for the beta-binomial model the form of the method
    /// block.
    pub fn form(&self) -> &str {
        &self.form
    }
    /// ChEES's superchains, adapted step size and trajectory length, and nested R-hat, when
    /// batched ChEES made the fit (`None` for NUTS).
    pub fn chees(&self) -> Option<&CheesSummary> {
        self.chees.as_ref()
    }

    /// The index of a quantity by name.
    pub(crate) fn index(&self, name: &str) -> Result<usize> {
        let found = if self.by_name.len() == self.outputs.len() {
            self.by_name.binary_search_by(|&k| self.outputs[k].name.as_str().cmp(name)).ok().map(|i| self.by_name[i])
        } else {
            self.outputs.iter().position(|o| o.name == name)
        };
        found.ok_or_else(|| Error::argument("parameter", name, format!("one of {}", self.names().join(", "))))
    }

    /// The index of the compared quantity (mu, p or delta) of the method with index `method`.
    pub(crate) fn compared(&self, method: usize) -> Option<usize> {
        self.outputs.iter().position(|o| o.role == Role::Compared(method))
    }

    /// Draws of one quantity, one vector per chain.
    pub fn draws(&self, name: &str) -> Result<Vec<Vec<f64>>> {
        Ok(self.chain_draws(self.index(name)?))
    }

    /// Draws of the quantity with index `k`, one vector per chain.
    pub(crate) fn chain_draws(&self, k: usize) -> Vec<Vec<f64>> {
        let n_out = self.outputs.len();
        self.chains.iter().map(|c| c.chunks_exact(n_out).map(|row| row[k]).collect()).collect()
    }

    /// Draws of the quantities `ks`, one vector per chain each, gathered in one pass over the
    /// rows (see [`gather_columns`]).
    pub(crate) fn columns(&self, ks: &[usize]) -> Vec<Vec<Vec<f64>>> {
        let chains: Vec<&[f64]> = self.chains.iter().map(Vec::as_slice).collect();
        gather_columns(&chains, self.outputs.len(), ks)
    }

    /// Every draw's row of reported quantities, chain after chain.
    pub(crate) fn rows(&self) -> Vec<&[f64]> {
        self.chains.iter().flat_map(|c| c.chunks_exact(self.outputs.len())).collect()
    }

    /// Each chain's rows of reported quantities.
    pub(crate) fn chain_rows(&self) -> impl Iterator<Item = std::slice::ChunksExact<'_, f64>> {
        let n_out = self.outputs.len();
        self.chains.iter().map(move |c| c.chunks_exact(n_out))
    }

    /// Draws of `f` applied to each draw's row of reported quantities, per chain.
    pub(crate) fn derived(&self, f: impl Fn(&[f64]) -> f64) -> Vec<Vec<f64>> {
        let n_out = self.outputs.len();
        self.chains.iter().map(|c| c.chunks_exact(n_out).map(&f).collect()).collect()
    }

    /// brms-style summary of the main quantities (all but the realization effects): mean, sd,
    /// 2.5/50/97.5% quantiles, R-hat, bulk- and tail-ESS.
    pub fn summary(&self) -> &[ParamSummary] {
        &self.summary
    }

    /// Summary of any quantity by name (including realization effects).
    pub fn summary_of(&self, name: &str) -> Result<ParamSummary> {
        Ok(summarize(name, &self.draws(name)?))
    }

    /// Divergences, tree-depth hits, worst R-hat and bulk-ESS of the summarised quantities.
    pub fn diagnostics(&self) -> FitDiagnostics {
        FitDiagnostics {
            divergences: self.divergences,
            treedepth_hits: self.treedepth_hits,
            max_rhat: self.summary.iter().map(|s| s.rhat).filter(|r| !r.is_nan()).fold(f64::NAN, f64::max),
            min_ess_bulk: self.summary.iter().map(|s| s.ess_bulk).filter(|r| !r.is_nan()).fold(f64::NAN, f64::min),
        }
    }

    /// The worst R-hat of the sampler's own kind: nested R-hat for batched ChEES, split R-hat
    /// for NUTS.
    pub fn sampler_rhat(&self) -> f64 {
        match &self.chees {
            Some(c) => c.max_nested_rhat,
            None => self.diagnostics().max_rhat,
        }
    }

    /// Whether the draws meet the clean standard ([`crate::compare::CLEAN`]): no divergence,
    /// the sampler's R-hat <= 1.01 and bulk-ESS >= 400 for every summarised quantity.
    pub fn is_clean(&self) -> bool {
        let d = self.diagnostics();
        CLEAN.fit(d.divergences, self.sampler_rhat(), d.min_ess_bulk)
    }

    /// Writes all draws as CSV in the layout of posterior's `draws_df`: `.chain`, `.iteration`,
    /// `.draw`, then one column per reported quantity.
    pub fn write_draws_csv(&self, out: impl std::io::Write) -> std::io::Result<()> {
        let mut w = csv::Writer::from_writer(out);
        let mut header = vec![".chain".to_string(), ".iteration".to_string(), ".draw".to_string()];
        header.extend(self.outputs.iter().map(|o| o.name.clone()));
        w.write_record(&header)?;
        let n_out = self.outputs.len();
        let mut draw = 0;
        for (c, chain) in self.chains.iter().enumerate() {
            for (i, row) in chain.chunks_exact(n_out).enumerate() {
                draw += 1;
                let mut record = vec![(c + 1).to_string(), (i + 1).to_string(), draw.to_string()];
                record.extend(row.iter().map(|v| format!("{v:e}")));
                w.write_record(&record)?;
            }
        }
        w.flush()
    }
}

/// Named warnings for summaries that are not finite: an estimate (a sign of a broken fit) or
/// an R-hat or ESS that is not defined (constant draws).
fn non_finite_warnings(summary: &[ParamSummary]) -> Vec<String> {
    let mut out = Vec::new();
    let estimate = |p: &ParamSummary| [p.mean, p.sd, p.q2_5, p.q50, p.q97_5].iter().all(|v| v.is_finite());
    let bad: Vec<&str> = summary.iter().filter(|p| !estimate(p)).map(|p| p.name.as_str()).collect();
    if !bad.is_empty() {
        out.push(format!("the estimates of {} are not finite: the fit is not usable", bad.join(", ")));
    }
    let undefined: Vec<&str> = summary
        .iter()
        .filter(|p| estimate(p) && !(p.rhat.is_finite() && p.ess_bulk.is_finite() && p.ess_tail.is_finite()))
        .map(|p| p.name.as_str())
        .collect();
    if !undefined.is_empty() {
        out.push(format!(
            "R-hat or ESS of {} is not defined (their draws do not vary): convergence of these is not checked",
            undefined.join(", ")
        ));
    }
    out
}
