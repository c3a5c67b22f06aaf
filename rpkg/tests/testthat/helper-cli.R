# The repository's CLI build (scripts/test-r builds it first); tests that compare with it skip
# when it is absent (R CMD check on the tarball, an installed package).
credence_cli <- function() {
  cli <- Sys.getenv("CREDENCE_CLI", file.path("..", "..", "..", "target", "debug", "credence"))
  if (!file.exists(cli) || !requireNamespace("jsonlite", quietly = TRUE)) skip("no CLI build or jsonlite")
  normalizePath(cli)
}

cli_json <- function(args) {
  out <- system2(credence_cli(), args, stdout = TRUE, stderr = FALSE)
  jsonlite::fromJSON(paste(out, collapse = "\n"), simplifyVector = FALSE)
}

# Writes a matrix (or a vector, as one column) to a headerless numeric CSV.
write_csv_matrix <- function(x, path) {
  utils::write.table(format(as.matrix(x), digits = 17), path, sep = ",", row.names = FALSE,
                     col.names = FALSE, quote = FALSE)
  path
}

withr_tempdir <- function() {
  d <- tempfile("credence-test")
  dir.create(d)
  d
}
