//! Six BDL regression methods sharing one heteroscedastic MLP: 2 hidden layers x 64 units,
//! ReLU, outputs mean and log variance, variance clamped to [1e-3, 1e3], Gaussian NLL loss.
//!
//! | method | training | predictive |
//! | --- | --- | --- |
//! | MAP | Adam, lr 1e-3, weight decay 1e-5, 500 epochs | one Gaussian |
//! | MCD | as MAP, dropout on both hidden layers | mixture of T = 50 dropout passes |
//! | Ensemble | M = 5 MAP networks, independent seeds | Gaussian with the mean and variance of the mixture of the M heads |
//! | SWAG | SGD momentum 0.9, gradient norm clipped at 500, 500 epochs, lr 5e-3 cosine-annealed to 2.5e-3 by epoch 300, then held; snapshots from epoch 300 | mixture of T = 50 weight draws |
//! | BBB | mean-field Gaussian weights, ELBO with KL weight 1e-4, Adam lr 1e-3, 1000 epochs | mixture of T = 50 weight draws |
//! | CP | MAP network on 80% of the data, 20% calibrates | 90% split-conformal interval (+ matching Gaussian) |
//!
//! # Choices the study description leaves open
//!
//! - **Batch size 32**, reshuffled every epoch, the last batch smaller (`drop_last = False`):
//!   the common default of the BDL literature's UCI code; with n = 30 it is full-batch. The
//!   loss is the batch mean, so the last small batch gets a full step (as in PyTorch).
//! - **Initialisation**: PyTorch's `nn.Linear` default, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for
//!   weights and biases, so runs start where a PyTorch reimplementation would.
//! - **Optimisers** follow PyTorch's formulas: Adam's weight decay is the coupled L2 term of
//!   `torch.optim.Adam` (on all parameters, biases included), eps 1e-8, betas (0.9, 0.999).
//!   MCD uses the MAP optimiser unchanged (its weight decay is the same 1e-5). SWAG's SGD has
//!   the same weight decay 1e-5 (the prior SWAG approximates is then MAP's).
//! - **Dropout rate 0.1** (inverted dropout after each hidden ReLU, on in training and in the
//!   T test passes): the usual rate for small UCI regressions (Gal & Ghahramani used 0.05 to
//!   0.1); with 64 units, 0.1 keeps the network trainable at n = 30. No rate gives the
//!   published NLL at both n = 30 and n = 500: n = 30 needs about 0.145 or more, n = 500 about
//!   0.123 or less (benches/README.md, "What is left against the published values").
//! - **SWAG schedule** ([`SwagSchedule`], issue 31): the description gives lr 1e-2 and
//!   "cosine annealing". Read as CosineAnnealingLR over all 500 epochs (the default until
//!   2026-11-28, `--swag-schedule cosine`), the snapshots see a rate decaying to 0, so the SWAG
//!   covariance shrinks to a point: PICP 0.29 at n = 500 (study 0.56) and 4 of 20 runs
//!   converged at n = 30 (study about 58%). SWAG (Maddox et al. 2019) and PyTorch's `SWALR`
//!   instead anneal to a constant SWA rate and hold it while collecting; the default now does
//!   that: lr 5e-3, cosine-annealed to 2.5e-3 by epoch 300, held to the end. Both rates are
//!   measured choices (benches/README.md, "Fidelity of the study's methods"): 5e-3 with a held
//!   2.5e-3 gives NLL 2.12 and PICP 0.50 at n = 500 (study 2.18, 0.56) and 1.67 and 0.92 at
//!   n = 30 (study 2.18, 0.915). Unclipped, 28% of runs converge at n = 30 (full batch; 14 of
//!   50; study about 58%) under every schedule measured that keeps a SWAG spread: SGD with
//!   momentum on the heteroscedastic NLL explodes (loss up to 36-206) around epochs 50-100 in
//!   every run inspected, as the variance head shrinks, and most runs end above their first
//!   epoch's loss.
//! - **SWAG gradient clip 500** (`MethodConfig::swag_clip`, issue 31): each mini-batch
//!   gradient's norm is clipped at 500 before the SGD step (`clip_grad_norm_`). The study does
//!   not say it clips; 500 is the bound measured to give its behaviour (benches/README.md,
//!   "SWAG's gradient clip"): 62-64% of n = 30 runs converge (study about 58%, unclipped 28-34%),
//!   NLL 1.42-1.51, PICP 0.95-0.96 (study 2.18, 0.915), n = 500 unchanged. A bound of 100 gives
//!   a steadier SWAG than the study's (88% converged, CRPS 0.27 against 0.75 at n = 30).
//! - **SWAG posterior**: one snapshot per epoch at its end, epochs 300..499 (200 of them);
//!   deviation rank K = 20 (the SWAG paper's), the last K deviations from the running mean;
//!   moments kept in f64 (mean of squares minus squared mean cancels badly in f32); draws
//!   `mean + (diag^(1/2) z1 + D z2 / sqrt(K - 1)) / sqrt(2)` (Maddox et al. 2019, scale 0.5).
//!   With fewer than two snapshots or a non-finite loss the run is `converged = false` and
//!   predicts with the snapshot mean (one snapshot) or the last finite weights. **Failed runs**
//!   ([`swag::SwagFailure`]): the low-data study excludes runs whose SGD fails (convergence
//!   about 58% at n = 30, 88% at n = 50, 98% at n = 100) without saying how it tells;
//!   credence's rule is (1) a non-finite loss, (2) the last epoch's mean training loss not
//!   below the first epoch's, or (3) a degenerate snapshot covariance, ||sd|| < 1e-3 ||mean||.
//!   Rule (2) is the one that fires: under the cosine schedule, 26 of 50 runs at n = 30 end in
//!   a dead network (all snapshots equal, loss about 4.4 against 1.4 untrained; test CRPS 7-11
//!   on the standardised scale), others oscillate with loss spikes up to 100 and end above
//!   where they started; healthy runs end near -1 to -2. Rule (3) never fired without (2) on
//!   those runs; it stays as the direct test of "SWAG has no spread".
//! - **Ensemble predictive** ([`EnsemblePredictive`], issue 31): the Gaussian with the mean and
//!   variance of the members' mixture, as Lakshminarayanan et al. (2017, section 2.4) evaluate
//!   it. The members' variance heads collapse on their training points as MAP's does, so the
//!   mixture of five near-point Gaussians scored NLL 34 at n = 30 (study 2.25); the Gaussian
//!   scores 3.9, its CRPS within 1% of the mixture's. `--ensemble-predictive mixture` keeps the
//!   mixture.
//! - **BBB**: prior N(0, 1) on every weight and bias; posterior sd = softplus(rho), rho
//!   initialised at -5 (sd 0.0067) and means at the PyTorch initialisation, so training starts
//!   near a deterministic network; one weight draw per mini-batch (the reparameterisation
//!   trick, no local reparameterisation); loss per batch = batch-mean NLL + 1e-4 x KL(q || p)
//!   summed over all weights (the "KL weight" multiplies the whole KL, not KL / n); Adam lr
//!   1e-3 without weight decay. With the study's KL weight 1e-4 no initial rho gives its NLL
//!   and coverage at both n = 30 and n = 500; a weight of 3e-4 with rho -3.5 nearly does, with
//!   a 25% lower CRPS at n = 500 (benches/README.md, "What is left against the published
//!   values"), so the stated weight stays.
//! - **CP**: calibration set = round(0.2 n) points drawn by a seeded permutation (at least one,
//!   at least two left to fit; n < 5 is an error naming n); scores |y - mu| / sd; the quantile
//!   is the k-th smallest score, k = ceil((n_cal + 1)(1 - alpha)). When k > n_cal (n_cal < 9 at
//!   90%, i.e. n = 30 whose n_cal = 6) the finite-sample quantile would be infinite; we use the
//!   largest score instead (k = n_cal), whose coverage guarantee is n_cal / (n_cal + 1) rather
//!   than 90%. The Gaussian for CRPS/NLL is [`Intervals::to_gaussian`]: mean mu, sd = q sd / z.
//! - **Epoch scaling**: every epoch count (500, 1000, SWAG's start at 300) is multiplied by
//!   `epoch_scale` and rounded, each at least 1 (SWAG's start may round to 0).
//! - **Precision**: f32 by default ([`Precision`]): faster than f64, and what the frameworks
//!   use.
//!   Losses are accumulated in f64.
//! - **Seeds**: each training consumer has its own ChaCha8 stream derived from the job seed
//!   (SplitMix mixing of a tag path): network `k` (MAP and CP are network 0, ensemble member k
//!   is network k, so the ensemble's first member is the MAP network of the same seed) has
//!   separate streams for initialisation, batch order and noise (dropout masks, BBB weight
//!   noise); the conformal split has one stream. The test-time draws (the T MC-dropout masks,
//!   the T SWAG or BBB weight samples) come from Philox4x32-10 keyed by the job's test-time
//!   stream seed, in the counter layout of the backend's kernel 4 (below). The same seed gives
//!   bit-identical output on any machine thread count: training is single-threaded, the matrix
//!   products are not threaded, and the test-time passes are a function of the seed alone.
//! - **Test-time passes** (every method's predictions at the test inputs, and CP's at its
//!   calibration points) run through kernel 4 of [`credence::backend`] ([`MethodConfig::backend`]:
//!   the CPU, or the GPU when one is usable): [`credence::backend::mlp_forward`] for MAP, the
//!   ensemble's members and CP; [`credence::backend::mlp_dropout_forward`] for MC dropout;
//!   [`credence::backend::gaussian_weight_forward`] with [`credence::backend::GaussianWeights::swag`]
//!   and [`credence::backend::GaussianWeights::bbb`] for SWAG and BBB. They run in f64 on the test
//!   inputs as given, whatever the training precision (the trained f32 weights are widened), so
//!   both backends compute the same numbers, the GPU's differing from the CPU's by rounding
//!   only (1e-10 relative in the backend's tests). Training always runs on the CPU.

