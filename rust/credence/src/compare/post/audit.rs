//! The calibration audit of a model on a large table of one's own: what would R realizations
//! have said, and was it true?
//!
//! For each R of [`AuditOptions::realizations`], [`AuditOptions::subsets`] random subsets of R
//! realizations are drawn (seeded), each is fitted with every model of the audit, and each
//! model's P(A better than B) for every pair is set against the full table's verdict:
//!
//! - the verdict on a pair is the sign of its mean difference over every realization on which
//!   both methods ran, counted only where that is clear: a paired z = mean(d) / (sd(d) / sqrt(n))
//!   beyond [`AuditOptions::clear_z`] (3 by default);
//! - an answer settles a pair when P(A better) or P(B better) reaches [`AuditOptions::level`]
//!   (0.95); a settled answer on a clear pair against the verdict is a wrong call;
//! - the reliability: the answers on clear pairs binned by their stated P (that of the side
//!   called, max(P, 1 - P)), with the share of the bin's calls that came true.
//!
//! Beside the models, every audit scores the simplest honest baseline on the same subsets, the
//! paired-difference posterior of each pair alone: P(A better) = T_{n-1}(mean(d) / (sd(d) /
//! sqrt(n))) with d the pair's differences (baycomp's correlated Bayesian t-test with rho = 0;
//! no joint model). Its name is [`PAIRED_DIFFERENCE`].
//!
//! A clear pair is one the full table settles beyond doubt, so a stated P of 0.7 on such a pair
//! should come true more often than 70% unless the model is overconfident: the reliability on
//! clear pairs is read against [`CALIBRATION_TOLERANCE`] with that in mind (docs/audit.md). The
//! results depend on the table's content, the options and the seed only (not on the thread
//! count or the row order).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rand::seq::SliceRandom;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::compare::fit::across::AcrossFitOptions;
use crate::compare::fit::{Fit, FitOptions, Run, fit_on};
use crate::compare::model::Family;
use crate::compare::model::design::Design;
use crate::error::{Error, Result};
use crate::seeds::stream_seed;

/// The name of the paired-difference baseline in an audit's scores.
pub const PAIRED_DIFFERENCE: &str = "paired_difference";

/// The edges of the reliability bins of the stated P (that of the side called).
pub const RELIABILITY_EDGES: [f64; 7] = [0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0];

/// A bin of stated P in [0.6, 0.95) with at least this many answers is held to
/// [`CALIBRATION_TOLERANCE`].
pub const CALIBRATION_MIN_ANSWERS: usize = 30;

/// The largest gap between a bin's mean stated P and its observed frequency that counts as
/// calibrated.
pub const CALIBRATION_TOLERANCE: f64 = 0.10;

/// The largest share of settled calls on clear pairs that may be wrong.
pub const WRONG_SHARE_MAX: f64 = 0.02;

/// Options of [`audit`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AuditOptions {
    /// Realizations per subset (each at least 2 and fewer than the table has).
    pub realizations: Vec<usize>,
    /// Subsets per number of realizations.
    pub subsets: usize,
    /// |paired z| over the full table beyond which a pair's verdict is clear.
    pub clear_z: f64,
    /// The probability that settles a pair.
    pub level: f64,
    /// Seed of the subsets.
    pub seed: u64,
}

impl Default for AuditOptions {
    fn default() -> Self {
        Self { realizations: vec![5, 10], subsets: 40, clear_z: 3.0, level: 0.95, seed: 1 }
    }
}

/// The most subsets per number of realizations an audit takes (each is a fit per model).
pub const AUDIT_MAX_SUBSETS: usize = 10_000;

impl AuditOptions {
    pub(super) fn validate(&self, n_realizations: usize) -> Result<()> {
        if self.realizations.is_empty() {
            return Err(Error::argument("realizations", "none", "at least one number of realizations"));
        }
        for &r in &self.realizations {
            if !(2..n_realizations).contains(&r) {
                return Err(Error::argument(
                    "realizations",
                    r,
                    format!("from 2 to {} (fewer than the table's {n_realizations})", n_realizations.saturating_sub(1)),
                ));
            }
        }
        if !(1..=AUDIT_MAX_SUBSETS).contains(&self.subsets) {
            return Err(Error::argument("subsets", self.subsets, format!("from 1 to {AUDIT_MAX_SUBSETS}")));
        }
        if !(self.clear_z > 0.0 && self.clear_z.is_finite()) {
            return Err(Error::argument("clear_z", self.clear_z, "a finite number > 0"));
        }
        if !(self.level > 0.5 && self.level < 1.0) {
            return Err(Error::argument("level", self.level, "a probability in (0.5, 1)"));
        }
        Ok(())
    }
}

