# The model across data sets (credence::compare::fit_across): R checks the arguments and
# converts the columns; the Rust core fits the model and returns its AcrossSummary (the JSON
# contract) as a nested list, from which print, summary and the accessors only read.

# `sigma` of the model across data sets: "per_cell" (one residual sd per data set and method),
# "per_method" (one per method, shared across data sets), or the formulas ~ dataset:method and
# ~ method; NULL (the core's default, per cell) when not given.
across_sigma <- function(sigma, sigma_given, group, dataset) {
  if (!sigma_given || is.null(sigma)) return(NULL)
  if (is.character(sigma) && length(sigma) == 1 && sigma %in% c("per_cell", "per_method")) return(sigma)
  if (inherits(sigma, "formula") && length(sigma) == 2) {
    rhs <- sigma[[2]]
    if (is.name(rhs) && as.character(rhs) %in% c(group, "method")) return("per_method")
    if (is.call(rhs) && identical(rhs[[1]], as.name(":")) && length(rhs) == 3 &&
        setequal(vapply(as.list(rhs)[-1], deparse1, ""), c(dataset, group))) {
      return("per_cell")
    }
  }
  stop("credence_fit: sigma of the model across data sets must be \"per_cell\" (or ~ ", dataset, ":", group,
       ") or \"per_method\" (or ~ ", group, ")", call. = FALSE)
}

fit_across_from_args <- function(args, f, data_name, sigma_given) {
  dataset <- args$dataset
  if (!is.null(dataset)) {
    if (!is.character(dataset) || length(dataset) != 1 || is.na(dataset) || !nzchar(dataset)) {
      stop("credence_fit: dataset must be the name of the data set column, e.g. dataset = \"dataset\"", call. = FALSE)
    }
    if (!is.null(f$dataset) && !identical(f$dataset, dataset)) {
      stop("credence_fit: dataset = \"", dataset, "\" but the formula's interaction is (1 | ", f$dataset, ":",
           f$group, ")", call. = FALSE)
    }
  } else {
    dataset <- f$dataset
  }
  # The columns the design has: no trials (the family is the core's to refuse).
  if (!is.null(f$trials)) {
    stop("credence_fit: the model across data sets is gaussian: its formula has no trials()", call. = FALSE)
  }
  sigma <- across_sigma(args$sigma, sigma_given, f$group, dataset)
  d <- model_rows(args$data, f$response, c(dataset, f$group, f$pair))
  seed <- fit_seed(args$seed)
  # The core's request (credence::request::FitRequest) as one named list; the core holds the
  # defaults and refuses what does not apply to this model (ChEES, a family, a prior, ...).
  request <- c(list(family = resolve_family(args$family), model = args$model, covariance_df = args$covariance_df,
                    cv_test_fraction = args$cv_test_fraction,
                    realization_effect = if (!is.null(f$pair)) TRUE,
                    across_scale = args$across_scale, across_sigma = sigma, interaction = args$interaction,
                    rope = args$rope),
               prior_request(prior_strings(args$prior)), sampler_request(args, seed))
  out <- core("credence_fit", glue_fit_across(request, as.character(d[[dataset]]), as.character(d[[f$group]]),
                                              if (is.null(f$pair)) NULL else as.character(d[[f$pair]]),
                                              as.double(d[[f$response]]), f$response, run_cores(args$cores),
                                              run_progress()))
  s <- out$summary
  args$seed <- seed
  p <- s$sampler
  structure(list(summary = s, sentences = out$sentences, formula = args$formula, terms = f, dataset = dataset, sigma = s$model$sigma,
                 across_scale = s$scale, interaction = s$model$interaction, data = d, data_name = data_name,
                 seed = p$seed, chains = p$chains, iter = p$warmup + p$draws, warmup = p$warmup,
                 sigma_given = sigma_given, args = args),
            class = "credence_across")
}

# ---- reading the summary (no statistics: every number is the core's) ------------------------

na_null <- function(v) if (is.null(v)) NA_real_ else v

# brms-style table of the parameters whose names match `pattern`, rows named by `label`.
across_table <- function(s, pattern, label = identity) {
  p <- s$parameters
  rows <- names(p)[grepl(pattern, names(p))]
  col <- function(k) vapply(rows, function(r) na_null(p[[r]][[k]]), 0)
  param_table(label(rows), col("mean"), col("sd"), col("q2.5"), col("q97.5"), col("rhat"), col("ess_bulk"),
              col("ess_tail"))
}

