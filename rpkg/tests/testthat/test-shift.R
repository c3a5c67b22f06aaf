# Dataset shift from R: the hierarchical comparison per intensity with the shift types as the
# paired realizations (the formula's grouping term), the same model `credence report` fits to a
# shift table. Known answer: A beats B by 0.05 accuracy under every shift type.

test_that("a shift table is compared per intensity with shift types paired", {
  shifts <- c("noise", "blur", "contrast", "fog", "frost", "pixelate", "jpeg", "snow", "zoom")
  d <- expand.grid(shift = shifts, intensity = 1:5, method = c("A", "B"), stringsAsFactors = FALSE)
  s <- match(d$shift, shifts) - 1
  set.seed(5)
  d$accuracy <- 0.92 - 0.07 * d$intensity - 0.02 * s - ifelse(d$method == "B", 0.05, 0) +
    ifelse(d$method == "B", rnorm(nrow(d), sd = 0.003), 0)
  for (i in c(1, 5)) {
    f <- credence_fit(accuracy ~ method + (1 | shift), d[d$intensity == i, ], chains = 2,
                      iter = 1000, seed = 1, higher_is_better = TRUE)
    expect_gt(prob_superior(f)["A", "B"], 0.99)
  }
})
