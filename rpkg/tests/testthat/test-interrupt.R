# cores, progress and Ctrl-C of long fits (the core runs on a worker thread: src/rust/src/worker.rs).

interrupt_data <- function() {
  set.seed(5)
  d <- data.frame(method = rep(c("A", "B", "C"), 20), realization = rep(1:20, each = 3))
  d$crps <- 0.3 + 0.05 * (d$method == "B") + stats::rnorm(20, sd = 0.02)[d$realization] + stats::rnorm(60, sd = 0.01)
  d
}

test_that("the draws do not depend on cores", {
  d <- interrupt_data()
  fit <- function(cores) credence_fit(crps ~ method + (1 | realization), d, seed = 4, iter = 600, cores = cores)
  one <- as.data.frame(as_draws_df(fit(1)))
  expect_identical(as.data.frame(as_draws_df(fit(2))), one)
  expect_identical(as.data.frame(as_draws_df(fit(NULL))), one)
  # (Its warning, that no R reaches the power, is not what is tested here.)
  plan <- function(cores) {
    suppressWarnings(plan_realizations(effect = 0.3, sigma_a = 0.2, sigma_b = 0.2, r = c(3, 6), sims = 8, superchains = 2,
                      cores = cores))
  }
  p1 <- plan(1)
  p2 <- plan(2)
  attr(p1, "seconds") <- attr(p2, "seconds") <- NULL
  expect_identical(p2, p1)
  expect_error(fit(0), "credence_fit: cores must be NULL \\(all cores\\) or a whole number >= 1")
  expect_error(fit(1.5), "cores must be")
  expect_error(fit(5000), "cores = 5000.*at most 1024")
})

test_that("progress shows brms-like lines when asked and none when turned off", {
  d <- interrupt_data()
  lines <- function(progress) {
    old <- options(credence.progress = progress)
    on.exit(options(old))
    fit <- function() invisible(credence_fit(crps ~ method + (1 | realization), d, seed = 4, iter = 400))
    utils::capture.output(fit(), type = "message")
  }
  shown <- lines(TRUE)
  expect_true(all(grepl("^Sampling: [0-9]+% \\([0-9]+/1600 iterations\\)$", shown)))
  expect_true(length(shown) >= 10 && length(shown) <= 12)
  expect_identical(shown[length(shown)], "Sampling: 100% (1600/1600 iterations)")
  expect_length(lines(FALSE), 0)
  # By default a fit of well under a second shows nothing.
  expect_length(lines(NULL), 0)
})

test_that("an interrupt (Ctrl-C) stops a long fit promptly and the session survives", {
  skip_on_os("windows") # SIGINT to another process
  dir <- tempfile("credence-interrupt")
  dir.create(dir)
  out <- file.path(dir, "out")
  pid_file <- file.path(dir, "pid")
  child <- file.path(dir, "child.R")
  # A fit of a million warmup iterations per chain (minutes), stopped by SIGINT after a second.
  writeLines(c(
    "library(credence)",
    "d <- data.frame(method = rep(c('A', 'B'), 10), realization = rep(1:10, each = 2), y = sin(1:20))",
    sprintf("writeLines(as.character(Sys.getpid()), '%s')", pid_file),
    "tryCatch(credence_fit(y ~ method + (1 | realization), d, seed = 1, iter = 1000100, warmup = 1000000),",
    sprintf("         interrupt = function(e) writeLines(conditionMessage(e), '%s'))", out),
    sprintf("cat('alive\\n', file = '%s', append = TRUE)", out)
  ), child)
  system2(file.path(R.home("bin"), "Rscript"), shQuote(child), wait = FALSE, stdout = FALSE, stderr = FALSE)
  wait_for <- function(ok, seconds) {
    end <- Sys.time() + seconds
    while (!ok() && Sys.time() < end) Sys.sleep(0.1)
    ok()
  }
  expect_true(wait_for(function() file.exists(pid_file) && length(readLines(pid_file)) == 1, 60))
  pid <- as.integer(readLines(pid_file))
  on.exit(tools::pskill(pid, tools::SIGKILL), add = TRUE)
  Sys.sleep(1.5) # into the fit
  sent <- Sys.time()
  tools::pskill(pid, tools::SIGINT)
  expect_true(wait_for(function() file.exists(out) && length(readLines(out)) == 2, 10))
  expect_lt(as.numeric(difftime(Sys.time(), sent, units = "secs")), 5)
  # The fit's own interrupt (not R's, which has an empty message), then R carried on.
  expect_identical(readLines(out), c("credence_fit: interrupted", "alive"))
})
