# The brms-style API: formulas, families, priors, printing, methods; numbers checked against
# the CLI (target/debug/credence) on the same data and seed.

# Runs `credence fit CSV ARGS --json -` and returns the parsed JSON.
cli_fit <- function(csv, ...) {
  out <- system2(credence_cli(), shQuote(c("fit", normalizePath(csv), ..., "--json", "-")), stdout = TRUE, stderr = FALSE)
  getExportedValue("jsonlite", "fromJSON")(paste(out, collapse = "\n"), simplifyVector = FALSE)
}

expect_same_means <- function(f, cli) {
  expect_setequal(f$summary$name, names(cli$parameters))
  for (k in f$summary$name) {
    expect_equal(f$summary$mean[f$summary$name == k], cli$parameters[[k]]$mean, tolerance = 1e-12, label = k)
    expect_equal(f$summary$rhat[f$summary$name == k], cli$parameters[[k]]$rhat, tolerance = 1e-12, label = k)
  }
}

test_that("formulas parse into response, trials, method and realization columns", {
  p <- credence:::parse_credence_formula
  expect_equal(p(crps ~ method + (1 | realization)),
               list(response = "crps", trials = NULL, group = "method", pair = "realization", dataset = NULL,
                    training = NULL, item = NULL))
  expect_equal(p(crps ~ method), list(response = "crps", trials = NULL, group = "method", pair = NULL, dataset = NULL,
                                      training = NULL, item = NULL))
  expect_equal(p(crps ~ method + (1 | realization) + (1 | item))[c("pair", "item")],
               list(pair = "realization", item = "item"))
  expect_equal(p(crps ~ method + (1 | realization/train_rep))[c("pair", "training")],
               list(pair = "realization", training = "train_rep"))
  across <- list(response = "crps", trials = NULL, group = "method", pair = "realization", dataset = "dataset",
                 training = NULL, item = NULL)
  expect_equal(p(crps ~ method + (1 | realization) + (1 | dataset:method)), across)
  expect_equal(p(crps ~ (1 | dataset:realization) + (1 | method:dataset) + method), across)
  expect_equal(p(covered | trials(n_test) ~ method + (1 | realization))$trials, "n_test")
  expect_equal(p(crps ~ (1 | realization) + model)$group, "model")
  expect_true(credence:::parse_sigma_formula(~1, "method"))
  expect_false(credence:::parse_sigma_formula(~method, "method"))
})

test_that("unsupported formula terms fail with a message naming the term", {
  d <- metric_table()
  expect_error(credence_fit(crps ~ method + x, d), "unsupported term 'x'")
  expect_error(credence_fit(crps ~ method * n_test, d), "unsupported term 'method \\* n_test'")
  expect_error(credence_fit(crps ~ method + (1 + method | realization), d),
               "unsupported term '\\(1 \\+ method \\| realization\\)'")
  expect_error(credence_fit(log(crps) ~ method, d), "unsupported response 'log\\(crps\\)'")
  expect_error(credence_fit(covered | weights(n_test) ~ method, d, family = beta_binomial()),
               "unsupported response term 'weights\\(n_test\\)'")
  expect_error(credence_fit(crps ~ method, d, sigma = ~realization), "unsupported sigma term 'realization'")
  expect_error(credence_fit(crps ~ method, d, family = poisson()), "unsupported family 'poisson'")
  expect_error(credence_fit(crps ~ method, d, family = gaussian(link = "log")), "unsupported link 'log'")
  expect_error(credence_fit(covered ~ method, d, family = beta_binomial()), "trials")
  expect_error(credence_fit(crps ~ nope, d), "not in data: nope")
  expect_error(credence_fit(crps ~ method, d, control = list(stepsize = 1)), "stepsize")
  expect_error(credence_fit(crps ~ method, d, iter = 100, warmup = 100), "iter = 100: more iterations than the warmup")
  d$txt <- as.character(d$crps)
  expect_error(credence_fit(txt ~ method, d), "'txt' must be numeric")
})

