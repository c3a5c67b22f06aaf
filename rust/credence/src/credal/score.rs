//! Scores of credal predictions: distance to the label (KL, JS), non-specificity and related
//! uncertainty measures, E = d + lambda * NS, summaries and the ranking over a lambda grid.

use rayon::prelude::*;

use super::focal::FocalSets;
use super::inputs::MassFunctions;
use super::vertices::{VertexMethod, interval_vertex, permutations, vertex};
use crate::error::{Error, Result};

/// Default epsilon guard: KL(one-hot(y) || v) = -ln max(v_y, EPSILON).
pub const EPSILON: f64 = 1e-12;

/// Which Jensen-Shannon quantity the JS ablation reports (natural log either way).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum JsForm {
    /// The JS divergence, as the credal evaluation study's ablation uses it. The default.
    #[default]
    Divergence,
    /// Its square root, the Jensen-Shannon distance (scipy's `jensenshannon`).
    Distance,
}

impl JsForm {
    /// Parses `divergence` or `distance`.
    pub fn parse(s: &str) -> Result<Self> {
        crate::error::parse_choice("js", s, &[("divergence", Self::Divergence), ("distance", Self::Distance)])
    }
}

/// The unit of an entropy: the logarithm's base.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EntropyUnit {
    /// log2: the credal evaluation study reports credal uncertainty in bits. The default.
    #[default]
    Bits,
    /// Natural log.
    Nats,
}

impl EntropyUnit {
    /// Parses `bits` or `nats`.
    pub fn parse(s: &str) -> Result<Self> {
        crate::error::parse_choice("unit", s, &[("bits", Self::Bits), ("nats", Self::Nats)])
    }

    /// The factor that turns nats into this unit.
    pub fn per_nat(self) -> f64 {
        match self {
            EntropyUnit::Bits => std::f64::consts::LOG2_E,
            EntropyUnit::Nats => 1.0,
        }
    }
}

/// Options of [`evaluate_credal`].
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CredalOptions {
    /// Floor on v_y inside the logarithm of the KL distance (default [`EPSILON`] = 1e-12).
    pub epsilon: f64,
    /// Vertices visited for d and for the minimum entropy (default the 2K approximation).
    pub vertices: VertexMethod,
    /// The lambda grid of E = d + lambda * NS (default 0, 0.1, ..., 1.0).
    pub lambdas: Vec<f64>,
    /// JS divergence (default) or distance.
    pub js: JsForm,
    /// Unit of the credal uncertainty (default bits, as in the credal evaluation study).
    pub uncertainty_unit: EntropyUnit,
}

impl Default for CredalOptions {
    fn default() -> Self {
        CredalOptions {
            epsilon: EPSILON,
            vertices: VertexMethod::TwoK,
            lambdas: default_lambdas(),
            js: JsForm::default(),
            uncertainty_unit: EntropyUnit::default(),
        }
    }
}

/// The unit of every score in a [`CredalReport`], written beside the numbers in JSON.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CredalUnits {
    /// d (KL): nats.
    pub kl: &'static str,
    /// The JS score: `nats (divergence)` or `sqrt(nats) (distance)`.
    pub js: &'static str,
    /// NS: nats.
    pub ns: &'static str,
    /// E = d + lambda NS: nats.
    pub e: &'static str,
    /// Koerner's measure: expected focal-set size (classes).
    pub koerner: &'static str,
    /// Pal's measure: expected inverse focal-set size (1 / classes).
    pub pal: &'static str,
    /// Credal uncertainty: `bits` or `nats`.
    pub credal_uncertainty: &'static str,
}

impl CredalUnits {
    /// The units under `options`.
    pub fn of(options: &CredalOptions) -> Self {
        CredalUnits {
            kl: "nats",
            js: match options.js {
                JsForm::Divergence => "nats (divergence)",
                JsForm::Distance => "sqrt(nats) (distance)",
            },
            ns: "nats",
            e: "nats",
            koerner: "classes",
            pal: "1/classes",
            credal_uncertainty: match options.uncertainty_unit {
                EntropyUnit::Bits => "bits",
                EntropyUnit::Nats => "nats",
            },
        }
    }
}

/// 0, 0.1, ..., 1.0.
pub fn default_lambdas() -> Vec<f64> {
    (0..=10).map(|i| i as f64 / 10.0).collect()
}

