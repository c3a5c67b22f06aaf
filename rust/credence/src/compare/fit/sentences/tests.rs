//! The property test of everything a fit states in words, tables and figure labels: over
//! hundreds of random fits, levels and ROPEs, every sentence is parsed back and each claim it
//! makes (who is best, who leads, settled or not, the ROPE's side) and each number it prints is
//! checked against the summary's own numbers; so are the paper table's cells (order, rounding,
//! the side of 0.95 / 0.05 / 0.5 of every probability) and the CD diagrams' groups (no settled
//! pair under one bar, the classic groups within the critical difference). A smaller run does
//! the same for fits across data sets, whose sentences speak of a new data set.

use std::collections::HashMap;

use super::super::across::AcrossSummary;
use super::super::wording::is_settled;
use super::super::{FitOptions, FitSummary, SummaryOptions, fit};
use crate::compare::{AcrossDesign, AcrossFitOptions, Design, NutsSettings, Sampler, fit_across};
use crate::seeds::SplitMix64;

/// A random paired design: 2-5 methods, 2-10 realizations, random means and noise (some
/// methods equal, some far apart), half of them scored "higher is better", some to a target.
fn random_fit(rng: &mut SplitMix64) -> (FitSummary, f64) {
    let m = 2 + (rng.uniform() * 4.0) as usize;
    let r = 2 + (rng.uniform() * 9.0) as usize;
    let means: Vec<f64> = (0..m).map(|_| (rng.uniform() * 4.0).floor() * 0.02 * rng.uniform()).collect();
    let sds: Vec<f64> = (0..m).map(|_| 0.005 + 0.03 * rng.uniform()).collect();
    let (mut g, mut p, mut y) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..r {
        let gamma = 0.02 * rng.normal();
        for k in 0..m {
            g.push(format!("M{k}"));
            p.push(format!("r{i}"));
            y.push(0.3 + means[k] + gamma + sds[k] * rng.normal());
        }
    }
    let design = Design::new(g, Some(p), y, None).unwrap();
    let options = FitOptions {
        sampler: Sampler::Nuts(NutsSettings { warmup: 150, draws: 150, seed: rng.next_u64(), ..Default::default() }),
        higher_is_better: rng.uniform() < 0.5,
        ..Default::default()
    };
    let mut f = fit(&design, &options).unwrap();
    if rng.uniform() < 0.2 {
        f = f.with_target(0.3 + 0.05 * rng.uniform()).unwrap();
    }
    let s = FitSummary::new(&f, &SummaryOptions { rope: random_rope(rng), ..Default::default() }).unwrap();
    (s, random_level(rng))
}

/// A random across-data-sets design: 2-4 data sets, 2-4 methods, 2-4 realizations.
fn random_across_fit(rng: &mut SplitMix64) -> (AcrossSummary, f64) {
    let (d, m, r) =
        (2 + (rng.uniform() * 3.0) as usize, 2 + (rng.uniform() * 3.0) as usize, 2 + (rng.uniform() * 3.0) as usize);
    let effects: Vec<f64> = (0..m).map(|_| (rng.uniform() * 4.0).floor() * 0.02 * rng.uniform()).collect();
    let (mut ds, mut g, mut p, mut y) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for j in 0..d {
        let level = 0.2 + 0.1 * rng.uniform();
        for i in 0..r {
            let gamma = 0.01 * rng.normal();
            for (k, e) in effects.iter().enumerate() {
                ds.push(format!("D{j}"));
                g.push(format!("M{k}"));
                p.push(format!("r{i}"));
                y.push(level + e + 0.01 * rng.normal() + gamma + 0.01 * rng.normal());
            }
        }
    }
    let design = AcrossDesign::new(ds, g, Some(p), y).unwrap();
    let options = AcrossFitOptions {
        sampler: NutsSettings { warmup: 150, draws: 150, seed: rng.next_u64(), ..Default::default() },
        higher_is_better: rng.uniform() < 0.5,
        ..Default::default()
    };
    let s = AcrossSummary::new(&fit_across(&design, &options).unwrap(), random_rope(rng)).unwrap();
    (s, random_level(rng))
}

fn random_rope(rng: &mut SplitMix64) -> Option<f64> {
    (rng.uniform() < 0.6).then(|| [0.001, 0.005, 0.01, 0.02][(rng.uniform() * 4.0) as usize])
}

fn random_level(rng: &mut SplitMix64) -> f64 {
    [0.8, 0.9, 0.95, 0.99][(rng.uniform() * 4.0) as usize]
}

/// What a summary states, whichever kind: its numbers by pair, to check its texts against.
struct Stated {
    prob_best: Vec<(String, f64)>,
    ranking: Vec<String>,
    /// (a, b) in both orders: P(a better than b), a's gap over b, P(|a - b| < eps).
    pairs: HashMap<(String, String), (f64, f64, Option<f64>)>,
    rope_eps: Option<f64>,
    runs: String,
    scope: &'static str,
}

