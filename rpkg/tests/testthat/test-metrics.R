# Metric functions against closed forms and independent R computations (scoringRules is not
# in Debian; the formulas are written out here).

entropy <- function(p) -sum(ifelse(p > 0, p * log(p), 0))

test_that("crps_gaussian equals the closed form", {
  set.seed(1)
  y <- rnorm(50); m <- rnorm(50); s <- rexp(50) + 0.1
  z <- (y - m) / s
  ref <- s * (z * (2 * pnorm(z) - 1) + 2 * dnorm(z) - 1 / sqrt(pi))
  expect_equal(crps_gaussian(y, m, s), ref, tolerance = 1e-12)
})

test_that("nll_gaussian equals minus the log density", {
  set.seed(2)
  y <- rnorm(20); m <- rnorm(20); s <- rexp(20) + 0.1
  expect_equal(nll_gaussian(y, m, s), -dnorm(y, m, s, log = TRUE), tolerance = 1e-12)
})

test_that("crps_mixture equals the integral of the squared CDF difference", {
  set.seed(3)
  n <- 4; k <- 3
  means <- matrix(rnorm(n * k), n, k); sds <- matrix(rexp(n * k) + 0.3, n, k)
  w <- c(0.5, 0.3, 0.2); y <- rnorm(n)
  ref <- vapply(seq_len(n), function(i) {
    f <- function(x) (vapply(x, function(t) sum(w * pnorm(t, means[i, ], sds[i, ])), 0) - (x >= y[i]))^2
    integrate(f, -Inf, y[i], rel.tol = 1e-10)$value + integrate(f, y[i], Inf, rel.tol = 1e-10)$value
  }, 0)
  expect_equal(crps_mixture(y, means, sds, weights = w), ref, tolerance = 1e-7)
  # Equal weights by default; one member is the Gaussian case.
  expect_equal(crps_mixture(y, means[, 1, drop = FALSE], sds[, 1, drop = FALSE]),
               crps_gaussian(y, means[, 1], sds[, 1]), tolerance = 1e-12)
})

test_that("crps_sample equals the energy form (standard and fair)", {
  set.seed(4)
  n <- 5; s <- 30
  dat <- matrix(rnorm(n * s), n, s); y <- rnorm(n)
  e1 <- vapply(seq_len(n), function(i) mean(abs(dat[i, ] - y[i])), 0)
  pair <- vapply(seq_len(n), function(i) sum(abs(outer(dat[i, ], dat[i, ], "-"))), 0)
  expect_equal(crps_sample(y, dat), e1 - pair / (2 * s^2), tolerance = 1e-12)
  expect_equal(crps_sample(y, dat, "fair"), e1 - pair / (2 * s * (s - 1)), tolerance = 1e-12)
  # One observation with a plain vector of draws.
  expect_equal(crps_sample(y[1], dat[1, ]), (e1 - pair / (2 * s^2))[1], tolerance = 1e-12)
})

test_that("picp, mpiw and interval_score match their definitions", {
  set.seed(5)
  y <- rnorm(40); l <- y + rnorm(40) - 1; u <- l + rexp(40) * 2
  expect_equal(picp(y, l, u), mean(l <= y & y <= u))
  expect_equal(mpiw(l, u), mean(u - l), tolerance = 1e-12)
  a <- 0.2
  ref <- (u - l) + 2 / a * (l - y) * (y < l) + 2 / a * (y - u) * (y > u)
  expect_equal(interval_score(y, l, u, alpha = a), ref, tolerance = 1e-12)
})

random_probs <- function(n, k, seed) {
  set.seed(seed)
  p <- matrix(rexp(n * k), n, k)
  p / rowSums(p)
}

test_that("brier and ece match their definitions", {
  p <- random_probs(200, 4, 6)
  y <- sample.int(4, 200, replace = TRUE)
  onehot <- outer(y, 1:4, "==") * 1
  expect_equal(brier(p, y), mean(rowSums((p - onehot)^2)), tolerance = 1e-12)
  conf <- apply(p, 1, max); correct <- max.col(p, "first") == y
  bins <- 10
  b <- pmax(1, ceiling(conf * bins))
  ref <- sum(vapply(split(seq_along(conf), b), function(i) length(i) * abs(mean(conf[i]) - mean(correct[i])), 0)) /
    length(conf)
  expect_equal(ece(p, y, bins = bins), ref, tolerance = 1e-12)
  # Factor labels use their level codes.
  expect_equal(brier(p, factor(letters[y], levels = letters[1:4])), brier(p, y))
})

