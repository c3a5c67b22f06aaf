# credence_audit fills the core's audit as `credence audit` does: the same table gives the same
# scores, and what does not apply is refused by name.

audit_table <- function() {
  set.seed(7)
  n <- 40
  d <- data.frame(method = rep(c("A", "B", "C"), n), realization = rep(seq_len(n), each = 3))
  d$crps <- c(0.30, 0.33, 0.45)[match(d$method, c("A", "B", "C"))] + rep(rnorm(n, sd = 0.05), each = 3) +
    rnorm(3 * n, sd = 0.03)
  d
}

test_that("the audit's scores are the CLI's on the same table", {
  d <- audit_table()
  a <- (credence_audit(crps ~ method + (1 | realization), d, r = c(4, 8), subsets = 6, draws = 200))
  expect_s3_class(a, "credence_audit")
  expect_equal(unique(a$scores$model), c("paired", "additive", "paired_difference"))
  expect_equal(unique(a$scores$r), c(4L, 8L))
  expect_true(all(a$scores$settled <= a$scores$answers))
  expect_equal(nrow(a$verdicts), 3)
  path <- file.path(withr_tempdir(), "t.csv")
  utils::write.csv(d, path, row.names = FALSE)
  j <- cli_json(c("audit", path, "--response", "crps", "--group", "method", "--pair", "realization", "--r", "4,8",
                  "--subsets", "6", "--draws", "200", "--json", "-", "--quiet"))
  cli <- do.call(rbind, lapply(j$audit$points, function(p) {
    do.call(rbind, lapply(p$scores, function(s) data.frame(r = p$r, model = s$model, answers = s$answers,
                                                          settled = s$settled, wrong = s$wrong)))
  }))
  expect_equal(a$scores[, c("r", "model", "answers", "settled", "wrong")], cli, ignore_attr = TRUE)
  expect_output(print(a), "paired_difference")
})

test_that("bad audits are refused by name", {
  d <- audit_table()
  expect_error(credence_audit(crps ~ method, d), "realization term")
  expect_error((credence_audit(crps ~ method + (1 | realization), d, r = 40)), "realizations")
  expect_error((credence_audit(crps ~ method + (1 | realization), d, models = "zhan")), "models")
  expect_error((credence_audit(crps ~ method + (1 | realization), d, subsets = 0)), "subsets")
})

test_that("credence_fit's model: the paired one by default on a paired table, the additive one by name", {
  d <- audit_table()
  p <- (credence_fit(crps ~ method + (1 | realization), d, seed = 2))
  expect_equal(p$sampler, "none")
  expect_equal(p$info$warmup, 0)
  expect_match(p$info$form, "paired")
  expect_equal(prior_summary(p)$class, c("mu", "Sigma"))
  expect_output(print(p), "exact independent draws")
  a <- (credence_fit(crps ~ method + (1 | realization), d, model = "additive", seed = 2))
  expect_equal(a$sampler, "nuts")
  expect_true("tau" %in% a$summary$name)
  # An option of the additive model means the additive model; with the paired one named, an error.
  expect_equal((credence_fit(crps ~ method + (1 | realization), d, iter = 400, seed = 2))$sampler, "nuts")
  expect_error(credence_fit(crps ~ method + (1 | realization), d, model = "paired", iter = 400), "additive")
  k <- (credence_fit(crps ~ method + (1 | realization), d, covariance_df = 2, seed = 2))
  expect_equal(prior_summary(k)$source, c("default", "user"))
  # The paired model's P(A better) is the paired-difference posterior's (Student-t) as k -> 0.
  dd <- d$crps[d$method == "B"] - d$crps[d$method == "A"]
  p_t <- stats::pt(mean(dd) / (stats::sd(dd) / sqrt(length(dd))), df = length(dd) - 1)
  expect_equal(prob_superior(p)["A", "B"], p_t, tolerance = 0.02)
})

test_that("a data-set term audits the across model per data set, as credence audit --dataset-column does", {
  set.seed(5)
  n <- 12
  d <- do.call(rbind, lapply(1:3, function(k) {
    x <- data.frame(dataset = paste0("D", k), method = rep(c("A", "B", "C"), n), realization = rep(seq_len(n), each = 3))
    mu <- list(c(0.30, 0.36, 0.40), c(0.40, 0.36, 0.30), c(0.30, 0.30, 0.38))[[k]]
    x$crps <- mu[match(x$method, c("A", "B", "C"))] + rep(rnorm(n, sd = 0.05), each = 3) + rnorm(3 * n, sd = 0.03)
    x
  }))
  a <- (credence_audit(crps ~ method + (1 | dataset:method) + (1 | realization), d, r = 4, subsets = 4))
  expect_equal(a$models, "across")
  expect_equal(sort(unique(a$verdicts$dataset)), c("D1", "D2", "D3"))
  expect_equal(nrow(a$verdicts), 9)
  expect_equal(a$scores$model, c("across", "paired_difference"))
  expect_equal(a$scores$answers, rep(4 * sum(a$verdicts$clear), 2))
  expect_output(print(a), "Calibration audit")
  expect_error(credence_audit(crps ~ method + (1 | dataset:method) + (1 | realization), d, models = "paired"),
               "across")
  # One table keeps no data-set column in its verdicts.
  expect_null(credence_audit(crps ~ method + (1 | realization), d[d$dataset == "D1", ], models = "paired", r = 4,
                             subsets = 2)$verdicts$dataset)
})
