# The full five-data-set study table end to end: the table `credence study` wrote for the
# synthetic data and the four UCI sets in the CLI's end-to-end test
# (rust/credence-cli/tests/e2e_five_datasets.rs, which also runs `credence report` on it), fitted
# across data sets by credence_fit and by `credence fit --dataset-column`, compared key by key.
# Without the table the test fails (scripts/test-r runs the Rust test first when the table is
# missing; the study reads the data built into the binary, so nothing else is needed).

five_datasets <- c("concrete", "energy", "kin8nm", "synthetic", "yacht")

e2e_table <- function() {
  path <- Sys.getenv("CREDENCE_E2E_TABLE",
                     file.path("..", "..", "..", "target", "tmp", "e2e-five-datasets", "study.csv"))
  if (!file.exists(path)) {
    stop(path, " is absent (cargo test --locked -p credence-cli --test e2e_five_datasets writes it)")
  }
  normalizePath(path)
}

test_that("the five-data-set study table fits across data sets in R as in the CLI", {
  cli <- credence_cli()
  path <- e2e_table()
  d <- utils::read.csv(path)
  expect_setequal(unique(d$dataset), five_datasets)
  expect_setequal(unique(d$method), c("bbb", "cp", "ensemble", "map", "mcd", "swag"))
  # The largest n every data set has, as the report's across section.
  d50 <- d[d$n == 50, ]
  # The study leaves the metrics of runs that did not converge NA; R drops them with a warning,
  # the CLI with a note.
  fit <- function() {
    credence_fit(crps ~ method + (1 | realization) + (1 | dataset:method), d50, chains = 4, iter = 600,
                 warmup = 150, seed = 3, rope = 0.01)
  }
  if (anyNA(d50$crps)) {
    expect_warning(f <- fit(), paste(sum(is.na(d50$crps)), "row\\(s\\) containing NAs were dropped"))
  } else {
    f <- fit()
  }
  r <- f$summary
  expect_identical(r$data$datasets, five_datasets)
  expect_equal(r$data$observations, sum(!is.na(d50$crps)))
  j <- cli_json(c("fit", path, "--where", "n=50", "--response", "crps", "--pair", "realization",
                  "--dataset-column", "dataset", "--warmup", "150", "--draws", "450", "--max-draws", "450",
                  "--seed", "3", "--rope", "0.01", "--json", "-"))
  expect_setequal(names(r), names(j))
  r$sampler$max_draws <- NULL
  j$sampler$max_draws <- NULL
  # The CLI's warnings start with its note on the dropped rows; the fit's own are the same.
  cli_warnings <- as.character(unlist(j$warnings))
  if (anyNA(d50$crps)) {
    expect_identical(cli_warnings[1], paste(sum(is.na(d50$crps)), "row(s) with missing values in the model's columns were dropped"))
  }
  expect_identical(utils::tail(cli_warnings, length(r$warnings)), as.character(unlist(r$warnings)))
  for (k in setdiff(names(r), c("seconds", "warnings"))) {
    expect_equal(unlist(r[[k]]), unlist(j[[k]]), tolerance = 1e-10, label = paste0("R's ", k),
                 expected.label = paste0("the CLI's ", k))
  }
  # Every pair of the six methods, on a new data set and on each of the five.
  for (a in names(r$pairwise)) for (b in names(r$pairwise[[a]])) {
    expect_identical(names(r$pairwise[[a]][[b]]$prob_better_on), five_datasets)
  }
  expect_length(unlist(lapply(r$pairwise, names)), 30)
  expect_true(all(is.finite(unlist(r$parameters))))
})
