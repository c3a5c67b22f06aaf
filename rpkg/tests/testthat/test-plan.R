# plan_realizations: the shape of the result, the assurance at the ends of the effect range,
# errors as R errors, and the backend (small settings: each plan takes about a second).

small_plan <- function(...) {
  plan_realizations(sims = 30, superchains = 2, backend = "cpu", ...)
}

plan_columns <- c("r", "assurance", "assurance_mcse", "expected_prob_better", "fits", "refit", "unclean",
                  "failed", "mdd", "mdd_detection_probability")

test_that("a plan from stated values is a data frame with one row per R and the plan's attributes", {
  # Any unclean simulated fit is a named warning each, checked below.
  p <- suppressWarnings(small_plan(effect = 0.5, sigma_a = 0.2, sigma_b = 0.2, r = c(2, 4, 12)))
  expect_s3_class(p, c("credence_plan", "data.frame"), exact = TRUE)
  expect_identical(names(p), plan_columns)
  expect_identical(p$r, c(2L, 4L, 12L))
  expect_true(all(p$assurance >= 0 & p$assurance <= 1))
  expect_true(all(p$assurance_mcse >= 0 & p$assurance_mcse <= 0.5))
  expect_true(all(p$expected_prob_better >= 0 & p$expected_prob_better <= 1))
  expect_identical(p$fits + p$failed, rep(30L, 3))
  expect_true(all(p$refit >= 0 & p$unclean >= 0))
  expect_true(all(p$mdd > 0) && all(diff(p$mdd) < 0))
  expect_true(all(p$mdd_detection_probability >= 0.5 & p$mdd_detection_probability <= 1))
  expect_identical(attr(p, "decision"), "P(A better than B) >= 0.95")
  expect_identical(attr(p, "backend"), "cpu")
  # The default model of stated values is the paired one (exact draws, no sampler to try).
  expect_match(attr(p, "sampler"), "^exact posterior draws of the paired model")
  expect_true(all(grepl("^R = [0-9]+: [0-9]+ of 30 simulated fits were not clean$", attr(p, "warnings"))))
  expect_identical(attr(p, "methods"), c("A", "B"))
  # A large effect is detected with certainty at the largest R, and the plan names the first R
  # whose assurance reaches the power.
  expect_gt(p$assurance[3], 0.95)
  expect_identical(attr(p, "smallest_r"), p$r[which(p$assurance >= 0.8)[1]])
  expect_output(print(p), "Smallest R with assurance >= 0.8")
})

test_that("no effect gives an assurance near 0, with a named warning that no R reaches the power", {
  expect_warning(p <- small_plan(effect = 0, sigma_a = 0.2, sigma_b = 0.2, r = c(3, 10)),
                 "plan_realizations: no R up to 10 reaches assurance 0.8")
  expect_true(all(p$assurance <= 0.2))
  expect_identical(attr(p, "smallest_r"), NA_integer_)
  expect_match(attr(p, "warnings"), "reaches assurance")
  expect_output(print(p), "No R of the grid reaches assurance 0.8")
})

test_that("plans are reproducible, and a ROPE only makes the decision harder", {
  args <- list(effect = 0.15, sigma_a = 0.2, sigma_b = 0.3, sigma_gamma = 0.1, r = c(4, 8), seed = 3)
  p1 <- suppressWarnings(do.call(small_plan, args))
  p2 <- suppressWarnings(do.call(small_plan, args))
  expect_identical(as.data.frame(p1)[, -1], as.data.frame(p2)[, -1])
  pr <- suppressWarnings(do.call(small_plan, c(args, rope = 0.1)))
  expect_identical(attr(pr, "decision"), "P(A better than B by more than 0.1) >= 0.95")
  expect_true(all(pr$assurance <= p1$assurance))
  # Higher is better: the same world seen from the other side.
  ph <- suppressWarnings(do.call(small_plan, c(args, higher_is_better = TRUE)))
  expect_true(all(ph$assurance >= 0 & ph$assurance <= 1))
})

pilot_data <- function() {
  set.seed(11)
  r <- 8
  g <- rep(rnorm(r, sd = 0.02), each = 3)
  data.frame(method = rep(c("A", "B", "C"), r), realization = rep(seq_len(r), each = 3),
             crps = c(0.30, 0.40, 0.35) + g + rnorm(3 * r, sd = 0.02))
}

