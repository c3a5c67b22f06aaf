//! Known values of the issue and cross-checks against R / numpy.
// The known values are printed to six decimals (0.693147 is ln 2 rounded); tests index
// parallel arrays by position.
#![allow(clippy::approx_constant, clippy::needless_range_loop)]

use super::*;

fn ten() -> Vec<f64> {
    (1..=10).map(f64::from).collect()
}

#[test]
fn hyndman_fan_known_values() {
    let x = ten();
    for (t, want) in [
        (QuantileType::Type1, [3.0, 5.0, 8.0]),
        (QuantileType::Type6, [2.75, 5.5, 8.25]),
        (QuantileType::Type7, [3.25, 5.5, 7.75]),
    ] {
        for (u, w) in [0.25, 0.5, 0.75].into_iter().zip(want) {
            assert!((sample_quantile(&x, u, t).unwrap() - w).abs() < 1e-12, "{t:?} {u}");
        }
    }
    assert!(sample_quantile(&[], 0.5, QuantileType::Type7).is_err());
    assert!(sample_quantile(&x, 1.5, QuantileType::Type7).is_err());
}

#[test]
fn minimum_n_table() {
    let us = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5];
    for (level, want) in
        [(0.90, [230, 91, 45, 22, 9, 5]), (0.95, [299, 119, 59, 29, 11, 6]), (0.99, [459, 182, 90, 44, 17, 8])]
    {
        for (u, w) in us.into_iter().zip(want) {
            assert_eq!(min_n_exact(u, level).unwrap(), w, "{level} {u}");
            assert_eq!(min_n_exact(1.0 - u, level).unwrap(), w);
            if w < 200 {
                assert_eq!(min_n_exact_by_search(u, level), Some(w));
            }
        }
    }
    // Asymptotic: at the minimum n both positions lie in [1, n], one fewer does not.
    for u in [0.1, 0.5, 0.9] {
        for flip in [false, true] {
            let n = min_n_asymptotic(u, 0.9, flip).unwrap();
            let uu = if flip && u < 0.5 { 1.0 - u } else { u };
            assert!(asymptotic_positions(n, uu, 0.9).is_some() && asymptotic_positions(n - 1, uu, 0.9).is_none());
        }
    }
}