test_that("classwise_ece averages the one-vs-rest ECE over the classes", {
  p <- random_probs(300, 4, 6)
  y <- sample.int(3, 300, replace = TRUE)  # class 4 never occurs: it still counts
  bins <- 10
  per_class <- vapply(1:4, function(k) {
    b <- pmax(1, ceiling(p[, k] * bins))
    sum(vapply(split(seq_len(nrow(p)), b), function(i) length(i) * abs(mean(p[i, k]) - mean(y[i] == k)), 0)) /
      nrow(p)
  }, 0)
  expect_equal(classwise_ece(p, y, bins = bins), mean(per_class), tolerance = 1e-12)
})

test_that("risk_coverage's AUGRC has its AUROC identity and its AURC the trapezoids of the curve", {
  p <- random_probs(400, 3, 6)
  p <- round(p * 5) / 5 + 1e-3  # ties in the confidence: one working point per distinct value
  p <- p / rowSums(p)
  y <- sample.int(3, 400, replace = TRUE)
  r <- risk_coverage(p, y)
  conf <- apply(p, 1, max); correct <- max.col(p, "first") == y
  expect_equal(nrow(r$curve), length(unique(conf)))
  acc <- mean(correct)
  # AUROC of the confidence for correct vs wrong, ties counting one half (Mann-Whitney).
  auc <- mean(outer(conf[correct], conf[!correct], ">") + 0.5 * outer(conf[correct], conf[!correct], "=="))
  expect_equal(r$augrc, 0.5 * (1 - acc)^2 + acc * (1 - acc) * (1 - auc), tolerance = 1e-12)
  kept <- vapply(sort(unique(conf), decreasing = TRUE), function(t) c(sum(conf >= t), sum(!correct[conf >= t])), c(0, 0))
  expect_equal(r$curve$coverage, kept[1, ] / 400)
  expect_equal(r$curve$selective_risk, kept[2, ] / kept[1, ])
  cov <- c(0, r$curve$coverage); risk <- c(r$curve$selective_risk[1], r$curve$selective_risk)
  expect_equal(r$aurc, sum(diff(cov) * (head(risk, -1) + tail(risk, -1)) / 2), tolerance = 1e-12)
})

test_that("corp_reliability is R's isotonic regression of right/wrong on the confidence", {
  p <- random_probs(300, 3, 8)
  y <- sample.int(3, 300, replace = TRUE)
  conf <- apply(p, 1, max); correct <- as.numeric(max.col(p, "first") == y)
  r <- corp_reliability(p, y)
  o <- order(conf)
  fit <- stats::isoreg(conf[o], correct[o])$yf  # conf has no ties here
  expect_equal(r$points$forecast, conf[o])
  expect_equal(r$points$observed, fit, tolerance = 1e-12)
  s_c <- mean((fit - correct[o])^2)
  expect_equal(r$miscalibration, mean((conf - correct)^2) - s_c, tolerance = 1e-10)
  expect_equal(r$brier, r$miscalibration - r$discrimination + r$uncertainty, tolerance = 1e-12)
  expect_true(all(r$points$band_lower <= r$points$band_upper))
  expect_true(all(is.na(corp_reliability(p, y, resamples = 0)$points$band_lower)))
  expect_error(corp_reliability(p, y, level = 2), "level")
})

test_that("entropy_decomposition splits total entropy into aleatoric and epistemic parts", {
  s <- 5; n <- 6; k <- 3
  set.seed(7)
  a <- array(rexp(s * n * k), c(s, n, k))
  for (i in seq_len(s)) for (j in seq_len(n)) a[i, j, ] <- a[i, j, ] / sum(a[i, j, ])
  d <- entropy_decomposition(a)
  total <- vapply(seq_len(n), function(j) entropy(colMeans(a[, j, ])), 0)
  alea <- vapply(seq_len(n), function(j) mean(apply(a[, j, ], 1, entropy)), 0)
  expect_equal(d$total, total, tolerance = 1e-12)
  expect_equal(d$aleatoric, alea, tolerance = 1e-12)
  expect_equal(d$epistemic, total - alea, tolerance = 1e-12)
  # A single prediction (N x K matrix) has no epistemic part.
  expect_equal(entropy_decomposition(a[1, , ])$epistemic, rep(0, n), tolerance = 1e-12)
})

test_that("auroc equals the Mann-Whitney statistic", {
  set.seed(8)
  # Ties on purpose; shifted away from zero because the core orders -0 before +0 (total_cmp),
  # so a -0/+0 pair is not counted as a tie (reported, not fixed here).
  s <- round(rnorm(60), 1) + 10; pos <- runif(60) < 0.4
  w <- wilcox.test(s[pos], s[!pos], exact = FALSE)$statistic
  expect_equal(auroc(s, pos), unname(w) / (sum(pos) * sum(!pos)), tolerance = 1e-12)
  expect_equal(auroc(c(0.1, 0.4, 0.35, 0.8), c(FALSE, FALSE, TRUE, TRUE)), 0.75)
  expect_true(is.na(auroc(c(0.1, 0.2), c(TRUE, TRUE))))
})

