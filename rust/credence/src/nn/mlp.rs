//! The study's MLP: d -> 64 -> 64 -> K with ReLU and one of two heads ([`Head`]): the
//! heteroscedastic Gaussian (K = 2 outputs, mean and log variance, the variance clamped to
//! [1e-3, 1e3], Gaussian NLL) or the softmax classifier (K logits, cross-entropy); the loss is
//! averaged over the batch.
//!
//! Parameters live in one contiguous vector (see [`Layout`]) so optimisers, SWAG moments and
//! Bayes-by-Backprop noise are flat loops over it. `Net` owns every activation buffer, sized
//! once for the largest batch: a training step allocates nothing. The two wide layers are
//! batched matrix products (ndarray's `general_mat_mul`, i.e. `matrixmultiply` with runtime
//! AVX/FMA dispatch); the 64 -> K head is a hand loop, for which a GEMM call costs more than the
//! arithmetic at K = 2.

use ndarray::linalg::general_mat_mul;
use ndarray::{ArrayView2, ArrayViewMut2};
use rand::{Rng, RngExt};

use super::Real;
pub use super::head::{Head, VAR_MAX, VAR_MIN};
use super::head::{gaussian_of, softmax_into};
use crate::error::{Error, Result};

/// Width of both hidden layers.
pub const HIDDEN: usize = 64;

/// The parameter layout the study's training and the GPU kernels (`kernels/mlp.cu`) share.
/// Offsets of the parameter blocks in the contiguous vector: W1 (d x 64, input-major, so the
/// forward pass is `x W1`), b1, W2 (64 x 64), b2, W3 (K x 64, output-major: the head is K dot
/// products), b3.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Input dimension d.
    pub d: usize,
    /// The output head (K = [`Head::outputs`]).
    pub head: Head,
    b1: usize,
    w2: usize,
    b2: usize,
    w3: usize,
    b3: usize,
    /// Number of parameters.
    pub len: usize,
}

/// The parameter blocks of one vector.
struct Blocks<'a, R> {
    w1: &'a [R],
    b1: &'a [R],
    w2: &'a [R],
    b2: &'a [R],
    w3: &'a [R],
    b3: &'a [R],
}

impl Layout {
    /// The layout of a Gaussian-head network with `d` inputs.
    pub fn new(d: usize) -> Self {
        Layout::with_head(d, Head::Gaussian)
    }

    /// The layout of a network with `d` inputs and output head `head`.
    pub fn with_head(d: usize, head: Head) -> Self {
        let k = head.outputs();
        let b1 = d * HIDDEN;
        let w2 = b1 + HIDDEN;
        let b2 = w2 + HIDDEN * HIDDEN;
        let w3 = b2 + HIDDEN;
        let b3 = w3 + k * HIDDEN;
        Layout { d, head, b1, w2, b2, w3, b3, len: b3 + k }
    }

    /// The number of outputs K.
    pub fn outputs(&self) -> usize {
        self.head.outputs()
    }

    fn split<'a, R>(&self, p: &'a [R]) -> Result<Blocks<'a, R>> {
        if p.len() != self.len {
            return Err(Error::shape("network parameters", &[p.len()], format!("[{}]", self.len)));
        }
        Ok(Blocks {
            w1: &p[..self.b1],
            b1: &p[self.b1..self.w2],
            w2: &p[self.w2..self.b2],
            b2: &p[self.b2..self.w3],
            w3: &p[self.w3..self.b3],
            b3: &p[self.b3..],
        })
    }

    /// Fan-in of the layer parameter `i` belongs to.
    fn fan_in(&self, i: usize) -> usize {
        if i < self.w2 { self.d } else { HIDDEN }
    }

    /// PyTorch's default `nn.Linear` initialisation (Kaiming-uniform with a = sqrt(5), which is
    /// U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weights, and the same bound for biases): the
    /// framework baseline of the bench and of most published BDL code starts from it.
    pub fn init<R: Real, G: Rng + ?Sized>(&self, rng: &mut G, out: &mut [R]) {
        for (i, p) in out.iter_mut().enumerate().take(self.len) {
            let bound = 1.0 / (self.fan_in(i) as f64).sqrt();
            *p = R::from_f64(rng.random_range(-bound..bound));
        }
    }
}