/// A model of the audit: its name and how it is fitted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditModel {
    /// The name the scores carry (e.g. `paired`, `additive`).
    pub name: String,
    /// The model, sampler and direction of "better".
    pub options: FitOptions,
}

/// The full table's verdict on one pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairVerdict {
    /// The data set the verdict is on (an audit across data sets; none for one table).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dataset: Option<String>,
    /// The first method (design order).
    pub a: String,
    /// The second method.
    pub b: String,
    /// Realizations on which both ran.
    pub realizations: usize,
    /// The paired z of B - A (lower is better) or A - B (higher is better): > 0 when A is better.
    pub z: f64,
    /// |z| beyond the audit's `clear_z`.
    pub clear: bool,
}

/// One bin of the reliability: answers on clear pairs whose stated P lies in [lo, hi).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ReliabilityBin {
    /// Lower edge.
    pub lo: f64,
    /// Upper edge (the last bin holds P = 1).
    pub hi: f64,
    /// Answers in the bin.
    pub answers: usize,
    /// Their mean stated P (NaN for an empty bin).
    pub stated: f64,
    /// The share of them whose call came true (NaN for an empty bin).
    pub observed: f64,
}

/// What one model (or the baseline) said at one number of realizations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelScore {
    /// The model's name ([`PAIRED_DIFFERENCE`] for the baseline).
    pub model: String,
    /// Answers on clear pairs (subsets x clear pairs that both methods of the subset have).
    pub answers: usize,
    /// Of them, settled (P >= level either way).
    pub settled: usize,
    /// Settled against the full table's verdict.
    pub wrong: usize,
    /// Subsets fitted (the baseline: subsets answered).
    pub fits: usize,
    /// Fits that failed (left out).
    pub failed: usize,
    /// Fits with divergences, R-hat above 1.01 or bulk-ESS below 400 (counted).
    pub unclean: usize,
    /// The reliability on clear pairs, one bin per [`RELIABILITY_EDGES`] interval.
    pub bins: Vec<ReliabilityBin>,
}

impl ModelScore {
    /// The share of settled calls that were wrong (0 with none settled).
    pub fn wrong_share(&self) -> f64 {
        if self.settled == 0 { 0.0 } else { self.wrong as f64 / self.settled as f64 }
    }

    /// The bins of stated P in [0.6, 0.95) with at least [`CALIBRATION_MIN_ANSWERS`] answers
    /// whose observed frequency lies more than [`CALIBRATION_TOLERANCE`] from their stated P.
    pub fn miscalibrated(&self) -> Vec<ReliabilityBin> {
        self.bins
            .iter()
            .filter(|b| {
                b.lo >= 0.6 - 1e-12
                    && b.hi <= 0.95 + 1e-12
                    && b.answers >= CALIBRATION_MIN_ANSWERS
                    && (b.observed - b.stated).abs() > CALIBRATION_TOLERANCE
            })
            .copied()
            .collect()
    }
}

/// Every score at one number of realizations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AuditPoint {
    /// Realizations per subset.
    pub r: usize,
    /// Subsets drawn.
    pub subsets: usize,
    /// The models' scores, in the audit's order, then the baseline's.
    pub scores: Vec<ModelScore>,
}

/// The result of [`audit`] (its JSON contract).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Audit {
    /// The methods, in the design's order.
    pub methods: Vec<String>,
    /// Realizations of the full table.
    pub realizations: usize,
    /// Higher values are better.
    pub higher_is_better: bool,
    /// The options.
    pub options: AuditOptions,
    /// The models audited (their names and options).
    pub models: Vec<AuditModel>,
    /// The across-data-sets model's options, when that is the model audited
    /// ([`super::audit_across::audit_across`]; its scores are named
    /// [`ACROSS`](super::audit_across::ACROSS)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub across: Option<AcrossFitOptions>,
    /// The full table's verdict on every pair.
    pub verdicts: Vec<PairVerdict>,
    /// One point per number of realizations, in the options' order.
    pub points: Vec<AuditPoint>,
    /// Plain-language warnings (no clear pair, failed fits).
    pub warnings: Vec<String>,
    /// Wall-clock seconds.
    pub seconds: f64,
}

/// The metric as the verdicts and the baseline read it: the value, or the covered share of a
/// count (beta-binomial designs), per realization (outer) and method (inner); NaN where a
/// method did not run.
fn cells(design: &Design) -> Vec<Vec<f64>> {
    let m = design.n_groups();
    let mut cells = vec![vec![f64::NAN; m]; design.n_pairs()];
    for j in 0..design.n_obs() {
        let v = match design.trials() {
            Some(t) => design.y()[j] / t[j],
            None => design.y()[j],
        };
        cells[design.pair()[j]][design.group()[j]] = v;
    }
    cells
}

