# Quantiles and their intervals against the issue's known values and R's own computations.

test_that("the minimum n for exact intervals matches the issue's table", {
  u <- c(0.01, 0.025, 0.05, 0.1, 0.25, 0.5)
  known <- list(`0.9` = c(230, 91, 45, 22, 9, 5), `0.95` = c(299, 119, 59, 29, 11, 6),
                `0.99` = c(459, 182, 90, 44, 17, 8))
  for (level in names(known)) {
    m <- quantile_min_n(as.numeric(level), u)
    expect_equal(m$exact, as.integer(known[[level]]), label = paste("level", level))
    expect_true(all(m$asymptotic >= 1L))
  }
})

test_that("types 1, 6 and 7 equal stats::quantile", {
  x <- 1:10
  u <- c(0.25, 0.5, 0.75)
  expect_equal(metric_quantiles(x, u, type = 1)$estimate, c(3, 5, 8))
  expect_equal(metric_quantiles(x, u, type = 6)$estimate, c(2.75, 5.5, 8.25))
  expect_equal(metric_quantiles(x, u, type = 7)$estimate, c(3.25, 5.5, 7.75))
  set.seed(14)
  y <- rexp(23)
  v <- c(0.1, 0.33, 0.5, 0.9)
  for (t in c(1, 6, 7)) {
    expect_equal(metric_quantiles(y, v, type = t)$estimate, unname(quantile(y, v, type = t)),
                 tolerance = 1e-12, label = paste("type", t))
  }
})

test_that("exact intervals reach the level with the shortest index span", {
  set.seed(15)
  n <- 30
  x <- rnorm(n)
  xs <- sort(x)
  for (u in c(0.5, 0.8, 0.9)) {
    q <- metric_quantiles(x, u, level = 0.9)
    k <- match(q$lower, xs); l <- match(q$upper, xs)
    cover <- function(k, l) pbinom(l - 1, n, u) - pbinom(k - 1, n, u)
    expect_equal(q$coverage, cover(k, l), tolerance = 1e-12)
    expect_gte(q$coverage, 0.9)
    spans <- outer(1:n, 1:n, function(a, b) ifelse(b > a & cover(a, b) >= 0.9, b - a, NA))
    expect_equal(l - k, min(spans, na.rm = TRUE), label = paste("u", u))
  }
  # No interval below the minimum n.
  expect_true(is.na(metric_quantiles(rnorm(20), 0.9, level = 0.9)$lower))
})

test_that("asymptotic intervals: the study's type-6 estimator at k/n, l/n, or positions k, l", {
  set.seed(16)
  n <- 40; x <- rnorm(n); xs <- sort(x)
  u <- 0.5; z <- qnorm(0.95)
  h <- n * u + c(-1, 1) * z * sqrt(n * u * (1 - u))
  q <- metric_quantiles(x, u, level = 0.9, method = "asymptotic")
  expect_equal(c(q$lower, q$upper), unname(stats::quantile(x, h / n, type = 6)), tolerance = 1e-12)
  at <- function(h) xs[floor(h)] + (h - floor(h)) * (xs[pmin(n, floor(h) + 1)] - xs[floor(h)])
  p <- metric_quantiles(x, u, level = 0.9, method = "asymptotic", asymptotic_at = "positions")
  expect_equal(c(p$lower, p$upper), at(h), tolerance = 1e-12)
  # The study's example by hand: 1..20, u = 0.5, 90%: [6.64, 14.36].
  s <- metric_quantiles(1:20, 0.5, level = 0.9, method = "asymptotic")
  expect_equal(c(s$lower, s$upper), c(6.638, 14.362), tolerance = 1e-3)
  # No flip by default: u = 0.1 needs n >= 42 at 90% (the study's text), 25 when flipped.
  m <- quantile_min_n(0.9, c(0.1, 0.9))
  expect_equal(m$asymptotic, c(42L, 25L))
  expect_equal(m$asymptotic_flipped, c(25L, 25L))
  expect_true(is.na(metric_quantiles(1:30, 0.1, method = "asymptotic")$lower))
  expect_false(is.na(metric_quantiles(1:30, 0.1, method = "asymptotic", flip_lower = TRUE)$lower))
})