impl Stated {
    fn new(
        s_prob_best: &[(String, f64)],
        ranking: &[String],
        rope_eps: Option<f64>,
        runs: String,
        scope: &'static str,
        pair: impl Fn(&str, &str) -> Option<(f64, f64, Option<f64>)>,
    ) -> Self {
        let mut pairs = HashMap::new();
        for a in ranking {
            for b in ranking.iter().filter(|b| *b != a) {
                if let Some((p, gap, rope)) = pair(a, b) {
                    pairs.insert((a.clone(), b.clone()), (p, gap, rope));
                    pairs.insert((b.clone(), a.clone()), (1.0 - p, -gap, rope));
                }
            }
        }
        Self { prob_best: s_prob_best.to_vec(), ranking: ranking.to_vec(), pairs, rope_eps, runs, scope }
    }

    fn single(s: &FitSummary) -> Self {
        let runs = match s.data.realizations {
            0 => "these observations".to_owned(),
            1 => "1 realization".to_owned(),
            n => format!("{n} realizations"),
        };
        Self::new(&s.prob_best, &s.ranking, s.rope_eps, runs, "", |a, b| {
            let rope = s.rope.as_ref().and_then(|r| r.get(a, b).copied());
            Some((*s.prob_better.get(a, b)?, s.gap(a, b)?, rope))
        })
    }

    fn across(s: &AcrossSummary) -> Self {
        let delta = |m: &str| s.parameters.iter().find(|p| p.name == format!("delta[{m}]")).map(|p| p.mean);
        let runs = format!("{} data sets", s.data.datasets.len());
        Self::new(&s.prob_best_new, &s.ranking, s.rope_eps, runs, " on a new data set", |a, b| {
            let p = s.pairwise.get(a, b)?;
            let gap = if s.higher_is_better { delta(a)? - delta(b)? } else { delta(b)? - delta(a)? };
            Some((p.prob_better_new, gap, p.rope.as_ref().map(|r| r.rope)))
        })
    }

    fn pair(&self, a: &str, b: &str) -> (f64, f64, Option<f64>) {
        *self.pairs.get(&(a.to_owned(), b.to_owned())).unwrap_or_else(|| panic!("no pair {a} {b}"))
    }

    /// Whether the CD diagram may put a and b under one bar: not settled, or practically
    /// equivalent, at `level`.
    fn not_told_apart(&self, a: &str, b: &str, level: f64) -> bool {
        let (p, _, rope) = self.pair(a, b);
        !(p >= level || p <= 1.0 - level) || rope.is_some_and(|r| r >= level)
    }
}

/// `text` after `prefix`, up to the first of `end`, and the rest after it.
fn cut<'a>(text: &'a str, prefix: &str, end: &str) -> (&'a str, &'a str) {
    let rest = text.strip_prefix(prefix).unwrap_or_else(|| panic!("{text:?} does not start with {prefix:?}"));
    let k = rest.find(end).unwrap_or_else(|| panic!("no {end:?} in {rest:?}"));
    (&rest[..k], &rest[k + end.len()..])
}

fn num(s: &str) -> f64 {
    s.parse().unwrap_or_else(|_| panic!("{s:?} is not a number"))
}

/// A printed probability `q` of the true `p`: within rounding, on p's side of 0.5 and settled
/// exactly when p is.
fn same_side(q: f64, p: f64, what: &str) {
    assert!((q - p).abs() <= 5e-4 + 1e-12, "{what}: printed {q} for {p}");
    assert!(is_settled(q) == is_settled(p) && (q >= 0.5) == (p >= 0.5), "{what}: printed {q} for {p}");
}

/// Counts of the kinds of sentences met, so the random fits are seen to reach each.
#[derive(Default, Debug)]
struct Kinds {
    settled: usize,
    open: usize,
    equivalent: usize,
}

