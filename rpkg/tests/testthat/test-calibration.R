# Regression calibration, recalibration and the calibration / selective-prediction figures,
# against computations in base R.

interval_curve <- function(pit) {
  p <- (0:99) / 99
  vapply(p, function(q) mean(abs(pit - 0.5) <= q / 2), 0)
}

test_that("regression_calibration is the PIT and its curves as base R computes them", {
  set.seed(3)
  n <- 600
  mu <- rnorm(n); sd <- runif(n, 0.5, 1.5); y <- mu + 1.6 * sd * rnorm(n)
  cal <- regression_calibration(y, mean = mu, sd = sd)
  pit <- pnorm(y, mu, sd)
  expect_equal(cal$pit, pit, tolerance = 1e-12)
  expect_equal(cal$curves$interval, interval_curve(pit), tolerance = 1e-15)
  expect_equal(cal$mean_absolute_calibration_error, mean(abs(interval_curve(pit) - (0:99) / 99)), tolerance = 1e-12)
  expect_equal(cal$pit_histogram, as.integer(table(cut(pit, seq(0, 1, 0.1), right = FALSE))))
  expect_equal(cal$sharpness, sqrt(mean(sd^2)), tolerance = 1e-12)
  # Draws (N x S) and a two-member mixture.
  dat <- matrix(rnorm(n * 20, mu, sd), n)
  expect_equal(regression_calibration(y, dat = dat)$pit, rowMeans(dat <= y), tolerance = 1e-15)
  mix <- regression_calibration(y, means = cbind(mu, mu + 1), sds = cbind(sd, sd))
  expect_equal(mix$pit, (pnorm(y, mu, sd) + pnorm(y, mu + 1, sd)) / 2, tolerance = 1e-12)
  expect_error(regression_calibration(y, mean = mu), "mean and sd")
  expect_error(regression_calibration(y, mean = mu, sd = sd, dat = dat), "one forecast")
  expect_error(regression_calibration(y[-1], mean = mu, sd = sd), "y")
})

test_that("recalibrate: std-scaling minimises the validation MACE; isotonic is the PITs' empirical CDF", {
  set.seed(4)
  n <- 800
  draw <- function() { mu <- rnorm(n); sd <- runif(n, 0.5, 1.5); list(mu = mu, sd = sd, y = mu + 2 * sd * rnorm(n)) }
  v <- draw(); t <- draw()
  mace <- function(pit) mean(abs(interval_curve(pit) - (0:99) / 99))
  r <- recalibrate(t$y, v$y, mean = t$mu, sd = t$sd, val_mean = v$mu, val_sd = v$sd)
  expect_s3_class(r, "credence_recalibration")
  expect_equal(r$validation_mace_after, mace(pnorm(v$y, v$mu, r$scale * v$sd)), tolerance = 1e-12)
  # No scale on a fine grid does better on the validation data.
  grid <- exp(seq(log(1.5), log(2.7), length.out = 400))
  expect_lte(r$validation_mace_after, min(vapply(grid, function(s) mace(pnorm(v$y, v$mu, s * v$sd)), 0)) + 1e-12)
  expect_equal(r$after$pit, pnorm(t$y, t$mu, r$scale * t$sd), tolerance = 1e-12)
  expect_equal(r$metrics$nll, -mean(dnorm(t$y, t$mu, r$scale * t$sd, log = TRUE)), tolerance = 1e-10)
  expect_lt(r$after$mean_absolute_calibration_error, r$before$mean_absolute_calibration_error)

  iso <- recalibrate(t$y, v$y, mean = t$mu, sd = t$sd, val_mean = v$mu, val_sd = v$sd, method = "isotonic")
  u <- pnorm(v$y, v$mu, v$sd)
  knots <- sort(unique(u))
  want <- stats::approx(c(0, knots, 1), c(0, stats::ecdf(u)(knots), 1), xout = pnorm(t$y, t$mu, t$sd), rule = 2)$y
  expect_equal(iso$after$pit, want, tolerance = 1e-12)
  expect_null(iso$metrics)
  expect_true(is.na(iso$scale))

  # Samples, and the errors.
  dat_v <- matrix(rnorm(n * 30, v$mu, v$sd), n); dat_t <- matrix(rnorm(n * 30, t$mu, t$sd), n)
  s <- recalibrate(t$y, v$y, dat = dat_t, val_dat = dat_v)
  expect_gt(s$scale, 1.5)
  scaled <- rowMeans(dat_t) + s$scale * (dat_t - rowMeans(dat_t))
  expect_equal(s$after$pit, rowMeans(scaled <= t$y), tolerance = 1e-15)
  expect_error(recalibrate(t$y, v$y, mean = t$mu, sd = t$sd, val_dat = dat_v), "one kind")
  expect_error(recalibrate(t$y, v$y[-1], mean = t$mu, sd = t$sd, val_mean = v$mu, val_sd = v$sd), "validation")
  expect_warning(recalibrate(t$y, v$y * 1e4, mean = t$mu, sd = t$sd, val_mean = v$mu, val_sd = v$sd), "bound")

  # Mixtures (two members, weights 0.3 / 0.7): the isotonic map of the mixture CDF's PITs; no
  # std-scaling (the core names the mixture).
  mix <- function(d) list(means = cbind(d$mu - 0.5, d$mu + 0.5), sds = cbind(d$sd, d$sd))
  mv <- mix(v); mt <- mix(t); w <- c(0.3, 0.7)
  cdf <- function(m, y) 0.3 * pnorm(y, m$means[, 1], m$sds[, 1]) + 0.7 * pnorm(y, m$means[, 2], m$sds[, 2])
  im <- recalibrate(t$y, v$y, means = mt$means, sds = mt$sds, weights = w, val_means = mv$means,
                    val_sds = mv$sds, val_weights = w, method = "isotonic")
  u <- cdf(mv, v$y)
  knots <- sort(unique(u))
  want <- stats::approx(c(0, knots, 1), c(0, stats::ecdf(u)(knots), 1), xout = cdf(mt, t$y), rule = 2)$y
  expect_equal(im$after$pit, want, tolerance = 1e-10)
  expect_equal(im$before$pit, cdf(mt, t$y), tolerance = 1e-10)
  expect_error(recalibrate(t$y, v$y, means = mt$means, sds = mt$sds, val_means = mv$means, val_sds = mv$sds),
               "mixture")
})

