//! Finite-difference checks of analytic gradients.

/// The largest relative error |fd - g| / (1e-4 + |g|) over the coordinates of `x` of the
/// analytic gradient `grad` against central differences with step `h`: `f(x, i)` evaluates
/// the function at `x`, whose coordinate `i` is moved by +-h (and restored afterwards).
pub fn central_difference_error(x: &mut [f64], grad: &[f64], h: f64, mut f: impl FnMut(&[f64], usize) -> f64) -> f64 {
    let mut worst: f64 = 0.0;
    for i in 0..x.len() {
        let orig = x[i];
        x[i] = orig + h;
        let up = f(x, i);
        x[i] = orig - h;
        let down = f(x, i);
        x[i] = orig;
        let fd = (up - down) / (2.0 * h);
        worst = worst.max((fd - grad[i]).abs() / (1e-4 + grad[i].abs()));
    }
    worst
}
