# The rank posterior (issue 32): numbers from the core, recounted here from the fit's draws.

test_that("rank_posterior counts the ranks of the draws, and prob_best is its first column", {
  d <- metric_table()
  f <- credence_fit(crps ~ method + (1 | realization), d, iter = 400, seed = 3, chains = 2)
  r <- rank_posterior(f)
  m <- r$method
  expect_equal(sort(m), sort(unique(d$method)))
  # An independent recount: rank the methods in every draw of fixef (lower CRPS is better).
  draws <- fixef(f, summary = FALSE)[, m]
  ranks <- t(apply(draws, 1, function(v) rank(v, ties.method = "first")))
  for (k in seq_along(m)) {
    expect_equal(r[[paste0("rank_", k)]], unname(colMeans(ranks == k)), tolerance = 1e-12, label = paste("rank", k))
  }
  expect_equal(r$prob_best, r$rank_1)
  expect_equal(r$expected_rank, unname(colMeans(ranks)), tolerance = 1e-12)
  expect_true(all(r$prob_best_mcse >= 0 & r$expected_rank_mcse >= 0))
  expect_true(all(r$rank_q2.5 <= r$rank_q97.5))
  expect_equal(sum(r$prob_best), 1, tolerance = 1e-12)
  pb <- prob_best(f)
  expect_equal(unname(pb[m]), r$prob_best)
  expect_error(prob_best(f, dataset = "energy"), "no dataset argument")
  expect_error(rank_posterior(list()), "must be a credence_fit")
  out <- capture.output(print(f))
  at <- grep("^Ranks \\(1 = best", out)
  expect_length(at, 1)
  expect_true(grepl("P(best)", out[at + 1], fixed = TRUE))
  expect_true(grepl(paste0("^", r$method[1], " "), out[at + 2]))
  # Higher is better reverses the ranks draw by draw.
  h <- credence_fit(crps ~ method + (1 | realization), d, iter = 400, seed = 3, chains = 2, higher_is_better = TRUE)
  rh <- rank_posterior(h)
  dh <- fixef(h, summary = FALSE)[, rh$method]
  expect_equal(rh$prob_best, unname(colMeans(dh == apply(dh, 1, max))), tolerance = 1e-12)
})
