//! Repeated trainings within a realization (`credence study --train-seeds K` writes
//! `train_rep`): K networks trained on the same data split, differing only in their seeds.
//!
//! A realization's value for a method is the mean of its trainings there. With the same
//! number of trainings in every cell those means are independent draws of
//! Normal_M(mu, Sigma_between + Omega / K) (Omega: the training noise), so the paired model of
//! the means is the exact answer about mu: the repeats make each realization's mean surer,
//! never the realizations more numerous. Taking each training as a realization of its own
//! would count the K seeds of one split as K independent data sets, and be far too sure
//! (tests/repeats.rs). What the repeats add besides is the decomposition: each method's
//! training sd within a realization, with sum(K_c - 1) degrees of freedom, and how much of the
//! spread of its realization means it explains ([`Repeats`]), which says whether more
//! trainings per realization or more realizations would settle a comparison sooner.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::design::{Design, dropped_rows, duplicated_cells};
use crate::error::{Error, Result};
use crate::io::Table;

/// One method's training noise within a realization.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepeatNoise {
    /// The method.
    pub method: String,
    /// The pooled sd of its trainings around their cell's mean: the training (seed) noise.
    pub training_sd: f64,
    /// Its degrees of freedom, sum over cells of (trainings - 1).
    pub df: usize,
    /// The sd of its realization means (the cell means) across realizations.
    pub means_sd: f64,
    /// The share of the realization means' variance that training noise explains,
    /// training_sd^2 mean(1/K_c) / means_sd^2, at most 1: near 1, more trainings per
    /// realization would settle its comparisons; near 0, only more realizations would.
    pub training_share: f64,
}

/// What the repeated trainings of a table say, beside the fit of their means.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Repeats {
    /// The column (or argument) that names the training within a realization.
    pub column: String,
    /// The fewest and the most trainings in a (method, realization) cell.
    pub per_cell: (usize, usize),
    /// Per method, in the design's order.
    pub methods: Vec<RepeatNoise>,
    /// A warning in words where the cells hold different numbers of trainings (their means are
    /// then not equally sure, and the paired model weighs them equally).
    pub warning: Option<String>,
}

