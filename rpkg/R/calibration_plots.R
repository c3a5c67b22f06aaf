# Regression calibration and recalibration (computed by the Rust core), and the figures of
# calibration and selective prediction: ggplot2 when installed, base graphics otherwise.

# One regression forecast as the glue takes it: its kind and the values of its arrays.
regression_forecast <- function(fn, mean = NULL, sd = NULL, dat = NULL, means = NULL, sds = NULL, weights = NULL) {
  given <- c(gaussian = !is.null(mean) || !is.null(sd), samples = !is.null(dat),
             mixture = !is.null(means) || !is.null(sds))
  if (sum(given) != 1L) {
    stop(fn, ": expected one forecast: mean and sd, dat (N x S draws) or means and sds (N x M members)",
         call. = FALSE)
  }
  kind <- names(given)[given]
  if (kind == "gaussian") {
    if (is.null(mean) || is.null(sd)) stop(fn, ": mean and sd go together", call. = FALSE)
    return(list(kind = kind, a = as.double(mean), b = as.double(sd), rows = length(mean), cols = 1L))
  }
  if (kind == "samples") {
    dat <- if (is.null(dim(dat))) matrix(dat, nrow = 1L) else as_matrix(dat, "dat")
    return(list(kind = kind, a = as.double(dat), b = double(), rows = nrow(dat), cols = ncol(dat)))
  }
  if (is.null(means) || is.null(sds)) stop(fn, ": means and sds go together", call. = FALSE)
  means <- as_matrix(means, "means")
  sds <- as_matrix(sds, "sds")
  if (!identical(dim(means), dim(sds))) stop(fn, ": means and sds: expected matrices of the same dimensions",
                                             call. = FALSE)
  list(kind = kind, a = as.double(means), b = as.double(sds), rows = nrow(means), cols = ncol(means),
       weights = if (is.null(weights)) NULL else as.double(weights))
}

# The core's calibration list as the R object.
as_calibration <- function(r, sharpness = r$sharpness, ence = r$ence) {
  structure(list(
    pit = as.double(r$pit), pit_histogram = as.integer(r$pit_histogram),
    curves = data.frame(expected = as.double(r$interval_curve$expected),
                        interval = as.double(r$interval_curve$observed),
                        quantile = as.double(r$quantile_curve$observed)),
    miscalibration_area = r$miscalibration_area, rms_calibration_error = r$rms_calibration_error,
    mean_absolute_calibration_error = r$mean_absolute_calibration_error,
    sharpness = if (is.null(sharpness)) NA_real_ else sharpness,
    ence = if (is.null(ence)) NA_real_ else ence
  ), class = "credence_regression_calibration")
}

#' @title Calibration of a regression forecast
#'
#' @description PIT values F_i(y_i) and their histogram (10 bins), the interval calibration curve
#' (the share of outcomes inside each central interval against its probability, at 100
#' proportions 0, 1/99, ..., 1) and the quantile one, the miscalibration area, RMS and mean
#' absolute calibration errors as uncertainty-toolbox defines them, the sharpness
#' sqrt(mean sd^2) and the ENCE of Levi et al. (2022) over 10 equal-count groups by sd.
#' Computed by the Rust core (\code{credence::metrics::regression_calibration}). Give one
#' forecast: a Gaussian (\code{mean}, \code{sd}), draws (\code{dat}, N x S, as
#' \code{\link{crps_sample}}) or a mixture (\code{means}, \code{sds}, N x M, as
#' \code{\link{crps_mixture}}).
#' @param y Observed outcomes, length N.
#' @param mean,sd Gaussian forecast: means and sds, length N.
#' @param dat Predictive draws, an N x S matrix.
#' @param means,sds,weights Mixture forecast: N x M member means and sds, member weights.
#' @return A \code{credence_regression_calibration}: a list with \code{pit},
#'   \code{pit_histogram}, \code{curves} (a data frame of \code{expected}, \code{interval},
#'   \code{quantile}), \code{miscalibration_area}, \code{rms_calibration_error},
#'   \code{mean_absolute_calibration_error}, \code{sharpness} and \code{ence} (\code{NA} where a
#'   group's sds are all 0). \code{plot()} draws the calibration curve and the PIT histogram.
#' @examples
#' set.seed(1)
#' y <- rnorm(500, sd = 2)
#' cal <- regression_calibration(y, mean = rep(0, 500), sd = rep(1, 500))
#' cal$miscalibration_area  # overconfident: well above 0
#' @export
regression_calibration <- function(y, mean = NULL, sd = NULL, dat = NULL, means = NULL, sds = NULL,
                                   weights = NULL) {
  f <- regression_forecast("regression_calibration", mean, sd, dat, means, sds, weights)
  r <- glue_regression_calibration(f, as.double(y))
  as_calibration(r)
}

