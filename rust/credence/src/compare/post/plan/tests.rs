use super::*;
use crate::compare::CpuBatch;
use crate::compare::fit::{FitOptions, Run, fit_on};
use crate::compare::model::GaussianOptions;
use crate::compare::model::gaussian::KnownHyper;
use crate::compare::post::planning::ClosedForm;
use crate::compare::sampler::Sampler;
use crate::compare::sampler::nuts::NutsSettings;
use crate::special::{norm_cdf, norm_quantile};

const MU0: f64 = 0.0;
const TAU: f64 = 1.0;

/// Stated values fitted by the additive model (its sampler trial and refits are what these
/// tests check; the default, the paired model, draws exactly).
fn stated() -> Stated {
    Stated {
        effect: 0.1,
        sigma_a: 0.2,
        sigma_b: 0.25,
        family: Family::Gaussian(GaussianOptions::default()),
        ..Default::default()
    }
}

fn options(rs: &[usize], sims: usize, rope: Option<f64>) -> PlanOptions {
    PlanOptions {
        a: "A".into(),
        b: "B".into(),
        realizations: rs.to_vec(),
        sims,
        decision: Decision { level: 0.9, rope },
        seed: 7,
        ..Default::default()
    }
}

/// Assurance of the known-hyperparameter posterior (no realization effect), in closed
/// form: with V_k = 1 / (1/tau^2 + R/sigma_k^2) and posterior means m_k = V_k (mu0/tau^2 +
/// R ybar_k/sigma_k^2), D = m_B - m_A is normal over data sets (ybar_k ~ N(mu_k,
/// sigma_k^2/R)), and the decision is D > eps + z_level sqrt(V_A + V_B).
fn closed_assurance(s: &Stated, r: usize, level: f64, eps: f64) -> f64 {
    let r = r as f64;
    let v = |sd: f64| 1.0 / (1.0 / (TAU * TAU) + r / (sd * sd));
    let (va, vb) = (v(s.sigma_a), v(s.sigma_b));
    let mean = vb * (MU0 / (TAU * TAU) + r * s.effect / s.sigma_b.powi(2)) - va * (MU0 / (TAU * TAU));
    let sd = (vb * vb * r / s.sigma_b.powi(2) + va * va * r / s.sigma_a.powi(2)).sqrt();
    1.0 - norm_cdf((eps + norm_quantile(level) * (va + vb).sqrt() - mean) / sd)
}

fn check(plan: &Plan, s: &Stated, eps: f64) {
    for p in &plan.points {
        let want = closed_assurance(s, p.r, plan.decision.level, eps);
        let mc = (want * (1.0 - want) / p.fits as f64).sqrt();
        assert!((p.assurance - want).abs() < 4.0 * mc + 0.01, "R = {}: {} vs closed form {want}", p.r, p.assurance);
    }
}