/// Mean and (n - 1) sd of A's advantage over B on the rows where both ran: B - A when lower
/// is better, A - B when higher is better; `None` with fewer than two such rows.
fn advantage(rows: &[&Vec<f64>], a: usize, b: usize, higher: bool) -> Option<(f64, f64, usize)> {
    let d: Vec<f64> = rows
        .iter()
        .filter(|r| r[a].is_finite() && r[b].is_finite())
        .map(|r| if higher { r[a] - r[b] } else { r[b] - r[a] })
        .collect();
    let n = d.len();
    if n < 2 {
        return None;
    }
    let mean = d.iter().sum::<f64>() / n as f64;
    let sd = (d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n as f64 - 1.0)).sqrt();
    Some((mean, sd, n))
}

/// The paired-difference posterior's P(A better than B) on `rows`.
pub(super) fn paired_difference(rows: &[&Vec<f64>], a: usize, b: usize, higher: bool) -> Option<f64> {
    let (mean, sd, n) = advantage(rows, a, b, higher)?;
    if sd == 0.0 {
        return Some(if mean > 0.0 {
            1.0
        } else if mean < 0.0 {
            0.0
        } else {
            0.5
        });
    }
    let t = StudentsT::new(0.0, 1.0, n as f64 - 1.0).ok()?;
    Some(t.cdf(mean / (sd / (n as f64).sqrt())))
}

/// The answers of one fit (or of the baseline) on one subset: (pair index, P(A better)).
pub(super) type Answers = Vec<(usize, f64)>;

/// Scores the answers of one model at one R against the verdicts.
pub(super) fn score(
    model: &str,
    answers: &[Result<(Answers, bool)>],
    verdicts: &[PairVerdict],
    level: f64,
) -> ModelScore {
    let n_bins = RELIABILITY_EDGES.len() - 1;
    let mut bins = vec![(0usize, 0.0f64, 0usize); n_bins];
    let (mut n, mut settled, mut wrong, mut failed, mut unclean) = (0, 0, 0, 0, 0);
    for a in answers {
        let Ok((answers, clean)) = a else {
            failed += 1;
            continue;
        };
        unclean += usize::from(!clean);
        for &(pair, p) in answers {
            let v = &verdicts[pair];
            if !v.clear {
                continue;
            }
            n += 1;
            let stated = p.max(1.0 - p);
            let right = (p > 0.5) == (v.z > 0.0) && p != 0.5;
            if stated >= level {
                settled += 1;
                wrong += usize::from(!right);
            }
            let k = RELIABILITY_EDGES[1..n_bins].iter().take_while(|&&e| stated >= e).count();
            let bin = &mut bins[k];
            bin.0 += 1;
            bin.1 += stated;
            bin.2 += usize::from(right);
        }
    }
    let bins = bins
        .iter()
        .enumerate()
        .map(|(k, &(count, sum, right))| ReliabilityBin {
            lo: RELIABILITY_EDGES[k],
            hi: RELIABILITY_EDGES[k + 1],
            answers: count,
            stated: if count == 0 { f64::NAN } else { sum / count as f64 },
            observed: if count == 0 { f64::NAN } else { right as f64 / count as f64 },
        })
        .collect();
    ModelScore {
        model: model.to_owned(),
        answers: n,
        settled,
        wrong,
        fits: answers.len() - failed,
        failed,
        unclean,
        bins,
    }
}

/// The realizations of each subset at `r`: `subsets` draws of `r` of the `n` realizations
/// without replacement, each sorted, from a stream of `seed` and `r`.
pub(super) fn subsets(n: usize, r: usize, subsets: usize, seed: u64) -> Vec<Vec<usize>> {
    let mut rng = ChaCha8Rng::seed_from_u64(stream_seed(seed, r as u64));
    (0..subsets)
        .map(|_| {
            let mut all: Vec<usize> = (0..n).collect();
            let (chosen, _) = all.partial_shuffle(&mut rng, r);
            let mut keep = chosen.to_vec();
            keep.sort_unstable();
            keep
        })
        .collect()
}

/// The pairs' P(A better than B) of a fit (pairs whose methods are both in the fit).
fn fit_answers(fit: &Fit, pairs: &[(usize, usize)], methods: &[String]) -> Answers {
    pairs
        .iter()
        .enumerate()
        .filter_map(|(k, &(a, b))| fit.prob_better(&methods[a], &methods[b]).ok().map(|(p, _)| (k, p)))
        .collect()
}

