# The repository's example metric table (examples/data/metric_table.csv), which the fit tests
# share; a test that needs it skips outside a repository checkout (R CMD check on the tarball,
# an installed package).
metric_table_path <- function() {
  p <- file.path("..", "..", "..", "examples", "data", "metric_table.csv")
  if (!file.exists(p)) skip("examples/data/metric_table.csv is only in a repository checkout")
  normalizePath(p)
}

metric_table <- function() utils::read.csv(metric_table_path())
