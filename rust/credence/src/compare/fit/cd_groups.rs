//! The groups a critical-difference diagram joins with a bar: runs of methods, consecutive in
//! the diagram's order, no two of which are told apart.
//!
//! - **Bayesian** ([`FitSummary::cd_positions`], [`FitSummary::cd_groups`]): methods placed at
//!   their expected rank; two are told apart when P(A better than B) >= `level` or <=
//!   1 - `level` and, with a ROPE, they are not practically equivalent (P(|mu_A - mu_B| < eps)
//!   < `level`). A pair the summary did not compare (ranked pairs, beyond
//!   [`super::ALL_PAIRS_UP_TO`] methods) counts as not told apart.
//! - **Across data sets** ([`AcrossSummary::cd_positions`], [`AcrossSummary::cd_groups`]): the
//!   same on a new data set: expected ranks there, P(A better than B there), and the ROPE's
//!   probability of practical equivalence there.
//! - **Classic** ([`super::cd::ClassicCd::groups`]): methods at their average rank; told apart
//!   when the ranks differ by the critical difference or more (Demsar 2006).
//!
//! A group is a maximal run i..=j of the ordered methods whose every pair is not told apart;
//! runs inside a longer one are left out (Demsar's drawing rule).

use super::across::AcrossSummary;
use super::cd::ClassicCd;
use super::summary::FitSummary;

/// The maximal runs i..=j (i < j) of `n` ordered items whose every pair is `linked`.
///
/// The run from i + 1 holds the run from i less its first item, so each start goes on from
/// the previous end: O(n^2) checks when every pair is linked (10 000 methods of the classic
/// diagram), not O(n^3).
pub fn maximal_runs(n: usize, linked: impl Fn(usize, usize) -> bool) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    // Where the run from the previous start ended.
    let mut reach = 0;
    for i in 0..n {
        let mut j = reach.max(i);
        while j + 1 < n && (i..=j).all(|k| linked(k, j + 1)) {
            j += 1;
        }
        reach = j;
        if j > i && out.last().is_none_or(|&(_, end)| end < j) {
            out.push((i, j));
        }
    }
    out
}

/// Named positions, smallest (best) first.
fn best_first<'a>(positions: impl Iterator<Item = (&'a String, f64)>) -> Vec<(String, f64)> {
    let mut out: Vec<(String, f64)> = positions.map(|(m, e)| (m.clone(), e)).collect();
    out.sort_by(|a, b| a.1.total_cmp(&b.1));
    out
}

/// The maximal runs of `order` whose every pair of entries (name, position) is `linked`, as
/// names.
fn named_runs(order: &[(String, f64)], linked: impl Fn(&(String, f64), &(String, f64)) -> bool) -> Vec<Vec<String>> {
    maximal_runs(order.len(), |i, j| linked(&order[i], &order[j]))
        .into_iter()
        .map(|(i, j)| order[i..=j].iter().map(|(m, _)| m.clone()).collect())
        .collect()
}

impl FitSummary {
    /// The methods with their expected rank, best first (empty beyond
    /// [`super::RANKS_UP_TO`] methods, which have no expected rank).
    pub fn cd_positions(&self) -> Vec<(String, f64)> {
        best_first(self.expected_rank.iter().map(|(m, e)| (m, e.mean)))
    }

    /// The Bayesian CD diagram's groups at `level`: runs of [`FitSummary::cd_positions`] (as
    /// names) no two of which are told apart (see the module).
    pub fn cd_groups(&self, level: f64) -> Vec<Vec<String>> {
        let order = self.cd_positions();
        let apart = |a: &str, b: &str| {
            let settled = self.prob_better.get(a, b).is_some_and(|&p| p >= level || p <= 1.0 - level);
            let equivalent = self.rope.as_ref().and_then(|r| r.get(a, b)).is_some_and(|&p| p >= level);
            settled && !equivalent
        };
        named_runs(&order, |a, b| !apart(&a.0, &b.0))
    }
}

impl AcrossSummary {
    /// The methods with their expected rank on a new data set, best first (empty beyond
    /// [`super::RANKS_UP_TO`] methods).
    pub fn cd_positions(&self) -> Vec<(String, f64)> {
        best_first(self.expected_rank_new.iter().map(|(m, e)| (m, e.mean)))
    }

    /// The Bayesian CD diagram's groups at `level` on a new data set: as
    /// [`FitSummary::cd_groups`], with P(A better than B on a new data set) and, with a ROPE,
    /// its probability that the difference lies within the ROPE.
    pub fn cd_groups(&self, level: f64) -> Vec<Vec<String>> {
        let order = self.cd_positions();
        let apart = |a: &str, b: &str| {
            let pair = self.pairwise.get(a, b).or_else(|| self.pairwise.get(b, a));
            pair.is_some_and(|p| {
                let settled = p.prob_better_new >= level || p.prob_better_new <= 1.0 - level;
                settled && !p.rope.as_ref().is_some_and(|r| r.rope >= level)
            })
        };
        named_runs(&order, |a, b| !apart(&a.0, &b.0))
    }
}