/// The simulation, decision and aggregation against the closed form, each table's
/// posterior computed exactly (the known-hyperparameter posterior is conjugate).
#[test]
fn assurance_matches_the_closed_form_with_exact_posteriors() {
    let s = stated();
    for (eps, sequential) in [(0.0, false), (0.05, false), (0.0, true)] {
        let o = PlanOptions { sequential, ..options(&[16, 4, 8, 32], 2000, (eps > 0.0).then_some(eps)) };
        let setup = Setup::new(PlanSource::Stated(&s), &o).unwrap();
        let exact = |designs: &[Design], _: usize| {
            Ok(designs
                .iter()
                .map(|d| {
                    let c = ClosedForm::new(d, MU0, TAU, &[s.sigma_a, s.sigma_b])?;
                    let gap = (c.mean[1] - c.mean[0]) / (c.var[0] + c.var[1]).sqrt();
                    let spread = (c.var[0] + c.var[1]).sqrt();
                    Ok(Outcome {
                        prob_better: norm_cdf(gap),
                        decision_prob: norm_cdf((c.mean[1] - c.mean[0] - eps) / spread),
                        clean: true,
                        refit: false,
                    })
                })
                .collect())
        };
        let p = run(&setup, &o, super::run::simulate(&setup, &o), exact, &|_, _| {}).unwrap();
        assert_eq!(p.points.iter().map(|x| x.r).collect::<Vec<_>>(), vec![4, 8, 16, 32]);
        check(&p, &s, eps);
        // The assurance grows with R here, and the plan names the first R reaching 0.8.
        assert!(p.points.windows(2).all(|w| w[0].assurance <= w[1].assurance + 0.02));
        let first = p.points.iter().find(|x| x.assurance >= 0.8).map(|x| x.r);
        assert_eq!(p.smallest_r, first);
        // Sequentially, every R here (closed form 0.25 to 0.69, power 0.8) is decided after
        // a block or two, on the closed form's side of the power; run to the end, every R gets
        // all 2000.
        for x in &p.points {
            let want = closed_assurance(&s, x.r, o.decision.level, eps);
            if sequential {
                assert!(x.fits <= 2 * run::BLOCK, "R = {}: {} fits", x.r, x.fits);
                assert_eq!(x.assurance >= o.power, want >= o.power, "R = {}", x.r);
            } else {
                assert_eq!(x.fits, 2000);
            }
        }
    }
}

/// The same with every table fitted by the sampler (NUTS with the hyperparameters held at
/// their values): the Monte Carlo error of each fit's P must not bias the decisions.
#[test]
fn assurance_matches_the_closed_form_with_sampled_posteriors() {
    let s = stated();
    let o = options(&[4, 16], 150, None);
    let setup = Setup::new(PlanSource::Stated(&s), &o).unwrap();
    let fo = FitOptions {
        family: Family::Gaussian(GaussianOptions { realization_effect: false, ..Default::default() }),
        sampler: Sampler::Nuts(NutsSettings { warmup: 200, draws: 400, max_draws: Some(400), ..Default::default() }),
        higher_is_better: false,
    };
    let sampled = |designs: &[Design], _: usize| {
        use rayon::prelude::*;
        Ok(designs
            .par_iter()
            .map(|d| {
                let known = KnownHyper { mu0: MU0, tau: TAU, sigma: vec![s.sigma_a, s.sigma_b] };
                let f = fit_on(d, &fo, &Run { fixed: Some(known), ..Run::default() })?;
                Outcome::of(f, "A", "B", &o.decision, None, false)
            })
            .collect())
    };
    let p = run(&setup, &o, super::run::simulate(&setup, &o), sampled, &|_, _| {}).unwrap();
    check(&p, &s, 0.0);
}

fn small() -> CheesSettings {
    CheesSettings { superchains: 2, chains_per_superchain: 2, warmup: 30, draws: 20, ..Default::default() }
}

#[test]
fn plans_do_not_depend_on_the_thread_count() {
    let s = Stated { sigma_gamma: 0.1, ..stated() };
    let o = PlanOptions { sampler: small(), ..options(&[3, 5], 6, None) };
    let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    let p1 = one.install(|| plan(PlanSource::Stated(&s), &o, &CpuBatch)).unwrap();
    let p2 = plan(PlanSource::Stated(&s), &o, &CpuBatch).unwrap();
    assert_eq!(p1.points, p2.points);
    assert_eq!(p1.backend, "cpu");
    let other = plan(PlanSource::Stated(&s), &PlanOptions { seed: 8, ..o.clone() }, &CpuBatch).unwrap();
    assert_ne!(other.points, p1.points);
}

