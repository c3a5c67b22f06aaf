//! Extreme points of a credal set: the 2K approximation and exact enumeration for K <= 8.
//!
//! A permutation of the classes gives the vertex in which every focal set's mass goes to its
//! earliest class in the permutation (for belief functions every vertex arises this way). The
//! 2K approximation uses, for each class c, the permutation with c first and the others in
//! index order, and the one with c last (others in index order). It contains, for every class
//! y, the vertex with the largest probability of y, Pl({y}), so every score that only depends
//! on v_y and grows with it (KL and JS to a one-hot label) is exact under it.

use super::focal::FocalSets;
use crate::error::{Error, Result};

/// Which vertices to visit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VertexMethod {
    /// The 2K permutations (c first, c last). The default.
    #[default]
    TwoK,
    /// All K! permutations (K <= 8), duplicates removed.
    Exact,
}

crate::error::choice_from_str!(
    VertexMethod,
    "vertices",
    [("two_k", VertexMethod::TwoK), ("2k", VertexMethod::TwoK), ("exact", VertexMethod::Exact)]
);

/// Largest K for exact enumeration.
pub const MAX_EXACT_CLASSES: usize = 8;

/// The permutations of `method` over `k` classes.
pub fn permutations(k: usize, method: VertexMethod) -> Result<Vec<Vec<usize>>> {
    match method {
        VertexMethod::TwoK => Ok((0..k)
            .flat_map(|c| {
                let rest: Vec<usize> = (0..k).filter(|&d| d != c).collect();
                let first = std::iter::once(c).chain(rest.iter().copied()).collect();
                let last = rest.iter().copied().chain(std::iter::once(c)).collect();
                [first, last]
            })
            .collect()),
        VertexMethod::Exact => {
            if k > MAX_EXACT_CLASSES {
                return Err(Error::argument(
                    "classes for exact vertex enumeration",
                    k,
                    format!("at most {MAX_EXACT_CLASSES}"),
                ));
            }
            let mut out = Vec::new();
            let mut p: Vec<usize> = (0..k).collect();
            heap_permutations(k, &mut p, &mut out);
            Ok(out)
        }
    }
}

fn heap_permutations(n: usize, p: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
    if n <= 1 {
        out.push(p.clone());
        return;
    }
    for i in 0..n - 1 {
        heap_permutations(n - 1, p, out);
        if n.is_multiple_of(2) { p.swap(i, n - 1) } else { p.swap(0, n - 1) }
    }
    heap_permutations(n - 1, p, out);
}

/// The vertex of permutation `perm`: each focal set's mass goes to its earliest class.
pub fn vertex(masses: &[f64], sets: &FocalSets, perm: &[usize]) -> Vec<f64> {
    let mut rank = vec![0usize; sets.k];
    for (r, &c) in perm.iter().enumerate() {
        rank[c] = r;
    }
    let mut v = vec![0.0; sets.k];
    for (&m, &a) in masses.iter().zip(&sets.sets) {
        let mut bits = a;
        let mut best = usize::MAX;
        while bits != 0 {
            let c = bits.trailing_zeros() as usize;
            if best == usize::MAX || rank[c] < rank[best] {
                best = c;
            }
            bits &= bits - 1;
        }
        v[best] += m;
    }
    v
}

/// The distinct vertices (to 1e-12) of the credal set of one mass function.
pub fn vertices(masses: &[f64], sets: &FocalSets, method: VertexMethod) -> Result<Vec<Vec<f64>>> {
    Ok(dedup(permutations(sets.k, method)?.iter().map(|p| vertex(masses, sets, p)).collect()))
}

/// The vertex of the probability-interval polytope {l <= p <= u, sum p = 1} for `perm`:
/// classes in order take as much as they can while leaving the lower bounds of the rest.
pub fn interval_vertex(lower: &[f64], upper: &[f64], perm: &[usize]) -> Vec<f64> {
    let mut p = lower.to_vec();
    let mut free = 1.0 - lower.iter().sum::<f64>();
    for &c in perm {
        let add = (upper[c] - lower[c]).min(free).max(0.0);
        p[c] += add;
        free -= add;
    }
    p
}

pub(crate) fn dedup(vs: Vec<Vec<f64>>) -> Vec<Vec<f64>> {
    let mut out: Vec<Vec<f64>> = Vec::new();
    for v in vs {
        if !out.iter().any(|w| w.iter().zip(&v).all(|(a, b)| (a - b).abs() <= 1e-12)) {
            out.push(v);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_enumeration_covers_two_k_and_counts() {
        assert_eq!(permutations(4, VertexMethod::Exact).unwrap().len(), 24);
        assert_eq!(permutations(4, VertexMethod::TwoK).unwrap().len(), 8);
        assert!(permutations(9, VertexMethod::Exact).is_err());
        // Vacuous mass on the frame of 3 classes: the vertices are the 3 one-hot vectors.
        let sets = FocalSets::new(3, vec![7]).unwrap();
        let v = vertices(&[1.0], &sets, VertexMethod::Exact).unwrap();
        assert_eq!(v.len(), 3);
        let v2 = vertices(&[1.0], &sets, VertexMethod::TwoK).unwrap();
        assert_eq!(v2.len(), 3);
        // Interval polytope vertex.
        let p = interval_vertex(&[0.1, 0.2, 0.0], &[0.6, 0.5, 0.5], &[0, 1, 2]);
        assert!((p[0] - 0.6).abs() < 1e-12 && (p[1] - 0.4).abs() < 1e-12 && p[2].abs() < 1e-12);
    }
}