/// The quantile study's conventions, against values computed by hand from its formulas
/// (k, l = n (u -/+ z sqrt(u (1 - u) / n)), 1 <= k < l <= n, z = 1.6449 at 90%).
#[test]
fn defaults_follow_the_quantile_study() {
    // Minimum n at 90%, no flip (the study's text): u = 0.1 needs k = 0.1 n - 1.6449
    // sqrt(0.09 n) >= 1: n = 41 gives 4.1 - 3.160 = 0.940, n = 42 gives 4.2 - 3.198 = 1.002;
    // u = 0.9 needs l = 0.9 n + 1.6449 sqrt(0.09 n) <= n: n = 24 gives 24.018, n = 25 24.967.
    assert_eq!(min_n_asymptotic(0.1, 0.9, false).unwrap(), 42);
    assert_eq!(min_n_asymptotic(0.9, 0.9, false).unwrap(), 25);
    assert_eq!(min_n_asymptotic(0.1, 0.9, true).unwrap(), 25);
    // The interval for 1..20, u = 0.5, 90%: k, l = 10 -/+ 1.6449 sqrt(5) = 6.3219, 13.6781;
    // Q_L (type 6) at k / 20 and l / 20 sits at positions 21 k / 20 = 6.638 and 21 l / 20 =
    // 14.362, i.e. [6.638, 14.362] on these data; at the positions themselves [6.322, 13.678].
    let x: Vec<f64> = (1..=20).map(f64::from).collect();
    let z = crate::special::norm_quantile(0.95);
    let (k, l) = (10.0 - z * 5f64.sqrt(), 10.0 + z * 5f64.sqrt());
    let ci = quantile_ci(&x, 0.5, &CiOptions { method: CiMethod::Asymptotic, ..Default::default() }).unwrap();
    assert!((ci.lower.unwrap() - 6.638).abs() < 1e-3 && (ci.upper.unwrap() - 14.362).abs() < 1e-3, "{ci:?}");
    assert!((ci.lower.unwrap() - 21.0 * k / 20.0).abs() < 1e-12 && (ci.upper.unwrap() - 21.0 * l / 20.0).abs() < 1e-12);
    let at = CiOptions { method: CiMethod::Asymptotic, asymptotic_at: AsymptoticAt::Positions, ..Default::default() };
    let ci = quantile_ci(&x, 0.5, &at).unwrap();
    assert!((ci.lower.unwrap() - k).abs() < 1e-12 && (ci.upper.unwrap() - l).abs() < 1e-12);
    // No flip by default: u = 0.1 has no asymptotic interval at n = 30 (k = 3 - 2.70 < 1 needs
    // n >= 42), while the flipped rule has one (n >= 25).
    let y: Vec<f64> = (1..=30).map(f64::from).collect();
    let asym = CiOptions { method: CiMethod::Asymptotic, ..Default::default() };
    assert!(quantile_ci(&y, 0.1, &asym).unwrap().lower.is_none());
    assert!(quantile_ci(&y, 0.1, &CiOptions { flip_lower: true, ..asym }).unwrap().lower.is_some());
    // The bootstrap's statistic: for odd n the type-7 median is the order statistic of rank
    // (n + 1) / 2, so both statistics give the same replicates; for even n they differ.
    let boot = CiOptions { method: CiMethod::Bootstrap, replicates: 200, ..Default::default() };
    let order = CiOptions { bootstrap_statistic: BootstrapStatistic::OrderStatistic, ..boot };
    let odd: Vec<f64> = (1..=21).map(|i| f64::from(i).sqrt()).collect();
    assert_eq!(quantile_ci(&odd, 0.5, &boot).unwrap(), quantile_ci(&odd, 0.5, &order).unwrap());
    let even = &odd[..20];
    assert_ne!(quantile_ci(even, 0.5, &boot).unwrap().lower, quantile_ci(even, 0.5, &order).unwrap().lower);
}

#[test]
fn exact_intervals_cover_as_promised() {
    for n in [10, 23, 50] {
        for u in [0.1, 0.5, 0.8] {
            if let Some((k, l, c)) = exact_indices(n, u, 0.9, false) {
                assert!(c >= 0.9 - 1e-12 && k < l);
                // No interval of smaller span reaches the level.
                for k2 in 1..n {
                    for l2 in k2 + 1..=n {
                        if l2 - k2 < l - k {
                            assert!(order_coverage(n, u, k2, l2) < 0.9);
                        }
                    }
                }
                // Coverage as a direct sum of binomial probabilities.
                let direct: f64 = (k..l)
                    .map(|s| {
                        let lc: f64 = (1..=n).map(|i| (i as f64).ln()).sum::<f64>()
                            - (1..=s).map(|i| (i as f64).ln()).sum::<f64>()
                            - (1..=n - s).map(|i| (i as f64).ln()).sum::<f64>();
                        (lc + s as f64 * u.ln() + (n - s) as f64 * (1.0 - u).ln()).exp()
                    })
                    .sum();
                assert!((direct - c).abs() < 1e-10);
            }
            if let Some((k, l, c)) = exact_indices(n, u, 0.9, true) {
                assert!(c >= 0.9 - 1e-12);
                assert!(order_coverage(n, u, 0, k) <= 0.05 + 1e-12 && order_coverage(n, u, l, n + 1) <= 0.05 + 1e-12);
            }
        }
    }
    // The median of 1..=10 at 0.9: span-minimal (3, 8) covers 0.8906 < 0.9 -> (2, 8) or (3, 9)
    // with 0.9346 each; equal centre distance, so the smaller k wins.
    assert_eq!(exact_indices(10, 0.5, 0.9, false).map(|(k, l, _)| (k, l)), Some((2, 8)));
}