test_that("a plan from a pilot fit draws its worlds from the posterior", {
  # The default sampler settings: a pilot must be a clean fit (R-hat <= 1.01), or it is refused.
  fit <- credence_fit(crps ~ method + (1 | realization), pilot_data(), seed = 2)
  p <- suppressWarnings(small_plan(fit = fit, a = "A", b = "B", r = c(3, 6)))
  expect_identical(attr(p, "source"), "pilot")
  expect_identical(attr(p, "methods"), c("A", "B", "C"))
  expect_identical(nrow(p), 2L)
  expect_gt(p$assurance[2], 0.8)
  expect_identical(attr(p, "smallest_r"), p$r[which(p$assurance >= 0.8)[1]])
  # The MDD column is the fit's predictive MDD at each R.
  expect_equal(p$mdd[2], mdd(fit, "A", "B", power = 0.8, R_new = 6)$mdd, tolerance = 1e-12)
  # The reverse comparison is never settled; methods restricts the simulated tables.
  q <- suppressWarnings(small_plan(fit = fit, a = "B", b = "A", r = 3, methods = c("A", "B")))
  expect_identical(attr(q, "methods"), c("A", "B"))
  expect_lt(q$assurance, 0.1)
  # Errors are R errors naming what is wrong, and R goes on.
  expect_error(small_plan(fit = fit, a = "A", b = "zzz", r = 3), "zzz")
  expect_error(small_plan(fit = fit, a = "A", b = "B", r = 3, methods = c("A", "nope")), "nope")
  expect_error(small_plan(fit = fit, a = "A", b = "B", r = c(1, 3)), "at least 2")
  expect_error(small_plan(fit = fit, a = "A", b = "A", r = 3), "two different")
  expect_error(small_plan(fit = fit, a = "A", b = "B", r = 3, prob = 2), "level")
  expect_error(small_plan(fit = fit, a = "A", b = "B", r = 3, effect = 1), "not both")
  expect_error(small_plan(fit = fit, r = 3), "a and b")
  expect_error(small_plan(fit = fit, a = "A", b = "B", higher_is_better = TRUE), "pilot fit")
  expect_error(plan_realizations(a = "A", b = "B"), "stated values")
  expect_error(plan_realizations(list(), "A", "B"), "credence_fit")
  expect_error(small_plan(effect = 0.1, sigma_a = -1, sigma_b = 1, r = 3), "sigma_a")
  # The options reach the core as a named list: a value its field cannot take is named.
  expect_error(plan_realizations(fit, "A", "B", r = 3, sims = 2.5), "plan_realizations: sims = 2.5")
  expect_error(plan_realizations(fit, "A", "B", r = 3, seed = -1), "plan_realizations: seed = -1")
  expect_error(plan_realizations(fit, "A", "B", r = c(3, 4.5)), "realizations = \\[3,4.5\\]")
  expect_identical(nrow(suppressWarnings(small_plan(fit = fit, a = "A", b = "B", r = 3))), 1L)
})

test_that("backend: auto runs anywhere, cuda is an R error where CUDA cannot run", {
  p <- suppressWarnings(plan_realizations(effect = 0.5, sigma_a = 0.2, sigma_b = 0.2, r = 10, sims = 20,
                                          superchains = 2))
  expect_gt(p$assurance, 0.9)
  expect_true(attr(p, "backend") %in% c("cpu", "cuda"))
  expect_identical(attr(p, "backend"), as.character(credence_backend()))
  expect_error(plan_realizations(effect = 0.5, sigma_a = 0.2, sigma_b = 0.2, sims = 5, backend = "gpu"),
               "backend must be")
  skip_if(credence_backend() == "cuda", "CUDA can run here")
  expect_error(plan_realizations(effect = 0.5, sigma_a = 0.2, sigma_b = 0.2, r = 4, sims = 5, backend = "cuda"),
               "plan_realizations: .*CUDA was requested but cannot run")
})

test_that("plot draws assurance and the MDD approximation against R", {
  p <- small_plan(effect = 0.5, sigma_a = 0.2, sigma_b = 0.2, r = c(3, 10))
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  g <- plot(p)
  if (requireNamespace("ggplot2", quietly = TRUE)) {
    expect_s3_class(g, "ggplot")
    expect_identical(levels(g$data$what), c("assurance (simulated experiments)",
                                            "detection probability (MDD approximation)"))
  } else {
    expect_null(g)
  }
  expect_output(print(p[1, ]), "assurance")
})
