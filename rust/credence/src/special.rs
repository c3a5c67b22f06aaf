//! Special functions and small numeric helpers shared by the metrics.

// Published coefficients are kept digit for digit, even where f64 cannot hold them all.
#![allow(clippy::excessive_precision)]

use rayon::prelude::*;

/// 1 / sqrt(2 pi).
pub const FRAC_1_SQRT_2PI: f64 = 0.398_942_280_401_432_7;
/// ln(2 pi) / 2.
pub const HALF_LN_2PI: f64 = 0.918_938_533_204_672_8;
/// 1 / sqrt(pi).
pub const FRAC_1_SQRT_PI: f64 = 0.564_189_583_547_756_3;

/// Standard normal density phi(z).
#[inline]
pub fn norm_pdf(z: f64) -> f64 {
    FRAC_1_SQRT_2PI * (-0.5 * z * z).exp()
}

/// Standard normal distribution function Phi(z), accurate in both tails (via erfc).
#[inline]
pub fn norm_cdf(z: f64) -> f64 {
    0.5 * libm::erfc(-z * std::f64::consts::FRAC_1_SQRT_2)
}

/// (Phi(z), phi(z)) together, sharing one `exp`: Cody's rational Chebyshev approximations
/// (Cody 1969; ALGORITHM 715, ACM TOMS 19, 1993), three ranges of |z|. Relative accuracy about
/// 1e-15 for |z| < 5.66 and 1e-13 in the far tail (the shared exp(-z^2/2) carries the rounding
/// of z^2). Used where both are needed per evaluation (CRPS, mixture quantiles).
#[inline]
pub fn norm_cdf_pdf(z: f64) -> (f64, f64) {
    let y = z.abs();
    let e = (-0.5 * z * z).exp();
    let pdf = FRAC_1_SQRT_2PI * e;
    if y <= 0.66291 {
        let zsq = z * z;
        let (mut num, mut den) = (CODY_A[4] * zsq, zsq);
        for i in 0..3 {
            num = (num + CODY_A[i]) * zsq;
            den = (den + CODY_B[i]) * zsq;
        }
        return (0.5 + z * (num + CODY_A[3]) / (den + CODY_B[3]), pdf);
    }
    // Lower tail Phi(-|z|).
    let tail = if y <= 5.656_854_249_492_381 {
        let (mut num, mut den) = (CODY_C[8] * y, y);
        for i in 0..7 {
            num = (num + CODY_C[i]) * y;
            den = (den + CODY_D[i]) * y;
        }
        e * (num + CODY_C[7]) / (den + CODY_D[7])
    } else if y < 50.0 {
        let zsq = 1.0 / (z * z);
        let (mut num, mut den) = (CODY_P[5] * zsq, zsq);
        for i in 0..4 {
            num = (num + CODY_P[i]) * zsq;
            den = (den + CODY_Q[i]) * zsq;
        }
        e * (FRAC_1_SQRT_2PI - zsq * (num + CODY_P[4]) / (den + CODY_Q[4])) / y
    } else {
        0.0
    };
    (if z > 0.0 { 1.0 - tail } else { tail }, pdf)
}

