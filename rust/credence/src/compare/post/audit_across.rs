//! The calibration audit of the across-data-sets model on a large table of several data sets:
//! what R realizations of each data set would have said about each data set, and was it true?
//!
//! As [`super::audit::audit`], per data set: each subset takes R realizations of every data
//! set (seeded, on a stream per data set), the across model is fitted to the subset, and its
//! P(A better than B) on each data set (partially pooled across data sets) is set against that
//! data set's full verdict (its paired z beyond the clear threshold), beside each data set's own
//! paired-difference posterior on the same realizations. The answer on a new data set cannot be
//! checked this way: a table holds a handful of data sets, not a population of them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use rayon::prelude::*;

use super::audit::{
    Answers, Audit, AuditOptions, AuditPoint, PAIRED_DIFFERENCE, PairVerdict, paired_difference, score, subsets,
    verdicts,
};
use crate::compare::AcrossDesign;
use crate::compare::fit::across::{AcrossFitOptions, fit_across};
use crate::error::{Error, Result};
use crate::seeds::stream_seed;

/// The name of the across-data-sets model's scores.
pub const ACROSS: &str = "across";

/// The table by data set: each data set's realizations (indices into the design's), and its
/// values by realization (outer) and method (inner), NaN where a method did not run.
fn by_dataset(design: &AcrossDesign) -> (Vec<Vec<usize>>, Vec<Vec<Vec<f64>>>) {
    let (n_d, n_m) = (design.datasets().len(), design.methods().len());
    let mut reals = vec![Vec::new(); n_d];
    let mut local = vec![0; design.realizations().len()];
    for (i, (d, _)) in design.realizations().iter().enumerate() {
        local[i] = reals[*d].len();
        reals[*d].push(i);
    }
    let mut values: Vec<Vec<Vec<f64>>> = reals.iter().map(|r| vec![vec![f64::NAN; n_m]; r.len()]).collect();
    for j in 0..design.n_obs() {
        let i = design.realization()[j];
        values[design.dataset()[j]][local[i]][design.method()[j]] = design.y()[j];
    }
    (reals, values)
}

/// The design of the realizations `keep` (indices into the design's, any order).
fn subset(design: &AcrossDesign, keep: &[usize]) -> Result<AcrossDesign> {
    let mut kept = vec![false; design.realizations().len()];
    keep.iter().for_each(|&i| kept[i] = true);
    let rows: Vec<usize> = (0..design.n_obs()).filter(|&j| kept[design.realization()[j]]).collect();
    AcrossDesign::new(
        rows.iter().map(|&j| design.datasets()[design.dataset()[j]].clone()).collect(),
        rows.iter().map(|&j| design.methods()[design.method()[j]].clone()).collect(),
        Some(rows.iter().map(|&j| design.realizations()[design.realization()[j]].1.clone()).collect()),
        rows.iter().map(|&j| design.y()[j]).collect(),
    )
}

/// Audits the across-data-sets `model` on the full, paired `design` (see the module docs),
/// calling `progress(done, total)` as fits finish. Verdicts and answers are per data set and
/// pair, data set by data set.
pub fn audit_across(
    design: &AcrossDesign,
    model: &AcrossFitOptions,
    options: &AuditOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Audit> {
    let start = Instant::now();
    if design.realization().is_empty() {
        return Err(Error::argument("audit", "an unpaired table", "a paired table (a realization column)"));
    }
    let (reals, values) = by_dataset(design);
    let fewest = reals.iter().map(Vec::len).min().unwrap_or(0);
    options.validate(fewest)?;
    let (datasets, methods) = (design.datasets(), design.methods().to_vec());
    let higher = model.higher_is_better;
    let pairs: Vec<(usize, usize)> =
        (0..methods.len()).flat_map(|a| (a + 1..methods.len()).map(move |b| (a, b))).collect();
    let all: Vec<PairVerdict> = values
        .iter()
        .zip(datasets)
        .flat_map(|(v, d)| {
            verdicts(v, &pairs, &methods, higher, options.clear_z)
                .into_iter()
                .map(|p| PairVerdict { dataset: Some(d.clone()), ..p })
        })
        .collect();
    let mut warnings = Vec::new();
    if !all.iter().any(|v| v.clear) {
        warnings.push(format!(
            "no pair is clear on any data set (|paired z| > {}): every score counts no answer",
            options.clear_z
        ));
    }
    let n_pairs = pairs.len();
    let total = options.realizations.len() * options.subsets;
    let done = AtomicUsize::new(0);
    progress(0, total);
    let mut points = Vec::with_capacity(options.realizations.len());
    for &r in &options.realizations {
        // Subset s takes the s-th draw of every data set (local indices).
        let per_dataset: Vec<Vec<Vec<usize>>> = reals
            .iter()
            .enumerate()
            .map(|(d, rs)| subsets(rs.len(), r, options.subsets, stream_seed(options.seed, d as u64)))
            .collect();
        let fitted: Vec<Result<(Answers, bool)>> = (0..options.subsets)
            .into_par_iter()
            .map(|s| {
                let result = crate::interrupt::check().and_then(|()| {
                    let keep: Vec<usize> =
                        per_dataset.iter().zip(&reals).flat_map(|(subs, rs)| subs[s].iter().map(|&i| rs[i])).collect();
                    let fit = fit_across(&subset(design, &keep)?, model)?;
                    let answers = (0..datasets.len())
                        .flat_map(|d| pairs.iter().enumerate().map(move |(p, ab)| (d, p, ab)))
                        .filter_map(|(d, p, &(a, b))| {
                            let on = fit.prob_better_on(&datasets[d], &methods[a], &methods[b]).ok()?;
                            Some((d * n_pairs + p, on))
                        })
                        .collect();
                    Ok((answers, fit.is_clean()))
                });
                progress(done.fetch_add(1, Ordering::Relaxed) + 1, total);
                result
            })
            .collect();
        crate::interrupt::check()?;
        let baseline: Vec<Result<(Answers, bool)>> = (0..options.subsets)
            .map(|s| {
                let answers = (0..datasets.len())
                    .flat_map(|d| {
                        let rows: Vec<&Vec<f64>> = per_dataset[d][s].iter().map(|&i| &values[d][i]).collect();
                        pairs
                            .iter()
                            .enumerate()
                            .filter_map(|(p, &(a, b))| Some((d * n_pairs + p, paired_difference(&rows, a, b, higher)?)))
                            .collect::<Vec<_>>()
                    })
                    .collect();
                Ok((answers, true))
            })
            .collect();
        let scores =
            vec![score(ACROSS, &fitted, &all, options.level), score(PAIRED_DIFFERENCE, &baseline, &all, options.level)];
        if scores[0].failed > 0 {
            warnings.push(format!(
                "R = {r}: {} of {} fits of {ACROSS} failed (left out)",
                scores[0].failed, options.subsets
            ));
        }
        points.push(AuditPoint { r, subsets: options.subsets, scores });
    }
    Ok(Audit {
        methods,
        realizations: fewest,
        higher_is_better: higher,
        options: options.clone(),
        models: Vec::new(),
        across: Some(*model),
        verdicts: all,
        points,
        warnings,
        seconds: start.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests;