/// A read-only row-major matrix over `s[..rows * cols]`.
fn mat<R>(s: &[R], rows: usize, cols: usize) -> Result<ArrayView2<'_, R>> {
    let part =
        s.get(..rows * cols).ok_or_else(|| Error::shape("network buffer", &[s.len()], format!("{rows} x {cols}")))?;
    ArrayView2::from_shape((rows, cols), part).map_err(|e| Error::shape("network buffer", &[rows, cols], e.to_string()))
}

fn mat_mut<R>(s: &mut [R], rows: usize, cols: usize) -> Result<ArrayViewMut2<'_, R>> {
    let len = s.len();
    let part =
        s.get_mut(..rows * cols).ok_or_else(|| Error::shape("network buffer", &[len], format!("{rows} x {cols}")))?;
    ArrayViewMut2::from_shape((rows, cols), part)
        .map_err(|e| Error::shape("network buffer", &[rows, cols], e.to_string()))
}

/// Column sums of the row-major matrix `m` (`cols` wide) into `out` (overwritten).
fn col_sums<R: Real>(m: &[R], cols: usize, out: &mut [R]) {
    out.fill(R::zero());
    for row in m.chunks_exact(cols) {
        for (o, &v) in out.iter_mut().zip(row) {
            *o += v;
        }
    }
}

/// Activation buffers and the current batch for one network layout; reused for every step.
#[derive(Debug, Clone)]
pub struct Net<R> {
    layout: Layout,
    cap: usize,
    x: Vec<R>,
    y: Vec<R>,
    h1: Vec<R>,
    h2: Vec<R>,
    out: Vec<R>,
    dout: Vec<R>,
    dz1: Vec<R>,
    dz2: Vec<R>,
    // Dropout multipliers (0 or 1 / (1 - p)) of the current batch; used only while `masked`.
    m1: Vec<R>,
    m2: Vec<R>,
    masked: bool,
}

impl<R: Real> Net<R> {
    /// Buffers for batches of up to `cap` rows of a `d`-input Gaussian-head network.
    pub fn new(d: usize, cap: usize) -> Self {
        Net::with_head(d, Head::Gaussian, cap)
    }

    /// Buffers for batches of up to `cap` rows of a `d`-input network with head `head` (whose
    /// class count the caller has checked with [`Head::validate`]).
    pub fn with_head(d: usize, head: Head, cap: usize) -> Self {
        let cap = cap.max(1);
        let k = head.outputs();
        let z = |n: usize| vec![R::zero(); n];
        Net {
            layout: Layout::with_head(d, head),
            cap,
            x: z(cap * d),
            y: z(cap),
            h1: z(cap * HIDDEN),
            h2: z(cap * HIDDEN),
            out: z(cap * k),
            dout: z(cap * k),
            dz1: z(cap * HIDDEN),
            dz2: z(cap * HIDDEN),
            m1: z(cap * HIDDEN),
            m2: z(cap * HIDDEN),
            masked: false,
        }
    }

    /// The network's parameter layout.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// The largest batch the buffers hold.
    pub fn capacity(&self) -> usize {
        self.cap
    }

    /// Copies the rows `idx` of (x, y) (row-major, d columns) into the batch; returns its size.
    pub fn load(&mut self, x: &[R], y: &[R], idx: &[usize]) -> usize {
        let d = self.layout.d;
        let b = idx.len().min(self.cap);
        for (k, &i) in idx[..b].iter().enumerate() {
            self.x[k * d..(k + 1) * d].copy_from_slice(&x[i * d..(i + 1) * d]);
            self.y[k] = y[i];
        }
        b
    }

    /// Copies `b` consecutive rows starting at `first` (prediction, no targets).
    pub fn load_rows(&mut self, x: &[R], first: usize, b: usize) -> usize {
        let d = self.layout.d;
        let b = b.min(self.cap);
        self.x[..b * d].copy_from_slice(&x[first * d..(first + b) * d]);
        b
    }

    /// Draws fresh inverted-dropout masks (drop probability `p`) for `b` rows and switches them
    /// on; `p = 0` switches them off.
    pub fn sample_masks<G: Rng + ?Sized>(&mut self, rng: &mut G, p: f64, b: usize) {
        self.masked = p > 0.0;
        if !self.masked {
            return;
        }
        // Keep a unit when a uniform u32 is >= p 2^32: one integer draw and compare per unit.
        let threshold = (p * 4_294_967_296.0).min(u32::MAX as f64) as u32;
        let keep = R::from_f64(1.0 / (1.0 - p));
        for m in self.m1[..b * HIDDEN].iter_mut().chain(self.m2[..b * HIDDEN].iter_mut()) {
            *m = if rng.next_u32() >= threshold { keep } else { R::zero() };
        }
    }

