//! Kernel 3 (`kernels/chees.cu`) against the CPU sampler: the device log density of every
//! model kind against `Posterior::logp`, transitions (with and without step halving) against
//! `Ensemble::transition` through the C++ shim, the device's cross-chain reductions
//! (`chees_reduce`) against the CPU adaptation's, full batched fits through the shim against
//! the CPU fits (with and without metric windows), and the same on a GPU where there is one.
//! The shim runs the kernel's arithmetic operation for operation as the Rust reference does,
//! on the same libm: its results must be equal to the last bit.

use std::path::{Path, PathBuf};

use super::super::chees::{Batch, fit_many_with};
use super::super::launch::{
    BatchInit, ChainLauncher, LaunchIn, LaunchOut, WANT_DRAWS, WANT_GRADIENT, WANT_WINDOW, WANT_WINDOW_M2,
};
use super::{Reader, device, harness, run_harness, workspace_root};
use crate::compare::model::beta_binomial::BetaBinomialModel;
use crate::compare::model::collapsed::{CollapsedGaussian, Geometry};
use crate::compare::model::gaussian::GaussianModel;
use crate::compare::model::{Likelihood, Parameterization, Posterior, SigmaStructure};
use crate::compare::sampler::chees::adapt::MetricWindow;
use crate::compare::sampler::chees::ensemble::Ensemble;
use crate::compare::sampler::chees::{CheesRun, Want, run_chees_on};
use crate::compare::{
    BetaBinomialOptions, CheesSettings, Design, Family, Fit, FitOptions, GaussianOptions, GaussianPriors,
    LocationPrior, Sampler, ScalePrior, fit_many,
};
use crate::error::Result;
use crate::seeds::SplitMix64;

/// Designs from the shared fixture tests/data/report_table.csv (3 methods x 8 realizations at
/// n = 30 and n = 100; responses crps and nll).
fn fixtures() -> Vec<Design> {
    let text = std::fs::read_to_string(workspace_root().join("tests/data/report_table.csv")).unwrap();
    let rows: Vec<Vec<String>> = text.lines().skip(1).map(|l| l.split(',').map(str::to_owned).collect()).collect();
    let mut out = Vec::new();
    for (n, col) in [("30", 4), ("100", 5), ("100", 4)] {
        let pick: Vec<&Vec<String>> = rows.iter().filter(|r| r[1] == n).collect();
        let g = pick.iter().map(|r| r[2].clone()).collect();
        let p = pick.iter().map(|r| r[3].clone()).collect();
        let y = pick.iter().map(|r| r[col].parse::<f64>().unwrap()).collect();
        out.push(Design::new(g, Some(p), y, None).unwrap());
    }
    out
}

/// Coverage counts from the same fixture: k = round(40 crps) of n = 40 trials (3 methods x 8
/// realizations at n = 30 and 100).
fn count_fixtures() -> Vec<Design> {
    fixtures()[..2]
        .iter()
        .map(|d| {
            let k = d.y().iter().map(|v| (40.0 * v).round()).collect();
            let g = d.group().iter().map(|&i| d.groups()[i].clone()).collect();
            let p = d.pair().iter().map(|&i| d.pairs()[i].clone()).collect();
            Design::new(g, Some(p), k, Some(vec![40.0; d.n_obs()])).unwrap()
        })
        .collect()
}

/// An unbalanced design from the first fixture: two cells dropped and one observed twice, so
/// that the collapsed model has several count patterns and empty cells.
fn unbalanced_fixture() -> Design {
    let d = &fixtures()[0];
    let (mut g, mut p, mut y) = (Vec::new(), Vec::new(), Vec::new());
    for j in 0..d.n_obs() {
        let (gj, pj) = (d.group()[j], d.pair()[j]);
        if (gj, pj) == (0, 1) || (gj, pj) == (2, 5) {
            continue;
        }
        let copies = if (gj, pj) == (1, 3) { 2 } else { 1 };
        for k in 0..copies {
            g.push(d.groups()[gj].clone());
            p.push(d.pairs()[pj].clone());
            y.push(d.y()[j] * (1.0 + 0.1 * k as f64));
        }
    }
    Design::new(g, Some(p), y, None).unwrap()
}

/// Every beta-binomial variant: the three forms of the method block (conditional is what Auto
/// picks), phi shared or per method, with and without the realization effect.
fn count_variants() -> Vec<BetaBinomialOptions> {
    let mut v = Vec::new();
    for phi_per_method in [false, true] {
        for realization_effect in [true, false] {
            for mu in [Parameterization::Centered, Parameterization::NonCentered, Parameterization::Auto] {
                let mut o = BetaBinomialOptions { phi_per_method, realization_effect, ..Default::default() };
                o.mu_parameterization = mu;
                v.push(o);
            }
        }
    }
    v
}

/// Priors away from the defaults: a half Student-t tau (the log map) and an exponential sigma.
fn other_priors() -> GaussianPriors {
    GaussianPriors {
        mu0: LocationPrior::Normal { mean: 0.4, sd: 0.5 },
        tau: ScalePrior::HalfStudentT { df: 3.0, scale: 0.5 },
        sigma: ScalePrior::Exponential { rate: 2.0 },
        sigma_gamma: ScalePrior::Gamma { shape: 2.0, rate: 3.0 },
        ..Default::default()
    }
}

/// Every collapsed variant: sigma per method or shared, with and without the realization
/// effect, default and other priors.
fn collapsed_variants() -> Vec<GaussianOptions> {
    let mut v = Vec::new();
    for sigma in [SigmaStructure::PerMethod, SigmaStructure::Shared] {
        for realization_effect in [true, false] {
            for priors in [GaussianPriors::default(), other_priors()] {
                v.push(GaussianOptions { sigma, realization_effect, priors, ..Default::default() });
            }
        }
    }
    v
}

