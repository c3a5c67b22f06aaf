//! Quantiles.