pub(crate) mod bbb;
pub(crate) mod common;
pub(crate) mod conformal;
mod ensemble;
mod inputs;
mod map;
mod mcd;
mod predict;
pub mod swag;

use ndarray::{Array2, ArrayView2};

use credence::backend::{Backend, MAX_LOW_RANK};
use credence::error::{Error, Result};
use credence::predictive::{Gaussian, GaussianMixture, Intervals};

/// One of the six methods of the study.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Method {
    /// Maximum a posteriori: one network, Adam.
    Map,
    /// Monte Carlo dropout.
    Mcd,
    /// Deep ensemble of independently initialised MAP networks.
    Ensemble,
    /// Stochastic weight averaging Gaussian.
    Swag,
    /// Bayes by Backprop (mean-field Gaussian weights).
    Bbb,
    /// Split conformal prediction around a heteroscedastic network.
    Cp,
}

impl Method {
    /// All six, in the canonical order.
    pub const ALL: [Method; 6] = [Method::Map, Method::Mcd, Method::Ensemble, Method::Swag, Method::Bbb, Method::Cp];

    /// The lower-case name used in tables and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Method::Map => "map",
            Method::Mcd => "mcd",
            Method::Ensemble => "ensemble",
            Method::Swag => "swag",
            Method::Bbb => "bbb",
            Method::Cp => "cp",
        }
    }
}