    /// Switches dropout masks off (deterministic forward passes).
    pub fn unmask(&mut self) {
        self.masked = false;
    }

    /// Forward pass of the first `b` loaded rows with parameters `p`.
    pub fn forward(&mut self, p: &[R], b: usize) -> Result<()> {
        let l = self.layout;
        let w = l.split(p)?;
        let x = mat(&self.x, b, l.d)?;
        hidden_layer(x, mat(w.w1, l.d, HIDDEN)?, w.b1, &mut self.h1, b, self.masked.then_some(&self.m1[..]))?;
        let h1 = mat(&self.h1, b, HIDDEN)?;
        hidden_layer(h1, mat(w.w2, HIDDEN, HIDDEN)?, w.b2, &mut self.h2, b, self.masked.then_some(&self.m2[..]))?;
        let k = l.outputs();
        for (h, o) in self.h2[..b * HIDDEN].chunks_exact(HIDDEN).zip(self.out.chunks_exact_mut(k)) {
            for ((o, wk), &bias) in o.iter_mut().zip(w.w3.chunks_exact(HIDDEN)).zip(w.b3) {
                let mut acc = R::zero();
                for (&h, &a) in h.iter().zip(wk) {
                    acc += h * a;
                }
                *o = acc + bias;
            }
        }
        Ok(())
    }

    /// The outputs of row `i` after [`Net::forward`] (K of them).
    pub fn outputs(&self, i: usize) -> &[R] {
        let k = self.layout.outputs();
        &self.out[i * k..(i + 1) * k]
    }

    /// Mean and standard deviation (variance clamped) of row `i` after [`Net::forward`] of a
    /// Gaussian-head network.
    pub fn gaussian(&self, i: usize) -> (f64, f64) {
        gaussian_of(self.outputs(i))
    }

    /// The heads ([`Net::gaussian`]: means and sds) of parameters `p` at every row of `x`,
    /// forwarded in batches of the buffers' capacity; `prepare(net, first, b)` runs on each
    /// batch of `b` rows from row `first` once it is loaded (to draw its dropout masks, say).
    pub fn heads(
        &mut self,
        p: &[R],
        x: &[R],
        prepare: impl FnMut(&mut Self, usize, usize),
    ) -> Result<(Vec<f64>, Vec<f64>)> {
        let n = x.len() / self.layout.d;
        let (mut means, mut sds) = (Vec::with_capacity(n), Vec::with_capacity(n));
        self.each_batch(p, x, prepare, |net, _, b| {
            for i in 0..b {
                let (mu, sd) = net.gaussian(i);
                means.push(mu);
                sds.push(sd);
            }
        })?;
        Ok((means, sds))
    }

    /// The outputs (in f64, row-major n x K) of parameters `p` at every row of `x`, forwarded in
    /// batches like [`Net::heads`]: a softmax head's logits.
    pub fn outputs_at(&mut self, p: &[R], x: &[R], prepare: impl FnMut(&mut Self, usize, usize)) -> Result<Vec<f64>> {
        let k = self.layout.outputs();
        let mut out = vec![0.0; x.len() / self.layout.d * k];
        self.each_batch(p, x, prepare, |net, first, b| {
            for i in 0..b {
                let row = &mut out[(first + i) * k..(first + i + 1) * k];
                row.iter_mut().zip(net.outputs(i)).for_each(|(o, v)| *o = v.to_f64());
            }
        })?;
        Ok(out)
    }

    /// The class probabilities (softmax, in f64, row-major n x K) of a softmax-head network
    /// with parameters `p` at every row of `x`, forwarded in batches like [`Net::heads`].
    pub fn class_probs(&mut self, p: &[R], x: &[R], prepare: impl FnMut(&mut Self, usize, usize)) -> Result<Vec<f64>> {
        let k = self.layout.outputs();
        let mut probs = vec![0.0; x.len() / self.layout.d * k];
        self.each_batch(p, x, prepare, |net, first, b| {
            for i in 0..b {
                softmax_into(net.outputs(i), &mut probs[(first + i) * k..(first + i + 1) * k]);
            }
        })?;
        Ok(probs)
    }

