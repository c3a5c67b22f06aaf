test_that("posterior means equal the CLI's on the same data and seed", {
  d <- metric_table()
  cli <- credence_cli()
  f <- credence_fit(crps ~ method + (1 | realization), d, iter = 600, seed = 3)
  out <- system2(cli, c("fit", metric_table_path(),
                        "--response", "crps", "--pair", "realization", "--warmup", "150", "--draws", "450", "--max-draws", "450",
                        "--seed", "3", "--json", "-"), stdout = TRUE, stderr = FALSE)
  p <- jsonlite::fromJSON(paste(out, collapse = "\n"))$parameters
  for (k in f$summary$name) expect_equal(f$summary$mean[f$summary$name == k], p[[k]]$mean, tolerance = 1e-12)
})

test_that("a Rust panic becomes an R error and the session survives", {
  expect_error(credence:::glue_panic_for_tests("boom"), "boom")
  expect_equal(1 + 1, 2)
})

test_that("core errors arrive as R errors with the core's message", {
  d <- data.frame(method = c("A", "B"), crps = c(0.1, 0.2))
  expect_error(credence_fit(crps ~ method, d, chains = 0), "chains")
})

test_that("rows with NA are dropped with a warning", {
  d <- metric_table()
  d$crps[1] <- NA
  expect_warning(f <- credence_fit(crps ~ method + (1 | realization), d, iter = 200, seed = 1), "dropped")
  expect_equal(f$info$n_obs, nrow(d) - 1)
})
