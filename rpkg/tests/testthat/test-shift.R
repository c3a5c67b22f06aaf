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

test_that("a classification study's table is compared per intensity in R as in the CLI", {
  cli <- credence_cli()
  dir <- withr_tempdir()
  out <- file.path(dir, "class.csv")
  status <- system2(cli, c("study", "--task", "classification", "--dataset", "synthetic", "--n", "60",
                           "--realizations", "3", "--methods", "map,ensemble", "--shifts", "feature_noise",
                           "--epoch-scale", "0.05", "--quiet", "--out", out), stdout = FALSE, stderr = FALSE)
  expect_equal(status, 0)
  d <- utils::read.csv(out)
  # One row per (method, realization, test set): the i.i.d. set and intensities 1-5.
  expect_equal(nrow(d), 2 * 3 * 6)
  expect_setequal(unique(d$intensity), 0:5)
  expect_true(all(d$shift[d$intensity == 0] == "none"))
  for (i in c(0, 5)) {
    f <- credence_fit(ece ~ method + (1 | realization), d[d$intensity == i, ], chains = 4, iter = 800,
                      warmup = 200, seed = 1)
    j <- cli_json(c("fit", out, "--where", paste0("intensity=", i), "--response", "ece", "--pair",
                    "realization", "--warmup", "200", "--draws", "600", "--max-draws", "600", "--seed", "1",
                    "--json", "-"))
    p <- prob_superior(f)
    expect_equal(p["ensemble", "map"], j$prob_better$ensemble$map, tolerance = 1e-12)
    expect_equal(p["map", "ensemble"], j$prob_better$map$ensemble, tolerance = 1e-12)
  }
})