/// Checks one pair's sentence against the summary; returns the pair (leader, follower) and
/// whether it says the pair is settled.
fn check_pair(s: &Stated, sentence: &str, level: f64) -> (String, String, bool) {
    let body = sentence.strip_suffix('.').expect("a sentence ends with a full stop");
    let (a, rest) = cut(body, "", " ");
    let scope = s.scope;
    let (mut settled, mut printed_gap) = (false, None);
    let (b, tail) = if let Some(rest) = rest.strip_prefix("and ") {
        let (b, rest) = cut(rest, "", " ");
        let (p, _, rope) = s.pair(a, b);
        if let Some(rest) = rest.strip_prefix(format!("are practically equivalent{scope}: P(|gap| < ").as_str()) {
            let (eps, rest) = cut(rest, "", ") = ");
            let (r, tail) = rest.find(',').map_or((rest, ""), |k| rest.split_at(k));
            assert_eq!(Some(num(eps)), s.rope_eps);
            let rope = rope.unwrap();
            assert!(rope >= level && num(r) >= level && (num(r) - rope).abs() <= 5e-4 + 1e-12, "{sentence}: {rope}");
            assert!(p >= 0.5, "{sentence}: the first named leads");
            (b, tail)
        } else {
            let (runs, rest) = cut(rest, &format!("cannot be separated{scope} with "), " (P(");
            assert_eq!(runs, s.runs);
            let (q, rest) = cut(rest, &format!("{a} better) = "), "; gap ");
            let (gap, tail) = rest.split_once(')').unwrap();
            let q = num(q);
            assert!((0.5..level).contains(&q) && (0.5..level).contains(&p), "{sentence}: {p}");
            assert!((q - p).abs() <= 5e-4 + 1e-12);
            printed_gap = Some(num(gap.split(' ').next().unwrap()));
            (b, tail)
        }
    } else {
        let (b, rest) = cut(rest, "is ahead of ", &format!("{scope} by "));
        let (gap, rest) = cut(rest, "", " ");
        let (q, tail) = cut(rest.split_once(", settled (P = ").unwrap().1, "", ")");
        let p = s.pair(a, b).0;
        assert!(num(q) >= level && p >= level && (num(q) - p).abs() <= 5e-4 + 1e-12, "{sentence}: {p}");
        settled = true;
        printed_gap = Some(num(gap));
        (b, tail)
    };
    let (_, gap, rope) = s.pair(a, b);
    if let Some(g) = printed_gap {
        assert!((g - gap).abs() <= 0.006 * gap.abs() + 1e-12, "{sentence}: gap {gap}");
    }
    // The tail: ", though a's posterior mean is behind" exactly when the gap is negative, then
    // the ROPE's side when a ROPE was asked for and the pair is not practically equivalent.
    let behind = format!(", though {a}'s posterior mean is behind");
    let tail = match tail.strip_prefix(behind.as_str()) {
        Some(t) => {
            assert!(gap < 0.0, "{sentence}");
            t
        }
        None => {
            assert!(gap >= 0.0, "{sentence}: gap {gap}");
            tail
        }
    };
    match (tail, rope, s.rope_eps) {
        ("", None, None) => {}
        ("", Some(r), Some(_)) => assert!(r >= level, "{sentence}: no ROPE side although P(ROPE) = {r}"),
        (t, Some(r), Some(eps)) => {
            assert!(r < level, "{sentence}");
            let above = t == format!(", above the ROPE of {eps}");
            let within = t == format!(", within the ROPE of {eps}");
            assert!(above || within, "{sentence}: tail {t:?}");
            let printed = printed_gap.unwrap().abs();
            assert_eq!(above, gap.abs() > eps, "{sentence}: gap {gap}");
            assert_eq!(above, printed > eps, "{sentence}: the printed gap {printed} is on the other side of {eps}");
        }
        (t, r, e) => panic!("{sentence}: tail {t:?} with ROPE {r:?} of {e:?}"),
    }
    (a.to_owned(), b.to_owned(), settled)
}

/// Checks every sentence of `text`; returns the pairs said to be settled.
fn check_sentences(s: &Stated, text: &[String], level: f64, kinds: &mut Kinds) -> Vec<(String, String)> {
    // Who is best, with the largest P(best).
    let (best, p) = cut(&text[0], "", &format!(" is best{} with probability ", s.scope));
    let p = num(p.strip_suffix('.').unwrap());
    let top = s.prob_best.iter().map(|x| x.1).fold(0.0, f64::max);
    let stated = s.prob_best.iter().find(|x| x.0 == best).unwrap().1;
    assert!(stated == top && (p - stated).abs() <= 5e-4 + 1e-12, "{}: {:?}", text[0], s.prob_best);
    // Then one sentence per neighbouring pair of the ranking, in order.
    assert_eq!(text.len(), s.ranking.len(), "{text:?}");
    let mut settled = Vec::new();
    for (sentence, w) in text[1..].iter().zip(s.ranking.windows(2)) {
        let (a, b, is_settled) = check_pair(s, sentence, level);
        assert!((a == w[0] && b == w[1]) || (a == w[1] && b == w[0]), "{sentence} for {w:?}");
        kinds.settled += is_settled as usize;
        kinds.open += sentence.contains("cannot be separated") as usize;
        kinds.equivalent += sentence.contains("practically equivalent") as usize;
        if is_settled {
            settled.push((a, b));
        }
    }
    settled
}