#[test]
fn a_pilot_fit_gives_worlds_from_its_posterior() {
    // A pilot with a clear gap between A and B and a third method.
    let (mut g, mut pr, mut y) = (vec![], vec![], vec![]);
    for r in 0..8 {
        for (k, (m, mean)) in [("A", 0.0), ("B", 0.4), ("C", 0.2)].into_iter().enumerate() {
            g.push(m.to_string());
            pr.push(r.to_string());
            y.push(mean + 0.1 * (((r * 7 + k * 3) % 5) as f64 - 2.0) + 0.05 * r as f64);
        }
    }
    let d = Design::new(g, Some(pr), y, None).unwrap();
    let pilot = crate::compare::fit(&d, &FitOptions::default()).unwrap();
    let o = PlanOptions { sampler: small(), methods: Some(vec!["A".into(), "B".into()]), ..options(&[4], 8, None) };
    let p = plan(PlanSource::Pilot(&pilot), &o, &CpuBatch).unwrap();
    assert_eq!(p.methods, ["A", "B"]);
    assert_eq!(p.source, "pilot");
    let want = pilot.mdd("A", "B", 0.8, 4.0).unwrap();
    assert_eq!(p.points[0].mdd, want.mdd);
    assert!(p.points[0].expected_prob_better > 0.75, "{:?}", p.points[0]);
    // Bad requests are typed errors naming what is wrong.
    let e = plan(PlanSource::Pilot(&pilot), &PlanOptions { b: "Z".into(), ..o.clone() }, &CpuBatch).unwrap_err();
    assert!(e.to_string().contains("Z"), "{e}");
    let e =
        plan(PlanSource::Pilot(&pilot), &PlanOptions { realizations: vec![1], ..o.clone() }, &CpuBatch).unwrap_err();
    assert!(e.to_string().contains("at least 2"), "{e}");
    let twice = Some(vec!["A".into(), "B".into(), "A".into()]);
    let e = plan(PlanSource::Pilot(&pilot), &PlanOptions { methods: twice, ..o.clone() }, &CpuBatch).unwrap_err();
    assert!(e.to_string().contains("methods = A") && e.to_string().contains("twice"), "{e}");
    let e = plan(PlanSource::Pilot(&pilot), &PlanOptions { b: "A".into(), ..o.clone() }, &CpuBatch).unwrap_err();
    assert!(e.to_string().contains("two different"), "{e}");
    // A pilot whose fit is not clean (20 draws after 5 warmup iterations per chain: R-hat and
    // bulk-ESS far from the standard): refused, not planned from draws that are not the posterior.
    let short = Sampler::Nuts(NutsSettings { warmup: 5, draws: 20, max_draws: None, ..Default::default() });
    let broken = crate::compare::fit(&d, &FitOptions { sampler: short, ..FitOptions::default() }).unwrap();
    let e = plan(PlanSource::Pilot(&broken), &o, &CpuBatch).unwrap_err();
    assert!(e.to_string().contains("a clean fit"), "{e}");
    // A pilot whose residuals are all 0 (every method moves with the realization alone) is
    // refused by the fit itself: its posterior is improper.
    let flat: Vec<f64> = d.group().iter().zip(d.pair()).map(|(&k, &i)| [0.0, 0.4, 0.2][k] + 0.05 * i as f64).collect();
    let e = crate::compare::fit(&d.with_response(flat).unwrap(), &FitOptions::default()).unwrap_err();
    assert!(e.to_string().contains("improper"), "{e}");
}

#[test]
fn the_cpu_trial_picks_the_cheaper_sampler() {
    let s = Stated { sigma_gamma: 0.1, ..stated() };
    // The plan's ChEES defaults cost less than NUTS's on an easy two-method world: ChEES runs
    // the plan.
    let o = options(&[3, 5], 6, None);
    let p = plan(PlanSource::Stated(&s), &o, &CpuBatch).unwrap();
    let t = p.trial.unwrap();
    assert_eq!((p.sampler, t.tables), (SamplerName::Chees, 6));
    assert!(t.chees_gradient_evals < t.nuts_gradient_evals, "{t:?}");
    // A budget every ChEES fit exceeds makes ChEES the costlier (so do settings too short for
    // a clean fit: every table would need NUTS as well): NUTS fits every table, and none
    // counts as a refit.
    let stopped = PlanOptions { sampler: CheesSettings { max_gradient_evals: Some(10), ..o.sampler }, ..o.clone() };
    let q = plan(PlanSource::Stated(&s), &stopped, &CpuBatch).unwrap();
    let t = q.trial.unwrap();
    assert_eq!(q.sampler, SamplerName::Nuts);
    assert!(t.nuts_gradient_evals < t.chees_gradient_evals, "{t:?}");
    assert!(q.points.iter().all(|x| x.fits == 6 && x.refit == 0 && x.unclean == 0), "{:?}", q.points);
}

