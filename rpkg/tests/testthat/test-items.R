# Per-item scores: crps ~ method + (1 | realization) + (1 | item).

item_table <- function(shared, seed = 1) {
  set.seed(seed)
  rows <- list()
  difficulty <- rnorm(60)
  for (r in 1:4) {
    train <- rnorm(2, sd = 0.01)
    items <- if (shared) difficulty else rnorm(60)
    for (i in 1:60) {
      for (m in 1:2) {
        rows[[length(rows) + 1]] <- data.frame(method = c("A", "B")[m], realization = r,
                                               item = if (shared) paste0("x", i) else paste0(r, ":", i),
                                               crps = 1 + 0.2 * (m - 1) + train[m] + items[i] + rnorm(1, sd = 0.3))
      }
    }
  }
  do.call(rbind, rows)
}

test_that("per-item scores fit the per-item model, shared or nested as the labels say", {
  for (shared in c(TRUE, FALSE)) {
    fit <- credence_fit(crps ~ method + (1 | realization) + (1 | item), data = item_table(shared))
    s <- fit_summary(fit)
    expect_equal(s$items$layout, if (shared) "shared" else "nested")
    expect_equal(s$items$scores, 480)
    expect_true(prob_better(fit, "A", "B") > 0.9)
    expect_true(grepl("per-item", s$form))
  }
})

test_that("items that are partly shared, or an item term across data sets, are refused by name", {
  d <- item_table(TRUE)
  d$item[d$realization == 2 & d$item == "x1"] <- "new"
  expect_error(credence_fit(crps ~ method + (1 | realization) + (1 | item), data = d), "some realizations")
  expect_error(credence_fit(crps ~ method + (1 | realization) + (1 | item) + (1 | ds:method), data = d), "item")
})