check_across <- function(fit, fn) {
  if (!inherits(fit, "credence_across")) stop(fn, ": fit must be a credence_across (a fit across data sets)", call. = FALSE)
}

check_dataset <- function(s, dataset, fn) {
  if (!is.character(dataset) || length(dataset) != 1 || !dataset %in% s$data$datasets) {
    stop(fn, ": dataset '", paste(dataset, collapse = ", "), "' is not one of ", paste(s$data$datasets, collapse = ", "),
         call. = FALSE)
  }
}

#' @title Methods compared across data sets
#'
#' @description \code{credence_fit(y ~ method + (1 | realization) + (1 | dataset:method), data)}, or the same
#' without the interaction term and with \code{dataset = "dataset"}, fits one hierarchical model for
#' methods x data sets (the Rust core's \code{credence::compare::fit_across}):
#' \deqn{y_{dmi} = \nu_d + \delta_m + u_{dm} + \gamma_{di} + \epsilon,}
#' \eqn{\delta_m \sim N(0, \tau_\delta)} (the method's effect on the population of data sets),
#' \eqn{u_{dm} \sim N(0, \tau_u)} or Student-t (the method-by-data-set interaction),
#' \eqn{\gamma_{di} \sim N(0, \sigma_{\gamma,d})} (realizations nested in their data set),
#' \eqn{\epsilon \sim N(0, \sigma_{dm})} or \eqn{N(0, \sigma_m)}. The result, of class
#' \code{"credence_across"}, holds the core's \code{AcrossSummary} (the JSON contract of
#' \code{credence fit --dataset-column}) as a nested list in \code{$summary}
#' (\code{\link{fit_summary}} returns it); print, summary and the accessors below only read from it.
#' @param fit,object,x A \code{credence_across} (\code{prob_better} also takes a
#'   \code{credence_fit}, without \code{dataset}: its \code{P(a better than b)}).
#' @param dataset \code{NULL} for a new data set (posterior predictive over data sets), or the
#'   name of a data set of the fit.
#' @param a,b Method names.
#' @param digits Decimal places of the estimates.
#' @param formula.,newdata,...,recompile As \code{\link{update.credence_fit}}; \code{...} may
#'   change any argument of \code{credence_fit}.
#' @return \code{prob_best}: a named vector, per method the probability that it is the best on a new
#'   data set (or on \code{dataset}); it sums to 1. For a \code{credence_fit} (one data set,
#'   no \code{dataset}): per method P(best) on that data set (see \code{\link{rank_posterior}}). \code{prob_better}: P(a better than b) on a new
#'   data set (or on \code{dataset}, where both ran). \code{variance_share}: \code{mean},
#'   \code{q2.5} and \code{q97.5} of the share of the methods' variation common to all data sets
#'   (delta against the interaction u). \code{fixef}: the delta table (Estimate, Est.Error, Q2.5,
#'   Q97.5). \code{summary}: an object of class \code{"summary.credence_across"}; its print shows
#'   the formula, data and draws lines, the group-level sds \code{tau_u} (~dataset:method) and
#'   \code{tau_delta} (~method), the population-level effects \code{delta}, P(best on a new data
#'   set), P(row better than column on a new data set), P(best on each data set), the method share
#'   of the variance, the ROPE decision when \code{rope} was given, and the core's warnings.
#'
#' @details Arguments of \code{\link{credence_fit}} particular to this model: \code{dataset} (the data set
#' column, when the formula has no \code{(1 | dataset:method)}), \code{across_scale}
#' (\code{"as_given"}: the values as they are, e.g. a \code{credence study} table already in each
#' data set's pool units; \code{"per_dataset"}: each data set centred and divided by its sd, so
#' effects are in data-set sds), \code{sigma} (\code{"per_cell"}, one residual sd per data set and
#' method, the default, or \code{~ dataset:method}; \code{"per_method"} or \code{~ method}),
#' \code{interaction} (\code{"normal"} or \code{"student_t"}, df estimated) and \code{rope} (the
#' half-width of a region of practical equivalence: each pair's baycomp-style decision on a new
#' data set). Of the priors (\code{\link{credence_prior}}) only \code{sigma} and \code{sigma_gamma}
#' apply to this model (the others are an error), and it is sampled by NUTS on the CPU. Realizations may also be written \code{(1 | dataset:realization)}: they are always nested in
#' their data set. Fewer than two data sets is an error (fit one data set with \code{credence_fit}
#' alone).
#' @seealso \code{\link{credence_fit}}, \code{\link{fit_summary}}
#' @examples
#' set.seed(1)
#' d <- expand.grid(realization = 1:6, method = c("A", "B"), dataset = c("energy", "yacht", "wine"))
#' d$crps <- 0.3 * as.integer(d$dataset) + 0.1 * (d$method == "B") + rnorm(nrow(d), sd = 0.03)
#' f <- credence_fit(crps ~ method + (1 | realization) + (1 | dataset:method), d, chains = 2, iter = 600,
#'                   seed = 1)
#' f
#' prob_best(f)
#' prob_better(f, "A", "B")
#' prob_better(f, "A", "B", dataset = "yacht")
#' @name credence_across
#' @export
prob_best <- function(fit, dataset = NULL) {
  if (inherits(fit, "credence_fit")) {
    if (!is.null(dataset)) stop("prob_best: a fit on one data set has no dataset argument", call. = FALSE)
    return(unlist(fit_summary(fit)$prob_best))
  }
  check_across(fit, "prob_best")
  s <- fit$summary
  if (is.null(dataset)) return(unlist(s$prob_best_new))
  check_dataset(s, dataset, "prob_best")
  unlist(s$prob_best_on[[dataset]])
}