/// `exp(x)` without branches, so loops over it vectorise; within 1 ulp of `f64::exp` for
/// x in [-708, 709] (arguments below -708 are treated as -708, so the result never becomes
/// subnormal: about 3.3e-308 instead of anything smaller).
///
/// The FreeBSD/musl `exp` algorithm: x = k ln 2 + r with |r| <= ln(2)/2 (k rounded with the
/// 1.5 * 2^52 trick), exp(r) from a degree-5 rational form, then 2^k put into the exponent bits.
#[inline(always)]
pub fn exp_bf(x: f64) -> f64 {
    const LN2_HI: f64 = 6.93147180369123816490e-01;
    const LN2_LO: f64 = 1.90821492927058770002e-10;
    const P1: f64 = 1.66666666666666019037e-01;
    const P2: f64 = -2.77777777770155933842e-03;
    const P3: f64 = 6.61375632143793436117e-05;
    const P4: f64 = -1.65339022054652515390e-06;
    const P5: f64 = 4.13813679705723846039e-08;
    const ROUND: f64 = 6_755_399_441_055_744.0; // 1.5 * 2^52
    let x = if x > -708.0 { x } else { -708.0 };
    let x = if x < 709.0 { x } else { 709.0 };
    let kf = (x * std::f64::consts::LOG2_E + ROUND) - ROUND; // round to nearest
    let hi = x - kf * LN2_HI;
    let lo = kf * LN2_LO;
    let r = hi - lo;
    let rr = r * r;
    let c = r - rr * (P1 + rr * (P2 + rr * (P3 + rr * (P4 + rr * P5))));
    let y = 1.0 + (r * c / (2.0 - c) - lo + hi);
    // 2^k for k in [-1022, 1023]; k + 1023 is read off the rounded float's low bits.
    let biased = ((kf + ROUND).to_bits() & 0x7ff).wrapping_add(1023) & 0x7ff;
    y * f64::from_bits(biased << 52)
}

/// Branch-free twin of [`norm_cdf_pdf`] for vectorised loops: all three of Cody's ranges are
/// evaluated and the right one selected (data-dependent branches mispredict on random z and
/// cost more than the extra arithmetic), with the exponential from [`exp_bf`]. Same accuracy;
/// for |z| >= 37.5 the tail and the density are 0 (they are below 1e-300).
#[inline(always)]
pub fn norm_cdf_pdf_bf(z: f64) -> (f64, f64) {
    let y = z.abs();
    let zsq = z * z;
    let e = exp_bf(-0.5 * zsq);
    let pdf = if y < 37.5 { FRAC_1_SQRT_2PI * e } else { 0.0 };
    // |z| <= 0.66291: Phi = 1/2 + z A(z^2)/B(z^2).
    let a = ((((CODY_A[4] * zsq + CODY_A[0]) * zsq + CODY_A[1]) * zsq + CODY_A[2]) * zsq + CODY_A[3])
        / ((((zsq + CODY_B[0]) * zsq + CODY_B[1]) * zsq + CODY_B[2]) * zsq + CODY_B[3]);
    let central = 0.5 + z * a;
    // 0.66291 < |z| <= sqrt(32): Phi(-|z|) = e C(|z|)/D(|z|).
    let mut num = CODY_C[8] * y;
    let mut den = y;
    for i in 0..7 {
        num = (num + CODY_C[i]) * y;
        den = (den + CODY_D[i]) * y;
    }
    let mid = e * (num + CODY_C[7]) / (den + CODY_D[7]);
    // |z| > sqrt(32): asymptotic form in 1/z^2 (the guard keeps 1/z^2 finite at z = 0).
    let inv = 1.0 / if zsq > 1.0 { zsq } else { 1.0 };
    let mut num = CODY_P[5] * inv;
    let mut den = inv;
    for i in 0..4 {
        num = (num + CODY_P[i]) * inv;
        den = (den + CODY_Q[i]) * inv;
    }
    let far = e * (FRAC_1_SQRT_2PI - inv * (num + CODY_P[4]) / (den + CODY_Q[4])) / (if y > 1.0 { y } else { 1.0 });
    let tail = if y <= 5.656_854_249_492_381 {
        mid
    } else if y < 37.5 {
        far
    } else {
        0.0
    };
    let cdf = if y <= 0.66291 {
        central
    } else if z > 0.0 {
        1.0 - tail
    } else {
        tail
    };
    (cdf, pdf)
}

