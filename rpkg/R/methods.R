# print/summary and the quantities of a fit (numbers from the core; R only arranges them).

# The brms-style table of the rows `rows` of the core's summary (a data frame). A ChEES fit
# (`chees` its record) shows the core's nested R-hat of each quantity, the R-hat the clean
# standard judges it by; split R-hat stays in `fit$summary$rhat`.
summary_table <- function(s, rows, chees = NULL) {
  s <- s[rows, , drop = FALSE]
  rhat <- if (is.null(chees)) s$rhat else chees$nested_rhat[match(s$name, chees$nested_rhat_name)]
  param_table(s$name, s$mean, s$sd, s$q2_5, s$q97_5, rhat, s$ess_bulk, s$ess_tail)
}

#' @title Summary of a credence fit, laid out like brms
#'
#' @description Family, links, formula, data and draws lines, then tables of hyperparameters,
#' method-level parameters (\code{mu[...]} or \code{p[...]}) and family-specific parameters
#' (\code{sigma}, \code{phi}) with Estimate, Est.Error, l-95\% CI, u-95\% CI, Rhat, Bulk_ESS and
#' Tail_ESS, the methods' P(best), expected rank and its 95\% interval
#' (\code{\link{rank_posterior}}), the fit in sentences (\code{\link{fit_sentences}}), then the core's warnings (divergences, R-hat > 1.01, bulk-ESS < 400, tree depth).
#' All numbers come from the Rust core (R-hat and ESS as in the posterior package).
#' @param object,x A \code{credence_fit} (or its summary).
#' @param digits Decimal places of the estimates (brms uses 2; metrics such as CRPS often differ
#'   in the third).
#' @param ... Ignored.
#' @return \code{summary}: an object of class \code{"summary.credence_fit"}; the print methods
#'   return their argument invisibly.
#' @method summary credence_fit
#' @export
summary.credence_fit <- function(object, ...) {
  s <- object$summary
  n <- s$name
  method <- grepl("^(mu|p)\\[", n)
  family_par <- grepl("^(sigma|phi)(\\[|$)", n) | n == "nu"
  hyper <- !method & !family_par
  out <- list(family = object$family, formula = object$formula, shared_sigma = object$shared_sigma,
              terms = object$terms, data_name = object$data_name, info = object$info,
              hyper = summary_table(s, hyper, object$chees), method = summary_table(s, method, object$chees),
              family_par = summary_table(s, family_par, object$chees), seed = object$seed,
              sampler = if (is.null(object$sampler)) "nuts" else object$sampler, chees = object$chees,
              ranks = rank_posterior(object), sentences = fit_sentences(object))
  class(out) <- "summary.credence_fit"
  out
}

#' @rdname summary.credence_fit
#' @method print summary.credence_fit
#' @export
print.summary.credence_fit <- function(x, digits = 3, ...) {
  i <- x$info
  bb <- x$family == "beta_binomial"
  cat(" Family:", x$family, "\n")
  cat("  Links:", if (bb) "mu = logit; phi = log" else "mu = identity; sigma = identity", "\n")
  sigma <- if (bb) NULL else if (x$shared_sigma) "1" else x$terms$group
  print_header(x$formula, sigma, x$data_name, i$n_obs, NULL, i$chains, i$warmup + i$draws, i$warmup)
  if (!is.null(i$form)) cat("   Form:", i$form, "\n")
  print_param_table(if (bb) "Hyperparameters (logit scale)" else "Hyperparameters", x$hyper, digits)
  print_param_table(if (bb) "Method coverage (p)" else "Method means (mu)", x$method, digits)
  print_param_table("Family Specific Parameters", x$family_par, digits)
  r <- x$ranks
  if (!is.null(r)) {
    cat("\nRanks (1 = best, per posterior draw):\n")
    shown <- data.frame(`P(best)` = round(r$prob_best, 3), `E[rank]` = round(r$expected_rank, 2),
                        `95% interval` = ifelse(is.na(r$rank_q2.5), "-", paste0(r$rank_q2.5, "-", r$rank_q97.5)),
                        check.names = FALSE, row.names = r$method)
    print(shown)
  }
  if (length(x$sentences)) {
    cat("\nIn words:\n")
    cat(paste0("  ", x$sentences, "\n"), sep = "")
  }
  if (identical(x$sampler, "none")) {
    cat("\nDraws are exact independent draws of the paired model's posterior (Rust core): no sampler\n",
        "ran, so there is nothing to tune or diverge. Bulk_ESS and Tail_ESS are effective sample\n",
        "size measures, and Rhat is the potential scale reduction factor on split chains.\n", sep = "")
  } else if (identical(x$sampler, "chees")) {
    ch <- x$chees
    cat("\nDraws were sampled using batched ChEES-HMC (Rust core) on the ", toupper(ch$backend), ": step size ",
        signif(ch$step_size, 3), ", trajectory length ", signif(ch$trajectory_length, 3), " (",
        round(ch$mean_leapfrog_steps, 1), " leapfrog steps per iteration), largest nested R-hat ",
        formatC(ch$max_nested_rhat, format = "f", digits = 3), ".\nFor each parameter, Bulk_ESS and Tail_ESS ",
        "are effective sample size measures, and Rhat is nested R-hat\nover the superchains (at convergence, ",
        "Rhat = 1; split R-hat is in fit$summary).\n", sep = "")
  } else {
    cat("\nDraws were sampled using NUTS (Rust core, nuts-rs). For each parameter, Bulk_ESS\n",
        "and Tail_ESS are effective sample size measures, and Rhat is the potential\n",
        "scale reduction factor on split chains (at convergence, Rhat = 1).\n", sep = "")
  }
  print_warnings(i$warnings)
  invisible(x)
}

