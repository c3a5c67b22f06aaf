# The Rust routines of the glue crate (src/rust, registered by src/entrypoint.c): one R function
# each, named as the Rust function and with its argument names, whose body is the .Call alone
# (internal; checks and conversions stay with the callers).

# src/rust/src/fit.rs: fits on one data set and what is read from them
glue_fit <- function(request, group, pair, y, trials, training, training_name, cores, progress) {
  .Call(wrap__glue_fit, request, group, pair, y, trials, training, training_name, cores, progress)
}
glue_backend <- function(name) .Call(wrap__glue_backend, name)
glue_summary <- function(f) .Call(wrap__glue_summary, f)
glue_info <- function(f) .Call(wrap__glue_info, f)
glue_draws <- function(f) .Call(wrap__glue_draws, f)
glue_prob_better <- function(f) .Call(wrap__glue_prob_better, f)
glue_prob_better_target <- function(f, target) .Call(wrap__glue_prob_better_target, f, target)
glue_prob_better_pair <- function(f, a, b) .Call(wrap__glue_prob_better_pair, f, a, b)
glue_nuts_params <- function(f) .Call(wrap__glue_nuts_params, f)
glue_priors <- function(f) .Call(wrap__glue_priors, f)
glue_mdd <- function(f, a, b, power, r_new) .Call(wrap__glue_mdd, f, a, b, power, r_new)
glue_mdd_curve <- function(fits, n, a, b, power, r_new) {
  .Call(wrap__glue_mdd_curve, fits, n, a, b, power, r_new)
}
glue_predict <- function(f, n, seed) .Call(wrap__glue_predict, f, n, seed)

# src/rust/src/across.rs: the model across data sets
glue_fit_across <- function(request, dataset, method, realization, y, metric, cores, progress) {
  .Call(wrap__glue_fit_across, request, dataset, method, realization, y, metric, cores, progress)
}

# src/rust/src/summary.rs: the fit's summary (FitSummary)
glue_fit_summary <- function(f, power, r_new, rope, pairs) {
  .Call(wrap__glue_fit_summary, f, power, r_new, rope, pairs)
}
glue_paper_table <- function(f, format) .Call(wrap__glue_paper_table, f, format)
glue_fit_sentences <- function(f, metric, rope) .Call(wrap__glue_fit_sentences, f, metric, rope)

# src/rust/src/plan.rs: planning the number of realizations
glue_plan <- function(fit, stated, options, backend, cores, progress) {
  .Call(wrap__glue_plan, fit, stated, options, backend, cores, progress)
}

# src/rust/src/audit.rs: the calibration audit
glue_audit <- function(request, models, options, group, pair, y, trials, cores, progress) {
  .Call(wrap__glue_audit, request, models, options, group, pair, y, trials, cores, progress)
}

glue_audit_across <- function(request, options, dataset, group, pair, y, cores, progress) {
  .Call(wrap__glue_audit_across, request, options, dataset, group, pair, y, cores, progress)
}

# src/rust/src/table.rs: the metric table of a manifest
glue_metrics_table <- function(manifest, options, cores, progress) {
  .Call(wrap__glue_metrics_table, manifest, options, cores, progress)
}

# src/rust/src/metrics.rs: metrics
glue_crps_gaussian <- function(mean, sd, y) .Call(wrap__glue_crps_gaussian, mean, sd, y)
glue_nll_gaussian <- function(mean, sd, y) .Call(wrap__glue_nll_gaussian, mean, sd, y)
glue_crps_mixture <- function(means, sds, rows, cols, weights, y, backend) {
  .Call(wrap__glue_crps_mixture, means, sds, rows, cols, weights, y, backend)
}
glue_crps_sample <- function(draws, rows, cols, y, estimator) {
  .Call(wrap__glue_crps_sample, draws, rows, cols, y, estimator)
}
glue_interval_score <- function(lower, upper, y, alpha) {
  .Call(wrap__glue_interval_score, lower, upper, y, alpha)
}
glue_interval_coverage <- function(lower, upper, y) .Call(wrap__glue_interval_coverage, lower, upper, y)
glue_ece <- function(probs, dim, y, bins) .Call(wrap__glue_ece, probs, dim, y, bins)
glue_classwise_ece <- function(probs, dim, y, bins) .Call(wrap__glue_classwise_ece, probs, dim, y, bins)
glue_risk_coverage <- function(probs, dim, y) .Call(wrap__glue_risk_coverage, probs, dim, y)
glue_corp <- function(probs, dim, y, resamples, level, seed) {
  .Call(wrap__glue_corp, probs, dim, y, resamples, level, seed)
}
glue_regression_calibration <- function(forecast, y) .Call(wrap__glue_regression_calibration, forecast, y)
glue_recalibrate <- function(method, forecast, y, validation, val_y) {
  .Call(wrap__glue_recalibrate, method, forecast, y, validation, val_y)
}
glue_group_calibration <- function(forecast, y, options) .Call(wrap__glue_group_calibration, forecast, y, options)
glue_brier <- function(probs, dim, y) .Call(wrap__glue_brier, probs, dim, y)
glue_entropy_decomposition <- function(probs, dim) .Call(wrap__glue_entropy_decomposition, probs, dim)
glue_ensemble_on <- function(probs, dim, y, bins, backend) {
  .Call(wrap__glue_ensemble_on, probs, dim, y, bins, backend)
}
glue_auroc <- function(scores, positive) .Call(wrap__glue_auroc, scores, positive)
glue_referral_curve <- function(probs, dim, y, fractions, uncertainty, repeats, seed) {
  .Call(wrap__glue_referral_curve, probs, dim, y, fractions, uncertainty, repeats, seed)
}
glue_roc_curve <- function(scores, positive) .Call(wrap__glue_roc_curve, scores, positive)

# src/rust/src/credal.rs: credal-set evaluation
glue_credal <- function(kind, values, dim, upper, budget_file, budget_classes, budget_lengths, n_classes,
                        labels, lambdas, normalisation, vertices, draws, seed, js, uncertainty_unit) {
  .Call(wrap__glue_credal, kind, values, dim, upper, budget_file, budget_classes, budget_lengths, n_classes,
        labels, lambdas, normalisation, vertices, draws, seed, js, uncertainty_unit)
}
glue_credal_budget <- function(values, dim, labels, size) {
  .Call(wrap__glue_credal_budget, values, dim, labels, size)
}
glue_credal_rank <- function(names, reports, lambdas) .Call(wrap__glue_credal_rank, names, reports, lambdas)

# src/rust/src/quantiles.rs: quantiles over repeated runs
glue_quantiles <- function(x, u, level, method, quantile_type, replicates, seed, flip_lower, asymptotic_at,
                           bootstrap_statistic) {
  .Call(wrap__glue_quantiles, x, u, level, method, quantile_type, replicates, seed, flip_lower, asymptotic_at,
        bootstrap_statistic)
}
glue_quantile_min_n <- function(u, level) .Call(wrap__glue_quantile_min_n, u, level)

# src/rust/src/study.rs: summaries of a study table
glue_convergence <- function(n, method, converged) .Call(wrap__glue_convergence, n, method, converged)
glue_variance_decomposition <- function(n, method, realization, train_rep, value) {
  .Call(wrap__glue_variance_decomposition, n, method, realization, train_rep, value)
}

# src/rust/src/lib.rs: tests
glue_panic_for_tests <- function(message) .Call(wrap__glue_panic_for_tests, message)
