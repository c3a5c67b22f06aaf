# Paper-ready output of a fit: the core's one table and its sentences (R only converts them).

check_fit_arg <- function(fit, what) {
  if (!inherits(fit, "credence_fit")) stop(what, ": fit must be a credence_fit", call. = FALSE)
  invisible(fit)
}

rope_arg <- function(rope) if (is.null(rope)) NULL else as.double(rope)

#' @title The paper's table of a fit
#'
#' @description One row per method, best first: the posterior mean with its 95\% credible
#' interval, P(best), the expected rank with its 95\% interval, P(better than the next method),
#' and the interquartile mean with its stratified-bootstrap 95\% interval (rliable's
#' frequentist cross-check, labelled as such). The cells are the core's (the same table as
#' \code{credence fit --table}); estimates share the decimals that show two significant digits
#' of the smallest posterior sd. \code{paper_table} returns a data frame for
#' \code{knitr::kable}; \code{as_latex} and \code{as_markdown} the table as text.
#' @param fit A \code{credence_fit} (one data set).
#' @return \code{paper_table}: a data frame of character columns (names as printed);
#'   \code{as_latex}: a LaTeX \code{tabular} with booktabs rules; \code{as_markdown}: a pipe
#'   table. Both strings, printed with \code{cat()}.
#' @examples
#' d <- data.frame(method = rep(c("A", "B"), 10), realization = rep(1:10, each = 2),
#'                 crps = c(0.30, 0.35) + rep(rnorm(10, sd = 0.02), each = 2) + rnorm(20, sd = 0.01))
#' f <- credence_fit(crps ~ method + (1 | realization), d, iter = 400, seed = 1, chains = 2)
#' paper_table(f)
#' cat(as_latex(f))
#' @export
paper_table <- function(fit) {
  check_fit_arg(fit, "paper_table")
  t <- glue_paper_table(fit_ptr(fit), "")
  cells <- matrix(t$cells, ncol = length(t$header), byrow = TRUE)
  out <- as.data.frame(cells, stringsAsFactors = FALSE)
  names(out) <- t$header
  out
}

#' @rdname paper_table
#' @export
as_latex <- function(fit) {
  check_fit_arg(fit, "as_latex")
  glue_paper_table(fit_ptr(fit), "latex")
}

#' @rdname paper_table
#' @export
as_markdown <- function(fit) {
  check_fit_arg(fit, "as_markdown")
  glue_paper_table(fit_ptr(fit), "markdown")
}

#' @title A fit in plain sentences
#'
#' @description The core's summary in words, generated from the fit's numbers by one function
#' (the same sentences as \code{credence fit} prints): the method most likely best with
#' P(best), then each method against the next in the ranking, settled when P(better) >= 0.95,
#' otherwise "cannot be separated with R realizations", and with a ROPE whether the pair is
#' practically equivalent or its gap above or within the ROPE. A property test checks that no
#' sentence contradicts the numbers it states. For a \code{credence_across} the same function
#' speaks of a new data set (P(best there), P(better there), the gap of the method effects
#' delta, "cannot be separated with D data sets"), with the ROPE given to \code{credence_fit}.
#' @param fit A \code{credence_fit}, or a \code{credence_across}.
#' @param rope Half-width of a region of practical equivalence, or \code{NULL} for none (for a
#'   \code{credence_across}, \code{NULL}: its ROPE is the fit's).
#' @return A character vector, one sentence per element.
#' @examples
#' d <- data.frame(method = rep(c("A", "B"), 10), realization = rep(1:10, each = 2),
#'                 crps = c(0.30, 0.35) + rep(rnorm(10, sd = 0.02), each = 2) + rnorm(20, sd = 0.01))
#' f <- credence_fit(crps ~ method + (1 | realization), d, iter = 400, seed = 1, chains = 2)
#' fit_sentences(f, rope = 0.01)
#' @export
fit_sentences <- function(fit, rope = NULL) {
  if (inherits(fit, "credence_across")) {
    if (!is.null(rope)) {
      stop("fit_sentences: the ROPE of a fit across data sets is credence_fit's rope argument", call. = FALSE)
    }
    return(fit$sentences)
  }
  check_fit_arg(fit, "fit_sentences")
  t <- fit$terms
  metric <- if (is.null(t$trials)) t$response else paste0(t$response, "/", t$trials)
  glue_fit_sentences(fit_ptr(fit), metric, rope_arg(rope))
}