#' @rdname summary.credence_fit
#' @method print credence_fit
#' @export
print.credence_fit <- function(x, digits = 3, ...) print_via_summary(x, digits, ...)

method_names <- function(fit) fit$info$groups

method_parameter <- function(fit) if (fit$family == "beta_binomial") "p" else "mu"

# ---- generics that brms / bayesplot / posterior / rstantools also define --------------------
# credence defines its own S3 generics so it works without those packages; their default
# methods hand other classes on to the owning package when it is installed, and .onLoad
# registers credence's methods on the owners' generics as well (see zzz.R).

delegate <- function(pkg, name, x, ...) {
  if (requireNamespace(pkg, quietly = TRUE)) {
    return(getExportedValue(pkg, name)(x, ...))
  }
  stop(name, "(): no method for an object of class ", class(x)[1], " (install ", pkg, ")", call. = FALSE)
}

#' @title Method means of a fit
#'
#' @description Posterior summaries of the per-method parameters (\code{mu[m]} for the Gaussian
#' model, \code{p[m]} for the beta-binomial), one row per method. \code{fixef} is an S3 generic
#' of credence so the package works without brms; its default method hands other objects to
#' \code{nlme::fixef} (the generic brms uses), and credence's method is also registered on that
#' generic when nlme loads.
#' @param object A \code{credence_fit}.
#' @param summary \code{TRUE}: a matrix with columns Estimate, Est.Error, Q2.5, Q97.5;
#'   \code{FALSE}: the draws (draws x methods).
#' @param ... Passed on by the default method.
#' @return A matrix with methods as row names (or columns, for \code{summary = FALSE}).
#' @export
fixef <- function(object, ...) UseMethod("fixef")

#' @rdname fixef
#' @method fixef credence_fit
#' @export
fixef.credence_fit <- function(object, summary = TRUE, ...) {
  rows <- paste0(method_parameter(object), "[", method_names(object), "]")
  if (!summary) {
    d <- as_draws_matrix_base(object)
    m <- d[, rows, drop = FALSE]
    colnames(m) <- method_names(object)
    return(m)
  }
  s <- object$summary[match(rows, object$summary$name), ]
  matrix(c(s$mean, s$sd, s$q2_5, s$q97_5), ncol = 4,
         dimnames = list(method_names(object), c("Estimate", "Est.Error", "Q2.5", "Q97.5")))
}

#' @rdname fixef
#' @method fixef default
#' @export
fixef.default <- function(object, ...) delegate("nlme", "fixef", object, ...)

