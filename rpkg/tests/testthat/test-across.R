# The model across data sets: credence_fit with (1 | dataset:method) or dataset = "column".

across_table <- function(n_rep = 6) {
  set.seed(11)
  sets <- c("energy", "yacht", "concrete")
  level <- c(energy = 0.2, yacht = 0.5, concrete = 0.8)
  effect <- c(A = 0, B = 0.15, C = 0.05)
  rows <- expand.grid(realization = seq_len(n_rep), method = names(effect), dataset = sets, stringsAsFactors = FALSE)
  gamma <- stats::rnorm(length(sets) * n_rep, sd = 0.05)
  g <- gamma[(match(rows$dataset, sets) - 1) * n_rep + rows$realization]
  rows$crps <- level[rows$dataset] + effect[rows$method] + g + stats::rnorm(nrow(rows), sd = 0.03)
  rows[sample(nrow(rows)), c("dataset", "method", "realization", "crps")]
}

fit_args <- list(chains = 2, iter = 500, warmup = 200, seed = 7)

across_fit <- function(formula, d, ...) do.call(credence_fit, c(list(formula, d), fit_args, list(...)))

# The summary without its wall-clock time.
timeless <- function(s) s[setdiff(names(s), "seconds")]

test_that("the formula and the dataset argument give the same fit", {
  d <- across_table()
  a <- across_fit(crps ~ method + (1 | realization) + (1 | dataset:method), d)
  b <- across_fit(crps ~ method + (1 | realization), d, dataset = "dataset")
  c <- across_fit(crps ~ method + (1 | dataset:realization) + (1 | method:dataset), d)
  expect_s3_class(a, "credence_across")
  expect_identical(timeless(a$summary), timeless(b$summary))
  expect_identical(timeless(a$summary), timeless(c$summary))
  expect_identical(a$dataset, "dataset")
  expect_identical(a$summary$data$datasets, c("concrete", "energy", "yacht"))
  expect_identical(a$summary$data$realizations, 18)
})

test_that("probabilities lie in [0, 1] and P(best) sums to 1", {
  f <- across_fit(crps ~ method + (1 | realization) + (1 | dataset:method), across_table(), rope = 0.05)
  s <- fit_summary(f)
  pb <- prob_best(f)
  expect_named(pb, c("A", "B", "C"))
  expect_true(all(pb >= 0 & pb <= 1))
  expect_equal(sum(pb), 1, tolerance = 1e-9)
  for (d in s$data$datasets) {
    p <- prob_best(f, dataset = d)
    expect_true(all(p >= 0 & p <= 1))
    expect_equal(sum(p), 1, tolerance = 1e-9)
  }
  for (a in names(s$pairwise)) for (b in names(s$pairwise[[a]])) {
    pr <- s$pairwise[[a]][[b]]
    expect_true(pr$prob_better_new >= 0 && pr$prob_better_new <= 1)
    expect_true(all(unlist(pr$prob_better_on) >= 0 & unlist(pr$prob_better_on) <= 1))
    expect_equal(sum(unlist(pr$rope$most_probable)), 1, tolerance = 1e-9)
    expect_identical(prob_better(f, a, b), pr$prob_better_new)
    expect_identical(prob_better(f, a, b, dataset = "yacht"), pr$prob_better_on$yacht)
  }
  # A is lower (better) than B by 0.15 on every data set.
  expect_gt(prob_better(f, "A", "B", dataset = "energy"), 0.95)
  v <- variance_share(f)
  expect_named(v, c("mean", "q2.5", "q97.5"))
  expect_true(all(v >= 0 & v <= 1))
  expect_identical(rownames(fixef(f)), c("A", "B", "C"))
  expect_equal(s$rope_eps, 0.05)
})

test_that("print and summary show the effects, the group-level sds and the probabilities", {
  f <- across_fit(crps ~ method + (1 | realization) + (1 | dataset:method), across_table())
  out <- capture.output(print(f))
  expect_true(any(grepl("across data sets", out)))
  expect_true(any(grepl("Population-Level Effects", out)))
  expect_true(any(grepl("~dataset:method", out)))
  expect_true(any(grepl("P\\(best on a new data set\\)", out)))
  expect_true(any(grepl("P\\(row better than column on a new data set\\)", out)))
  s <- summary(f)
  expect_identical(rownames(s$prob_better_new), c("A", "B", "C"))
  expect_identical(dim(s$prob_best_on), c(3L, 3L))
})

