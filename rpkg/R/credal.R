# Credal-set evaluation (E = d + lambda * NS) of point, sample, interval, belief and Dirichlet
# predictions. The R side converts types only (arrays to values plus dimensions, 1-based
# classes to 0-based); every number comes from credence::credal.

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

#' @export
credal_budget <- function(train_probs, y, size = 20L) {
  if (is.data.frame(train_probs)) train_probs <- as.matrix(train_probs)
  if (length(dim(train_probs)) != 2L) stop("credal_budget: train_probs must be an N x K matrix")
  glue_credal_budget(as.double(train_probs), as.integer(dim(train_probs)), as_class_index(y), as.integer(size))
}