/// Scores of one test point.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PointScores {
    /// Non-specificity NS = sum_A m(A) ln|A|.
    pub ns: f64,
    /// Koerner's measure sum_A m(A) |A|.
    pub koerner: f64,
    /// Pal's measure sum_A m(A) / |A|.
    pub pal: f64,
    /// Max entropy - min entropy over the intervals [Bel({c}), Pl({c})], in
    /// [`CredalOptions::uncertainty_unit`].
    pub credal_uncertainty: f64,
    /// Predicted class.
    pub predicted: usize,
    /// Credal-set size: the classes not dominated under interval dominance, i.e. the c with
    /// Pl({c}) >= max_d Bel({d}) (1 for a point prediction with a unique argmax, K when no
    /// class has belief).
    pub set_size: usize,
    /// d = min over vertices of KL(one-hot(y) || v) (with labels).
    pub kl: Option<f64>,
    /// min over vertices of the Jensen-Shannon divergence (or distance, per
    /// [`CredalOptions::js`]) to one-hot(y) (with labels).
    pub js: Option<f64>,
}

/// Mean and population standard deviation.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Stat {
    /// Mean.
    pub mean: f64,
    /// Population standard deviation (divisor n).
    pub sd: f64,
}

impl Stat {
    /// Of `x` (NaN for an empty slice), summed in order.
    pub fn of(x: &[f64]) -> Stat {
        let n = x.len() as f64;
        let mean = x.iter().sum::<f64>() / n;
        let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
        Stat { mean, sd: var.sqrt() }
    }
}

/// E = d + lambda * NS at one lambda.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct LambdaStat {
    /// lambda.
    pub lambda: f64,
    /// Mean of E.
    pub mean: f64,
    /// Population sd of E.
    pub sd: f64,
}

/// Summary of a group of points.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct GroupSummary {
    /// Number of points.
    pub n: usize,
    /// NS.
    pub ns: Stat,
    /// d (KL), with labels.
    pub kl: Option<Stat>,
    /// JS divergence (or distance), with labels.
    pub js: Option<Stat>,
    /// E over the lambda grid, with labels.
    pub e: Vec<LambdaStat>,
}

/// Result of [`evaluate_credal`].
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CredalReport {
    /// All points.
    pub overall: GroupSummary,
    /// Koerner's measure.
    pub koerner: Stat,
    /// Pal's measure.
    pub pal: Stat,
    /// Credal uncertainty (max - min entropy), in [`CredalUnits::credal_uncertainty`].
    pub credal_uncertainty: Stat,
    /// Credal-set size (classes not dominated by interval dominance).
    pub set_size: Stat,
    /// Fraction of points whose predicted class is the label (with labels).
    pub accuracy: Option<f64>,
    /// Correctly classified points (with labels).
    pub correct: Option<GroupSummary>,
    /// Misclassified points (with labels).
    pub incorrect: Option<GroupSummary>,
    /// The unit of each score.
    pub units: CredalUnits,
    /// Per-point scores.
    #[serde(skip)]
    pub points: Vec<PointScores>,
}

/// Entropy -sum p ln p (natural log; 0 ln 0 = 0).
pub fn entropy(p: &[f64]) -> f64 {
    p.iter().map(|&x| if x > 0.0 { -x * x.ln() } else { 0.0 }).sum()
}

/// KL(one-hot(y) || v) = -ln max(v_y, epsilon).
pub fn kl_one_hot(v: &[f64], y: usize, epsilon: f64) -> f64 {
    -v[y].max(epsilon).ln()
}

/// Jensen-Shannon divergence between one-hot(y) and v (natural log).
pub fn js_one_hot(v: &[f64], y: usize) -> f64 {
    let mut js = 0.0;
    for (c, &q) in v.iter().enumerate() {
        let q = q.max(0.0);
        let p = if c == y { 1.0 } else { 0.0 };
        let m = 0.5 * (p + q);
        if p > 0.0 {
            js += 0.5 * p * (p / m).ln();
        }
        if q > 0.0 {
            js += 0.5 * q * (q / m).ln();
        }
    }
    js.max(0.0)
}

