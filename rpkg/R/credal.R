# Credal-set evaluation (E = d + lambda * NS) of point, sample, interval, belief and Dirichlet
# predictions. The R side converts types only (arrays to values plus dimensions, 1-based
# classes to 0-based); every number comes from credence::credal.

#' @title Credal-set evaluation of classifier predictions
#'
#' @description Maps every prediction to a credal set (a mass function over focal sets) and scores it by
#' \eqn{E = d + \lambda NS}: d is the KL distance from the one-hot label to the closest vertex of
#' the credal set (\eqn{-\ln Pl(\{y\})}), NS the non-specificity \eqn{\sum_A m(A)\ln|A|}.
#' Everything is computed by the Rust core (\code{credence::credal}); the output mirrors the JSON
#' of \code{credence credal --json}.
#' @param probs Point probabilities, an N x K matrix (NS is 0).
#' @param samples An S x N x K array of sampled probability vectors (ensemble members, MC-dropout
#'   passes); lower probabilities are the minimum over samples.
#' @param beliefs An N x J matrix of beliefs Bel(A_j) of the budget's J focal sets (random-set
#'   networks); needs \code{budget}.
#' @param lower,upper N x K matrices of probability intervals.
#' @param dirichlet An N x K matrix of Dirichlet concentrations (evidential networks), turned into
#'   \code{draws} seeded samples per point.
#' @param y Observed classes 1..K (or a factor); without them only NS and the other uncertainty
#'   measures are reported.
#' @param budget Focal sets: a path to a budget JSON file (\code{{"classes": [...], "focal_sets":
#'   [[0], [1, 4], ...]}}, 0-based as written by Python), or a list of integer vectors of classes
#'   1..K (e.g. from \code{\link{credal_budget}}). \code{NULL} uses the full powerset (K <= 16).
#' @param n_classes K for a list budget (default: the largest class in it for beliefs, else the
#'   last dimension of the input).
#' @param lambda The lambda grid of E.
#' @param normalisation What to do with negative Moebius masses: clip them and give the residual to
#'   the whole frame, then renormalise (default: the credal study's rule as its random-set network's
#'   reference code \code{belief_to_mass} applies it); clip only; or keep them.
#' @param vertices The 2K vertex approximation or exact enumeration (K <= 8).
#' @param draws,seed Dirichlet samples per point and their seed.
#' @param js The Jensen-Shannon score of the ablation: the divergence (default, as the credal study
#'   uses it; natural log) or the distance, its square root (scipy's \code{jensenshannon}).
#' @param uncertainty_unit Unit of the credal uncertainty (max minus min entropy): bits (default,
#'   as the credal study reports it) or nats. KL, NS and E are always in nats.
#' @param x A \code{credence_credal} object.
#' @param digits Significant digits printed.
#' @param ... Ignored.
#' @return An object of class \code{credence_credal}: \code{overall} (\code{n}; \code{ns}, \code{kl},
#'   \code{js}, each a list of \code{mean} and population \code{sd}; \code{e}, a data frame of
#'   \code{lambda}, \code{mean}, \code{sd}), \code{koerner}, \code{pal}, \code{credal_uncertainty},
#'   \code{set_size} (the credal-set size: classes not dominated by interval dominance,
#'   Pl(\{c\}) >= max Bel(\{d\}))
#'   (mean and sd), \code{accuracy}, \code{correct} and \code{incorrect} (as \code{overall}, for the
#'   points whose predicted class is right or wrong), \code{points} (a data frame of per-point
#'   scores; \code{predicted} is 1-based), \code{units} (the unit of each score, as the JSON's
#'   \code{units}) and \code{report} (the core's report, for
#'   \code{\link{credal_rank}}).
#' @examples
#' # Two ensemble members on one point of three classes, label 1: masses {1} .5, {2} .2, {3} .1,
#' # {1,2} .1, {1,3} .1; NS = 0.2 ln 2, KL = -ln 0.7.
#' s <- array(c(0.7, 0.5, 0.2, 0.3, 0.1, 0.2), dim = c(2, 1, 3))
#' r <- credal_eval(samples = s, y = 1)
#' r$overall$ns$mean
#' r
#' @export
credal_eval <- function(probs = NULL, samples = NULL, beliefs = NULL, lower = NULL, upper = NULL,
                        dirichlet = NULL, y = NULL, budget = NULL, n_classes = NULL,
                        lambda = seq(0, 1, by = 0.1),
                        normalisation = c("clip_residual_renormalise", "clip", "none"),
                        vertices = c("two_k", "exact"), draws = 100L, seed = 1,
                        js = c("divergence", "distance"), uncertainty_unit = c("bits", "nats")) {
  normalisation <- match.arg(normalisation)
  vertices <- match.arg(vertices)
  js <- match.arg(js)
  uncertainty_unit <- match.arg(uncertainty_unit)
  given <- c(probs = !is.null(probs), samples = !is.null(samples), beliefs = !is.null(beliefs),
             intervals = !is.null(lower) || !is.null(upper), dirichlet = !is.null(dirichlet))
  if (sum(given) != 1L) {
    stop("credal_eval: give exactly one of probs, samples, beliefs (with budget), lower and upper, dirichlet")
  }
  kind <- names(given)[given]
  x <- switch(kind, probs = probs, samples = samples, beliefs = beliefs, intervals = lower,
              dirichlet = dirichlet)
  if (is.data.frame(x)) x <- as.matrix(x)
  if (is.null(dim(x))) stop("credal_eval: ", kind, " must be a matrix or array")
  if (kind == "intervals") {
    if (is.null(lower) || is.null(upper)) stop("credal_eval: intervals need both lower and upper")
    if (!identical(dim(as.matrix(upper)), dim(x))) stop("credal_eval: lower and upper differ in dimensions")
  }
  up <- if (kind == "intervals") as.double(as.matrix(upper)) else double()
  budget_file <- ""
  classes <- integer()
  lengths <- integer()
  if (is.character(budget)) {
    budget_file <- path.expand(budget[[1]])
  } else if (!is.null(budget)) {
    if (!is.list(budget)) stop("credal_eval: budget must be a JSON file path or a list of class vectors")
    classes <- as.integer(unlist(budget, use.names = FALSE)) - 1L
    lengths <- lengths(budget)
  }
  if (is.null(n_classes)) {
    n_classes <- if (kind == "beliefs") max(c(0L, classes)) + 1L else dim(x)[length(dim(x))]
  }
  labels <- if (is.null(y)) NULL else as_class_index(y)
  r <- glue_credal(kind, as.double(x), as.integer(dim(x)), up, budget_file, classes, as.integer(lengths),
                   as.integer(n_classes), labels, as.double(lambda), normalisation, vertices, as.integer(draws),
                   as.double(seed), js, uncertainty_unit)
  r$points <- as.data.frame(r$points)
  for (q in c("kl", "js")) r$points[[q]][is.nan(r$points[[q]])] <- NA_real_
  for (g in c("overall", "correct", "incorrect")) {
    if (!is.null(r[[g]]$e)) r[[g]]$e <- as.data.frame(r[[g]]$e)
  }
  r$input <- kind
  r$normalisation <- normalisation
  structure(r, class = "credence_credal")
}

