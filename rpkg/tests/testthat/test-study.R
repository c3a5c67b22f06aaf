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
