# Convergence rates of a study table, counted by the core.

test_that("convergence_rates counts runs and converged runs per method and n", {
  d <- data.frame(n = c(30, 30, 30, 50, 30), method = c("swag", "swag", "swag", "swag", "map"),
                  converged = c(TRUE, FALSE, FALSE, TRUE, TRUE))
  r <- convergence_rates(d)
  expect_equal(r$method, c("swag", "swag", "map"))
  expect_equal(r$n, c(30, 50, 30))
  expect_equal(r$runs, c(3L, 1L, 1L))
  expect_equal(r$converged, c(1L, 1L, 1L))
  expect_equal(r$rate, c(1 / 3, 1, 1))
  # The shipped table: SWAG's failed runs at n = 30 are the rows with converged = false.
  s <- read.csv(system.file("extdata", "study.csv", package = "credence"))
  r <- convergence_rates(s)
  swag30 <- r[r$method == "swag" & r$n == 30, ]
  expect_equal(swag30$runs, sum(s$method == "swag" & s$n == 30))
  expect_equal(swag30$converged, sum(s$method == "swag" & s$n == 30 & s$converged %in% c(TRUE, "true")))
  expect_lt(swag30$rate, 1)
  expect_error(convergence_rates(d[, c("n", "method")]), "no column 'converged'")
  d$converged <- c("yes", "no", "no", "yes", "yes")
  expect_error(convergence_rates(d), "column converged")
})

test_that("variance_decomposition splits data and algorithm variance like the hand ANOVA", {
  # Realizations (1, 3), (5, 9) and a third without its second repeat (left out):
  # MSW = 5, MSB = 25, data = (25 - 5) / 2 = 10.
  d <- data.frame(n = 30, method = "a", realization = c(0, 0, 1, 1, 2, 2),
                  train_rep = c(0, 1, 0, 1, 0, 1), crps = c(1, 3, 5, 9, 4, NA))
  r <- variance_decomposition(d)
  expect_equal(r$data, 10)
  expect_equal(r$algorithm, 5)
  expect_equal(r$data_share, 2 / 3)
  expect_equal(c(r$realizations, r$repeats), c(2L, 2L))
  # Against R's own one-way ANOVA on simulated data with known components.
  set.seed(2)
  R <- 200; K <- 3
  g <- rep(seq_len(R), each = K)
  y <- 1 + rnorm(R, sd = 0.3)[g] + rnorm(R * K, sd = 0.1)
  sim <- data.frame(n = 50, method = "m", realization = g, train_rep = rep(0:(K - 1), R), crps = y)
  a <- anova(lm(y ~ factor(g)))
  msw <- a["Residuals", "Mean Sq"]
  msb <- a["factor(g)", "Mean Sq"]
  s <- variance_decomposition(sim)
  expect_equal(s$algorithm, msw, tolerance = 1e-10)
  expect_equal(s$data, (msb - msw) / K, tolerance = 1e-10)
  expect_error(variance_decomposition(d[, -4]), "no column 'train_rep'")
})
