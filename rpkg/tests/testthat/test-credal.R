# Credal evaluation against the issue's known values (given to 6 decimals) and closed forms.

near <- function(actual, expected) expect_lt(abs(actual - expected), 5e-7)

test_that("two samples give the issue's masses, NS, KL, JS and E", {
  s <- array(c(0.7, 0.5, 0.2, 0.3, 0.1, 0.2), dim = c(2, 1, 3))
  r <- credal_eval(samples = s, y = 1, lambda = c(0, 1))
  # masses {a} .5 {b} .2 {c} .1 {ab} .1 {ac} .1
  expect_equal(r$overall$ns$mean, 0.2 * log(2), tolerance = 1e-12)
  near(r$overall$ns$mean, 0.138629)
  near(r$overall$kl$mean, 0.356675)
  # JS divergence by hand at Pl({1}) = 0.7 (the core's credal tests); its root is the distance.
  near(r$overall$js$mean, 0.117277)
  expect_equal(r$units$js, "nats (divergence)")
  expect_equal(r$units$credal_uncertainty, "bits")
  d <- credal_eval(samples = s, y = 1, lambda = c(0, 1), js = "distance", uncertainty_unit = "nats")
  near(d$overall$js$mean, 0.342457)
  expect_equal(d$credal_uncertainty$mean * log2(exp(1)), r$credal_uncertainty$mean, tolerance = 1e-12)
  expect_error(credal_eval(samples = s, js = "root"), "should be one of")
  # A NaN or negative lambda is refused by name, not turned into NaN or reversed rows.
  expect_error(credal_eval(samples = s, y = 1, lambda = c(0, NaN)), "invalid lambda = NaN", fixed = TRUE)
  expect_error(credal_eval(samples = s, y = 1, lambda = -1), "invalid lambda = -1: expected a finite weight >= 0",
               fixed = TRUE)
  near(r$overall$e$mean[r$overall$e$lambda == 1], 0.495304)
  expect_equal(r$koerner$mean, 0.5 + 0.2 + 0.1 + 2 * 0.2, tolerance = 1e-12)
  expect_equal(r$pal$mean, 0.8 + 0.2 / 2, tolerance = 1e-12)
  expect_equal(r$points$predicted, 1L)
})

test_that("three disagreeing samples renormalise to thirds on the pairs", {
  s <- array(0, dim = c(3, 1, 3))
  s[1, 1, ] <- c(0.5, 0.5, 0); s[2, 1, ] <- c(0, 0.5, 0.5); s[3, 1, ] <- c(0.5, 0, 0.5)
  r <- credal_eval(samples = s, y = 1, lambda = 1)
  near(r$overall$ns$mean, 0.693147)
  near(r$overall$kl$mean, 0.405465)
  near(r$overall$js$mean, 0.132304)
  near(r$overall$e$mean, 1.098612)
  # Without renormalisation the frame keeps its signed mass -0.5.
  expect_equal(credal_eval(samples = s, y = 1, normalisation = "none")$overall$ns$mean,
               3 * 0.5 * log(2) - 0.5 * log(3), tolerance = 1e-12)
})

test_that("point probabilities have NS 0 and d = -log p(y)", {
  set.seed(11)
  p <- matrix(rexp(40), 10, 4); p <- p / rowSums(p)
  y <- sample.int(4, 10, replace = TRUE)
  r <- credal_eval(probs = p, y = y)
  d <- -log(p[cbind(seq_len(10), y)])
  expect_equal(r$overall$ns$mean, 0)
  expect_equal(r$points$kl, d, tolerance = 1e-12)
  expect_equal(r$overall$kl$mean, mean(d), tolerance = 1e-12)
  expect_equal(r$overall$kl$sd, sqrt(mean((d - mean(d))^2)), tolerance = 1e-12)
  right <- max.col(p, "first") == y
  expect_equal(r$accuracy, mean(right))
  expect_equal(r$correct$n, sum(right))
  expect_equal(r$correct$kl$mean, mean(d[right]), tolerance = 1e-12)
})

test_that("beliefs over a budget give the Moebius masses", {
  # Bel {1} .5, {2} .2, {3} .1, {1,2} .8: masses .5 .2 .1 .1 and the frame .1.
  b <- matrix(c(0.5, 0.2, 0.1, 0.8), 1)
  budget <- list(1, 2, 3, c(1, 2))
  r <- credal_eval(beliefs = b, budget = budget, n_classes = 3, y = 1)
  expect_equal(r$overall$ns$mean, 0.1 * log(2) + 0.1 * log(3), tolerance = 1e-12)
  expect_equal(r$overall$kl$mean, -log(0.7), tolerance = 1e-12)
  # The same budget from a JSON file (0-based, as written by Python).
  f <- tempfile(fileext = ".json")
  writeLines('{"classes": ["a", "b", "c"], "focal_sets": [[0], [1], [2], [0, 1]]}', f)
  expect_equal(credal_eval(beliefs = b, budget = f, y = 1)$overall, r$overall)
  expect_error(credal_eval(beliefs = b, y = 1), "budget")
})