crate::named_choice!(Method, "method");

/// How the deep ensemble's members combine into its predictive distribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EnsemblePredictive {
    /// The Gaussian with the mixture's mean and variance (the default): Lakshminarayanan et al.
    /// (2017, section 2.4) approximate the ensemble so, and it reproduces the low-data study's
    /// ensemble NLL and coverage far better than the mixture (benches/README.md).
    #[default]
    Gaussian,
    /// The equally weighted mixture of the members' Gaussians (the default before 2026-11-28).
    Mixture,
}

impl EnsemblePredictive {
    /// Both, in the order of the option's help.
    pub const ALL: [EnsemblePredictive; 2] = [EnsemblePredictive::Gaussian, EnsemblePredictive::Mixture];

    /// The lower-case name used on the command line and in settings files.
    pub fn name(self) -> &'static str {
        match self {
            EnsemblePredictive::Gaussian => "gaussian",
            EnsemblePredictive::Mixture => "mixture",
        }
    }
}

crate::named_choice!(EnsemblePredictive, "ensemble_predictive");

/// SWAG's learning-rate schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SwagSchedule {
    /// SGD at lr 5e-3, cosine-annealed to the SWA rate 2.5e-3 by the first snapshot and held
    /// there while the snapshots are collected (the default; SWAG's and PyTorch's `SWALR`
    /// convention: the snapshots sample around the optimum at a constant rate).
    #[default]
    Swa,
    /// lr 1e-2 cosine-annealed to 0 over all epochs, snapshots at a decaying rate (the default
    /// before 2026-11-28).
    Cosine,
}

