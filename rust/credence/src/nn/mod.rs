//! The small network every study method trains: an MLP (d -> 64 -> 64 -> K, ReLU) ([`mlp`])
//! with a heteroscedastic Gaussian head and NLL loss (K = 2, the regression study's, which the
//! GPU kernels mirror) or a softmax head and cross-entropy (the classification study's)
//! ([`head`]), and its optimisers (`optim`).
//!
//! Written once for both float precisions through `Real`: the methods train in `f32` (faster
//! than `f64`, and the precision frameworks use), the gradient checks run in `f64`.

pub mod head;
pub mod mlp;
pub mod optim;

use std::fmt::Debug;
use std::ops::{AddAssign, MulAssign, Neg, SubAssign};

use ndarray::LinalgScalar;
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};

/// The float type a network computes in (`f32` or `f64`).
pub trait Real:
    LinalgScalar + PartialOrd + AddAssign + SubAssign + MulAssign + Neg<Output = Self> + Debug + Send + Sync
{
    /// From an `f64` (rounded for `f32`).
    fn from_f64(v: f64) -> Self;
    /// As an `f64`.
    fn to_f64(self) -> f64;
    /// e^self.
    fn exp(self) -> Self;
    /// The square root.
    fn sqrt(self) -> Self;
    /// Neither infinite nor NaN.
    fn is_finite(self) -> bool;
    /// One standard normal draw.
    fn normal<G: Rng + ?Sized>(rng: &mut G) -> Self;
}

macro_rules! impl_real {
    ($t:ty) => {
        impl Real for $t {
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn exp(self) -> Self {
                <$t>::exp(self)
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            #[inline(always)]
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
            #[inline(always)]
            fn normal<G: Rng + ?Sized>(rng: &mut G) -> Self {
                <StandardNormal as Distribution<$t>>::sample(&StandardNormal, rng)
            }
        }
    };
}
impl_real!(f32);
impl_real!(f64);

/// Derives an independent stream seed from `seed` and a path of stream tags (SplitMix64 finaliser
/// applied per tag), so every consumer of randomness (initialisation, batch order, dropout masks,
/// weight noise, test-time draws, the conformal split; per ensemble member) has its own ChaCha
/// stream: changing how many draws one consumer makes never shifts another.
pub fn stream_seed(seed: u64, tags: &[u64]) -> u64 {
    crate::seeds::stream_seed_path(seed, tags)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_seeds_differ_by_tag_and_path() {
        let s = [stream_seed(7, &[0, 1]), stream_seed(7, &[1, 0]), stream_seed(7, &[0, 2]), stream_seed(8, &[0, 1])];
        for i in 0..s.len() {
            for j in 0..i {
                assert_ne!(s[i], s[j]);
            }
        }
        assert_eq!(stream_seed(7, &[0, 1]), stream_seed(7, &[0, 1]));
    }
}
