//! Regression predictive distributions, one per test point.

use ndarray::{Array2, ArrayView1, ArrayViewMut1};
use rayon::prelude::*;

use super::scores::crps::{self, CrpsEstimator};
use super::scores::interval::{mixture_quantile_unchecked, sample_quantile};
use super::scores::nll;
use super::validate;
use crate::error::{Error, Result};
use crate::special::{from_order_key, norm_quantile, order_key, prefaulted_zeros};

/// What every regression prediction can answer; the metric functions in [`crate::metrics`] are
/// written once against this trait. The whole-array methods let each distribution use its own
/// vectorised kernel; outcomes `y` have one entry per point and are checked by the callers.
pub trait RegressionPredictive: Sync {
    /// Number of test points N.
    fn n_points(&self) -> usize;
    /// Predictive mean (point prediction) at point `i`.
    fn point_mean(&self, i: usize) -> f64;
    /// CRPS of every point for outcomes `y`; `None` where the prediction does not define a
    /// distribution (bare intervals).
    fn crps_all(&self, y: &[f64], estimator: CrpsEstimator) -> Option<Vec<f64>>;
    /// Negative log density of every point, each standard deviation floored at `sd_floor`
    /// (0 for none); `None` where no density exists (samples, bare intervals).
    fn nll_all(&self, y: &[f64], sd_floor: f64) -> Option<Vec<f64>>;
    /// Central interval `(lower, upper)` with probability `level` (e.g. 0.9) at point `i`.
    fn central_interval(&self, i: usize, level: f64) -> (f64, f64);
    /// The one level this prediction can give intervals for, if it is fixed (bare intervals).
    fn fixed_level(&self) -> Option<f64> {
        None
    }
    /// The probability integral transform of every point, F_i(y\[i\]) under the predictive
    /// CDF (samples: the share of draws <= y); `None` where no CDF exists (bare intervals).
    fn pit_all(&self, _y: &[f64]) -> Option<Vec<f64>> {
        None
    }
    /// The predictive sd of every point (a mixture's of its moments; samples' population sd);
    /// `None` where none exists (bare intervals).
    fn sd_all(&self) -> Option<Vec<f64>> {
        None
    }
    /// For each central probability p in `levels`, the outcomes t of point `i` whose PIT lies
    /// in the central p interval, |F_i(t) - 1/2| <= p / 2, as a closed interval (lower, upper)
    /// up to its end points (std-scaling's exact search); `None` where not available in closed
    /// form (mixtures, bare intervals).
    fn pit_regions(&self, _i: usize, _levels: &[f64]) -> Option<Vec<(f64, f64)>> {
        None
    }
}

/// A Gaussian predictive distribution N(mean, sd^2) per point: heteroscedastic networks, a
/// moment-matched ensemble, or the Gaussian implied by an interval.
#[derive(Debug, Clone, PartialEq)]
pub struct Gaussian {
    mean: Vec<f64>,
    sd: Vec<f64>,
}

impl Gaussian {
    /// Builds from per-point means and standard deviations; every sd must be finite and > 0.
    ///
    /// ```
    /// let g = credence::Gaussian::new(vec![0.0, 1.0], vec![1.0, 0.5]).unwrap();
    /// assert_eq!(g.mean(), &[0.0, 1.0]);
    /// assert!(credence::Gaussian::new(vec![0.0], vec![0.0]).is_err());
    /// ```
    pub fn new(mean: Vec<f64>, sd: Vec<f64>) -> Result<Self> {
        validate::non_empty("mean", &[mean.len()])?;
        validate::same_len("sd", sd.len(), "mean", mean.len())?;
        validate::finite("mean", &ArrayView1::from(&mean))?;
        validate::positive("sd", &ArrayView1::from(&sd))?;
        Ok(Self { mean, sd })
    }

    /// Per-point means.
    pub fn mean(&self) -> &[f64] {
        &self.mean
    }

    /// Per-point standard deviations.
    pub fn sd(&self) -> &[f64] {
        &self.sd
    }
}

impl Gaussian {
    /// The same forecast with every sd times `s` (std-scaling recalibration); `s` must be
    /// finite and > 0.
    pub fn scaled_about_mean(&self, s: f64) -> Result<Self> {
        positive_scale(s)?;
        Self::new(self.mean.clone(), self.sd.iter().map(|v| v * s).collect())
    }
}