#' @title Recalibrate a regression forecast
#'
#' @description Fits a recalibration on validation forecasts and outcomes and applies it to the
#' test forecast (Rust core, \code{credence::metrics::recalibration}). \code{"std"}: one factor
#' s on the spread about the mean (a Gaussian's sd times s, draws mu + s (x - mu)), the one
#' that minimises the validation mean absolute calibration error over [0.01, 100]
#' (uncertainty-toolbox's criterion and bounds), found exactly. \code{"isotonic"} (Kuleshov et
#' al. 2018): the map R of forecast probabilities to the empirical CDF of the validation PITs;
#' the recalibrated CDF is R(F(y)). Gaussian, sample and (isotonic only) mixture forecasts;
#' the validation forecast is of the test forecast's kind.
#' @inheritParams regression_calibration
#' @param val_y,val_mean,val_sd,val_dat,val_means,val_sds,val_weights The validation outcomes
#'   and forecast.
#' @param method \code{"std"} or \code{"isotonic"}.
#' @return A \code{credence_recalibration}: a list with \code{method}, \code{scale} (std),
#'   \code{map} (isotonic: a data frame of \code{pit} and \code{recalibrated} knots),
#'   \code{validation_mace_before}, \code{validation_mace_after}, \code{before} and
#'   \code{after} (the test calibration, as \code{\link{regression_calibration}} returns it)
#'   and \code{metrics} (std: every metric of the scaled test forecast; \code{NULL} for
#'   isotonic maps). A scale at a bound of its range gives a warning. \code{plot()} draws both
#'   calibration curves and PIT histograms.
#' @examples
#' set.seed(1)
#' y <- rnorm(400, sd = 2); val_y <- rnorm(400, sd = 2)
#' r <- recalibrate(y, val_y, mean = rep(0, 400), sd = rep(1, 400),
#'                  val_mean = rep(0, 400), val_sd = rep(1, 400))
#' r$scale  # near 2
#' @export
recalibrate <- function(y, val_y, mean = NULL, sd = NULL, dat = NULL, val_mean = NULL, val_sd = NULL,
                        val_dat = NULL, method = c("std", "isotonic"), means = NULL, sds = NULL, weights = NULL,
                        val_means = NULL, val_sds = NULL, val_weights = NULL) {
  method <- match.arg(method)
  f <- regression_forecast("recalibrate", mean, sd, dat, means, sds, weights)
  v <- regression_forecast("recalibrate (validation)", val_mean, val_sd, val_dat, val_means, val_sds, val_weights)
  if (f$kind != v$kind) {
    stop("recalibrate: the validation forecast is ", v$kind, ", the test one ", f$kind, "; expected one kind",
         call. = FALSE)
  }
  r <- glue_recalibrate(method, f, as.double(y), v, as.double(val_y))
  if (isTRUE(r$at_bound)) {
    warning("recalibrate: the scale ", r$scale, " lies at a bound of its search range; the forecast may be ",
            "degenerate", call. = FALSE)
  }
  m <- r$metrics
  structure(list(
    method = method, scale = if (is.null(r$scale)) NA_real_ else r$scale,
    map = if (is.null(r$map)) NULL else data.frame(pit = as.double(r$map$pit),
                                                   recalibrated = as.double(r$map$recalibrated)),
    validation_mace_before = r$validation_mace_before, validation_mace_after = r$validation_mace_after,
    before = regression_calibration(y, mean = mean, sd = sd, dat = dat, means = means, sds = sds, weights = weights),
    after = as_calibration(r$calibration, sharpness = m$sharpness, ence = m$ence),
    metrics = m
  ), class = "credence_recalibration")
}

