//! The property test of the generated sentences: over hundreds of random fits, levels and
//! ROPEs, every sentence is parsed back and each claim it makes (who is best, who leads,
//! settled or not, the ROPE's side) and each number it prints is checked against the
//! summary's own numbers.

use super::super::{FitOptions, FitSummary, SummaryOptions, fit};
use crate::compare::{Design, NutsSettings, Sampler};
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
    let rope = (rng.uniform() < 0.6).then(|| [0.001, 0.005, 0.01, 0.02][(rng.uniform() * 4.0) as usize]);
    let s = FitSummary::new(&f, &SummaryOptions { rope, ..Default::default() }).unwrap();
    (s, [0.8, 0.9, 0.95, 0.99][(rng.uniform() * 4.0) as usize])
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

/// Checks one pair's sentence against the summary; returns the pair (leader, follower).
fn check_pair(s: &FitSummary, sentence: &str, level: f64) -> (String, String) {
    let body = sentence.strip_suffix('.').expect("a sentence ends with a full stop");
    let (a, rest) = cut(body, "", " ");
    let p_ab = |b: &str| *s.prob_better.get(a, b).unwrap();
    let gap_of = |b: &str| s.gap(a, b).unwrap();
    let (b, printed_gap, tail) = if let Some(rest) = rest.strip_prefix("and ") {
        let (b, rest) = cut(rest, "", " ");
        if let Some(rest) = rest.strip_prefix("are practically equivalent: P(|gap| < ") {
            let (eps, rest) = cut(rest, "", ") = ");
            let (r, tail) = rest.find(',').map_or((rest, ""), |k| rest.split_at(k));
            assert_eq!(Some(num(eps)), s.rope_eps);
            let rope = *s.rope.as_ref().unwrap().get(a, b).unwrap();
            assert!(rope >= level && num(r) >= level && (num(r) - rope).abs() <= 5e-4 + 1e-12, "{sentence}: {rope}");
            assert!(p_ab(b) >= 0.5, "{sentence}: the first named leads");
            (b, None, tail)
        } else {
            let (runs, rest) = cut(rest, "cannot be separated with ", " (P(");
            let expected = match s.data.realizations {
                0 => "these observations".to_owned(),
                1 => "1 realization".to_owned(),
                n => format!("{n} realizations"),
            };
            assert_eq!(runs, expected);
            let (p, rest) = cut(rest, &format!("{a} better) = "), "; gap ");
            let (gap, tail) = rest.split_once(')').unwrap();
            let p = num(p);
            assert!((0.5..level).contains(&p) && (0.5..level).contains(&p_ab(b)), "{sentence}: {}", p_ab(b));
            assert!((p - p_ab(b)).abs() <= 5e-4 + 1e-12);
            (b, Some(num(gap.split(' ').next().unwrap())), tail)
        }
    } else {
        let (b, rest) = cut(rest, "is ahead of ", " by ");
        let (gap, rest) = cut(rest, "", " ");
        let (p, tail) = cut(rest.split_once(", settled (P = ").unwrap().1, "", ")");
        assert!(
            num(p) >= level && p_ab(b) >= level && (num(p) - p_ab(b)).abs() <= 5e-4 + 1e-12,
            "{sentence}: {}",
            p_ab(b)
        );
        (b, Some(num(gap)), tail)
    };
    if let Some(g) = printed_gap {
        let gap = gap_of(b);
        assert!((g - gap).abs() <= 0.006 * gap.abs() + 1e-12, "{sentence}: gap {gap}");
    }
    // The tail: ", though a's posterior mean is behind" exactly when the gap is negative, then
    // the ROPE's side when a ROPE was asked for and the pair is not practically equivalent.
    let behind = format!(", though {a}'s posterior mean is behind");
    let tail = match tail.strip_prefix(behind.as_str()) {
        Some(t) => {
            assert!(gap_of(b) < 0.0, "{sentence}");
            t
        }
        None => {
            assert!(gap_of(b) >= 0.0, "{sentence}: gap {}", gap_of(b));
            tail
        }
    };
    let rope = s.rope.as_ref().and_then(|r| r.get(a, b).copied());
    match (tail, rope, s.rope_eps) {
        ("", None, None) => {}
        ("", Some(r), Some(_)) => assert!(r >= level, "{sentence}: no ROPE side although P(ROPE) = {r}"),
        (t, Some(r), Some(eps)) => {
            assert!(r < level, "{sentence}");
            let above = t == format!(", above the ROPE of {eps}");
            let within = t == format!(", within the ROPE of {eps}");
            assert!(above || within, "{sentence}: tail {t:?}");
            let printed = printed_gap.unwrap().abs();
            assert_eq!(above, gap_of(b).abs() > eps, "{sentence}: gap {}", gap_of(b));
            assert_eq!(above, printed > eps, "{sentence}: the printed gap {printed} is on the other side of {eps}");
        }
        (t, r, e) => panic!("{sentence}: tail {t:?} with ROPE {r:?} of {e:?}"),
    }
    (a.to_owned(), b.to_owned())
}

#[test]
fn no_sentence_contradicts_the_numbers_it_states() {
    let mut rng = SplitMix64(2026);
    let (mut settled, mut open, mut equivalent, mut behind) = (0, 0, 0, 0);
    for _ in 0..300 {
        let (s, level) = random_fit(&mut rng);
        let text = s.sentences("CRPS", level).unwrap();
        // Who is best, with the largest P(best).
        let (best, p) = cut(&text[0], "", " is best with probability ");
        let p = num(p.strip_suffix('.').unwrap());
        let top = s.prob_best.iter().map(|x| x.1).fold(0.0, f64::max);
        let stated = s.prob_best.iter().find(|x| x.0 == best).unwrap().1;
        assert!(stated == top && (p - stated).abs() <= 5e-4 + 1e-12, "{}: {:?}", text[0], s.prob_best);
        // Then one sentence per neighbouring pair of the ranking, in order.
        assert_eq!(text.len(), s.ranking.len(), "{text:?}");
        for (sentence, w) in text[1..].iter().zip(s.ranking.windows(2)) {
            let (a, b) = check_pair(&s, sentence, level);
            assert!((a == w[0] && b == w[1]) || (a == w[1] && b == w[0]), "{sentence} for {w:?}");
            settled += sentence.contains("settled (P") as usize;
            open += sentence.contains("cannot be separated") as usize;
            equivalent += sentence.contains("practically equivalent") as usize;
            behind += sentence.contains("is behind") as usize;
        }
    }
    // The random fits reach every kind of sentence.
    assert!(settled > 20 && open > 20 && equivalent > 5, "{settled} {open} {equivalent} {behind}");
}

#[test]
fn printed_probabilities_stay_on_their_side_of_the_line() {
    assert_eq!(super::prob(0.949_96, 0.95), "0.94996");
    assert_eq!(super::prob(0.95, 0.95), "0.950");
    assert_eq!(super::prob(0.499_9, 0.95), "0.4999");
    assert_eq!(super::prob(0.123_456, 0.95), "0.123");
    assert!(FitSummary::sentences(&random_fit(&mut SplitMix64(1)).0, "CRPS", 1.0).is_err());
}
