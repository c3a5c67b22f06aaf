# Summaries of a `credence study` table; the R side converts types only.

#' @export
convergence_rates <- function(data, n = "n", method = "method", converged = "converged") {
  for (col in c(n, method, converged)) {
    if (!col %in% names(data)) stop("convergence_rates: no column '", col, "' in data")
  }
  text <- function(x) {
    x <- as.character(x)
    x[is.na(x)] <- "NA"
    x
  }
  r <- glue_convergence(text(data[[n]]), text(data[[method]]), text(data[[converged]]))
  as.data.frame(r)
}

#' @export
variance_decomposition <- function(data, metric = "crps", n = "n", method = "method",
                                   realization = "realization", train_rep = "train_rep") {
  for (col in c(metric, n, method, realization, train_rep)) {
    if (!col %in% names(data)) stop("variance_decomposition: no column '", col, "' in data")
  }
  text <- function(x) {
    x <- as.character(x)
    x[is.na(x)] <- "NA"
    x
  }
  r <- glue_variance_decomposition(text(data[[n]]), text(data[[method]]), text(data[[realization]]),
                                   text(data[[train_rep]]), text(data[[metric]]))
  as.data.frame(r)
}