impl RegressionPredictive for Gaussian {
    fn n_points(&self) -> usize {
        self.mean.len()
    }
    fn point_mean(&self, i: usize) -> f64 {
        self.mean[i]
    }
    fn crps_all(&self, y: &[f64], _: CrpsEstimator) -> Option<Vec<f64>> {
        Some(crps::gaussian_crps_all(&self.mean, &self.sd, y))
    }
    fn nll_all(&self, y: &[f64], sd_floor: f64) -> Option<Vec<f64>> {
        Some(nll::gaussian_nll_all(&self.mean, &self.sd, y, sd_floor))
    }
    fn central_interval(&self, i: usize, level: f64) -> (f64, f64) {
        let half = norm_quantile(0.5 + 0.5 * level) * self.sd[i];
        (self.mean[i] - half, self.mean[i] + half)
    }
    fn pit_all(&self, y: &[f64]) -> Option<Vec<f64>> {
        Some(y.iter().zip(&self.mean).zip(&self.sd).map(|((y, m), s)| crate::special::norm_cdf((y - m) / s)).collect())
    }
    fn sd_all(&self) -> Option<Vec<f64>> {
        Some(self.sd.clone())
    }
    fn pit_regions(&self, i: usize, levels: &[f64]) -> Option<Vec<(f64, f64)>> {
        let (m, s) = (self.mean[i], self.sd[i]);
        let bound = |p: f64| if p >= 1.0 { f64::INFINITY } else { s * norm_quantile(0.5 + p / 2.0) };
        Some(levels.iter().map(|&p| (m - bound(p), m + bound(p))).collect())
    }
}

/// A mixture of M Gaussians per point with member weights shared by all points: deep
/// ensembles, and MC dropout / SWAG / Bayes-by-backprop draws of a Gaussian head.
#[derive(Debug, Clone, PartialEq)]
pub struct GaussianMixture {
    // Member-major (M x N), as given: the vectorised kernels run over points for one member
    // (pair) at a time, which reads each member row contiguously.
    means: Array2<f64>,
    sds: Array2<f64>,
    weights: Vec<f64>,
}

impl GaussianMixture {
    /// Builds from member means and sds of shape M x N (member-major, as ensembles are usually
    /// stored) and optional weights of length M (default 1/M). Weights must be >= 0 and sum to 1
    /// within 1e-6.
    ///
    /// ```
    /// use ndarray::array;
    /// let means = array![[0.0, 1.0], [0.5, 2.0]]; // 2 members x 2 points
    /// let sds = array![[1.0, 1.0], [1.0, 0.5]];
    /// let mix = credence::GaussianMixture::new(means, sds, None).unwrap();
    /// assert_eq!(mix.n_members(), 2);
    /// ```
    pub fn new(means: Array2<f64>, sds: Array2<f64>, weights: Option<Vec<f64>>) -> Result<Self> {
        let (m, n) = means.dim();
        validate::non_empty("means", means.shape())?;
        if sds.dim() != (m, n) {
            return Err(Error::shape("sds", sds.shape(), format!("{:?}, the shape of means", [m, n])));
        }
        validate::finite("means", &means)?;
        validate::positive("sds", &sds)?;
        let weights = match weights {
            None => vec![1.0 / m as f64; m],
            Some(w) => {
                validate::same_len("weights", w.len(), "the member axis of means", m)?;
                if let Some(i) = w.iter().position(|v| !(v.is_finite() && *v >= 0.0)) {
                    return Err(Error::value("weights", &[i], w[i], "a finite number >= 0"));
                }
                let total: f64 = w.iter().sum();
                if (total - 1.0).abs() > 1e-6 {
                    return Err(Error::argument("sum(weights)", total, "1 within 1e-6"));
                }
                w
            }
        };
        Ok(Self { means: means.as_standard_layout().into_owned(), sds: sds.as_standard_layout().into_owned(), weights })
    }

    /// Number of mixture members M.
    pub fn n_members(&self) -> usize {
        self.weights.len()
    }