/// Averages the trainings of each (method, realization) cell: the design of the means, and
/// the [`Repeats`] decomposition. `column` names the repeat in messages. Each (method,
/// realization, repeat) may appear once and every value must be finite; the errors name the
/// index. At least one cell needs two trainings.
pub fn average_repeats(
    group: &[String],
    pair: &[String],
    repeat: &[String],
    y: &[f64],
    column: &str,
) -> Result<(Design, Repeats)> {
    let n = y.len();
    if group.len() != n || pair.len() != n || repeat.len() != n {
        return Err(Error::shape(
            column,
            &[group.len(), pair.len(), repeat.len()],
            format!("method, realization and {column} each of length {n}, as the response"),
        ));
    }
    if let Some(i) = y.iter().position(|v| !v.is_finite()) {
        return Err(Error::value("response", &[i], y[i], "a finite metric value"));
    }
    let mut seen: HashMap<(&str, &str, &str), usize> = HashMap::new();
    for i in 0..n {
        if let Some(first) = seen.insert((&group[i], &pair[i], &repeat[i]), i) {
            return Err(Error::value(
                column,
                &[i],
                &repeat[i],
                format!(
                    "one value per method, realization and {column}, but method '{}', realization '{}', {column} \
                     '{}' has one at [{first}] already",
                    group[i], pair[i], repeat[i]
                ),
            ));
        }
    }
    // The cells in order of first appearance, with their values.
    let mut index: HashMap<(&str, &str), usize> = HashMap::new();
    let mut cells: Vec<(&str, &str, Vec<f64>)> = Vec::new();
    for i in 0..n {
        let k = *index.entry((&group[i], &pair[i])).or_insert_with(|| {
            cells.push((&group[i], &pair[i], Vec::new()));
            cells.len() - 1
        });
        cells[k].2.push(y[i]);
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let design = Design::new(
        cells.iter().map(|c| c.0.to_string()).collect(),
        Some(cells.iter().map(|c| c.1.to_string()).collect()),
        cells.iter().map(|c| mean(&c.2)).collect(),
        None,
    )?
    .canonical();
    let counts = cells.iter().map(|c| c.2.len());
    let per_cell = (counts.clone().min().unwrap_or(0), counts.max().unwrap_or(0));
    if per_cell.1 < 2 {
        return Err(Error::argument(
            column,
            "one training per method and realization",
            "at least one cell with two or more trainings (else leave the repeat column out)",
        ));
    }
    let methods = design
        .groups()
        .iter()
        .map(|m| {
            let mine: Vec<&Vec<f64>> = cells.iter().filter(|c| c.0 == m).map(|c| &c.2).collect();
            let df: usize = mine.iter().map(|v| v.len() - 1).sum();
            let ss: f64 = mine.iter().map(|v| v.iter().map(|x| (x - mean(v)).powi(2)).sum::<f64>()).sum();
            let training_sd = if df > 0 { (ss / df as f64).sqrt() } else { f64::NAN };
            let means: Vec<f64> = mine.iter().map(|v| mean(v)).collect();
            let means_sd = if means.len() > 1 {
                let c = mean(&means);
                (means.iter().map(|x| (x - c).powi(2)).sum::<f64>() / (means.len() - 1) as f64).sqrt()
            } else {
                f64::NAN
            };
            let inverse_k = mine.iter().map(|v| 1.0 / v.len() as f64).sum::<f64>() / mine.len() as f64;
            let training_share =
                if means_sd > 0.0 { (training_sd.powi(2) * inverse_k / means_sd.powi(2)).min(1.0) } else { f64::NAN };
            RepeatNoise { method: m.clone(), training_sd, df, means_sd, training_share }
        })
        .collect();
    let warning = (per_cell.0 != per_cell.1).then(|| {
        format!(
            "the (method, realization) cells hold {} to {} trainings ('{column}'): their means are not equally \
             sure, and the paired model weighs every realization's mean equally",
            per_cell.0, per_cell.1
        )
    });
    Ok((design, Repeats { column: column.to_string(), per_cell, methods, warning }))
}

impl Design {
    /// Reads a long table of repeated trainings (`repeat`: the column naming the training
    /// within a realization, e.g. `train_rep`) and averages each (method, realization) cell
    /// ([`average_repeats`]). Rows with an empty or NA cell in a used column are dropped (named
    /// in the warnings); a (method, realization, repeat) on more than one row is an error naming
    /// the file and the lines.
    pub fn from_repeated_table(
        table: &Table,
        response: &str,
        group: &str,
        pair: &str,
        repeat: &str,
    ) -> Result<(Self, Repeats, Vec<String>)> {
        super::design::distinct_roles(
            table,
            &[("response", Some(response)), ("method", Some(group)), ("pair", Some(pair)), ("repeat", Some(repeat))],
        )?;
        let y = table.numbers(response)?;
        let g = table.labels(group)?;
        let p = table.labels(pair)?;
        let k = table.labels(repeat)?;
        let keep: Vec<usize> = (0..table.n_rows())
            .filter(|&i| y[i].is_some() && g[i].is_some() && p[i].is_some() && k[i].is_some())
            .collect();
        let warnings: Vec<String> = dropped_rows(table.n_rows(), &keep, &g).into_iter().collect();
        let dup =
            duplicated_cells(table, &keep, &[(group, g.as_slice()), (pair, p.as_slice()), (repeat, k.as_slice())]);
        if !dup.is_empty() {
            let shown = dup.iter().take(3).cloned().collect::<Vec<_>>().join("; ");
            let why = format!("{} training(s) on more than one row: {shown}", dup.len());
            return Err(crate::io::format_error(table.source(), why));
        }
        let text = |v: &[Option<String>]| keep.iter().map(|&i| v[i].clone().unwrap_or_default()).collect::<Vec<_>>();
        let values: Vec<f64> = keep.iter().map(|&i| y[i].unwrap_or(f64::NAN)).collect();
        let (design, repeats) =
            average_repeats(&text(&g), &text(&p), &text(&k), &values, repeat).map_err(|e| e.in_file(table.source()))?;
        Ok((design, repeats, warnings))
    }
}

#[cfg(test)]
mod tests;
