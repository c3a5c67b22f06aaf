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
pub(crate) const ADAM_LR: f64 = 1e-3;
pub(crate) const ADAM_WEIGHT_DECAY: f64 = 1e-5;
/// Epochs of the Adam-trained methods and SWAG at `epoch_scale = 1`.
pub(crate) const EPOCHS: usize = 500;

/// Stream tags under a job seed (see [`stream_seed`]).
pub(crate) const MEMBER: u64 = 1;
pub(crate) const INIT: u64 = 2;
pub(crate) const SHUFFLE: u64 = 3;
pub(crate) const NOISE: u64 = 4;
pub(crate) const PREDICT: u64 = 5;
pub(crate) const SPLIT: u64 = 6;

/// The seed of network `k` under the job seed (MAP, MC dropout, SWAG, BBB and CP train
/// network 0, the ensemble networks 0..M).
pub(crate) fn member_seed(seed: u64, k: u64) -> u64 {
    stream_seed(seed, &[MEMBER, k])
}

/// A ChaCha8 stream for `tags` under `seed`.
pub(crate) fn rng(seed: u64, tags: &[u64]) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(stream_seed(seed, tags))
}

/// Training inputs (row-major n x d) and targets in the training precision, and the inputs
/// as given (f64, for the test-time passes at CP's calibration points).
pub(crate) struct Data<R> {
    pub x: Vec<R>,
    pub x64: Vec<f64>,
    pub y: Vec<R>,
    pub d: usize,
}

impl<R: Real> Data<R> {
    pub(crate) fn new(x: ArrayView2<'_, f64>, y: &[f64]) -> Self {
        Data { x: rows::<R>(x), x64: rows::<f64>(x), y: y.iter().map(|&v| R::from_f64(v)).collect(), d: x.ncols() }
    }

    pub(crate) fn n(&self) -> usize {
        self.y.len()
    }

    /// The rows `idx`, in that order.
    pub(crate) fn subset(&self, idx: &[usize]) -> Self {
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
pub(crate) fn rows<R: Real>(a: ArrayView2<'_, f64>) -> Vec<R> {
    a.rows().into_iter().flat_map(|r| r.into_iter().map(|&v| R::from_f64(v)).collect::<Vec<_>>()).collect()
}

/// Shapes and finiteness of the inputs of [`super::train_and_predict`].
pub(crate) fn check_inputs(x: ArrayView2<'_, f64>, y: &[f64], test_x: ArrayView2<'_, f64>) -> Result<()> {
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
pub(crate) fn scaled_epochs(base: usize, scale: f64) -> usize {
    ((base as f64 * scale).round() as usize).max(1)
}

/// A trained parameter vector and its per-epoch mean training loss.
pub(crate) struct Trained<R> {
    pub params: Vec<R>,
    /// Mean loss over each epoch's batches (at the parameters of each step).
    #[cfg_attr(not(test), allow(dead_code))] // the tests check that training lowers it
    pub losses: Vec<f64>,
    /// False when a loss became non-finite; `params` are then those of the last finite epoch.
    pub converged: bool,
}

/// Whether every value is finite.
pub(crate) fn all_finite<R: Real>(v: &[R]) -> bool {
    v.iter().all(|x| x.is_finite())
}

/// The mini-batch schedule of one network's training, the loop of every method: `epochs`
/// epochs over the rows of the training data in an order drawn anew each epoch from the
/// member's shuffle stream, in batches of `config.batch_size` rows (at most the network's
/// capacity).
pub(super) struct Schedule<'a, R> {
    data: &'a Data<R>,
    batch: usize,
    epochs: usize,
    shuffle: ChaCha8Rng,
}

impl<'a, R: Real> Schedule<'a, R> {
    /// The schedule of `net` on `data` for `epochs` epochs; `seed` is the member's seed.
    pub(super) fn new(net: &Net<R>, data: &'a Data<R>, config: &MethodConfig, epochs: usize, seed: u64) -> Self {
        Schedule { data, batch: config.batch_size.min(net.capacity()), epochs, shuffle: rng(seed, &[SHUFFLE]) }
    }

    /// Trains `params`, the dropout masks off before and after: each batch is loaded into
    /// `net`, then `step(net, params, rows, epoch)` trains on its `rows` rows and returns their
    /// mean loss, leaving `params` alone when the loss is not finite; `epoch_end(params, epoch,
    /// loss)` gets each finished epoch's mean loss. A non-finite loss, or parameters not finite
    /// after an epoch, restore that epoch's starting parameters and stop training: the result
    /// is then false.
    pub(super) fn train(
        mut self,
        net: &mut Net<R>,
        params: &mut [R],
        mut step: impl FnMut(&mut Net<R>, &mut [R], usize, usize) -> Result<f64>,
        mut epoch_end: impl FnMut(&[R], usize, f64),
    ) -> Result<bool> {
        net.unmask();
        let n = self.data.n();
        let mut order: Vec<usize> = (0..n).collect();
        let mut backup = params.to_vec();
        let mut finite = true;
        for epoch in 0..self.epochs {
            order.shuffle(&mut self.shuffle);
            backup.copy_from_slice(params);
            let mut total = 0.0;
            for idx in order.chunks(self.batch) {
                let b = net.load(&self.data.x, &self.data.y, idx);
                let loss = step(net, params, b, epoch)?;
                if !loss.is_finite() {
                    finite = false;
                    break;
                }
                total += loss * b as f64;
            }
            if !finite || !all_finite(params) {
                params.copy_from_slice(&backup);
                finite = false;
                break;
            }
            epoch_end(params, epoch, total / n as f64);
        }
        net.unmask();
        Ok(finite)
    }
}

/// Trains one network with Adam (the MAP settings; `dropout > 0` gives MC dropout training) on
/// `data` for `epochs` epochs of shuffled mini-batches of `config.batch_size`; `seed` is the
/// member's seed (initialisation, batch order and dropout masks are separate streams of it).
pub(crate) fn train_adam<R: Real>(
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
    let mut noise = rng(seed, &[NOISE]);
    let mut grad = vec![R::zero(); layout.len];
    let mut adam = Adam::new(layout.len, ADAM_LR, ADAM_WEIGHT_DECAY);
    let mut losses = Vec::with_capacity(epochs);
    let converged = Schedule::new(net, data, config, epochs, seed).train(
        net,
        &mut params,
        |net, params, b, _| {
            net.sample_masks(&mut noise, dropout, b);
            let loss = net.loss_grad(params, b, &mut grad)?;
            if loss.is_finite() {
                adam.step(params, &grad);
            }
            Ok(loss)
        },
        |_, _, loss| losses.push(loss),
    )?;
    Ok(Trained { params, losses, converged })
}