    /// Member weights (length M, summing to 1).
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }

    /// Member means at point `i`.
    pub fn point_means(&self, i: usize) -> ArrayView1<'_, f64> {
        self.means.column(i)
    }

    /// Member sds at point `i`.
    pub fn point_sds(&self, i: usize) -> ArrayView1<'_, f64> {
        self.sds.column(i)
    }

    /// The member-major M x N means and sds as flat slices (for the GPU kernels).
    pub(crate) fn member_major(&self) -> (&[f64], &[f64]) {
        (self.means.as_slice().unwrap_or(&[]), self.sds.as_slice().unwrap_or(&[]))
    }

    fn view(&self) -> crps::MixtureView<'_> {
        crps::MixtureView {
            weights: &self.weights,
            means: self.means.as_slice().unwrap_or(&[]),
            sds: self.sds.as_slice().unwrap_or(&[]),
            n: self.means.ncols(),
        }
    }

    /// Moment-matched Gaussian (mixture mean and total variance), e.g. to compare an ensemble
    /// with its Gaussian approximation.
    pub fn moment_matched(&self) -> Gaussian {
        let (mean, sd) = (0..self.n_points())
            .map(|i| {
                let (m, s) = (self.means.column(i), self.sds.column(i));
                let mu: f64 = self.weights.iter().zip(m).map(|(w, m)| w * m).sum();
                let second: f64 = self.weights.iter().zip(m.iter().zip(s)).map(|(w, (m, s))| w * (s * s + m * m)).sum();
                (mu, (second - mu * mu).max(0.0).sqrt())
            })
            .unzip();
        Gaussian { mean, sd }
    }
}

/// A recalibration scale: finite and > 0.
fn positive_scale(s: f64) -> Result<()> {
    if s.is_finite() && s > 0.0 { Ok(()) } else { Err(Error::argument("scale", s, "a finite number > 0")) }
}

/// Each point's values x (lane i: its members' means or its draws) mapped to
/// mu_i + s (x - mu_i), `s` finite and > 0.
fn scale_about_means<'a>(
    lanes: impl IntoIterator<Item = ArrayViewMut1<'a, f64>>,
    mean: impl Fn(usize) -> f64,
    s: f64,
) -> Result<()> {
    positive_scale(s)?;
    for (i, mut lane) in lanes.into_iter().enumerate() {
        let mu = mean(i);
        lane.mapv_inplace(|x| mu + s * (x - mu));
    }
    Ok(())
}

impl GaussianMixture {
    /// The mixture scaled by `s` about its mean mu at each point (the law of mu + s (Y - mu)):
    /// member means mu + s (m - mu), member sds s sd. `s` must be finite and > 0.
    pub fn scaled_about_mean(&self, s: f64) -> Result<Self> {
        let mut means = self.means.clone();
        scale_about_means(means.columns_mut(), |i| self.point_mean(i), s)?;
        Self::new(means, self.sds.mapv(|v| v * s), Some(self.weights.clone()))
    }
}

impl RegressionPredictive for GaussianMixture {
    fn n_points(&self) -> usize {
        self.means.ncols()
    }
    fn point_mean(&self, i: usize) -> f64 {
        self.weights.iter().zip(self.means.column(i)).map(|(w, m)| w * m).sum()
    }
    fn crps_all(&self, y: &[f64], _: CrpsEstimator) -> Option<Vec<f64>> {
        Some(crps::mixture_crps_all(&self.view(), y))
    }
    fn nll_all(&self, y: &[f64], sd_floor: f64) -> Option<Vec<f64>> {
        Some(nll::mixture_nll_all(&self.view(), y, sd_floor))
    }
    fn central_interval(&self, i: usize, level: f64) -> (f64, f64) {
        let m: Vec<f64> = self.means.column(i).to_vec();
        let s: Vec<f64> = self.sds.column(i).to_vec();
        let tail = 0.5 * (1.0 - level);
        (
            mixture_quantile_unchecked(&self.weights, &m, &s, tail),
            mixture_quantile_unchecked(&self.weights, &m, &s, 1.0 - tail),
        )
    }
    fn pit_all(&self, y: &[f64]) -> Option<Vec<f64>> {
        let pit = |(i, y): (usize, &f64)| {
            let (m, s) = (self.means.column(i), self.sds.column(i));
            self.weights.iter().zip(m.iter().zip(s)).map(|(w, (m, s))| w * crate::special::norm_cdf((y - m) / s)).sum()
        };
        Some(y.par_iter().enumerate().map(pit).collect())
    }
    fn sd_all(&self) -> Option<Vec<f64>> {
        Some(self.moment_matched().sd)
    }
}

