# Thin wrappers over the Rust routines registered by src/entrypoint.c (internal).
glue_fit <- function(...) .Call(wrap__glue_fit, ...)
glue_summary <- function(f) .Call(wrap__glue_summary, f)
glue_info <- function(f) .Call(wrap__glue_info, f)
glue_panic_for_tests <- function(message) .Call(wrap__glue_panic_for_tests, message)
glue_fit_chees <- function(...) .Call(wrap__glue_fit_chees, ...)
glue_backend <- function(name) .Call(wrap__glue_backend, name)
# Thin wrappers over the planning routines (src/rust/src/plan.rs; internal).
glue_plan_pilot <- function(...) .Call(wrap__glue_plan_pilot, ...)
glue_plan_stated <- function(...) .Call(wrap__glue_plan_stated, ...)
