use super::*;
use crate::compare::model::gradient_error;

/// Per-item rows: M methods x R realizations x n items; `shared` reuses the item labels.
fn rows(values: &dyn Fn(usize, usize, usize) -> f64, m: usize, r: usize, n: usize, shared: bool) -> Design {
    let (mut g, mut p, mut k, mut y) = (vec![], vec![], vec![], vec![]);
    for q in 0..r {
        for i in 0..n {
            for a in 0..m {
                g.push(format!("m{a}"));
                p.push(format!("r{q}"));
                k.push(if shared { format!("i{i}") } else { format!("r{q}:i{i}") });
                y.push(values(a, q, i));
            }
        }
    }
    average_items(&g, &p, &k, &y, "item").unwrap()
}

/// A deterministic spread of numbers in (-0.5, 0.5).
fn wobble(a: usize, q: usize, i: usize) -> f64 {
    ((a * 7919 + q * 104_729 + i * 1_299_709) % 1000) as f64 / 1000.0 - 0.5
}

#[test]
fn nested_items_give_each_realization_its_items_covariance_over_their_number() {
    let d = rows(&|a, q, i| a as f64 + wobble(a, q, i) + 0.3 * wobble(0, q, i), 2, 3, 5, false);
    let s = d.items().unwrap();
    assert_eq!(s.layout, ItemLayout::Nested);
    assert_eq!((s.n.clone(), s.df), (vec![5, 5, 5], 12));
    // By hand for realization r1: the two methods' values over its five items.
    let v: Vec<[f64; 2]> =
        (0..5).map(|i| [wobble(0, 1, i) * 1.3, 1.0 + wobble(1, 1, i) + 0.3 * wobble(0, 1, i)]).collect();
    let mean = |k: usize| v.iter().map(|x| x[k]).sum::<f64>() / 5.0;
    let cov01 = v.iter().map(|x| (x[0] - mean(0)) * (x[1] - mean(1))).sum::<f64>() / 4.0 / 5.0;
    let q = s.realization("r1").unwrap();
    assert!((s.noise[q][1] - cov01).abs() < 1e-12, "{} vs {cov01}", s.noise[q][1]);
    // The design holds the realization means.
    let j = (0..d.n_obs()).find(|&j| d.groups()[d.group()[j]] == "m0" && d.pairs()[d.pair()[j]] == "r1").unwrap();
    assert!((d.y()[j] - mean(0)).abs() < 1e-12);
}

#[test]
fn shared_items_split_the_items_offset_from_the_residual_noise() {
    // y = item effect only: no item-by-realization residual, so E = 0 and H = C / n.
    let d = rows(&|a, _, i| (a + 1) as f64 * wobble(0, 0, i), 2, 4, 6, true);
    let s = d.items().unwrap();
    assert_eq!((s.layout, s.df), (ItemLayout::Shared, 15));
    assert!(s.noise.iter().flatten().all(|v| v.abs() < 1e-14));
    let h: Vec<f64> = (0..6).map(|i| wobble(0, 0, i)).collect();
    let hm = h.iter().sum::<f64>() / 6.0;
    let var = h.iter().map(|x| (x - hm).powi(2)).sum::<f64>() / 5.0;
    let shared = s.shared_noise.as_ref().unwrap();
    // Methods' item effects 1 h and 2 h: covariance [[1, 2], [2, 4]] var / n.
    for (got, want) in shared.iter().zip([1.0, 2.0, 2.0, 4.0]) {
        assert!((got - want * var / 6.0).abs() < 1e-12, "{got} vs {}", want * var / 6.0);
    }
}

#[test]
fn partly_shared_items_and_missing_methods_are_refused_by_name() {
    let g: Vec<String> = ["a", "b", "a", "b", "a", "b", "a", "b"].iter().map(|s| s.to_string()).collect();
    let p: Vec<String> = ["1", "1", "1", "1", "2", "2", "2", "2"].iter().map(|s| s.to_string()).collect();
    let k: Vec<String> = ["x", "x", "y", "y", "x", "x", "z", "z"].iter().map(|s| s.to_string()).collect();
    let y: Vec<f64> = (0..8).map(|i| i as f64 * 0.1).collect();
    let e = average_items(&g, &p, &k, &y, "item").unwrap_err().to_string();
    assert!(e.contains("in some realizations but not in all"), "{e}");
    let e = average_items(&g[..7], &p[..7], &k[..7], &y[..7], "item").unwrap_err().to_string();
    assert!(e.contains("method 'b' has no value for item 'z' of realization '2'"), "{e}");
    let mut dup = k.clone();
    dup[2] = "x".into();
    let e = average_items(&g, &p, &dup, &y, "item").unwrap_err().to_string();
    assert!(e.contains("has one already") && e.contains("[2]"), "{e}");
}