#' @title Adversarial group calibration
#'
#' @description How badly calibrated the worst subgroup of a given size is, as
#' uncertainty-toolbox's \code{adversarial_group_calibration} measures it: for group sizes
#' max(round(r N), 2) at r = 0, 1/9, ..., 1, the worst mean absolute calibration error of
#' \code{draws} random groups (without replacement), its mean and sd over \code{trials}
#' trials. Computed by the Rust core (\code{credence::metrics::group_calibration}), the draws
#' seeded. A forecast calibrated on every subgroup stays low as the groups shrink (up to the
#' noise of small groups); one calibrated only on average rises.
#' @inheritParams regression_calibration
#' @param options A named list of \code{group_bins}, \code{trials}, \code{draws}, \code{seed};
#'   the rest the core's defaults (10, 10, 10, 1: the toolbox's).
#' @return A \code{credence_group_calibration} data frame with \code{ratio},
#'   \code{group_size}, \code{worst_mean} and \code{worst_sd}; \code{plot()} draws it.
#' @examples
#' set.seed(1)
#' y <- rnorm(300)
#' group_calibration(y, mean = rep(0, 300), sd = rep(1, 300))
#' @export
group_calibration <- function(y, mean = NULL, sd = NULL, dat = NULL, means = NULL, sds = NULL, weights = NULL,
                              options = list()) {
  f <- regression_forecast("group_calibration", mean, sd, dat, means, sds, weights)
  r <- glue_group_calibration(f, as.double(y), options)
  out <- data.frame(ratio = vapply(r, function(p) p$ratio, 0), group_size = vapply(r, function(p) p$group_size, 0),
                    worst_mean = vapply(r, function(p) p$worst_mean, 0), worst_sd = vapply(r, function(p) p$worst_sd, 0))
  class(out) <- c("credence_group_calibration", class(out))
  out
}

#' @rdname group_calibration
#' @param x A \code{credence_group_calibration}.
#' @param ... Ignored.
#' @method plot credence_group_calibration
#' @export
plot.credence_group_calibration <- function(x, ...) {
  d <- as.data.frame(unclass(x))
  if (use_ggplot()) {
    g <- ggplot2::ggplot(d, ggplot2::aes(x = .data$group_size, y = .data$worst_mean)) +
      ggplot2::geom_ribbon(ggplot2::aes(ymin = pmax(.data$worst_mean - .data$worst_sd, 0),
                                        ymax = .data$worst_mean + .data$worst_sd), fill = "#011f4b", alpha = 0.2) +
      ggplot2::geom_line(colour = "#011f4b") + ggplot2::geom_point(colour = "#011f4b") +
      ggplot2::labs(x = "group size (points)", y = "worst mean absolute calibration error",
                    title = "Adversarial group calibration", caption = "band: +/- one sd over trials")
    print(g)
    return(invisible(g))
  }
  graphics::plot(d$group_size, d$worst_mean, type = "b", pch = 19, xlab = "group size (points)",
                 ylab = "worst mean absolute calibration error", main = "Adversarial group calibration",
                 ylim = c(0, max(d$worst_mean + d$worst_sd)))
  graphics::arrows(d$group_size, pmax(d$worst_mean - d$worst_sd, 0), d$group_size, d$worst_mean + d$worst_sd,
                   angle = 90, code = 3, length = 0.03)
  invisible(NULL)
}

#' @rdname regression_calibration
#' @param x A \code{credence_regression_calibration}.
#' @param ... Ignored.
#' @method print credence_regression_calibration
#' @export
print.credence_regression_calibration <- function(x, ...) {
  cat("regression calibration of", length(x$pit), "points\n")
  keys <- c("miscalibration_area", "rms_calibration_error", "mean_absolute_calibration_error", "sharpness", "ence")
  print(data.frame(metric = keys, value = vapply(keys, function(k) x[[k]], 0), row.names = NULL), digits = 4)
  invisible(x)
}