#[test]
fn sign_flip_mirrors_intervals() {
    let x = [0.31, 0.12, 0.55, 0.47, 0.29, 0.83, 0.05, 0.66, 0.71, 0.38, 0.44, 0.91, 0.19, 0.25, 0.6];
    let neg: Vec<f64> = x.iter().map(|v| -v).collect();
    for method in [CiMethod::Exact, CiMethod::EqualTailed, CiMethod::Asymptotic, CiMethod::BootstrapExact] {
        let o = CiOptions { method, flip_lower: true, ..Default::default() };
        let a = quantile_ci(&x, 0.2, &o).unwrap();
        let b = quantile_ci(&neg, 0.8, &o).unwrap();
        assert_eq!(a.lower.map(|v| -v), b.upper, "{method:?}");
        assert_eq!(a.upper.map(|v| -v), b.lower);
        assert!((a.estimate + b.estimate).abs() < 1e-12);
    }
    // Too few runs for the 0.01 quantile: no exact interval.
    let ci = quantile_ci(&x, 0.01, &CiOptions::default()).unwrap();
    assert!(ci.lower.is_none() && ci.upper.is_none());
}

#[test]
fn bootstrap_monte_carlo_converges_to_its_beta_limit() {
    let x = [2.1, 3.4, 1.7, 5.2, 4.4, 3.9, 2.8, 6.1, 3.3, 4.8, 2.5, 3.0];
    let exact = quantile_ci(&x, 0.75, &CiOptions { method: CiMethod::BootstrapExact, ..Default::default() }).unwrap();
    let mc = quantile_ci(
        &x,
        0.75,
        &CiOptions {
            method: CiMethod::Bootstrap,
            bootstrap_statistic: BootstrapStatistic::OrderStatistic,
            replicates: 200_000,
            seed: 3,
            ..Default::default()
        },
    )
    .unwrap();
    assert!((exact.lower.unwrap() - mc.lower.unwrap()).abs() < 0.03, "{exact:?} {mc:?}");
    assert!((exact.upper.unwrap() - mc.upper.unwrap()).abs() < 0.03, "{exact:?} {mc:?}");
    // Same seed, same interval.
    let o = CiOptions { method: CiMethod::Bootstrap, ..Default::default() };
    assert_eq!(quantile_ci(&x, 0.75, &o).unwrap(), quantile_ci(&x, 0.75, &o).unwrap());
    // Hutson's Q: type 6 inside, continuous at the knots, exponential tails.
    let s = sorted(&x, "x").unwrap();
    let n1 = 13.0;
    assert!((hutson_quantile(&s, 1.0 / n1) - s[0]).abs() < 1e-12);
    assert!((hutson_quantile(&s, 12.0 / n1) - s[11]).abs() < 1e-12);
    assert!((hutson_quantile(&s, 0.5 / n1) - (s[0] + (s[1] - s[0]) * 0.5f64.ln())).abs() < 1e-12);
    assert!((hutson_quantile(&s, 0.4) - quantile_sorted(&s, 0.4, QuantileType::Type6)).abs() < 1e-12);
}

#[test]
fn t_interval_matches_scipy() {
    // scipy.stats.t.interval(0.95, 9, loc=5.5, scale=stats.sem(range(1, 11))) = (3.334149, 7.665851)
    let ci = t_interval(&ten(), 0.95).unwrap();
    assert!((ci.lower - 3.334149).abs() < 1e-6 && (ci.upper - 7.665851).abs() < 1e-6, "{ci:?}");
}

#[test]
fn coverage_harness() {
    for dist in [SimDistribution::Normal, SimDistribution::Beta, SimDistribution::Bimodal] {
        assert!((dist.cdf(dist.quantile(0.3)) - 0.3).abs() < 1e-9);
        let o = CiOptions::default();
        let r = coverage_simulation(dist, 30, 0.5, 2000, 9, &o).unwrap();
        // Exact interval for the median at n = 30: nominal coverage >= 0.9 for any continuous
        // distribution; 2000 reps give a binomial sd of about 0.007.
        let (_, _, nominal) = exact_indices(30, 0.5, 0.9, false).unwrap();
        assert!((r.coverage.unwrap() - nominal).abs() < 0.025, "{r:?} {nominal}");
        assert!(r.rmse > 0.0 && r.length_rel_idr.unwrap() > 0.0);
    }
    // Thread-count independence.
    let o = CiOptions { method: CiMethod::Bootstrap, replicates: 200, ..Default::default() };
    let a = coverage_simulation(SimDistribution::Bimodal, 20, 0.9, 64, 5, &o).unwrap();
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    assert_eq!(one.install(|| coverage_simulation(SimDistribution::Bimodal, 20, 0.9, 64, 5, &o).unwrap()), a);
}