test_that("referral_curve keeps the most certain points", {
  p <- random_probs(100, 3, 9)
  y <- sample.int(3, 100, replace = TRUE)
  r <- referral_curve(p, y, fractions = c(0.25, 0.5, 1))
  h <- apply(p, 1, entropy)
  ord <- order(h, seq_along(h))
  expect_equal(r$n, c(25L, 50L, 100L))
  acc <- vapply(r$n, function(m) mean(max.col(p, "first")[ord[1:m]] == y[ord[1:m]]), 0)
  expect_equal(r$accuracy, acc, tolerance = 1e-12)
  # The random baseline: expected accuracy is the overall accuracy at every fraction; the
  # AUROC over random subsets of all points is the full AUROC with no Monte Carlo error.
  overall <- mean(max.col(p, "first") == y)
  expect_equal(r$random_accuracy, rep(overall, 3), tolerance = 1e-12)
  expect_equal(r$random_auroc[3], r$auroc[3], tolerance = 1e-12)
  expect_equal(r$random_auroc_mcse[3], 0)
  expect_gt(r$random_auroc_mcse[1], 0)
  expect_identical(referral_curve(p, y, fractions = 0.5, seed = 3),
                   referral_curve(p, y, fractions = 0.5, seed = 3))
})

test_that("roc_curve's trapezoid area is the AUROC", {
  set.seed(4)
  s <- round(runif(40), 1)
  pos <- runif(40) < s
  r <- roc_curve(s, pos)
  expect_equal(r$fpr[1], 0)
  expect_equal(r$tpr[nrow(r)], 1)
  area <- sum(diff(r$fpr) * (head(r$tpr, -1) + tail(r$tpr, -1)) / 2)
  expect_equal(area, auroc(s, pos), tolerance = 1e-12)
  expect_null(roc_curve(c(0.1, 0.2), c(TRUE, TRUE)))
})

test_that("bad input gives R errors with the core's message", {
  expect_error(crps_gaussian(1, 0, -1), "sd")
  expect_error(brier(matrix(c(0.5, 0.5), 1), 3), "label")
  expect_error(crps_mixture(1, matrix(0, 1, 2), matrix(1, 1, 3)), "dimensions")
})

test_that("a metric that overflows is an error naming it and the point, never Inf or a silent NA", {
  # Mean 1e300 at sd 1 for y = 0: the density underflows, the NLL would be Inf.
  expect_error(nll_gaussian(c(0, 0), c(0, 1e300), c(1, 1)),
               "nll[1] = inf: expected a finite number; the prediction there (mean 1e300) and y = 0",
               fixed = TRUE)
  # The CRPS of that prediction is large but finite, and returned.
  expect_equal(crps_gaussian(0, 1e300, 1), 1e300, tolerance = 1e-12)
  # |y - mean| beyond the largest double: the CRPS overflows, on either mixture route.
  far <- matrix(1e308, 1, 2)
  for (backend in c("cpu", "auto")) {
    expect_error(crps_mixture(-1e308, far, matrix(1, 1, 2), backend = backend), "crps[0] = ", fixed = TRUE)
  }
  expect_error(crps_sample(-1e308, matrix(c(1e308, 1e308), 1)), "crps[0] = ", fixed = TRUE)
  expect_error(interval_score(-1e308, 1e308, 1.5e308), "interval_score[0] = inf", fixed = TRUE)
})

test_that("classification metrics equal the CLI's on the same data", {
  p <- random_probs(50, 3, 10)
  y <- sample.int(3, 50, replace = TRUE)
  dir <- withr_tempdir()
  pf <- write_csv_matrix(p, file.path(dir, "p.csv"))
  yf <- write_csv_matrix(y - 1, file.path(dir, "y.csv"))
  j <- cli_json(c("metrics", "classification", "--probs", pf, "--labels", yf, "--json"))
  expect_equal(brier(p, y), j$brier, tolerance = 1e-12)
  expect_equal(ece(p, y), j$ece, tolerance = 1e-12)
  expect_equal(classwise_ece(p, y), j$classwise_ece, tolerance = 1e-12)
  expect_equal(risk_coverage(p, y)$aurc, j$aurc, tolerance = 1e-12)
  expect_equal(risk_coverage(p, y)$augrc, j$augrc, tolerance = 1e-12)
})