#' @rdname recalibrate
#' @param x A \code{credence_recalibration}.
#' @param ... Ignored.
#' @method print credence_recalibration
#' @export
print.credence_recalibration <- function(x, ...) {
  cat(x$method, "recalibration", if (!is.na(x$scale)) paste("with scale", format(x$scale, digits = 4)), "\n")
  print(data.frame(
    data = c("validation", "test"),
    mace_before = c(x$validation_mace_before, x$before$mean_absolute_calibration_error),
    mace_after = c(x$validation_mace_after, x$after$mean_absolute_calibration_error)
  ), digits = 4, row.names = FALSE)
  invisible(x)
}

# Calibration curves and PIT histograms of named calibrations.
calibration_figures <- function(cals) {
  labels <- names(cals)
  curves <- do.call(rbind, lapply(labels, function(l) {
    data.frame(forecast = l, expected = cals[[l]]$curves$expected, observed = cals[[l]]$curves$interval)
  }))
  bins <- length(cals[[1]]$pit_histogram)
  hist <- do.call(rbind, lapply(labels, function(l) {
    h <- cals[[l]]$pit_histogram
    data.frame(forecast = l, centre = (seq_len(bins) - 0.5) / bins, density = h / (sum(h) / bins))
  }))
  curves$forecast <- factor(curves$forecast, levels = labels)
  hist$forecast <- factor(hist$forecast, levels = labels)
  area <- vapply(cals, function(c) c$miscalibration_area, 0)
  caption <- paste0(labels, ": miscalibration area ", format(area, digits = 3), collapse = "; ")
  if (use_ggplot()) {
    curve <- ggplot2::ggplot(curves, ggplot2::aes(x = .data$expected, y = .data$observed, colour = .data$forecast)) +
      ggplot2::geom_abline(slope = 1, intercept = 0, linetype = "dashed", colour = "grey40") +
      ggplot2::geom_line(linewidth = 0.8) + ggplot2::coord_equal(xlim = c(0, 1), ylim = c(0, 1)) +
      ggplot2::labs(x = "expected proportion in central interval", y = "observed proportion",
                    title = "Interval calibration curve", caption = caption, colour = NULL) +
      ggplot2::theme(legend.position = "bottom")
    pit <- ggplot2::ggplot(hist, ggplot2::aes(x = .data$centre, y = .data$density, fill = .data$forecast)) +
      ggplot2::geom_col(position = "dodge", width = 1 / bins) +
      ggplot2::geom_hline(yintercept = 1, linetype = "dashed", colour = "grey40") +
      ggplot2::labs(x = "PIT value F(y)", y = "density (1 = uniform)", title = "PIT histogram", fill = NULL) +
      ggplot2::theme(legend.position = "bottom")
    out <- structure(list(calibration = curve, pit = pit), class = "credence_plots")
    print(out)
    return(invisible(out))
  }
  old <- graphics::par(mfrow = c(1, 2))
  on.exit(graphics::par(old))
  cols <- grDevices::hcl.colors(max(length(labels), 2), "Dark 3")
  graphics::plot(c(0, 1), c(0, 1), type = "l", lty = 2, col = "grey40", xlab = "expected proportion",
                 ylab = "observed proportion", main = "Interval calibration curve")
  for (k in seq_along(labels)) graphics::lines(cals[[k]]$curves$expected, cals[[k]]$curves$interval, col = cols[k])
  graphics::legend("topleft", labels, col = cols[seq_along(labels)], lty = 1, bty = "n")
  heights <- do.call(rbind, lapply(cals, function(c) c$pit_histogram / (sum(c$pit_histogram) / bins)))
  graphics::barplot(heights, beside = TRUE, col = cols[seq_along(labels)], main = "PIT histogram",
                    xlab = "PIT bin", ylab = "density")
  graphics::abline(h = 1, lty = 2, col = "grey40")
  invisible(NULL)
}

#' @rdname regression_calibration
#' @method plot credence_regression_calibration
#' @export
plot.credence_regression_calibration <- function(x, ...) calibration_figures(list(forecast = x))

#' @rdname recalibrate
#' @method plot credence_recalibration
#' @export
plot.credence_recalibration <- function(x, ...) {
  cals <- list(x$before, x$after)
  names(cals) <- c("before", paste0("after (", x$method, ")"))
  calibration_figures(cals)
}