// Cody's coefficients for Phi (ALGORITHM 715), shared by the two evaluators above.
const CODY_A: [f64; 5] = [
    2.2352520354606839287,
    161.02823106855587881,
    1067.6894854603709582,
    18154.981253343561249,
    0.065682337918207449113,
];
const CODY_B: [f64; 4] = [47.20258190468824187, 976.09855173777669322, 10260.932208618978205, 45507.789335026729956];
const CODY_C: [f64; 9] = [
    0.39894151208813466764,
    8.8831497943883759412,
    93.506656132177855979,
    597.27027639480026226,
    2494.5375852903726711,
    6848.1904505362823326,
    11602.651437647350124,
    9842.7148383839780218,
    1.0765576773720192317e-8,
];
const CODY_D: [f64; 8] = [
    22.266688044328115691,
    235.38790178262499861,
    1519.377599407554805,
    6485.558298266760755,
    18615.571640885098091,
    34900.952721145977266,
    38912.003286093271411,
    19685.429676859990727,
];
const CODY_P: [f64; 6] = [
    0.21589853405795699,
    0.1274011611602473639,
    0.022235277870649807,
    0.001421619193227893466,
    2.9112874951168792e-5,
    0.02307344176494017303,
];
const CODY_Q: [f64; 5] =
    [1.28426009614491121, 0.468238212480865118, 0.0659881378689285515, 0.00378239633202758244, 7.29751555083966205e-5];

/// Standard normal quantile Phi^-1(p) for p in (0, 1); +-infinity at 0 and 1, NaN outside.
///
/// Wichura's algorithm AS 241 (PPND16, Applied Statistics 37, 1988), relative accuracy about
/// 1e-16, refined by one Newton step against [`norm_cdf`] so the pair round-trips to machine
/// precision.
pub fn norm_quantile(p: f64) -> f64 {
    if !(0.0..=1.0).contains(&p) {
        return f64::NAN;
    }
    if p == 0.0 {
        return f64::NEG_INFINITY;
    }
    if p == 1.0 {
        return f64::INFINITY;
    }
    let z = as241(p);
    // One Newton step; skipped in the far tails where the density underflows.
    let pdf = norm_pdf(z);
    if pdf > 1e-300 { z - (norm_cdf(z) - p) / pdf } else { z }
}

/// Wichura's PPND16 for p in (0, 1), without [`norm_quantile`]'s Newton refinement (relative
/// accuracy about 1e-16; for bulk transforms such as rank normalisation).
pub(crate) fn as241(p: f64) -> f64 {
    let q = p - 0.5;
    if q.abs() <= 0.425 {
        let r = 0.180625 - q * q;
        q * poly(&AS241_A, r) / poly(&AS241_B, r)
    } else {
        let r = if q < 0.0 { p } else { 1.0 - p };
        let r = (-r.ln()).sqrt();
        let v = if r <= 5.0 {
            let r = r - 1.6;
            poly(&AS241_C, r) / poly(&AS241_D, r)
        } else {
            let r = r - 5.0;
            poly(&AS241_E, r) / poly(&AS241_F, r)
        };
        if q < 0.0 { -v } else { v }
    }
}

/// Evaluates a polynomial with coefficients in increasing order of power (Horner).
#[inline]
fn poly(c: &[f64], x: f64) -> f64 {
    c.iter().rev().fold(0.0, |acc, &ci| acc * x + ci)
}

const AS241_A: [f64; 8] = [
    3.387_132_872_796_366_5,
    133.141_667_891_784_38,
    1_971.590_950_306_551_3,
    13_731.693_765_509_461,
    45_921.953_931_549_87,
    67_265.770_927_008_7,
    33_430.575_583_588_13,
    2_509.080_928_730_122_7,
];
const AS241_B: [f64; 8] = [
    1.0,
    42.313_330_701_600_91,
    687.187_007_492_057_9,
    5_394.196_021_424_751,
    21_213.794_301_586_597,
    39_307.895_800_092_71,
    28_729.085_735_721_943,
    5_226.495_278_852_545,
];
const AS241_C: [f64; 8] = [
    1.423_437_110_749_683_5,
    4.630_337_846_156_546,
    5.769_497_221_460_691,
    3.647_848_324_763_204_5,
    1.270_458_252_452_368_4,
    0.241_780_725_177_450_6,
    0.022_723_844_989_269_184,
    7.745_450_142_783_414e-4,
];
const AS241_D: [f64; 8] = [
    1.0,
    2.053_191_626_637_759,
    1.676_384_830_183_803_8,
    0.689_767_334_985_1,
    0.148_103_976_427_480_08,
    0.015_198_666_563_616_457,
    5.475_938_084_995_345e-4,
    1.050_750_071_644_416_9e-9,
];
const AS241_E: [f64; 8] = [
    6.657_904_643_501_103,
    5.463_784_911_164_114,
    1.784_826_539_917_291_3,
    0.296_560_571_828_504_9,
    0.026_532_189_526_576_124,
    0.001_242_660_947_388_078_4,
    2.711_555_568_743_487_6e-5,
    2.010_334_399_292_288_1e-7,
];
const AS241_F: [f64; 8] = [
    1.0,
    0.599_832_206_555_888,
    0.136_929_880_922_735_8,
    0.014_875_361_290_850_615,
    7.868_691_311_456_133e-4,
    1.846_318_317_510_054_8e-5,
    1.421_511_758_316_446e-7,
    2.044_263_103_389_939_8e-15,
];