test_that("probability intervals and Dirichlet inputs run; Dirichlet draws follow the seed", {
  l <- matrix(c(0.5, 0.1, 0.1), 1); u <- matrix(c(0.8, 0.4, 0.3), 1)
  r <- credal_eval(lower = l, upper = u, y = 1)
  # Pl({1}) = min(u_1, 1 - l_2 - l_3) = 0.8.
  expect_equal(r$overall$kl$mean, -log(0.8), tolerance = 1e-12)
  a <- matrix(c(5, 1, 1, 1, 1, 8), 2, byrow = TRUE)
  r1 <- credal_eval(dirichlet = a, y = c(1, 3), seed = 4)
  expect_identical(r1$points, credal_eval(dirichlet = a, y = c(1, 3), seed = 4)$points)
  expect_false(identical(r1$points$ns, credal_eval(dirichlet = a, y = c(1, 3), seed = 5)$points$ns))
})

test_that("models are ranked by mean d + lambda * NS", {
  set.seed(12)
  p <- matrix(rexp(30), 10, 3); p <- p / rowSums(p)
  s <- array(rexp(4 * 10 * 3), c(4, 10, 3))
  for (i in 1:4) for (j in 1:10) s[i, j, ] <- s[i, j, ] / sum(s[i, j, ])
  y <- sample.int(3, 10, replace = TRUE)
  a <- credal_eval(probs = p, y = y); b <- credal_eval(samples = s, y = y)
  lam <- c(0, 0.5, 1)
  k <- credal_rank(point = a, ensemble = b, lambda = lam)
  expect_equal(nrow(k), 6)
  for (l in lam) {
    e <- c(point = a$overall$kl$mean + l * a$overall$ns$mean,
           ensemble = b$overall$kl$mean + l * b$overall$ns$mean)
    got <- k[k$lambda == l, ]
    expect_equal(got$model, names(sort(e)))
    expect_equal(got$e, unname(sort(e)), tolerance = 1e-12)
  }
  expect_error(credal_rank(a, b), "name")
  expect_error(credal_rank(x = credal_eval(probs = p)), "labels|model")
})

test_that("bad input gives R errors", {
  expect_error(credal_eval(), "exactly one")
  expect_error(credal_eval(probs = matrix(c(0.5, 0.6), 1), y = 1), "probs")
  expect_error(credal_eval(probs = matrix(c(0.5, 0.5), 1), y = 3), "y|label|class")
})

test_that("credal_eval equals the CLI's JSON on the same data", {
  set.seed(13)
  p <- matrix(rexp(24), 8, 3); p <- p / rowSums(p)
  y <- sample.int(3, 8, replace = TRUE)
  dir <- withr_tempdir()
  pf <- write_csv_matrix(p, file.path(dir, "p.csv"))
  yf <- write_csv_matrix(y - 1, file.path(dir, "y.csv"))
  j <- cli_json(c("credal", "--probs", pf, "--labels", yf, "--lambda", "0,0.5", "--json"))
  r <- credal_eval(probs = p, y = y, lambda = c(0, 0.5))
  expect_equal(r$overall$kl$mean, j$kl$mean, tolerance = 1e-12)
  expect_equal(r$overall$kl$sd, j$kl$sd, tolerance = 1e-12)
  expect_equal(r$overall$e$mean[2], j$e[["0.5"]]$mean, tolerance = 1e-12)
  expect_equal(r$accuracy, j$accuracy, tolerance = 1e-12)
})

test_that("credal_budget ranks the confused pair first and set sizes follow interval dominance", {
  t <- (0:59 %% 10) * 0.03
  cls <- 0:59 %% 3
  p <- t(sapply(seq_along(t), function(i) switch(cls[i] + 1,
    c(0.35 + t[i], 0.6 - t[i], 0.05), c(0.6 - t[i], 0.35 + t[i], 0.05),
    c(0.05 + t[i] / 6, 0.05 + t[i] / 6, 0.9 - t[i] / 3))))
  b <- credal_budget(p, cls + 1, size = 1)
  expect_equal(b, list(1L, 2L, 3L, c(1L, 2L)))
  s <- array(c(0.5, 0.4, 0.4, 0.5, 0.1, 0.1), dim = c(2, 1, 3))
  r <- credal_eval(samples = s, budget = b)
  expect_equal(r$points$set_size, 2L)
  expect_equal(r$set_size$mean, 2)
  expect_error(credal_budget(p[1:4, ], c(1, 1, 1, 2)), "at least two training points per class")
})