#' @rdname credence_across
#' @export
prob_better <- function(fit, a, b, dataset = NULL) {
  if (inherits(fit, "credence_fit")) {
    if (!is.null(dataset)) stop("prob_better: a fit on one data set has no dataset argument", call. = FALSE)
    return(glue_prob_better_pair(fit_ptr(fit), a, b)[1])
  }
  check_across(fit, "prob_better")
  s <- fit$summary
  for (m in list(a, b)) {
    if (!is.character(m) || length(m) != 1 || !m %in% s$data$methods) {
      stop("prob_better: method '", paste(m, collapse = ", "), "' is not one of ",
           paste(s$data$methods, collapse = ", "), call. = FALSE)
    }
  }
  pair <- s$pairwise[[a]][[b]]
  if (is.null(pair)) {
    stop("prob_better: the pair (", a, ", ", b, ") was not compared (pairs = \"", s$pairs,
         "\": with many methods each is compared with its neighbours in the ranking and with the best)",
         call. = FALSE)
  }
  if (is.null(dataset)) return(pair$prob_better_new)
  check_dataset(s, dataset, "prob_better")
  p <- pair$prob_better_on[[dataset]]
  if (is.null(p)) stop("prob_better: ", a, " and ", b, " did not both run on data set '", dataset, "'", call. = FALSE)
  p
}

#' @rdname credence_across
#' @export
variance_share <- function(fit) {
  check_across(fit, "variance_share")
  unlist(lapply(fit$summary$variance_share, na_null))
}

# P(row better than column on a new data set) as a matrix (NA where a pair was not compared).
pairwise_matrix <- function(s) {
  m <- s$data$methods
  out <- matrix(NA_real_, length(m), length(m), dimnames = list(better = m, than = m))
  for (a in names(s$pairwise)) for (b in names(s$pairwise[[a]])) out[a, b] <- s$pairwise[[a]][[b]]$prob_better_new
  out
}

#' @rdname credence_across
#' @method summary credence_across
#' @export
summary.credence_across <- function(object, ...) {
  s <- object$summary
  sds <- across_table(s, "^(tau_delta|tau_u)$")
  best_on <- do.call(rbind, lapply(s$data$datasets, function(d) unlist(s$prob_best_on[[d]])[s$data$methods]))
  dimnames(best_on) <- list(s$data$datasets, s$data$methods)
  out <- list(formula = object$formula, data_name = object$data_name, terms = object$terms, dataset = object$dataset,
              summary = s, seed = object$seed, chains = object$chains, iter = object$iter, warmup = object$warmup,
              sigma = object$sigma,
              tau_u = sds["tau_u", , drop = FALSE], tau_delta = sds["tau_delta", , drop = FALSE],
              delta = across_table(s, "^delta\\["), df = across_table(s, "^df$"),
              nu = across_table(s, "^nu\\["), sigma_table = across_table(s, "^sigma(_gamma)?\\["),
              prob_best_new = prob_best(object), prob_best_on = best_on, prob_better_new = pairwise_matrix(s),
              variance_share = variance_share(object), sentences = object$sentences)
  class(out) <- "summary.credence_across"
  out
}

