# Careless and hostile inputs reach the core's checks from R: typed errors (R errors with the
# core's message), never a crashed session or a silent wrong number.

test_that("a table with two values for one method and realization is refused, naming the cell", {
  d <- metric_table()
  dup <- rbind(d, d[1, ])
  expect_error(credence_fit(crps ~ method + (1 | realization), dup, iter = 400, seed = 1, chains = 2),
               "one value per method and realization.*method 'MAP', realization '0'")
})

test_that("one method is not a comparison", {
  d <- metric_table()
  expect_error(credence_fit(crps ~ method + (1 | realization), d[d$method == "MAP", ], iter = 400, chains = 2),
               "at least two methods")
})

test_that("a constant or overflowing response is a named error", {
  d <- metric_table()
  d$crps <- 0.3
  expect_error(credence_fit(crps ~ method + (1 | realization), d, iter = 400, chains = 2), "zero variance")
  d <- metric_table()
  d$crps <- d$crps * 1e300
  expect_error(credence_fit(crps ~ method + (1 | realization), d, iter = 400, chains = 2), "overflow")
})

test_that("a request for more draws than memory holds is an R error, and R goes on", {
  d <- metric_table()
  expect_error(credence_fit(crps ~ method + (1 | realization), d, iter = 2e9, warmup = 100, chains = 4),
               "draws.*GiB")
  # The session is alive and fits as before.
  f <- credence_fit(crps ~ method + (1 | realization), d, iter = 400, seed = 1, chains = 2)
  expect_s3_class(f, "credence_fit")
})

test_that("the row order of the data frame does not change the fit", {
  d <- metric_table()
  f1 <- credence_fit(crps ~ method + (1 | realization), d, iter = 400, seed = 2, chains = 2)
  set.seed(3)
  f2 <- credence_fit(crps ~ method + (1 | realization), d[sample(nrow(d)), ], iter = 400, seed = 2, chains = 2)
  expect_equal(prob_superior(f1)["MAP", "MCD"], prob_superior(f2)["MAP", "MCD"], tolerance = 0)
  s1 <- fit_summary(f1)$parameters
  s2 <- fit_summary(f2)$parameters
  for (k in names(s1)) expect_identical(s1[[k]]$mean, s2[[k]]$mean, label = k)
})

test_that("flags, numbers and labels of the wrong type are refused by name", {
  d <- data.frame(method = rep(c("A", "B"), 5), realization = rep(1:5, each = 2),
                  crps = c(0.3, 0.35) + rep(c(0.01, -0.02, 0.03, 0, 0.02), each = 2) + (1:10) / 1000)
  for (bad in list(NA, "yes", c(TRUE, FALSE), 0.5)) {
    expect_error(credence_fit(crps ~ method + (1 | realization), d, higher_is_better = bad),
                 "higher_is_better must be TRUE or FALSE")
  }
  f <- credence_fit(crps ~ method + (1 | realization), d, seed = 1)
  expect_error(prob_superior(f, higher_is_better = NA), "higher_is_better must be TRUE or FALSE")
  expect_error(mdd(f, "A", "A"), "two different methods")
  expect_error(crps_gaussian(y = factor(c(1, 2)), mean = c(0, 0), sd = c(1, 1)), "y must be numeric, not factor")
  expect_error(brier(matrix(c(0.5, 0.5, 0.2, 0.8), 2, byrow = TRUE), c(NA, 2)), "labels: NA at index 1")
})