/// The uncollapsed (kind 0) variants: sigma per method or shared, realization effect
/// integrated out or absent, method means as Auto picks, centred (with a reference method) or
/// non-centred.
fn variants() -> Vec<GaussianOptions> {
    let mut v = Vec::new();
    for sigma in [SigmaStructure::PerMethod, SigmaStructure::Shared] {
        for effect in [true, false] {
            for mu in [Parameterization::Auto, Parameterization::Centered, Parameterization::NonCentered] {
                v.push(GaussianOptions {
                    sigma,
                    realization_effect: effect,
                    mu_parameterization: mu,
                    ..Default::default()
                });
            }
        }
    }
    v
}

fn le<T: Copy>(out: &mut Vec<u8>, v: &[T], f: impl Fn(T) -> Vec<u8>) {
    v.iter().for_each(|&x| out.extend(f(x)));
}

/// |got - want| <= tol max(|want|, 1), NaN and infinities matching in kind.
fn near(what: &str, got: &[f64], want: &[f64], tol: f64) -> f64 {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    let mut worst = 0.0f64;
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        if !w.is_finite() || !g.is_finite() {
            assert!(g.is_nan() == w.is_nan() && (g.is_nan() || g == w), "{what}[{i}]: {g} vs {w}");
            continue;
        }
        let e = (g - w).abs() / w.abs().max(1.0);
        assert!(e <= tol, "{what}[{i}]: {g} vs reference {w} (relative error {e:e})");
        worst = worst.max(e);
    }
    worst
}

/// The bits of `got` equal those of `want` (any NaN matching any NaN).
fn same(what: &str, got: &[f64], want: &[f64]) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!(g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()), "{what}[{i}]: {g:e} vs reference {w:e}");
    }
}

/// Every model the kernel implements, labelled: the uncollapsed Gaussian (kind 0), the
/// beta-binomial (kind 1) and the collapsed Gaussian (kind 2) variants.
fn device_models() -> Vec<(String, Box<dyn Posterior>)> {
    let designs = fixtures();
    let counts = count_fixtures();
    let mut models: Vec<(String, Box<dyn Posterior>)> = Vec::new();
    for (k, opts) in variants().into_iter().enumerate() {
        models.push((format!("{opts:?}"), Box::new(GaussianModel::new(&designs[k % designs.len()], opts, None))));
    }
    for (k, opts) in count_variants().into_iter().enumerate() {
        models.push((format!("{opts:?}"), Box::new(BetaBinomialModel::new(&counts[k % counts.len()], opts))));
    }
    let collapsed = [designs[0].clone(), designs[1].clone(), unbalanced_fixture()];
    for (i, d) in collapsed.iter().enumerate() {
        for opts in collapsed_variants() {
            let label = format!("collapsed, design {i}, {opts:?}");
            models.push((label, Box::new(CollapsedGaussian::new(d, opts, Geometry::Pooled))));
        }
    }
    // The per-chain geometry's mirrored maps of sigma (ChEES uses the pooled one), with and
    // without a prior scale (half Student-t sigma).
    let mut per_chain = collapsed_variants();
    let t_sigma = GaussianPriors { sigma: ScalePrior::HalfStudentT { df: 4.0, scale: 0.3 }, ..Default::default() };
    per_chain.push(GaussianOptions { priors: t_sigma, ..Default::default() });
    for opts in per_chain {
        let label = format!("collapsed per chain, {opts:?}");
        models.push((label, Box::new(CollapsedGaussian::new(&designs[0], opts, Geometry::PerChain))));
    }
    models
}

#[test]
fn device_log_density_equals_posterior_logp() {
    let Some(exe) = harness() else { return };
    let mut rng = SplitMix64(5);
    let mut worst = 0.0f64;
    let (mut references, mut kinds, mut not_finite) = (0, [0; 3], 0);
    for (opts, model) in &device_models() {
        let flat = model.device_model(0).unwrap_or_else(|e| panic!("{opts}: {e}"));
        references += usize::from(flat.ints[13] == 0 && flat.ints[10] >= 0);
        kinds[flat.ints[13] as usize] += 1;
        // 12 points in [-1.5, 1.5]^dim, 2 in [-6, 6]^dim, one in [-41, -31]^dim (the softplus
        // map's exponential form) and one with coordinates alternately near 7 and -300 (the
        // collapsed model's pivots leave the range of one logarithm, or its location block is
        // not numerically positive definite: a NaN density).
        let (dim, points) = (model.dim(), 16);
        let th: Vec<f64> = (0..points * dim)
            .map(|i| match (i / dim, i % dim) {
                (0..12, _) => 3.0 * (rng.uniform() - 0.5),
                (12..14, _) => 12.0 * (rng.uniform() - 0.5),
                (14, _) => -31.0 - 10.0 * rng.uniform(),
                (_, k) if k % 2 == 0 => 6.0 + 2.0 * rng.uniform(),
                _ => -300.0 + 10.0 * rng.uniform(),
            })
            .collect();
        let mut input = Vec::new();
        le(&mut input, &[points, flat.ints.len(), flat.doubles.len(), dim, flat.work], |v| {
            (v as i64).to_le_bytes().to_vec()
        });
        le(&mut input, &flat.ints, |v| v.to_le_bytes().to_vec());
        le(&mut input, &flat.doubles, |v| v.to_le_bytes().to_vec());
        le(&mut input, &th, |v| v.to_le_bytes().to_vec());
        let out = run_harness(&exe, "chees_logp", &input);
        let mut r = Reader(&out);
        let (lp, grad) = (r.f64s(points), r.f64s(points * dim));
        assert!(r.0.is_empty());
        for i in 0..points {
            let mut g = vec![0.0; dim];
            let want = model.logp(&th[i * dim..(i + 1) * dim], &mut g);
            not_finite += usize::from(!want.is_finite());
            worst = worst.max(near(&format!("{opts} lp"), &lp[i..=i], &[want], 1e-12));
            worst = worst.max(near(&format!("{opts} grad"), &grad[i * dim..(i + 1) * dim], &g, 1e-12));
        }
    }
    assert!(references > 0, "no variant exercised the reference method");
    assert!(kinds.iter().all(|&k| k > 0), "model kinds exercised: {kinds:?}");
    eprintln!(
        "chees_logp: {kinds:?} models of kinds 0, 1, 2; worst relative error {worst:.1e} (tolerance 1e-12); \
         {not_finite} points with a non-finite density"
    );
}

