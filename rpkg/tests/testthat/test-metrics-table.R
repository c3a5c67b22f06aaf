# metrics_table(): a manifest of prediction files (headerless CSV arrays here) becomes the long
# metric table, each cell against the metric computed in R from the same arrays.

manifest_dir <- function() {
  d <- withr_tempdir()
  set.seed(11)
  n <- 40
  for (r in 0:1) {
    y <- rnorm(n)
    write_csv_matrix(y, file.path(d, sprintf("y%d.csv", r)))
    write_csv_matrix(y + rnorm(n, sd = 0.3), file.path(d, sprintf("mean%d.csv", r)))
    write_csv_matrix(runif(n, 0.5, 1.5), file.path(d, sprintf("sd%d.csv", r)))
    write_csv_matrix(matrix(rnorm(20 * n), 20, n), file.path(d, sprintf("samples%d.csv", r)))
  }
  writeLines(c("n,method,realization,task,mean,sd,samples,y",
               "30,gauss,0,regression,mean0.csv,sd0.csv,,y0.csv",
               "30,gauss,1,regression,mean1.csv,sd1.csv,,y1.csv",
               "30,mc,0,regression,,,samples0.csv,y0.csv",
               "30,mc,1,regression,,,samples1.csv,y1.csv"),
             file.path(d, "manifest.csv"))
  d
}

read_vec <- function(d, f) as.numeric(utils::read.csv(file.path(d, f), header = FALSE)[[1]])

test_that("metrics_table holds each row's own metrics", {
  d <- manifest_dir()
  t <- metrics_table(file.path(d, "manifest.csv"))
  expect_equal(names(t), c("n", "method", "realization", "crps", "nll", "picp", "mpiw", "interval_score",
                           "rmse", "covered", "n_test", "miscalibration_area", "rms_calibration_error",
                           "mean_absolute_calibration_error", "sharpness", "ence"))
  expect_equal(t$n, rep(30, 4))
  expect_equal(t$realization, c(0, 1, 0, 1))
  for (r in 0:1) {
    y <- read_vec(d, sprintf("y%d.csv", r)); m <- read_vec(d, sprintf("mean%d.csv", r))
    s <- read_vec(d, sprintf("sd%d.csv", r))
    g <- t[t$method == "gauss" & t$realization == r, ]
    z <- (y - m) / s
    expect_equal(g$crps, mean(s * (z * (2 * pnorm(z) - 1) + 2 * dnorm(z) - 1 / sqrt(pi))), tolerance = 1e-12)
    expect_equal(g$nll, mean(-dnorm(y, m, s, log = TRUE)), tolerance = 1e-12)
    half <- qnorm(0.95) * s
    expect_equal(g$covered, sum(abs(y - m) <= half))
    expect_equal(g$mpiw, mean(2 * half), tolerance = 1e-12)
    expect_equal(g$rmse, sqrt(mean((y - m)^2)), tolerance = 1e-12)
    expect_equal(g$sharpness, sqrt(mean(s^2)), tolerance = 1e-12)
    # The interval curve at p = j / 99: the share with |PIT - 1/2| <= p / 2.
    p <- seq(0, 1, length.out = 100)
    obs <- vapply(p, function(q) mean(abs(pnorm(y, m, s) - 0.5) <= q / 2), 0)
    expect_equal(g$mean_absolute_calibration_error, mean(abs(obs - p)), tolerance = 1e-12)
    dat <- as.matrix(utils::read.csv(file.path(d, sprintf("samples%d.csv", r)), header = FALSE))
    mc <- t[t$method == "mc" & t$realization == r, ]
    expect_equal(mc$crps, mean(crps_sample(y, t(dat))), tolerance = 1e-12)
    expect_true(is.na(mc$nll))
  }
  # Options by name; a wider interval covers at least as many points.
  wide <- metrics_table(file.path(d, "manifest.csv"), options = list(level = 0.99))
  expect_true(all(wide$covered >= t$covered))
  expect_error(metrics_table(file.path(d, "manifest.csv"), options = list(levle = 0.9)), "unknown option `levle`")
})

test_that("a bad manifest row is an R error naming its line and file", {
  d <- manifest_dir()
  lines <- readLines(file.path(d, "manifest.csv"))
  lines[3] <- sub("y1.csv", "missing.csv", lines[3])
  writeLines(lines, file.path(d, "bad.csv"))
  expect_error(metrics_table(file.path(d, "bad.csv")), "line 3.*missing.csv")
  expect_error(metrics_table(file.path(d, "nowhere.csv")), "nowhere.csv")
})