/// S predictive draws per point (MC samples without a likelihood head, quantile regressors'
/// samples, ...). Stored sorted per point, which the O(S log S) CRPS and quantiles need.
#[derive(Debug, Clone, PartialEq)]
pub struct Samples {
    sorted: Array2<f64>, // N x S, each row ascending
}

impl Samples {
    /// Builds from draws of shape S x N; every draw must be finite.
    ///
    /// ```
    /// use ndarray::array;
    /// let s = credence::Samples::new(array![[0.0, 1.0], [2.0, 3.0], [1.0, 2.0]]).unwrap();
    /// assert_eq!((s.n_draws(), credence::RegressionPredictive::n_points(&s)), (3, 2));
    /// ```
    pub fn new(draws: Array2<f64>) -> Result<Self> {
        let (s, n) = draws.dim();
        validate::non_empty("samples", draws.shape())?;
        validate::finite("samples", &draws)?;
        let draws = draws.as_standard_layout();
        let flat = draws.as_slice().unwrap_or(&[]);
        // Transpose in blocks of points (each read is a contiguous run of one draw row), then
        // sort each point's draws while the block is still in cache.
        const POINTS: usize = 64;
        let mut sorted = prefaulted_zeros(s * n);
        sorted.par_chunks_mut(POINTS * s).enumerate().for_each_init(Vec::new, |keys, (b, out)| {
            let (first, count) = (b * POINTS, out.len() / s);
            keys.resize(out.len(), 0u64);
            for (k, row) in flat.chunks_exact(n).enumerate() {
                for (j, &v) in row[first..first + count].iter().enumerate() {
                    keys[j * s + k] = order_key(v);
                }
            }
            // Integer keys sort ~3x faster than floats compared with total_cmp.
            keys.chunks_exact_mut(s).for_each(|point| point.sort_unstable());
            for (o, &key) in out.iter_mut().zip(keys.iter()) {
                *o = from_order_key(key);
            }
        });
        let sorted =
            Array2::from_shape_vec((n, s), sorted).map_err(|e| Error::shape("samples", &[s, n], e.to_string()))?;
        Ok(Self { sorted })
    }

    /// Number of draws S per point.
    pub fn n_draws(&self) -> usize {
        self.sorted.ncols()
    }

    /// The draws of point `i`, ascending.
    pub fn sorted_draws(&self, i: usize) -> &[f64] {
        self.sorted.row(i).to_slice().unwrap_or(&[])
    }
}

impl Samples {
    /// The draws scaled by `s` about their mean at each point, mu + s (x - mu) (std-scaling
    /// recalibration); `s` must be finite and > 0.
    pub fn scaled_about_mean(&self, s: f64) -> Result<Self> {
        let mut sorted = self.sorted.clone();
        // An increasing map keeps every row ascending.
        scale_about_means(sorted.rows_mut(), |i| self.point_mean(i), s)?;
        Ok(Self { sorted })
    }
}

impl RegressionPredictive for Samples {
    fn n_points(&self) -> usize {
        self.sorted.nrows()
    }
    fn point_mean(&self, i: usize) -> f64 {
        let d = self.sorted_draws(i);
        d.iter().sum::<f64>() / d.len() as f64
    }
    fn crps_all(&self, y: &[f64], estimator: CrpsEstimator) -> Option<Vec<f64>> {
        Some(
            (0..self.n_points())
                .into_par_iter()
                .map(|i| crps::crps_sorted_samples(self.sorted_draws(i), y[i], estimator))
                .collect(),
        )
    }
    fn nll_all(&self, _: &[f64], _: f64) -> Option<Vec<f64>> {
        None
    }
    fn central_interval(&self, i: usize, level: f64) -> (f64, f64) {
        let d = self.sorted_draws(i);
        let tail = 0.5 * (1.0 - level);
        (sample_quantile(d, tail), sample_quantile(d, 1.0 - tail))
    }
    fn pit_all(&self, y: &[f64]) -> Option<Vec<f64>> {
        let share = |(i, y): (usize, &f64)| {
            let d = self.sorted_draws(i);
            d.partition_point(|x| x <= y) as f64 / d.len() as f64
        };
        Some(y.par_iter().enumerate().map(share).collect())
    }
    fn sd_all(&self) -> Option<Vec<f64>> {
        let sd = |i: usize| {
            let d = self.sorted_draws(i);
            let mean = d.iter().sum::<f64>() / d.len() as f64;
            (d.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / d.len() as f64).sqrt()
        };
        Some((0..self.n_points()).into_par_iter().map(sd).collect())
    }
    fn pit_regions(&self, i: usize, levels: &[f64]) -> Option<Vec<(f64, f64)>> {
        // The PIT is k / S with k = #(draws <= t): the accepted k form a run [lo, hi], and
        // k >= lo from the lo-th smallest draw on, k <= hi below the (hi + 1)-th.
        let d = self.sorted_draws(i);
        let s = d.len();
        let region = |p: f64| {
            let inside = |k: usize| (k as f64 / s as f64 - 0.5).abs() <= p / 2.0;
            let Some(lo) = (0..=s).find(|&k| inside(k)) else { return (f64::INFINITY, f64::NEG_INFINITY) };
            let hi = (lo..=s).take_while(|&k| inside(k)).last().unwrap_or(lo);
            let lower = if lo == 0 { f64::NEG_INFINITY } else { d[lo - 1] };
            let upper = if hi == s { f64::INFINITY } else { d[hi] };
            (lower, upper)
        };
        Some(levels.iter().map(|&p| region(p)).collect())
    }
}