#[test]
fn unsupported_variants_are_typed_errors() {
    let d = &fixtures()[0];
    let small = CheesSettings { superchains: 2, chains_per_superchain: 2, warmup: 20, draws: 4, ..Default::default() };
    for opts in [
        GaussianOptions { likelihood: Likelihood::StudentT, ..Default::default() },
        GaussianOptions { gamma_parameterization: Parameterization::Centered, ..Default::default() },
        GaussianOptions { gamma_parameterization: Parameterization::NonCentered, ..Default::default() },
    ] {
        let model = GaussianModel::new(d, opts, None);
        assert!(model.device_model(0).is_err(), "{opts:?}");
        let options = FitOptions { family: Family::Gaussian(opts), sampler: Sampler::chees(), ..Default::default() };
        let why = crate::backend::chees_kernel_unsupported(d, &options).unwrap();
        assert!(!why.is_empty());
        if !crate::backend::Backend::cuda_available() {
            // Auto falls back to the CPU; forcing CUDA is an error, never a panic.
            let o = FitOptions { sampler: Sampler::Chees(small), ..options };
            assert!(crate::backend::fit_one_on(crate::backend::Backend::Auto, d, &o, &|_, _| {}).is_ok());
            assert!(crate::backend::fit_one_on(crate::backend::Backend::Cuda, d, &o, &|_, _| {}).is_err());
        }
    }
    // What the kernel does implement: the default (collapsed, kind 2), the uncollapsed forms a
    // user can force with the realization effect integrated out (kind 0), every beta-binomial
    // form (kind 1).
    let forced =
        |mu, gamma| GaussianOptions { mu_parameterization: mu, gamma_parameterization: gamma, ..Default::default() };
    let counts = &count_fixtures()[0];
    let cases = [
        (d, Family::default(), 2),
        (d, Family::Gaussian(GaussianOptions { realization_effect: false, ..Default::default() }), 2),
        (d, Family::Gaussian(forced(Parameterization::Auto, Parameterization::Conditional)), 0),
        (d, Family::Gaussian(forced(Parameterization::Centered, Parameterization::Auto)), 0),
        (d, Family::Gaussian(forced(Parameterization::NonCentered, Parameterization::Conditional)), 0),
        (counts, Family::BetaBinomial(BetaBinomialOptions::default()), 1),
        (
            counts,
            Family::BetaBinomial(BetaBinomialOptions {
                mu_parameterization: Parameterization::Centered,
                ..Default::default()
            }),
            1,
        ),
    ];
    for (design, family, kind) in cases {
        let options = FitOptions { family, sampler: Sampler::chees(), ..Default::default() };
        assert_eq!(crate::backend::chees_kernel_unsupported(design, &options), None, "{family:?}");
        let fit_options = crate::compare::FitOptions { family, ..Default::default() };
        let prepared = crate::compare::fit::prepare(design, &fit_options, None, Geometry::Pooled).unwrap();
        assert_eq!(prepared.model.device_model(0).unwrap().ints[13], kind, "{family:?}");
    }
}

#[derive(Clone)]
struct ShimState {
    pos: Vec<f64>,
    grad: Vec<f64>,
    logp: Vec<f64>,
    block: Vec<u64>,
    spare_flag: Vec<i32>,
    spare: Vec<f64>,
}

/// Everything `chees_transition` writes (all designs, chain-major within each).
struct Transition {
    pos: Vec<f64>,
    q: Vec<f64>,
    p: Vec<f64>,
    lp: Vec<f64>,
    accept: Vec<f64>,
    adapt_accept: Vec<f64>,
    divergent: Vec<i32>,
    energy: Vec<f64>,
    evals: Vec<i32>,
}

/// The start of a harness run's input: the sizes (designs, chains per design, launches, model
/// ints and doubles, chains x dims, scratch), the Philox key, the offsets and the flat models.
fn batch_header(init: &BatchInit, launches: usize) -> Vec<u8> {
    let n = init.chains;
    let mut input = Vec::new();
    let header = [init.designs(), n, launches, init.mi.len(), init.md.len(), init.dims * n, init.work];
    le(&mut input, &header, |v| (v as i64).to_le_bytes().to_vec());
    le(&mut input, &[init.key.0 as i64, init.key.1 as i64], |v| v.to_le_bytes().to_vec());
    le(&mut input, &init.off, |v| v.to_le_bytes().to_vec());
    le(&mut input, &init.mi, |v| v.to_le_bytes().to_vec());
    le(&mut input, &init.md, |v| v.to_le_bytes().to_vec());
    input
}

/// The chains' states as the harnesses read them: positions, gradients, log densities and the
/// Philox blocks with their spare normals.
fn write_chains(input: &mut Vec<u8>, state: &ShimState) {
    for v in [&state.pos, &state.grad, &state.logp] {
        le(input, v, |x| x.to_le_bytes().to_vec());
    }
    le(input, &state.block, |v| v.to_le_bytes().to_vec());
    le(input, &state.spare_flag, |v| v.to_le_bytes().to_vec());
    le(input, &state.spare, |v| v.to_le_bytes().to_vec());
}

/// Everything one launch writes, with the Philox state.
struct ShimOut {
    out: Transition,
    state: ShimState,
}

fn shim_launch(exe: &std::path::Path, init: &BatchInit, state: &ShimState, launches: &[LaunchIn]) -> Vec<ShimOut> {
    let n = init.chains;
    let designs = init.off.len() / 4;
    let chains = designs * n;
    let cells = init.dims * n;
    let mut input = batch_header(init, launches.len());
    le(&mut input, &launches[0].inv_mass, |v| v.to_le_bytes().to_vec());
    write_chains(&mut input, state);
    for l in launches {
        assert_eq!(l.inv_mass, launches[0].inv_mass, "the harness takes one metric per run");
        le(&mut input, &l.eps, |v| v.to_le_bytes().to_vec());
        le(&mut input, &l.steps, |v| v.to_le_bytes().to_vec());
        le(&mut input, &l.moves, |v| v.to_le_bytes().to_vec());
        le(&mut input, &[l.max_error], |v| v.to_le_bytes().to_vec());
    }
    let out = run_harness(exe, "chees", &input);
    let mut r = Reader(&out);
    let res = launches
        .iter()
        .map(|_| {
            let (out, state) = read_transition(&mut r, cells, chains);
            ShimOut { out, state }
        })
        .collect();
    assert!(r.0.is_empty(), "harness wrote more than expected");
    res
}