test_that("the options reach the core", {
  d <- across_table()
  f <- across_fit(crps ~ method + (1 | realization) + (1 | dataset:method), d, sigma = "per_method",
                  across_scale = "per_dataset", interaction = "student_t")
  s <- f$summary
  expect_identical(s$model$sigma, "per_method")
  expect_identical(s$model$interaction, "student_t")
  expect_identical(s$scale, "per_data_set")
  expect_true("df" %in% names(s$parameters))
  expect_true(all(paste0("sigma[", c("A", "B", "C"), "]") %in% names(s$parameters)))
  g <- across_fit(crps ~ method + (1 | realization) + (1 | dataset:method), d, sigma = ~method)
  expect_identical(g$summary$model$sigma, "per_method")
  h <- across_fit(crps ~ method + (1 | dataset:method), d, higher_is_better = TRUE)
  expect_identical(h$summary$data$realizations, 0)
  expect_true(h$summary$higher_is_better)
})

test_that("one data set, bad terms and bad options are clear errors", {
  d <- across_table()
  one <- d[d$dataset == "yacht", ]
  expect_error(across_fit(crps ~ method + (1 | realization) + (1 | dataset:method), one), "at least two data sets")
  expect_error(across_fit(crps ~ method + (1 | dataset:method), d, dataset = "realization"),
               "formula's interaction is \\(1 \\| dataset:method\\)")
  expect_error(across_fit(crps ~ method + (1 | realization:n), d), "unsupported term")
  expect_error(across_fit(crps ~ method + (1 | dataset:method), d, family = beta_binomial()),
               "family = beta_binomial: the across-data-sets model is Gaussian")
  expect_error(across_fit(covered | trials(n) ~ method + (1 | dataset:method), d), "gaussian: its formula has no trials")
  expect_error(across_fit(crps ~ method + (1 | dataset:method), d, sigma = "shared"), "per_cell")
  expect_error(across_fit(crps ~ method + (1 | dataset:method), d, rope = -1), "rope")
  expect_error(across_fit(crps ~ method + (1 | realization), d, rope = 0.1), "rope applies")
  expect_error(across_fit(crps ~ method + (1 | realization), d, interaction = "student_t"), "across data sets only")
  expect_error(across_fit(crps ~ method + (1 | realization), d, dataset = "nope"), "not in data: nope")
  f <- across_fit(crps ~ method + (1 | dataset:method), d)
  expect_error(prob_better(f, "A", "Z"), "method 'Z' is not one of A, B, C")
  expect_error(prob_best(f, dataset = "iris"), "dataset 'iris' is not one of")
  dup <- rbind(d, d[1, ])
  expect_error(across_fit(crps ~ method + (1 | realization) + (1 | dataset:method), dup), "one value per data set, method and realization")
})

test_that("the across model takes its own priors and refuses what it does not have", {
  d <- across_table()
  fm <- crps ~ method + (1 | realization) + (1 | dataset:method)
  expect_error(across_fit(fm, d, prior = credence_prior(tau = half_normal(1))), "prior_tau")
  f <- across_fit(fm, d, prior = credence_prior(sigma = half_normal(0.5)))
  expect_identical(f$summary$model$priors$sigma, list(family = "half_normal", scale = 0.5))
  expect_error(across_fit(fm, d, control = list(superchains = 4)),
               "superchains = 4: it applies to batched ChEES, and the across-data-sets model samples by NUTS")
  expect_error(across_fit(fm, d, backend = "cuda"), "backend = cuda: .*; use backend = cpu")
  expect_error(across_fit(fm, d, sampler = "chees"), "sampler = chees: .*; use sampler = nuts")
  expect_error(across_fit(fm, d, rope = 0), "rope = 0: the half-width")
})

test_that("update refits the across model", {
  f <- across_fit(crps ~ method + (1 | realization) + (1 | dataset:method), across_table())
  g <- update(f, interaction = "student_t")
  expect_s3_class(g, "credence_across")
  expect_identical(g$summary$model$interaction, "student_t")
})

