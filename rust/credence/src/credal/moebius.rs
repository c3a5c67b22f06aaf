//! Moebius inversion from lower probabilities (or beliefs) to masses, and the normalisation
//! policy that turns a signed result into a mass function.

use super::focal::{FocalSets, frame};
use crate::error::Result;

/// What to do with masses that are negative or do not sum to one after Moebius inversion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Normalisation {
    /// Keep the signed masses as computed (the frame holds 1 - the rest).
    None,
    /// Set negative masses to zero; the total may then differ from one.
    Clip,
    /// Set negative masses of the proper focal sets to zero, give the whole frame the residual
    /// max(0, 1 - their sum) (its own computed mass is replaced), then divide by the total so
    /// the masses sum to one. The default.
    #[default]
    ClipResidualRenormalise,
}

impl Normalisation {
    /// Parses `none`, `clip` or `clip_residual_renormalise` (`-` reads as `_`).
    pub fn parse(s: &str) -> Result<Self> {
        crate::error::parse_choice(
            "normalisation",
            s,
            &[("none", Self::None), ("clip", Self::Clip), ("clip_residual_renormalise", Self::ClipResidualRenormalise)],
        )
    }
}

/// Moebius inverse over a budget: m(A) = sum over budget sets B subset of A of
/// (-1)^{|A \ B|} f(B) (the empty set contributes f = 0). For a budget that is closed under
/// subsets (as the full powerset, or the CIFAR-10 budget of the RS-NN) this reproduces
/// f(A) = sum_{B subset A} m(B) exactly. Precomputed once per budget.
#[derive(Debug, Clone)]
pub struct MoebiusPlan {
    terms: Vec<Vec<(usize, f64)>>,
}

impl MoebiusPlan {
    /// The signed subset lists of `sets`.
    pub fn new(sets: &FocalSets) -> Self {
        let terms = sets
            .sets
            .iter()
            .map(|&a| {
                sets.sets
                    .iter()
                    .enumerate()
                    .filter(|&(_, &b)| b & !a == 0)
                    .map(|(j, &b)| (j, if (a & !b).count_ones() % 2 == 0 { 1.0 } else { -1.0 }))
                    .collect()
            })
            .collect();
        MoebiusPlan { terms }
    }

    /// Masses of the budget's sets from their lower probabilities / beliefs `f`.
    pub fn apply(&self, f: &[f64]) -> Vec<f64> {
        self.terms.iter().map(|t| t.iter().map(|&(j, s)| s * f[j]).sum()).collect()
    }
}

/// In-place fast Moebius transform over the full powerset: `f[A]` for every bitmask A in
/// 0..2^K (`f[0] = 0`) becomes m(A), in K * 2^(K-1) subtractions.
pub fn fast_moebius(f: &mut [f64]) {
    let len = f.len();
    let mut bit = 1;
    while bit < len {
        for a in 0..len {
            if a & bit != 0 {
                f[a] -= f[a ^ bit];
            }
        }
        bit <<= 1;
    }
}

/// Applies `policy` to masses over `sets`, which must include the whole frame (see
/// [`FocalSets::with_frame`]).
pub fn normalise(masses: &mut [f64], sets: &FocalSets, policy: Normalisation) {
    let whole = frame(sets.k);
    match policy {
        Normalisation::None => {}
        Normalisation::Clip => masses.iter_mut().for_each(|m| *m = m.max(0.0)),
        Normalisation::ClipResidualRenormalise => {
            let mut sum = 0.0;
            for (m, &a) in masses.iter_mut().zip(&sets.sets) {
                if a != whole {
                    *m = m.max(0.0);
                    sum += *m;
                }
            }
            let residual = (1.0 - sum).max(0.0);
            if let Some(j) = sets.sets.iter().position(|&a| a == whole) {
                masses[j] = residual;
            }
            let total = sum + residual;
            if total > 0.0 {
                masses.iter_mut().for_each(|m| *m /= total);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_transform_matches_the_budget_formula() {
        // Lower probabilities of the powerset of 3 classes from two samples.
        let sets = FocalSets::powerset(3).unwrap();
        let p = [[0.7, 0.2, 0.1], [0.5, 0.3, 0.2]];
        let f: Vec<f64> = sets
            .sets
            .iter()
            .map(|&a| {
                p.iter()
                    .map(|q| (0..3).filter(|c| a >> c & 1 == 1).map(|c| q[c]).sum::<f64>())
                    .fold(f64::INFINITY, f64::min)
            })
            .collect();
        let slow = MoebiusPlan::new(&sets).apply(&f);
        let mut fast = vec![0.0];
        fast.extend_from_slice(&f);
        fast_moebius(&mut fast);
        for (a, b) in slow.iter().zip(&fast[1..]) {
            assert!((a - b).abs() < 1e-12);
        }
        // {a}.5 {b}.2 {c}.1 {ab}.1 {ac}.1 {bc}0 {abc}0 (the known masses).
        // Bitmask order: a=1, b=2, ab=3, c=4, ac=5, bc=6, abc=7.
        let by_mask = [0.5, 0.2, 0.1, 0.1, 0.1, 0.0, 0.0];
        for (m, w) in slow.iter().zip(by_mask) {
            assert!((m - w).abs() < 1e-12, "{slow:?}");
        }
    }

    #[test]
    fn policies() {
        let sets = FocalSets::new(3, vec![1, 2, 3, 7]).unwrap();
        let raw = [0.6, -0.1, 0.3, 0.2];
        let mut m = raw;
        normalise(&mut m, &sets, Normalisation::None);
        assert_eq!(m, raw);
        normalise(&mut m, &sets, Normalisation::Clip);
        assert_eq!(m, [0.6, 0.0, 0.3, 0.2]);
        let mut m = raw;
        normalise(&mut m, &sets, Normalisation::ClipResidualRenormalise);
        assert!((m[3] - 0.1).abs() < 1e-12 && (m.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        let mut m = [0.9, 0.5, 0.0, 0.3];
        normalise(&mut m, &sets, Normalisation::ClipResidualRenormalise);
        assert!((m[0] - 0.9 / 1.4).abs() < 1e-12 && m[3] == 0.0);
        assert_eq!(Normalisation::parse("clip-residual-renormalise").unwrap(), Normalisation::ClipResidualRenormalise);
    }
}