/// One launch's transition and chain state as the harness writes them (`cells` doubles of
/// positions, `chains` per-chain values).
fn read_transition(r: &mut Reader<'_>, cells: usize, chains: usize) -> (Transition, ShimState) {
    let pos = r.f64s(cells);
    let grad = r.f64s(cells);
    let logp = r.f64s(chains);
    let q = r.f64s(cells);
    let p = r.f64s(cells);
    let lp = r.f64s(chains);
    let accept = r.f64s(chains);
    let adapt_accept = r.f64s(chains);
    let divergent = r.i32s(chains);
    let energy = r.f64s(chains);
    let evals = r.i32s(chains);
    let block = (0..chains).map(|_| u64::from_le_bytes(r.take())).collect();
    let spare_flag = r.i32s(chains);
    let spare = r.f64s(chains);
    let transition = Transition { pos: pos.clone(), q, p, lp, accept, adapt_accept, divergent, energy, evals };
    (transition, ShimState { pos, grad, logp, block, spare_flag, spare })
}

/// The five designs of the shim's transition and reduction tests: two collapsed Gaussian (the
/// second with shared sigma and other priors), the uncollapsed Gaussian, two beta-binomial
/// forms (the second centred).
fn five_models() -> Vec<Box<dyn Posterior>> {
    let (designs, counts) = (fixtures(), count_fixtures());
    let centred = BetaBinomialOptions { mu_parameterization: Parameterization::Centered, ..Default::default() };
    vec![
        Box::new(CollapsedGaussian::new(&designs[0], GaussianOptions::default(), Geometry::Pooled)),
        Box::new(CollapsedGaussian::new(
            &designs[1],
            GaussianOptions { sigma: SigmaStructure::Shared, priors: other_priors(), ..Default::default() },
            Geometry::Pooled,
        )),
        Box::new(GaussianModel::new(&designs[2], GaussianOptions::default(), None)),
        Box::new(BetaBinomialModel::new(&counts[0], BetaBinomialOptions::default())),
        Box::new(BetaBinomialModel::new(&counts[1], centred)),
    ]
}

