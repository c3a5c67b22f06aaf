# Thin wrappers over the Rust routines registered by src/entrypoint.c (internal).
glue_fit <- function(...) .Call(wrap__glue_fit, ...)
glue_summary <- function(f) .Call(wrap__glue_summary, f)
glue_info <- function(f) .Call(wrap__glue_info, f)
glue_panic_for_tests <- function(message) .Call(wrap__glue_panic_for_tests, message)