/// (ln Gamma(x), digamma(x)) for x > 0 together, sharing one logarithm: the asymptotic
/// (Stirling / de Moivre) series for x >= 10 after shifting small arguments up with the
/// recurrences Gamma(x + 1) = x Gamma(x) and psi(x + 1) = psi(x) + 1/x. Absolute error about
/// 1e-15 on ln Gamma and psi. The beta-binomial likelihood needs both at six arguments per
/// observation, and this is several times faster than two separate library calls.
#[inline]
pub fn ln_gamma_digamma(x: f64) -> (f64, f64) {
    if !(x > 0.0 && x.is_finite()) {
        return (f64::NAN, f64::NAN);
    }
    let (mut z, mut log_prod, mut inv_sum) = (x, 0.0, 0.0);
    if z < 10.0 {
        let mut prod = 1.0;
        while z < 10.0 {
            prod *= z;
            inv_sum += 1.0 / z;
            z += 1.0;
        }
        log_prod = prod.ln();
    }
    let lz = z.ln();
    let r = 1.0 / z;
    let r2 = r * r;
    // ln Gamma(z) = (z - 1/2) ln z - z + ln(2 pi)/2 + sum B_2k / (2k (2k - 1) z^(2k - 1)).
    let lg_series = r
        * (1.0 / 12.0
            + r2 * (-1.0 / 360.0
                + r2 * (1.0 / 1260.0
                    + r2 * (-1.0 / 1680.0
                        + r2 * (1.0 / 1188.0
                            + r2 * (-691.0 / 360_360.0 + r2 * (1.0 / 156.0 - r2 * 3617.0 / 122_400.0)))))));
    let lg = (z - 0.5) * lz - z + HALF_LN_2PI + lg_series;
    // psi(z) = ln z - 1/(2z) - sum B_2k / (2k z^(2k)).
    let psi_series = r2
        * (1.0 / 12.0
            + r2 * (-1.0 / 120.0
                + r2 * (1.0 / 252.0
                    + r2 * (-1.0 / 240.0 + r2 * (1.0 / 132.0 + r2 * (-691.0 / 32_760.0 + r2 * (1.0 / 12.0)))))));
    let psi = lz - 0.5 * r - psi_series;
    (lg - log_prod, psi - inv_sum)
}

/// `ln sum_i exp(x_i)` without overflow; `-inf` for an empty slice or all `-inf`.
pub fn log_sum_exp(x: &[f64]) -> f64 {
    let m = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if m == f64::NEG_INFINITY || m.is_nan() {
        return m;
    }
    m + x.iter().map(|&v| (v - m).exp()).sum::<f64>().ln()
}

/// Entropy term `-p ln p` with the convention `0 ln 0 = 0` (also for tiny negative round-off).
///
/// Branch-free (a select, not a jump), so loops of it vectorise.
#[inline(always)]
pub fn neg_p_ln_p(p: f64) -> f64 {
    // Below the smallest normal the term is < 1e-305: clamping the log's argument is harmless.
    // Compare-and-select rather than f64::max, whose NaN rules cost extra instructions.
    let q = if p > f64::MIN_POSITIVE { p } else { f64::MIN_POSITIVE };
    if p > 0.0 { -p * ln_normal(q) } else { 0.0 }
}

