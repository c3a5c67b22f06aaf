//! The two bases in which the dual form factors S' (`dual.rs`): (mu0, gamma) itself, and
//! (s, phi, t) with s = mu0 + gamma_R, phi_c = gamma_c - gamma_R (c < R) and t = gamma_R
//! (`centred`), in which gamma's level t is apart from the cell locations the data fix. The
//! coefficients of the quantities the likelihood and the draws need, in either basis.

/// The coefficients of the cell location mu0 + gamma_c (column `c` of `r`) in the basis
/// `centred` says (module doc), into `out` (n).
pub(super) fn cell_vector(centred: bool, r: usize, c: usize, out: &mut [f64]) {
    out.fill(0.0);
    out[0] = 1.0;
    if r > 0 && !(centred && c + 1 == r) {
        out[1 + c] = 1.0;
    }
}

/// The value of that cell location at `x`.
pub(super) fn cell_location(centred: bool, r: usize, c: usize, x: &[f64]) -> f64 {
    x[0] + if r > 0 && !(centred && c + 1 == r) { x[1 + c] } else { 0.0 }
}

/// The coefficients of K mu0 + sum_c k_c gamma_c for the row of counts `k` (total K).
pub(super) fn row_vector(centred: bool, total: f64, k: &[f64], r: usize, out: &mut [f64]) {
    out[0] = total;
    out[1..=r].copy_from_slice(&k[..r]);
    if centred && r > 0 {
        out[r] = 0.0;
    }
}

/// The coefficients of gamma_c (r > 0).
pub(super) fn gamma_vector(centred: bool, r: usize, c: usize, out: &mut [f64]) {
    out.fill(0.0);
    if !centred {
        out[1 + c] = 1.0;
        return;
    }
    out[r] = 1.0;
    if c + 1 < r {
        out[1 + c] = 1.0;
    }
}

/// (mu0, gamma) from the coordinates `x` of either basis.
pub(super) fn to_theta(centred: bool, r: usize, x: &[f64], theta: &mut [f64]) {
    theta.copy_from_slice(x);
    if centred && r > 0 {
        let t = x[r];
        theta[0] = x[0] - t;
        for c in 0..r - 1 {
            theta[1 + c] = x[1 + c] + t;
        }
    }
}
