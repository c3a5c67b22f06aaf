# Thin wrappers over the fit routines of the Rust glue (src/rust/src/fit.rs; internal).
glue_draws <- function(f) .Call(wrap__glue_draws, f)
glue_prob_better <- function(f) .Call(wrap__glue_prob_better, f)
glue_prob_better_pair <- function(f, a, b) .Call(wrap__glue_prob_better_pair, f, a, b)
glue_mdd <- function(f, a, b, power, r_new) .Call(wrap__glue_mdd, f, a, b, power, r_new)
glue_mdd_curve <- function(fits, n, a, b, power, r_new) .Call(wrap__glue_mdd_curve, fits, n, a, b, power, r_new)
glue_predict <- function(f, n, seed) .Call(wrap__glue_predict, f, n, seed)
glue_nuts_params <- function(f) .Call(wrap__glue_nuts_params, f)
glue_priors <- function(f) .Call(wrap__glue_priors, f)
