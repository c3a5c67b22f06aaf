# backend = "auto" | "cpu" | "cuda": the metric functions routed to kernels 1 and 2 of the core
# and ChEES fits. On the CPU the kernels' seam gives the crate's metrics to rounding; where
# CUDA runs, "auto" is the GPU (the core's tests hold it to 1e-10 relative).

cuda_here <- function() credence_backend() == "cuda"
tol <- function() if (cuda_here()) 1e-9 else 1e-12

test_that("credence_backend says where auto runs and refuses cuda where it cannot run", {
  b <- credence_backend()
  expect_true(b %in% c("cpu", "cuda"))
  expect_identical(as.character(credence_backend("cpu")), "cpu")
  expect_error(credence_backend("gpu"), "backend must be")
  skip_if(cuda_here(), "CUDA can run here")
  expect_type(attr(b, "cuda_unavailable"), "character")
  expect_error(credence_backend("cuda"), "credence_backend: .*CUDA was requested but cannot run")
})

ensemble <- function(s, n, k, seed) {
  set.seed(seed)
  a <- array(rexp(s * n * k), c(s, n, k))
  for (i in seq_len(s)) for (j in seq_len(n)) a[i, j, ] <- a[i, j, ] / sum(a[i, j, ])
  a
}

test_that("ece, brier and entropy_decomposition: backend cpu and the default agree", {
  a <- ensemble(5, 40, 4, 1)
  y <- sample.int(4, 40, replace = TRUE)
  m <- apply(a, c(2, 3), mean)
  for (p in list(a, m)) {
    for (bins in c(1L, 10L, 15L)) expect_equal(ece(p, y, bins = bins), ece(p, y, bins = bins, backend = "cpu"),
                                             tolerance = tol())
    expect_equal(brier(p, y), brier(p, y, backend = "cpu"), tolerance = tol())
    expect_equal(entropy_decomposition(p), entropy_decomposition(p, backend = "cpu"), tolerance = tol())
  }
  expect_equal(brier(a, factor(letters[y], levels = letters[1:4]), backend = "auto"), brier(a, y, backend = "cpu"),
               tolerance = tol())
  # Errors name the problem on both paths.
  expect_error(ece(m, y, bins = 0), "bins")
  expect_error(brier(m, rep(5L, 40)), "label")
  expect_error(brier(m, rep(5L, 40), backend = "cpu"), "label")
  expect_error(ece(m, y, backend = "GPU"), "ece: backend must be")
})

test_that("crps_mixture: backend cpu and the default agree", {
  set.seed(3)
  n <- 30; k <- 4
  means <- matrix(rnorm(n * k), n, k); sds <- matrix(rexp(n * k) + 0.3, n, k)
  w <- c(0.4, 0.3, 0.2, 0.1); y <- rnorm(n)
  expect_equal(crps_mixture(y, means, sds, weights = w), crps_mixture(y, means, sds, weights = w, backend = "cpu"),
               tolerance = tol())
  expect_equal(crps_mixture(y, means, sds), crps_mixture(y, means, sds, backend = "cpu"), tolerance = tol())
  expect_error(crps_mixture(y, means, sds, weights = c(1, 1, 1, 1)), "weights")
})

test_that("backend = \"cuda\" is an R error naming CUDA where it cannot run", {
  skip_if(cuda_here(), "CUDA can run here")
  a <- ensemble(2, 5, 3, 2)
  y <- c(1, 2, 3, 1, 2)
  expect_error(ece(a, y, backend = "cuda"), "ece: .*CUDA was requested but cannot run")
  expect_error(brier(a, y, backend = "cuda"), "brier: .*CUDA")
  expect_error(entropy_decomposition(a, backend = "cuda"), "entropy_decomposition: .*CUDA")
  expect_error(crps_mixture(0, matrix(0, 1, 2), matrix(1, 1, 2), backend = "cuda"), "crps_mixture: .*CUDA")
})