impl SwagSchedule {
    /// Both, in the order of the option's help.
    pub const ALL: [SwagSchedule; 2] = [SwagSchedule::Swa, SwagSchedule::Cosine];

    /// The lower-case name used on the command line and in settings files.
    pub fn name(self) -> &'static str {
        match self {
            SwagSchedule::Swa => "swa",
            SwagSchedule::Cosine => "cosine",
        }
    }
}

crate::named_choice!(SwagSchedule, "swag_schedule");

/// The default [`MethodConfig::swag_clip`]: the largest gradient norm of a SWAG step.
pub const SWAG_CLIP: f64 = 500.0;

/// Float precision the networks train in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Precision {
    /// Single precision (the default: about 1.4x faster here, as in the frameworks).
    #[default]
    F32,
    /// Double precision.
    F64,
}

/// Hyperparameters of the methods (defaults from the study description; the open ones are
/// documented in the [module docs](self) with their reasons).
#[derive(Debug, Clone, PartialEq)]
pub struct MethodConfig {
    /// Multiplies every epoch count (1.0 = the study's; tests use less).
    pub epoch_scale: f64,
    /// Mini-batch size (32).
    pub batch_size: usize,
    /// Deep-ensemble size M (5).
    pub ensemble_size: usize,
    /// How the ensemble's members combine ([`EnsemblePredictive::Gaussian`]).
    pub ensemble_predictive: EnsemblePredictive,
    /// Test-time draws T of MC dropout, SWAG and BBB (50).
    pub samples: usize,
    /// MC dropout rate (0.1).
    pub dropout: f64,
    /// Maximum rank K of SWAG's low-rank covariance (20, at least 2).
    pub swag_rank: usize,
    /// SWAG's learning-rate schedule ([`SwagSchedule::Swa`]).
    pub swag_schedule: SwagSchedule,
    /// Largest Euclidean norm of a SWAG mini-batch gradient before its SGD step
    /// ([`credence::nn::optim::clip_grad_norm`]; 500, a measured choice, see the module docs);
    /// `None`: unclipped, the default of tables written before 2026-12-03.
    pub swag_clip: Option<f64>,
    /// Weight of the KL term in BBB's loss (1e-4).
    pub kl_weight: f64,
    /// Central probability of the conformal interval (0.9).
    pub level: f64,
    /// Fraction of the training points that calibrates conformal prediction (0.2).
    pub calibration_fraction: f64,
    /// Float precision of training (f32).
    pub precision: Precision,
    /// Where the test-time forward passes run ([`Backend::Auto`]: the GPU when CUDA is usable,
    /// else the CPU; the same numbers up to the device's rounding). Training runs on the CPU.
    /// Not a hyperparameter: it is left out of a study table's settings file, so a table
    /// started on one backend can be resumed on another.
    pub backend: Backend,
}