/// Single-precision `-p ln p` (0 for p <= 0), for f32 input arrays: the f32 data carry only
/// ~7 significant digits, and an f32 log runs twice as many SIMD lanes as an f64 one.
#[inline(always)]
pub fn neg_p_ln_p_f32(p: f32) -> f32 {
    let q = if p > f32::MIN_POSITIVE { p } else { f32::MIN_POSITIVE };
    if p > 0.0 { -p * ln_normal_f32(q) } else { 0.0 }
}

/// Natural log of a positive, finite, normal f32 (no checks), within 2 ulp: Cephes `logf`
/// (reduction to [sqrt(2)/2, sqrt(2)), degree-8 polynomial) without branches, the polynomial
/// evaluated by Estrin's scheme to shorten the dependency chain.
#[inline(always)]
pub fn ln_normal_f32(x: f32) -> f32 {
    const P: [f32; 9] = [
        7.037_683_6e-2,
        -1.151_461_03e-1,
        1.167_699_87e-1,
        -1.242_014_08e-1,
        1.424_932_28e-1,
        -1.666_805_77e-1,
        2.000_071_48e-1,
        -2.499_999_4e-1,
        3.333_333_1e-1,
    ];
    let u = x.to_bits() + (0x3f80_0000 - 0x3f35_04f3);
    let dk = ((u >> 23) as i32 - 127) as f32;
    let f = f32::from_bits((u & 0x007f_ffff) + 0x3f35_04f3) - 1.0;
    let z = f * f;
    let z2 = z * z;
    // P(f) = sum_i P[i] f^(8-i), grouped in pairs, then quads.
    let a = P[7] * f + P[8];
    let b = P[5] * f + P[6];
    let c = P[3] * f + P[4];
    let d = P[1] * f + P[2];
    let poly = (P[0] * z2 + (d * z + c)) * z2 + (b * z + a);
    let y = poly * f * z + dk * -2.121_944_4e-4 - 0.5 * z;
    f + y + dk * 0.693_359_4
}

/// Natural log of a positive, finite, normal `x` (no checks), within 1 ulp.
///
/// The FreeBSD/musl `log` algorithm (reduce to m in [sqrt(2)/2, sqrt(2)), then
/// ln m = f - f^2/2 + s (f^2/2 + R(s^2)) with s = f / (2 + f), f = m - 1) without its special-case
/// branches, so that the compiler can vectorise loops over it; the libm call it replaces is
/// opaque to the vectoriser and dominated the fused classification pass.
#[inline(always)]
pub fn ln_normal(x: f64) -> f64 {
    const LN2_HI: f64 = 6.931_471_803_691_238_164_90e-01;
    const LN2_LO: f64 = 1.908_214_929_270_587_700_02e-10;
    const LG1: f64 = 6.666_666_666_666_735_130e-01;
    const LG2: f64 = 3.999_999_999_940_941_908e-01;
    const LG3: f64 = 2.857_142_874_366_239_149e-01;
    const LG4: f64 = 2.222_219_843_214_978_396e-01;
    const LG5: f64 = 1.818_357_216_161_805_012e-01;
    const LG6: f64 = 1.531_383_769_920_937_332e-01;
    const LG7: f64 = 1.479_819_860_511_658_591e-01;
    // All integer work is on full 64-bit lanes with logical shifts and the exponent is turned
    // into a float with the 2^52 trick, because SIMD units lack 64-bit arithmetic shifts and
    // integer-to-float conversions: anything else would stop the loop vectorising.
    const TWO52: u64 = 0x4330_0000_0000_0000; // bits of 2^52
    let bits = x.to_bits();
    // Shift the exponent so that the mantissa lands in [sqrt(2)/2, sqrt(2)).
    let u = bits + ((0x3ff0_0000 - 0x3fe6_a09e) << 32);
    let dk = f64::from_bits((u >> 52) | TWO52) - (4_503_599_627_370_496.0 + 1023.0);
    let m = f64::from_bits((u & 0x000f_ffff_ffff_ffff) + (0x3fe6_a09e << 32));
    let f = m - 1.0;
    let hfsq = 0.5 * f * f;
    let s = f / (2.0 + f);
    let z = s * s;
    let w = z * z;
    let t1 = w * (LG2 + w * (LG4 + w * LG6));
    let t2 = z * (LG1 + w * (LG3 + w * (LG5 + w * LG7)));
    s * (hfsq + (t1 + t2)) + dk * LN2_LO - hfsq + f + dk * LN2_HI
}

