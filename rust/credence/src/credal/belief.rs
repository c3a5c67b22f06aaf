//! Belief, plausibility and the pignistic probability of a mass function.

use super::focal::FocalSets;

/// Bel(A) = sum of m(B) over focal sets B contained in A.
pub fn bel(masses: &[f64], sets: &FocalSets, a: u64) -> f64 {
    masses.iter().zip(&sets.sets).filter(|&(_, &b)| b & !a == 0).map(|(m, _)| m).sum()
}

/// Pl(A) = sum of m(B) over focal sets B that intersect A.
pub fn pl(masses: &[f64], sets: &FocalSets, a: u64) -> f64 {
    masses.iter().zip(&sets.sets).filter(|&(_, &b)| b & a != 0).map(|(m, _)| m).sum()
}

/// Pignistic probability BetP(c) = sum over focal sets A containing c of m(A) / |A|.
pub fn betp(masses: &[f64], sets: &FocalSets) -> Vec<f64> {
    let mut p = vec![0.0; sets.k];
    for (&m, &a) in masses.iter().zip(&sets.sets) {
        let share = m / a.count_ones() as f64;
        let mut bits = a;
        while bits != 0 {
            p[bits.trailing_zeros() as usize] += share;
            bits &= bits - 1;
        }
    }
    p
}

/// The class-wise probability intervals [Bel({c}), Pl({c})].
pub fn singleton_intervals(masses: &[f64], sets: &FocalSets) -> (Vec<f64>, Vec<f64>) {
    let mut lower = vec![0.0; sets.k];
    let mut upper = vec![0.0; sets.k];
    for (&m, &a) in masses.iter().zip(&sets.sets) {
        if a.count_ones() == 1 {
            lower[a.trailing_zeros() as usize] += m;
        }
        let mut bits = a;
        while bits != 0 {
            upper[bits.trailing_zeros() as usize] += m;
            bits &= bits - 1;
        }
    }
    (lower, upper)
}