/// A stand-in for a device: ChEES on the CPU, except that every other table stops (as at
/// the gradient budget).
struct HalfStops;

impl BatchFitter for HalfStops {
    fn fit_batch(&self, designs: &[Design], options: &FitOptions) -> Result<Vec<Result<Fit>>> {
        let fits = CpuBatch.fit_batch(designs, options)?;
        Ok(fits
            .into_iter()
            .enumerate()
            .map(|(i, f)| if i % 2 == 1 { Err(Error::argument("max_gradient_evals", 1, "stand-in")) } else { f })
            .collect())
    }
    fn runs_on(&self, _: &Design, _: &FitOptions) -> String {
        "stand-in".into()
    }
}

#[test]
fn tables_chees_stops_are_fitted_by_nuts() {
    let s = Stated { sigma_gamma: 0.1, ..stated() };
    let o = PlanOptions { sampler: small(), ..options(&[3, 5], 6, None) };
    let p = plan(PlanSource::Stated(&s), &o, &HalfStops).unwrap();
    // No trial off the CPU; every stopped table refitted, none left out.
    assert_eq!((p.sampler, p.trial, p.backend.as_str()), (SamplerName::Chees, None, "stand-in"));
    for x in &p.points {
        assert_eq!((x.fits, x.failed), (6, 0), "{x:?}");
        assert!(x.refit >= 3, "{x:?}");
    }
}

/// A paired pilot's worlds read its covariance factor by method name: the same table with its
/// methods first met in another order (as an R data frame may hold them) plans the same.
#[test]
fn a_paired_pilot_plans_the_same_whatever_the_order_of_its_methods() {
    let table = |order: [&str; 3]| {
        let (mut g, mut pr, mut y) = (vec![], vec![], vec![]);
        for r in 0..10 {
            for m in order {
                let (k, mean) = match m {
                    "A" => (0, 0.0),
                    "B" => (1, 0.3),
                    _ => (2, 0.1),
                };
                g.push(m.to_string());
                pr.push(r.to_string());
                y.push(mean + 0.1 * (((r * 7 + k * 3) % 5) as f64 - 2.0) + 0.05 * r as f64 * (1.0 + k as f64));
            }
        }
        Design::new(g, Some(pr), y, None).unwrap()
    };
    let paired = FitOptions { family: crate::compare::Family::Paired(Default::default()), ..FitOptions::default() };
    let o = options(&[3, 6], 200, None);
    let plans: Vec<Plan> = [["A", "B", "C"], ["C", "B", "A"]]
        .into_iter()
        .map(|order| {
            let d = table(order);
            assert_eq!(d.groups()[0], order[0]);
            let pilot = crate::compare::fit(&d, &paired).unwrap();
            plan(PlanSource::Pilot(&pilot), &o, &CpuBatch).unwrap()
        })
        .collect();
    for (x, y) in plans[0].points.iter().zip(&plans[1].points) {
        assert!(x.assurance > 0.0 && (x.assurance - y.assurance).abs() < 1e-12, "{x:?} vs {y:?}");
    }
}

