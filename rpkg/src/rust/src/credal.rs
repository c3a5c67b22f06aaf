//! Credal-set evaluation: R matrices / arrays and budgets in, `credence::credal` calls, R lists
//! out. The report stays on the Rust side behind an external pointer so that models can be
//! ranked over a lambda grid by the core.

use std::path::Path;

use credence::credal::{
    Budget, CredalOptions, CredalReport, CredalUnits, EntropyUnit, FocalSets, GroupSummary, JsForm, Normalisation,
    Stat, VertexMethod, dirichlet_samples, evaluate_credal, from_beliefs, from_intervals, from_probs, from_samples,
    rank_over_lambda,
};
use credence::ndarray::{Array2, Array3, ShapeBuilder};
use extendr_api::prelude::*;

use crate::msg;

type R<T> = std::result::Result<T, String>;

fn dims(name: &str, dim: &[i32]) -> R<Vec<usize>> {
    dim.iter().map(|&d| usize::try_from(d).map_err(|_| format!("{name}: dimension {d} is negative"))).collect()
}

/// An R matrix (column-major values plus dimensions) as an N x K array.
fn matrix(name: &str, values: Vec<f64>, dim: &[i32]) -> R<Array2<f64>> {
    match dims(name, dim)?.as_slice() {
        [n, k] => Array2::from_shape_vec((*n, *k).f(), values).map_err(|e| format!("{name}: {e}")),
        _ => Err(format!("{name}: dimensions {dim:?}; expected an N x K matrix")),
    }
}

/// An R array S x N x K as a standard-layout array.
fn array3(name: &str, values: Vec<f64>, dim: &[i32]) -> R<Array3<f64>> {
    match dims(name, dim)?.as_slice() {
        [s, n, k] => Ok(Array3::from_shape_vec((*s, *n, *k).f(), values)
            .map_err(|e| format!("{name}: {e}"))?
            .as_standard_layout()
            .into_owned()),
        _ => Err(format!("{name}: dimensions {dim:?}; expected an S x N x K array")),
    }
}

/// A budget from a JSON file path or from 0-based class lists (flattened values + lengths).
fn budget(file: &str, classes: &[i32], lengths: &[i32], k: i32) -> R<Option<FocalSets>> {
    if !file.is_empty() {
        return Budget::read(Path::new(file)).map(|b| Some(b.focal)).map_err(msg);
    }
    if lengths.is_empty() {
        return Ok(None);
    }
    let mut lists = Vec::with_capacity(lengths.len());
    let mut at = 0usize;
    for (j, &len) in lengths.iter().enumerate() {
        let len = usize::try_from(len).map_err(|_| format!("budget[[{}]]: negative length", j + 1))?;
        let list = classes
            .get(at..at + len)
            .ok_or_else(|| format!("budget[[{}]]: fewer class indices than lengths say", j + 1))?
            .iter()
            .map(|&c| usize::try_from(c).map_err(|_| format!("budget[[{}]]: class {} is not >= 1", j + 1, c + 1)))
            .collect::<R<Vec<usize>>>()?;
        at += len;
        lists.push(list);
    }
    let k = usize::try_from(k).map_err(|_| format!("n_classes = {k}: expected a count"))?;
    FocalSets::from_indices(k, &lists).map(Some).map_err(msg)
}

fn stat(s: &Stat) -> List {
    list!(mean = s.mean, sd = s.sd)
}

fn opt_stat(s: &Option<Stat>) -> Robj {
    s.as_ref().map_or(NULL.into(), |s| stat(s).into())
}

fn units(u: &CredalUnits) -> List {
    list!(
        kl = u.kl,
        js = u.js,
        ns = u.ns,
        e = u.e,
        koerner = u.koerner,
        pal = u.pal,
        credal_uncertainty = u.credal_uncertainty
    )
}

fn group(g: &GroupSummary) -> List {
    let e = if g.kl.is_some() {
        list!(
            lambda = g.e.iter().map(|l| l.lambda).collect::<Vec<_>>(),
            mean = g.e.iter().map(|l| l.mean).collect::<Vec<_>>(),
            sd = g.e.iter().map(|l| l.sd).collect::<Vec<_>>()
        )
        .into()
    } else {
        Robj::from(NULL)
    };
    list!(n = g.n as f64, ns = stat(&g.ns), kl = opt_stat(&g.kl), js = opt_stat(&g.js), e = e)
}

