//! R bindings of credence: converts R vectors to the core's types and back. No statistics
//! here; every number comes from the `credence` crate.
//!
//! Errors from the core arrive in R as ordinary errors carrying the core's message (extendr
//! turns an `Err` into a panic that its wrapper catches and rethrows with `Rf_error`). The panic
//! hook registered by `src/entrypoint.c` keeps those caught panics off stderr.

use extendr_api::prelude::*;

mod across;
mod audit;
mod credal;
mod fit;
mod json;
mod metrics;
mod plan;
mod quantiles;
mod study;
mod summary;
mod table;
mod worker;

/// Maps a core error (or any displayable error) to the message R shows.
pub(crate) fn msg(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Whole non-negative number from an R double (seeds, counts).
pub(crate) fn count(name: &str, x: f64) -> std::result::Result<u64, String> {
    if x.is_finite() && x >= 0.0 && x.fract() == 0.0 && x < 2f64.powi(53) {
        Ok(x as u64)
    } else {
        Err(format!("{name} = {x}: expected a whole number >= 0"))
    }
}

/// Panics on purpose (tests check that a Rust panic becomes an R error and R survives).
#[extendr]
fn glue_panic_for_tests(message: &str) -> i32 {
    panic!("{message}")
}

extendr_module! {
    mod credence;
    use across;
    use audit;
    use credal;
    use fit;
    use metrics;
    use plan;
    use quantiles;
    use study;
    use summary;
    use table;
    fn glue_panic_for_tests;
}
