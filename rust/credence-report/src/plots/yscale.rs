//! The y scale of a figure of means +- sd, chosen per figure so that a few outlying values (a
//! method whose runs failed at one size: 3.9 +- 3.5 against about 0.2 for the rest) do not
//! squash every other error bar into a flat line.
//!
//! Outlying points are those far from the bulk: more than [`FAR`] robust scales from the
//! median of the means, the scale being the larger of the means' MAD and the typical error bar
//! (so methods that differ by a few error bars are never outliers), on log10 of the means when
//! all are positive. They are set apart only when they would stretch the axis [`SQUASH`] times
//! beyond the bulk's error bars; then a few of them (at most a fifth of the points) are drawn
//! at the edge of a range fitted to the bulk, and more of them get a log axis (all means
//! positive). Means that span a decade or more get a log axis too.

/// Robust scales from the median beyond which a mean may be off the scale.
pub const FAR: f64 = 5.0;

/// How many times the outliers must stretch the axis beyond the bulk's bars to be set apart.
pub const SQUASH: f64 = 8.0;

/// How a figure's y axis shows its points.
#[derive(Debug, Clone, PartialEq)]
pub enum YScale {
    /// A linear axis over every point.
    Linear,
    /// A log axis over every point: the means are positive and span a decade or more, or many
    /// of them are far from the rest.
    Log,
    /// A linear axis over the bulk: `range` spans the error bars of every point but the
    /// `outliers` (indices into the points), which are drawn at its edge.
    Bulk {
        /// The axis range.
        range: [f64; 2],
        /// The points off the scale.
        outliers: Vec<usize>,
    },
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// The extent (low, high) of the error bars of some points.
fn hull(points: &[(f64, f64)], set: &[usize]) -> (f64, f64) {
    set.iter().map(|&i| bar(points[i])).fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), (l, h)| (a.min(l), b.max(h)))
}

/// mean -/+ sd (a missing sd draws no bar).
fn bar((mean, sd): (f64, f64)) -> (f64, f64) {
    let sd = if sd.is_finite() { sd.abs() } else { 0.0 };
    (mean - sd, mean + sd)
}

/// The y scale of points (mean, sd); points with a non-finite mean are ignored.
pub fn choose(points: &[(f64, f64)]) -> YScale {
    let idx: Vec<usize> = (0..points.len()).filter(|&i| points[i].0.is_finite()).collect();
    if idx.len() < 3 {
        return YScale::Linear;
    }
    let positive = idx.iter().all(|&i| points[i].0 > 0.0);
    let at = |x: f64| if positive { x.log10() } else { x };
    let z: Vec<f64> = idx.iter().map(|&i| at(points[i].0)).collect();
    let centre = median(&mut z.clone());
    let mad = 1.4826 * median(&mut z.iter().map(|v| (v - centre).abs()).collect::<Vec<_>>());
    // The typical error bar in the same units: the upper half of a bar on a log axis.
    let typical_bar = median(
        &mut idx.iter().map(|&i| at(bar(points[i]).1) - at(points[i].0)).filter(|h| h.is_finite()).collect::<Vec<_>>(),
    );
    let scale = mad.max(if typical_bar.is_nan() { 0.0 } else { typical_bar }).max(1e-12 * centre.abs().max(1.0));
    let far: Vec<usize> =
        idx.iter().zip(&z).filter(|&(_, v)| (v - centre).abs() > FAR * scale).map(|(&i, _)| i).collect();
    let means = idx.iter().map(|&i| points[i].0);
    let (lo, hi) = means.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), m| (a.min(m), b.max(m)));
    if !far.is_empty() {
        let bulk: Vec<usize> = idx.iter().copied().filter(|i| !far.contains(i)).collect();
        let (blo, bhi) = hull(points, &bulk);
        let (alo, ahi) = hull(points, &idx);
        let width = (bhi - blo).max(1e-12 * blo.abs().max(bhi.abs()).max(1e-300));
        if (ahi - alo) / width >= SQUASH {
            if far.len() <= (idx.len() / 5).max(1) {
                let pad = 0.08 * width;
                return YScale::Bulk { range: [blo - pad, bhi + pad], outliers: far };
            }
            if positive {
                return YScale::Log;
            }
        }
    }
    if positive && hi / lo >= 10.0 { YScale::Log } else { YScale::Linear }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Four methods at five sizes, means about 0.2 falling with n, sd 0.02.
    fn bulk() -> Vec<(f64, f64)> {
        let mut v = Vec::new();
        for n in [30.0, 50.0, 100.0, 200.0, 500.0] {
            for k in 0..4 {
                v.push((0.1 + 0.6 / f64::sqrt(n) + 0.01 * k as f64, 0.02));
            }
        }
        v
    }

    #[test]
    fn one_failed_cell_is_set_apart_and_the_range_fits_the_rest() {
        let mut points = bulk();
        points[3] = (3.9, 3.5); // SWAG at n = 30
        let YScale::Bulk { range, outliers } = choose(&points) else { panic!("{:?}", choose(&points)) };
        assert_eq!(outliers, [3]);
        // The bulk's bars run from 0.127 - 0.02 to 0.23 + 0.02 (plus 8% of that on each side).
        assert!(range[0] > 0.09 && range[0] < 0.107 && range[1] > 0.25 && range[1] < 0.27, "{range:?}");
    }

    #[test]
    fn methods_a_few_bars_apart_keep_one_linear_axis() {
        assert_eq!(choose(&bulk()), YScale::Linear);
        // A method twice as bad everywhere is a result, not an outlier: its points are far from
        // the median but do not stretch the axis eight times beyond the bulk's bars.
        let mut points = bulk();
        for p in points.iter_mut().step_by(4) {
            p.0 *= 2.0;
        }
        assert_eq!(choose(&points), YScale::Linear);
    }

    #[test]
    fn values_spanning_decades_get_a_log_axis() {
        // A method a hundred times worse at every size: too many points to set apart.
        let mut points = bulk();
        for p in points.iter_mut().step_by(4) {
            *p = (p.0 * 100.0, p.1 * 100.0);
        }
        assert_eq!(choose(&points), YScale::Log);
        // Means falling over a decade with n, every method alike.
        let falling: Vec<(f64, f64)> = (0..12).map(|i| (5.0 / (1.0 + i as f64), 0.1)).collect();
        assert_eq!(choose(&falling), YScale::Log);
        // Negative values: no log axis, the outlier is still set apart.
        let mut shifted: Vec<(f64, f64)> = bulk().into_iter().map(|(m, s)| (m - 0.2, s)).collect();
        shifted[0] = (50.0, 1.0);
        assert!(matches!(choose(&shifted), YScale::Bulk { ref outliers, .. } if outliers == &[0]));
        assert_eq!(choose(&[(1.0, 0.1), (100.0, 1.0)]), YScale::Linear, "too few points to judge");
    }
}
