//! Dataset shift and out-of-distribution inputs for the classification study, applied to the
//! fixed test set in original units (before a realization's standardisation), each a function
//! of the data and the shift alone, so every method and realization meets the same shifted
//! test sets.
//!
//! Five graded intensities each (Ovadia et al. 2019 grade corruptions 1-5 in the same way); the
//! values are credence's, chosen for 8x8 images with pixel counts 0-16:
//!
//! | shift | applies to | intensity 1..5 |
//! | --- | --- | --- |
//! | `rotation` | images | 15, 30, 45, 60, 90 degrees about the centre, bilinear, blank outside |
//! | `translation` | images | 1..5 pixels to the right, blank fill |
//! | `noise` | images | Gaussian noise of sd 1, 2, 4, 6, 8 counts, clipped to [0, 16] |
//! | `blur` | images | Gaussian blur of sd 0.5, 0.75, 1, 1.25, 1.5 pixels (radius 3, weights renormalised at the border) |
//! | `feature_noise` | tables | Gaussian noise of 0.25, 0.5, 1, 1.5, 2 test-set sds per feature |
//! | `subpopulation` | tables | test points resampled (with replacement, same count) with weights exp(l z), z the standardised first feature, l = 0.5, 1, 1.5, 2, 3 |
//!
//! Out-of-distribution inputs ([`ood_inputs`]): for images, uniform noise images (each pixel an
//! integer count drawn from 0-16), as many as the test set; for tables, each feature drawn
//! independently from the test set's column (a product of the marginals, which breaks the
//! features' joint structure while keeping each feature's range). Noise streams are ChaCha8
//! seeded from [`SHIFT_SEED`], the shift and the intensity.

use ndarray::{Array2, ArrayView2};
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, StandardNormal};

use super::data::IMAGE_SIDE;
use crate::data::mean_scale;
use credence::error::{Error, Result};
use credence::nn::stream_seed;

/// Seed of the shifts' noise streams.
pub const SHIFT_SEED: u64 = 2019;

/// The largest shift intensity.
pub const MAX_INTENSITY: usize = 5;

/// Largest pixel count of the digits images.
const PIXEL_MAX: f64 = 16.0;

/// A shift of the test inputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Shift {
    /// Rotation about the image centre.
    Rotation,
    /// Translation to the right.
    Translation,
    /// Additive Gaussian pixel noise.
    Noise,
    /// Gaussian blur.
    Blur,
    /// Additive Gaussian feature noise (tables).
    FeatureNoise,
    /// Resampling tilted towards large values of the first feature (tables).
    Subpopulation,
}

impl Shift {
    /// All six, images' first.
    pub const ALL: [Shift; 6] =
        [Shift::Rotation, Shift::Translation, Shift::Noise, Shift::Blur, Shift::FeatureNoise, Shift::Subpopulation];

    /// The name used in tables and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Shift::Rotation => "rotation",
            Shift::Translation => "translation",
            Shift::Noise => "noise",
            Shift::Blur => "blur",
            Shift::FeatureNoise => "feature_noise",
            Shift::Subpopulation => "subpopulation",
        }
    }

    /// Whether the shift needs 8x8 images.
    pub fn needs_image(self) -> bool {
        matches!(self, Shift::Rotation | Shift::Translation | Shift::Noise | Shift::Blur)
    }

    /// The shifted test inputs at `intensity` (1..=5) of `x` (original units), and the rows of
    /// `x` they come from (the identity except for `subpopulation`, whose labels follow them).
    pub fn apply(self, x: ArrayView2<'_, f64>, intensity: usize) -> Result<(Array2<f64>, Vec<usize>)> {
        if !(1..=MAX_INTENSITY).contains(&intensity) {
            return Err(Error::argument("intensity", intensity, format!("from 1 to {MAX_INTENSITY}")));
        }
        if self.needs_image() && x.ncols() != IMAGE_SIDE * IMAGE_SIDE {
            return Err(Error::argument(
                "shift",
                self.name(),
                format!("8x8 images (64 columns) for an image shift, got {} columns", x.ncols()),
            ));
        }
        let level = intensity - 1;
        let mut noise = ChaCha8Rng::seed_from_u64(stream_seed(SHIFT_SEED, &[self as u64, intensity as u64]));
        let identity: Vec<usize> = (0..x.nrows()).collect();
        let per_image = |f: &dyn Fn(&[f64]) -> Vec<f64>| {
            let mut out = Array2::zeros(x.dim());
            for (mut o, r) in out.rows_mut().into_iter().zip(x.rows()) {
                o.iter_mut().zip(f(&r.to_vec())).for_each(|(a, b)| *a = b);
            }
            out
        };
        Ok(match self {
            Shift::Rotation => {
                let angle = [15.0f64, 30.0, 45.0, 60.0, 90.0][level].to_radians();
                (per_image(&|img| rotate(img, angle)), identity)
            }
            Shift::Translation => (per_image(&|img| translate(img, intensity)), identity),
            Shift::Blur => {
                let sd = [0.5, 0.75, 1.0, 1.25, 1.5][level];
                (per_image(&|img| blur(img, sd)), identity)
            }
            Shift::Noise => {
                let sd = [1.0, 2.0, 4.0, 6.0, 8.0][level];
                let noisy = x.mapv(|v| {
                    (v + sd * <StandardNormal as Distribution<f64>>::sample(&StandardNormal, &mut noise))
                        .clamp(0.0, PIXEL_MAX)
                });
                (noisy, identity)
            }
            Shift::FeatureNoise => {
                let k = [0.25, 0.5, 1.0, 1.5, 2.0][level];
                let sds: Vec<f64> = x.columns().into_iter().map(|c| mean_scale(c.iter().copied()).1).collect();
                let mut out = x.to_owned();
                for mut row in out.rows_mut() {
                    for (v, s) in row.iter_mut().zip(&sds) {
                        *v += k * s * <StandardNormal as Distribution<f64>>::sample(&StandardNormal, &mut noise);
                    }
                }
                (out, identity)
            }
            Shift::Subpopulation => {
                let tilt = [0.5, 1.0, 1.5, 2.0, 3.0][level];
                let (m, s) = mean_scale(x.column(0).iter().copied());
                let w: Vec<f64> = x.column(0).iter().map(|v| (tilt * (v - m) / s).exp()).collect();
                let rows = weighted_draws(&w, x.nrows(), &mut noise);
                (x.select(ndarray::Axis(0), &rows), rows)
            }
        })
    }
}

