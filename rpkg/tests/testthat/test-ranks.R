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

test_that("paper_table, as_latex and as_markdown hold the core's numbers; fit_sentences states them", {
  d <- metric_table()
  f <- credence_fit(crps ~ method + (1 | realization), d, iter = 400, seed = 3, chains = 2)
  s <- fit_summary(f)
  t <- paper_table(f)
  expect_s3_class(t, "data.frame")
  expect_equal(t$Method, unlist(s$ranking))
  expect_equal(names(t)[1:3], c("Method", "Posterior mean [95% CrI]", "P(best)"))
  # P(best) to three decimals, as the summary's; the IQM column is rliable's cross-check.
  expect_equal(as.numeric(t[["P(best)"]]), round(unname(unlist(s$prob_best)[t$Method]), 3), tolerance = 1e-9)
  iqm <- as.numeric(sub(" .*", "", t[["IQM [95% CI] (bootstrap)"]]))
  expect_equal(iqm, vapply(t$Method, function(m) s$aggregates$methods[[m]]$iqm$estimate, 0), tolerance = 1e-3,
               ignore_attr = TRUE)
  # The IQM itself: a quarter trimmed from each end, as scipy's trim_mean (and mean(trim = 0.25)).
  for (m in t$Method) {
    y <- d$crps[d$method == m]
    expect_equal(s$aggregates$methods[[m]]$iqm$estimate, mean(sort(y)[(floor(length(y) / 4) + 1):(length(y) - floor(length(y) / 4))]),
                 tolerance = 1e-12)
  }
  tex <- as_latex(f)
  expect_match(tex, "^\\\\begin\\{tabular\\}")
  expect_match(tex, "\\\\bottomrule")
  md <- strsplit(as_markdown(f), "\n")[[1]]
  expect_length(md, 2 + nrow(t))
  if (requireNamespace("knitr", quietly = TRUE)) expect_true(length(knitr::kable(t)) > nrow(t))
  w <- fit_sentences(f, rope = 0.01)
  best <- names(which.max(unlist(s$prob_best)))
  expect_match(w[1], paste0("^", best, " is best with probability "))
  expect_length(w, length(s$ranking))
  expect_true(all(grepl("ROPE|practically equivalent", w[-1])))
  out <- capture.output(summary(f))
  expect_true(any(out == "In words:"))
  expect_error(paper_table(list()), "must be a credence_fit")
})

test_that("cd_diagram draws the core's expected ranks and groups", {
  skip_if_not_installed("ggplot2")
  d <- metric_table()
  f <- credence_fit(crps ~ method + (1 | realization), d, iter = 400, seed = 3, chains = 2)
  s <- fit_summary(f)
  r <- rank_posterior(f)
  g <- cd_diagram(f)
  expect_s3_class(g, "ggplot")
  expect_equal(g$data$rank, sort(r$expected_rank), tolerance = 1e-12)
  # One bar per group, spanning its members' ranks.
  bars <- Filter(function(l) is.data.frame(l$data) && "xend" %in% names(l$data), g$layers)
  groups <- s$cd$bayesian
  expect_equal(length(bars), as.integer(length(groups) > 0))
  if (length(groups)) expect_equal(nrow(bars[[1]]$data), length(groups))
  gc <- cd_diagram(f, "classic")
  expect_equal(gc$data$rank, unname(sort(unlist(s$classic_cd$average_ranks))), tolerance = 1e-12)
  expect_silent(ggplot2::ggplot_build(gc))
  expect_error(cd_diagram(list()), "must be a credence_fit or credence_across")
})