/// A pilot in which a method failed on some realizations plans with tables that lack it as
/// often (each cell on its own, realization by realization, so a shorter table is the start of
/// a longer one); the values are those of the same pilot's worlds without gaps, and the plan
/// says so in its warnings.
#[test]
fn simulated_tables_lack_methods_as_often_as_the_pilot() {
    let (mut g, mut pr, mut y) = (vec![], vec![], vec![]);
    for r in 0..12 {
        for (k, m) in ["A", "B", "C"].into_iter().enumerate() {
            // C failed on 3 of the 12 realizations.
            if m == "C" && r % 4 == 1 {
                continue;
            }
            g.push(m.to_string());
            pr.push(r.to_string());
            y.push(0.1 * k as f64 + 0.1 * (((r * 7 + k * 3) % 5) as f64 - 2.0) + 0.05 * r as f64);
        }
    }
    let d = Design::new(g, Some(pr), y, None).unwrap();
    assert_eq!(super::setup::pilot_missing(&d, &["A".into(), "B".into(), "C".into()]), [0.0, 0.0, 0.25]);
    let paired = FitOptions { family: crate::compare::Family::Paired(Default::default()), ..FitOptions::default() };
    let pilot = crate::compare::fit(&d, &paired).unwrap();
    let o = options(&[4, 40], 400, None);
    let mut setup = Setup::new(PlanSource::Pilot(&pilot), &o).unwrap();
    let (_, sims) = super::run::simulate(&setup, &o);
    let cells: Vec<&Vec<f64>> = sims.tables.iter().flatten().collect();
    let share = |k: usize| cells.iter().filter(|row| row[k].is_nan()).count() as f64 / cells.len() as f64;
    let se = (0.25 * 0.75 / cells.len() as f64).sqrt();
    assert!(share(0) == 0.0 && share(1) == 0.0 && (share(2) - 0.25).abs() < 4.0 * se, "{}", share(2));
    let gaps = sims.design(0, 40).unwrap();
    let short = sims.design(0, 4).unwrap();
    assert_eq!(gaps.n_obs(), 120 - sims.tables[0].iter().filter(|row| row[2].is_nan()).count());
    assert_eq!(short.y(), &gaps.y()[..short.n_obs()]);
    // Without gaps the same worlds give the same values where the gappy tables have them.
    setup.missing = vec![0.0; 3];
    let (_, full) = super::run::simulate(&setup, &o);
    for (a, b) in sims.tables.iter().flatten().zip(full.tables.iter().flatten()) {
        assert!(a.iter().zip(b).all(|(x, y)| x.is_nan() || x == y));
    }
    let p = plan(PlanSource::Pilot(&pilot), &options(&[6], 100, None), &CpuBatch).unwrap();
    assert!(p.warnings.iter().any(|w| w.contains("C on 25%")), "{:?}", p.warnings);
}