/// Types 1, 6, 7 against R's quantile(type = ) and numpy's inverted_cdf / weibull / linear, on
/// data with ties, when Rscript or the project's Python venv is present.
#[test]
fn quantile_types_match_r_and_numpy() {
    let x = [3.2, 1.5, 4.4, 1.5, 9.1, 2.2, 7.3, 5.5, 0.4, 6.6, 2.2, 8.8, 3.9];
    let us = [0.0, 0.01, 0.1, 0.25, 0.333, 0.5, 0.77, 0.9, 0.99, 1.0];
    let xs = x.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(",");
    let ps = us.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(",");
    let mut checked = 0;
    let r = format!(
        "x<-c({xs});p<-c({ps});for(t in c(1,6,7)) cat(format(quantile(x,p,type=t,names=FALSE),digits=17),'\\n')"
    );
    let py = format!(
        "import numpy as np\nx=np.array([{xs}]);p=[{ps}]\nfor m in ['inverted_cdf','weibull','linear']: print(' '.join(repr(float(v)) for v in np.quantile(x,p,method=m)))"
    );
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let pythons = [root.join(".venv/bin/python"), std::path::PathBuf::from("/work/main/.venv/bin/python")];
    let mut runs: Vec<(String, std::process::Output)> = Vec::new();
    if let Ok(o) = std::process::Command::new("Rscript").args(["-e", &r]).output() {
        runs.push(("R".into(), o));
    }
    if let Some(p) = pythons.iter().find(|p| p.exists()) {
        runs.push(("numpy".into(), std::process::Command::new(p).args(["-c", &py]).output().unwrap()));
    }
    for (who, out) in runs {
        if !out.status.success() {
            continue;
        }
        let text = String::from_utf8_lossy(&out.stdout);
        for (line, t) in text.lines().zip([QuantileType::Type1, QuantileType::Type6, QuantileType::Type7]) {
            for (v, &u) in line.split_whitespace().zip(&us) {
                let want: f64 = v.parse().unwrap();
                let got = sample_quantile(&x, u, t).unwrap();
                assert!((got - want).abs() < 1e-12, "{who} {t:?} u={u}: {got} vs {want}");
                checked += 1;
            }
        }
    }
    let strict = std::env::var("CI").as_deref() == Ok("true") || std::env::var("CREDENCE_STRICT").as_deref() == Ok("1");
    if checked == 0 && strict {
        panic!("a full test run needs Rscript or the Python venv for the quantile cross-check (scripts/setup)");
    }
    eprintln!("quantile types cross-checked on {checked} values");
}