#' @title Posterior probability that one method is better than another
#'
#' @description The matrix of P(row better than column | data): the share of draws with
#' \eqn{\mu_{row} < \mu_{col}} (lower is better) or \eqn{>} when higher is better (\eqn{p} for
#' the beta-binomial). The diagonal is \code{NA}.
#' @param fit A \code{credence_fit}.
#' @param higher_is_better \code{NULL} uses the fit's setting (\code{credence_fit(...,
#'   higher_is_better =)}, \code{FALSE} by default); \code{TRUE}/\code{FALSE} override it (the
#'   other direction is the transpose: P(a > b) is P(b < a)).
#' @param target A number: closer to it is better, P(\eqn{|\mu_{row} - t| < |\mu_{col} - t|}),
#'   e.g. 0.9 for the coverage of 90\% intervals (a proportion for the beta-binomial). Not
#'   together with \code{higher_is_better}.
#' @return A square matrix with dimnames \code{better} and \code{than}.
#' @export
prob_superior <- function(fit, higher_is_better = NULL, target = NULL) {
  if (!inherits(fit, "credence_fit")) stop("prob_superior: fit must be a credence_fit", call. = FALSE)
  g <- method_names(fit)
  if (!is.null(target)) {
    if (!is.null(higher_is_better)) {
      stop("prob_superior: give higher_is_better or target, not both", call. = FALSE)
    }
    if (!is.numeric(target) || length(target) != 1 || !is.finite(target)) {
      stop("prob_superior: target must be one finite number", call. = FALSE)
    }
    p <- glue_prob_better_target(fit_ptr(fit), as.double(target))
    return(matrix(p, nrow = length(g), byrow = TRUE, dimnames = list(better = g, than = g)))
  }
  m <- matrix(glue_prob_better(fit_ptr(fit)), nrow = length(g), byrow = TRUE, dimnames = list(better = g, than = g))
  # P(row > column) is P(column < row): the other direction is the transpose, exactly.
  if (!is.null(higher_is_better) &&
      !identical(flag_arg(higher_is_better, "prob_superior", "higher_is_better"), isTRUE(fit$args$higher_is_better))) {
    m <- t(m)
    names(dimnames(m)) <- c("better", "than")
  }
  m
}

#' @title Predictive minimum detectable difference
#'
#' @description \code{mdd} gives the difference between methods \code{a} and \code{b} that a new
#' experiment would detect with probability \code{power}:
#' \eqn{MDD = \Phi^{-1}(power)\,\sigma_{pred}} with
#' \eqn{\sigma_{pred}^2 = Var(\mu_a - \mu_b | y) + (E[\sigma_a^2 | y] + E[\sigma_b^2 | y]) / R_{new}},
#' and the probability that the observed gap is detected. \code{mdd_curve} gives it for one fit
#' per training size.
#' @param fit A \code{credence_fit}.
#' @param fits A list of \code{credence_fit} objects named by training size, e.g.
#'   \code{list(`100` = f100, `200` = f200)}.
#' @param a,b Method names.
#' @param power Detection probability to plan for.
#' @param R_new Realizations of the planned experiment; \code{NULL} means one new realization
#'   (\code{R_new = 1}, the definition of the MDD).
#' @param x A \code{credence_mdd}.
#' @param digits Significant digits.
#' @param ... Ignored.
#' @return \code{mdd}: a list of class \code{"credence_mdd"} with \code{mdd}, \code{sigma_pred},
#'   \code{gap} (posterior mean of \eqn{\mu_a - \mu_b}) and \code{detection_probability};
#'   \code{mdd_curve}: a data frame with columns \code{n}, \code{mdd}, \code{sigma_pred},
#'   \code{gap}, \code{detection_probability}.
#' @export
mdd <- function(fit, a, b, power = 0.8, R_new = NULL) {
  if (!inherits(fit, "credence_fit")) stop("mdd: fit must be a credence_fit", call. = FALSE)
  r <- if (is.null(R_new)) 1 else R_new
  m <- glue_mdd(fit_ptr(fit), a, b, power, r)
  structure(c(m, list(a = a, b = b, power = power, R_new = r)), class = "credence_mdd")
}

#' @rdname mdd
#' @export
mdd_curve <- function(fits, a, b, power = 0.8, R_new = NULL) {
  if (!is.list(fits) || !length(fits) || !all(vapply(fits, inherits, TRUE, "credence_fit"))) {
    stop("mdd_curve: fits must be a non-empty list of credence_fit objects", call. = FALSE)
  }
  n <- suppressWarnings(as.numeric(names(fits)))
  if (is.null(names(fits)) || anyNA(n)) {
    stop("mdd_curve: name the list by training size, e.g. list(`100` = fit100, `200` = fit200)", call. = FALSE)
  }
  c <- glue_mdd_curve(lapply(fits, fit_ptr), n, a, b, power, if (is.null(R_new)) 1 else R_new)
  as.data.frame(c)
}