test_that("the R fit equals the CLI's credence fit --dataset-column --json key by key", {
  cli <- credence_cli()
  help <- system2(cli, c("fit", "--help"), stdout = TRUE, stderr = FALSE)
  if (!any(grepl("--dataset-column", help, fixed = TRUE))) skip("this CLI build has no --dataset-column")
  path <- file.path(withr_tempdir(), "across.csv")
  utils::write.csv(across_table(), path, row.names = FALSE)
  d <- utils::read.csv(path)
  f <- credence_fit(crps ~ method + (1 | realization) + (1 | dataset:method), d, chains = 4, iter = 600,
                    warmup = 150, seed = 3, rope = 0.05)
  j <- cli_json(c("fit", normalizePath(path), "--response", "crps", "--pair", "realization", "--dataset-column",
                  "dataset", "--warmup", "150", "--draws", "450", "--max-draws", "450", "--seed", "3",
                  "--rope", "0.05", "--json", "-"))
  r <- f$summary
  expect_setequal(names(r), names(j))
  # The CLI's --max-draws bounds its extension of a fit that is not clean; R's iter is exact
  # (max_draws null): the sampler settings agree but for it.
  r$sampler$max_draws <- NULL
  j$sampler$max_draws <- NULL
  # The CLI's warnings start with the table's notes (rows dropped, ...); the fit's are the same.
  expect_identical(utils::tail(unlist(j$warnings), length(r$warnings)), unlist(r$warnings))
  for (k in setdiff(names(r), c("seconds", "warnings"))) {
    expect_equal(unlist(r[[k]]), unlist(j[[k]]), tolerance = 1e-10, label = paste0("R's ", k),
                 expected.label = paste0("the CLI's ", k))
  }
})

test_that("a response far from the default priors' scale is refused, naming the per-data-set scale", {
  d <- across_table()
  d$crps <- d$crps * 1e5
  expect_error(across_fit(crps ~ method + (1 | realization) + (1 | dataset:method), d),
               "within \\[1e-6, 1e3\\].*per-dataset")
  # Each data set on its own scale, the same table fits.
  f <- across_fit(crps ~ method + (1 | realization) + (1 | dataset:method), d, across_scale = "per_dataset")
  expect_s3_class(f, "credence_across")
})

test_that("ranks on a new data set, the classic CD over data sets and the performance profiles hold the core's numbers", {
  d <- across_table()
  f <- across_fit(crps ~ method + (1 | realization), d, dataset = "dataset")
  s <- fit_summary(f)
  r <- rank_posterior(f)
  expect_equal(r$method, unlist(s$ranking))
  pb <- prob_best(f)
  expect_equal(r$prob_best, unname(pb[r$method]))
  expect_equal(r$prob_best, r$rank_1)
  k <- seq_along(r$method)
  expect_equal(r$expected_rank, as.vector(as.matrix(r[paste0("rank_", k)]) %*% k), tolerance = 1e-12)
  expect_equal(colSums(r[paste0("rank_", k)]), setNames(rep(1, length(k)), paste0("rank_", k)), tolerance = 1e-12)
  # Classic CD with data sets as blocks: each method's mean per data set ranked within it.
  means <- tapply(d$crps, list(d$dataset, d$method), mean)
  avg <- colMeans(t(apply(means, 1, rank)))
  expect_equal(unlist(s$classic_cd$average_ranks)[names(avg)], avg, tolerance = 1e-12)
  expect_equal(s$classic_cd$blocks, 3L)
  # Performance profiles: min-max normalised per data set (lower CRPS is better), the share of
  # runs above tau averaged over data sets, recounted here.
  p <- performance_profiles(f)
  expect_setequal(unique(p$method), unique(d$method))
  norm <- unsplit(lapply(split(d$crps, d$dataset), function(y) (max(y) - y) / (max(y) - min(y))), d$dataset)
  for (m in unique(d$method)) {
    q <- p[p$method == m, ]
    mine <- vapply(q$tau, function(t) mean(tapply(norm[d$method == m] > t, d$dataset[d$method == m], mean)), 0)
    expect_equal(q$fraction, mine, tolerance = 1e-12, label = m)
    expect_true(all(q$lower <= q$fraction + 1e-12 & q$fraction <= q$upper + 1e-12))
  }
  expect_error(performance_profiles(list()), "must be a credence_across")
  # The core's sentences on a new data set, stored with the fit and printed by summary().
  w <- fit_sentences(f)
  expect_match(w[1], paste0("^", names(which.max(pb)), " is best on a new data set with probability "))
  expect_length(w, length(s$ranking))
  expect_error(fit_sentences(f, rope = 0.01), "credence_fit's rope")
  out <- capture.output(summary(f))
  at <- which(out == "In words:")
  expect_length(at, 1)
  expect_identical(out[at + seq_along(w)], paste0("  ", w))
  if (requireNamespace("ggplot2", quietly = TRUE)) {
    g <- cd_diagram(f)
    expect_s3_class(g, "ggplot")
    expect_equal(g$data$method, r$method[order(r$expected_rank)])
    expect_equal(g$data$rank, sort(r$expected_rank), tolerance = 1e-12)
    gc <- cd_diagram(f, "classic")
    expect_equal(gc$data$rank, unname(sort(avg)), tolerance = 1e-12)
    expect_match(gc$scales$get_scales("x")$name, "Friedman/Nemenyi")
  }
})