/// Central prediction intervals at one fixed level, as produced by conformal prediction.
/// They define coverage, width and interval score but no CRPS or likelihood; use
/// [`Intervals::to_gaussian`] for the Gaussian whose central interval matches.
#[derive(Debug, Clone, PartialEq)]
pub struct Intervals {
    lower: Vec<f64>,
    upper: Vec<f64>,
    level: f64,
}

impl Intervals {
    /// Builds from per-point bounds (finite, lower <= upper) at probability `level` in (0, 1).
    pub fn new(lower: Vec<f64>, upper: Vec<f64>, level: f64) -> Result<Self> {
        if !(level > 0.0 && level < 1.0) {
            return Err(Error::argument("level", level, "a probability in (0, 1)"));
        }
        validate::non_empty("lower", &[lower.len()])?;
        validate::same_len("upper", upper.len(), "lower", lower.len())?;
        validate::finite("lower", &ArrayView1::from(&lower))?;
        validate::finite("upper", &ArrayView1::from(&upper))?;
        if let Some(i) = lower.iter().zip(&upper).position(|(l, u)| u < l) {
            return Err(Error::value("upper", &[i], upper[i], format!("a bound >= lower[{i}] = {}", lower[i])));
        }
        Ok(Self { lower, upper, level })
    }

    /// Lower bounds.
    pub fn lower(&self) -> &[f64] {
        &self.lower
    }
    /// Upper bounds.
    pub fn upper(&self) -> &[f64] {
        &self.upper
    }
    /// The central probability of the intervals.
    pub fn level(&self) -> f64 {
        self.level
    }

    /// The Gaussian per point whose central `level` interval is this one: mean at the midpoint,
    /// sd = width / (2 z), z = Phi^-1((1 + level) / 2). Zero-width intervals are an error
    /// (the Gaussian would be degenerate).
    pub fn to_gaussian(&self) -> Result<Gaussian> {
        let z = norm_quantile(0.5 + 0.5 * self.level);
        let mean = self.lower.iter().zip(&self.upper).map(|(l, u)| 0.5 * (l + u)).collect();
        let sd: Vec<f64> = self.lower.iter().zip(&self.upper).map(|(l, u)| (u - l) / (2.0 * z)).collect();
        validate::positive("interval half-width", &ArrayView1::from(&sd))?;
        Gaussian::new(mean, sd)
    }
}

