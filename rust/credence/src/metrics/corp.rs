//! CORP reliability (Dimitriadis, Gneiting & Jordan 2021): the reliability diagram without
//! bins. The conditional event probability is the isotonic (pool-adjacent-violators) fit of the
//! outcomes on the forecast probabilities, which is consistent, optimally binned and
//! reproducible where the binned diagram depends on its bins and is biased at small n. The
//! Brier score then splits exactly into miscalibration, discrimination and uncertainty
//! (S = MCB - DSC + UNC), and consistency bands show how far a calibrated forecast's fit strays
//! by chance.

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Resamples of the consistency bands by default, reliabilitydiag's `n.boot`.
pub const CORP_RESAMPLES: usize = 100;
/// Pointwise level of the consistency bands by default, reliabilitydiag's `region.level`.
pub const CORP_BAND_LEVEL: f64 = 0.9;

/// How the consistency bands are drawn.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CorpOptions {
    /// Resamples under the hypothesis of calibration; 0 draws no bands.
    pub resamples: usize,
    /// Pointwise probability of each band, in (0, 1).
    pub level: f64,
    /// Seed of the resamples' stream.
    pub seed: u64,
}

impl Default for CorpOptions {
    /// 100 resamples, 90% bands, seed 1.
    fn default() -> Self {
        Self { resamples: CORP_RESAMPLES, level: CORP_BAND_LEVEL, seed: 1 }
    }
}

/// The CORP fit at one distinct forecast value.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CorpPoint {
    /// The forecast probability.
    pub forecast: f64,
    /// Number of points with this forecast.
    pub count: usize,
    /// The conditional event probability: the isotonic fit at this forecast.
    pub observed: f64,
    /// Lower end of the consistency band (`None` without bands).
    pub band_lower: Option<f64>,
    /// Upper end of the consistency band.
    pub band_upper: Option<f64>,
}

/// The CORP reliability diagram with the Brier score's decomposition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Corp {
    /// One point per distinct forecast, by ascending forecast.
    pub points: Vec<CorpPoint>,
    /// Mean Brier score (x - y)^2 of the forecasts.
    pub brier: f64,
    /// Miscalibration: the Brier score minus that of the isotonic fit (>= 0).
    pub miscalibration: f64,
    /// Discrimination: the base rate's Brier score minus the fit's (>= 0).
    pub discrimination: f64,
    /// Uncertainty: the Brier score of the base rate, ybar (1 - ybar).
    pub uncertainty: f64,
    /// The bands' options.
    pub bands: CorpOptions,
}

/// Pool-adjacent-violators over blocks (sum of outcomes, count) in forecast order: the
/// non-decreasing fit minimising the squared error, one value per block.
fn pav(blocks: impl Iterator<Item = (f64, usize)>) -> Vec<f64> {
    // Merged runs: (sum, count, number of blocks pooled).
    let mut runs: Vec<(f64, usize, usize)> = Vec::new();
    for (sum, count) in blocks {
        let mut run = (sum, count, 1);
        while let Some(&(s, c, k)) = runs.last() {
            // Pool while the previous run's mean exceeds this one's (cross-multiplied).
            if s * run.1 as f64 > run.0 * c as f64 {
                run = (s + run.0, c + run.1, k + run.2);
                runs.pop();
            } else {
                break;
            }
        }
        runs.push(run);
    }
    runs.iter().flat_map(|&(s, c, k)| std::iter::repeat_n(s / c as f64, k)).collect()
}

/// The type-7 (linear) quantile of `v`, reordering it (two selections, no full sort).
fn quantile_unsorted(v: &mut [f64], q: f64) -> f64 {
    let h = (v.len() - 1) as f64 * q;
    let (lo, frac) = (h.floor() as usize, h - h.floor());
    let (_, &mut at, above) = v.select_nth_unstable_by(lo, f64::total_cmp);
    match above.iter().copied().min_by(f64::total_cmp) {
        Some(next) if frac > 0.0 => at + frac * (next - at),
        _ => at,
    }
}

