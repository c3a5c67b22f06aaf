//! Every prediction kind mapped to mass functions over focal sets (one per test point), plus
//! the predicted class of each point.

use ndarray::{Array2, Array3, ArrayView2, ArrayView3, Axis};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rand_distr::Distribution;
use rayon::prelude::*;

use super::belief::{betp, singleton_intervals};
use super::focal::{FocalSets, frame};
use super::lower::{TOLERANCE, check_probabilities, lower_from_intervals, lower_from_samples, to_matrix};
use super::moebius::{MoebiusPlan, Normalisation, fast_moebius, normalise};
use crate::error::{Error, Result};

/// The input a credal set came from; decides how the predicted class is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InputKind {
    /// Point probabilities: argmax p.
    Probs,
    /// Samples (or Dirichlet draws): argmax of the sample mean.
    Samples,
    /// Probability intervals: argmax of the upper probability.
    Intervals,
    /// Mass functions: argmax BetP.
    Masses,
    /// Beliefs over a budget: argmax BetP.
    Beliefs,
}

/// Mass functions of N test points over common focal sets (the whole frame always included).
#[derive(Debug, Clone, serde::Serialize)]
pub struct MassFunctions {
    /// The focal sets (columns of `masses`), frame included.
    pub sets: FocalSets,
    /// N x |sets| masses after the normalisation policy.
    #[serde(skip)]
    pub masses: Array2<f64>,
    /// Predicted class of each point (ties go to the lowest index).
    pub predicted: Vec<usize>,
    /// Where the masses came from.
    pub kind: InputKind,
}

fn argmax(v: impl IntoIterator<Item = f64>) -> usize {
    let mut best = (0, f64::NEG_INFINITY);
    for (i, x) in v.into_iter().enumerate() {
        if x > best.1 {
            best = (i, x);
        }
    }
    best.0
}

/// Point probabilities N x K: each point's credal set is the single distribution (mass on
/// singletons, NS = 0).
pub fn from_probs(probs: ArrayView2<f64>) -> Result<MassFunctions> {
    let (n, k) = probs.dim();
    check_probabilities("probs", probs.insert_axis(Axis(0)))?;
    let sets = FocalSets::new(k, (0..k).map(|c| 1u64 << c).collect())?.with_frame();
    let mut masses = Array2::zeros((n, sets.len()));
    masses.slice_mut(ndarray::s![.., ..k]).assign(&probs);
    let predicted = probs.rows().into_iter().map(|r| argmax(r.iter().copied())).collect();
    Ok(MassFunctions { sets, masses, predicted, kind: InputKind::Probs })
}

/// Samples S x N x K: lower probability over `budget` (or the full powerset when `None`,
/// through the fast Moebius transform), Moebius inverse, then `policy`.
pub fn from_samples(
    samples: ArrayView3<f64>,
    budget: Option<&FocalSets>,
    policy: Normalisation,
) -> Result<MassFunctions> {
    let (s, n, k) = samples.dim();
    if s == 0 || n == 0 || k == 0 {
        return Err(Error::shape("samples", &[s, n, k], "S x N x K with S, N, K >= 1"));
    }
    let predicted =
        samples.mean_axis(Axis(0)).expect("S >= 1").rows().into_iter().map(|r| argmax(r.iter().copied())).collect();
    let mut out = match budget {
        Some(b) => {
            let low = lower_from_samples(samples, b)?;
            from_lower(low.view(), b, policy, "samples")?
        }
        None => {
            check_probabilities("samples", samples)?;
            let sets = FocalSets::powerset(k)?;
            let full = 1usize << k;
            let rows: Vec<Vec<f64>> = (0..n)
                .into_par_iter()
                .map(|i| {
                    let mut low = vec![f64::INFINITY; full];
                    let mut sum = vec![0.0; full];
                    for si in 0..s {
                        for a in 1..full {
                            let c = a.trailing_zeros() as usize;
                            sum[a] = sum[a & (a - 1)] + samples[[si, i, c]];
                            low[a] = low[a].min(sum[a]);
                        }
                    }
                    low[0] = 0.0;
                    low[full - 1] = 1.0;
                    fast_moebius(&mut low);
                    let mut m = low[1..].to_vec();
                    normalise(&mut m, &sets, policy);
                    m
                })
                .collect();
            MassFunctions { masses: to_matrix(rows, sets.len()), sets, predicted: Vec::new(), kind: InputKind::Samples }
        }
    };
    out.predicted = predicted;
    out.kind = InputKind::Samples;
    Ok(out)
}

/// Probability intervals (N x K lower and upper): lower probabilities over `budget` (or the
/// powerset), Moebius inverse, `policy`.
pub fn from_intervals(
    lower: ArrayView2<f64>,
    upper: ArrayView2<f64>,
    budget: Option<&FocalSets>,
    policy: Normalisation,
) -> Result<MassFunctions> {
    let sets = match budget {
        Some(b) => b.clone(),
        None => FocalSets::powerset(lower.ncols())?,
    };
    let low = lower_from_intervals(lower, upper, &sets)?;
    let mut out = from_lower(low.view(), &sets, policy, "intervals")?;
    out.predicted = upper.rows().into_iter().map(|r| argmax(r.iter().copied())).collect();
    out.kind = InputKind::Intervals;
    Ok(out)
}