#' @rdname credal_eval
#' @method print credence_credal
#' @export
print.credence_credal <- function(x, digits = 4, ...) {
  row <- function(group, g) {
    q <- c("ns", "kl", "js")
    out <- data.frame(group = group, n = g$n, quantity = sprintf("%s [%s]", q, unlist(x$units[q])),
                      mean = vapply(q, function(k) if (is.null(g[[k]])) NA_real_ else g[[k]]$mean, 0),
                      sd = vapply(q, function(k) if (is.null(g[[k]])) NA_real_ else g[[k]]$sd, 0))
    if (!is.null(g$e)) {
      out <- rbind(out, data.frame(group = group, n = g$n,
                                   quantity = sprintf("e(lambda=%g) [%s]", g$e$lambda, x$units$e),
                                   mean = g$e$mean, sd = g$e$sd))
    }
    out
  }
  tab <- row("all", x$overall)
  if (!is.null(x$correct)) tab <- rbind(tab, row("correct", x$correct), row("incorrect", x$incorrect))
  cat("Credal evaluation of", x$input, "input (", x$normalisation, "normalisation )\n")
  rownames(tab) <- NULL
  tab$mean <- signif(tab$mean, digits)
  tab$sd <- signif(tab$sd, digits)
  print(tab, row.names = FALSE)
  cat("koerner", signif(x$koerner$mean, digits), " pal", signif(x$pal$mean, digits),
      " credal uncertainty", signif(x$credal_uncertainty$mean, digits), x$units$credal_uncertainty)
  if (!is.null(x$accuracy)) cat("  accuracy", signif(x$accuracy, digits))
  cat("\n")
  invisible(x)
}