/// The full table's verdict on every pair of `values` (realization x method).
pub(super) fn verdicts(
    values: &[Vec<f64>],
    pairs: &[(usize, usize)],
    methods: &[String],
    higher: bool,
    clear_z: f64,
) -> Vec<PairVerdict> {
    let all_rows: Vec<&Vec<f64>> = values.iter().collect();
    pairs
        .iter()
        .map(|&(a, b)| {
            // A constant nonzero difference is as clear as a difference can be.
            let (z, n) = match advantage(&all_rows, a, b, higher) {
                Some((mean, sd, n)) if sd > 0.0 => (mean / (sd / (n as f64).sqrt()), n),
                Some((mean, _, n)) if mean != 0.0 => (mean.signum() * f64::INFINITY, n),
                Some((_, _, n)) => (0.0, n),
                None => (0.0, 0),
            };
            PairVerdict {
                dataset: None,
                a: methods[a].clone(),
                b: methods[b].clone(),
                realizations: n,
                z,
                clear: z.abs() > clear_z,
            }
        })
        .collect()
}

/// Audits `models` on the full, paired `design` (see the module docs), calling
/// `progress(done, total)` as fits finish.
pub fn audit(
    design: &Design,
    models: &[AuditModel],
    options: &AuditOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Audit> {
    let start = Instant::now();
    let design = design.canonical();
    if design.n_pairs() == 0 {
        return Err(Error::argument("audit", "an unpaired table", "a paired table (a realization column)"));
    }
    design.one_value_per_cell()?;
    options.validate(design.n_pairs())?;
    let first = models.first().ok_or_else(|| Error::argument("models", "none", "at least one model to audit"))?;
    let higher = first.options.higher_is_better;
    if let Some(m) = models.iter().find(|m| m.options.higher_is_better != higher) {
        return Err(Error::argument("models", &m.name, "the same direction of 'better' as the audit's first model"));
    }
    for m in models {
        let counts = matches!(m.options.family, Family::BetaBinomial(_));
        if counts != design.trials().is_some() {
            return Err(Error::argument(
                "models",
                &m.name,
                if counts { "a table with trials for the beta-binomial model" } else { "a model of metric values" },
            ));
        }
    }
    let methods = design.groups().to_vec();
    let values = cells(&design);
    let pairs: Vec<(usize, usize)> =
        (0..methods.len()).flat_map(|a| (a + 1..methods.len()).map(move |b| (a, b))).collect();
    let verdicts = verdicts(&values, &pairs, &methods, higher, options.clear_z);
    let mut warnings = Vec::new();
    if !verdicts.iter().any(|v| v.clear) {
        warnings.push(format!(
            "no pair is clear over the full table (|paired z| > {}): every score counts no answer",
            options.clear_z
        ));
    }
    let plan: Vec<(usize, Vec<Vec<usize>>)> = options
        .realizations
        .iter()
        .map(|&r| (r, subsets(design.n_pairs(), r, options.subsets, options.seed)))
        .collect();
    let total = plan.iter().map(|(_, s)| s.len()).sum::<usize>() * models.len();
    let done = AtomicUsize::new(0);
    progress(0, total);
    let mut points = Vec::with_capacity(plan.len());
    for (r, subs) in &plan {
        let jobs: Vec<(usize, usize)> = (0..models.len()).flat_map(|m| (0..subs.len()).map(move |s| (m, s))).collect();
        let fitted: Vec<Result<(Answers, bool)>> = jobs
            .par_iter()
            .map(|&(m, s)| {
                let result = crate::interrupt::check().and_then(|()| {
                    let sub = design.subset_pairs(&subs[s])?;
                    let fit = fit_on(&sub, &models[m].options, &Run { threads: Some(1), ..Run::default() })?;
                    Ok((fit_answers(&fit, &pairs, &methods), fit.is_clean()))
                });
                progress(done.fetch_add(1, Ordering::Relaxed) + 1, total);
                result
            })
            .collect();
        crate::interrupt::check()?;
        let mut scores: Vec<ModelScore> = models
            .iter()
            .enumerate()
            .map(|(m, model)| {
                score(&model.name, &fitted[m * subs.len()..(m + 1) * subs.len()], &verdicts, options.level)
            })
            .collect();
        let baseline: Vec<Result<(Answers, bool)>> = subs
            .iter()
            .map(|keep| {
                let rows: Vec<&Vec<f64>> = keep.iter().map(|&i| &values[i]).collect();
                let answers = pairs
                    .iter()
                    .enumerate()
                    .filter_map(|(k, &(a, b))| Some((k, paired_difference(&rows, a, b, higher)?)));
                Ok((answers.collect(), true))
            })
            .collect();
        scores.push(score(PAIRED_DIFFERENCE, &baseline, &verdicts, options.level));
        for s in &scores {
            if s.failed > 0 {
                warnings.push(format!("R = {r}: {} of {} fits of {} failed (left out)", s.failed, subs.len(), s.model));
            }
        }
        points.push(AuditPoint { r: *r, subsets: subs.len(), scores });
    }
    Ok(Audit {
        methods,
        realizations: design.n_pairs(),
        higher_is_better: higher,
        options: options.clone(),
        models: models.to_vec(),
        across: None,
        verdicts,
        points,
        warnings,
        seconds: start.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests;