    /// Forwards the rows of `x` in batches of the capacity: loads each, calls `prepare(net,
    /// first, b)`, forwards it with `p` and hands it to `take(net, first, b)`.
    fn each_batch(
        &mut self,
        p: &[R],
        x: &[R],
        mut prepare: impl FnMut(&mut Self, usize, usize),
        mut take: impl FnMut(&Self, usize, usize),
    ) -> Result<()> {
        let n = x.len() / self.layout.d;
        let mut first = 0;
        while first < n {
            let b = self.load_rows(x, first, n - first);
            prepare(self, first, b);
            self.forward(p, b)?;
            take(self, first, b);
            first += b;
        }
        Ok(())
    }

    /// Forward and backward pass over the first `b` loaded rows: writes the gradient of the
    /// batch-mean loss of the head (Gaussian NLL or cross-entropy) into `grad` (overwritten) and
    /// returns that mean loss. A softmax target that is not a class index is an error.
    pub fn loss_grad(&mut self, p: &[R], b: usize, grad: &mut [R]) -> Result<f64> {
        self.forward(p, b)?;
        let l = self.layout;
        let w = l.split(p)?;
        if grad.len() != l.len {
            return Err(Error::shape("network gradient", &[grad.len()], format!("[{}]", l.len)));
        }
        let (k, one, inv_b) = (l.outputs(), R::one(), R::from_f64(1.0 / b as f64));
        let mut loss = 0.0;
        for ((o, d), &y) in self.out[..k * b].chunks_exact(k).zip(self.dout.chunks_exact_mut(k)).zip(&self.y) {
            loss += l.head.row_loss_grad(o, y, d, inv_b)?;
        }
        let (gw1, rest) = grad.split_at_mut(l.b1);
        let (gb1, rest) = rest.split_at_mut(HIDDEN);
        let (gw2, rest) = rest.split_at_mut(HIDDEN * HIDDEN);
        let (gb2, rest) = rest.split_at_mut(HIDDEN);
        let (gw3, gb3) = rest.split_at_mut(k * HIDDEN);

        // Head: gW3[k] = sum_i dout[i, k] h2[i]; dz2 = (dout W3) * relu'(z2) * mask2.
        gw3.fill(R::zero());
        gb3.fill(R::zero());
        for (i, (h, dz)) in
            self.h2[..b * HIDDEN].chunks_exact(HIDDEN).zip(self.dz2.chunks_exact_mut(HIDDEN)).enumerate()
        {
            let dout = &self.dout[k * i..k * (i + 1)];
            for ((gk, gbk), &dk) in gw3.chunks_exact_mut(HIDDEN).zip(gb3.iter_mut()).zip(dout) {
                *gbk += dk;
                for j in 0..HIDDEN {
                    gk[j] += dk * h[j];
                }
            }
            let mask = &self.m2[i * HIDDEN..(i + 1) * HIDDEN];
            for j in 0..HIDDEN {
                let mut g = dout[0] * w.w3[j];
                for (c, &dc) in dout.iter().enumerate().skip(1) {
                    g += dc * w.w3[c * HIDDEN + j];
                }
                // h2 is stored after the mask, so h2 > 0 means both the ReLU and the unit are on.
                let gate = if h[j] > R::zero() { if self.masked { mask[j] } else { one } } else { R::zero() };
                dz[j] = g * gate;
            }
        }

        // Layer 2: gW2 = h1^T dz2; dz1 = (dz2 W2^T) * relu'(z1) * mask1.
        let dz2 = mat(&self.dz2, b, HIDDEN)?;
        general_mat_mul(one, &mat(&self.h1, b, HIDDEN)?.t(), &dz2, R::zero(), &mut mat_mut(gw2, HIDDEN, HIDDEN)?);
        col_sums(&self.dz2[..b * HIDDEN], HIDDEN, gb2);
        let mut dz1 = mat_mut(&mut self.dz1, b, HIDDEN)?;
        general_mat_mul(one, &dz2, &mat(w.w2, HIDDEN, HIDDEN)?.t(), R::zero(), &mut dz1);
        for (i, (dz, h)) in
            self.dz1[..b * HIDDEN].chunks_exact_mut(HIDDEN).zip(self.h1.chunks_exact(HIDDEN)).enumerate()
        {
            let mask = &self.m1[i * HIDDEN..(i + 1) * HIDDEN];
            for j in 0..HIDDEN {
                let gate = if h[j] > R::zero() { if self.masked { mask[j] } else { one } } else { R::zero() };
                dz[j] *= gate;
            }
        }

        // Layer 1: gW1 = x^T dz1.
        let dz1 = mat(&self.dz1, b, HIDDEN)?;
        general_mat_mul(one, &mat(&self.x, b, l.d)?.t(), &dz1, R::zero(), &mut mat_mut(gw1, l.d, HIDDEN)?);
        col_sums(&self.dz1[..b * HIDDEN], HIDDEN, gb1);
        Ok(loss / b as f64)
    }

