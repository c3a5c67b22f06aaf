# Quantiles of a metric over repeated runs with distribution-free confidence intervals
# (credence::quantiles); the R side converts types only.

#' @title Quantiles of a metric over repeated runs, with distribution-free intervals
#'
#' @description Sample quantiles (Hyndman-Fan types 1, 6, 7) of a metric observed over n runs with confidence
#' intervals: exact order-statistic intervals (minimum length or equal-tailed), the asymptotic
#' normal-approximation interval, and Hutson's semiparametric bootstrap (Monte Carlo or its exact
#' limit). Computed by the Rust core (\code{credence::quantiles}), as \code{credence quantiles}.
#' @param x Numeric vector of the metric over runs (finite values).
#' @param u Quantile levels in (0, 1).
#' @param level Confidence level 1 - alpha.
#' @param method Interval construction. \code{"exact"}: [x_(k), x_(l)] of minimum index span with
#'   coverage \eqn{\sum_{s=k}^{l-1} C(n,s)u^s(1-u)^{n-s} \ge 1-\alpha} (ties: larger coverage, then
#'   centre closest to (n + 1)u, then smaller k).
#' @param type Sample-quantile type of the point estimate: 1, 6 or 7 (as \code{stats::quantile}).
#' @param replicates,seed Bootstrap replicates and seed.
#' @param flip_lower For u < 0.5 compute the interval as minus that of the (1 - u)-quantile of -x,
#'   so the intervals of u and 1 - u mirror each other. The default \code{FALSE} is the quantile
#'   study's rule: the formulas at u itself.
#' @param asymptotic_at Where the asymptotic interval, k, l = n u -/+ z sqrt(n u (1 - u)) with
#'   1 <= k < l <= n, is read: \code{"levels"} (the study's) evaluates the type-6 estimator at
#'   the levels k / n and l / n (for 1:20, u = 0.5, 90\%: [6.64, 14.36]); \code{"positions"}
#'   interpolates the order statistics at positions k and l ([6.32, 13.68]).
#' @param bootstrap_statistic The bootstrap replicates' statistic: \code{"sample_quantile"} (the
#'   study's; of the point estimate's \code{type}) or \code{"order_statistic"} of rank
#'   round((n + 1) u), whose B -> infinity limit \code{method = "bootstrap_exact"} computes.
#' @return A data frame with columns \code{u}, \code{n}, \code{estimate}, \code{lower},
#'   \code{upper} and \code{coverage} (\code{NA} where no interval exists for this n); attributes
#'   \code{mean} (the t-interval for the mean: \code{mean}, \code{lower}, \code{upper}),
#'   \code{shapiro_wilk} (the Shapiro-Wilk test of normality of \code{x} as \code{shapiro.test}
#'   computes it: \code{w}, \code{p_value}; \code{NULL} for fewer than 3 values or identical ones;
#'   the quantile study uses such tests to argue for distribution-free intervals), \code{level}
#'   and \code{method}.
#' @seealso \code{\link{quantile_min_n}}
#' @examples
#' set.seed(1)
#' x <- rnorm(30)
#' metric_quantiles(x, u = c(0.25, 0.5, 0.75), level = 0.9)
#' metric_quantiles(1:10, u = 0.5, type = 6)$estimate
#' @export
metric_quantiles <- function(x, u = c(0.1, 0.5, 0.9), level = 0.9,
                             method = c("exact", "equal_tailed", "asymptotic", "bootstrap",
                                        "bootstrap_exact"),
                             type = 7, replicates = 2000L, seed = 1, flip_lower = FALSE,
                             asymptotic_at = c("levels", "positions"),
                             bootstrap_statistic = c("sample_quantile", "order_statistic")) {
  method <- match.arg(method)
  asymptotic_at <- match.arg(asymptotic_at)
  bootstrap_statistic <- match.arg(bootstrap_statistic)
  if (!is.numeric(x)) stop("metric_quantiles: x must be numeric, got ", class(x)[1])
  # Named here, 1-based: the core's message would count from 0.
  if (anyNA(x)) {
    stop("metric_quantiles: x[", which(is.na(x))[1], "] is ", x[which(is.na(x))[1]],
         ": give the runs that have a value (e.g. x[!is.na(x)]); a failed run left out raises the quantiles")
  }
  r <- glue_quantiles(as.double(x), as.double(u), as.double(level), method, as.character(type),
                      as.integer(replicates), as.double(seed), isTRUE(flip_lower), asymptotic_at,
                      bootstrap_statistic)
  mean <- r$mean
  normality <- r$shapiro_wilk
  r$mean <- NULL
  r$shapiro_wilk <- NULL
  out <- as.data.frame(r)
  out$n <- as.integer(out$n)
  for (k in c("lower", "upper", "coverage")) out[[k]][is.nan(out[[k]])] <- NA_real_
  attr(out, "mean") <- mean
  attr(out, "shapiro_wilk") <- normality
  attr(out, "level") <- level
  attr(out, "method") <- method
  out
}

#' @title Minimum number of runs for a quantile interval
#'
#' @description The smallest n for which exact and asymptotic two-sided intervals for the
#' u-quantile exist at the given level, computed by the Rust core. The asymptotic rule is the
#' quantile study's, k, l = n u -/+ z sqrt(n u (1 - u)) with 1 <= k < l <= n at u itself, so
#' lower quantiles need more runs than upper ones (90\%: 42 for u = 0.1, 25 for u = 0.9);
#' \code{asymptotic_flipped} takes a u < 0.5 at 1 - u (\code{flip_lower} of
#' \code{\link{metric_quantiles}}).
#' @param level Confidence level 1 - alpha.
#' @param u Quantile levels in (0, 1).
#' @return A data frame with columns \code{u}, \code{exact}, \code{asymptotic} and
#'   \code{asymptotic_flipped}.
#' @examples
#' quantile_min_n(0.9, c(0.05, 0.5))
#' @export
quantile_min_n <- function(level = 0.9, u = c(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.975, 0.99)) {
  r <- as.data.frame(glue_quantile_min_n(as.double(u), as.double(level)))
  r$exact <- as.integer(r$exact)
  r$asymptotic <- as.integer(r$asymptotic)
  r$asymptotic_flipped <- as.integer(r$asymptotic_flipped)
  r
}
