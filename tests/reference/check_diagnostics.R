#!/usr/bin/env Rscript
# Cross-check `credence diagnostics` against the R package posterior on the same draws.
#
# Usage: Rscript tests/reference/check_diagnostics.R target/debug/credence
#
# Draw sets cover: independent and strongly autocorrelated AR(1) chains, antithetic chains,
# non-converged (shifted) chains, odd chain lengths (split-R-hat drops the middle draw),
# discrete values with many ties, a single chain, heavy tails, and a constant quantity
# (posterior returns NA, credence null). Every statistic must agree within 1e-6 (relative,
# or absolute below 1).

suppressPackageStartupMessages({
  library(posterior)
  library(jsonlite)
})
args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 1) stop("usage: check_diagnostics.R PATH/TO/credence")
credence <- args[1]
set.seed(20261122)

ar1 <- function(n, phi, offset = 0) {
  x <- numeric(n)
  e <- rnorm(n)
  x[1] <- e[1]
  for (i in 2:n) x[i] <- phi * x[i - 1] + e[i]
  x + offset
}

make_set <- function(n_iter, n_chain, gen) {
  df <- do.call(rbind, lapply(seq_len(n_chain), function(c) {
    d <- gen(n_iter, c)
    d$.chain <- c
    d$.iteration <- seq_len(n_iter)
    d
  }))
  df
}

sets <- list(
  iid = make_set(1000, 4, function(n, c) data.frame(a = rnorm(n), b = rexp(n))),
  autocorrelated = make_set(1000, 4, function(n, c) data.frame(a = ar1(n, 0.9), b = ar1(n, 0.99))),
  antithetic = make_set(800, 4, function(n, c) data.frame(a = ar1(n, -0.6))),
  shifted = make_set(500, 4, function(n, c) data.frame(a = rnorm(n, c / 2), b = rnorm(n, 0, c))),
  odd_length = make_set(333, 3, function(n, c) data.frame(a = ar1(n, 0.5), b = rt(n, 2))),
  ties = make_set(400, 4, function(n, c) data.frame(a = rpois(n, 2), b = rbinom(n, 1, 0.2))),
  single_chain = make_set(1001, 1, function(n, c) data.frame(a = ar1(n, 0.3))),
  constant = make_set(100, 2, function(n, c) data.frame(a = rep(1.5, n), b = rnorm(n)))
)

stats <- list(
  rhat = function(x) rhat(x),
  ess_bulk = function(x) ess_bulk(x),
  ess_tail = function(x) ess_tail(x),
  ess_mean = function(x) ess_mean(x),
  ess_median = function(x) ess_median(x),
  mcse_mean = function(x) mcse_mean(x),
  mcse_q5 = function(x) mcse_quantile(x, 0.05),
  mcse_median = function(x) mcse_median(x),
  mcse_q95 = function(x) mcse_quantile(x, 0.95)
)

failures <- character(0)
checks <- 0
dir <- tempfile("diag")
dir.create(dir)
for (set_name in names(sets)) {
  df <- sets[[set_name]]
  path <- file.path(dir, paste0(set_name, ".csv"))
  write.csv(df, path, row.names = FALSE)
  df <- read.csv(path) # both sides see the same (15-digit) numbers
  json <- system2(credence, c("diagnostics", path, "--json"), stdout = TRUE)
  if (!is.null(attr(json, "status"))) stop("credence failed on ", set_name)
  got <- jsonlite::fromJSON(paste(json, collapse = "\n"), simplifyVector = FALSE)
  for (param in setdiff(names(df), c(".chain", ".iteration"))) {
    x <- matrix(df[[param]], ncol = length(unique(df$.chain)))
    for (stat in names(stats)) {
      want <- suppressWarnings(stats[[stat]](x))
      have <- got[[param]][[stat]]
      checks <- checks + 1
      ok <- if (is.na(want)) is.null(have) || is.na(have) else
        !is.null(have) && !is.na(have) && abs(have - want) <= 1e-6 * max(1, abs(want))
      if (!ok) {
        failures <- c(failures, sprintf("%s/%s/%s: credence %s, posterior %s", set_name, param, stat,
                                        format(have, digits = 12), format(want, digits = 12)))
      }
    }
  }
}
for (f in failures) cat("FAIL", f, "\n")
cat(sprintf("diagnostics checks against posterior %s: %d passed, %d failed\n",
            as.character(packageVersion("posterior")), checks - length(failures), length(failures)))
quit(status = if (length(failures) > 0) 1 else 0)