/// The batch of the ensembles `ens` of `models` (in order, with their chains' states) as
/// [`Batch`] builds it, and their metrics concatenated.
fn batch_of(models: &[Box<dyn Posterior>], ens: &[Ensemble<'_>], s: &CheesSettings) -> (BatchInit, Vec<f64>) {
    let mut init = BatchInit { chains: s.chains(), key: (s.seed as u32, (s.seed >> 32) as u32), ..Default::default() };
    let mut inv_mass = Vec::new();
    for (b, (e, m)) in ens.iter().zip(models).enumerate() {
        init.push_model(&m.device_model(b as u32).unwrap());
        init.pos.extend(&e.pos);
        init.grad.extend(&e.grad);
        init.logp.extend(&e.logp);
        inv_mass.extend(&e.inv_mass);
    }
    (init, inv_mass)
}

/// Per launch of the transition test: step size, steps per design, move flag.
type Plan = (f64, [i32; 5], i32);

/// Transitions of five designs (two collapsed Gaussian, the uncollapsed Gaussian, two
/// beta-binomial forms) through the shim against `Ensemble::transition` under `walnuts`; returns
/// how many chains (halved a step, were rejected as irreversible, diverged).
fn shim_transitions(exe: &std::path::Path, walnuts: Option<f64>, plan: &[Plan]) -> (usize, usize, usize) {
    // Odd dimensions (a spare normal is left after drawing the momenta and must carry over).
    let s = CheesSettings { superchains: 4, chains_per_superchain: 2, walnuts, ..Default::default() };
    let models = five_models();
    let kinds: Vec<i32> = models.iter().map(|m| m.device_model(0).unwrap().ints[13]).collect();
    assert_eq!(kinds, [2, 2, 0, 1, 1]);
    let mut ens: Vec<Ensemble<'_>> =
        models.iter().enumerate().map(|(b, m)| Ensemble::new(m.as_ref(), &s, b as u32).unwrap()).collect();
    let mut rng = SplitMix64(9);
    // A metric of unequal scales, and two CPU transitions so that the streams have advanced.
    for e in ens.iter_mut() {
        e.inv_mass.iter_mut().for_each(|v| *v = 0.05 + 0.3 * rng.uniform());
        e.transition(0.1, 3, true, Want::Draws).unwrap();
        e.transition(0.05, 2, true, Want::Draws).unwrap();
    }
    let n = s.chains();
    let (init, inv_mass) = batch_of(&models, &ens, &s);
    let mut state = ShimState {
        pos: init.pos.clone(),
        grad: init.grad.clone(),
        logp: init.logp.clone(),
        block: vec![],
        spare_flag: vec![],
        spare: vec![],
    };
    for (block, spare) in ens.iter().flat_map(|e| &e.streams).map(|st| st.state()) {
        state.block.push(block);
        state.spare_flag.push(i32::from(spare.is_some()));
        state.spare.push(spare.unwrap_or(0.0));
    }
    let launches: Vec<LaunchIn> = plan
        .iter()
        .map(|&(eps, steps, mv)| LaunchIn {
            inv_mass: inv_mass.clone(),
            eps: vec![eps; models.len()],
            steps: steps.to_vec(),
            moves: vec![mv; models.len()],
            max_error: walnuts.unwrap_or(f64::NAN),
            ..Default::default()
        })
        .collect();
    let got = shim_launch(exe, &init, &state, &launches);
    let (mut halved, mut irreversible, mut diverged, mut spares) = (0, 0, 0, 0);
    for (l, (&(eps, steps, mv), shim)) in plan.iter().zip(&got).enumerate() {
        let mut at = 0;
        for (b, e) in ens.iter_mut().enumerate() {
            let evals_before = e.gradient_evals.clone();
            e.transition(eps, steps[b] as usize, mv == 1, Want::Draws).unwrap();
            let d = e.dim;
            let (lo, hi) = (at * n, (at + d) * n);
            at += d;
            let c = b * n..(b + 1) * n;
            let o = &shim.out;
            let label = |w: &str| format!("walnuts {walnuts:?} launch {l} design {b} {w}");
            same(&label("pos"), &o.pos[lo..hi], &e.pos);
            same(&label("q"), &o.q[lo..hi], &e.q);
            same(&label("p"), &o.p[lo..hi], &e.p);
            same(&label("lp"), &o.lp[c.clone()], &e.lp);
            same(&label("accept"), &o.accept[c.clone()], &e.accept);
            same(&label("adapt_accept"), &o.adapt_accept[c.clone()], &e.adapt_accept);
            same(&label("energy"), &o.energy[c.clone()], &e.energy);
            let div: Vec<bool> = o.divergent[c.clone()].iter().map(|&v| v == 1).collect();
            assert_eq!(div, e.divergent, "{}", label("divergent"));
            let evals: Vec<u64> = e.gradient_evals.iter().zip(&evals_before).map(|(a, b)| a - b).collect();
            let got_evals: Vec<u64> = o.evals[c.clone()].iter().map(|&v| v as u64).collect();
            assert_eq!(got_evals, evals, "{}", label("evals"));
            diverged += div.iter().filter(|&&v| v).count();
            irreversible += o.divergent[c.clone()].iter().filter(|&&v| v == 2).count();
            halved += evals.iter().filter(|&&v| v > steps[b] as u64).count();
            for (k, st) in e.streams.iter().enumerate() {
                let (block, spare) = st.state();
                assert_eq!(shim.state.block[b * n + k], block, "{}", label("Philox block"));
                assert_eq!(shim.state.spare_flag[b * n + k] != 0, spare.is_some(), "{}", label("spare flag"));
                if let Some(v) = spare {
                    spares += 1;
                    same(&label("spare"), &[shim.state.spare[b * n + k]], &[v]);
                }
            }
        }
    }
    assert!(spares > 0, "no spare normal carried over");
    (halved, irreversible, diverged)
}

#[test]
fn cpu_shim_transitions_match_ensemble_transition() {
    let Some(exe) = harness() else { return };
    // Ordinary steps, no move (the step-size search), a large step that diverges, a different
    // step count per design, and steps large enough to be halved.
    let plan: [Plan; 6] = [
        (0.08, [4; 5], 1),
        (0.2, [1; 5], 0),
        (40.0, [6; 5], 1),
        (0.03, [7, 2, 5, 3, 4], 1),
        (0.7, [5; 5], 1),
        (1.6, [4; 5], 1),
    ];
    let (halved, irreversible, diverged) = shim_transitions(&exe, None, &plan);
    assert!(diverged > 0, "the large step diverged nowhere");
    assert_eq!((halved, irreversible), (0, 0), "no halving without a tolerance");
    let (halved, irreversible, diverged) = shim_transitions(&exe, Some(2.0), &plan);
    eprintln!(
        "chees transitions with halving: {halved} chains halved a step, {irreversible} irreversible, {diverged} divergent"
    );
    assert!(halved > 0, "no step was halved");
    assert!(irreversible > 0, "no trajectory was rejected as irreversible");
    assert!(diverged > 0, "no trajectory diverged after its halvings");
}

/// The harness for the launch tests: its mode `chees_launch` runs `chees_transition` then
/// `chees_reduce` per launch through the shim, the whole device state passed in and out.
fn launch_harness() -> Option<PathBuf> {
    harness()
}

/// The device state of a batch between launches: the chains' (as [`ShimState`]), the positions
/// before the last transition, and the metric windows' running means and M2.
#[derive(Clone)]
struct DeviceState {
    chains: ShimState,
    prev: Vec<f64>,
    window_mean: Vec<f64>,
    window_m2: Vec<f64>,
}

impl DeviceState {
    /// What the launcher uploads: the initial chains, prev = their positions, the windows
    /// unset (NaN: a window starts from zero whatever they hold).
    fn new(init: &BatchInit) -> Self {
        let chains = init.designs() * init.chains;
        DeviceState {
            chains: ShimState {
                pos: init.pos.clone(),
                grad: init.grad.clone(),
                logp: init.logp.clone(),
                block: vec![0; chains],
                spare_flag: vec![0; chains],
                spare: vec![0.0; chains],
            },
            prev: init.pos.clone(),
            window_mean: vec![f64::NAN; init.dims],
            window_m2: vec![f64::NAN; init.dims],
        }
    }
}

/// Everything one launch of the launch harness writes.
struct Launched {
    transition: Transition,
    state: DeviceState,
    reduced: Vec<f64>,
}

/// `launches` in one run of the launch harness from `state`.
fn harness_launches(exe: &Path, init: &BatchInit, state: &DeviceState, launches: &[LaunchIn]) -> Vec<Launched> {
    let n = init.chains;
    let designs = init.designs();
    let chains = designs * n;
    let cells = init.dims * n;
    let mut input = batch_header(init, launches.len());
    write_chains(&mut input, &state.chains);
    for v in [&state.prev, &state.window_mean, &state.window_m2] {
        le(&mut input, v, |x| x.to_le_bytes().to_vec());
    }
    for l in launches {
        le(&mut input, &l.inv_mass, |v| v.to_le_bytes().to_vec());
        le(&mut input, &l.eps, |v| v.to_le_bytes().to_vec());
        le(&mut input, &l.steps, |v| v.to_le_bytes().to_vec());
        le(&mut input, &l.moves, |v| v.to_le_bytes().to_vec());
        le(&mut input, &[l.max_error], |v| v.to_le_bytes().to_vec());
        le(&mut input, &l.want, |v| v.to_le_bytes().to_vec());
        le(&mut input, &l.jitter, |v| v.to_le_bytes().to_vec());
        le(&mut input, &l.window_count, |v| v.to_le_bytes().to_vec());
    }
    let out = run_harness_at(exe, &input);
    let mut r = Reader(&out);
    let res = launches
        .iter()
        .map(|_| {
            let (transition, chains) = read_transition(&mut r, cells, chains);
            let prev = r.f64s(cells);
            let window_mean = r.f64s(init.dims);
            let window_m2 = r.f64s(init.dims);
            let reduced = r.f64s(2 * designs);
            Launched { transition, state: DeviceState { chains, prev, window_mean, window_m2 }, reduced }
        })
        .collect();
    assert!(r.0.is_empty(), "harness wrote more than expected");
    res
}

/// Runs the launch harness's mode `chees_launch`.
fn run_harness_at(exe: &Path, input: &[u8]) -> Vec<u8> {
    run_harness(exe, "chees_launch", input)
}

/// What `CheesLauncher` copies back from a launch, taken from the harness's full buffers with
/// the same ranges (`LaunchIn::covering`, `BatchInit::dim_range`).
fn copied_back(init: &BatchInit, input: &LaunchIn, l: &Launched) -> LaunchOut {
    let n = init.chains;
    let draws = input.covering(WANT_DRAWS);
    let windows = input.covering(WANT_WINDOW_M2);
    let cells = init.dim_range(&draws);
    let chains = draws.start * n..draws.end * n;
    let t = &l.transition;
    LaunchOut {
        reduced: l.reduced.clone(),
        evals: t.evals.clone(),
        pos: t.pos[cells.start * n..cells.end * n].to_vec(),
        accept: t.accept[chains.clone()].to_vec(),
        divergent: t.divergent[chains.clone()].to_vec(),
        energy: t.energy[chains].to_vec(),
        window_m2: l.state.window_m2[init.dim_range(&windows)].to_vec(),
        draws,
        windows,
    }
}

/// Runs a batch's launches through the shim (the launch harness, one run per launch, the
/// device state kept here): a stand-in for the GPU.
struct ShimLauncher {
    exe: PathBuf,
    state: Option<DeviceState>,
}

impl ChainLauncher for ShimLauncher {
    fn launch(&mut self, init: &BatchInit, input: &LaunchIn) -> Result<LaunchOut> {
        let state = self.state.take().unwrap_or_else(|| DeviceState::new(init));
        let mut r = harness_launches(&self.exe, init, &state, std::slice::from_ref(input));
        let l = r.remove(0);
        let out = copied_back(init, input, &l);
        self.state = Some(l.state);
        Ok(out)
    }
}

/// Per launch of the reduction test: step size, steps and move flag per design, `WANT_*`
/// flags (the same for every design), jitter.
type ReducePlan = (f64, [i32; 5], [i32; 5], i32, f64);

#[test]
fn cpu_shim_reductions_equal_the_cpu_adaptation() {
    let Some(exe) = launch_harness() else { return };
    let s = CheesSettings { superchains: 4, chains_per_superchain: 2, ..Default::default() };
    let models = five_models();
    let mut ens: Vec<Ensemble<'_>> =
        models.iter().enumerate().map(|(b, m)| Ensemble::new(m.as_ref(), &s, b as u32).unwrap()).collect();
    let mut rng = SplitMix64(17);
    for e in ens.iter_mut() {
        e.inv_mass.iter_mut().for_each(|v| *v = 0.05 + 0.3 * rng.uniform());
    }
    let n = s.chains();
    let (init, inv_mass) = batch_of(&models, &ens, &s);
    let (grad, window, m2) = (WANT_GRADIENT, WANT_WINDOW, WANT_WINDOW | WANT_WINDOW_M2);
    // A window over launches 0-4 (restarted at 5), the step-size search (no move) in between,
    // design 2 skipped twice, a step so large that nothing is accepted (the gradient's
    // 1e-4 cut), then kept draws.
    let plan: [ReducePlan; 9] = [
        (0.08, [4; 5], [1; 5], grad | window, 0.5),
        (0.2, [1; 5], [0; 5], 0, 0.0),
        (0.03, [7, 2, 5, 3, 4], [1, 1, -1, 1, 1], grad | window, 0.25),
        (0.4, [3; 5], [1; 5], grad | window, 0.75),
        (40.0, [6; 5], [1; 5], grad | m2, 0.625),
        (0.1, [5; 5], [1, 1, -1, 1, 1], grad | window, 0.125),
        (0.15, [4; 5], [1; 5], grad | m2, 0.375),
        (0.12, [3; 5], [1; 5], WANT_DRAWS, 0.0),
        (0.12, [2; 5], [1; 5], grad, 0.875),
    ];
    let mut windows: Vec<MetricWindow> = ens.iter().map(|e| MetricWindow::new(e.dim)).collect();
    // The window counts the launcher would be given: per design, states pooled so far.
    let mut state = DeviceState::new(&init);
    let (mut gradients, mut cut, mut moments) = (0, 0, 0);
    for (l, &(eps, steps, moves, want, jitter)) in plan.iter().enumerate() {
        let input = LaunchIn {
            inv_mass: inv_mass.clone(),
            eps: vec![eps; 5],
            steps: steps.to_vec(),
            moves: moves.to_vec(),
            max_error: s.walnuts.unwrap_or(f64::NAN),
            want: vec![want; 5],
            jitter: vec![jitter; 5],
            window_count: windows.iter().map(|w| w.count).collect(),
        };
        let got = harness_launches(&exe, &init, &state, std::slice::from_ref(&input)).remove(0);
        let back = copied_back(&init, &input, &got);
        for (b, e) in ens.iter_mut().enumerate() {
            let label = |w: &str| format!("launch {l} design {b} {w}");
            let (lo, hi) = (init.dims_before(b), init.dims_before(b + 1));
            if moves[b] < 0 {
                // Skipped: the device's prev stays what it was.
                same(&label("prev (skipped)"), &got.state.prev[lo * n..hi * n], &state.prev[lo * n..hi * n]);
                continue;
            }
            let prev = e.pos.clone();
            same(&label("prev before"), &state.prev[lo * n..hi * n], &prev);
            e.transition(eps, steps[b] as usize, moves[b] == 1, Want::Draws).unwrap();
            same(&label("pos"), &got.transition.pos[lo * n..hi * n], &e.pos);
            same(&label("mean accept"), &got.reduced[2 * b..=2 * b], &[e.mean_accept()]);
            let want_g = if want & grad != 0 { e.chees_gradient(&prev, jitter) } else { 0.0 };
            same(&label("ChEES gradient"), &got.reduced[2 * b + 1..=2 * b + 1], &[want_g]);
            if want & grad != 0 {
                gradients += usize::from(want_g != 0.0);
                cut += usize::from(e.accept.iter().sum::<f64>() / n as f64 <= 1e-4);
            }
            if want & window != 0 {
                windows[b].add(&e.pos);
                same(&label("window M2"), &got.state.window_m2[lo..hi], &windows[b].m2);
                moments += 1;
            }
            if want & WANT_WINDOW_M2 != 0 {
                // What the launcher copies back, and then the window restarts.
                same(&label("window M2 copied back"), &back.window_m2[lo..hi], &windows[b].m2);
                windows[b] = MetricWindow::new(e.dim);
            }
            if want & WANT_DRAWS != 0 {
                same(&label("draws"), &back.pos[lo * n..hi * n], &e.pos);
                same(&label("accept"), &back.accept[b * n..(b + 1) * n], &e.accept);
                same(&label("energy"), &back.energy[b * n..(b + 1) * n], &e.energy);
            }
            // The positions before the next transition.
            same(&label("prev after"), &got.state.prev[lo * n..hi * n], &e.pos);
        }
        assert_eq!(back.pos.is_empty(), want & WANT_DRAWS == 0, "launch {l}: positions copied back");
        assert_eq!(back.window_m2.is_empty(), want & WANT_WINDOW_M2 == 0, "launch {l}: M2 copied back");
        state = got.state;
    }
    eprintln!("chees_reduce: {gradients} non-zero gradients, {cut} cut at 1e-4, {moments} window updates");
    assert!(gradients > 20 && cut >= 1 && moments >= 25, "{gradients} {cut} {moments}");
}

/// A model whose density is NaN at the origin (and nowhere else the chains go): the Laplace
/// approximation, which starts there, fails, so the sampler learns the metric in Stan's
/// windows. The device runs the model itself ([`Posterior::device_model`]).
struct NoLaplace(Box<dyn Posterior>);

impl Posterior for NoLaplace {
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn logp(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        if x.iter().all(|&v| v == 0.0) {
            return f64::NAN;
        }
        self.0.logp(x, grad)
    }
    fn outputs(&self) -> &[crate::compare::model::Output] {
        self.0.outputs()
    }
    fn aux_dim(&self) -> usize {
        self.0.aux_dim()
    }
    fn constrain(&self, x: &[f64], aux: &[f64], out: &mut [f64]) {
        self.0.constrain(x, aux, out)
    }
    fn form(&self) -> String {
        self.0.form()
    }
    fn simulate(&self, constrained: &[f64], rng: &mut dyn rand::Rng) -> Vec<f64> {
        self.0.simulate(constrained, rng)
    }
    fn sample_prior(&self, rng: &mut dyn rand::Rng) -> Vec<f64> {
        self.0.sample_prior(rng)
    }
    fn device_model(&self, data_set: u32) -> std::result::Result<crate::compare::model::device::DeviceModel, String> {
        self.0.device_model(data_set)
    }
}

/// Runs `run_chees_on` for every model on `device` (one thread each, as `fit_many_chees_with`).
fn runs_on(posts: &[NoLaplace], s: &CheesSettings, device: &Batch) -> Vec<CheesRun> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = posts
            .iter()
            .enumerate()
            .map(|(i, p)| {
                scope.spawn(move || {
                    let r = run_chees_on(p, s, i as u32, Some(device), &|_, _| {});
                    device.leave(i);
                    r
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap().unwrap()).collect()
    })
}

#[test]
fn cpu_shim_fit_with_metric_windows_equals_cpu_fit() {
    let Some(exe) = launch_harness() else { return };
    let designs = fixtures();
    let counts = count_fixtures();
    let posts = [
        NoLaplace(Box::new(CollapsedGaussian::new(&designs[0], GaussianOptions::default(), Geometry::Pooled))),
        NoLaplace(Box::new(BetaBinomialModel::new(&counts[0], BetaBinomialOptions::default()))),
    ];
    // 200 warmup iterations: windows [75, 100) and [100, 150), each followed by the step-size
    // search and a restart of T.
    let s = CheesSettings {
        superchains: 4,
        chains_per_superchain: 2,
        warmup: 200,
        draws: 6,
        max_draws: None,
        ..Default::default()
    };
    let batch = Batch::new(0, posts.len(), &s, Box::new(ShimLauncher { exe, state: None }));
    let got = runs_on(&posts, &s, &batch);
    for (i, (p, g)) in posts.iter().zip(&got).enumerate() {
        let want = run_chees_on(p, &s, i as u32, None, &|_, _| {}).unwrap();
        let label = |w: &str| format!("design {i} {w}");
        // The metric was learned (the first is all ones without the Laplace variances).
        assert!(want.inv_mass.iter().any(|&v| v != 1.0), "{}", label("no metric window ran"));
        same(&label("inv_mass"), &g.inv_mass, &want.inv_mass);
        same(&label("step, T"), &[g.step_size, g.trajectory_length], &[want.step_size, want.trajectory_length]);
        assert_eq!(g.max_leapfrog_hits, want.max_leapfrog_hits, "{}", label("capped iterations"));
        for (c, (x, y)) in g.chains.iter().zip(&want.chains).enumerate() {
            same(&label(&format!("chain {c} draws")), &x.draws, &y.draws);
            assert_eq!(x.gradient_evals, y.gradient_evals, "{}", label("evaluations"));
            assert_eq!(x.divergences, y.divergences, "{}", label("divergences"));
            let stat = |stats: &[crate::compare::DrawStats]| -> Vec<f64> {
                stats.iter().flat_map(|t| [t.accept_stat, t.energy, f64::from(u8::from(t.divergent))]).collect()
            };
            same(&label(&format!("chain {c} statistics")), &stat(&x.stats), &stat(&y.stats));
        }
    }
}

fn small_options() -> FitOptions {
    let s = CheesSettings { superchains: 4, chains_per_superchain: 2, warmup: 40, draws: 6, ..Default::default() };
    FitOptions { sampler: Sampler::Chees(s), ..Default::default() }
}

/// Fits against the CPU's: bit for bit (`tol` 0), or within a relative tolerance (the device's
/// libm differs from glibc in the last bits).
fn compare_fits(label: &str, got: &[Result<Fit>], want: &[Result<Fit>], tol: f64) {
    let check = |what: &str, g: &[f64], w: &[f64]| {
        if tol == 0.0 {
            same(what, g, w);
        } else {
            near(what, g, w, tol);
        }
    };
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let (g, w) = (g.as_ref().unwrap(), w.as_ref().unwrap());
        let (gc, wc) = (g.chees().unwrap(), w.chees().unwrap());
        check(
            &format!("{label} {i} step"),
            &[gc.step_size, gc.trajectory_length],
            &[wc.step_size, wc.trajectory_length],
        );
        check(&format!("{label} {i} inv_mass"), &gc.inv_mass, &wc.inv_mass);
        for p in w.summary() {
            let (a, b) = (g.draws(&p.name).unwrap(), w.draws(&p.name).unwrap());
            for (x, y) in a.iter().zip(&b) {
                check(&format!("{label} {i} {}", p.name), x, y);
            }
        }
    }
}