impl Default for MethodConfig {
    fn default() -> Self {
        MethodConfig {
            epoch_scale: 1.0,
            batch_size: 32,
            ensemble_size: 5,
            ensemble_predictive: EnsemblePredictive::Gaussian,
            samples: 50,
            dropout: 0.1,
            swag_rank: 20,
            swag_schedule: SwagSchedule::Swa,
            swag_clip: Some(SWAG_CLIP),
            kl_weight: 1e-4,
            level: 0.9,
            calibration_fraction: 0.2,
            precision: Precision::F32,
            backend: Backend::Auto,
        }
    }
}

impl MethodConfig {
    /// Checks every field's domain.
    pub fn validate(&self) -> Result<()> {
        let c = self;
        if !(c.epoch_scale.is_finite() && c.epoch_scale > 0.0) {
            return Err(Error::argument("epoch_scale", c.epoch_scale, "a finite number > 0"));
        }
        credence::limits::at_most("epoch_scale", c.epoch_scale, credence::limits::MAX_EPOCH_SCALE)?;
        for (name, v) in [("batch_size", c.batch_size), ("ensemble_size", c.ensemble_size), ("samples", c.samples)] {
            if v == 0 {
                return Err(Error::argument(name, v, "an integer >= 1"));
            }
        }
        if !(2..=MAX_LOW_RANK).contains(&c.swag_rank) {
            return Err(Error::argument(
                "swag_rank",
                c.swag_rank,
                format!("an integer from 2 to {MAX_LOW_RANK} (the low rank the backend's kernel holds)"),
            ));
        }
        if let Some(clip) = c.swag_clip
            && !(clip.is_finite() && clip > 0.0)
        {
            return Err(Error::argument("swag_clip", clip, "a finite number > 0 (or none)"));
        }
        if !(0.0..1.0).contains(&c.dropout) {
            return Err(Error::argument("dropout", c.dropout, "a probability in [0, 1)"));
        }
        if !(c.kl_weight.is_finite() && c.kl_weight >= 0.0) {
            return Err(Error::argument("kl_weight", c.kl_weight, "a finite number >= 0"));
        }
        for (name, v) in [("level", c.level), ("calibration_fraction", c.calibration_fraction)] {
            if !(v > 0.0 && v < 1.0) {
                return Err(Error::argument(name, v, "a number in (0, 1)"));
            }
        }
        Ok(())
    }
}

/// The predictive distribution a method gives on the test inputs (standardised target scale
/// unless rescaled).
#[derive(Debug, Clone)]
pub enum Prediction {
    /// A Gaussian mixture (one member per network, MC pass or weight sample); MAP has one.
    Mixture(GaussianMixture),
    /// Conformal prediction: its intervals, and the Gaussian whose central interval at the
    /// same level matches them (for CRPS and NLL).
    Conformal {
        /// The calibrated central intervals.
        intervals: Intervals,
        /// The matching Gaussian.
        gaussian: Gaussian,
    },
}

impl Prediction {
    /// The same prediction for the target `shift + scale * y` (back to original units): means
    /// and bounds map affinely, sds multiply by |scale| (a negative scale swaps the bounds).
    /// `scale` must be finite and non-zero, `shift` finite.
    pub fn rescale(&self, shift: f64, scale: f64) -> Result<Prediction> {
        if !shift.is_finite() {
            return Err(Error::argument("shift", shift, "a finite number"));
        }
        if !(scale.is_finite() && scale != 0.0) {
            return Err(Error::argument("scale", scale, "a finite non-zero number"));
        }
        let map = |v: f64| shift + scale * v;
        match self {
            Prediction::Mixture(mix) => {
                let (m, n) = (mix.n_members(), credence::RegressionPredictive::n_points(mix));
                let (mut means, mut sds) = (Array2::zeros((m, n)), Array2::zeros((m, n)));
                for i in 0..n {
                    for (k, (mu, sd)) in mix.point_means(i).iter().zip(mix.point_sds(i)).enumerate() {
                        means[[k, i]] = map(*mu);
                        sds[[k, i]] = scale.abs() * sd;
                    }
                }
                Ok(Prediction::Mixture(GaussianMixture::new(means, sds, Some(mix.weights().to_vec()))?))
            }
            Prediction::Conformal { intervals, gaussian } => {
                let (lo, hi): (Vec<f64>, Vec<f64>) = intervals
                    .lower()
                    .iter()
                    .zip(intervals.upper())
                    .map(|(&l, &u)| if scale > 0.0 { (map(l), map(u)) } else { (map(u), map(l)) })
                    .unzip();
                let mean = gaussian.mean().iter().map(|&v| map(v)).collect();
                let sd = gaussian.sd().iter().map(|&s| scale.abs() * s).collect();
                Ok(Prediction::Conformal {
                    intervals: Intervals::new(lo, hi, intervals.level())?,
                    gaussian: Gaussian::new(mean, sd)?,
                })
            }
        }
    }
}

