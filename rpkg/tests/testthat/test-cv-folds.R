# Cross-validation folds: cv_test_fraction is the core's paired-model option; these check the
# conversion and the refusals, and the answer against baycomp's correlated t-test written out.

cv_table <- function() {
  set.seed(11)
  k <- 10
  shared <- rnorm(1, sd = 0.01)
  data.frame(method = rep(c("A", "B"), k), realization = rep(seq_len(k), each = 2),
             crps = c(0.30, 0.31) + rep(rnorm(k, sd = 0.02), each = 2) + rnorm(2 * k, sd = 0.01) +
               c(0, shared))
}

test_that("cv_test_fraction gives baycomp's correlated t-test for two methods", {
  d <- cv_table()
  f <- (credence_fit(crps ~ method + (1 | realization), d, cv_test_fraction = 0.1, seed = 3))
  expect_match(f$info$form, "cross-validation folds of one data set \\(test fraction 0.1\\)")
  dd <- d$crps[d$method == "B"] - d$crps[d$method == "A"]
  n <- length(dd)
  p_baycomp <- stats::pt(mean(dd) / sqrt(stats::var(dd) * (1 / n + 0.1 / 0.9)), df = n - 1)
  expect_equal(prob_superior(f)["A", "B"], p_baycomp, tolerance = 0.02)
  # Independent realizations: surer, and the paired t-test's answer.
  g <- (credence_fit(crps ~ method + (1 | realization), d, seed = 3))
  expect_gt(abs(prob_superior(g)["A", "B"] - 0.5), abs(prob_superior(f)["A", "B"] - 0.5))
  # update() keeps the fraction.
  expect_match(update(f, seed = 4)$info$form, "test fraction 0.1")
})

test_that("models that cannot carry the folds' correlation refuse cv_test_fraction by name", {
  d <- cv_table()
  expect_error(credence_fit(crps ~ method + (1 | realization), d, model = "additive", cv_test_fraction = 0.1),
               "cv_test_fraction.*only the paired model")
  expect_error(credence_fit(crps ~ method + (1 | realization), d, cv_test_fraction = 1), "cv_test_fraction.*\\[0, 1\\)")
  d$dataset <- rep(c("D1", "D2"), each = 10)
  expect_error(credence_fit(crps ~ method + (1 | realization), d, dataset = "dataset", cv_test_fraction = 0.1),
               "cv_test_fraction")
})