impl ClassicCd {
    /// The methods with their average rank, best first.
    pub fn positions(&self) -> Vec<(String, f64)> {
        best_first(self.average_ranks.iter().map(|(m, r)| (m, *r)))
    }

    /// The classic CD diagram's groups: runs of [`ClassicCd::positions`] whose average ranks
    /// differ by less than the critical difference.
    pub fn groups(&self) -> Vec<Vec<String>> {
        // The positions carry the ranks: a lookup by name per pair was most of the time with
        // thousands of methods.
        named_runs(&self.positions(), |a, b| (a.1 - b.1).abs() < self.critical_difference)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_are_maximal_and_not_nested() {
        // Positions 1, 1.5, 2.2, 4, 4.3 joined when closer than 1.3: (0..=2) and (3..=4); 1..=2
        // lies inside 0..=2 and is left out.
        let x: [f64; 5] = [1.0, 1.5, 2.2, 4.0, 4.3];
        assert_eq!(maximal_runs(5, |i, j| (x[i] - x[j]).abs() < 1.3), vec![(0, 2), (3, 4)]);
        // Overlapping runs: 0-1 and 1-2 linked, 0-2 not.
        assert_eq!(maximal_runs(3, |i, j| j - i == 1), vec![(0, 1), (1, 2)]);
        assert!(maximal_runs(3, |_, _| false).is_empty());
        assert_eq!(maximal_runs(4, |_, _| true), vec![(0, 3)]);
    }

    #[test]
    fn each_start_going_on_from_the_last_end_finds_the_runs_of_every_start_searched_alone() {
        // Each start extended from itself, as the definition reads, on random relations (not
        // only distances within a bound: any symmetric "not told apart").
        let alone = |n: usize, linked: &dyn Fn(usize, usize) -> bool| {
            let mut out: Vec<(usize, usize)> = Vec::new();
            for i in 0..n {
                let mut j = i;
                while j + 1 < n && (i..=j).all(|k| linked(k, j + 1)) {
                    j += 1;
                }
                if j > i && out.last().is_none_or(|&(_, end)| end < j) {
                    out.push((i, j));
                }
            }
            out
        };
        let mut rng = crate::seeds::SplitMix64(7);
        for case in 0..400 {
            let n = 1 + case % 13;
            let density = [0.5, 0.8, 0.95, 1.0][case % 4];
            let mut m = vec![false; n * n];
            for i in 0..n {
                for j in i + 1..n {
                    let l = rng.uniform() < density;
                    (m[i * n + j], m[j * n + i]) = (l, l);
                }
            }
            let linked = |i: usize, j: usize| m[i * n + j];
            assert_eq!(maximal_runs(n, linked), alone(n, &linked), "case {case}");
        }
    }

    #[test]
    fn classic_groups_join_ranks_within_the_critical_difference() {
        let cd = ClassicCd {
            average_ranks: [("A", 1.2), ("B", 2.0), ("C", 3.1), ("D", 3.7)].map(|(m, r)| (m.to_owned(), r)).into(),
            blocks: 10,
            incomplete_blocks: 0,
            critical_difference: 1.0,
            alpha: 0.05,
            friedman_chi2: 0.0,
            friedman_p: 1.0,
        };
        assert_eq!(cd.groups(), vec![vec!["A", "B"], vec!["C", "D"]]);
    }

    #[test]
    fn bayesian_groups_leave_a_settled_method_alone() {
        use crate::compare::{Design, FitOptions, NutsSettings, Sampler, SummaryOptions, fit};
        // A and B close, C far behind: one group {A, B}; with a wide ROPE every pair is
        // practically equivalent and all three are one group.
        let mut rng = crate::seeds::SplitMix64(4);
        let (mut g, mut p, mut y) = (Vec::new(), Vec::new(), Vec::new());
        for r in 0..10 {
            for (m, mu) in [("A", 0.30), ("B", 0.301), ("C", 0.40)] {
                g.push(m.to_owned());
                p.push(format!("r{r}"));
                y.push(mu + 0.01 * rng.normal());
            }
        }
        let d = Design::new(g, Some(p), y, None).unwrap();
        let o = FitOptions {
            sampler: Sampler::Nuts(NutsSettings { warmup: 300, draws: 300, ..Default::default() }),
            ..Default::default()
        };
        let f = fit(&d, &o).unwrap();
        let s = FitSummary::new(&f, &SummaryOptions::default()).unwrap();
        assert_eq!(s.cd_positions().last().unwrap().0, "C");
        let mut group = s.cd_groups(0.95);
        group.iter_mut().for_each(|x| x.sort());
        assert_eq!(group, vec![vec!["A", "B"]]);
        let wide = FitSummary::new(&f, &SummaryOptions { rope: Some(1.0), ..Default::default() }).unwrap();
        assert_eq!(wide.cd_groups(0.95).len(), 1);
        assert_eq!(wide.cd_groups(0.95)[0].len(), 3);
    }
}
