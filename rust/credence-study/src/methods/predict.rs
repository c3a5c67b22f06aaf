//! The methods' test-time forward passes, through kernel 4 of [`credence::backend`] on
//! [`MethodConfig::backend`](super::MethodConfig::backend): deterministic networks (MAP, the
//! ensemble's members, the conformal network, a failed SWAG run's fallback), MC-dropout passes
//! and SWAG / BBB weight draws. Training stays on the CPU in its own precision; the passes run
//! in f64 on the test inputs as given, whatever the training precision, so the CPU and the GPU
//! compute the same numbers (the backend's CPU reference is the study's CPU path; the device
//! agrees with it to rounding, 1e-10 relative in the backend's tests).
//!
//! The stochastic passes draw from Philox4x32-10 in the kernels' counter layout, keyed by the
//! job's test-time stream seed ([`predict_seed`]): MC-dropout masks by (pass, point, layer,
//! unit), weight draws by sample index. They are a function of the seed alone, not of the
//! backend, the thread count or the launch geometry.
//!
//! On the CPU the passes run on the calling thread (the study's parallelism is across jobs;
//! see `MlpForward::networks`).

use credence::backend::{Backend, GaussianWeights, MlpForward};
use credence::error::Result;
use credence::nn::{Real, stream_seed};
use credence::predictive::GaussianMixture;

use super::Prediction;
use super::common::PREDICT;

/// The Philox key of a job's test-time draws (MC-dropout masks, SWAG and BBB weight samples):
/// the job seed's `PREDICT` stream seed.
pub(super) fn predict_seed(seed: u64) -> u64 {
    stream_seed(seed, &[PREDICT])
}

/// Parameters in f64, for the kernels.
pub(super) fn to_f64<R: Real>(params: &[R]) -> Vec<f64> {
    params.iter().map(|v| v.to_f64()).collect()
}

/// The test inputs (row-major, `d` columns, f64) and where the passes run.
pub(super) struct TestSet<'a> {
    /// The test inputs, row-major.
    pub x: &'a [f64],
    /// Number of inputs d.
    pub d: usize,
    /// Where the passes run.
    pub backend: Backend,
}

impl TestSet<'_> {
    /// Number of test points.
    pub(super) fn len(&self) -> usize {
        self.x.len() / self.d
    }

    /// Heads of the networks `params` (E x P, network after network) at every test point.
    pub(super) fn networks(&self, params: &[f64]) -> Result<MlpForward> {
        MlpForward::networks(self.backend, self.d, params, self.x, false)
    }

    /// The equally weighted mixture of the networks `params` (E x P).
    pub(super) fn ensemble(&self, params: &[f64]) -> Result<Prediction> {
        mixture(self.networks(params)?)
    }

    /// `passes` MC-dropout passes of one network with drop probability `p`; masks keyed by
    /// `seed`.
    pub(super) fn dropout(&self, params: &[f64], p: f64, passes: usize, seed: u64) -> Result<Prediction> {
        mixture(MlpForward::dropout(self.backend, self.d, params, self.x, p, passes, seed, false)?)
    }

    /// The mixture of the heads of `samples` weight draws from `weights`, keyed by `seed`.
    pub(super) fn weight_draws(&self, weights: &GaussianWeights, samples: usize, seed: u64) -> Result<Prediction> {
        mixture(weights.forward(self.backend, self.d, self.x, samples, seed, false)?)
    }
}

/// The equally weighted mixture of the members of `out` (an error if a head is not finite).
fn mixture(out: MlpForward) -> Result<Prediction> {
    Ok(Prediction::Mixture(GaussianMixture::new(out.means, out.sds, None)?))
}

#[cfg(test)]
mod tests {
    use super::super::common::member_seed;
    use super::super::common::{Data, EPOCHS, rows, scaled_epochs, train_adam};
    use super::super::test_support::problem;
    use super::super::{Method, MethodConfig, Precision, train_and_predict};
    use super::*;
    use credence::RegressionPredictive;
    use credence::backend::{gaussian_weight_forward, mlp_dropout_forward};
    use credence::nn::mlp::Net;

    fn mixture_of(p: &Prediction) -> &GaussianMixture {
        match p {
            Prediction::Mixture(m) => m,
            Prediction::Conformal { .. } => panic!("a mixture was expected"),
        }
    }

    /// Every member's mean and sd at every point, member-major.
    fn heads(m: &GaussianMixture) -> (Vec<f64>, Vec<f64>) {
        let (k, n) = (m.n_members(), m.n_points());
        let mut out = (Vec::new(), Vec::new());
        for j in 0..k {
            for i in 0..n {
                out.0.push(m.point_means(i)[j]);
                out.1.push(m.point_sds(i)[j]);
            }
        }
        out
    }

