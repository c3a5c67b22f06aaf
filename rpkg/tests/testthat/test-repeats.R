# Repeated trainings within a realization: (1 | realization/train_rep) gives the core's
# averaging of each cell; these check the conversion, the decomposition and the refusals.

repeat_table <- function() {
  set.seed(4)
  d <- expand.grid(train_rep = 0:2, method = c("A", "B"), realization = 1:5, stringsAsFactors = FALSE)
  split <- rnorm(10, sd = 0.03)[(match(d$method, c("A", "B")) - 1) * 5 + d$realization]
  d$crps <- 0.3 + 0.01 * (d$method == "B") + split + rnorm(nrow(d), sd = 0.01)
  d
}

test_that("repeated trainings are averaged per cell and decomposed", {
  d <- repeat_table()
  f <- (credence_fit(crps ~ method + (1 | realization/train_rep), d, seed = 2))
  means <- aggregate(crps ~ method + realization, d, mean)
  g <- (credence_fit(crps ~ method + (1 | realization), means, seed = 2))
  expect_equal(prob_superior(f), prob_superior(g), tolerance = 1e-9)
  r <- fit_summary(f)$repeats
  expect_equal(r$column, "train_rep")
  expect_equal(unlist(r$per_cell), c(3, 3))
  a <- d[d$method == "A", ]
  within <- sum(tapply(a$crps, a$realization, function(x) sum((x - mean(x))^2)))
  sd_a <- if (is.data.frame(r$methods)) r$methods$training_sd[r$methods$method == "A"] else r$methods[[1]]$training_sd
  expect_equal(sd_a, sqrt(within / 10), tolerance = 1e-12)
  expect_null(fit_summary(g)$repeats)
})

test_that("repeated trainings are refused where they cannot be used", {
  d <- repeat_table()
  expect_error(credence_audit(crps ~ method + (1 | realization/train_rep), d), "average the trainings first")
  d$dataset <- "D1"
  expect_error(credence_fit(crps ~ method + (1 | dataset:method) + (1 | realization/train_rep), d),
               "average the trainings first")
  d2 <- repeat_table()
  d2$train_rep[2] <- 0
  expect_error(credence_fit(crps ~ method + (1 | realization/train_rep), d2), "train_rep.*has one at")
})