/// What one training run returns.
#[derive(Debug, Clone)]
pub struct MethodOutput {
    /// Predictive distribution at the test inputs.
    pub prediction: Prediction,
    /// False when training failed (NaN loss, too few SWAG snapshots, a failed SWAG run by
    /// [`swag::SwagFailure`]); the row is kept but flagged.
    pub converged: bool,
}

/// Trains `method` on (x, y) (standardised, n x d and n) and predicts at `test_x` (m x d), the
/// predictions on `config.backend` (see the [module docs](self)). Deterministic for a given
/// `seed` (on the GPU up to rounding), single-threaded on the CPU (parallelism is across
/// jobs).
///
/// Errors (typed, never a panic): shape mismatches, non-finite inputs, an invalid `config`,
/// too few points for the conformal split, a trained network whose predictions are not
/// finite, and [`Error::Backend`] when `config.backend` is [`Backend::Cuda`] and CUDA cannot
/// run (or a CUDA call fails).
pub fn train_and_predict(
    method: Method,
    config: &MethodConfig,
    x: ArrayView2<'_, f64>,
    y: &[f64],
    test_x: ArrayView2<'_, f64>,
    seed: u64,
) -> Result<MethodOutput> {
    config.validate()?;
    common::check_inputs(x, y, test_x)?;
    let test_rows = common::rows::<f64>(test_x);
    let test = predict::TestSet { x: &test_rows, d: x.ncols(), backend: config.backend };
    match config.precision {
        Precision::F32 => {
            run(method, &inputs::Inputs { data: &common::Data::<f32>::new(x, y), test: &test, config, seed })
        }
        Precision::F64 => {
            run(method, &inputs::Inputs { data: &common::Data::<f64>::new(x, y), test: &test, config, seed })
        }
    }
}

/// Trains and predicts with `method` in the training precision `R`.
fn run<R: credence::nn::Real>(method: Method, job: &inputs::Inputs<'_, R>) -> Result<MethodOutput> {
    match method {
        Method::Map => map::run(job),
        Method::Mcd => mcd::run(job),
        Method::Ensemble => ensemble::run(job),
        Method::Swag => swag::run(job),
        Method::Bbb => bbb::run(job),
        Method::Cp => conformal::run(job),
    }
}

#[cfg(test)]
pub(crate) mod test_support {
    //! A small heteroscedastic problem for the method tests.
    use ndarray::Array2;
    use rand::SeedableRng;
    use rand::rngs::ChaCha8Rng;

    use credence::nn::Real;

