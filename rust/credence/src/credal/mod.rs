//! Credal-set evaluation: one metric for point, sample, interval, mass and belief predictions.
//!
//! Every prediction becomes a mass function m over focal sets A (bitmasks over K classes;
//! [`focal`]); its credal set is {p : p(A) >= Bel(A) for all A}. Pipeline:
//!
//! 1. **Lower probability** ([`lower`]): from samples p_1..p_S,
//!    P_low(A) = min_s sum_{c in A} p_s(c); from probability intervals [l, u],
//!    P_low(A) = max(sum_{c in A} l_c, 1 - sum_{c not in A} u_c); beliefs of a random-set
//!    network are taken as P_low directly. Focal sets are a budget (JSON) or the full powerset
//!    (K <= 16).
//! 2. **Moebius inverse** ([`moebius`]): m(A) = sum_{B subset A} (-1)^{|A \ B|} P_low(B), the
//!    sum running over the budget's sets (the fast Moebius transform for the powerset). The
//!    whole frame always gets m = 1 - the rest (it is added when the budget lacks it).
//! 3. **Normalisation** ([`Normalisation`]): `None`, `Clip` (negatives to 0), or the default
//!    `ClipResidualRenormalise`: negative masses of proper sets to 0, the frame gets
//!    max(0, 1 - their sum), then everything is divided by the total (so two pairs of mass 0.5
//!    each over three classes, plus a frame of -0.5, become three pairs of 1/3). The default is
//!    the study's rule as its random-set network's reference code applies it (`belief_to_mass`:
//!    clip the budget's negative masses to zero, append the frame with the clipped residual,
//!    divide by the sum); plain `Clip` is the variant that leaves the total off one.
//! 4. **Belief quantities** ([`belief`]): Bel, Pl, BetP(c) = sum_{A containing c} m(A)/|A|.
//! 5. **Vertices** ([`vertices`]): the 2K approximation (default) or all K! permutations for
//!    K <= 8.
//! 6. **Scores** ([`score`]): d = min over vertices of KL(one-hot(y) || v) = -ln max(v_y, eps),
//!    eps = 1e-12; since the vertex with y first has v_y = Pl({y}), d = -ln Pl({y}) in closed
//!    form. The JS ablation reports the Jensen-Shannon divergence (natural log; `JsForm::Distance`
//!    gives its square root, scipy's `jensenshannon`), also minimised over vertices (it only
//!    depends on v_y and decreases in it, so it too is attained at Pl({y})). Non-specificity
//!    NS = sum m(A) ln|A| (0 for point predictions), Koerner sum m(A)|A|, Pal sum m(A)/|A|;
//!    credal uncertainty = max entropy - min entropy over the intervals [Bel({c}), Pl({c})], in
//!    bits as the credal evaluation study reports it (`EntropyUnit::Nats` on request), the max
//!    exact by water-filling, the min over the polytope's
//!    vertices visited by the same permutations (exact for `VertexMethod::Exact`, an upper
//!    bound on the minimum otherwise). E = d + lambda NS, reported as mean and population sd
//!    over points, overall and split into correctly / incorrectly classified points; the
//!    predicted class is argmax of p (point probabilities), of the sample mean (samples,
//!    Dirichlet draws), of the upper probability (intervals) or of BetP (masses, beliefs),
//!    ties to the lowest class index.
//!
//! Probabilities and beliefs are accepted within 1e-3 of [0, 1] (sample rows summing to 1
//! within 1e-3), the crate's tolerance; Dirichlet draws use one ChaCha8 stream per point.
//!
//! ```
//! use ndarray::array;
//! use credence::credal::{evaluate_credal, from_samples, CredalOptions, Normalisation};
//!
//! // Two samples over three classes on one test point, label 0.
//! let s = array![[[0.7, 0.2, 0.1]], [[0.5, 0.3, 0.2]]];
//! let m = from_samples(s.view(), None, Normalisation::default())?;
//! let r = evaluate_credal(&m, Some(&[0]), &CredalOptions::default())?;
//! assert!((r.overall.kl.unwrap().mean - 0.356675).abs() < 1e-6); // -ln Pl({0}) = -ln 0.7
//! # Ok::<(), credence::Error>(())
//! ```

pub mod belief;
pub mod clustering;
pub mod focal;
pub mod inputs;
pub mod lower;
pub mod moebius;
pub mod score;
pub mod vertices;

pub use clustering::{DEFAULT_BUDGET_SIZE, budget_by_clustering, class_overlaps};
pub use focal::{Budget, FocalSets};
pub use inputs::{
    InputKind, MassFunctions, dirichlet_samples, from_beliefs, from_intervals, from_masses, from_probs, from_samples,
};
pub use moebius::Normalisation;
pub use score::{
    CredalOptions, CredalReport, CredalUnits, EntropyUnit, GroupSummary, JsForm, LambdaRanking, LambdaStat,
    PointScores, Stat, evaluate_credal, rank_over_lambda,
};
pub use vertices::VertexMethod;

#[cfg(test)]
mod tests;