#[test]
fn the_gradient_matches_finite_differences() {
    for shared in [false, true] {
        let d = rows(&|a, q, i| 0.2 * a as f64 + wobble(a, q, i) + 0.5 * wobble(7, q, 0), 3, 4, 8, shared);
        let model = ItemModel::new(&d, PairedOptions::default()).unwrap();
        for theta in [[-1.0, -0.5, -2.0, -1.5], [0.3, -3.0, -1.0, 0.1]] {
            let err = gradient_error(&model, &theta);
            assert!(err < 1e-6, "shared {shared}, theta {theta:?}: relative error {err}");
        }
    }
}

#[test]
fn the_marginal_likelihood_is_the_normal_density_with_mu_integrated_out() {
    // One method pair, two realizations, known scales: compare with the density of the
    // realization means integrated over mu numerically (flat mu, 2-D grid).
    let d = rows(&|a, q, i| 0.1 * a as f64 + wobble(a, q, i) + 0.2 * wobble(3, q, 0), 2, 3, 4, false);
    let model = ItemModel::new(&d, PairedOptions::default()).unwrap();
    let (tau2, a2) = ([0.02, 0.05], 0.03);
    let gls = model.gls(&tau2, a2).unwrap();
    let ln_normal = |y: &[f64], mu: [f64; 2], w: &[f64]| {
        let det = w[0] * w[3] - w[1] * w[2];
        let (d0, d1) = (y[0] - mu[0], y[1] - mu[1]);
        let q = (w[3] * d0 * d0 - 2.0 * w[1] * d0 * d1 + w[0] * d1 * d1) / det;
        -0.5 * q - 0.5 * det.ln() - (2.0 * std::f64::consts::PI).ln()
    };
    let (lo, hi, steps) = (-1.5, 1.6, 600);
    let h = (hi - lo) / steps as f64;
    let mut total = 0.0;
    for i in 0..steps {
        for j in 0..steps {
            let mu = [lo + (i as f64 + 0.5) * h, lo + (j as f64 + 0.5) * h];
            let ll: f64 = model
                .means
                .iter()
                .zip(&model.noise)
                .map(|(y, e)| {
                    let w: Vec<f64> =
                        (0..4).map(|k| e[k] + a2 + if k / 2 == k % 2 { tau2[k / 2] } else { 0.0 }).collect();
                    ln_normal(y, mu, &w)
                })
                .sum();
            total += ll.exp() * h * h;
        }
    }
    // gls drops 2 pi per dimension of the data less mu's: R M/2 - M/2 of them.
    let r = model.means.len() as f64;
    let want = total.ln() + (r * 2.0 / 2.0 - 1.0) * (2.0 * std::f64::consts::PI).ln();
    assert!((gls.log_lik - want).abs() < 1e-4, "{} vs {want}", gls.log_lik);
}

#[test]
fn a_design_without_items_or_with_folds_is_refused() {
    let d = rows(&|a, q, i| wobble(a, q, i), 2, 3, 4, true);
    let folds = PairedOptions { cv_test_fraction: 0.1, ..PairedOptions::default() };
    assert!(ItemModel::new(&d, folds).is_err());
    let plain =
        Design::new(vec!["a".into(), "b".into()], Some(vec!["1".into(), "1".into()]), vec![0.1, 0.2], None).unwrap();
    assert!(ItemModel::new(&plain, PairedOptions::default()).is_err());
}

#[test]
fn the_row_order_changes_no_bit() {
    let (mut g, mut p, mut k, mut y) = (vec![], vec![], vec![], vec![]);
    for q in 0..3 {
        for i in 0..7 {
            for a in 0..2 {
                g.push(format!("m{a}"));
                p.push(format!("r{q}"));
                k.push(format!("i{i}"));
                y.push(wobble(a, q, i) + 0.1 * a as f64);
            }
        }
    }
    let forward = average_items(&g, &p, &k, &y, "item").unwrap();
    let rev = |v: &[String]| v.iter().rev().cloned().collect::<Vec<_>>();
    let ys: Vec<f64> = y.iter().rev().copied().collect();
    let backward = average_items(&rev(&g), &rev(&p), &rev(&k), &ys, "item").unwrap();
    assert_eq!(forward.y(), backward.y());
    let (a, b) = (forward.items().unwrap(), backward.items().unwrap());
    for label in &a.realizations {
        let (i, j) = (a.realization(label).unwrap(), b.realization(label).unwrap());
        // Methods in each one's order of appearance: compare by label.
        for (x, mx) in a.methods.iter().enumerate() {
            for (z, mz) in a.methods.iter().enumerate() {
                let (bx, bz) = (b.method(mx).unwrap(), b.method(mz).unwrap());
                let m = a.methods.len();
                assert_eq!(a.noise[i][x * m + z].to_bits(), b.noise[j][bx * m + bz].to_bits());
                let (sa, sb) = (a.shared_noise.as_ref().unwrap(), b.shared_noise.as_ref().unwrap());
                assert_eq!(sa[x * m + z].to_bits(), sb[bx * m + bz].to_bits());
            }
        }
    }
}