#' @title Rank models by credal score over a lambda grid
#'
#' @description Ranks models by mean \eqn{E = d + \lambda NS} at each lambda (lowest first; ties keep
#' the given order), computed by the Rust core.
#' @param ... Named \code{\link{credal_eval}} results computed with labels, or one named list of
#'   them.
#' @param lambda The lambda grid.
#' @return A data frame with columns \code{lambda}, \code{rank} (1 = best), \code{model} and
#'   \code{e} (mean E).
#' @examples
#' p <- matrix(c(0.8, 0.2, 0.3, 0.7), 2, byrow = TRUE)
#' s <- array(c(0.9, 0.6, 0.4, 0.2, 0.1, 0.4, 0.6, 0.8), dim = c(2, 2, 2))
#' credal_rank(point = credal_eval(probs = p, y = c(1, 2)),
#'             ensemble = credal_eval(samples = s, y = c(1, 2)), lambda = c(0, 1))
#' @export
credal_rank <- function(..., lambda = seq(0, 1, by = 0.1)) {
  models <- list(...)
  if (length(models) == 1L && is.list(models[[1]]) && !inherits(models[[1]], "credence_credal")) {
    models <- models[[1]]
  }
  if (is.null(names(models)) || any(names(models) == "")) stop("credal_rank: name every model")
  ok <- vapply(models, inherits, logical(1), "credence_credal")
  if (!all(ok)) stop("credal_rank: not a credal_eval() result: ", paste(names(models)[!ok], collapse = ", "))
  r <- glue_credal_rank(names(models), unname(lapply(models, `[[`, "report")), as.double(lambda))
  as.data.frame(r)
}

#' @title A focal-set budget by clustering training predictions
#'
#' @description Builds the focal-set budget of a random-set network when no budget file is given: the K
#' singletons, then the \code{size} sets of two or three classes whose training-prediction clusters
#' overlap most (one diagonal Gaussian per class fitted to the predicted probability vectors of its
#' training points; overlap by the Bhattacharyya coefficient; a triple scores its weakest pair).
#' This follows the random-set network's recipe (per-class clusters, sets ranked by overlap) on
#' the predictions instead of a t-SNE embedding. Computed by the Rust core
#' (\code{credence::credal::budget_by_clustering}); the same as
#' \code{credence credal --train-probs --train-labels}.
#' @param train_probs An N x K matrix of training predictions (class probabilities).
#' @param y Training classes 1..K (or a factor); every class needs at least two points.
#' @param size Number of non-singleton sets.
#' @return A list of integer vectors of classes 1..K, usable as \code{budget} in
#'   \code{\link{credal_eval}}.
#' @examples
#' p <- rbind(c(0.5, 0.4, 0.1), c(0.4, 0.5, 0.1), c(0.45, 0.45, 0.1), c(0.5, 0.45, 0.05),
#'            c(0.1, 0.1, 0.8), c(0.05, 0.15, 0.8))
#' credal_budget(p, c(1, 2, 1, 2, 3, 3), size = 1)
#' @export
credal_budget <- function(train_probs, y, size = 20L) {
  if (is.data.frame(train_probs)) train_probs <- as.matrix(train_probs)
  if (length(dim(train_probs)) != 2L) stop("credal_budget: train_probs must be an N x K matrix")
  glue_credal_budget(as.double(train_probs), as.integer(dim(train_probs)), as_class_index(y), as.integer(size))
}