/// A paired pilot of 30 or more complete realizations lends its whitened residuals to the new
/// tables (mean 0, second moments I, so a world's covariance is kept and the pilot's tails come
/// along); a smaller pilot gives none, and its tables are normal.
#[test]
fn a_large_pilot_lends_its_residual_shapes() {
    let table = |r: usize| {
        let (mut g, mut pr, mut y) = (vec![], vec![], vec![]);
        for i in 0..r {
            for (k, m) in ["A", "B", "C"].into_iter().enumerate() {
                // C's values have a heavy tail: every seventh realization is far out.
                let tail = if m == "C" && i % 7 == 3 { 3.0 } else { 0.0 };
                g.push(m.to_string());
                pr.push(i.to_string());
                y.push(0.1 * k as f64 + 0.1 * (((i * 7 + k * 3) % 5) as f64 - 2.0) + 0.01 * i as f64 + tail);
            }
        }
        Design::new(g, Some(pr), y, None).unwrap()
    };
    let methods: Vec<String> = ["A", "B", "C"].map(String::from).to_vec();
    assert!(super::setup::whitened_residuals(&table(29), &methods).is_none());
    let pool = super::setup::whitened_residuals(&table(42), &methods).unwrap();
    assert_eq!(pool.len(), 42);
    for a in 0..3 {
        let mean = pool.iter().map(|z| z[a]).sum::<f64>() / 42.0;
        assert!(mean.abs() < 1e-12, "{mean}");
        for b in 0..3 {
            let m2 = pool.iter().map(|z| z[a] * z[b]).sum::<f64>() / 42.0;
            assert!((m2 - f64::from(u8::from(a == b))).abs() < 1e-9, "{a} {b}: {m2}");
        }
    }
    // The new tables of a large pilot hold its far-out values; a small pilot's are normal.
    let paired = FitOptions { family: crate::compare::Family::Paired(Default::default()), ..FitOptions::default() };
    let o = PlanOptions { a: "A".into(), b: "C".into(), ..options(&[40], 50, None) };
    let kurtosis = |r: usize| {
        let pilot = crate::compare::fit(&table(r), &paired).unwrap();
        let setup = Setup::new(PlanSource::Pilot(&pilot), &o).unwrap();
        let (_, sims) = super::run::simulate(&setup, &o);
        let c: Vec<f64> = sims.tables.iter().flatten().map(|row| row[2]).collect();
        let n = c.len() as f64;
        let mean = c.iter().sum::<f64>() / n;
        let m2 = c.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
        c.iter().map(|v| (v - mean).powi(4)).sum::<f64>() / n / (m2 * m2)
    };
    let (small, large) = (kurtosis(28), kurtosis(42));
    assert!(small < 3.6 && large > 4.0, "kurtosis: {small} (normal worlds), {large} (resampled)");
    // The shapes follow the realizations' labels: the same table with its rows reversed plans
    // the same.
    let d = table(42);
    let reversed = Design::new(
        d.group().iter().rev().map(|&g| d.groups()[g].clone()).collect(),
        Some(d.pair().iter().rev().map(|&p| d.pairs()[p].clone()).collect()),
        d.y().iter().rev().copied().collect(),
        None,
    )
    .unwrap();
    let o = PlanOptions { a: "A".into(), b: "C".into(), ..options(&[5], 100, None) };
    let plans: Vec<Plan> = [d, reversed]
        .iter()
        .map(|d| plan(PlanSource::Pilot(&crate::compare::fit(d, &paired).unwrap()), &o, &CpuBatch).unwrap())
        .collect();
    assert_eq!(plans[0].points[0].assurance, plans[1].points[0].assurance);
}

/// Cross-validation folds: a plan for the paired model with a test fraction simulates folds
/// that share one offset, so more folds stop paying: with F = 0.2 the mean difference keeps
/// Sigma / 4 of variance however many folds there are, and the assurance at 100 folds falls far
/// below that of 100 independent realizations and barely above that of 10 folds. The MDD
/// counts R folds as 1 / (1/R + F/(1 - F)) realizations.
#[test]
fn folds_of_one_data_set_stop_paying() {
    let paired = |cv_test_fraction: f64| Stated {
        family: Family::Paired(crate::compare::PairedOptions { cv_test_fraction, ..Default::default() }),
        ..stated()
    };
    let o = options(&[10, 100], 300, None);
    let independent = plan(PlanSource::Stated(&paired(0.0)), &o, &CpuBatch).unwrap();
    let folds = plan(PlanSource::Stated(&paired(0.2)), &o, &CpuBatch).unwrap();
    let at = |p: &Plan, k: usize| p.points[k].assurance;
    assert!(at(&independent, 1) > 0.85, "{:?}", independent.points);
    assert!(at(&folds, 1) < at(&independent, 1) - 0.4, "{:?}", folds.points);
    assert!(at(&folds, 1) - at(&folds, 0) < 0.15, "{:?}", folds.points);
    assert!(folds.warnings.iter().any(|w| w.contains("more folds of one data set cannot")), "{:?}", folds.warnings);
    // The MDD at 100 folds: z_0.8 sqrt(var (1/100 + 1/4)) with var = 0.2^2 + 0.25^2.
    let want = crate::special::norm_quantile(0.8) * ((0.2f64.powi(2) + 0.25f64.powi(2)) * (1.0 / 100.0 + 0.25)).sqrt();
    let got = folds.points[1].mdd;
    assert!((got - want).abs() < 1e-12, "MDD {got} vs {want}");
}