    /// n points of y = x . w + (0.3 + 0.5 |x_1|) eps in d = 3 (standardised-ish scale).
    pub(crate) fn problem(n: usize, seed: u64) -> (Array2<f64>, Vec<f64>) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let w = [1.0, -0.7, 0.4];
        let x = Array2::from_shape_fn((n, 3), |_| f64::normal(&mut rng));
        let y = (0..n)
            .map(|i| {
                let row = x.row(i);
                row.iter().zip(&w).map(|(a, b)| a * b).sum::<f64>() + (0.3 + 0.5 * row[0].abs()) * f64::normal(&mut rng)
            })
            .collect();
        (x, y)
    }

    /// Test-speed settings: 10% of the epochs, 10 test draws.
    pub(crate) fn quick() -> super::MethodConfig {
        super::MethodConfig { epoch_scale: 0.1, samples: 10, ..Default::default() }
    }

    /// 64 points of [`problem`] (seed `seed`) as f32 training data, and a network for them
    /// (batches of 32).
    #[cfg(test)]
    pub(super) fn training_problem(seed: u64) -> (super::common::Data<f32>, credence::nn::mlp::Net<f32>) {
        let (x, y) = problem(64, seed);
        (super::common::Data::new(x.view(), &y), credence::nn::mlp::Net::new(3, 32))
    }

    /// `losses` are 50 epochs' mean training losses, the last more than 0.3 below the first.
    #[cfg(test)]
    pub(super) fn assert_loss_falls(losses: &[f64]) {
        assert_eq!(losses.len(), 50);
        assert!(losses[49] < losses[0] - 0.3, "{losses:?}");
    }
}

#[cfg(test)]
mod tests {
    use super::test_support::{problem, quick};
    use super::*;
    use credence::RegressionPredictive;
    use credence::metrics::crps::CrpsEstimator;

    fn shape_and_finite(p: &Prediction, m: usize, members: usize) {
        match p {
            Prediction::Mixture(mix) => {
                assert_eq!((mix.n_members(), mix.n_points()), (members, m));
                for i in 0..m {
                    assert!(mix.point_means(i).iter().all(|v| v.is_finite()));
                    assert!(mix.point_sds(i).iter().all(|&s| s.is_finite() && s >= 1e-3f64.sqrt() * 0.999));
                }
            }
            Prediction::Conformal { intervals, gaussian } => {
                assert_eq!((intervals.n_points(), gaussian.n_points(), members), (m, m, 1));
            }
        }
    }

    /// Every method through the public entry: right shapes, finite values, converged, and the
    /// same seed gives bit-identical predictions (a different seed does not).
    #[test]
    fn all_methods_shapes_finiteness_and_determinism() {
        let (x, y) = problem(40, 1);
        let (tx, _) = problem(13, 2);
        let cfg = MethodConfig { epoch_scale: 0.02, samples: 4, ensemble_size: 3, ..Default::default() };
        for method in Method::ALL {
            let a = train_and_predict(method, &cfg, x.view(), &y, tx.view(), 9).unwrap();
            let members = match method {
                Method::Map | Method::Cp | Method::Ensemble => 1, // the ensemble's Gaussian
                _ => 4,
            };
            shape_and_finite(&a.prediction, 13, members);
            assert!(a.converged, "{method}");
            let b = train_and_predict(method, &cfg, x.view(), &y, tx.view(), 9).unwrap();
            let c = train_and_predict(method, &cfg, x.view(), &y, tx.view(), 10).unwrap();
            let key = |p: &Prediction| match p {
                Prediction::Mixture(m) => (0..13).map(|i| m.point_mean(i)).collect::<Vec<_>>(),
                Prediction::Conformal { intervals, .. } => intervals.upper().to_vec(),
            };
            assert_eq!(key(&a.prediction), key(&b.prediction), "{method}");
            assert_ne!(key(&a.prediction), key(&c.prediction), "{method}");
        }
        let f64cfg = MethodConfig { precision: Precision::F64, ..cfg };
        let p = train_and_predict(Method::Map, &f64cfg, x.view(), &y, tx.view(), 9).unwrap();
        shape_and_finite(&p.prediction, 13, 1);
    }