test_that("gaussian fits equal the CLI: paired, unpaired, shared sigma, priors; prob_superior and mdd too", {
  d <- metric_table()
  f <- credence_fit(crps ~ method + (1 | realization), d, iter = 600, seed = 3, chains = 2)
  cli <- cli_fit(metric_table_path(), "--response", "crps", "--pair", "realization", "--warmup", "150", "--draws", "450", "--max-draws", "450",
                 "--chains", "2", "--seed", "3")
  expect_same_means(f, cli)
  ps <- prob_superior(f)
  expect_equal(dimnames(ps), list(better = f$info$groups, than = f$info$groups))
  for (a in f$info$groups) for (b in setdiff(f$info$groups, a)) {
    expect_equal(ps[a, b], cli$prob_better[[a]][[b]], tolerance = 1e-12)
    expect_equal(mdd(f, a, b)$mdd, cli$mdd[[a]][[b]]$mdd, tolerance = 1e-12)
    expect_equal(mdd(f, a, b)$detection_probability, cli$mdd[[a]][[b]]$detection_probability, tolerance = 1e-12)
  }
  # The other direction is the same events seen from the other side.
  expect_equal(prob_superior(f, higher_is_better = TRUE), t(ps), ignore_attr = TRUE)
  cli4 <- cli_fit(metric_table_path(), "--response", "crps", "--pair", "realization", "--warmup", "150", "--draws", "450", "--max-draws", "450",
                  "--chains", "2", "--seed", "3", "--power", "0.9", "--r-new", "4")
  expect_equal(mdd(f, "MCD", "Ensemble", power = 0.9, R_new = 4)$mdd, cli4$mdd$MCD$Ensemble$mdd, tolerance = 1e-12)

  f1 <- credence_fit(crps ~ method, d, sigma = ~1, iter = 400, seed = 5, chains = 2,
                     prior = credence_prior(tau = half_normal(0.5), mu0 = normal(0.3, 2)))
  cli1 <- cli_fit(metric_table_path(), "--response", "crps", "--warmup", "100", "--draws", "300", "--max-draws", "300", "--chains", "2",
                  "--seed", "5", "--shared-sigma", "--prior-tau", "half_normal(0.5)", "--prior-mu0", "normal(0.3, 2)")
  expect_same_means(f1, cli1)
  expect_false(any(grepl("gamma", f1$summary$name)))
})

test_that("the beta-binomial path equals the CLI and prints its family and links", {
  d <- metric_table()
  f <- credence_fit(covered | trials(n_test) ~ method + (1 | realization), d, family = beta_binomial(),
                    iter = 600, seed = 2, chains = 2, higher_is_better = TRUE)
  cli <- cli_fit(metric_table_path(), "--response", "covered", "--trials", "n_test", "--family", "beta-binomial",
                 "--pair", "realization", "--realization-effect", "--higher-is-better",
                 "--warmup", "150", "--draws", "450", "--max-draws", "450", "--chains", "2", "--seed", "2")
  expect_same_means(f, cli)
  ps <- prob_superior(f)
  expect_equal(ps["MCD", "MAP"], cli$prob_better$MCD$MAP, tolerance = 1e-12)
  # Closeness to a nominal coverage: the CLI's --target, and by hand from the draws of p.
  cli_t <- cli_fit(metric_table_path(), "--response", "covered", "--trials", "n_test", "--family", "beta-binomial",
                   "--pair", "realization", "--realization-effect", "--target", "0.9",
                   "--warmup", "150", "--draws", "450", "--max-draws", "450", "--chains", "2", "--seed", "2")
  pt <- prob_superior(f, target = 0.9)
  p <- fixef(f, summary = FALSE)
  expect_equal(pt["MCD", "MAP"], cli_t$prob_better$MCD$MAP, tolerance = 1e-12)
  expect_equal(pt["MCD", "MAP"], mean(abs(p[, "MCD"] - 0.9) < abs(p[, "MAP"] - 0.9)), tolerance = 1e-12)
  expect_error(prob_superior(f, target = 0.9, higher_is_better = TRUE), "not both")
  expect_error(prob_superior(f, target = 2), "a proportion in \\(0, 1\\)")
  out <- capture.output(print(f))
  expect_true(any(grepl("^ Family: beta_binomial", out)))
  expect_true(any(grepl("Links: mu = logit; phi = log", out, fixed = TRUE)))
  expect_true(any(grepl("p[MCD]", out, fixed = TRUE)))
  expect_equal(colnames(fixef(f)), c("Estimate", "Est.Error", "Q2.5", "Q97.5"))
  expect_equal(prior_summary(f)$class, c("mu0", "tau", "phi", "sigma_gamma"))
  expect_error(credence_fit(covered | trials(n_test) ~ method, d, family = "beta_binomial", sigma = ~1), "sigma")
  # sigma given at all: the beta-binomial model has phi, not sigma (~method is refused too).
  expect_error(credence_fit(covered | trials(n_test) ~ method, d, family = "beta_binomial", sigma = ~method),
               "shared_sigma = false: it applies to the Gaussian model")
  # String family names work like the constructor.
  g <- credence_fit(covered | trials(n_test) ~ method + (1 | realization), d, family = "beta-binomial",
                    iter = 600, seed = 2, chains = 2, higher_is_better = TRUE)
  expect_equal(g$summary, f$summary)
})