    fn worst_relative(got: &[f64], want: &[f64]) -> f64 {
        assert_eq!(got.len(), want.len());
        got.iter().zip(want).map(|(a, b)| (a - b).abs() / b.abs().max(1.0)).fold(0.0, f64::max)
    }

    /// The study's own forward pass before the backend path (`Members::push`): the network in
    /// the training precision, in batches of the training buffer's capacity.
    fn in_house<R: Real>(d: usize, cap: usize, params: &[R], test: &[R]) -> (Vec<f64>, Vec<f64>) {
        Net::<R>::new(d, cap).heads(params, test, |_, _, _| {}).unwrap()
    }

    /// The MAP / ensemble networks' test-time heads through the backend equal the previous
    /// in-house forward pass: to 1e-12 in f64 (the same arithmetic), to f32 rounding for the
    /// default f32 training (the backend widens the weights and computes in f64).
    #[test]
    fn backend_heads_equal_the_in_house_forward_pass() {
        let (x, y) = problem(40, 11);
        let (tx, _) = problem(70, 12); // more than one training batch of test rows
        let seed = 5;
        for precision in [Precision::F64, Precision::F32] {
            let cfg = MethodConfig {
                epoch_scale: 0.04,
                ensemble_size: 3,
                ensemble_predictive: super::super::EnsemblePredictive::Mixture, // the members' heads
                precision,
                backend: Backend::Cpu,
                ..Default::default()
            };
            let e = train_and_predict(Method::Ensemble, &cfg, x.view(), &y, tx.view(), seed).unwrap();
            let m = train_and_predict(Method::Map, &cfg, x.view(), &y, tx.view(), seed).unwrap();
            let (got, got_map) = (heads(mixture_of(&e.prediction)), heads(mixture_of(&m.prediction)));
            let want = |k: usize| -> (Vec<f64>, Vec<f64>) {
                let epochs = scaled_epochs(EPOCHS, cfg.epoch_scale);
                match precision {
                    Precision::F64 => {
                        let data = Data::<f64>::new(x.view(), &y);
                        let mut net = Net::new(3, 32);
                        let t = train_adam(&mut net, &data, &cfg, epochs, 0.0, member_seed(seed, k as u64)).unwrap();
                        in_house(3, 32, &t.params, &rows::<f64>(tx.view()))
                    }
                    Precision::F32 => {
                        let data = Data::<f32>::new(x.view(), &y);
                        let mut net = Net::new(3, 32);
                        let t = train_adam(&mut net, &data, &cfg, epochs, 0.0, member_seed(seed, k as u64)).unwrap();
                        in_house(3, 32, &t.params, &rows::<f32>(tx.view()))
                    }
                }
            };
            let tol = if precision == Precision::F64 { 1e-12 } else { 1e-5 };
            let mut all = (Vec::new(), Vec::new());
            for k in 0..3 {
                let (m, s) = want(k);
                all.0.extend(m);
                all.1.extend(s);
            }
            let (dm, ds) = (worst_relative(&got.0, &all.0), worst_relative(&got.1, &all.1));
            eprintln!("{precision:?}: worst relative difference of means {dm:e}, of sds {ds:e}");
            assert!(dm <= tol && ds <= tol, "{precision:?}: means {dm:e}, sds {ds:e}");
            // MAP is the ensemble's member 0, bit for bit.
            assert_eq!(got_map.0[..], got.0[..70]);
            assert_eq!(got_map.1[..], got.1[..70]);
        }
    }

