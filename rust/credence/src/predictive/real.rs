//! The element types a probability array may have.

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// A floating-point element type accepted for large input arrays (`f32` or `f64`).
///
/// Large ensembles are often stored in single precision; metrics read them as they are and
/// accumulate in `f64`, so an `f32` array never has to be copied to `f64`.
pub trait Real:
    sealed::Sealed + Copy + Default + Send + Sync + PartialOrd + Into<f64> + std::fmt::Display + 'static
{
    /// Converts from `f64`, rounding to the nearest representable value.
    fn from_f64(x: f64) -> Self;
    /// `true` if the value is neither infinite nor NaN.
    fn finite(self) -> bool;
    /// The entropy term -p ln p (0 for p <= 0), computed in this type's precision.
    fn neg_p_ln_p(self) -> Self;
    /// The slice as its concrete element type (for the GPU backend's copies to the device).
    fn as_typed_slice(x: &[Self]) -> TypedSlice<'_>;
}

/// A slice of one of the [`Real`] types, by concrete type.
#[derive(Debug, Clone, Copy)]
pub enum TypedSlice<'a> {
    /// Single precision.
    F32(&'a [f32]),
    /// Double precision.
    F64(&'a [f64]),
}

/// `Real` for one float type: its entropy term and its [`TypedSlice`] variant.
macro_rules! real {
    ($t:ty, $neg_p_ln_p:path, $slice:ident) => {
        impl Real for $t {
            #[inline]
            #[allow(clippy::unnecessary_cast)] // the identity for f64
            fn from_f64(x: f64) -> Self {
                x as $t
            }
            #[inline]
            fn finite(self) -> bool {
                self.is_finite()
            }
            #[inline(always)]
            fn neg_p_ln_p(self) -> Self {
                $neg_p_ln_p(self)
            }
            #[inline]
            fn as_typed_slice(x: &[Self]) -> TypedSlice<'_> {
                TypedSlice::$slice(x)
            }
        }
    };
}

real!(f32, crate::special::neg_p_ln_p_f32, F32);
real!(f64, crate::special::neg_p_ln_p, F64);