/// Groups sorted (`NA` last), missing values skipped, a missing key is the group `NA`; the
/// type-7 quantiles of each group equal those of its values alone (x = 1..10 and
/// 10 x (1..10)); errors name the file, the column and the group.
#[test]
fn quantile_table_groups_and_errors() {
    let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let mut method = vec!["B"; 10];
    method.extend(vec!["A"; 10]);
    method.extend(["", "", "A"]);
    let mut crps: Vec<String> = (1..=10).map(|i| (10 * i).to_string()).collect();
    crps.extend((1..=10).map(|i| i.to_string()));
    crps.extend(strings(&["7", "8", "NA"]));
    let t =
        crate::io::Table::from_columns("runs.csv", vec![("method".into(), strings(&method)), ("crps".into(), crps)])
            .unwrap();
    let by = vec!["method".to_string()];
    let q = quantile_table(&t, "crps", &by, &[0.25, 0.75], &CiOptions::default()).unwrap();
    let keys: Vec<(&str, usize)> = q.groups.iter().map(|g| (g.key[0].as_str(), g.n)).collect();
    assert_eq!(keys, [("A", 10), ("B", 10), ("NA", 2)]);
    assert_eq!((q.groups[0].quantiles[0].estimate, q.groups[0].quantiles[1].estimate), (3.25, 7.75));
    assert_eq!((q.groups[1].quantiles[0].estimate, q.groups[1].quantiles[1].estimate), (32.5, 77.5));
    let m = q.groups[0].mean.unwrap();
    assert_eq!(m.mean, 5.5);
    // What was left out or merged is said, not done silently.
    assert_eq!(
        q.warnings,
        [
            "runs.csv: column 'crps' has missing values (empty, NA or NaN), left out: 1 in group A",
            "runs.csv: column 'method' is missing (empty, NA or NaN) in 2 row(s), grouped together as 'NA'"
        ]
    );
    // A one-run group has no interval: the error names the file, column and group.
    let one = crate::io::Table::from_columns(
        "one.csv",
        vec![("method".into(), strings(&["A", "A", "C"])), ("crps".into(), strings(&["1", "2", "3"]))],
    )
    .unwrap();
    let e = quantile_table(&one, "crps", &by, &[0.5], &CiOptions::default()).unwrap_err().to_string();
    assert!(e.starts_with("one.csv: column 'crps' (group C): x: shape [1]"), "{e}");
    let bad = CiOptions { level: 1.5, ..CiOptions::default() };
    let e = quantile_table(&t, "crps", &[], &[0.5], &bad).unwrap_err().to_string();
    assert!(e.starts_with("runs.csv: column 'crps': invalid level = 1.5"), "{e}");
    let empty = crate::io::Table::from_columns("e.csv", vec![("crps".into(), strings(&["NA", ""]))]).unwrap();
    let e = quantile_table(&empty, "crps", &[], &[0.5], &CiOptions::default()).unwrap_err().to_string();
    assert_eq!(e, "e.csv: column 'crps' has no values");
    // The levels 0 and 1 (minimum, maximum) have no interval: refused by name before any group,
    // not answered with empty bounds.
    for u in [0.0, 1.0, -0.5, f64::NAN] {
        let e = quantile_table(&t, "crps", &by, &[0.5, u], &CiOptions::default()).unwrap_err().to_string();
        assert!(e.starts_with(&format!("invalid u = {u}: expected a quantile level in (0, 1)")), "{e}");
        assert!(quantile_ci(&[1.0, 2.0, 3.0], u, &CiOptions::default()).is_err());
        assert!(min_n_exact(u, 0.9).is_err());
    }
}

/// Groups of a table written in completion order come out by data set, n and method, whatever
/// the order of the grouping columns; sizes numerically (5 < 30 < 100, not "100" < "30" < "5").
#[test]
fn groups_sort_by_dataset_n_and_method_numbers_numerically() {
    let by: Vec<String> = ["method", "seed", "n", "dataset"].iter().map(|s| s.to_string()).collect();
    let key = |m: &str, seed: &str, n: &str, d: &str| -> Vec<String> { [m, seed, n, d].map(String::from).to_vec() };
    let mut keys = [
        key("swag", "2", "100", "b"),
        key("map", "10", "30", "b"),
        key("swag", "1", "5", "a"),
        key("map", "1", "100", "a"),
        key("map", "2", "5", "a"),
        key("NA", "1", "5", "a"),
        key("map", "10", "5", "a"),
        key("mcd", "1", "1e2", "a"),
    ];
    keys.sort_by(|a, b| group_order(&by, a, b));
    let order: Vec<String> = keys.iter().map(|k| k.join(" ")).collect();
    assert_eq!(
        order,
        [
            "map 2 5 a",
            "map 10 5 a",
            "swag 1 5 a",
            "NA 1 5 a",
            "map 1 100 a",
            "mcd 1 1e2 a",
            "map 10 30 b",
            "swag 2 100 b",
        ]
    );
}