test_that("print and summary follow brms' layout", {
  d <- metric_table()
  f <- credence_fit(crps ~ method + (1 | realization), d, iter = 200, seed = 1, chains = 2)
  out <- capture.output(print(f))
  expect_equal(out[1:4], c(" Family: gaussian ", "  Links: mu = identity; sigma = identity ",
                           "Formula: crps ~ method + (1 | realization) ", "         sigma ~ method "))
  expect_equal(out[5], "   Data: d (Number of observations: 120)")
  # brms' layout with credence's default split: a quarter of iter is warmup.
  expect_equal(out[6], "  Draws: 2 chains, each with iter = 200; warmup = 50; thin = 1;")
  expect_equal(out[7], "         total post-warmup draws = 300")
  # Which form of the model was sampled (the core's Fit::form).
  expect_match(out[8], "^   Form: collapsed \\(only the log-scales are sampled")
  header <- grep("Estimate", out, value = TRUE)[1]
  for (col in c("Estimate", "Est.Error", "l-95% CI", "u-95% CI", "Rhat", "Bulk_ESS", "Tail_ESS")) {
    expect_match(header, col, fixed = TRUE)
  }
  expect_true(any(grepl("^mu\\[Ensemble\\]", out)))
  expect_true(any(grepl("^sigma\\[Ensemble\\]", out)))
  # 150 draws per chain: the core's ESS warning is printed.
  expect_true(any(grepl("^Warning: smallest bulk-ESS", out)))
  expect_s3_class(summary(f), "summary.credence_fit")
})

test_that("draws have the chains x draws shape and the core's names", {
  d <- metric_table()
  f <- credence_fit(crps ~ method + (1 | realization), d, iter = 200, warmup = 100, seed = 1, chains = 3)
  df <- as.data.frame(f)
  expect_equal(nrow(df), 3 * 100)
  expect_equal(tail(names(df), 3), c(".chain", ".iteration", ".draw"))
  expect_true(all(c("mu0", "tau", "sigma_gamma", "mu[MCD]", "sigma[MCD]", "gamma[0]") %in% names(df)))
  expect_equal(df$.chain, rep(1:3, each = 100))
  expect_equal(df$.iteration, rep(1:100, 3))
  expect_equal(mean(df[["mu[MCD]"]]), f$summary$mean[f$summary$name == "mu[MCD]"], tolerance = 1e-12)
  fe <- fixef(f)
  expect_equal(rownames(fe), f$info$groups)
  expect_equal(fe["MCD", "Estimate"], mean(df[["mu[MCD]"]]), tolerance = 1e-12)
  expect_equal(fe["MCD", "Est.Error"], sd(df[["mu[MCD]"]]), tolerance = 1e-12)
  expect_equal(dim(fixef(f, summary = FALSE)), c(300L, 6L))
  if (requireNamespace("posterior", quietly = TRUE)) {
    dd <- as_draws_df(f)
    expect_s3_class(dd, "draws_df")
    expect_equal(posterior::nchains(dd), 3)
    expect_equal(posterior::ndraws(dd), 300)
    expect_equal(as.numeric(posterior::summarise_draws(dd, "mean")$mean[1]), f$summary$mean[1], tolerance = 1e-12)
    # posterior's own generic dispatches to credence's method as well.
    expect_s3_class(posterior::as_draws_df(f), "draws_df")
    # R-hat and ESS agree with the posterior package on the same draws.
    # (posterior warns that it caps the ESS at N log10(N); the core caps it the same way.)
    ref <- suppressWarnings(posterior::summarise_draws(dd, "rhat", "ess_bulk", "ess_tail"))
    for (k in c("mu0", "mu[MCD]", "sigma[Ensemble]")) {
      expect_equal(f$summary$rhat[f$summary$name == k], as.numeric(ref$rhat[ref$variable == k]), tolerance = 1e-6)
      expect_equal(f$summary$ess_bulk[f$summary$name == k], as.numeric(ref$ess_bulk[ref$variable == k]), tolerance = 1e-6)
      expect_equal(f$summary$ess_tail[f$summary$name == k], as.numeric(ref$ess_tail[ref$variable == k]), tolerance = 1e-6)
    }
  }
})

