//! The warmup's adaptation pieces: the trajectory-length jitter, Stan's metric windows, dual
//! averaging of the step size and the metric window's Welford moments.

/// The base-2 Halton (van der Corput) number of t >= 1, in (0, 1).
pub(super) fn halton(mut t: u64) -> f64 {
    let (mut h, mut f) = (0.0, 0.5);
    while t > 0 {
        h += f * (t & 1) as f64;
        t >>= 1;
        f *= 0.5;
    }
    h
}

/// The metric adaptation windows (Stan's schedule) as (first, one past last) iterations.
pub(super) fn metric_windows(warmup: usize) -> Vec<(usize, usize)> {
    if warmup < 20 {
        return Vec::new();
    }
    // Stan's buffers, except that the last one is at least a quarter of the warmup: T restarts
    // after each metric update and needs room to climb (at most about 0.025 per iteration in
    // log T) and settle.
    let (mut init, mut term, mut base) = (75, 50.max(warmup / 4), 25);
    if init + term + base > warmup {
        init = warmup * 15 / 100;
        term = warmup / 10;
        base = warmup - init - term;
    }
    let last = warmup - term;
    let mut windows = Vec::new();
    let (mut start, mut size) = (init, base);
    while start < last {
        let mut end = start + size;
        if end + 2 * size > last {
            end = last;
        }
        windows.push((start, end));
        start = end;
        size *= 2;
    }
    windows
}

/// Dual averaging of the log step size (Nesterov 2009; Hoffman & Gelman 2014).
pub(super) struct DualAveraging {
    mu: f64,
    h_bar: f64,
    x_bar: f64,
    t: f64,
    target: f64,
}

impl DualAveraging {
    pub(super) fn new(eps: f64, target: f64) -> Self {
        Self { mu: (10.0 * eps).ln(), h_bar: 0.0, x_bar: 0.0, t: 0.0, target }
    }
    /// Updates with a mean acceptance; returns the next step size.
    pub(super) fn update(&mut self, accept: f64) -> f64 {
        const GAMMA: f64 = 0.05;
        const T0: f64 = 10.0;
        const KAPPA: f64 = 0.75;
        self.t += 1.0;
        let w = 1.0 / (self.t + T0);
        self.h_bar = (1.0 - w) * self.h_bar + w * (self.target - accept);
        let x = self.mu - self.t.sqrt() / GAMMA * self.h_bar;
        let eta = self.t.powf(-KAPPA);
        self.x_bar = eta * x + (1.0 - eta) * self.x_bar;
        x.exp()
    }
    pub(super) fn averaged(&self) -> f64 {
        self.x_bar.exp()
    }
}

/// A metric adaptation window: Welford's running mean and M2 per coordinate of every chain's
/// state, pooled over the window's iterations (on a device, `chees_reduce` makes the same
/// updates in the same order).
pub(crate) struct MetricWindow {
    /// States pooled so far.
    pub(crate) count: f64,
    mean: Vec<f64>,
    /// Sum of squared deviations from the running mean, per coordinate.
    pub(crate) m2: Vec<f64>,
}

impl MetricWindow {
    /// An empty window over `dim` coordinates.
    pub(crate) fn new(dim: usize) -> Self {
        Self { count: 0.0, mean: vec![0.0; dim], m2: vec![0.0; dim] }
    }

    /// Pools the chains' states (chain-major, `dim` each), chain after chain.
    pub(crate) fn add(&mut self, pos: &[f64]) {
        let d = self.mean.len();
        for state in pos.chunks_exact(d) {
            self.count += 1.0;
            for ((&x, mean), m2) in state.iter().zip(self.mean.iter_mut()).zip(self.m2.iter_mut()) {
                let delta = x - *mean;
                *mean += delta / self.count;
                *m2 += delta * (x - *mean);
            }
        }
    }

    /// Counts `chains` states whose mean and M2 a device pooled.
    pub(super) fn count_chains(&mut self, chains: usize) {
        for _ in 0..chains {
            self.count += 1.0;
        }
    }

    /// Empties the window.
    pub(super) fn reset(&mut self) {
        self.count = 0.0;
        self.mean.fill(0.0);
        self.m2.fill(0.0);
    }
}
