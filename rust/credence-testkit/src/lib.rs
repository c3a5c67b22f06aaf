//! Fixtures shared by credence's integration tests and benches, so a test and the bench that
//! measures the same thing judge the same tables: deterministic simulated metric tables
//! ([`fit_data`]), the design families of the clean-fit standard ([`design_families`]) and the
//! simulation-based calibration cases ([`sbc_cases`]), tables of one metric on several data
//! sets ([`across_data`]), the finite-difference check of a gradient ([`gradients`]),
//! prediction files with their manifest ([`predictions`]), cross-validation folds with no true
//! difference ([`cv_folds`]), repeated trainings with no true difference ([`repeats`]) and the
//! tests' input stream ([`lcg_uniforms`]). Not published; a dev-dependency only.

pub mod across_data;
pub mod cv_folds;
pub mod design_families;
pub mod fit_data;
pub mod gradients;
pub mod items;
pub mod predictions;
pub mod repeats;
pub mod sbc_cases;

/// The tests' input stream: a 64-bit LCG (Knuth's MMIX constants) as uniforms in [0, 1) with
/// 53 bits, one stream per seed (the core's unit tests and the CLI tests draw from it).
pub fn lcg_uniforms(seed: u64) -> impl FnMut() -> f64 {
    let mut state = seed;
    move || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    }
}
