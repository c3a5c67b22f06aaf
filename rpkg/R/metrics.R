# Metric functions for vectors and matrices. The R side only converts types (matrices to values
# plus dimensions, 1-based labels and factors to 0-based class indices); every number comes
# from the Rust core (credence::metrics).

# Class labels as 0-based integers: a factor uses its level codes, numbers must be 1..K.
as_class_index <- function(y) {
  # NA would reach the core as the integer NA (-2147483648); name its place instead.
  if (anyNA(y)) stop("labels: NA at index ", which(is.na(y))[1], "; expected a class for every point", call. = FALSE)
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

#' @title Where the computations of a backend run
#'
#' @description Functions with a GPU path (\code{\link{plan_realizations}}, \code{\link{credence_fit}} with
#' \code{sampler = "chees"}, \code{\link{ece}}, \code{\link{brier}},
#' \code{\link{entropy_decomposition}}, \code{\link{crps_mixture}}) take \code{backend = "auto"}:
#' the GPU when a CUDA driver, a device and NVRTC are present (the CUDA kernels are compiled at
#' first use), else the CPU, which is the reference implementation. \code{backend = "cpu"} forces
#' the CPU and \code{backend = "cuda"} the GPU, an R error saying what is missing when CUDA cannot
#' run. \code{credence_backend} says where a backend runs here.
#' @param backend \code{"auto"}, \code{"cpu"} or \code{"cuda"}.
#' @return \code{"cpu"} or \code{"cuda"}, with attribute \code{cuda_unavailable}: why CUDA cannot run
#'   here (\code{NULL} when it can). An error for \code{"cuda"} where CUDA cannot run.
#' @examples
#' credence_backend()
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

#' @title Continuous ranked probability score
#'
#' @description Per-point CRPS of Gaussian, Gaussian-mixture and sample (ensemble, MC) predictive
#' distributions, computed by the Rust core. Lower is better.
#' @param y Numeric vector of observations, length N.
#' @param mean,sd Numeric vectors of predictive means and standard deviations (sd > 0), length N.
#' @param means,sds N x M matrices of the mixture members' means and standard deviations
#'   (one row per point, one column per member).
#' @param weights Member weights, length M, non-negative and summing to 1; \code{NULL} for equal
#'   weights.
#' @param backend \code{"auto"}, \code{"cpu"} or \code{"cuda"} (see \code{\link{credence_backend}}).
#'   Other than \code{"cpu"}, the mixture CRPS goes through the core's kernel 2
#'   (\code{credence::backend::mixture_summary}): on the GPU where CUDA runs, else on the CPU with
#'   the same numbers as \code{"cpu"} (to rounding).
#' @param dat N x S matrix of predictive draws (one row per point); a plain vector is one point.
#' @param estimator \code{"standard"} uses E|X - X'| over all S^2 pairs, \code{"fair"} the
#'   unbiased S(S - 1) version.
#' @return A numeric vector of length N.
#'
#' @details The Gaussian CRPS is the closed form
#' \eqn{\sigma[z(2\Phi(z) - 1) + 2\phi(z) - 1/\sqrt{\pi}]}, \eqn{z = (y - \mu)/\sigma}; the
#' mixture uses the closed form of E|X - y| - E|X - X'|/2 for Gaussian mixtures; samples use the
#' energy form.
#' @examples
#' crps_gaussian(y = c(0, 1), mean = c(0, 0), sd = c(1, 2))
#' crps_mixture(0.3, means = matrix(c(-1, 1), 1), sds = matrix(c(1, 1), 1))
#' set.seed(1)
#' crps_sample(0.3, rnorm(100))
#' @name crps
#' @export
crps_gaussian <- function(y, mean, sd) {
  glue_crps_gaussian(num_vec(mean, "mean"), num_vec(sd, "sd"), num_vec(y, "y"))
}

#' @title Gaussian negative log-likelihood
#'
#' @description Per-point negative log density of the observations under Gaussian predictions,
#' computed by the Rust core.
#' @param y Numeric vector of observations, length N.
#' @param mean,sd Numeric vectors of predictive means and standard deviations (sd > 0).
#' @return A numeric vector of length N, equal to \code{-dnorm(y, mean, sd, log = TRUE)}.
#' @examples
#' nll_gaussian(c(0, 1), c(0, 0), c(1, 1))
#' @export
nll_gaussian <- function(y, mean, sd) {
  glue_nll_gaussian(num_vec(mean, "mean"), num_vec(sd, "sd"), num_vec(y, "y"))
}

#' @rdname crps
#' @export
crps_mixture <- function(y, means, sds, weights = NULL, backend = "auto") {
  check_backend(backend, "crps_mixture")
  means <- as_matrix(means, "means")
  sds <- as_matrix(sds, "sds")
  if (!identical(dim(means), dim(sds))) stop("means and sds: expected matrices of the same dimensions")
  w <- if (is.null(weights)) NULL else as.double(weights)
  # "cpu": the crate's mixture metrics directly, their errors as they are; otherwise kernel 2's
  # seam (credence::backend::mixture_summary), which runs on the CPU where CUDA cannot.
  run <- function() glue_crps_mixture(as.double(means), as.double(sds), nrow(means), ncol(means), w, as.double(y),
                                      backend)
  if (backend == "cpu") return(run())
  core("crps_mixture", run())
}

#' @rdname crps
#' @export
crps_sample <- function(y, dat, estimator = c("standard", "fair")) {
  estimator <- match.arg(estimator)
  dat <- if (is.null(dim(dat))) matrix(dat, nrow = 1L) else as_matrix(dat, "dat")
  glue_crps_sample(as.double(dat), nrow(dat), ncol(dat), num_vec(y, "y"), estimator)
}

#' @title Prediction-interval metrics
#'
#' @description Coverage (PICP), mean width (MPIW) and the interval score of central prediction intervals,
#' computed by the Rust core.
#' @param y Numeric vector of observations.
#' @param lower,upper Numeric vectors of interval bounds, \code{lower <= upper}.
#' @param alpha The intervals are central (1 - alpha) intervals.
#' @return \code{picp}: the fraction of observations inside their interval; \code{mpiw}: the mean width;
#'   \code{interval_score}: per-point score
#'   \eqn{(u - l) + (2/\alpha)(l - y)1\{y < l\} + (2/\alpha)(y - u)1\{y > u\}} (lower is better).
#' @examples
#' y <- c(0.1, 1.5, -0.2)
#' picp(y, lower = c(-1, -1, -1), upper = c(1, 1, 1))
#' mpiw(c(-1, -1), c(1, 2))
#' interval_score(y, c(-1, -1, -1), c(1, 1, 1), alpha = 0.1)
#' @name intervals
#' @export
picp <- function(y, lower, upper) {
  glue_interval_coverage(num_vec(lower, "lower"), num_vec(upper, "upper"), num_vec(y, "y"))[1]
}

#' @rdname intervals
#' @export
mpiw <- function(lower, upper) {
  # The width does not depend on the observations; the lower bounds stand in for them.
  glue_interval_coverage(as.double(lower), as.double(upper), as.double(lower))[2]
}

#' @rdname intervals
#' @export
interval_score <- function(y, lower, upper, alpha = 0.1) {
  glue_interval_score(num_vec(lower, "lower"), num_vec(upper, "upper"), num_vec(y, "y"), as.double(alpha))
}

#' @title Calibration error and Brier score
#'
#' @description Expected calibration error of the top-class confidence and the multi-class Brier score,
#' computed by the Rust core.
#' @param probs Predicted class probabilities: an N x K matrix, or an S x N x K array of S
#'   members / passes (their mean is scored).
#' @param y Observed classes: integers 1..K, or a factor whose level codes index the columns.
#' @param bins Number of equal-width confidence bins on [0, 1] (bin b holds ((b-1)/B, b/B]).
#' @param backend \code{"auto"}, \code{"cpu"} or \code{"cuda"} (see \code{\link{credence_backend}}).
#'   Other than \code{"cpu"}, the ensemble goes through the core's kernel 1
#'   (\code{credence::backend::ensemble_summary}, members streamed through the GPU in chunks for
#'   large S x N x K arrays): on the GPU where CUDA runs, else on the CPU with the same numbers as
#'   \code{"cpu"} (to rounding).
#' @return \code{ece}: sum over bins of (bin size / N) |mean confidence - accuracy|; \code{brier}: the mean
#'   over points of the sum over classes of (p - one-hot(y))^2.
#' @examples
#' p <- matrix(c(0.7, 0.2, 0.1, 0.1, 0.8, 0.1), nrow = 2, byrow = TRUE)
#' brier(p, c(1, 2))
#' ece(p, c(1, 3), bins = 10)
#' @name classification
#' @export
ece <- function(probs, y, bins = 15L, backend = "auto") {
  check_backend(backend, "ece")
  p <- as_probs(probs)
  # "cpu": the crate's metrics directly; otherwise kernel 1's seam
  # (credence::backend::ensemble_summary), which runs on the CPU where CUDA cannot.
  if (backend == "cpu") return(glue_ece(p$values, p$dim, as_class_index(y), as.integer(bins)))
  core("ece", glue_ensemble_on(p$values, p$dim, as_class_index(y), as.integer(bins), backend))$ece
}

#' @rdname classification
#' @export
brier <- function(probs, y, backend = "auto") {
  check_backend(backend, "brier")
  p <- as_probs(probs)
  if (backend == "cpu") return(glue_brier(p$values, p$dim, as_class_index(y)))
  core("brier", glue_ensemble_on(p$values, p$dim, as_class_index(y), 1L, backend))$brier
}

#' @title Total, aleatoric and epistemic uncertainty
#'
#' @description Splits the entropy of the mean prediction into the expected entropy of the members
#' (aleatoric) and the mutual information (epistemic), per point, computed by the Rust core.
#' @param probs An S x N x K array of class probabilities (S members or passes); an N x K matrix is
#'   one member (its epistemic part is 0).
#' @param backend \code{"auto"}, \code{"cpu"} or \code{"cuda"}, as for \code{\link{ece}} (kernel 1).
#' @return A data frame with columns \code{total} (H of the mean), \code{aleatoric} (mean of H) and
#'   \code{epistemic} (their difference), one row per point; natural logarithms.
#' @examples
#' a <- array(c(0.9, 0.5, 0.1, 0.5), dim = c(2, 1, 2))
#' entropy_decomposition(a)
#' @export
entropy_decomposition <- function(probs, backend = "auto") {
  check_backend(backend, "entropy_decomposition")
  p <- as_probs(probs)
  if (backend == "cpu") return(as.data.frame(glue_entropy_decomposition(p$values, p$dim)))
  r <- core("entropy_decomposition", glue_ensemble_on(p$values, p$dim, NULL, 0L, backend))
  data.frame(total = r$total, aleatoric = r$aleatoric, epistemic = r$epistemic)
}

#' @title Area under the ROC curve
#'
#' @description Exact AUROC (the Mann-Whitney statistic, ties counting 1/2), computed by the Rust
#' core.
#' @param scores Numeric scores, higher meaning more likely positive.
#' @param positive Logical outcomes, or a two-level factor (the second level is positive).
#' @return A number in [0, 1]; \code{NA} when one class is absent.
#' @examples
#' auroc(c(0.1, 0.4, 0.35, 0.8), c(FALSE, FALSE, TRUE, TRUE))
#' @export
auroc <- function(scores, positive) {
  if (is.factor(positive)) {
    if (nlevels(positive) != 2L) stop("positive: expected a logical or a two-level factor")
    positive <- as.integer(positive) == 2L
  }
  a <- glue_auroc(as.double(scores), as.integer(as.logical(positive)))
  if (is.nan(a)) NA_real_ else a
}

#' @title Referral (selective prediction) curve
#'
#' @description Sorts the points by uncertainty, keeps the most certain fraction and scores accuracy and AUROC
#' on it (Leibig et al. 2017), beside the referral benchmark's random-referral baseline (points
#' referred at random instead of by uncertainty: the expected accuracy is the overall accuracy,
#' AUROC is averaged over \code{repeats} seeded random orders); computed by the Rust core.
#' @param probs An N x K matrix or S x N x K array of class probabilities.
#' @param y Observed classes 1..K or a factor.
#' @param fractions Retained fractions in (0, 1]; floor(N f) points are kept.
#' @param uncertainty The uncertainty used to sort (ascending, ties by index).
#' @param repeats,seed Random orders of the baseline and the seed of their stream.
#' @return A data frame with columns \code{fraction}, \code{n}, \code{accuracy} and \code{auroc}
#'   (\code{NA} when undefined), and the baseline's \code{random_accuracy}, \code{random_auroc}
#'   and \code{random_auroc_mcse} (Monte Carlo standard error).
#' @examples
#' p <- matrix(c(0.9, 0.1, 0.6, 0.4, 0.2, 0.8, 0.5, 0.5), ncol = 2, byrow = TRUE)
#' referral_curve(p, c(1, 2, 2, 1), fractions = c(0.5, 1))
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

#' @title Classwise calibration error
#'
#' @description The classwise ECE of Kull et al. (2019): for each class k the ECE of the
#' one-vs-rest predictions (probability p_k, outcome y = k) in equal-width bins, averaged over
#' the K classes (a class absent from \code{y} counts too). Computed by the Rust core
#' (\code{credence::metrics::classwise_ece}).
#' @param probs An N x K matrix or S x N x K array of class probabilities (members averaged).
#' @param y Observed classes 1..K or a factor.
#' @param bins Number of equal-width bins on [0, 1].
#' @return The classwise ECE, a number in [0, 1].
#' @examples
#' p <- matrix(c(0.8, 0.2, 0.8, 0.2), ncol = 2, byrow = TRUE)
#' classwise_ece(p, c(1, 2), bins = 10)  # 0.3
#' @export
classwise_ece <- function(probs, y, bins = 15L) {
  p <- as_probs(probs)
  glue_classwise_ece(p$values, p$dim, as_class_index(y), as.integer(bins))
}

#' @title Risk-coverage curve, AURC and AUGRC
#'
#' @description Selective classification: keeping the points whose top-class confidence
#' max_k p_k is at least a threshold gives, per distinct confidence, a coverage (share kept),
#' a selective risk (error rate among the kept) and a generalized risk (kept errors over all
#' points). AURC (Geifman & El-Yaniv 2017) and AUGRC (Traub et al. 2024) are the trapezoid
#' areas under the two curves, extended to coverage 0 as in Traub et al.'s fd-shifts. Computed
#' by the Rust core (\code{credence::metrics::risk_coverage}); lower is better for both.
#' @inheritParams classwise_ece
#' @return A \code{credence_risk_coverage}: a list with \code{aurc}, \code{augrc} and
#'   \code{curve}, a data frame with columns \code{threshold}, \code{coverage},
#'   \code{selective_risk} and \code{generalized_risk}, by ascending coverage. \code{plot()}
#'   draws both curves (ggplot2 when installed).
#' @examples
#' p <- matrix(c(0.9, 0.1, 0.2, 0.8, 0.7, 0.3, 0.4, 0.6), ncol = 2, byrow = TRUE)
#' risk_coverage(p, c(1, 1, 1, 1))$augrc  # 3/16
#' @export
risk_coverage <- function(probs, y) {
  p <- as_probs(probs)
  r <- glue_risk_coverage(p$values, p$dim, as_class_index(y))
  structure(list(aurc = r$aurc, augrc = r$augrc,
                 curve = data.frame(threshold = r$threshold, coverage = r$coverage,
                                    selective_risk = r$selective_risk, generalized_risk = r$generalized_risk)),
            class = "credence_risk_coverage")
}

#' @title CORP reliability diagram
#'
#' @description The binless reliability diagram of Dimitriadis, Gneiting & Jordan (2021) for the
#' top-class confidence: the isotonic (pool-adjacent-violators) fit of "the prediction is right"
#' on the confidence, with the Brier score's exact decomposition into miscalibration (MCB),
#' discrimination (DSC) and uncertainty (UNC), \code{brier = MCB - DSC + UNC}, and pointwise
#' consistency bands: the fits of outcomes resampled as if the forecast were calibrated.
#' Computed by the Rust core (\code{credence::metrics::corp_reliability}).
#' @inheritParams classwise_ece
#' @param resamples Resamples of the bands (0: none); \code{level} their pointwise probability;
#'   \code{seed} the seed of their stream (the defaults are reliabilitydiag's: 100, 0.9).
#' @param level,seed See \code{resamples}.
#' @return A \code{credence_corp} (\code{plot()} draws the diagram, ggplot2 when installed): a
#'   list with \code{brier}, \code{miscalibration}, \code{discrimination},
#'   \code{uncertainty} and \code{points}, a data frame with one row per distinct confidence:
#'   \code{forecast}, \code{count}, \code{observed} (the fit), \code{band_lower},
#'   \code{band_upper} (\code{NA} without bands).
#' @examples
#' p <- matrix(c(0.9, 0.1, 0.3, 0.7, 0.6, 0.4, 0.2, 0.8), ncol = 2, byrow = TRUE)
#' corp_reliability(p, c(1, 2, 2, 2), resamples = 0)$miscalibration
#' @export
corp_reliability <- function(probs, y, resamples = 100L, level = 0.9, seed = 1) {
  p <- as_probs(probs)
  r <- glue_corp(p$values, p$dim, as_class_index(y), as.integer(resamples), as.double(level), as.double(seed))
  points <- data.frame(forecast = r$forecast, count = as.integer(r$count), observed = r$observed,
                       band_lower = r$band_lower, band_upper = r$band_upper)
  for (k in c("band_lower", "band_upper")) points[[k]][is.nan(points[[k]])] <- NA_real_
  structure(list(brier = r$brier, miscalibration = r$miscalibration, discrimination = r$discrimination,
                 uncertainty = r$uncertainty, points = points), class = "credence_corp")
}

#' @title ROC curve
#'
#' @description The points of the ROC curve at every distinct score, from (0, 0) to (1, 1):
#' predictions with score at least the threshold count as positive. Computed by the Rust core
#' (\code{credence::metrics::roc_curve}); the trapezoid area under these points is
#' \code{\link{auroc}}.
#' @param scores Numeric scores, higher meaning more likely positive.
#' @param positive Logical outcomes, or a two-level factor (the second level is positive).
#' @return A data frame with columns \code{threshold} (\code{Inf} for the origin), \code{fpr} and
#'   \code{tpr}; \code{NULL} when one class is absent.
#' @examples
#' roc_curve(c(0.1, 0.4, 0.35, 0.8), c(FALSE, FALSE, TRUE, TRUE))
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

#' @title Metric table from a manifest of prediction files
#'
#' @description Every metric of each prediction a manifest lists, one row per prediction: the long
#' table that \code{\link{credence_fit}}, \code{\link{plan_realizations}} and the CLI's
#' \code{credence report} read. The manifest is a CSV file with the keys \code{method} and
#' \code{realization} (and any of \code{dataset}, \code{n}, \code{shift}, \code{intensity},
#' \code{train_rep}), the \code{task} (\code{"regression"} or \code{"classification"}) and each
#' prediction's files in columns named like the CLI's flags: \code{mean} and \code{sd} (a Gaussian,
#' or an M x N mixture with optional \code{weights}), \code{samples}, or \code{lower} and
#' \code{upper}, with targets \code{y}; or \code{probs} or \code{logits} with \code{labels}. Files
#' are \code{.npy}, \code{.npz} (\code{file.npz:name}) or numeric \code{.csv}, relative paths taken
#' from the manifest's folder. The rows are computed in parallel by the Rust core; the CLI's
#' \code{credence metrics table MANIFEST --out FILE} writes the same table to a file and resumes an
#' interrupted run.
#' @param manifest Path of the manifest.
#' @param options A named list of options, each left out taking the core's default:
#'   \code{level} (central probability of the intervals, 0.9), \code{sd_floor} (NLL sd floor,
#'   none), \code{crps_estimator} (\code{"standard"} or \code{"fair"}), \code{binning}
#'   (\code{list(kind = "equal_width", bins = 15)} or \code{"equal_mass"}), \code{brier_scale}
#'   (\code{"sum"}, \code{"half"} or \code{"per_class"}), \code{tolerance} (of probabilities,
#'   1e-3).
#' @param cores Threads (\code{NULL}: all cores).
#' @return A data frame: the keys (text; \code{n}, \code{realization}, \code{intensity} and
#'   \code{train_rep} as numbers where every value is one), then the metrics (regression:
#'   \code{crps}, \code{nll}, \code{picp}, \code{mpiw}, \code{interval_score}, \code{rmse},
#'   \code{covered}, \code{n_test}, \code{miscalibration_area}, \code{rms_calibration_error},
#'   \code{mean_absolute_calibration_error}, \code{sharpness}, \code{ence}; classification:
#'   \code{accuracy}, \code{correct}, \code{nll}, \code{brier}, \code{ece}, \code{mce},
#'   \code{classwise_ece}, \code{entropy}, \code{expected_entropy}, \code{mutual_information},
#'   \code{auroc}, \code{aurc}, \code{augrc}, \code{n_test}); \code{NA} where a prediction does
#'   not define a metric (the CRPS of bare intervals, the NLL of samples). An error naming the
#'   manifest's line and the file for a bad row.
#' @examples
#' dir <- tempfile(); dir.create(dir)
#' y <- c(0.1, 0.9, 2.2, 2.9)
#' write.table(y, file.path(dir, "y.csv"), row.names = FALSE, col.names = FALSE)
#' write.table(y + 0.2, file.path(dir, "mean.csv"), row.names = FALSE, col.names = FALSE)
#' write.table(rep(0.5, 4), file.path(dir, "sd.csv"), row.names = FALSE, col.names = FALSE)
#' writeLines(c("method,realization,task,mean,sd,y", "A,0,regression,mean.csv,sd.csv,y.csv"),
#'            file.path(dir, "manifest.csv"))
#' metrics_table(file.path(dir, "manifest.csv"))
#' @export
metrics_table <- function(manifest, options = list(), cores = NULL) {
  if (!is.character(manifest) || length(manifest) != 1L) {
    stop("metrics_table: manifest must be one path", call. = FALSE)
  }
  cols <- core("metrics_table", glue_metrics_table(normalizePath(manifest, mustWork = FALSE), options,
                                                   run_cores(cores), run_progress()))
  for (k in intersect(c("n", "realization", "intensity", "train_rep"), names(cols))) {
    as_num <- suppressWarnings(as.numeric(cols[[k]]))
    if (!anyNA(as_num)) cols[[k]] <- as_num
  }
  for (k in intersect(c("covered", "n_test", "correct"), names(cols))) cols[[k]] <- as.integer(cols[[k]])
  as.data.frame(cols, stringsAsFactors = FALSE, optional = TRUE)
}

# A numeric argument as doubles; a factor (whose codes as.double() would score) or text is an
# error naming it.
num_vec <- function(x, name) {
  if (is.factor(x) || !(is.numeric(x) || is.logical(x))) {
    stop(name, " must be numeric, not ", class(x)[1], if (is.factor(x)) " (as.double() would give its codes)",
         call. = FALSE)
  }
  as.double(x)
}