    #[test]
    fn bad_inputs_are_typed_errors() {
        let (x, y) = problem(20, 1);
        let cfg = quick();
        let run = |x: ArrayView2<'_, f64>, y: &[f64], t: ArrayView2<'_, f64>, c: &MethodConfig| {
            train_and_predict(Method::Map, c, x, y, t, 0).unwrap_err().to_string()
        };
        assert_eq!(run(x.view(), &y[..19], x.view(), &cfg), "y: shape [19], expected [20], the rows of x");
        let t = Array2::<f64>::zeros((3, 2));
        assert!(run(x.view(), &y, t.view(), &cfg).starts_with("test_x: shape [3, 2]"));
        let mut bad = x.clone();
        bad[[4, 1]] = f64::NAN;
        assert_eq!(run(bad.view(), &y, x.view(), &cfg), "x[4, 1] = NaN: expected a finite number");
        let mut yb = y.clone();
        yb[7] = f64::INFINITY;
        assert_eq!(run(x.view(), &yb, x.view(), &cfg), "y[7] = inf: expected a finite number");
        let c = MethodConfig { dropout: 1.0, ..quick() };
        assert!(run(x.view(), &y, x.view(), &c).contains("dropout"));
        let c = MethodConfig { epoch_scale: f64::NAN, ..quick() };
        assert!(run(x.view(), &y, x.view(), &c).contains("epoch_scale"));
        let e = train_and_predict(Method::Cp, &cfg, x.slice(ndarray::s![..4, ..]), &y[..4], x.view(), 0);
        assert!(e.unwrap_err().to_string().contains("n = 4"));
        assert_eq!("SWAG".parse::<Method>().unwrap(), Method::Swag);
        assert!("laplace".parse::<Method>().is_err());
    }

    /// Rescaling against the closed forms: CRPS scales by |scale|, the density picks up
    /// -ln|scale|, intervals map affinely (bounds swap for a negative scale).
    #[test]
    fn rescale_matches_closed_form() {
        let mix = GaussianMixture::new(
            ndarray::array![[0.0, 1.0, -0.5], [0.4, 0.7, 0.2]],
            ndarray::array![[1.0, 0.5, 0.3], [0.8, 0.9, 1.1]],
            Some(vec![0.3, 0.7]),
        )
        .unwrap();
        let y = [0.2, 0.9, -1.0];
        for (shift, scale) in [(3.0, 2.5), (-1.0, -0.4)] {
            let r = match Prediction::Mixture(mix.clone()).rescale(shift, scale).unwrap() {
                Prediction::Mixture(r) => r,
                _ => unreachable!(),
            };
            let y2: Vec<f64> = y.iter().map(|v| shift + scale * v).collect();
            let (c0, c1) =
                (mix.crps_all(&y, CrpsEstimator::Standard).unwrap(), r.crps_all(&y2, CrpsEstimator::Standard).unwrap());
            let (n0, n1) = (mix.nll_all(&y, 0.0).unwrap(), r.nll_all(&y2, 0.0).unwrap());
            for i in 0..3 {
                assert!((c1[i] - scale.abs() * c0[i]).abs() < 1e-12);
                assert!((n1[i] - (n0[i] + scale.abs().ln())).abs() < 1e-12);
                let ((l0, u0), (l1, u1)) = (mix.central_interval(i, 0.9), r.central_interval(i, 0.9));
                let (a, b) = (shift + scale * l0, shift + scale * u0);
                assert!((l1 - a.min(b)).abs() < 1e-8 && (u1 - a.max(b)).abs() < 1e-8);
            }
            assert_eq!(r.weights(), mix.weights());
        }
        let iv = Intervals::new(vec![-1.0, 0.0], vec![1.0, 3.0], 0.9).unwrap();
        let g = iv.to_gaussian().unwrap();
        let p = Prediction::Conformal { intervals: iv, gaussian: g }.rescale(1.0, -2.0).unwrap();
        let Prediction::Conformal { intervals, gaussian } = p else { unreachable!() };
        assert_eq!((intervals.lower(), intervals.upper()), (&[-1.0, -5.0][..], &[3.0, 1.0][..]));
        // The rescaled Gaussian still matches the rescaled interval.
        let g2 = intervals.to_gaussian().unwrap();
        for i in 0..2 {
            assert!((g2.mean()[i] - gaussian.mean()[i]).abs() < 1e-12);
            assert!((g2.sd()[i] - gaussian.sd()[i]).abs() < 1e-12);
        }
        assert!(Prediction::Mixture(mix).rescale(0.0, 0.0).is_err());
    }
}
