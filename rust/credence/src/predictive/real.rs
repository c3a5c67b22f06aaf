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

impl Real for f32 {
    #[inline]
    fn from_f64(x: f64) -> Self {
        x as f32
    }
    #[inline]
    fn finite(self) -> bool {
        self.is_finite()
    }
    #[inline(always)]
    fn neg_p_ln_p(self) -> Self {
        crate::special::neg_p_ln_p_f32(self)
    }
    #[inline]
    fn as_typed_slice(x: &[Self]) -> TypedSlice<'_> {
        TypedSlice::F32(x)
    }
}

impl Real for f64 {
    #[inline]
    fn from_f64(x: f64) -> Self {
        x
    }
    #[inline]
    fn finite(self) -> bool {
        self.is_finite()
    }
    #[inline(always)]
    fn neg_p_ln_p(self) -> Self {
        crate::special::neg_p_ln_p(self)
    }
    #[inline]
    fn as_typed_slice(x: &[Self]) -> TypedSlice<'_> {
        TypedSlice::F64(x)
    }
}
