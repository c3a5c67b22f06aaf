# A fit saved with saveRDS and read back in a new R session, or sent to a parallel worker, answers
# as the original: the core fit is made again from the recorded data, arguments and seed.

small_fit <- function() {
  set.seed(3)
  d <- data.frame(method = rep(c("A", "B", "C"), each = 8), realization = rep(1:8, 3))
  d$crps <- 0.5 + 0.1 * (d$method == "B") + stats::rnorm(8)[d$realization] * 0.05 + stats::rnorm(24, sd = 0.02)
  credence_fit(crps ~ method + (1 | realization), data = d, seed = 11, iter = 1000)
}

# What a user reads off a fit, as one list.
answers <- function(fit) {
  list(print = utils::capture.output(print(fit)), summary = utils::capture.output(summary(fit)),
       prob = prob_superior(fit), mdd = mdd(fit, "A", "B", power = 0.8), draws = as.data.frame(as_draws_df(fit)))
}

test_that("a fit read back by readRDS in a new R session answers as the original", {
  fit <- small_fit()
  path <- tempfile(fileext = ".rds")
  saveRDS(fit, path)
  out <- tempfile(fileext = ".rds")
  code <- sprintf(paste0("library(credence); f <- readRDS('%s'); a <- list(print = capture.output(print(f)), ",
                         "summary = capture.output(summary(f)), prob = prob_superior(f), ",
                         "mdd = mdd(f, 'A', 'B', power = 0.8), draws = as.data.frame(as_draws_df(f))); ",
                         "saveRDS(a, '%s')"), path, out)
  status <- system2(file.path(R.home("bin"), "Rscript"), c("-e", shQuote(code)), stdout = FALSE, stderr = FALSE)
  expect_equal(status, 0L)
  expect_identical(readRDS(out), answers(fit))
  # In this session too, once its pointer is gone (what readRDS gives), and only one rebuild.
  back <- readRDS(path)
  expect_identical(answers(back), answers(fit))
  expect_false(is.null(back$cache$ptr))
})

test_that("a fit works inside a parallel PSOCK worker", {
  skip_if_not_installed("parallel")
  fit <- small_fit()
  cl <- parallel::makeCluster(1, type = "PSOCK")
  on.exit(parallel::stopCluster(cl))
  parallel::clusterEvalQ(cl, library(credence))
  got <- parallel::parLapply(cl, list(fit), function(f) prob_superior(f))[[1]]
  expect_identical(got, prob_superior(fit))
})
