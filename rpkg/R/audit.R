# credence_audit: R checks the formula and converts the columns; the Rust core subsamples the
# table, fits every model and scores it (credence::compare::audit).

#' @title Calibration audit of the comparison models on a large table
#'
#' @description Answers the question a user of a small experiment cannot: would the models' P(A
#' better than B) from R realizations have come true? Subsets of R realizations of a large paired
#' table (say 100 or more realizations, as a \code{credence study} table) are fitted by each model
#' and their answers on the pairs the full table settles clearly (|paired z| above \code{clear_z})
#' are scored against the full table's verdict, beside the simplest honest baseline, the
#' paired-difference posterior (\code{"paired_difference"}). As the CLI's \code{credence audit}.
#' @param formula As in \code{\link{credence_fit}}, with the realization term:
#'   \code{y ~ method + (1 | realization)}, or \code{k | trials(n) ~ method + (1 | realization)}
#'   with \code{family = beta_binomial()}. With a data-set term,
#'   \code{y ~ method + (1 | dataset:method) + (1 | realization)}, the across-data-sets
#'   model (its defaults) is audited per data set: subsets of R realizations of every data set,
#'   its P(A better than B) on each data set against that data set's full verdict, beside each
#'   data set's paired-difference posterior (the answer on a new data set cannot be checked on a
#'   handful of data sets).
#' @param data A data frame (rows with \code{NA} in a model column are dropped with a warning).
#' @param family \code{gaussian()} or \code{beta_binomial()}, as in \code{\link{credence_fit}}.
#' @param models Models to audit: \code{NULL} (the core's default: \code{"paired"} and
#'   \code{"additive"} for the Gaussian family, \code{"beta_binomial"} for counts), or some of
#'   them.
#' @param r Realizations per subset (each at least 2 and fewer than the table has); \code{NULL}
#'   keeps the core's default (5 and 10).
#' @param subsets Subsets per R (each fitted by every model); \code{NULL}: the core's default (40).
#' @param clear_z A pair is clear when its paired z over the full table exceeds this (\code{NULL}:
#'   3).
#' @param level The probability that settles a pair either way (\code{NULL}: 0.95).
#' @param draws Kept draws per chain of each fit (\code{NULL}: the fits' own).
#' @param seed Seed of the subsets and the fits (\code{NULL}: 1).
#' @param higher_is_better Whether higher metric values are better (coverage, accuracy).
#' @param cores Threads (\code{NULL}: all).
#' @return An object of class \code{"credence_audit"}: \code{scores} (a data frame, one row per R
#'   and model: answers on clear pairs, settled and their share, wrong calls and their share among the settled,
#'   fits, failed and unclean fits, and how many reliability bins miss), \code{reliability} (one row
#'   per R, model and bin of stated P: answers, mean stated P, observed frequency, and whether the
#'   bin misses by more than the tolerance with enough answers), \code{verdicts} (the full table's
#'   paired z of every pair, per data set across data sets, and whether it is clear), and \code{methods}, \code{realizations},
#'   \code{models}, \code{subsets}, \code{clear_z}, \code{level}, \code{seed}, \code{warnings},
#'   \code{seconds}.
#' @details A settled answer is P >= \code{level} either way; it is wrong when it goes against the
#'   full table's verdict. A model is calibrated where the observed frequency of its calls coming
#'   true lies within 0.1 of the stated P in every bin of [0.6, 0.95) with 30 or more answers.
#'   Clear pairs are selected by a large effect, so even an exact posterior tends to state less
#'   than it achieves on them; compare with the baseline, which is calibrated over all pairs.
#'   See the docs' audit page for the measured tables.
#' @seealso \code{\link{credence_fit}}, \code{\link{plan_realizations}}
#' @examples
#' set.seed(1)
#' n <- 60
#' d <- data.frame(method = rep(c("A", "B", "C"), n), realization = rep(seq_len(n), each = 3))
#' d$crps <- c(0.30, 0.33, 0.40)[match(d$method, c("A", "B", "C"))] +
#'   rep(rnorm(n, sd = 0.05), each = 3) + rnorm(3 * n, sd = 0.03)
#' a <- credence_audit(crps ~ method + (1 | realization), d, models = "paired", r = 5, subsets = 10)
#' a
#' @export
credence_audit <- function(formula, data, family = stats::gaussian(), models = NULL, r = NULL, subsets = NULL,
                           clear_z = NULL, level = NULL, draws = NULL, seed = NULL, higher_is_better = FALSE,
                           cores = NULL) {
  fn <- "credence_audit"
  f <- parse_credence_formula(formula)
  if (is.null(f$pair)) {
    stop(fn, ": the formula needs the realization term, e.g. y ~ method + (1 | realization)", call. = FALSE)
  }
  if (!is.null(f$training)) {
    stop(fn, ": (1 | ", f$pair, "/", f$training, "): the audit subsamples realizations of one value per method; ",
         "average the trainings first (the CLI's credence audit --repeat does)", call. = FALSE)
  }
  if (!is.null(r) && (!is.numeric(r) || !length(r) || anyNA(r))) {
    stop(fn, ": r must be a numeric vector of numbers of realizations", call. = FALSE)
  }
  d <- model_rows(data, c(f$response, f$trials), c(f$group, f$pair, f$dataset))
  request <- list(family = resolve_family(family), draws = draws, seed = seed,
                  higher_is_better = flag_arg(higher_is_better, fn, "higher_is_better"))
  options <- list(realizations = if (!is.null(r)) as.list(as.double(r)), subsets = subsets, clear_z = clear_z,
                  level = level, seed = seed)
  if (!is.null(f$dataset)) {
    if (!is.null(models) && !identical(as.character(models), "across")) {
      stop(fn, ": across data sets the one model audited is \"across\"", call. = FALSE)
    }
    if (!is.null(f$trials)) stop(fn, ": the across-data-sets model fits a metric, not counts", call. = FALSE)
    a <- core(fn, glue_audit_across(request, options, as.character(d[[f$dataset]]), as.character(d[[f$group]]),
                                    as.character(d[[f$pair]]), as.double(d[[f$response]]), run_cores(cores),
                                    run_progress()))
  } else {
    a <- core(fn, glue_audit(request, as.character(models), options, as.character(d[[f$group]]),
                             as.character(d[[f$pair]]), as.double(d[[f$response]]),
                             if (is.null(f$trials)) NULL else as.double(d[[f$trials]]), run_cores(cores),
                             run_progress()))
  }
  for (w in a$warnings) warning(w, call. = FALSE)
  a$scores <- as.data.frame(a$scores, stringsAsFactors = FALSE)
  a$scores$r <- as.integer(a$scores$r)
  a$reliability <- as.data.frame(a$reliability, stringsAsFactors = FALSE)
  a$verdicts <- as.data.frame(a$verdicts, stringsAsFactors = FALSE)
  if (all(a$verdicts$dataset == "")) a$verdicts$dataset <- NULL
  a$formula <- formula
  structure(a, class = "credence_audit")
}

#' @rdname credence_audit
#' @param x A \code{credence_audit}.
#' @param ... Ignored.
#' @method print credence_audit
#' @export
print.credence_audit <- function(x, ...) {
  cat("Calibration audit: ", length(x$methods), " methods, ", x$realizations, " realizations, ",
      sum(x$verdicts$clear), " of ", nrow(x$verdicts), " pairs clear at |paired z| > ", x$clear_z, "\n", sep = "")
  cat("Settled: P >= ", x$level, " either way; ", x$subsets, " subsets per R, seed ", x$seed, "\n\n", sep = "")
  s <- x$scores
  s$share <- round(s$share, 3)
  s$wrong_share <- round(s$wrong_share, 3)
  print(s[, c("r", "model", "answers", "settled", "share", "wrong", "wrong_share", "unclean", "failed",
              "miscalibrated_bins")], row.names = FALSE)
  invisible(x)
}