impl RegressionPredictive for Intervals {
    fn n_points(&self) -> usize {
        self.lower.len()
    }
    /// The midpoint of the interval.
    fn point_mean(&self, i: usize) -> f64 {
        0.5 * (self.lower[i] + self.upper[i])
    }
    fn crps_all(&self, _: &[f64], _: CrpsEstimator) -> Option<Vec<f64>> {
        None
    }
    fn nll_all(&self, _: &[f64], _: f64) -> Option<Vec<f64>> {
        None
    }
    fn central_interval(&self, i: usize, _: f64) -> (f64, f64) {
        (self.lower[i], self.upper[i])
    }
    fn fixed_level(&self) -> Option<f64> {
        Some(self.level)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn constructors_reject_bad_values_with_index() {
        let e =
            GaussianMixture::new(array![[0.0, 1.0], [0.0, 1.0]], array![[1.0, 1.0], [1.0, -2.0]], None).unwrap_err();
        assert_eq!(e.to_string(), "sds[1, 1] = -2: expected a finite number > 0");
        let e = GaussianMixture::new(array![[0.0, 1.0]], array![[1.0, 1.0, 1.0]], None).unwrap_err();
        assert!(e.to_string().starts_with("sds: shape [1, 3]"), "{e}");
        assert!(GaussianMixture::new(array![[0.0], [1.0]], array![[1.0], [1.0]], Some(vec![0.7, 0.7])).is_err());
        let e = Samples::new(array![[0.0, f64::INFINITY]]).unwrap_err();
        assert_eq!(e.to_string(), "samples[0, 1] = inf: expected a finite number");
        let e = Intervals::new(vec![0.0, 1.0], vec![1.0, 0.5], 0.9).unwrap_err();
        assert!(e.to_string().starts_with("upper[1] = 0.5"), "{e}");
        assert!(Intervals::new(vec![0.0], vec![1.0], 1.0).is_err());
        assert!(Gaussian::new(vec![], vec![]).is_err());
    }

    #[test]
    fn mixture_of_identical_members_is_the_gaussian() {
        let g = Gaussian::new(vec![0.3, -2.0], vec![0.7, 2.5]).unwrap();
        let mix = GaussianMixture::new(
            array![[0.3, -2.0], [0.3, -2.0], [0.3, -2.0]],
            array![[0.7, 2.5], [0.7, 2.5], [0.7, 2.5]],
            None,
        )
        .unwrap();
        let y = [0.9, 0.9];
        let (gc, mc) =
            (g.crps_all(&y, CrpsEstimator::Standard).unwrap(), mix.crps_all(&y, CrpsEstimator::Standard).unwrap());
        let (gn, mn) = (g.nll_all(&y, 0.0).unwrap(), mix.nll_all(&y, 0.0).unwrap());
        for i in 0..2 {
            assert!((gc[i] - mc[i]).abs() < 1e-14, "crps {} vs {}", gc[i], mc[i]);
            assert!((gn[i] - mn[i]).abs() < 1e-13);
            let (gl, gu) = g.central_interval(i, 0.9);
            let (ml, mu) = mix.central_interval(i, 0.9);
            assert!((gl - ml).abs() < 1e-12 && (gu - mu).abs() < 1e-12);
        }
        let mm = mix.moment_matched();
        assert!((mm.sd()[1] - 2.5).abs() < 1e-12);
    }

    #[test]
    fn order_keys_sort_like_floats() {
        let mut x = vec![3.5, -0.0, 0.0, -2.0, 1e-300, -1e300, 7.0, -7.0, f64::MIN_POSITIVE];
        let mut keys: Vec<u64> = x.iter().map(|&v| order_key(v)).collect();
        keys.sort_unstable();
        let back: Vec<f64> = keys.iter().map(|&k| from_order_key(k)).collect();
        x.sort_by(f64::total_cmp);
        assert_eq!(
            back.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            x.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
        );
    }

    #[test]
    fn samples_are_sorted_per_point_across_blocks() {
        let (s, n) = (13, 150);
        let draws = Array2::from_shape_fn((s, n), |(k, p)| ((k * 7919 + p * 104_729) % 1000) as f64 - 500.0);
        let samples = Samples::new(draws.clone()).unwrap();
        for p in [0, 63, 64, 149] {
            let mut want = draws.column(p).to_vec();
            want.sort_by(f64::total_cmp);
            assert_eq!(samples.sorted_draws(p), want.as_slice());
        }
    }

    #[test]
    fn interval_to_gaussian_round_trips() {
        let g = Gaussian::new(vec![1.0, -3.0], vec![0.2, 4.0]).unwrap();
        let (lower, upper) = (0..2).map(|i| g.central_interval(i, 0.8)).unzip();
        let back = Intervals::new(lower, upper, 0.8).unwrap().to_gaussian().unwrap();
        for i in 0..2 {
            assert!((back.mean()[i] - g.mean()[i]).abs() < 1e-12);
            assert!((back.sd()[i] - g.sd()[i]).abs() < 1e-12);
        }
        assert!(Intervals::new(vec![1.0], vec![1.0], 0.9).unwrap().to_gaussian().is_err());
    }
}