#[test]
fn cpu_shim_batched_fit_equals_cpu_fit() {
    let Some(exe) = launch_harness() else { return };
    let shim = || -> Box<dyn ChainLauncher> { Box::new(ShimLauncher { exe: exe.clone(), state: None }) };
    // The default options: the collapsed Gaussian model, step halving on.
    let designs = fixtures();
    let options = small_options();
    let want = fit_many(&designs, &options);
    let got = fit_many_with(&designs, &options, 64, shim);
    compare_fits("shim fit", &got, &want, 0.0);
    // In waves of 2 designs (a second batch starting at design 2): the same fits.
    let got = fit_many_with(&designs, &options, 2, shim);
    compare_fits("shim fit in waves", &got, &want, 0.0);
    // The beta-binomial model (conditional form), and without step halving.
    let counts = count_fixtures();
    let options = FitOptions { family: Family::BetaBinomial(BetaBinomialOptions::default()), ..small_options() };
    let want = fit_many(&counts, &options);
    let got = fit_many_with(&counts, &options, 64, shim);
    compare_fits("shim beta-binomial fit", &got, &want, 0.0);
    let mut options = small_options();
    if let Sampler::Chees(s) = &mut options.sampler {
        s.walnuts = None;
    }
    let want = fit_many(&designs[..1], &options);
    let got = fit_many_with(&designs[..1], &options, 64, shim);
    compare_fits("shim fit without halving", &got, &want, 0.0);
}