#' @rdname mdd
#' @method print credence_mdd
#' @export
print.credence_mdd <- function(x, digits = 4, ...) {
  cat(sprintf("MDD(%s vs %s, power %g, R_new %g) = %s\n", x$a, x$b, x$power, x$R_new, signif(x$mdd, digits)))
  cat(sprintf("  posterior gap %s, sigma_pred %s, detection probability %s\n",
              signif(x$gap, digits), signif(x$sigma_pred, digits), signif(x$detection_probability, digits)))
  invisible(x)
}

#' @title NUTS sampler statistics per draw
#'
#' @description The sampler's per-draw statistics in bayesplot's long layout: \code{accept_stat__},
#' \code{stepsize__}, \code{treedepth__}, \code{n_leapfrog__}, \code{divergent__}, \code{energy__}
#' for every kept draw of every chain. A credence S3 generic (works without bayesplot); the
#' default method calls \code{bayesplot::nuts_params}, and credence's method is registered on
#' bayesplot's generic when bayesplot loads.
#' @param object A \code{credence_fit}.
#' @param pars Optional subset of the statistics' names.
#' @param ... Passed on by the default method.
#' @return A data frame with columns \code{Chain}, \code{Iteration}, \code{Parameter} (factor) and
#'   \code{Value}.
#' @export
nuts_params <- function(object, ...) UseMethod("nuts_params")

#' @rdname nuts_params
#' @method nuts_params credence_fit
#' @export
nuts_params.credence_fit <- function(object, pars = NULL, ...) {
  s <- glue_nuts_params(fit_ptr(object))
  stats_names <- c("accept_stat__", "stepsize__", "treedepth__", "n_leapfrog__", "divergent__", "energy__")
  if (!is.null(pars)) stats_names <- intersect(stats_names, pars)
  n <- length(s$chain)
  data.frame(Chain = rep(as.integer(s$chain), length(stats_names)),
             Iteration = rep(as.integer(s$iteration), length(stats_names)),
             Parameter = factor(rep(stats_names, each = n), levels = stats_names),
             Value = unlist(s[stats_names], use.names = FALSE))
}

#' @rdname nuts_params
#' @method nuts_params default
#' @export
nuts_params.default <- function(object, ...) delegate("bayesplot", "nuts_params", object, ...)

#' @title Priors used by a fit
#'
#' @description Every prior in use, defaults included, as resolved by the Rust core, and whether
#' it is the default or came from \code{\link{credence_prior}}. A credence S3 generic; the default
#' method calls \code{rstantools::prior_summary} (the generic brms uses).
#' @param object A \code{credence_fit}.
#' @param x The result of \code{prior_summary}.
#' @param ... Passed on by the default method.
#' @return A data frame with columns \code{prior}, \code{class} and \code{source}.
#' @export
prior_summary <- function(object, ...) UseMethod("prior_summary")

#' @rdname prior_summary
#' @method prior_summary credence_fit
#' @export
prior_summary.credence_fit <- function(object, ...) {
  p <- glue_priors(fit_ptr(object))
  user <- object$prior[p$class]
  given <- (!is.na(user) & nzchar(user)) | (p$class == "Sigma" & !is.null(object$args$covariance_df))
  out <- data.frame(prior = p$prior, class = p$class, source = ifelse(given, "user", "default"),
                    stringsAsFactors = FALSE)
  class(out) <- c("credence_prior_summary", "data.frame")
  out
}

#' @rdname prior_summary
#' @method prior_summary default
#' @export
prior_summary.default <- function(object, ...) delegate("rstantools", "prior_summary", object, ...)

#' @rdname prior_summary
#' @method print credence_prior_summary
#' @export
print.credence_prior_summary <- function(x, ...) {
  print.data.frame(x, row.names = FALSE, right = FALSE)
  invisible(x)
}

# All draws as a plain matrix (draws x quantities) with chain/iteration attributes.
as_draws_matrix_base <- function(fit) {
  d <- glue_draws(fit_ptr(fit))
  n <- d$chains * d$draws
  m <- matrix(d$values, nrow = n, dimnames = list(NULL, d$names))
  attr(m, "chain") <- rep(seq_len(d$chains), each = d$draws)
  attr(m, "iteration") <- rep(seq_len(d$draws), times = d$chains)
  m
}

