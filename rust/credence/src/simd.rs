//! Runtime CPU-feature dispatch for the vectorised hot loops.
//!
//! The hot loops are plain Rust written so that LLVM vectorises them (fixed-size chunks,
//! independent lane accumulators, branch-free math). A kernel is compiled twice, once as is
//! (SSE2 on x86-64) and once inside a `#[target_feature(enable = "avx2")]` function, and
//! [`avx2`] picks at run time. Rust never contracts `a * b + c` into an FMA and every loop keeps
//! its lane order, so both copies give bit-identical results.

/// Whether the CPU running us has AVX2 (cached by std after the first call).
#[inline]
pub fn avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Defines `fn $name` that runs the `#[inline(always)]` function `$portable` with the same
/// arguments, compiled for AVX2 when [`avx2`] says the CPU has it.
#[macro_export]
#[doc(hidden)]
macro_rules! avx2_dispatch {
    ($(#[$doc:meta])* $vis:vis fn $name:ident $(<$T:ident: $bound:path>)? ($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty => $portable:ident) => {
        $(#[$doc])*
        $vis fn $name $(<$T: $bound>)? ($($arg: $ty),*) -> $ret {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2")]
                fn with_avx2 $(<$T: $bound>)? ($($arg: $ty),*) -> $ret {
                    $portable($($arg),*)
                }
                if $crate::simd::avx2() {
                    // SAFETY: `with_avx2` needs AVX2 and the CPU has it (checked just above).
                    #[allow(unsafe_code)]
                    return unsafe { with_avx2($($arg),*) };
                }
            }
            $portable($($arg),*)
        }
    };
}
pub use crate::avx2_dispatch;
