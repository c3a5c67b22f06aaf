//! `credence credal`: credal-set evaluation (E = d + lambda * NS) of point, sample, Dirichlet
//! or random-set (belief) predictions.

use std::path::Path;

use anyhow::{Context, Result, bail};
use clap::Args;
use credence::credal::{
    Budget, CredalOptions, EntropyUnit, GroupSummary, JsForm, Normalisation, Stat, VertexMethod, budget_by_clustering,
    dirichlet_samples, evaluate_credal, from_beliefs, from_probs, from_samples,
};
use credence::io::read_array;
use credence::ndarray::Ix3;
use serde_json::{Map, Value, json};

use crate::table::{number, render};

/// Arguments of `credence credal`.
#[derive(Debug, Args)]
pub struct CredalArgs {
    /// Beliefs Bel(A_j) of the budget's focal sets, N x |budget| (random-set networks); needs
    /// --budget.
    #[arg(long, group = "input", requires = "budget")]
    beliefs: Option<String>,
    /// Point probabilities, N x K.
    #[arg(long, group = "input")]
    probs: Option<String>,
    /// Samples S x N x K (ensemble members, MC-dropout passes); focal sets from --budget, else
    /// the full powerset (K <= 16).
    #[arg(long, group = "input")]
    samples: Option<String>,
    /// Dirichlet concentrations N x K (evidential networks), turned into --draws seeded samples.
    #[arg(long, group = "input")]
    dirichlet: Option<String>,
    /// Focal-set budget JSON: `{"classes": [...], "focal_sets": [[0], [1, 4], ...]}`.
    #[arg(long)]
    budget: Option<String>,
    /// Training predictions N x K: without --budget, the budget is built by clustering them
    /// (singletons plus the --budget-size sets of 2-3 classes whose clusters overlap most).
    #[arg(long, requires = "train_labels", conflicts_with = "budget")]
    train_probs: Option<String>,
    /// Integer labels of the training predictions.
    #[arg(long, requires = "train_probs")]
    train_labels: Option<String>,
    /// Non-singleton sets of a budget built by clustering.
    #[arg(long, default_value_t = credence::credal::DEFAULT_BUDGET_SIZE)]
    budget_size: usize,
    /// Write the budget built by clustering to this JSON file (the format --budget reads).
    #[arg(long, requires = "train_probs")]
    budget_out: Option<String>,
    /// Integer class labels, length N (without them only NS and the other uncertainty
    /// measures are reported).
    #[arg(long)]
    labels: Option<String>,
    /// The lambda grid of E = d + lambda * NS (finite weights >= 0).
    #[arg(
        long,
        value_delimiter = ',',
        allow_negative_numbers = true,
        default_value = "0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1"
    )]
    lambda: Vec<f64>,
    /// Mass normalisation: none, clip, clip-residual-renormalise.
    #[arg(long, default_value = "clip-residual-renormalise")]
    normalisation: String,
    /// The JS ablation's score: divergence (the credal study's) or distance (its square root).
    #[arg(long, default_value = "divergence")]
    js: String,
    /// Unit of the credal uncertainty: bits (the credal study's) or nats.
    #[arg(long, default_value = "bits")]
    uncertainty_unit: String,
    /// Vertices: two-k (2K approximation) or exact (K <= 8).
    #[arg(long, default_value = "two-k")]
    vertices: String,
    /// Samples drawn per point from --dirichlet.
    #[arg(long, default_value_t = 100)]
    draws: usize,
    /// Seed of the Dirichlet draws.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
    /// Also write the credal-set size figure to this self-contained HTML page.
    #[arg(long)]
    html: Option<String>,
}

fn stat(s: &Stat) -> Value {
    json!({"mean": s.mean, "sd": s.sd})
}

fn group(g: &GroupSummary) -> Value {
    let mut e = Map::new();
    for l in &g.e {
        e.insert(l.lambda.to_string(), json!({"mean": l.mean, "sd": l.sd}));
    }
    json!({
        "n": g.n,
        "ns": stat(&g.ns),
        "kl": g.kl.as_ref().map(stat),
        "js": g.js.as_ref().map(stat),
        "e": if g.kl.is_some() { Value::Object(e) } else { Value::Null },
    })
}

/// Refuses `--budget-out` or `--html` on an input or on each other, before any work.
fn guard_outputs(a: &CredalArgs) -> Result<()> {
    let inputs =
        [&a.beliefs, &a.probs, &a.samples, &a.dirichlet, &a.budget, &a.train_probs, &a.train_labels, &a.labels];
    let inputs: Vec<&Path> = inputs.iter().filter_map(|p| p.as_deref().map(Path::new)).collect();
    let outputs =
        [("--budget-out", a.budget_out.as_deref().map(Path::new)), ("--html", a.html.as_deref().map(Path::new))];
    crate::output::guard(&inputs, &outputs)
}

