//! Kernel 3 (`kernels/chees.cu`) against the CPU sampler: the device log density against
//! `Posterior::logp`, transitions against `Ensemble::transition` through the C++ shim, a full
//! batched fit through the shim against the CPU fit, and the same on a GPU where there is one.

use super::super::chees::{BatchInit, ChainLauncher, LaunchIn, LaunchOut, fit_many_chees_with};
use super::{Reader, Rng, device, harness, run_harness, workspace_root};
use crate::compare::beta_binomial::BetaBinomialModel;
use crate::compare::chees::Ensemble;
use crate::compare::gaussian::GaussianModel;
use crate::compare::model::{Likelihood, Parameterization, Posterior, SigmaStructure};
use crate::compare::{
    BetaBinomialOptions, CheesOptions, CheesSettings, Design, Family, GaussianOptions, fit_many_chees,
};
use crate::error::Result;

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

/// Every beta-binomial variant.
fn count_variants() -> Vec<BetaBinomialOptions> {
    let mut v = Vec::new();
    for phi_per_method in [false, true] {
        for realization_effect in [true, false] {
            for mu in [Parameterization::Centered, Parameterization::NonCentered] {
                let mut o = BetaBinomialOptions { phi_per_method, realization_effect, ..Default::default() };
                o.mu_parameterization = mu;
                v.push(o);
            }
        }
    }
    v
}

/// The supported variants: sigma per method or shared, realization effect integrated out or
/// absent, method means as Auto picks, centred (with a reference method) or non-centred.
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

#[test]
fn device_log_density_equals_posterior_logp() {
    let Some(exe) = harness() else { return };
    let designs = fixtures();
    let counts = count_fixtures();
    let mut rng = Rng(5);
    let mut worst = 0.0f64;
    let mut references = 0;
    let mut models: Vec<(String, Box<dyn Posterior>)> = Vec::new();
    for (k, opts) in variants().into_iter().enumerate() {
        models.push((format!("{opts:?}"), Box::new(GaussianModel::new(&designs[k % designs.len()], opts, None))));
    }
    for (k, opts) in count_variants().into_iter().enumerate() {
        models.push((format!("{opts:?}"), Box::new(BetaBinomialModel::new(&counts[k % counts.len()], opts))));
    }
    for (opts, model) in &models {
        let flat = model.device_model(0).unwrap_or_else(|e| panic!("{opts}: {e}"));
        references += usize::from(flat.ints[13] == 0 && flat.ints[10] >= 0);
        let (dim, points) = (model.dim(), 16);
        let th: Vec<f64> = (0..points * dim).map(|_| 3.0 * (rng.next() - 0.5)).collect();
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
            worst = worst.max(near(&format!("{opts} lp"), &lp[i..=i], &[want], 1e-12));
            worst = worst.max(near(&format!("{opts} grad"), &grad[i * dim..(i + 1) * dim], &g, 1e-12));
        }
    }
    assert!(references > 0, "no variant exercised the reference method");
    eprintln!("chees_logp: worst relative error {worst:.1e} (tolerance 1e-12)");
}

#[test]
fn unsupported_variants_are_typed_errors() {
    let d = &fixtures()[0];
    for opts in [
        GaussianOptions { likelihood: Likelihood::StudentT, ..Default::default() },
        GaussianOptions { gamma_parameterization: Parameterization::Centered, ..Default::default() },
        GaussianOptions { gamma_parameterization: Parameterization::NonCentered, ..Default::default() },
    ] {
        let model = GaussianModel::new(d, opts, None);
        assert!(model.device_model(0).is_err(), "{opts:?}");
        let options = CheesOptions { family: Family::Gaussian(opts), ..Default::default() };
        let why = crate::backend::chees_kernel_unsupported(d, &options).unwrap();
        assert!(!why.is_empty());
        if !crate::backend::Backend::cuda_available() {
            // Auto falls back to the CPU; forcing CUDA is an error, never a panic.
            let s =
                CheesSettings { superchains: 2, chains_per_superchain: 2, warmup: 20, draws: 4, ..Default::default() };
            let o = CheesOptions { sampler: s, ..options };
            assert!(
                crate::backend::fit_many_chees_on(crate::backend::Backend::Auto, std::slice::from_ref(d), &o).unwrap()
                    [0]
                .is_ok()
            );
            assert!(
                crate::backend::fit_many_chees_on(crate::backend::Backend::Cuda, std::slice::from_ref(d), &o).is_err()
            );
        }
    }
}