test_that("factor, character and integer columns give the same fit", {
  d <- metric_table()
  f <- credence_fit(crps ~ method + (1 | realization), d, iter = 200, seed = 4, chains = 2)
  d2 <- d
  d2$method <- factor(d2$method)
  d2$realization <- as.character(d2$realization)
  g <- credence_fit(crps ~ method + (1 | realization), d2, iter = 200, seed = 4, chains = 2)
  expect_equal(g$summary, f$summary)
  d3 <- d
  d3$realization <- as.integer(d3$realization)
  d3$covered <- as.integer(d3$covered)
  expect_type(d3$covered, "integer")
  h <- credence_fit(crps ~ method + (1 | realization), d3, iter = 200, seed = 4, chains = 2)
  expect_equal(h$summary, f$summary)
  b <- credence_fit(covered | trials(n_test) ~ method, d3, family = beta_binomial(), iter = 200, seed = 4, chains = 2)
  expect_equal(b$info$n_obs, nrow(d))
})

test_that("NA rows in any model column are dropped with one warning", {
  d <- metric_table()
  d$crps[2] <- NA
  d$realization[5] <- NA
  d$n_test[7] <- NA # not a model column of this formula: kept
  expect_warning(f <- credence_fit(crps ~ method + (1 | realization), d, iter = 200, seed = 1, chains = 2),
                 "2 row\\(s\\) containing NAs were dropped")
  expect_equal(f$info$n_obs, nrow(d) - 2)
  g <- credence_fit(crps ~ method + (1 | realization), d[-c(2, 5), ], iter = 200, seed = 1, chains = 2)
  expect_equal(g$summary, f$summary)
})

test_that("options that do not apply, or are not values, are errors naming them", {
  d <- metric_table()
  fm <- crps ~ method + (1 | realization)
  # A prior of the other family is refused, not ignored.
  expect_error(credence_fit(fm, d, prior = credence_prior(phi = exponential(0.1))), "prior_phi")
  expect_error(credence_fit(covered | trials(n_test) ~ method, d, family = beta_binomial(),
                            prior = credence_prior(sigma = half_normal(1))), "prior_sigma")
  # ChEES builds no tree: a max_treedepth given is refused (the default control is not given).
  expect_error(credence_fit(fm, d, sampler = "chees", control = list(max_treedepth = 10)),
               "max_depth = 10: it applies to NUTS")
  # A value of the wrong type names its argument.
  expect_error(credence_fit(fm, d, chains = 2.5), "chains = 2.5: invalid type")
  expect_error(credence_fit(fm, d, seed = NA), "seed: NA is not a value")
  expect_error(credence_fit(fm, d, iter = Inf), "iter: inf is not a finite number")
  expect_error(credence_fit(fm, d, chains = -1), "chains = -1: invalid value")
})

test_that("a seed reproduces a fit; seed = NULL draws one from R's RNG and records it", {
  d <- metric_table()
  a <- credence_fit(crps ~ method, d, iter = 200, seed = 11, chains = 2)
  b <- credence_fit(crps ~ method, d, iter = 200, seed = 11, chains = 2)
  expect_identical(as.data.frame(a), as.data.frame(b))
  c <- credence_fit(crps ~ method, d, iter = 200, seed = 12, chains = 2)
  expect_false(identical(as.data.frame(a)$mu0, as.data.frame(c)$mu0))
  set.seed(99)
  r <- credence_fit(crps ~ method, d, iter = 200, chains = 2)
  set.seed(99)
  expect_equal(r$seed, sample.int(.Machine$integer.max, 1))
  again <- credence_fit(crps ~ method, d, iter = 200, chains = 2, seed = r$seed)
  expect_identical(as.data.frame(again), as.data.frame(r))
  # cores does not change the draws (chains run in parallel in the core).
  k <- credence_fit(crps ~ method, d, iter = 200, seed = 11, chains = 2, cores = 1)
  expect_identical(as.data.frame(k), as.data.frame(a))
})