/// Maps a float to an integer with the same order (IEEE total order): flip all bits of
/// negatives, the sign bit of positives.
#[inline(always)]
pub fn order_key(x: f64) -> u64 {
    let b = x.to_bits();
    if b >> 63 == 1 { !b } else { b | (1 << 63) }
}

/// Inverse of [`order_key`].
#[inline(always)]
pub fn from_order_key(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k & !(1 << 63) } else { !k })
}

/// A zero-filled vector whose pages are written here, by one thread. `vec![0.0; n]` returns
/// untouched (calloc) memory whose first-touch page faults then land inside the parallel
/// kernels, where concurrent faults cost several times more (measured on the 2-core reference
/// VM: about 300 ms against 50 ms for 80 MB). On Linux, large buffers are also offered to
/// transparent huge pages, which cuts the remaining fault cost about fourfold.
pub(crate) fn prefaulted_zeros(len: usize) -> Vec<f64> {
    let mut v: Vec<f64> = Vec::with_capacity(len);
    #[cfg(target_os = "linux")]
    advise_huge_pages(&v);
    v.resize(len, 0.0);
    v
}

/// `madvise(MADV_HUGEPAGE)` on the whole 2 MiB pages inside `v`'s allocation (large buffers
/// only); a no-op where transparent huge pages are disabled.
#[cfg(target_os = "linux")]
fn advise_huge_pages(v: &Vec<f64>) {
    const HUGE: usize = 2 << 20;
    let bytes = v.capacity() * std::mem::size_of::<f64>();
    if bytes < 4 * HUGE {
        return;
    }
    let start = v.as_ptr() as usize;
    let aligned = start.next_multiple_of(HUGE);
    let len = (start + bytes).saturating_sub(aligned) / HUGE * HUGE;
    if len > 0 {
        // SAFETY: [aligned, aligned + len) lies inside the live allocation of `v` (capacity
        // `bytes` from `start`), and MADV_HUGEPAGE only changes how the kernel backs those
        // pages, never their contents or validity. A failure (e.g. THP disabled) is harmless.
        #[allow(unsafe_code)]
        unsafe {
            libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
        }
    }
}

/// Block size for deterministic parallel reductions: partial sums over fixed blocks are added in
/// block order, so the result does not depend on the number of threads.
const SUM_BLOCK: usize = 4096;

/// Sum of `x`, parallel but bit-identical for any thread count.
pub fn det_sum(x: &[f64]) -> f64 {
    if x.len() <= SUM_BLOCK {
        return x.iter().sum();
    }
    let partial: Vec<f64> = x.par_chunks(SUM_BLOCK).map(|c| c.iter().sum()).collect();
    partial.iter().sum()
}