    /// Mean loss of the head (Gaussian NLL, cross-entropy) over all rows of (x, y) at
    /// parameters `p`, without dropout.
    pub fn mean_loss(&mut self, p: &[R], x: &[R], y: &[R]) -> Result<f64> {
        let n = y.len();
        let masked = std::mem::replace(&mut self.masked, false);
        let mut total = 0.0;
        let mut first = 0;
        let mut pass = || -> Result<()> {
            while first < n {
                let b = self.load_rows(x, first, n - first);
                self.forward(p, b)?;
                for (k, &yv) in y[first..first + b].iter().enumerate() {
                    total += self.layout.head.row_loss(self.outputs(k), yv)?;
                }
                first += b;
            }
            Ok(())
        };
        let done = pass();
        self.masked = masked;
        done.map(|()| total / n.max(1) as f64)
    }
}

/// `h = relu(x W + bias)`, then the dropout multipliers when given; `h` is row-major `b x 64`.
fn hidden_layer<R: Real>(
    x: ArrayView2<'_, R>,
    w: ArrayView2<'_, R>,
    bias: &[R],
    h: &mut [R],
    b: usize,
    mask: Option<&[R]>,
) -> Result<()> {
    for row in h[..b * HIDDEN].chunks_exact_mut(HIDDEN) {
        row.copy_from_slice(bias);
    }
    general_mat_mul(R::one(), &x, &w, R::one(), &mut mat_mut(h, b, HIDDEN)?);
    match mask {
        Some(mask) => {
            for (v, &m) in h[..b * HIDDEN].iter_mut().zip(mask) {
                *v = if *v > R::zero() { *v * m } else { R::zero() };
            }
        }
        None => {
            // (NaN maps to 0 here; a non-finite weight is caught by the epoch-end check.)
            for v in h[..b * HIDDEN].iter_mut() {
                *v = if *v > R::zero() { *v } else { R::zero() };
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use credence_testkit::gradients::central_difference_error;
    use rand::SeedableRng;
    use rand::rngs::ChaCha8Rng;

    fn problem(n: usize, d: usize, seed: u64) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let x: Vec<f64> = (0..n * d).map(|_| f64::normal(&mut rng)).collect();
        let y: Vec<f64> = (0..n).map(|_| 2.0 * f64::normal(&mut rng)).collect();
        let layout = Layout::new(d);
        let mut p = vec![0.0; layout.len];
        layout.init(&mut rng, &mut p);
        (x, y, p)
    }

    /// Central differences of the batch loss against the analytic gradient, for every
    /// parameter, with and without (fixed) dropout masks; f64 so h = 1e-6 is accurate.
    #[test]
    fn gradient_matches_finite_differences() {
        let (n, d) = (7, 3);
        for dropout in [0.0, 0.3] {
            let (x, y, mut p) = problem(n, d, 11);
            let idx: Vec<usize> = (0..n).collect();
            let mut net = Net::<f64>::new(d, n);
            let b = net.load(&x, &y, &idx);
            net.sample_masks(&mut ChaCha8Rng::seed_from_u64(3), dropout, b);
            let mut grad = vec![0.0; p.len()];
            let loss = net.loss_grad(&p, b, &mut grad).unwrap();
            assert!(loss.is_finite());
            let worst = central_difference_error(&mut p, &grad, 1e-6, |p, _| {
                net.loss_grad(p, b, &mut vec![0.0; p.len()]).unwrap()
            });
            assert!(worst < 1e-4, "dropout {dropout}: worst relative gradient error {worst}");
        }
    }

    /// The softmax head: cross-entropy gradients by central differences (with dropout), its
    /// mean loss equal to the batch loss, probabilities that are the softmax of the outputs,
    /// and a label outside the classes a typed error.
    #[test]
    fn softmax_head_gradient_probabilities_and_labels() {
        let (n, d, k) = (6, 3, 4);
        let head = Head::Softmax { classes: k };
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let x: Vec<f64> = (0..n * d).map(|_| f64::normal(&mut rng)).collect();
        let y: Vec<f64> = (0..n).map(|i| (i % k) as f64).collect();
        let layout = Layout::with_head(d, head);
        assert_eq!(layout.len, d * 64 + 64 + 64 * 64 + 64 + k * 64 + k);
        let mut p = vec![0.0; layout.len];
        layout.init(&mut rng, &mut p);
        let mut net = Net::<f64>::with_head(d, head, n);
        let idx: Vec<usize> = (0..n).collect();
        for dropout in [0.0, 0.25] {
            let b = net.load(&x, &y, &idx);
            net.sample_masks(&mut ChaCha8Rng::seed_from_u64(2), dropout, b);
            let mut grad = vec![0.0; p.len()];
            net.loss_grad(&p, b, &mut grad).unwrap();
            let worst = central_difference_error(&mut p, &grad, 1e-6, |p, _| {
                net.loss_grad(p, b, &mut vec![0.0; p.len()]).unwrap()
            });
            assert!(worst < 1e-4, "dropout {dropout}: worst relative gradient error {worst}");
        }
        net.unmask();
        let b = net.load(&x, &y, &idx);
        let batch = net.loss_grad(&p, b, &mut vec![0.0; p.len()]).unwrap();
        let mut small = Net::<f64>::with_head(d, head, 4); // chunks of 4 and 2
        assert!((small.mean_loss(&p, &x, &y).unwrap() - batch).abs() < 1e-12);
        let probs = small.class_probs(&p, &x, |_, _, _| {}).unwrap();
        let logits = small.outputs_at(&p, &x, |_, _, _| {}).unwrap();
        let mut expected = vec![0.0; k];
        softmax_into(&logits[2 * k..3 * k], &mut expected);
        assert_eq!(&probs[2 * k..3 * k], &expected[..]);
        let mut ce = 0.0;
        for i in 0..n {
            let row = &probs[i * k..(i + 1) * k];
            assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-12);
            ce -= row[y[i] as usize].ln() / n as f64;
        }
        assert!((ce - batch).abs() < 1e-12, "{ce} vs {batch}");
        let mut bad = y.clone();
        bad[3] = 4.0;
        let b = net.load(&x, &bad, &idx);
        let e = net.loss_grad(&p, b, &mut vec![0.0; p.len()]).unwrap_err().to_string();
        assert!(e.contains("class label = 4"), "{e}");
        assert!(small.mean_loss(&p, &x, &bad).is_err());
    }

    #[test]
    fn clamped_variance_has_zero_log_variance_gradient_and_matches_mean_loss() {
        let (x, y, mut p) = problem(5, 2, 4);
        let l = Layout::new(2);
        p[l.b3 + 1] = 50.0; // ln var far above ln 1e3 for every point
        let mut net = Net::<f64>::new(2, 3); // capacity below n: mean_loss must chunk
        let mut grad = vec![0.0; l.len];
        let b = net.load(&x, &y, &[0, 1, 2]);
        net.loss_grad(&p, b, &mut grad).unwrap();
        assert_eq!(grad[l.b3 + 1], 0.0);
        for i in 0..b {
            assert!((net.gaussian(i).1 - VAR_MAX.sqrt()).abs() < 1e-9);
        }
        // mean_loss over all rows equals the average of per-batch losses.
        let whole = net.mean_loss(&p, &x, &y).unwrap();
        let mut big = Net::<f64>::new(2, 5);
        let b = big.load(&x, &y, &[0, 1, 2, 3, 4]);
        let direct = big.loss_grad(&p, b, &mut grad).unwrap();
        assert!((whole - direct).abs() < 1e-12);
    }

    #[test]
    fn init_respects_pytorch_bounds_and_shapes_are_checked() {
        let l = Layout::new(8);
        assert_eq!(l.len, 8 * 64 + 64 + 64 * 64 + 64 + 2 * 64 + 2);
        let mut p = vec![0f32; l.len];
        l.init(&mut ChaCha8Rng::seed_from_u64(1), &mut p);
        assert!(p[..l.b1].iter().all(|v| v.abs() <= 1.0 / 8f32.sqrt()));
        assert!(p[l.w2..].iter().all(|v| v.abs() <= 0.125));
        let mut net = Net::<f32>::new(8, 4);
        assert!(net.forward(&p[1..], 1).is_err());
    }
}