/// Beliefs (lower probabilities) N x |budget| of the budget's focal sets, as output by a
/// random-set network: Moebius inverse within the budget, then `policy`. Values must lie in
/// [0, 1].
pub fn from_beliefs(beliefs: ArrayView2<f64>, budget: &FocalSets, policy: Normalisation) -> Result<MassFunctions> {
    from_lower(beliefs, budget, policy, "beliefs")
}

fn from_lower(low: ArrayView2<f64>, budget: &FocalSets, policy: Normalisation, name: &str) -> Result<MassFunctions> {
    let (n, m) = low.dim();
    if m != budget.len() {
        return Err(Error::shape(name, &[n, m], format!("N x {} (one column per focal set)", budget.len())));
    }
    for ((i, j), &v) in low.indexed_iter() {
        if !(-TOLERANCE..=1.0 + TOLERANCE).contains(&v) {
            return Err(Error::value(name, &[i, j], v, "a belief in [0, 1] (within 1e-3)"));
        }
    }
    let plan = MoebiusPlan::new(budget);
    let sets = budget.with_frame();
    let whole = frame(sets.k);
    let rows: Vec<Vec<f64>> = (0..n)
        .into_par_iter()
        .map(|i| {
            let f: Vec<f64> = low.row(i).to_vec();
            let mut masses = plan.apply(&f);
            // The frame's mass is 1 - the rest (its belief is 1).
            let rest: f64 = masses.iter().zip(&budget.sets).filter(|&(_, &a)| a != whole).map(|(m, _)| m).sum();
            match budget.frame_index() {
                Some(j) => masses[j] = 1.0 - rest,
                None => masses.push(1.0 - rest),
            }
            normalise(&mut masses, &sets, policy);
            masses
        })
        .collect();
    let masses = to_matrix(rows, sets.len());
    let predicted =
        masses.rows().into_iter().map(|r| argmax(betp(r.as_slice().expect("standard layout"), &sets))).collect();
    Ok(MassFunctions { sets, masses, predicted, kind: InputKind::Beliefs })
}

/// Mass functions N x |sets| given directly (the frame added with mass 0 when missing),
/// then `policy`.
pub fn from_masses(masses: ArrayView2<f64>, sets: &FocalSets, policy: Normalisation) -> Result<MassFunctions> {
    let (n, m) = masses.dim();
    if m != sets.len() {
        return Err(Error::shape("masses", &[n, m], format!("N x {} (one column per focal set)", sets.len())));
    }
    let full = sets.with_frame();
    let mut rows = Vec::with_capacity(n);
    for i in 0..n {
        let mut row = masses.row(i).to_vec();
        for (j, v) in row.iter().enumerate() {
            if !v.is_finite() {
                return Err(Error::value("masses", &[i, j], v, "a finite mass"));
            }
        }
        if full.len() > m {
            row.push(0.0);
        }
        normalise(&mut row, &full, policy);
        rows.push(row);
    }
    let masses = to_matrix(rows, full.len());
    let predicted =
        masses.rows().into_iter().map(|r| argmax(betp(r.as_slice().expect("standard layout"), &full))).collect();
    Ok(MassFunctions { sets: full, masses, predicted, kind: InputKind::Masses })
}

/// Draws `s` categorical distributions per point from Dirichlet(alpha_i) (alpha N x K, all
/// positive), as S x N x K samples for [`from_samples`]. Point i uses its own ChaCha8 stream
/// seeded from (seed, i), so the draws do not depend on the number of threads.
pub fn dirichlet_samples(alpha: ArrayView2<f64>, s: usize, seed: u64) -> Result<Array3<f64>> {
    let (n, k) = alpha.dim();
    if s == 0 {
        // Named as the CLI (--draws) and R (draws =) name it.
        return Err(Error::argument("draws", s, "at least 1 sample per point"));
    }
    // The draws, their array and the masses made from them: three copies of S x N x K.
    crate::limits::memory("draws", s as u64, 3 * 8 * (n * k) as u128, 0, "Dirichlet draws per point")?;
    for ((i, c), &a) in alpha.indexed_iter() {
        if !(a > 0.0 && a.is_finite()) {
            return Err(Error::value("alpha", &[i, c], a, "a positive finite concentration"));
        }
    }
    let draws: Vec<Vec<f64>> = (0..n)
        .into_par_iter()
        .map(|i| {
            let mut rng = ChaCha8Rng::seed_from_u64(stream_seed(seed, i as u64));
            let mut out = Vec::with_capacity(s * k);
            for _ in 0..s {
                let g: Vec<f64> = (0..k)
                    .map(|c| rand_distr::Gamma::new(alpha[[i, c]], 1.0).expect("checked alpha").sample(&mut rng))
                    .collect();
                let total: f64 = g.iter().sum();
                out.extend(g.iter().map(|x| if total > 0.0 { x / total } else { 1.0 / k as f64 }));
            }
            out
        })
        .collect();
    let mut a = Array3::zeros((s, n, k));
    for (i, d) in draws.iter().enumerate() {
        for si in 0..s {
            for c in 0..k {
                a[[si, i, c]] = d[si * k + c];
            }
        }
    }
    Ok(a)
}

/// The class-wise intervals [Bel({c}), Pl({c})] of point `i`.
pub fn intervals_of(m: &MassFunctions, i: usize) -> (Vec<f64>, Vec<f64>) {
    singleton_intervals(m.masses.row(i).as_slice().expect("standard layout"), &m.sets)
}

pub(crate) use crate::seeds::stream_seed;
