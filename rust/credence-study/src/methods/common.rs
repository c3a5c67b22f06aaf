//! Pieces the methods share: input checks, conversion to the training precision and the Adam
//! training loop (MAP, MC dropout, ensemble members, the conformal network). The test-time
//! passes are in [`super::predict`].

use ndarray::ArrayView2;
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rand::seq::SliceRandom;

use super::MethodConfig;
use credence::error::{Error, Result};
use credence::nn::mlp::Net;
use credence::nn::optim::Adam;
use credence::nn::{Real, stream_seed};

/// Adam settings of the study (MAP, MC dropout, ensemble members, the conformal network).
pub(super) const ADAM_LR: f64 = 1e-3;
pub(super) const ADAM_WEIGHT_DECAY: f64 = 1e-5;
/// Epochs of the Adam-trained methods and SWAG at `epoch_scale = 1`.
pub(super) const EPOCHS: usize = 500;

/// Stream tags under a job seed (see [`stream_seed`]).
pub(super) const MEMBER: u64 = 1;
pub(super) const INIT: u64 = 2;
pub(super) const SHUFFLE: u64 = 3;
pub(super) const NOISE: u64 = 4;
pub(super) const PREDICT: u64 = 5;
pub(super) const SPLIT: u64 = 6;

/// A ChaCha8 stream for `tags` under `seed`.
pub(super) fn rng(seed: u64, tags: &[u64]) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(stream_seed(seed, tags))
}

/// Training inputs (row-major n x d) and targets in the training precision, and the inputs
/// as given (f64, for the test-time passes at CP's calibration points).
pub(super) struct Data<R> {
    pub x: Vec<R>,
    pub x64: Vec<f64>,
    pub y: Vec<R>,
    pub d: usize,
}

impl<R: Real> Data<R> {
    pub(super) fn new(x: ArrayView2<'_, f64>, y: &[f64]) -> Self {
        Data { x: rows::<R>(x), x64: rows::<f64>(x), y: y.iter().map(|&v| R::from_f64(v)).collect(), d: x.ncols() }
    }

    pub(super) fn n(&self) -> usize {
        self.y.len()
    }

    /// The rows `idx`, in that order.
    pub(super) fn subset(&self, idx: &[usize]) -> Self {
        let d = self.d;
        Data {
            x: idx.iter().flat_map(|&i| self.x[i * d..(i + 1) * d].iter().copied()).collect(),
            x64: idx.iter().flat_map(|&i| self.x64[i * d..(i + 1) * d].iter().copied()).collect(),
            y: idx.iter().map(|&i| self.y[i]).collect(),
            d,
        }
    }
}

/// `a` row-major in precision `R`.
pub(super) fn rows<R: Real>(a: ArrayView2<'_, f64>) -> Vec<R> {
    a.rows().into_iter().flat_map(|r| r.into_iter().map(|&v| R::from_f64(v)).collect::<Vec<_>>()).collect()
}

/// Shapes and finiteness of the inputs of [`super::train_and_predict`].
pub(super) fn check_inputs(x: ArrayView2<'_, f64>, y: &[f64], test_x: ArrayView2<'_, f64>) -> Result<()> {
    let (n, d) = x.dim();
    if n == 0 || d == 0 {
        return Err(Error::shape("x", x.shape(), "n x d with n >= 1 training points and d >= 1 features"));
    }
    if y.len() != n {
        return Err(Error::shape("y", &[y.len()], format!("[{n}], the rows of x")));
    }
    if test_x.ncols() != d || test_x.nrows() == 0 {
        return Err(Error::shape("test_x", test_x.shape(), format!("m x {d} with m >= 1 (the columns of x)")));
    }
    for (name, a) in [("x", x), ("test_x", test_x)] {
        if let Some(((i, j), v)) = a.indexed_iter().find(|(_, v)| !v.is_finite()) {
            return Err(Error::value(name, &[i, j], v, "a finite number"));
        }
    }
    if let Some(i) = y.iter().position(|v| !v.is_finite()) {
        return Err(Error::value("y", &[i], y[i], "a finite number"));
    }
    Ok(())
}

/// `base` epochs scaled by `epoch_scale`, rounded, at least one.
pub(super) fn scaled_epochs(base: usize, scale: f64) -> usize {
    ((base as f64 * scale).round() as usize).max(1)
}

/// A trained parameter vector and its per-epoch mean training loss.
pub(super) struct Trained<R> {
    pub params: Vec<R>,
    /// Mean loss over each epoch's batches (at the parameters of each step).
    #[cfg_attr(not(test), allow(dead_code))] // the tests check that training lowers it
    pub losses: Vec<f64>,
    /// False when a loss became non-finite; `params` are then those of the last finite epoch.
    pub converged: bool,
}

/// Whether every value is finite.
pub(super) fn all_finite<R: Real>(v: &[R]) -> bool {
    v.iter().all(|x| x.is_finite())
}

/// Trains one network with Adam (the MAP settings; `dropout > 0` gives MC dropout training) on
/// `data` for `epochs` epochs of shuffled mini-batches of `config.batch_size`; `seed` is the
/// member's seed (initialisation, batch order and dropout masks are separate streams of it).
pub(super) fn train_adam<R: Real>(
    net: &mut Net<R>,
    data: &Data<R>,
    config: &MethodConfig,
    epochs: usize,
    dropout: f64,
    seed: u64,
) -> Result<Trained<R>> {
    let layout = net.layout();
    let mut params = vec![R::zero(); layout.len];
    layout.init(&mut rng(seed, &[INIT]), &mut params);
    let (mut shuffle, mut noise) = (rng(seed, &[SHUFFLE]), rng(seed, &[NOISE]));
    let mut grad = vec![R::zero(); layout.len];
    let mut backup = params.clone();
    let mut adam = Adam::new(layout.len, ADAM_LR, ADAM_WEIGHT_DECAY);
    let mut order: Vec<usize> = (0..data.n()).collect();
    let mut losses = Vec::with_capacity(epochs);
    let batch = config.batch_size.min(net.capacity());
    let mut converged = true;
    for _ in 0..epochs {
        order.shuffle(&mut shuffle);
        backup.copy_from_slice(&params);
        let mut total = 0.0;
        for idx in order.chunks(batch) {
            let b = net.load(&data.x, &data.y, idx);
            net.sample_masks(&mut noise, dropout, b);
            let loss = net.loss_grad(&params, b, &mut grad)?;
            if !loss.is_finite() {
                converged = false;
                break;
            }
            adam.step(&mut params, &grad);
            total += loss * b as f64;
        }
        if !converged || !all_finite(&params) {
            params.copy_from_slice(&backup);
            converged = false;
            break;
        }
        losses.push(total / data.n() as f64);
    }
    net.unmask();
    Ok(Trained { params, losses, converged })
}