/// Runs `credence credal`.
pub fn run(a: CredalArgs) -> Result<()> {
    guard_outputs(&a)?;
    let policy = Normalisation::parse(&a.normalisation)?;
    let vertices: VertexMethod = a.vertices.parse()?;
    let mut budget = a.budget.as_deref().map(|b| Budget::read(Path::new(b))).transpose()?;
    if let (Some(tp), Some(tl)) = (&a.train_probs, &a.train_labels) {
        let p = read_array(tp)?.into_matrix("train probs").map_err(|e| e.in_file(tp))?;
        let y = read_array(tl)?.into_labels().map_err(|e| e.in_file(tl))?;
        let focal = budget_by_clustering(p.view(), &y, a.budget_size).with_context(|| format!("{tp} and {tl}"))?;
        let built = Budget { classes: None, focal };
        if let Some(out) = &a.budget_out {
            credence::io::write_atomic(Path::new(out), serde_json::to_string_pretty(&built.to_json())?.as_bytes())
                .with_context(|| format!("writing {out}"))?;
        }
        budget = Some(built);
    }
    let masses = if let Some(path) = &a.beliefs {
        let b = read_array(path)?.into_matrix("beliefs").map_err(|e| e.in_file(path))?;
        from_beliefs(b.view(), &budget.as_ref().expect("clap requires --budget").focal, policy)
            .map_err(|e| e.in_file(path))?
    } else if let Some(path) = &a.probs {
        let p = read_array(path)?.into_matrix("probs").map_err(|e| e.in_file(path))?;
        from_probs(p.view()).map_err(|e| e.in_file(path))?
    } else if let Some(path) = &a.samples {
        let s = read_array(path)?.into_f64();
        let shape = s.shape().to_vec();
        let s = s.into_dimensionality::<Ix3>().map_err(|_| {
            credence::Error::Shape { array: "samples".into(), found: shape, expected: "S x N x K".into() }.in_file(path)
        })?;
        from_samples(s.view(), budget.as_ref().map(|b| &b.focal), policy).map_err(|e| e.in_file(path))?
    } else if let Some(path) = &a.dirichlet {
        let alpha = read_array(path)?.into_matrix("alpha").map_err(|e| e.in_file(path))?;
        let s = dirichlet_samples(alpha.view(), a.draws, a.seed).map_err(|e| e.in_file(path))?;
        from_samples(s.view(), budget.as_ref().map(|b| &b.focal), policy).map_err(|e| e.in_file(path))?
    } else {
        bail!("give one of --beliefs (with --budget), --probs, --samples or --dirichlet");
    };
    let labels = match &a.labels {
        Some(path) => Some(read_array(path)?.into_labels().map_err(|e| e.in_file(path))?),
        None => None,
    };
    let options = CredalOptions {
        vertices,
        lambdas: a.lambda.clone(),
        js: JsForm::parse(&a.js)?,
        uncertainty_unit: EntropyUnit::parse(&a.uncertainty_unit)?,
        ..Default::default()
    };
    // The labels file names the errors about the labels, not those about an option.
    let r = evaluate_credal(&masses, labels.as_deref(), &options).map_err(|e| match (&e, &a.labels) {
        (credence::Error::Argument { .. }, _) | (_, None) => anyhow::Error::from(e),
        (_, Some(l)) => anyhow::Error::from(e).context(format!("labels {l}")),
    })?;
    if let Some(page) = &a.html {
        let name = a.beliefs.as_deref().or(a.probs.as_deref()).or(a.samples.as_deref()).or(a.dirichlet.as_deref());
        let name = name.unwrap_or("predictions");
        let figure = credence_report::plots::credal::set_size_histogram(&[(name, &r)]);
        let html = credence_report::plots::html::standalone_html(&format!("credence credal: {name}"), &[figure]);
        credence::io::write_atomic(Path::new(page), html.as_bytes()).with_context(|| format!("writing {page}"))?;
    }
    if a.json {
        let mut out = match group(&r.overall) {
            Value::Object(m) => m,
            _ => unreachable!(),
        };
        out.insert("koerner".into(), stat(&r.koerner));
        out.insert("pal".into(), stat(&r.pal));
        out.insert("credal_uncertainty".into(), stat(&r.credal_uncertainty));
        out.insert("set_size".into(), stat(&r.set_size));
        if a.train_probs.is_some() {
            out.insert("budget".into(), budget.as_ref().map_or(Value::Null, Budget::to_json));
        }
        out.insert("accuracy".into(), json!(r.accuracy));
        out.insert("correct".into(), r.correct.as_ref().map_or(Value::Null, group));
        out.insert("incorrect".into(), r.incorrect.as_ref().map_or(Value::Null, group));
        out.insert("normalisation".into(), serde_json::to_value(policy)?);
        out.insert("units".into(), serde_json::to_value(&r.units)?);
        outln!("{}", serde_json::to_string_pretty(&Value::Object(out))?);
        return Ok(());
    }
    let fmt = |s: Option<&Stat>| {
        s.map_or(["NA".to_string(), "NA".to_string()], |s| [number(Some(s.mean)), number(Some(s.sd))])
    };
    let mut cells = vec![["group", "n", "quantity", "mean", "sd"].map(String::from).to_vec()];
    let u = &r.units;
    let mut add = |name: &str, g: &GroupSummary| {
        let mut rows: Vec<(String, Option<Stat>)> = vec![
            (format!("ns [{}]", u.ns), Some(g.ns)),
            (format!("kl [{}]", u.kl), g.kl),
            (format!("js [{}]", u.js), g.js),
        ];
        for l in &g.e {
            rows.push((format!("e(lambda={}) [{}]", l.lambda, u.e), Some(Stat { mean: l.mean, sd: l.sd })));
        }
        for (q, s) in rows {
            let [m, sd] = fmt(s.as_ref());
            cells.push(vec![name.into(), g.n.to_string(), q, m, sd]);
        }
    };
    add("all", &r.overall);
    if let (Some(c), Some(i)) = (&r.correct, &r.incorrect) {
        add("correct", c);
        add("incorrect", i);
    }
    out!("{}", render(&cells));
    outln!(
        "koerner {}  pal {}  credal uncertainty {} {}  set size {}{}",
        number(Some(r.koerner.mean)),
        number(Some(r.pal.mean)),
        number(Some(r.credal_uncertainty.mean)),
        u.credal_uncertainty,
        number(Some(r.set_size.mean)),
        r.accuracy.map(|a| format!("  accuracy {a:.4}")).unwrap_or_default()
    );
    Ok(())
}