/// Maximum entropy over {l <= p <= u, sum p = 1}: the water-filling solution
/// p_c = clamp(t, l_c, u_c), with t found exactly on the piecewise-linear sum.
pub fn max_entropy(lower: &[f64], upper: &[f64]) -> f64 {
    let fill = |t: f64| lower.iter().zip(upper).map(|(&l, &u)| t.clamp(l, u.max(l))).sum::<f64>();
    let mut knots: Vec<f64> = lower.iter().chain(upper).copied().collect();
    knots.sort_by(f64::total_cmp);
    let mut t = knots[knots.len() - 1];
    let mut prev = (knots[0], fill(knots[0]));
    if prev.1 < 1.0 {
        for &b in &knots[1..] {
            let fb = fill(b);
            if fb >= 1.0 {
                t = if fb > prev.1 { prev.0 + (1.0 - prev.1) * (b - prev.0) / (fb - prev.1) } else { b };
                break;
            }
            prev = (b, fb);
        }
    } else {
        t = knots[0];
    }
    let p: Vec<f64> = lower.iter().zip(upper).map(|(&l, &u)| t.clamp(l, u.max(l))).collect();
    entropy(&p)
}

fn point_scores(
    masses: &[f64],
    sets: &FocalSets,
    predicted: usize,
    y: Option<usize>,
    perms: &[Vec<usize>],
    options: &CredalOptions,
) -> PointScores {
    let eps = options.epsilon;
    let (mut ns, mut koerner, mut pal) = (0.0, 0.0, 0.0);
    for (&m, &a) in masses.iter().zip(&sets.sets) {
        let size = a.count_ones() as f64;
        ns += m * size.ln();
        koerner += m * size;
        pal += m / size;
    }
    let (lower, upper) = super::belief::singleton_intervals(masses, sets);
    let best_lower = lower.iter().copied().fold(0.0, f64::max);
    // A 1e-12 slack so that round-off in sums of masses does not split ties.
    let set_size = upper.iter().filter(|&&u| u >= best_lower - 1e-12).count();
    let min_entropy = perms.iter().map(|p| entropy(&interval_vertex(&lower, &upper, p))).fold(f64::INFINITY, f64::min);
    let credal_uncertainty = (max_entropy(&lower, &upper) - min_entropy).max(0.0) * options.uncertainty_unit.per_nat();
    let (kl, js) = match y {
        Some(y) => {
            let (mut kl, mut js) = (f64::INFINITY, f64::INFINITY);
            for p in perms {
                let v = vertex(masses, sets, p);
                kl = kl.min(kl_one_hot(&v, y, eps));
                js = js.min(js_one_hot(&v, y));
            }
            // The square root is monotone, so the distance's minimum is the divergence's root.
            let js = match options.js {
                JsForm::Divergence => js,
                JsForm::Distance => js.sqrt(),
            };
            (Some(kl), Some(js))
        }
        None => (None, None),
    };
    PointScores { ns, koerner, pal, credal_uncertainty, predicted, set_size, kl, js }
}

fn summarise(points: &[&PointScores], lambdas: &[f64]) -> GroupSummary {
    let ns: Vec<f64> = points.iter().map(|p| p.ns).collect();
    let kl: Option<Vec<f64>> = points.iter().map(|p| p.kl).collect();
    let js: Option<Vec<f64>> = points.iter().map(|p| p.js).collect();
    let e = match &kl {
        Some(d) => lambdas
            .iter()
            .map(|&lambda| {
                let e: Vec<f64> = d.iter().zip(&ns).map(|(d, s)| d + lambda * s).collect();
                let s = Stat::of(&e);
                LambdaStat { lambda, mean: s.mean, sd: s.sd }
            })
            .collect(),
        None => Vec::new(),
    };
    GroupSummary { n: points.len(), ns: Stat::of(&ns), kl: kl.map(|d| Stat::of(&d)), js: js.map(|d| Stat::of(&d)), e }
}

