//! Philox4x32-10, the counter-based random number generator of Salmon, Moraes, Dror & Shaw
//! (2011, "Parallel random numbers: as easy as 1, 2, 3"; the Random123 library and cuRAND's
//! `curand_Philox4x32_10`), and the stream layout the batched samplers use.
//!
//! A counter-based generator maps (counter, key) to random bits with no state besides the
//! counter, so any chain of any data set can draw its numbers without touching another's:
//! the CPU sampler and a CUDA kernel produce the same streams by using the same layout.
//!
//! # Stream layout
//!
//! The key is the 64-bit run seed (low word, high word). The 128-bit counter is
//! `[block_lo, block_hi, stream, data_set]`: `data_set` is the index of the design in the
//! batch, `stream` the index of the chain within it (superchain initial points use
//! `0x8000_0000 | superchain`), and `block` counts the 4-word blocks that stream has used.
//! A GPU thread that owns one chain keeps only its block counter in a register.
//!
//! Kernel 4's stochastic passes (`backend/dropout.rs`, `backend/weight_samples.rs`) use the
//! same generator: weight samples are the stream `e` (the member) of data set `0x5747_0000`;
//! MC-dropout masks use the counter `[pass, point, layer, unit / 4]` (its last word < 16).

/// The Philox4x32 multipliers and Weyl key increments (Random123's `PHILOX_M4x32_*`,
/// `PHILOX_W32_*`).
const M0: u32 = 0xD251_1F53;
const M1: u32 = 0xCD9E_8D57;
const W0: u32 = 0x9E37_79B9;
const W1: u32 = 0xBB67_AE85;

/// Bit of the `stream` word that marks a superchain's initial-point stream.
pub(crate) const INIT_STREAM: u32 = 0x8000_0000;

/// One Philox4x32-10 block: 4 random words from a counter and a key.
pub(crate) fn philox4x32_10(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let mut c = counter;
    let mut k = key;
    for round in 0..10 {
        if round > 0 {
            k[0] = k[0].wrapping_add(W0);
            k[1] = k[1].wrapping_add(W1);
        }
        let p0 = u64::from(M0) * u64::from(c[0]);
        let p1 = u64::from(M1) * u64::from(c[2]);
        let (hi0, lo0) = ((p0 >> 32) as u32, p0 as u32);
        let (hi1, lo1) = ((p1 >> 32) as u32, p1 as u32);
        c = [hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0];
    }
    c
}

/// A uniform in (0, 1) from two words: the top 52 random bits, offset by half a unit so that
/// neither 0 nor 1 occurs (logs and Box-Muller stay finite; with 53 bits the largest value
/// would round to 1).
pub(crate) fn uniform_open(hi: u32, lo: u32) -> f64 {
    let bits = ((u64::from(hi) << 32) | u64::from(lo)) >> 12;
    (bits as f64 + 0.5) / (1u64 << 52) as f64
}

/// The random numbers of one stream: uniforms and standard normals, drawn in blocks.
#[derive(Debug, Clone)]
pub(crate) struct Stream {
    key: [u32; 2],
    stream: u32,
    data_set: u32,
    block: u64,
    /// A second normal left over from the last Box-Muller pair.
    spare: Option<f64>,
}

impl Stream {
    /// The stream `stream` of data set `data_set` under `seed`.
    pub(crate) fn new(seed: u64, data_set: u32, stream: u32) -> Self {
        Self { key: [seed as u32, (seed >> 32) as u32], stream, data_set, block: 0, spare: None }
    }

    /// The block counter and the spare normal (the state a kernel keeps per chain).
    #[cfg(test)]
    pub(crate) fn state(&self) -> (u64, Option<f64>) {
        (self.block, self.spare)
    }

    fn next_block(&mut self) -> [u32; 4] {
        let counter = [self.block as u32, (self.block >> 32) as u32, self.stream, self.data_set];
        self.block += 1;
        philox4x32_10(counter, self.key)
    }

    /// One uniform in (0, 1) (uses a whole block; the MH test draws one per iteration).
    pub(crate) fn uniform(&mut self) -> f64 {
        let b = self.next_block();
        uniform_open(b[0], b[1])
    }

    /// One standard normal: Box-Muller on the two uniforms of a block, the sine half kept for
    /// the next call.
    pub(crate) fn normal(&mut self) -> f64 {
        if let Some(z) = self.spare.take() {
            return z;
        }
        let b = self.next_block();
        let (u, v) = (uniform_open(b[0], b[1]), uniform_open(b[2], b[3]));
        let r = (-2.0 * u.ln()).sqrt();
        let (s, c) = (std::f64::consts::TAU * v).sin_cos();
        self.spare = Some(r * s);
        r * c
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random123's kat_vectors for philox4x32 with 10 rounds (counter, key, expected output).
    #[test]
    fn matches_the_random123_known_answers() {
        assert_eq!(philox4x32_10([0; 4], [0; 2]), [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]);
        assert_eq!(philox4x32_10([u32::MAX; 4], [u32::MAX; 2]), [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd]);
        assert_eq!(
            philox4x32_10([0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344], [0xa409_3822, 0x299f_31d0]),
            [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1]
        );
    }

    #[test]
    fn uniforms_stay_inside_the_open_interval() {
        assert!(uniform_open(0, 0) > 0.0);
        assert!(uniform_open(u32::MAX, u32::MAX) < 1.0);
    }

    #[test]
    fn normals_have_unit_moments_and_streams_differ() {
        let mut s = Stream::new(7, 3, 1);
        let n = 200_000;
        let z: Vec<f64> = (0..n).map(|_| s.normal()).collect();
        let mean = z.iter().sum::<f64>() / n as f64;
        let var = z.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n as f64 - 1.0);
        let kurt = z.iter().map(|v| (v - mean).powi(4)).sum::<f64>() / n as f64 / (var * var);
        // Standard errors: mean 1/sqrt(n) = 0.0022, variance sqrt(2/n) = 0.0032, kurtosis
        // sqrt(24/n) = 0.011; the bounds are about 4.5 standard errors.
        assert!(mean.abs() < 0.01, "{mean}");
        assert!((var - 1.0).abs() < 0.015, "{var}");
        assert!((kurt - 3.0).abs() < 0.05, "{kurt}");
        let mut a = Stream::new(7, 3, 2);
        let mut b = Stream::new(7, 4, 1);
        let mut c = Stream::new(7, 3, 1);
        let first = c.normal();
        assert_eq!(first, z[0]);
        assert_ne!(a.normal(), first);
        assert_ne!(b.normal(), first);
    }
}