/// Runs `chees_transition` through the C++ shim with the whole state passed in and out (the
/// harness keeps nothing between runs): a stand-in for the GPU.
struct ShimLauncher {
    exe: std::path::PathBuf,
    state: Option<ShimState>,
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

/// Everything one launch writes, with the Philox state.
struct ShimOut {
    out: LaunchOut,
    state: ShimState,
}

fn shim_launch(exe: &std::path::Path, init: &BatchInit, state: &ShimState, launches: &[LaunchIn]) -> Vec<ShimOut> {
    let n = init.chains;
    let designs = init.off.len() / 4;
    let chains = designs * n;
    let cells = init.dims * n;
    let mut input = Vec::new();
    let header = [designs, n, launches.len(), init.mi.len(), init.md.len(), cells, init.work];
    le(&mut input, &header, |v| (v as i64).to_le_bytes().to_vec());
    le(&mut input, &[init.key.0 as i64, init.key.1 as i64], |v| v.to_le_bytes().to_vec());
    le(&mut input, &init.off, |v| v.to_le_bytes().to_vec());
    le(&mut input, &init.mi, |v| v.to_le_bytes().to_vec());
    le(&mut input, &init.md, |v| v.to_le_bytes().to_vec());
    le(&mut input, &launches[0].inv_mass, |v| v.to_le_bytes().to_vec());
    for v in [&state.pos, &state.grad, &state.logp] {
        le(&mut input, v, |x| x.to_le_bytes().to_vec());
    }
    le(&mut input, &state.block, |v| v.to_le_bytes().to_vec());
    le(&mut input, &state.spare_flag, |v| v.to_le_bytes().to_vec());
    le(&mut input, &state.spare, |v| v.to_le_bytes().to_vec());
    for l in launches {
        assert_eq!(l.inv_mass, launches[0].inv_mass, "the harness takes one metric per run");
        le(&mut input, &l.eps, |v| v.to_le_bytes().to_vec());
        le(&mut input, &l.steps, |v| v.to_le_bytes().to_vec());
        le(&mut input, &l.moves, |v| v.to_le_bytes().to_vec());
    }
    let out = run_harness(exe, "chees", &input);
    let mut r = Reader(&out);
    let res = launches
        .iter()
        .map(|_| {
            let pos = r.f64s(cells);
            let grad = r.f64s(cells);
            let logp = r.f64s(chains);
            let q = r.f64s(cells);
            let p = r.f64s(cells);
            let lp = r.f64s(chains);
            let accept = r.f64s(chains);
            let divergent = r.i32s(chains);
            let energy = r.f64s(chains);
            let evals = r.i32s(chains);
            let block = (0..chains).map(|_| u64::from_le_bytes(r.take())).collect();
            let spare_flag = r.i32s(chains);
            let spare = r.f64s(chains);
            ShimOut {
                out: LaunchOut { pos: pos.clone(), q, p, lp, accept, divergent, energy, evals },
                state: ShimState { pos, grad, logp, block, spare_flag, spare },
            }
        })
        .collect();
    assert!(r.0.is_empty(), "harness wrote more than expected");
    res
}

impl ChainLauncher for ShimLauncher {
    fn launch(&mut self, init: &BatchInit, input: &LaunchIn) -> Result<LaunchOut> {
        let chains = init.off.len() / 4 * init.chains;
        let state = self.state.take().unwrap_or_else(|| ShimState {
            pos: init.pos.clone(),
            grad: init.grad.clone(),
            logp: init.logp.clone(),
            block: vec![0; chains],
            spare_flag: vec![0; chains],
            spare: vec![0.0; chains],
        });
        let mut r = shim_launch(&self.exe, init, &state, std::slice::from_ref(input));
        let o = r.remove(0);
        self.state = Some(o.state);
        Ok(o.out)
    }
}

#[test]
fn cpu_shim_transitions_match_ensemble_transition() {
    let Some(exe) = harness() else { return };
    let designs = fixtures();
    // Odd dimensions (a spare normal is left after drawing the momenta and must carry over).
    let s = CheesSettings { superchains: 4, chains_per_superchain: 2, ..Default::default() };
    let mut models: Vec<Box<dyn Posterior>> = designs
        .iter()
        .zip([
            GaussianOptions::default(),
            GaussianOptions { sigma: SigmaStructure::Shared, ..Default::default() },
            GaussianOptions { realization_effect: false, ..Default::default() },
        ])
        .map(|(d, o)| Box::new(GaussianModel::new(d, o, None)) as Box<dyn Posterior>)
        .collect();
    models.push(Box::new(BetaBinomialModel::new(&count_fixtures()[0], BetaBinomialOptions::default())));
    let mut ens: Vec<Ensemble<'_>> =
        models.iter().enumerate().map(|(b, m)| Ensemble::new(m.as_ref(), &s, b as u32).unwrap()).collect();
    let mut rng = Rng(9);
    // A metric of unequal scales, and two CPU transitions so that the streams have advanced.
    for e in ens.iter_mut() {
        e.inv_mass.iter_mut().for_each(|v| *v = 0.05 + 0.3 * rng.next());
        e.transition(0.1, 3, true).unwrap();
        e.transition(0.05, 2, true).unwrap();
    }
    let n = s.chains();
    let mut init = BatchInit { chains: n, key: (s.seed as u32, (s.seed >> 32) as u32), ..Default::default() };
    let mut state =
        ShimState { pos: vec![], grad: vec![], logp: vec![], block: vec![], spare_flag: vec![], spare: vec![] };
    let mut inv_mass = Vec::new();
    for (b, (e, m)) in ens.iter().zip(&models).enumerate() {
        let flat = m.device_model(b as u32).unwrap();
        init.off.extend([init.mi.len() as i64, init.md.len() as i64, (init.dims * n) as i64, init.work as i64]);
        init.mi.extend(&flat.ints);
        init.md.extend(&flat.doubles);
        init.dims += flat.dim;
        init.work += flat.work * n;
        state.pos.extend(&e.pos);
        state.grad.extend(&e.grad);
        state.logp.extend(&e.logp);
        for st in &e.streams {
            let (block, spare) = st.state();
            state.block.push(block);
            state.spare_flag.push(i32::from(spare.is_some()));
            state.spare.push(spare.unwrap_or(0.0));
        }
        inv_mass.extend(&e.inv_mass);
    }
    // Four launches: ordinary, no move (the step-size search), a large step that diverges, and
    // a different step count per design.
    let plan: [(f64, [i32; 4], i32); 4] =
        [(0.08, [4, 4, 4, 4], 1), (0.2, [1, 1, 1, 1], 0), (40.0, [6, 6, 6, 6], 1), (0.03, [7, 2, 5, 3], 1)];
    let launches: Vec<LaunchIn> = plan
        .iter()
        .map(|&(eps, steps, mv)| LaunchIn {
            inv_mass: inv_mass.clone(),
            eps: vec![eps; 4],
            steps: steps.to_vec(),
            moves: vec![mv; 4],
        })
        .collect();
    let got = shim_launch(&exe, &init, &state, &launches);
    let (mut worst, mut diverged, mut spares) = (0.0f64, 0, 0);
    for (l, (&(eps, steps, mv), shim)) in plan.iter().zip(&got).enumerate() {
        let mut at = 0;
        for (b, e) in ens.iter_mut().enumerate() {
            e.transition(eps, steps[b] as usize, mv == 1).unwrap();
            let d = e.dim;
            let (lo, hi) = (at * n, (at + d) * n);
            at += d;
            let c = b * n..(b + 1) * n;
            let o = &shim.out;
            let label = |w: &str| format!("launch {l} design {b} {w}");
            worst = worst.max(near(&label("pos"), &o.pos[lo..hi], &e.pos, 1e-10));
            worst = worst.max(near(&label("q"), &o.q[lo..hi], &e.q, 1e-10));
            worst = worst.max(near(&label("p"), &o.p[lo..hi], &e.p, 1e-10));
            worst = worst.max(near(&label("lp"), &o.lp[c.clone()], &e.lp, 1e-10));
            worst = worst.max(near(&label("accept"), &o.accept[c.clone()], &e.accept, 1e-10));
            worst = worst.max(near(&label("energy"), &o.energy[c.clone()], &e.energy, 1e-10));
            let div: Vec<bool> = o.divergent[c.clone()].iter().map(|&v| v != 0).collect();
            assert_eq!(div, e.divergent, "{}", label("divergent"));
            diverged += div.iter().filter(|&&v| v).count();
            for (k, st) in e.streams.iter().enumerate() {
                let (block, spare) = st.state();
                assert_eq!(shim.state.block[b * n + k], block, "{}", label("Philox block"));
                assert_eq!(shim.state.spare_flag[b * n + k] != 0, spare.is_some(), "{}", label("spare flag"));
                if let Some(v) = spare {
                    spares += 1;
                    near(&label("spare"), &[shim.state.spare[b * n + k]], &[v], 1e-15);
                }
            }
        }
    }
    assert!(diverged > 0, "the large step diverged nowhere");
    assert!(spares > 0, "no spare normal carried over");
    eprintln!(
        "chees transitions: worst relative error {worst:.1e} (tolerance 1e-10); {diverged} divergent, {spares} spares carried"
    );
}

fn small_options() -> CheesOptions {
    let s = CheesSettings { superchains: 4, chains_per_superchain: 2, warmup: 40, draws: 6, ..Default::default() };
    CheesOptions { sampler: s, ..Default::default() }
}

fn compare_fits(
    label: &str,
    got: &[Result<crate::compare::CheesFit>],
    want: &[Result<crate::compare::CheesFit>],
    tol: f64,
) {
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let (g, w) = (g.as_ref().unwrap(), w.as_ref().unwrap());
        near(
            &format!("{label} {i} step"),
            &[g.step_size, g.trajectory_length],
            &[w.step_size, w.trajectory_length],
            tol,
        );
        near(&format!("{label} {i} inv_mass"), &g.inv_mass, &w.inv_mass, tol);
        for p in w.fit.summary() {
            let (a, b) = (g.fit.draws(&p.name).unwrap(), w.fit.draws(&p.name).unwrap());
            for (x, y) in a.iter().zip(&b) {
                near(&format!("{label} {i} {}", p.name), x, y, tol);
            }
        }
    }
}