/// On the device `log`, `exp`, `sin` and `cos` differ from glibc in the last bits, and 46
/// iterations of adaptation carry those differences along: 1e-6 rather than the shim's exact
/// equality (an accept decision that flips on a last-bit difference would still fail it; not
/// seen on hardware yet, none was available).
#[test]
fn device_chees_fit_equals_cpu_fit() {
    if !device() {
        return;
    }
    let designs = fixtures();
    let options = small_options();
    let want = fit_many(&designs, &options);
    let got = crate::backend::fit_many_on(crate::backend::Backend::Cuda, &designs, &options).unwrap();
    compare_fits("device fit", &got, &want, 1e-6);
    let counts = count_fixtures();
    let options = FitOptions { family: Family::BetaBinomial(BetaBinomialOptions::default()), ..small_options() };
    let want = fit_many(&counts, &options);
    let got = crate::backend::fit_many_on(crate::backend::Backend::Cuda, &counts, &options).unwrap();
    compare_fits("device beta-binomial fit", &got, &want, 1e-6);
}

/// The refit rule: with ChEES's defaults the fixtures are clean and kept as ChEES fits (their
/// split R-hat may exceed 1.01 over 40 short chains, which no longer warns); with 4 kept
/// draws per chain (160 in all, bulk-ESS under 400) every fit is unclean and is refitted by
/// NUTS, equal to a NUTS fit of the design alone.
#[test]
fn unclean_chees_fits_are_refitted_by_nuts_and_clean_ones_kept() {
    use crate::backend::{Backend, fit_many_refit_on};
    use crate::compare::{NutsSettings, fit};
    let designs = fixtures();
    let nuts = NutsSettings { seed: 3, ..NutsSettings::default() };
    let chees = FitOptions { sampler: Sampler::Chees(CheesSettings::default()), ..FitOptions::default() };
    let (fits, refits) = fit_many_refit_on(Backend::Cpu, &designs, &chees, nuts).unwrap();
    assert_eq!(refits, 0);
    for f in &fits {
        let f = f.as_ref().unwrap();
        assert!(f.chees().is_some() && f.is_clean());
        assert!(!f.warnings().iter().any(|w| w.contains("R-hat")), "{:?}", f.warnings());
    }
    let short = CheesSettings { draws: 4, max_draws: None, ..CheesSettings::default() };
    let short = FitOptions { sampler: Sampler::Chees(short), ..FitOptions::default() };
    let (fits, refits) = fit_many_refit_on(Backend::Cpu, &designs, &short, nuts).unwrap();
    assert_eq!(refits, designs.len());
    for (f, d) in fits.iter().zip(&designs) {
        let f = f.as_ref().unwrap();
        let alone = fit(d, &FitOptions { sampler: Sampler::Nuts(nuts), ..FitOptions::default() }).unwrap();
        assert!(f.chees().is_none() && f.is_clean());
        assert_eq!(f.draws("mu[A]").unwrap(), alone.draws("mu[A]").unwrap());
    }
}