#' @title Posterior draws of a fit
#'
#' @description All draws (realization effects \code{gamma[...]} included) with \code{.chain},
#' \code{.iteration} and \code{.draw}. \code{as_draws_df} returns a posterior \code{draws_df} and
#' needs the posterior package; \code{as.data.frame} gives the same columns as a plain data frame.
#' \code{as_draws_df} is a credence S3 generic whose default method calls
#' \code{posterior::as_draws_df}; credence's method is also registered on posterior's generic.
#' @param x A \code{credence_fit}.
#' @param ... Passed on by the default method.
#' @return A \code{draws_df} or a data frame with one row per draw.
#' @export
as_draws_df <- function(x, ...) UseMethod("as_draws_df")

#' @rdname as_draws_df
#' @method as_draws_df credence_fit
#' @export
as_draws_df.credence_fit <- function(x, ...) {
  if (!requireNamespace("posterior", quietly = TRUE)) {
    stop("as_draws_df() needs the posterior package (install.packages(\"posterior\")); ",
         "as.data.frame(fit) gives the draws without it", call. = FALSE)
  }
  posterior::as_draws_df(as.data.frame(x))
}

#' @rdname as_draws_df
#' @method as_draws_df default
#' @export
as_draws_df.default <- function(x, ...) delegate("posterior", "as_draws_df", x, ...)

#' @rdname as_draws_df
#' @method as.data.frame credence_fit
#' @export
as.data.frame.credence_fit <- function(x, ...) {
  m <- as_draws_matrix_base(x)
  chain <- attr(m, "chain")
  iteration <- attr(m, "iteration")
  attr(m, "chain") <- NULL
  attr(m, "iteration") <- NULL
  df <- as.data.frame(m, check.names = FALSE)
  df[[".chain"]] <- chain
  df[[".iteration"]] <- iteration
  df[[".draw"]] <- seq_len(nrow(df))
  df
}


#' @title The posterior of the methods' ranks
#'
#' @description Per posterior draw the Rust core ranks the methods by their compared quantity
#' (\code{mu}, or \code{p} for the beta-binomial): rank 1 is the best in the fit's direction
#' (lowest, highest with \code{higher_is_better}, closest to \code{target}), as
#' \code{\link{prob_superior}} reads it; ties within a draw go to the method listed first. The
#' counts give P(best), P(rank = k), the expected rank and its 95\% interval, each with its Monte
#' Carlo standard error. For a \code{credence_across} the ranks are those on a new data set from
#' the same population (the core draws new data sets' interactions from each posterior draw), so
#' \code{prob_best} equals \code{\link{prob_best}(fit)}.
#' @param fit A \code{credence_fit} or a \code{credence_across}.
#' @return A data frame, one row per method in the fit's ranking (best first by posterior mean):
#'   \code{method}, \code{prob_best}, \code{prob_best_mcse}, \code{expected_rank},
#'   \code{expected_rank_mcse}, \code{rank_q2.5}, \code{rank_q97.5}, then \code{rank_1} ...
#'   \code{rank_M} (P(rank = k)). Beyond 20 methods only P(best) is computed (the other columns
#'   are \code{NA}).
#' @examples
#' study <- read.csv(system.file("extdata", "study.csv", package = "credence"))
#' d <- study[study$n == 100 & study$train_rep == 0, ]
#' f <- credence_fit(crps ~ method + (1 | realization), d, iter = 600, seed = 1, chains = 2)
#' rank_posterior(f)
#' @export
rank_posterior <- function(fit) {
  across <- inherits(fit, "credence_across")
  if (!across && !inherits(fit, "credence_fit")) {
    stop("rank_posterior: fit must be a credence_fit or credence_across", call. = FALSE)
  }
  s <- fit_summary(fit)
  # An across fit's ranks are on a new data set: the same keys with the suffix _new.
  key <- function(k) s[[if (across) paste0(k, "_new") else k]]
  m <- unlist(s$ranking)
  pick <- function(x, f) vapply(m, function(k) if (is.null(x[[k]])) NA_real_ else as.numeric(f(x[[k]])), 0)
  er <- key("expected_rank")
  out <- data.frame(method = m, prob_best = pick(key("prob_best"), identity),
                    prob_best_mcse = pick(key("prob_best_mcse"), identity),
                    expected_rank = pick(er, function(e) e$mean),
                    expected_rank_mcse = pick(er, function(e) e$mcse),
                    rank_q2.5 = pick(er, function(e) e[["q2.5"]]),
                    rank_q97.5 = pick(er, function(e) e[["q97.5"]]),
                    stringsAsFactors = FALSE, check.names = FALSE, row.names = NULL)
  for (k in seq_along(m)) {
    out[[paste0("rank_", k)]] <- pick(key("rank_probs"), function(p) p[k])
  }
  out
}