crate::named_choice!(Shift, "shift");

/// `count` indices drawn with replacement with probabilities proportional to `w`.
fn weighted_draws(w: &[f64], count: usize, rng: &mut ChaCha8Rng) -> Vec<usize> {
    let mut cumulative = Vec::with_capacity(w.len());
    let mut total = 0.0;
    for &v in w {
        total += v;
        cumulative.push(total);
    }
    (0..count)
        .map(|_| {
            let u = rng.random::<f64>() * total;
            cumulative.partition_point(|&c| c <= u).min(w.len() - 1)
        })
        .collect()
}

/// Pixel (r, c) of an 8x8 image, 0 outside.
fn pixel(img: &[f64], r: isize, c: isize) -> f64 {
    let s = IMAGE_SIDE as isize;
    if (0..s).contains(&r) && (0..s).contains(&c) { img[(r * s + c) as usize] } else { 0.0 }
}

/// The image rotated by `angle` (radians, counter-clockwise) about its centre, bilinear.
fn rotate(img: &[f64], angle: f64) -> Vec<f64> {
    let centre = (IMAGE_SIDE as f64 - 1.0) / 2.0;
    let (sin, cos) = angle.sin_cos();
    let mut out = vec![0.0; img.len()];
    for r in 0..IMAGE_SIDE {
        for c in 0..IMAGE_SIDE {
            // The source of output pixel (r, c): rotate back by -angle.
            let (y, x) = (r as f64 - centre, c as f64 - centre);
            let (sy, sx) = (cos * y - sin * x + centre, sin * y + cos * x + centre);
            let (r0, c0) = (sy.floor(), sx.floor());
            let (fy, fx) = (sy - r0, sx - c0);
            let (r0, c0) = (r0 as isize, c0 as isize);
            out[r * IMAGE_SIDE + c] = (1.0 - fy) * ((1.0 - fx) * pixel(img, r0, c0) + fx * pixel(img, r0, c0 + 1))
                + fy * ((1.0 - fx) * pixel(img, r0 + 1, c0) + fx * pixel(img, r0 + 1, c0 + 1));
        }
    }
    out
}

/// The image moved `k` pixels to the right, blank on the left.
fn translate(img: &[f64], k: usize) -> Vec<f64> {
    let mut out = vec![0.0; img.len()];
    for r in 0..IMAGE_SIDE {
        for c in k..IMAGE_SIDE {
            out[r * IMAGE_SIDE + c] = img[r * IMAGE_SIDE + c - k];
        }
    }
    out
}

/// Separable Gaussian blur of sd `sd` pixels, radius 3, weights renormalised over the pixels
/// inside the image.
fn blur(img: &[f64], sd: f64) -> Vec<f64> {
    let kernel: Vec<f64> = (-3..=3).map(|t: i32| (-(t * t) as f64 / (2.0 * sd * sd)).exp()).collect();
    let pass = |src: &[f64], along_rows: bool| {
        let mut out = vec![0.0; src.len()];
        for r in 0..IMAGE_SIDE {
            for c in 0..IMAGE_SIDE {
                let (mut acc, mut weight) = (0.0, 0.0);
                for (t, w) in (-3isize..=3).zip(&kernel) {
                    let (rr, cc) = if along_rows { (r as isize, c as isize + t) } else { (r as isize + t, c as isize) };
                    if (0..IMAGE_SIDE as isize).contains(&rr) && (0..IMAGE_SIDE as isize).contains(&cc) {
                        acc += w * src[rr as usize * IMAGE_SIDE + cc as usize];
                        weight += w;
                    }
                }
                out[r * IMAGE_SIDE + c] = acc / weight;
            }
        }
        out
    };
    pass(&pass(img, true), false)
}