/// The Bayesian CD groups at `level`: consecutive runs of the diagram's order, no pair under a
/// bar told apart, and no pair a sentence calls settled under one bar.
/// The sentences and the CD groups of one fit, each against the numbers.
fn check_words(
    s: &Stated,
    text: &[String],
    positions: &[(String, f64)],
    groups: &[Vec<String>],
    level: f64,
    kinds: &mut Kinds,
) {
    let settled = check_sentences(s, text, level, kinds);
    check_cd(s, positions, groups, level, &settled);
}

fn check_cd(s: &Stated, positions: &[(String, f64)], groups: &[Vec<String>], level: f64, settled: &[(String, String)]) {
    assert!(positions.windows(2).all(|w| w[0].1 <= w[1].1), "{positions:?}");
    let order: Vec<&str> = positions.iter().map(|(m, _)| m.as_str()).collect();
    for g in groups {
        let i = order.iter().position(|m| *m == g[0]).unwrap();
        assert_eq!(&order[i..i + g.len()], g.iter().map(String::as_str).collect::<Vec<_>>(), "{g:?} in {order:?}");
        for (k, a) in g.iter().enumerate() {
            for b in &g[k + 1..] {
                assert!(s.not_told_apart(a, b, level), "{a} and {b} under one bar: {:?}", s.pair(a, b));
            }
        }
        for (a, b) in settled {
            assert!(!(g.contains(a) && g.contains(b)), "the settled pair {a}, {b} is under one bar {g:?}");
        }
    }
}

/// The paper table: rows in the ranking's order, the posterior means rounded in that order,
/// P(best) and P(better than next) within rounding and on their true side of every line.
fn check_table(s: &FitSummary) {
    let t = s.paper_table();
    assert_eq!(t.rows.len(), s.ranking.len());
    let behind = |v: f64| match s.target {
        Some(t) => (v - t).abs(),
        None if s.higher_is_better => -v,
        None => v,
    };
    let mut printed_means = Vec::new();
    for (k, (row, m)) in t.rows.iter().zip(&s.ranking).enumerate() {
        assert_eq!(&row[0], m);
        let q = s.method_parameter(m).unwrap();
        let cell = row[1].split(' ').next().unwrap();
        let decimals = cell.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
        assert!((num(cell) - q.mean).abs() <= 0.5 * 10f64.powi(-decimals) + 1e-12, "{cell} for {}", q.mean);
        printed_means.push(num(cell));
        let best = s.prob_best.iter().find(|x| &x.0 == m).unwrap().1;
        same_side(num(&row[2]), best, "P(best)");
        match s.ranking.get(k + 1) {
            Some(n) => same_side(num(&row[4]), *s.prob_better.get(m, n).unwrap(), "P(better than next)"),
            None => assert_eq!(row[4], "-"),
        }
    }
    assert!(printed_means.windows(2).all(|w| behind(w[0]) <= behind(w[1])), "{printed_means:?} out of order");
}

#[test]
fn nothing_said_contradicts_the_numbers_it_states() {
    let mut rng = SplitMix64(2026);
    let mut kinds = Kinds::default();
    for _ in 0..300 {
        let (s, level) = random_fit(&mut rng);
        let (text, groups) = (s.sentences("CRPS", level).unwrap(), s.cd_groups(level));
        check_words(&Stated::single(&s), &text, &s.cd_positions(), &groups, level, &mut kinds);
        check_table(&s);
        if let Some(cd) = &s.classic_cd {
            let rank: HashMap<&String, f64> = cd.average_ranks.iter().map(|(m, r)| (m, *r)).collect();
            for g in cd.groups() {
                let r: Vec<f64> = g.iter().map(|m| rank[m]).collect();
                let spread = r.iter().fold(0.0, |a: f64, x| a.max(*x)) - r.iter().fold(f64::INFINITY, |a, x| a.min(*x));
                assert!(spread < cd.critical_difference, "{g:?}: ranks {r:?}, CD {}", cd.critical_difference);
            }
        }
    }
    // The random fits reach every kind of sentence.
    assert!(kinds.settled > 20 && kinds.open > 20 && kinds.equivalent > 5, "{kinds:?}");
}

#[test]
fn nothing_said_across_data_sets_contradicts_the_numbers_it_states() {
    let mut rng = SplitMix64(2027);
    let mut kinds = Kinds::default();
    for _ in 0..40 {
        let (s, level) = random_across_fit(&mut rng);
        let (text, groups) = (s.sentences("CRPS", level).unwrap(), s.cd_groups(level));
        check_words(&Stated::across(&s), &text, &s.cd_positions(), &groups, level, &mut kinds);
    }
    assert!(kinds.settled > 5 && kinds.open > 5, "{kinds:?}");
}

#[test]
fn a_level_outside_one_half_to_one_is_refused() {
    assert!(FitSummary::sentences(&random_fit(&mut SplitMix64(1)).0, "CRPS", 1.0).is_err());
}