#[test]
fn cpu_shim_batched_fit_equals_cpu_fit() {
    let Some(exe) = harness() else { return };
    let designs = fixtures();
    let options = small_options();
    let want = fit_many_chees(&designs, &options);
    let shim = || -> Box<dyn ChainLauncher> { Box::new(ShimLauncher { exe: exe.clone(), state: None }) };
    let got = fit_many_chees_with(&designs, &options, 64, shim);
    compare_fits("shim fit", &got, &want, 1e-8);
    // In waves of 2 designs (a second batch starting at design 2): the same fits.
    let got = fit_many_chees_with(&designs, &options, 2, shim);
    compare_fits("shim fit in waves", &got, &want, 1e-8);
    let counts = count_fixtures();
    let options = CheesOptions { family: Family::BetaBinomial(BetaBinomialOptions::default()), ..small_options() };
    let want = fit_many_chees(&counts, &options);
    let got = fit_many_chees_with(&counts, &options, 64, shim);
    compare_fits("shim beta-binomial fit", &got, &want, 1e-8);
}

/// On the device `log`, `exp`, `sin` and `cos` differ from glibc in the last bits, and 46
/// iterations of adaptation carry those differences along: 1e-6 rather than the shim's 1e-8
/// (an accept decision that flips on a last-bit difference would still fail it; not seen on
/// hardware yet, none was available).
#[test]
fn device_chees_fit_equals_cpu_fit() {
    if !device() {
        return;
    }
    let designs = fixtures();
    let options = small_options();
    let want = fit_many_chees(&designs, &options);
    let got = crate::backend::fit_many_chees_on(crate::backend::Backend::Cuda, &designs, &options).unwrap();
    compare_fits("device fit", &got, &want, 1e-6);
    let counts = count_fixtures();
    let options = CheesOptions { family: Family::BetaBinomial(BetaBinomialOptions::default()), ..small_options() };
    let want = fit_many_chees(&counts, &options);
    let got = crate::backend::fit_many_chees_on(crate::backend::Backend::Cuda, &counts, &options).unwrap();
    compare_fits("device beta-binomial fit", &got, &want, 1e-6);
}