    /// The study's MC-dropout, SWAG and BBB predictions are the backend kernels' CPU references
    /// (Philox keyed by the test-time seed): bit-identical to calling the public functions.
    #[test]
    fn stochastic_predictions_are_the_kernels_cpu_references() {
        let (x, y) = problem(48, 13);
        let (tx, _) = problem(30, 14);
        let cfg = MethodConfig { epoch_scale: 0.1, samples: 6, backend: Backend::Cpu, ..Default::default() };
        let seed = 21;
        let test = rows::<f64>(tx.view());
        // MC dropout: the trained network (as `mcd::run` trains it) through the dropout kernel.
        let data = Data::<f32>::new(x.view(), &y);
        let mut net = Net::new(3, 32);
        let epochs = scaled_epochs(EPOCHS, cfg.epoch_scale);
        let t = train_adam(&mut net, &data, &cfg, epochs, cfg.dropout, member_seed(seed, 0)).unwrap();
        let want = mlp_dropout_forward(Backend::Cpu, 3, &to_f64(&t.params), &test, cfg.dropout, 6, predict_seed(seed))
            .unwrap();
        let got = train_and_predict(Method::Mcd, &cfg, x.view(), &y, tx.view(), seed).unwrap();
        let got = heads(mixture_of(&got.prediction));
        assert_eq!((&got.0[..], &got.1[..]), (want.means.as_slice().unwrap(), want.sds.as_slice().unwrap()));
        // SWAG and BBB: the fitted posteriors through the weight-sample kernel.
        let mut net = Net::new(3, 32);
        let s = super::super::swag::fit(&mut net, &data, &cfg, seed).unwrap();
        let k = s.snapshots().min(cfg.swag_rank);
        let len = net.layout().len;
        let g = GaussianWeights::swag(s.mean.clone(), &s.sq_mean, s.devs[..k * len].to_vec()).unwrap();
        let want = gaussian_weight_forward(Backend::Cpu, 3, &g, &test, 6, predict_seed(seed)).unwrap();
        let got = train_and_predict(Method::Swag, &cfg, x.view(), &y, tx.view(), seed).unwrap();
        let got = heads(mixture_of(&got.prediction));
        assert_eq!((&got.0[..], &got.1[..]), (want.means.as_slice().unwrap(), want.sds.as_slice().unwrap()));
        let mut net = Net::new(3, 32);
        let f = super::super::bbb::fit(&mut net, &data, &cfg, seed).unwrap();
        let (mu, rho) = f.theta.split_at(len);
        let g = GaussianWeights::bbb(to_f64(mu), &to_f64(rho)).unwrap();
        let want = gaussian_weight_forward(Backend::Cpu, 3, &g, &test, 6, predict_seed(seed)).unwrap();
        let got = train_and_predict(Method::Bbb, &cfg, x.view(), &y, tx.view(), seed).unwrap();
        let got = heads(mixture_of(&got.prediction));
        assert_eq!((&got.0[..], &got.1[..]), (want.means.as_slice().unwrap(), want.sds.as_slice().unwrap()));
    }

    /// Every method gives the same predictions whatever the thread count, and (on a machine
    /// without CUDA) `Auto` gives the CPU's bit for bit; with CUDA, the GPU's agree with the
    /// CPU's to 1e-10 relative. `Cuda` without CUDA is a typed error, not a panic.
    #[test]
    fn backends_and_thread_counts_agree() {
        let (x, y) = problem(30, 15);
        let (tx, _) = problem(25, 16);
        let cfg =
            |backend| MethodConfig { epoch_scale: 0.02, samples: 4, ensemble_size: 2, backend, ..Default::default() };
        let key = |p: &Prediction| -> Vec<f64> {
            match p {
                Prediction::Mixture(m) => {
                    let (a, b) = heads(m);
                    a.into_iter().chain(b).collect()
                }
                Prediction::Conformal { intervals, .. } => {
                    intervals.lower().iter().chain(intervals.upper()).copied().collect()
                }
            }
        };
        let run = |method, backend, threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| train_and_predict(method, &cfg(backend), x.view(), &y, tx.view(), 3))
        };
        for method in Method::ALL {
            let cpu = key(&run(method, Backend::Cpu, 1).unwrap().prediction);
            assert_eq!(key(&run(method, Backend::Cpu, 3).unwrap().prediction), cpu, "{method}");
            let auto = key(&run(method, Backend::Auto, 2).unwrap().prediction);
            if Backend::cuda_available() {
                let gpu = key(&run(method, Backend::Cuda, 1).unwrap().prediction);
                assert!(worst_relative(&gpu, &cpu) < 1e-10, "{method}");
                assert!(worst_relative(&auto, &cpu) < 1e-10, "{method}");
            } else {
                assert_eq!(auto, cpu, "{method}");
                let e = run(method, Backend::Cuda, 1).unwrap_err();
                assert!(matches!(e, credence::Error::Backend { .. }), "{method}: {e}");
                assert!(e.to_string().contains("CUDA was requested but cannot run"), "{e}");
            }
        }
    }

    /// SWAG's rank is bounded by what the kernel holds.
    #[test]
    fn swag_rank_above_the_kernel_bound_is_refused() {
        let c = MethodConfig { swag_rank: credence::backend::MAX_LOW_RANK + 1, ..Default::default() };
        assert!(c.validate().unwrap_err().to_string().contains("swag_rank"));
        let c = MethodConfig { swag_rank: credence::backend::MAX_LOW_RANK, ..Default::default() };
        c.validate().unwrap();
    }
}