/// Scores every point of `m` (in parallel; summaries are summed in point order, so results do
/// not depend on the number of threads) and summarises them overall and, with `labels`, split
/// into correctly and incorrectly classified points.
pub fn evaluate_credal(m: &MassFunctions, labels: Option<&[usize]>, options: &CredalOptions) -> Result<CredalReport> {
    let n = m.masses.nrows();
    if n == 0 {
        return Err(Error::shape("predictions", &[0], "at least one test point"));
    }
    if let Some(y) = labels {
        if y.len() != n {
            return Err(Error::shape("labels", &[y.len()], format!("one label per test point, [{n}]")));
        }
        if let Some((i, &c)) = y.iter().enumerate().find(|&(_, &c)| c >= m.sets.k) {
            return Err(Error::value("labels", &[i], c, format!("a class index below {}", m.sets.k)));
        }
    }
    if !(options.epsilon > 0.0 && options.epsilon < 1.0) {
        return Err(Error::argument("epsilon", options.epsilon, "in (0, 1)"));
    }
    check_lambdas(&options.lambdas)?;
    let perms = permutations(m.sets.k, options.vertices)?;
    let points: Vec<PointScores> = (0..n)
        .into_par_iter()
        .map(|i| {
            let row = m.masses.row(i);
            let masses = row.as_slice().expect("standard layout");
            point_scores(masses, &m.sets, m.predicted[i], labels.map(|y| y[i]), &perms, options)
        })
        .collect();
    let all: Vec<&PointScores> = points.iter().collect();
    let overall = summarise(&all, &options.lambdas);
    let stat = |f: fn(&PointScores) -> f64| Stat::of(&points.iter().map(f).collect::<Vec<_>>());
    let (accuracy, correct, incorrect) = match labels {
        Some(y) => {
            let good: Vec<&PointScores> =
                points.iter().enumerate().filter(|&(i, p)| p.predicted == y[i]).map(|(_, p)| p).collect();
            let bad: Vec<&PointScores> =
                points.iter().enumerate().filter(|&(i, p)| p.predicted != y[i]).map(|(_, p)| p).collect();
            (
                Some(good.len() as f64 / n as f64),
                Some(summarise(&good, &options.lambdas)),
                Some(summarise(&bad, &options.lambdas)),
            )
        }
        None => (None, None, None),
    };
    // A lambda large enough to overflow E (or its sd) would print inf or null.
    let groups = [Some(&overall), correct.as_ref(), incorrect.as_ref()];
    let nonempty = groups.into_iter().flatten().filter(|g| g.n > 0);
    if let Some(l) = nonempty.flat_map(|g| &g.e).find(|l| !(l.mean.is_finite() && l.sd.is_finite())) {
        return Err(Error::argument(
            "lambda",
            format!("{:e}", l.lambda),
            "a weight small enough that E = d + lambda NS and its sd are finite",
        ));
    }
    Ok(CredalReport {
        overall,
        koerner: stat(|p| p.koerner),
        pal: stat(|p| p.pal),
        credal_uncertainty: stat(|p| p.credal_uncertainty),
        set_size: stat(|p| p.set_size as f64),
        accuracy,
        correct,
        incorrect,
        units: CredalUnits::of(options),
        points,
    })
}

/// Every lambda of a grid must be a finite weight >= 0: NaN would give NaN rows and a negative
/// lambda rewards imprecision, so neither is an E.
fn check_lambdas(lambdas: &[f64]) -> Result<()> {
    match lambdas.iter().find(|l| !(l.is_finite() && **l >= 0.0)) {
        Some(&l) => Err(Error::argument("lambda", l, "a finite weight >= 0 of NS in E = d + lambda NS")),
        None => Ok(()),
    }
}

/// Models ranked by mean E at one lambda.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LambdaRanking {
    /// lambda.
    pub lambda: f64,
    /// Model names, best (lowest mean E) first; ties keep the input order.
    pub order: Vec<String>,
    /// Mean E of each model in `order`.
    pub e: Vec<f64>,
}

/// Ranks models (name, report with labels) by mean E = mean d + lambda * mean NS over `lambdas`.
pub fn rank_over_lambda(models: &[(String, &CredalReport)], lambdas: &[f64]) -> Result<Vec<LambdaRanking>> {
    check_lambdas(lambdas)?;
    let mut base = Vec::with_capacity(models.len());
    for (name, r) in models {
        let kl = r.overall.kl.ok_or_else(|| Error::argument("model", name, "a report computed with labels"))?;
        base.push((name.clone(), kl.mean, r.overall.ns.mean));
    }
    Ok(lambdas
        .iter()
        .map(|&lambda| {
            let mut scored: Vec<(String, f64)> = base.iter().map(|(n, d, s)| (n.clone(), d + lambda * s)).collect();
            scored.sort_by(|a, b| a.1.total_cmp(&b.1));
            LambdaRanking {
                lambda,
                order: scored.iter().map(|s| s.0.clone()).collect(),
                e: scored.iter().map(|s| s.1).collect(),
            }
        })
        .collect())
}