/// CORP reliability of probability forecasts `forecast` in [0, 1] for the binary `outcome`.
/// Ties in the forecast are pooled before the fit (one point per distinct value), so the
/// result depends on the data's content only. The bands resample outcomes y* ~ Bernoulli(x)
/// (resample i from a ChaCha8 stream seeded from the seed and i), refit and take the
/// pointwise quantiles (type 7).
///
/// ```
/// use credence::metrics::{corp_reliability, CorpOptions};
/// // Forecasts 0.2, 0.4, 0.6, 0.8 with outcomes 0, 1, 0, 1: the middle pair violates
/// // monotonicity and is pooled to 1/2.
/// let no_bands = CorpOptions { resamples: 0, ..Default::default() };
/// let c = corp_reliability(&[0.2, 0.4, 0.6, 0.8], &[false, true, false, true], &no_bands).unwrap();
/// let fit: Vec<f64> = c.points.iter().map(|p| p.observed).collect();
/// assert_eq!(fit, [0.0, 0.5, 0.5, 1.0]);
/// assert!((c.brier - (c.miscalibration - c.discrimination + c.uncertainty)).abs() < 1e-15);
/// ```
pub fn corp_reliability(forecast: &[f64], outcome: &[bool], opts: &CorpOptions) -> Result<Corp> {
    let n = forecast.len();
    if outcome.len() != n {
        return Err(Error::shape("outcome", &[outcome.len()], format!("[{n}], the length of forecast")));
    }
    if n == 0 {
        return Err(Error::shape("forecast", &[0], "at least one forecast"));
    }
    if let Some(i) = forecast.iter().position(|x| !(0.0..=1.0).contains(x)) {
        return Err(Error::value("forecast", &[i], forecast[i], "a probability in [0, 1]"));
    }
    if opts.resamples > 0 && !(opts.level > 0.0 && opts.level < 1.0) {
        return Err(Error::argument("level", opts.level, "a probability in (0, 1)"));
    }
    crate::limits::at_most("resamples", opts.resamples as u64, crate::limits::MAX_REPLICATES)?;
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_unstable_by(|&a, &b| forecast[a].total_cmp(&forecast[b]).then(a.cmp(&b)));
    // Distinct forecasts with their count and number of events.
    let mut groups: Vec<(f64, usize, usize)> = Vec::new();
    for &i in &order {
        let y = usize::from(outcome[i]);
        match groups.last_mut() {
            Some(g) if g.0 == forecast[i] => {
                g.1 += 1;
                g.2 += y;
            }
            _ => groups.push((forecast[i], 1, y)),
        }
    }
    let fit = pav(groups.iter().map(|g| (g.2 as f64, g.1)));
    let nf = n as f64;
    let events: usize = groups.iter().map(|g| g.2).sum();
    let base = events as f64 / nf;
    // Brier score of a value per group, from the group sums: c x^2 - 2 x e + e for a group of
    // c points with e events.
    let score = |value: &dyn Fn(usize) -> f64| -> f64 {
        let terms: Vec<f64> = groups
            .iter()
            .enumerate()
            .map(|(j, g)| {
                let x = value(j);
                g.1 as f64 * x * x - 2.0 * x * g.2 as f64 + g.2 as f64
            })
            .collect();
        crate::special::det_sum(&terms) / nf
    };
    let brier = score(&|j| groups[j].0);
    let recalibrated = score(&|j| fit[j]);
    let uncertainty = base * (1.0 - base);
    let bands = (opts.resamples > 0).then(|| {
        let (r, g) = (opts.resamples, groups.len());
        // One seeded stream per resample, so the bands depend on the seed only, not on the
        // threads; resample-major rows of fits, written contiguously.
        let rows: Vec<Vec<f64>> = (0..r)
            .into_par_iter()
            .map(|i| {
                let mut rng = ChaCha8Rng::seed_from_u64(opts.seed ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
                pav(groups.iter().map(|&(x, c, _)| ((0..c).filter(|_| rng.random::<f64>() < x).count() as f64, c)))
            })
            .collect();
        let a = (1.0 - opts.level) / 2.0;
        // Quantiles per forecast over a block of forecasts at a time: the block's fits of every
        // resample gathered into a small buffer (a cache-sized transpose).
        const BLOCK: usize = 256;
        (0..g.div_ceil(BLOCK))
            .into_par_iter()
            .flat_map_iter(|b| {
                let (j0, j1) = (b * BLOCK, ((b + 1) * BLOCK).min(g));
                let mut buf = vec![0.0; (j1 - j0) * r];
                for (i, row) in rows.iter().enumerate() {
                    for (jj, &v) in row[j0..j1].iter().enumerate() {
                        buf[jj * r + i] = v;
                    }
                }
                buf.chunks_mut(r).map(|d| (quantile_unsorted(d, a), quantile_unsorted(d, 1.0 - a))).collect::<Vec<_>>()
            })
            .collect::<Vec<_>>()
    });
    let points = groups
        .iter()
        .enumerate()
        .map(|(j, &(forecast, count, _))| CorpPoint {
            forecast,
            count,
            observed: fit[j],
            band_lower: bands.as_ref().map(|b| b[j].0),
            band_upper: bands.as_ref().map(|b| b[j].1),
        })
        .collect();
    Ok(Corp {
        points,
        brier,
        miscalibration: (brier - recalibrated).max(0.0),
        discrimination: (uncertainty - recalibrated).max(0.0),
        uncertainty,
        bands: *opts,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_bands() -> CorpOptions {
        CorpOptions { resamples: 0, ..Default::default() }
    }

    /// The fit is non-decreasing, and no other non-decreasing fit has a smaller squared error:
    /// nudging any run of equal values up or down (keeping monotonicity) never helps.
    #[test]
    fn fit_is_the_least_squares_monotone_fit() {
        let x: Vec<f64> = (0..40).map(|i| ((i * 37) % 40) as f64 / 40.0).collect();
        let y: Vec<bool> = (0..40).map(|i| (i * 13 + i / 3) % 5 < 2).collect();
        let c = corp_reliability(&x, &y, &no_bands()).unwrap();
        let fit: Vec<f64> = c.points.iter().map(|p| p.observed).collect();
        assert!(fit.windows(2).all(|w| w[0] <= w[1]), "{fit:?}");
        let sse = |f: &[f64]| -> f64 {
            c.points
                .iter()
                .zip(f)
                .map(|(p, &v)| {
                    let events = x.iter().zip(&y).filter(|(xi, yi)| **xi == p.forecast && **yi).count() as f64;
                    p.count as f64 * v * v - 2.0 * v * events
                })
                .sum()
        };
        let best = sse(&fit);
        for i in 0..fit.len() {
            for d in [-1e-3, 1e-3] {
                let mut f = fit.clone();
                let v = f[i];
                f.iter_mut().filter(|w| **w == v).for_each(|w| *w += d);
                if f.windows(2).all(|w| w[0] <= w[1]) {
                    assert!(sse(&f) >= best - 1e-12, "moving the run at {i} by {d} helped");
                }
            }
        }
        assert!((c.brier - (c.miscalibration - c.discrimination + c.uncertainty)).abs() < 1e-12);
    }

    /// A calibrated forecast (outcomes drawn with its probabilities) lies inside its 90% bands
    /// at most points, a badly miscalibrated one does not; the bands hold the order of the rows.
    #[test]
    fn bands_cover_a_calibrated_forecast_and_not_a_miscalibrated_one() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let x: Vec<f64> = (0..2000).map(|_| rng.random::<f64>()).collect();
        let y: Vec<bool> = x.iter().map(|&p| rng.random::<f64>() < p).collect();
        let inside = |c: &Corp| {
            let n =
                c.points.iter().filter(|p| p.band_lower.unwrap() <= p.observed && p.observed <= p.band_upper.unwrap());
            n.count() as f64 / c.points.len() as f64
        };
        let calibrated = corp_reliability(&x, &y, &CorpOptions::default()).unwrap();
        assert!(inside(&calibrated) > 0.7, "{}", inside(&calibrated));
        let squeezed: Vec<f64> = x.iter().map(|p| 0.5 + (p - 0.5) * 0.3).collect();
        let under = corp_reliability(&squeezed, &y, &CorpOptions::default()).unwrap();
        assert!(under.miscalibration > 10.0 * calibrated.miscalibration);
        // The fit of an underconfident forecast leaves the bands drawn about it.
        assert!(inside(&under) < 0.5, "{}", inside(&under));
        let rev: Vec<usize> = (0..x.len()).rev().collect();
        let again = corp_reliability(
            &rev.iter().map(|&i| x[i]).collect::<Vec<_>>(),
            &rev.iter().map(|&i| y[i]).collect::<Vec<_>>(),
            &CorpOptions::default(),
        )
        .unwrap();
        assert_eq!(calibrated, again);
    }

    /// Type 7 as numpy's default `quantile` and R's `quantile(type = 7)`.
    #[test]
    fn quantile_is_type_seven() {
        let mut v = [3.0, 1.0, 4.0, 1.5, 9.0, 2.0];
        // Sorted 1, 1.5, 2, 3, 4, 9: h = 5 q.
        assert_eq!(quantile_unsorted(&mut v, 0.05), 1.0 + 0.25 * 0.5);
        assert_eq!(quantile_unsorted(&mut v, 0.5), 2.5);
        assert_eq!(quantile_unsorted(&mut v, 0.95), 4.0 + 0.75 * 5.0);
        assert_eq!(quantile_unsorted(&mut v, 1.0), 9.0);
        assert_eq!(quantile_unsorted(&mut [7.0], 0.3), 7.0);
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(corp_reliability(&[], &[], &no_bands()).is_err());
        assert!(corp_reliability(&[0.5], &[true, false], &no_bands()).is_err());
        assert!(corp_reliability(&[1.5], &[true], &no_bands()).is_err());
        assert!(corp_reliability(&[f64::NAN], &[true], &no_bands()).is_err());
        let bad_level = CorpOptions { level: 1.0, ..Default::default() };
        assert!(corp_reliability(&[0.5], &[true], &bad_level).is_err());
    }
}