test_that("update() gives the same fit as a fresh call with the changed arguments", {
  d <- metric_table()
  f <- credence_fit(crps ~ method + (1 | realization), d, iter = 200, seed = 6, chains = 2)
  sub <- d[d$realization < 10, ]
  u <- update(f, newdata = sub)
  fresh <- credence_fit(crps ~ method + (1 | realization), sub, iter = 200, seed = 6, chains = 2)
  expect_identical(as.data.frame(u), as.data.frame(fresh))
  u2 <- update(f, sigma = ~1, iter = 300)
  fresh2 <- credence_fit(crps ~ method + (1 | realization), d, sigma = ~1, iter = 300, seed = 6, chains = 2)
  expect_identical(as.data.frame(u2), as.data.frame(fresh2))
  u3 <- update(f, . ~ method)
  expect_equal(deparse1(u3$formula), "crps ~ method")
  expect_false("sigma_gamma" %in% u3$summary$name)
  expect_error(update(f, bogus = 1), "unknown argument")
})

test_that("mdd_curve takes fits named by training size and equals mdd() per fit", {
  d <- metric_table()
  fits <- list(`10` = credence_fit(crps ~ method + (1 | realization), d[d$realization < 10, ], iter = 200,
                                   seed = 1, chains = 2),
               `20` = credence_fit(crps ~ method + (1 | realization), d, iter = 200, seed = 1, chains = 2))
  cur <- mdd_curve(fits, "MCD", "Ensemble")
  expect_equal(cur$n, c(10, 20))
  expect_equal(cur$mdd, c(mdd(fits[[1]], "MCD", "Ensemble")$mdd, mdd(fits[[2]], "MCD", "Ensemble")$mdd))
  expect_error(mdd_curve(unname(fits), "MCD", "Ensemble"), "name the list")
  expect_error(mdd(fits[[1]], "MCD", "nope"), "nope")
})

test_that("nuts_params has bayesplot's layout and agrees with the fit's diagnostics", {
  d <- metric_table()
  f <- credence_fit(crps ~ method + (1 | realization), d, iter = 200, warmup = 100, seed = 1, chains = 2)
  np <- nuts_params(f)
  stats <- c("accept_stat__", "stepsize__", "treedepth__", "n_leapfrog__", "divergent__", "energy__")
  expect_equal(names(np), c("Chain", "Iteration", "Parameter", "Value"))
  expect_equal(nrow(np), 2 * 100 * length(stats))
  expect_equal(levels(np$Parameter), stats)
  expect_equal(sum(np$Value[np$Parameter == "divergent__"]), f$info$divergences)
  expect_lte(sum(np$Value[np$Parameter == "n_leapfrog__"]), f$info$gradient_evals)
  acc <- np$Value[np$Parameter == "accept_stat__"]
  expect_true(all(acc >= 0 & acc <= 1))
  expect_equal(nrow(nuts_params(f, pars = "energy__")), 200)
})

test_that("prior_summary lists every prior in use, defaults and the user's", {
  d <- metric_table()
  f <- credence_fit(crps ~ method + (1 | realization), d, iter = 200, seed = 1, chains = 2,
                    prior = credence_prior(sigma = half_student_t(3, 0.5), sigma_gamma = gamma(2, 4)))
  ps <- prior_summary(f)
  expect_equal(ps$class, c("mu0", "tau", "sigma", "sigma_gamma"))
  expect_equal(ps$prior, c("normal(0, 1)", "half_normal(1)", "half_student_t(3, 0.5)", "gamma(2, 4)"))
  expect_equal(ps$source, c("default", "default", "user", "user"))
  expect_output(print(ps), "half_student_t\\(3, 0.5\\)")
  # brms' spelling of a half-normal prior on a positive parameter is accepted too.
  expect_equal(unclass(credence_prior(tau = "normal(0, 2)"))$tau, "normal(0, 2)")
  expect_error(credence_fit(crps ~ method, d, prior = credence_prior(tau = "cauchy(0, 1)")), "cauchy")
  expect_error(credence_prior(tau = 3), "must be a prior")
})

test_that("plot and pp_check draw without error, with and without ggplot2", {
  d <- metric_table()
  f <- credence_fit(crps ~ method + (1 | realization), d, iter = 200, seed = 1, chains = 2)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  if (requireNamespace("ggplot2", quietly = TRUE)) {
    g <- pp_check(f, ndraws = 5)
    expect_s3_class(g, "ggplot")
    expect_error(print(g), NA)
    p <- plot(f, pars = c("mu0", "tau"))
    expect_s3_class(p$trace, "ggplot")
  }
  # Base graphics path: the same functions with use_ggplot() answering FALSE.
  no_gg <- new.env(parent = asNamespace("credence"))
  no_gg$use_ggplot <- function() FALSE
  base_pp <- credence:::pp_check.credence_fit
  base_plot <- credence:::plot.credence_fit
  environment(base_pp) <- no_gg
  environment(base_plot) <- no_gg
  yrep <- base_pp(f, ndraws = 4)
  expect_null(base_plot(f, pars = c("mu0", "tau")))
  expect_equal(dim(yrep), c(4L, f$info$n_obs))
})