/// Out-of-distribution inputs as many as the rows of `x` (see the [module docs](self)).
pub fn ood_inputs(x: ArrayView2<'_, f64>, image: bool) -> Array2<f64> {
    let mut rng = ChaCha8Rng::seed_from_u64(stream_seed(SHIFT_SEED, &[u64::MAX]));
    let (n, d) = x.dim();
    if image {
        Array2::from_shape_fn((n, d), |_| rng.random_range(0..=16u32) as f64)
    } else {
        let mut out = Array2::zeros((n, d));
        for j in 0..d {
            for i in 0..n {
                out[[i, j]] = x[[rng.random_range(0..n), j]];
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(f: impl Fn(usize, usize) -> f64) -> Vec<f64> {
        (0..64).map(|i| f(i / 8, i % 8)).collect()
    }

    /// Closed forms: a 90-degree rotation permutes pixels exactly, rotations keep a centred
    /// disc's ink, translation moves columns, blur keeps a constant image and spreads a point.
    #[test]
    fn image_shifts_against_closed_forms() {
        let img = image(|r, c| (r * 8 + c) as f64);
        let q = rotate(&img, 90f64.to_radians());
        for r in 0..8 {
            for c in 0..8 {
                // Output (r, c) comes from source (7 - c, r).
                assert!((q[r * 8 + c] - img[(7 - c) * 8 + r]).abs() < 1e-9, "({r}, {c})");
            }
        }
        assert_eq!(rotate(&img, 0.0), img);
        let t = translate(&img, 2);
        assert_eq!((t[8], t[9], t[10], t[15]), (0.0, 0.0, img[8], img[13]));
        let flat = vec![5.0; 64];
        assert!(blur(&flat, 1.0).iter().all(|v| (v - 5.0).abs() < 1e-12));
        let point = image(|r, c| if (r, c) == (3, 3) { 1.0 } else { 0.0 });
        let b = blur(&point, 1.0);
        // Away from the border the weights are the normalised Gaussian's: w(0)^2 at the point.
        let z: f64 = (-3..=3).map(|t: i32| (-(t * t) as f64 / 2.0).exp()).sum();
        assert!((b[3 * 8 + 3] - 1.0 / (z * z)).abs() < 1e-12);
        assert!((b[3 * 8 + 4] - (-0.5f64).exp() / (z * z)).abs() < 1e-12);
    }

    #[test]
    fn shifts_grade_and_are_reproducible() {
        let x = Array2::from_shape_fn((30, 64), |(i, j)| ((i * 13 + j * 7) % 17) as f64);
        let mut last = 0.0;
        for intensity in 1..=5 {
            let (s, rows) = Shift::Noise.apply(x.view(), intensity).unwrap();
            assert_eq!(rows, (0..30).collect::<Vec<_>>());
            assert!(s.iter().all(|v| (0.0..=16.0).contains(v)));
            let change = (&s - &x).mapv(f64::abs).sum();
            assert!(change > last, "intensity {intensity}");
            last = change;
            assert_eq!(s, Shift::Noise.apply(x.view(), intensity).unwrap().0);
        }
        assert!(Shift::Rotation.apply(x.view(), 0).is_err() && Shift::Blur.apply(x.view(), 6).is_err());
        let table = Array2::from_shape_fn((200, 3), |(i, j)| (i as f64 * 0.37 + j as f64).sin());
        assert!(Shift::Rotation.apply(table.view(), 1).unwrap_err().to_string().contains("8x8 images"));
        // The subpopulation tilt raises the first feature's mean with intensity.
        let means: Vec<f64> = (1..=5)
            .map(|i| {
                let (s, rows) = Shift::Subpopulation.apply(table.view(), i).unwrap();
                assert!(rows.iter().zip(s.rows()).all(|(&r, row)| row == table.row(r)));
                s.column(0).mean().unwrap()
            })
            .collect();
        assert!(means.windows(2).all(|w| w[1] > w[0]) && means[0] > table.column(0).mean().unwrap(), "{means:?}");
        let (f, _) = Shift::FeatureNoise.apply(table.view(), 3).unwrap();
        assert!(f != table);
        let ood = ood_inputs(table.view(), false);
        assert_eq!(ood.dim(), (200, 3));
        assert!(ood.column(1).iter().all(|v| table.column(1).iter().any(|t| t == v)));
        assert!(ood_inputs(x.view(), true).iter().all(|v| v.fract() == 0.0 && (0.0..=16.0).contains(v)));
        assert_eq!("Feature_Noise".parse::<Shift>().unwrap(), Shift::FeatureNoise);
    }
}