/// Evaluates one model's predictions; `kind` is probs, samples, intervals, beliefs or
/// dirichlet. Returns the report's summaries, per-point scores and the report itself.
#[extendr]
#[allow(clippy::too_many_arguments)]
fn glue_credal(
    kind: &str,
    values: Vec<f64>,
    dim: Vec<i32>,
    upper: Vec<f64>,
    budget_file: &str,
    budget_classes: Vec<i32>,
    budget_lengths: Vec<i32>,
    n_classes: i32,
    labels: Nullable<Vec<i32>>,
    lambdas: Vec<f64>,
    normalisation: &str,
    vertices: &str,
    draws: i32,
    seed: f64,
    js: &str,
    uncertainty_unit: &str,
) -> R<List> {
    let policy = Normalisation::parse(normalisation).map_err(msg)?;
    let js = JsForm::parse(js).map_err(msg)?;
    let uncertainty_unit = EntropyUnit::parse(uncertainty_unit).map_err(msg)?;
    let vertices: VertexMethod = vertices.parse().map_err(msg)?;
    let focal = budget(budget_file, &budget_classes, &budget_lengths, n_classes)?;
    let masses = match kind {
        "probs" => from_probs(matrix("probs", values, &dim)?.view()),
        "samples" => from_samples(array3("samples", values, &dim)?.view(), focal.as_ref(), policy),
        "intervals" => {
            let lower = matrix("lower", values, &dim)?;
            let upper = matrix("upper", upper, &dim)?;
            from_intervals(lower.view(), upper.view(), focal.as_ref(), policy)
        }
        "beliefs" => {
            let f = focal.ok_or("beliefs need a budget")?;
            from_beliefs(matrix("beliefs", values, &dim)?.view(), &f, policy)
        }
        "dirichlet" => {
            let draws = usize::try_from(draws).map_err(|_| format!("draws = {draws}: expected a count"))?;
            if !(seed.is_finite() && seed >= 0.0 && seed.fract() == 0.0) {
                return Err(format!("seed = {seed}: expected a whole number >= 0"));
            }
            let s = dirichlet_samples(matrix("alpha", values, &dim)?.view(), draws, seed as u64).map_err(msg)?;
            from_samples(s.view(), focal.as_ref(), policy)
        }
        other => return Err(format!("input kind {other}: expected probs, samples, intervals, beliefs or dirichlet")),
    }
    .map_err(msg)?;
    let labels = labels
        .into_option()
        .map(|y| {
            y.iter()
                .enumerate()
                .map(|(i, &l)| {
                    usize::try_from(l).map_err(|_| format!("y[{}] = {}: expected a class >= 1", i + 1, l + 1))
                })
                .collect::<R<Vec<usize>>>()
        })
        .transpose()?;
    let options = CredalOptions { vertices, lambdas, js, uncertainty_unit, ..Default::default() };
    let r = evaluate_credal(&masses, labels.as_deref(), &options).map_err(msg)?;
    let col = |f: fn(&credence::credal::PointScores) -> f64| r.points.iter().map(f).collect::<Vec<f64>>();
    let opt_col = |f: fn(&credence::credal::PointScores) -> Option<f64>| {
        r.points.iter().map(|p| f(p).unwrap_or(f64::NAN)).collect::<Vec<f64>>()
    };
    let points = list!(
        ns = col(|p| p.ns),
        kl = opt_col(|p| p.kl),
        js = opt_col(|p| p.js),
        koerner = col(|p| p.koerner),
        pal = col(|p| p.pal),
        credal_uncertainty = col(|p| p.credal_uncertainty),
        set_size = r.points.iter().map(|p| p.set_size as i32).collect::<Vec<i32>>(),
        predicted = r.points.iter().map(|p| p.predicted as i32 + 1).collect::<Vec<i32>>()
    );
    let overall = group(&r.overall);
    let out = list!(
        overall = overall,
        koerner = stat(&r.koerner),
        pal = stat(&r.pal),
        credal_uncertainty = stat(&r.credal_uncertainty),
        set_size = stat(&r.set_size),
        accuracy = r.accuracy.map_or(Robj::from(NULL), Robj::from),
        correct = r.correct.as_ref().map_or(Robj::from(NULL), |g| group(g).into()),
        incorrect = r.incorrect.as_ref().map_or(Robj::from(NULL), |g| group(g).into()),
        points = points,
        units = units(&r.units),
        report = ExternalPtr::new(r)
    );
    Ok(out)
}

/// A focal-set budget from training predictions by clustering: its sets as lists of 1-based
/// classes.
#[extendr]
fn glue_credal_budget(values: Vec<f64>, dim: Vec<i32>, labels: Vec<i32>, size: i32) -> R<List> {
    let p = matrix("train_probs", values, &dim)?;
    let y = labels
        .iter()
        .enumerate()
        .map(|(i, &l)| usize::try_from(l).map_err(|_| format!("y[{}] = {}: expected a class >= 1", i + 1, l + 1)))
        .collect::<R<Vec<usize>>>()?;
    let size = usize::try_from(size).map_err(|_| format!("size = {size}: expected a count"))?;
    let f = credence::credal::budget_by_clustering(p.view(), &y, size).map_err(msg)?;
    Ok(List::from_values(
        f.sets.iter().map(|&s| credence::credal::focal::members(s).iter().map(|&c| c as i32 + 1).collect::<Vec<i32>>()),
    ))
}

/// Ranks models (names and the `report` pointers of [`glue_credal`]) by mean E over `lambdas`.
#[extendr]
fn glue_credal_rank(names: Vec<String>, reports: List, lambdas: Vec<f64>) -> R<List> {
    let mut ptrs = Vec::with_capacity(reports.len());
    for (i, (_, r)) in reports.iter().enumerate() {
        let p = ExternalPtr::<CredalReport>::try_from(r)
            .map_err(|_| format!("model {}: not a credal evaluation", names.get(i).map_or("?", |s| s.as_str())))?;
        ptrs.push(p);
    }
    let models: Vec<(String, &CredalReport)> = names.into_iter().zip(ptrs.iter().map(|p| &**p)).collect();
    let ranking = rank_over_lambda(&models, &lambdas).map_err(msg)?;
    let mut lambda = Vec::new();
    let mut rank = Vec::new();
    let mut model = Vec::new();
    let mut e = Vec::new();
    for l in &ranking {
        for (j, (name, value)) in l.order.iter().zip(&l.e).enumerate() {
            lambda.push(l.lambda);
            rank.push(j as i32 + 1);
            model.push(name.clone());
            e.push(*value);
        }
    }
    Ok(list!(lambda = lambda, rank = rank, model = model, e = e))
}

extendr_module! {
    mod credal;
    fn glue_credal;
    fn glue_credal_rank;
    fn glue_credal_budget;
}
