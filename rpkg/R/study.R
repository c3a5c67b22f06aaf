# Summaries of a `credence study` table; the R side converts types only.

#' @title Share of converged runs per method and training size
#'
#' @description Counts the runs of a \code{credence study} table and those with \code{converged = TRUE}, per
#' method and training size. Runs that did not converge (a non-finite loss, or a SWAG run whose
#' SGD failed: its last epoch's training loss not below its first, or snapshots that do not move)
#' have no metrics; the low-data study excludes them and reports these rates. Computed by the
#' Rust core (\code{credence::report::convergence}), as in the \code{Runs converged} table of
#' \code{credence report}.
#' @param data A data frame, e.g. a \code{credence study} table read with \code{read.csv}.
#' @param n,method,converged Column names: training size, method, and the convergence flag
#'   (\code{TRUE}/\code{FALSE}, \code{"true"}/\code{"false"} or 1/0).
#' @return A data frame with one row per (method, n): \code{method}, \code{n}, \code{runs},
#'   \code{converged} and \code{rate} (converged / runs). Methods in order of first appearance,
#'   sizes ascending.
#' @examples
#' study <- read.csv(system.file("extdata", "study.csv", package = "credence"))
#' convergence_rates(study)
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

#' @title Data and algorithm variance of a metric
#'
#' @description The low-data study's variance decomposition from a table with repeated trainings
#' (\code{credence study --train-seeds K}): per method and training size, the variance of one
#' run's metric splits into data variance (a new training set) and algorithm variance (the same
#' data, a new training seed). Balanced one-way random-effects ANOVA over the realizations that have
#' a value for every repeat: algorithm = MSW, data = max(0, (MSB - MSW) / K). Computed by the Rust
#' core (\code{credence::report::variance_decomposition}), as in \code{credence report}.
#' @param data A data frame, e.g. a \code{credence study} table read with \code{read.csv}.
#' @param metric The metric column.
#' @param n,method,realization,train_rep Column names: training size, method, realization and
#'   training repeat (0..K-1).
#' @return A data frame with one row per (method, n) that has at least two complete realizations and two
#'   repeats: \code{method}, \code{n}, \code{realizations}, \code{repeats}, \code{data},
#'   \code{algorithm} and \code{data_share}.
#' @examples
#' d <- data.frame(n = 30, method = "a", realization = c(0, 0, 1, 1), train_rep = c(0, 1, 0, 1),
#'                 crps = c(1, 3, 5, 9))
#' variance_decomposition(d)
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