chees_data <- function() {
  set.seed(5)
  r <- 10
  data.frame(method = rep(c("A", "B", "C"), r), realization = rep(seq_len(r), each = 3),
             crps = c(0.30, 0.34, 0.32) + rep(rnorm(r, sd = 0.02), each = 3) + rnorm(3 * r, sd = 0.01))
}

test_that("credence_fit(sampler = \"chees\") gives a fit the usual methods work on", {
  d <- chees_data()
  f <- credence_fit(crps ~ method + (1 | realization), d, sampler = "chees", seed = 1)
  expect_s3_class(f, "credence_fit")
  expect_identical(f$sampler, "chees")
  expect_true(f$backend %in% c("cpu", "cuda"))
  expect_identical(f$info$chains, 40)
  expect_gte(f$info$draws, 100)
  expect_lt(f$chees$max_nested_rhat, 1.05)
  expect_identical(rownames(summary(f)$method), c("mu[A]", "mu[B]", "mu[C]"))
  # The tables' Rhat is the core's nested R-hat, the one the fit is judged by, matched by name;
  # split R-hat stays in f$summary.
  tab <- rbind(summary(f)$hyper, summary(f)$method, summary(f)$family_par)
  expect_equal(tab$Rhat, f$chees$nested_rhat[match(rownames(tab), f$chees$nested_rhat_name)])
  expect_false(anyNA(tab$Rhat))
  expect_false(isTRUE(all.equal(tab$Rhat, f$summary$rhat[match(rownames(tab), f$summary$name)])))
  expect_output(print(f), "ChEES-HMC")
  expect_output(print(f), "Rhat is nested R-hat")
  p <- prob_superior(f)
  expect_gt(p["A", "B"], 0.9)
  expect_equal(p["A", "B"] + p["B", "A"], 1, tolerance = 1e-12)
  expect_gt(mdd(f, "A", "B")$mdd, 0)
  expect_identical(dim(fixef(f)), c(3L, 4L))
  expect_identical(nrow(as.data.frame(f)), 40L * as.integer(f$info$draws))
  expect_true("divergent__" %in% levels(nuts_params(f)$Parameter))
  # The same seed gives the same draws; settings through control, iter exact when given.
  g <- credence_fit(crps ~ method + (1 | realization), d, sampler = "chees", seed = 1, iter = 130, warmup = 50,
                    control = list(superchains = 3, chains_per_superchain = 2))
  expect_identical(c(g$info$chains, g$info$draws, g$info$warmup), c(6, 80, 50))
  expect_identical(summary(f)$method, summary(credence_fit(crps ~ method + (1 | realization), d,
                                                           sampler = "chees", seed = 1))$method)
  # update() switches samplers; a plan takes a ChEES pilot like a NUTS one.
  n <- update(f, sampler = "nuts", iter = 400)
  expect_identical(n$sampler, "nuts")
  expect_identical(n$info$chains, 4)
  expect_output(print(n), "NUTS")
})

test_that("credence_fit: the backend argument and ChEES settings are checked", {
  d <- chees_data()
  fm <- crps ~ method + (1 | realization)
  expect_error(credence_fit(fm, d, backend = "cuda"), "NUTS runs on the CPU only")
  expect_error(credence_fit(fm, d, sampler = "chees", chains = 4), "superchains")
  expect_error(credence_fit(fm, d, sampler = "chees", control = list(max_depth = 3)), "max_depth")
  expect_error(credence_fit(fm, d, sampler = "chees", control = list(superchains = 1)), "superchains")
  expect_error(credence_fit(fm, d, sampler = "hmc"), "should be one of")
  expect_error(credence_fit(fm, d, sampler = "chees", backend = "tpu"), "backend = \"tpu\": unknown variant `tpu`")
  f <- credence_fit(fm, d, sampler = "chees", backend = "cpu", seed = 2,
                    control = list(superchains = 2, chains_per_superchain = 2))
  expect_identical(f$backend, "cpu")
  skip_if(cuda_here(), "CUDA can run here")
  expect_error(credence_fit(fm, d, sampler = "chees", backend = "cuda", seed = 1),
               "credence_fit: .*CUDA was requested but cannot run")
})