test_that("the calibration and selective-prediction figures are ggplots of the results", {
  skip_if_not_installed("ggplot2")
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  set.seed(5)
  n <- 300
  mu <- rnorm(n); y <- mu + 2 * rnorm(n)
  figs <- plot(regression_calibration(y, mean = mu, sd = rep(1, n)))
  expect_s3_class(figs$calibration, "ggplot")
  expect_equal(nrow(figs$calibration$data), 100)
  r <- recalibrate(y, y + rnorm(n, sd = 0.1), mean = mu, sd = rep(1, n), val_mean = mu, val_sd = rep(1, n))
  figs <- plot(r)
  expect_setequal(levels(figs$pit$data$forecast), c("before", "after (std)"))
  # Densities: the histogram's bars average 1.
  expect_equal(mean(figs$pit$data$density), 1)
  p <- matrix(runif(2 * n), n); p <- p / rowSums(p)
  labels <- sample(1:2, n, replace = TRUE)
  rc <- risk_coverage(p, labels)
  g <- plot(rc)
  expect_s3_class(g, "ggplot")
  expect_equal(nrow(g$data), 2 * (nrow(rc$curve) + 1))
  corp <- corp_reliability(p, labels, resamples = 20)
  g <- plot(corp)
  expect_s3_class(g, "ggplot")
  expect_match(g$labels$subtitle, "MCB")
  expect_output(print(rc), "AURC")
  expect_output(print(corp), "CORP")
})

test_that("group_calibration: the full group is the MACE, options reach the core, seeds reproduce", {
  set.seed(6)
  n <- 300
  mu <- rnorm(n); sd <- runif(n, 0.5, 1.5); y <- mu + 0.6 * sd * rnorm(n)
  g <- group_calibration(y, mean = mu, sd = sd)
  expect_s3_class(g, "credence_group_calibration")
  expect_equal(g$group_size, pmax(round(n * (0:9) / 9), 2))
  full <- regression_calibration(y, mean = mu, sd = sd)$mean_absolute_calibration_error
  expect_equal(g$worst_mean[10], full, tolerance = 1e-12)
  expect_equal(g$worst_sd[10], 0)
  expect_identical(g, group_calibration(y, mean = mu, sd = sd))
  expect_false(identical(g, group_calibration(y, mean = mu, sd = sd, options = list(seed = 2))))
  expect_equal(nrow(group_calibration(y, mean = mu, sd = sd, options = list(group_bins = 4))), 4)
  expect_error(group_calibration(y, mean = mu, sd = sd, options = list(trials = 1)), "trials")
  expect_error(group_calibration(y, mean = mu, sd = sd, options = list(tirals = 5)), "tirals")
  skip_if_not_installed("ggplot2")
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_s3_class(plot(g), "ggplot")
})