#' @rdname risk_coverage
#' @param x A \code{credence_risk_coverage}.
#' @param ... Ignored.
#' @method plot credence_risk_coverage
#' @export
plot.credence_risk_coverage <- function(x, ...) {
  # From coverage 0: the selective risk held at its first value, the generalized risk from 0.
  first <- x$curve[1, ]
  cov <- c(0, x$curve$coverage)
  what <- c(paste0("selective risk (AURC ", format(x$aurc, digits = 3), ")"),
            paste0("generalized risk (AUGRC ", format(x$augrc, digits = 3), ")"))
  long <- data.frame(coverage = c(cov, cov), risk = c(first$selective_risk, x$curve$selective_risk, 0,
                                                      x$curve$generalized_risk),
                     what = factor(rep(what, each = length(cov)), levels = what))
  if (use_ggplot()) {
    g <- ggplot2::ggplot(long, ggplot2::aes(x = .data$coverage, y = .data$risk)) +
      ggplot2::geom_line(colour = "#011f4b", linewidth = 0.8) +
      ggplot2::facet_wrap(~what, scales = "free_y") + ggplot2::coord_cartesian(xlim = c(0, 1)) +
      ggplot2::labs(x = "coverage (share of points kept, most confident first)", y = "risk",
                    title = "Risk-coverage curves")
    print(g)
    return(invisible(g))
  }
  old <- graphics::par(mfrow = c(1, 2))
  on.exit(graphics::par(old))
  for (w in what) {
    d <- long[long$what == w, ]
    graphics::plot(d$coverage, d$risk, type = "l", xlim = c(0, 1), xlab = "coverage", ylab = "risk", main = w)
  }
  invisible(NULL)
}

#' @rdname corp_reliability
#' @param x A \code{credence_corp}.
#' @param ... Ignored.
#' @method plot credence_corp
#' @export
plot.credence_corp <- function(x, ...) {
  p <- x$points
  sub <- sprintf("Brier %.4f = MCB %.4f - DSC %.4f + UNC %.4f", x$brier, x$miscalibration, x$discrimination,
                 x$uncertainty)
  bands <- !anyNA(p$band_lower)
  if (use_ggplot()) {
    g <- ggplot2::ggplot(p, ggplot2::aes(x = .data$forecast)) +
      ggplot2::geom_abline(slope = 1, intercept = 0, linetype = "dashed", colour = "grey40")
    if (bands) {
      g <- g + ggplot2::geom_ribbon(ggplot2::aes(ymin = .data$band_lower, ymax = .data$band_upper),
                                    fill = "#011f4b", alpha = 0.2)
    }
    g <- g + ggplot2::geom_step(ggplot2::aes(y = .data$observed), colour = "#011f4b", linewidth = 0.8) +
      ggplot2::coord_equal(xlim = c(0, 1), ylim = c(0, 1)) +
      ggplot2::labs(x = "forecast probability (confidence)", y = "conditional event probability (isotonic fit)",
                    title = "CORP reliability diagram", subtitle = sub,
                    caption = if (bands) "band: consistency band under calibration")
    print(g)
    return(invisible(g))
  }
  graphics::plot(c(0, 1), c(0, 1), type = "l", lty = 2, col = "grey40", xlab = "forecast probability",
                 ylab = "conditional event probability", main = "CORP reliability diagram", sub = sub)
  if (bands) graphics::polygon(c(p$forecast, rev(p$forecast)), c(p$band_lower, rev(p$band_upper)),
                               col = grDevices::adjustcolor("#011f4b", 0.2), border = NA)
  graphics::lines(p$forecast, p$observed, type = "s", col = "#011f4b", lwd = 2)
  invisible(NULL)
}

#' @rdname risk_coverage
#' @method print credence_risk_coverage
#' @export
print.credence_risk_coverage <- function(x, ...) {
  cat(sprintf("AURC %.4f, AUGRC %.4f over %d working points\n", x$aurc, x$augrc, nrow(x$curve)))
  invisible(x)
}

#' @rdname corp_reliability
#' @method print credence_corp
#' @export
print.credence_corp <- function(x, ...) {
  cat(sprintf("CORP: Brier %.4f = MCB %.4f - DSC %.4f + UNC %.4f (%d distinct forecasts)\n", x$brier,
              x$miscalibration, x$discrimination, x$uncertainty, nrow(x$points)))
  invisible(x)
}