test_that("the generics brms uses (nlme, bayesplot, rstantools) dispatch to credence's methods", {
  d <- metric_table()
  f <- credence_fit(crps ~ method, d, iter = 200, seed = 1, chains = 2)
  skip_if_not_installed("nlme")
  # (getExportedValue: these packages need not be declared in Suggests.)
  expect_equal(getExportedValue("nlme", "fixef")(f), fixef(f))
  skip_if_not_installed("bayesplot")
  expect_equal(getExportedValue("bayesplot", "nuts_params")(f), nuts_params(f))
  skip_if_not_installed("rstantools")
  expect_equal(getExportedValue("rstantools", "prior_summary")(f), prior_summary(f))
})

# Compares two parsed JSON values (or the R list of the same JSON) key by key: objects by their
# names (as sets: R keeps the data frame's order of methods, the CLI the natural order of the
# labels) and each key's value, leaves by value (numbers to 1e-12; the list of methods as a
# set), `seconds` (wall clock) aside.
expect_same_keys_and_values <- function(x, y, path = "") {
  if (!is.null(names(x)) || !is.null(names(y))) {
    expect_setequal(names(x), names(y))
    for (k in setdiff(names(x), "seconds")) expect_same_keys_and_values(x[[k]], y[[k]], paste0(path, "/", k))
  } else if (is.null(x) || is.null(y)) {
    expect_identical(is.null(x), is.null(y), label = paste0("null at ", path))
  } else if (path == "/data/methods") {
    expect_setequal(unlist(x), unlist(y))
  } else {
    expect_equal(unlist(x), unlist(y), tolerance = 1e-12, label = path)
  }
}

test_that("one fit has one summary: the CLI's JSON, the report's embedded JSON and fit_summary() agree key by key", {
  d <- metric_table()
  d$n <- 100
  dir <- withr_tempdir()
  csv <- file.path(dir, "table.csv")
  utils::write.csv(d, csv, row.names = FALSE)
  # The default model (paired) in all three faces; the additive one, by name, in the CLI and R.
  cli <- cli_fit(csv, "--response", "crps", "--pair", "realization", "--seed", "3")
  report_json <- file.path(dir, "report.json")
  system2(credence_cli(), c("report", csv, "--metric", "crps", "--format", "json", "--seed", "3",
                            "--plan-sims", "0", "--out", report_json), stdout = FALSE, stderr = FALSE)
  report <- jsonlite::fromJSON(report_json, simplifyVector = FALSE)
  expect_length(report$fits, 1)
  embedded <- report$fits[[1]][names(cli)]
  f <- credence_fit(crps ~ method + (1 | realization), d, seed = 3)
  s <- fit_summary(f)
  expect_true(s$sampler$exact)
  additive <- credence_fit(crps ~ method + (1 | realization), d, model = "additive", iter = 1100, warmup = 300,
                           seed = 3, chains = 4)
  expect_same_keys_and_values(fit_summary(additive), cli_fit(csv, "--response", "crps", "--pair", "realization",
                                                              "--model", "additive", "--seed", "3",
                                                              "--max-draws", "800"))
  # The contract's keys in the contract's order in every face.
  expect_identical(names(s), names(cli))
  expect_identical(names(embedded), names(cli))
  expect_true(all(c("model", "parameters", "prob_better", "prob_better_mcse", "mdd", "diagnostics", "sampler",
                    "units") %in% names(s)))
  expect_same_keys_and_values(s, cli)
  expect_same_keys_and_values(embedded, cli)
  # The contract's leaves: nested pairs, parameters by name, null options as NULL.
  expect_equal(s$prob_better$MCD$Ensemble + s$prob_better$Ensemble$MCD, 1, tolerance = 1e-12)
  expect_equal(s$mdd$MCD$Ensemble$mdd, mdd(f, "MCD", "Ensemble")$mdd, tolerance = 1e-12)
  expect_null(s$rope)
  expect_equal(fit_summary(f, rope = 0.01)$rope$MCD$MAP, cli_fit(csv, "--response", "crps", "--pair", "realization",
                                                                  "--seed", "3", "--rope", "0.01")$rope$MCD$MAP,
               tolerance = 1e-12)
})
