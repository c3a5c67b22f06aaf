# Metric functions for vectors and matrices. The R side only converts types (matrices to values
# plus dimensions, 1-based labels and factors to 0-based class indices); every number comes
# from the Rust core (credence::metrics).

# Class labels as 0-based integers: a factor uses its level codes, numbers must be 1..K.
as_class_index <- function(y) {
  if (is.factor(y)) return(as.integer(y) - 1L)
  if (is.logical(y)) return(as.integer(y))
  if (!is.numeric(y)) stop("labels: expected a factor or integer classes 1..K, got ", class(y)[1])
  as.integer(y) - 1L
}

# Probabilities as values plus dimensions (an N x K matrix or an S x N x K array).
as_probs <- function(probs) {
  if (is.data.frame(probs)) probs <- as.matrix(probs)
  d <- dim(probs)
  if (is.null(d) || !length(d) %in% 2:3) {
    stop("probs: expected an N x K matrix or an S x N x K array")
  }
  list(values = as.double(probs), dim = as.integer(d))
}

# A backend name: "auto" (the GPU when CUDA is usable, else the CPU), "cpu" or "cuda".
check_backend <- function(backend, fn) {
  if (!is.character(backend) || length(backend) != 1L || !backend %in% c("auto", "cpu", "cuda")) {
    stop(fn, ": backend must be \"auto\", \"cpu\" or \"cuda\"", call. = FALSE)
  }
  backend
}

#' @export
credence_backend <- function(backend = "auto") {
  b <- core("credence_backend", glue_backend(check_backend(backend, "credence_backend")))
  structure(b$backend, cuda_unavailable = if (nzchar(b$cuda_unavailable)) b$cuda_unavailable else NULL)
}

as_matrix <- function(x, name) {
  if (is.data.frame(x)) x <- as.matrix(x)
  if (is.null(dim(x))) x <- matrix(x, nrow = 1L)
  if (length(dim(x)) != 2L) stop(name, ": expected a matrix")
  x
}

#' @export
crps_gaussian <- function(y, mean, sd) {
  glue_crps_gaussian(as.double(mean), as.double(sd), as.double(y))
}

#' @export
nll_gaussian <- function(y, mean, sd) {
  glue_nll_gaussian(as.double(mean), as.double(sd), as.double(y))
}

#' @export
crps_mixture <- function(y, means, sds, weights = NULL, backend = "auto") {
  check_backend(backend, "crps_mixture")
  means <- as_matrix(means, "means")
  sds <- as_matrix(sds, "sds")
  if (!identical(dim(means), dim(sds))) stop("means and sds: expected matrices of the same dimensions")
  w <- if (is.null(weights)) NULL else as.double(weights)
  # "cpu": the crate's mixture metrics directly; otherwise kernel 2's seam
  # (credence::backend::mixture_summary), which runs on the CPU where CUDA cannot.
  if (backend == "cpu") {
    return(glue_crps_mixture(as.double(means), as.double(sds), nrow(means), ncol(means), w, as.double(y)))
  }
  core("crps_mixture", glue_crps_mixture_on(as.double(means), as.double(sds), nrow(means), ncol(means), w,
                                            as.double(y), backend))
}

#' @export
crps_sample <- function(y, dat, estimator = c("standard", "fair")) {
  estimator <- match.arg(estimator)
  dat <- if (is.null(dim(dat))) matrix(dat, nrow = 1L) else as_matrix(dat, "dat")
  glue_crps_sample(as.double(dat), nrow(dat), ncol(dat), as.double(y), estimator)
}

#' @export
picp <- function(y, lower, upper) {
  glue_interval_coverage(as.double(lower), as.double(upper), as.double(y))[1]
}

#' @export
mpiw <- function(lower, upper) {
  # The width does not depend on the observations; the lower bounds stand in for them.
  glue_interval_coverage(as.double(lower), as.double(upper), as.double(lower))[2]
}

#' @export
interval_score <- function(y, lower, upper, alpha = 0.1) {
  glue_interval_score(as.double(lower), as.double(upper), as.double(y), as.double(alpha))
}

#' @export
ece <- function(probs, y, bins = 15L, backend = "auto") {
  check_backend(backend, "ece")
  p <- as_probs(probs)
  # "cpu": the crate's metrics directly; otherwise kernel 1's seam
  # (credence::backend::ensemble_summary), which runs on the CPU where CUDA cannot.
  if (backend == "cpu") return(glue_ece(p$values, p$dim, as_class_index(y), as.integer(bins)))
  core("ece", glue_ensemble_on(p$values, p$dim, as_class_index(y), as.integer(bins), backend))$ece
}

#' @export
brier <- function(probs, y, backend = "auto") {
  check_backend(backend, "brier")
  p <- as_probs(probs)
  if (backend == "cpu") return(glue_brier(p$values, p$dim, as_class_index(y)))
  core("brier", glue_ensemble_on(p$values, p$dim, as_class_index(y), 1L, backend))$brier
}

#' @export
entropy_decomposition <- function(probs, backend = "auto") {
  check_backend(backend, "entropy_decomposition")
  p <- as_probs(probs)
  if (backend == "cpu") return(as.data.frame(glue_entropy_decomposition(p$values, p$dim)))
  r <- core("entropy_decomposition", glue_ensemble_on(p$values, p$dim, NULL, 0L, backend))
  data.frame(total = r$total, aleatoric = r$aleatoric, epistemic = r$epistemic)
}

#' @export
auroc <- function(scores, positive) {
  if (is.factor(positive)) {
    if (nlevels(positive) != 2L) stop("positive: expected a logical or a two-level factor")
    positive <- as.integer(positive) == 2L
  }
  a <- glue_auroc(as.double(scores), as.integer(as.logical(positive)))
  if (is.nan(a)) NA_real_ else a
}

#' @export
referral_curve <- function(probs, y, fractions = seq(0.1, 1, by = 0.1),
                           uncertainty = c("entropy", "expected_entropy", "mutual_information",
                                           "bernoulli_sd", "sample_sd", "one_minus_confidence"),
                           repeats = 100L, seed = 1) {
  uncertainty <- match.arg(uncertainty)
  p <- as_probs(probs)
  r <- as.data.frame(glue_referral_curve(p$values, p$dim, as_class_index(y), as.double(fractions), uncertainty,
                                         as.integer(repeats), as.double(seed)))
  r$n <- as.integer(r$n)
  for (k in c("accuracy", "auroc", "random_accuracy", "random_auroc", "random_auroc_mcse")) {
    r[[k]][is.nan(r[[k]])] <- NA_real_
  }
  r
}

#' @export
roc_curve <- function(scores, positive) {
  if (is.factor(positive)) {
    if (nlevels(positive) != 2L) stop("positive: expected a logical or a two-level factor")
    positive <- as.integer(positive) == 2L
  }
  r <- glue_roc_curve(as.double(scores), as.integer(as.logical(positive)))
  if (is.null(r)) return(NULL)
  as.data.frame(r)
}