/// Arithmetic mean of `x` (NaN for an empty slice), bit-identical for any thread count.
pub fn det_mean(x: &[f64]) -> f64 {
    det_sum(x) / x.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_cdf_matches_reference_values() {
        // Values from R: pnorm(c(-3, -1, 0, 0.5, 2)), dnorm(1).
        let refs = [
            (-3.0, 0.001_349_898_031_630_094_6),
            (-1.0, 0.158_655_253_931_457_05),
            (0.0, 0.5),
            (0.5, 0.691_462_461_274_013_1),
            (2.0, 0.977_249_868_051_820_8),
        ];
        for (z, p) in refs {
            assert!((norm_cdf(z) - p).abs() < 1e-15, "Phi({z})");
        }
        assert!((norm_pdf(1.0) - 0.241_970_724_519_143_37).abs() < 1e-16);
        // Far tail keeps relative accuracy: pnorm(-30) = 4.906714e-198.
        assert!((norm_cdf(-30.0) / 4.906_713_927_148_187e-198 - 1.0).abs() < 1e-12);
    }

    #[test]
    fn shared_exp_cdf_pdf_matches_erfc_based_values() {
        let mut z = -40.0;
        while z < 40.0 {
            let (c, d) = norm_cdf_pdf(z);
            let (want_c, want_d) = (norm_cdf(z), norm_pdf(z));
            // Relative accuracy of the smaller tail, which carries the information.
            let (tail, want_tail) = if z > 0.0 { (1.0 - c, 1.0 - want_c) } else { (c, want_c) };
            let tol = if z.abs() < 5.66 { 1e-14 } else { 1e-12 };
            if want_tail > 1e-300 {
                assert!(((tail - want_tail) / want_tail).abs() < tol, "z={z}: {tail:e} vs {want_tail:e}");
            }
            assert!((d - want_d).abs() <= 1e-15 * want_d.max(1e-300), "pdf z={z}");
            z += 0.0137;
        }
        assert_eq!(norm_cdf_pdf(0.0), (0.5, FRAC_1_SQRT_2PI));
        assert_eq!(norm_cdf_pdf(60.0).0, 1.0);
    }

    #[test]
    fn branch_free_exp_is_within_one_ulp() {
        let mut x = -708.0;
        while x < 709.0 {
            let (got, want) = (exp_bf(x), x.exp());
            let ulp = f64::from_bits(want.to_bits() + 1) - want;
            assert!((got - want).abs() <= ulp, "exp({x}) = {got:e} vs {want:e}");
            x += 0.123_456_7;
        }
        assert_eq!(exp_bf(0.0), 1.0);
        assert_eq!(exp_bf(-1e6), exp_bf(-708.0));
    }

    #[test]
    fn branch_free_cdf_pdf_equals_the_branching_one() {
        let mut z = -45.0;
        while z < 45.0 {
            let (c, d) = norm_cdf_pdf(z);
            let (cb, db) = norm_cdf_pdf_bf(z);
            let (t, tb) = if z > 0.0 { (1.0 - c, 1.0 - cb) } else { (c, cb) };
            if z.abs() < 37.5 {
                assert!((tb - t).abs() <= 2e-15 * t, "z={z}: {tb:e} vs {t:e}");
            } else {
                assert!(tb <= 1e-300);
            }
            assert!((db - d).abs() <= 4.5e-16 * d + 1e-300, "pdf z={z}"); // two ulp
            z += 0.00731;
        }
    }

    #[test]
    fn normal_quantile_inverts_cdf() {
        // qnorm(0.95) and qnorm(0.975) from R.
        assert!((norm_quantile(0.95) - 1.644_853_626_951_472_2).abs() < 1e-15);
        assert!((norm_quantile(0.975) - 1.959_963_984_540_054).abs() < 1e-15);
        for &p in &[1e-300, 1e-20, 1e-5, 0.01, 0.3, 0.5, 0.77, 0.999, 1.0 - 1e-12] {
            let z = norm_quantile(p);
            let back = norm_cdf(z);
            assert!(((back - p) / p).abs() < 1e-12, "p={p} z={z} back={back}");
        }
        assert!(norm_quantile(1.5).is_nan());
        // The raw AS 241 approximation alone is already accurate to ~1e-15 in all three regions.
        for &p in &[1e-200, 1e-10, 0.02, 0.5, 0.9, 0.9999] {
            let z = as241(p);
            // A z error of d moves p by about |z| d relative, hence the |z| allowance.
            assert!(
                ((norm_cdf(z) - p) / p).abs() < 1e-14 * z.abs().max(1.0),
                "AS241 p={p:e}: rel err {:e}",
                (norm_cdf(z) - p) / p
            );
        }
        assert_eq!(norm_quantile(0.0), f64::NEG_INFINITY);
    }

    #[test]
    fn ln_normal_matches_std_ln_within_one_ulp() {
        let mut x = 2.0 * f64::MIN_POSITIVE; // normal inputs only, as documented
        while x < 1e300 {
            for &v in
                &[x, x * 1.234_567, x * std::f64::consts::FRAC_1_SQRT_2, x * std::f64::consts::SQRT_2, x * 1.999_999]
            {
                let (got, want) = (ln_normal(v), v.ln());
                let ulp = f64::from_bits(want.abs().to_bits() + 1) - want.abs();
                assert!((got - want).abs() <= ulp.max(1e-300), "ln({v:e}) = {got} vs {want}");
            }
            x *= 3.7;
        }
        assert_eq!(ln_normal(1.0), 0.0);
        assert_eq!(neg_p_ln_p(0.0), 0.0);
        assert_eq!(neg_p_ln_p(-1e-9), 0.0);
        assert!((neg_p_ln_p(0.5) - 0.5 * 2f64.ln()).abs() < 1e-16);
    }

    #[test]
    fn ln_normal_f32_is_within_two_ulp() {
        let mut x = 2.0 * f32::MIN_POSITIVE;
        while x < 1e38 {
            for &v in
                &[x, x * 1.234_567, x * std::f32::consts::FRAC_1_SQRT_2, x * std::f32::consts::SQRT_2, x * 1.999_9]
            {
                let want = f64::from(v).ln();
                let got = f64::from(ln_normal_f32(v));
                let ulp = f64::from(f32::EPSILON) * want.abs().max(1.0);
                assert!((got - want).abs() <= 2.0 * ulp, "ln({v:e}) = {got} vs {want}");
            }
            x *= 2.9;
        }
        assert_eq!(neg_p_ln_p_f32(0.0), 0.0);
        assert!((f64::from(neg_p_ln_p_f32(0.25)) - 0.25 * 4f64.ln()).abs() < 1e-7);
    }

    #[test]
    fn ln_gamma_and_digamma_match_statrs_and_known_values() {
        // Known: ln Gamma(1/2) = ln sqrt(pi), psi(1) = -Euler's gamma, psi(1/2) = -gamma - 2 ln 2.
        let euler = 0.577_215_664_901_532_9;
        let (lg, ps) = ln_gamma_digamma(0.5);
        assert!((lg - 0.5 * std::f64::consts::PI.ln()).abs() < 1e-14);
        assert!((ps - (-euler - 2.0 * 2f64.ln())).abs() < 1e-14);
        assert!((ln_gamma_digamma(1.0).1 + euler).abs() < 1e-14);
        let mut x = 1e-3;
        while x < 1e5 {
            let (lg, ps) = ln_gamma_digamma(x);
            let (want_lg, want_ps) = (statrs::function::gamma::ln_gamma(x), statrs::function::gamma::digamma(x));
            assert!((lg - want_lg).abs() < 2e-13 * want_lg.abs().max(1.0), "ln_gamma({x}) = {lg} vs {want_lg}");
            assert!((ps - want_ps).abs() < 2e-13 * want_ps.abs().max(1.0), "digamma({x}) = {ps} vs {want_ps}");
            x *= 1.37;
        }
        assert!(ln_gamma_digamma(0.0).0.is_nan());
    }

    #[test]
    fn log_sum_exp_is_stable() {
        assert!((log_sum_exp(&[1000.0, 1000.0]) - (1000.0 + 2f64.ln())).abs() < 1e-12);
        assert_eq!(log_sum_exp(&[]), f64::NEG_INFINITY);
        assert!((log_sum_exp(&[0.0, 0.0_f64.ln()]) - 0.0).abs() < 1e-15);
    }

    #[test]
    fn deterministic_sum_is_independent_of_thread_count() {
        let x: Vec<f64> = (0..100_003).map(|i| ((i * 7919) % 1000) as f64 * 1e-3 + 1e-9 * i as f64).collect();
        let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
        let four = rayon::ThreadPoolBuilder::new().num_threads(4).build().unwrap();
        let a = one.install(|| det_sum(&x));
        let b = four.install(|| det_sum(&x));
        assert_eq!(a.to_bits(), b.to_bits());
        let naive: f64 = x.iter().sum();
        assert!((a - naive).abs() < 1e-8 * naive);
    }
}