#' @title Every answer of a fit in one list
#'
#' @description The fit's summary as the core makes it once for every face: the same keys, in
#' the same nesting, as \code{credence fit --json} writes and \code{credence report} embeds
#' for each fit (the core's \code{FitSummary}). JSON objects are named lists, arrays of numbers
#' or strings are vectors, and \code{null} (a number that is not finite, such as an undefined
#' R-hat, or an option not asked for) is \code{NULL}.
#' @param fit A \code{credence_fit}, or a \code{credence_across}: its \code{AcrossSummary}
#'   (\code{credence fit --dataset-column --json}), made when it was fitted (the other arguments
#'   are then ignored; its ROPE is the \code{rope} given to \code{credence_fit}).
#' @param power Power of the minimum detectable differences.
#' @param R_new New realizations the MDD plans for.
#' @param rope Half-width of a region of practical equivalence, or \code{NULL} for none.
#' @param pairs Which pairs of methods are compared: \code{"all"} (every ordered pair),
#'   \code{"ranked"} (each method against the next in the ranking by posterior mean, and the
#'   best against every other) or \code{"auto"} (all up to 20 methods, ranked beyond).
#' @return A named list: \code{model}, \code{form}, \code{data} (\code{observations},
#'   \code{methods}, \code{realizations}), \code{units}, \code{higher_is_better}, \code{target},
#'   \code{parameters} (per name: \code{mean}, \code{sd}, \code{q2.5}, \code{q50}, \code{q97.5},
#'   \code{rhat}, \code{ess_bulk}, \code{ess_tail}), \code{ranking} (the methods best first),
#'   \code{prob_best}, \code{prob_best_mcse}, \code{rank_probs}, \code{rank_probs_mcse} and
#'   \code{expected_rank} (see \code{\link{rank_posterior}}), \code{classic_cd} (the
#'   frequentist Friedman/Nemenyi cross-check: \code{average_ranks}, \code{critical_difference},
#'   \code{friedman_p}, ...; \code{NULL} without realizations), \code{cd} (the groups of
#'   \code{\link{cd_diagram}}: \code{level}, \code{bayesian}, \code{classic}),
#'   \code{pairs} (\code{"all"} or \code{"ranked"}), \code{prob_better} and
#'   \code{prob_better_mcse} (\code{[[a]][[b]]}: P(a better than b) and its Monte Carlo error),
#'   \code{power}, \code{r_new}, \code{mdd} (\code{[[a]][[b]]}: \code{mdd}, \code{sigma_pred},
#'   \code{gap}, \code{detection_probability}), \code{rope_eps}, \code{rope},
#'   \code{diagnostics}, \code{sampler}, \code{warnings}, \code{seconds}.
#' @examples
#' study <- read.csv(system.file("extdata", "study.csv", package = "credence"))
#' d <- study[study$n == 100 & study$train_rep == 0, ]
#' f <- credence_fit(crps ~ method + (1 | realization), d, iter = 600, seed = 1, chains = 2)
#' s <- fit_summary(f, rope = 0.01)
#' s$prob_better$mcd$map
#' s$mdd$mcd$map$mdd
#' @export
fit_summary <- function(fit, power = 0.8, R_new = 1, rope = NULL, pairs = c("auto", "all", "ranked")) {
  if (inherits(fit, "credence_across")) return(fit$summary)
  if (!inherits(fit, "credence_fit")) stop("fit_summary: fit must be a credence_fit or credence_across", call. = FALSE)
  pairs <- match.arg(pairs)
  glue_fit_summary(fit_ptr(fit), as.double(power), as.double(R_new), if (is.null(rope)) NULL else as.double(rope), pairs)
}