test_that("the mean's t-interval equals t.test; the bootstrap follows its seed", {
  set.seed(17)
  x <- rnorm(25, 3)
  q <- metric_quantiles(x, 0.5, level = 0.95)
  expect_equal(c(attr(q, "mean")$lower, attr(q, "mean")$upper),
               as.numeric(t.test(x, conf.level = 0.95)$conf.int), tolerance = 1e-10)
  b1 <- metric_quantiles(x, 0.9, method = "bootstrap", seed = 3, replicates = 500)
  expect_identical(b1, metric_quantiles(x, 0.9, method = "bootstrap", seed = 3, replicates = 500))
  expect_lte(b1$lower, b1$upper)
})

test_that("bad input gives R errors", {
  expect_error(metric_quantiles("a"), "numeric")
  expect_error(metric_quantiles(1:10, u = 1.5), "u")
  # The levels 0 and 1 have no interval: refused, not answered with NA bounds.
  expect_error(metric_quantiles(1:10, u = c(0.5, 0)), "invalid u = 0: expected a quantile level in (0, 1)",
               fixed = TRUE)
  expect_error(metric_quantiles(1:10, u = 1), "invalid u = 1", fixed = TRUE)
  expect_error(metric_quantiles(1:10, type = 5), "type")
  expect_error(metric_quantiles(c(1, NA, 3)), "x|finite|NaN")
})

test_that("metric_quantiles and quantile_min_n equal the CLI's JSON", {
  set.seed(18)
  x <- rexp(30)
  dir <- withr_tempdir()
  f <- file.path(dir, "runs.csv")
  utils::write.csv(data.frame(crps = format(x, digits = 17)), f, row.names = FALSE, quote = FALSE)
  j <- cli_json(c("quantiles", f, "--column", "crps", "--u", "0.1,0.5,0.9", "--level", "0.9",
                  "--method", "exact", "--json"))
  q <- metric_quantiles(x, c(0.1, 0.5, 0.9), level = 0.9)
  g <- j$groups[[1]]$quantiles
  expect_equal(q$estimate, c(g[["0.1"]]$estimate, g[["0.5"]]$estimate, g[["0.9"]]$estimate), tolerance = 1e-12)
  expect_equal(q$lower, c(g[["0.1"]]$lower, g[["0.5"]]$lower, g[["0.9"]]$lower), tolerance = 1e-12)
  m <- cli_json(c("quantiles", "min-n", "--level", "0.95", "--u", "0.05,0.5", "--json"))
  expect_equal(quantile_min_n(0.95, c(0.05, 0.5))$asymptotic, c(m$asymptotic[["0.05"]], m$asymptotic[["0.5"]]))
  expect_equal(quantile_min_n(0.95, c(0.05, 0.5))$asymptotic_flipped,
               c(m$asymptotic_flipped[["0.05"]], m$asymptotic_flipped[["0.5"]]))
})

test_that("metric_quantiles reports the Shapiro-Wilk test beside the quantiles", {
  set.seed(3)
  x <- rexp(25)
  sw <- attr(metric_quantiles(x), "shapiro_wilk")
  ref <- shapiro.test(x)
  expect_equal(sw$w, unname(ref$statistic), tolerance = 1e-12)
  expect_equal(sw$p_value, ref$p.value, tolerance = 1e-10)
  expect_null(attr(metric_quantiles(c(1, 2)), "shapiro_wilk"))
})

test_that("a missing run is named with its R index, not dropped", {
  expect_error(metric_quantiles(c(1, 2, 3, NA, 5, 6)), "x\\[4\\] is NA")
  expect_error(metric_quantiles(c(1, NaN, 3, 4, 5)), "x\\[2\\] is NaN")
})
