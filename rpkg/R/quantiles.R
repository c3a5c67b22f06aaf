# Quantiles of a metric over repeated runs with distribution-free confidence intervals
# (credence::quantiles); the R side converts types only.

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

#' @export
quantile_min_n <- function(level = 0.9, u = c(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.975, 0.99)) {
  r <- as.data.frame(glue_quantile_min_n(as.double(u), as.double(level)))
  r$exact <- as.integer(r$exact)
  r$asymptotic <- as.integer(r$asymptotic)
  r$asymptotic_flipped <- as.integer(r$asymptotic_flipped)
  r
}