#' @rdname credence_across
#' @method print summary.credence_across
#' @export
print.summary.credence_across <- function(x, digits = 3, ...) {
  s <- x$summary
  d <- s$data
  cat(" Family: gaussian (across data sets)\n")
  cat("  Links: mu = identity; sigma = identity\n")
  sigma <- if (x$sigma == "per_cell") paste0(x$dataset, ":", x$terms$group) else x$terms$group
  counts <- paste0("; data sets: ", length(d$datasets), "; methods: ", length(d$methods), "; realizations: ",
                   d$realizations)
  print_header(x$formula, sigma, x$data_name, d$observations, counts, x$chains, x$iter, x$warmup)
  cat("  Scale:", if (identical(s$scale, "per_data_set")) "per data set (effects in data-set sds)" else "as given",
      if (isTRUE(s$higher_is_better)) "(higher is better)" else "(lower is better)", "\n")
  cat("\nMultilevel Hyperparameters:")
  print_param_table(paste0("~", x$dataset, ":", x$terms$group, " (method-by-data-set interaction u)"), x$tau_u,
                    digits, "sd(Intercept)")
  print_param_table(paste0("~", x$terms$group, " (method effects delta)"), x$tau_delta, digits, "sd(Intercept)")
  print_param_table("Population-Level Effects (delta: each method on the population of data sets)", x$delta, digits,
                    sub("^delta\\[(.*)\\]$", "\\1", rownames(x$delta)))
  print_param_table("Family Specific Parameters", x$df, digits)
  cat("\nP(best on a new data set):\n")
  print(round(x$prob_best_new, digits))
  cat("\nP(row better than column on a new data set):\n")
  print(round(x$prob_better_new, digits))
  cat("\nP(best on each data set):\n")
  print(round(x$prob_best_on, digits))
  v <- x$variance_share
  cat("\nMethod share of the methods' variation (delta vs u): ", round(v[["mean"]], digits), " [",
      round(v[["q2.5"]], digits), ", ", round(v[["q97.5"]], digits), "]\n", sep = "")
  if (!is.null(s$rope_eps)) {
    cat("\nROPE decision on a new data set (eps = ", s$rope_eps, "; baycomp's probabilities):\n", sep = "")
    rows <- list()
    for (a in names(s$pairwise)) for (b in names(s$pairwise[[a]])) {
      r <- s$pairwise[[a]][[b]]$rope
      if (!is.null(r)) rows[[paste(a, "-", b)]] <- unlist(r$most_probable)
    }
    if (length(rows)) {
      m <- do.call(rbind, rows)
      colnames(m) <- c("left", "rope", "right")
      print(round(m, digits))
    }
  }
  if (length(x$sentences)) cat("\nIn words:\n", paste0("  ", x$sentences, "\n"), sep = "")
  cat("\nDraws were sampled using NUTS (Rust core) on the scales; nu, delta, u and gamma were drawn from\n",
      "their exact conditional posterior. Rhat = 1 at convergence.\n", sep = "")
  print_warnings(s$warnings)
  invisible(x)
}

#' @rdname credence_across
#' @method print credence_across
#' @export
print.credence_across <- function(x, digits = 3, ...) print_via_summary(x, digits, ...)

#' @rdname credence_across
#' @method update credence_across
#' @export
update.credence_across <- function(object, formula., newdata = NULL, ..., recompile = NULL) {
  refit(object, if (missing(formula.)) NULL else formula., newdata, deparse1(substitute(newdata)), list(...))
}

#' @rdname credence_across
#' @method fixef credence_across
#' @export
fixef.credence_across <- function(object, ...) {
  t <- across_table(object$summary, "^delta\\[", function(r) sub("^delta\\[(.*)\\]$", "\\1", r))
  m <- as.matrix(t[, c("Estimate", "Est.Error", "l-95% CI", "u-95% CI")])
  colnames(m) <- c("Estimate", "Est.Error", "Q2.5", "Q97.5")
  m
}
