# print/summary and the quantities of a fit (numbers from the core; R only arranges them).

# The brms-style table of the rows `rows` of the core's summary (a data frame).
summary_table <- function(s, rows) {
  s <- s[rows, , drop = FALSE]
  param_table(s$name, s$mean, s$sd, s$q2_5, s$q97_5, s$rhat, s$ess_bulk, s$ess_tail)
}

#' @export
summary.credence_fit <- function(object, ...) {
  s <- object$summary
  n <- s$name
  method <- grepl("^(mu|p)\\[", n)
  family_par <- grepl("^(sigma|phi)(\\[|$)", n) | n == "nu"
  hyper <- !method & !family_par
  out <- list(family = object$family, formula = object$formula, shared_sigma = object$shared_sigma,
              terms = object$terms, data_name = object$data_name, info = object$info,
              hyper = summary_table(s, hyper), method = summary_table(s, method),
              family_par = summary_table(s, family_par), seed = object$seed,
              sampler = if (is.null(object$sampler)) "nuts" else object$sampler, chees = object$chees)
  class(out) <- "summary.credence_fit"
  out
}

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
  if (identical(x$sampler, "chees")) {
    ch <- x$chees
    cat("\nDraws were sampled using batched ChEES-HMC (Rust core) on the ", toupper(ch$backend), ": step size ",
        signif(ch$step_size, 3), ", trajectory length ", signif(ch$trajectory_length, 3), " (",
        round(ch$mean_leapfrog_steps, 1), " leapfrog steps per iteration), largest nested R-hat ",
        formatC(ch$max_nested_rhat, format = "f", digits = 3), ".\nFor each parameter, Bulk_ESS and Tail_ESS ",
        "are effective sample size measures, and Rhat is the potential\nscale reduction factor on split chains ",
        "(at convergence, Rhat = 1).\n", sep = "")
  } else {
    cat("\nDraws were sampled using NUTS (Rust core, nuts-rs). For each parameter, Bulk_ESS\n",
        "and Tail_ESS are effective sample size measures, and Rhat is the potential\n",
        "scale reduction factor on split chains (at convergence, Rhat = 1).\n", sep = "")
  }
  print_warnings(i$warnings)
  invisible(x)
}

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

#' @export
fixef <- function(object, ...) UseMethod("fixef")
#' @export
fixef.default <- function(object, ...) delegate("nlme", "fixef", object, ...)

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
    p <- glue_prob_better_target(fit$ptr, as.double(target))
    return(matrix(p, nrow = length(g), byrow = TRUE, dimnames = list(better = g, than = g)))
  }
  m <- matrix(glue_prob_better(fit$ptr), nrow = length(g), byrow = TRUE, dimnames = list(better = g, than = g))
  # P(row > column) is P(column < row): the other direction is the transpose, exactly.
  if (!is.null(higher_is_better) && !identical(isTRUE(higher_is_better), isTRUE(fit$args$higher_is_better))) {
    m <- t(m)
    names(dimnames(m)) <- c("better", "than")
  }
  m
}

#' @export
mdd <- function(fit, a, b, power = 0.8, R_new = NULL) {
  if (!inherits(fit, "credence_fit")) stop("mdd: fit must be a credence_fit", call. = FALSE)
  r <- if (is.null(R_new)) 1 else R_new
  m <- glue_mdd(fit$ptr, a, b, power, r)
  structure(c(m, list(a = a, b = b, power = power, R_new = r)), class = "credence_mdd")
}

#' @export
print.credence_mdd <- function(x, digits = 4, ...) {
  cat(sprintf("MDD(%s vs %s, power %g, R_new %g) = %s\n", x$a, x$b, x$power, x$R_new, signif(x$mdd, digits)))
  cat(sprintf("  posterior gap %s, sigma_pred %s, detection probability %s\n",
              signif(x$gap, digits), signif(x$sigma_pred, digits), signif(x$detection_probability, digits)))
  invisible(x)
}

#' @export
mdd_curve <- function(fits, a, b, power = 0.8, R_new = NULL) {
  if (!is.list(fits) || !length(fits) || !all(vapply(fits, inherits, TRUE, "credence_fit"))) {
    stop("mdd_curve: fits must be a non-empty list of credence_fit objects", call. = FALSE)
  }
  n <- suppressWarnings(as.numeric(names(fits)))
  if (is.null(names(fits)) || anyNA(n)) {
    stop("mdd_curve: name the list by training size, e.g. list(`100` = fit100, `200` = fit200)", call. = FALSE)
  }
  c <- glue_mdd_curve(lapply(fits, `[[`, "ptr"), n, a, b, power, if (is.null(R_new)) 1 else R_new)
  as.data.frame(c)
}

#' @export
nuts_params <- function(object, ...) UseMethod("nuts_params")
#' @export
nuts_params.default <- function(object, ...) delegate("bayesplot", "nuts_params", object, ...)

#' @export
nuts_params.credence_fit <- function(object, pars = NULL, ...) {
  s <- glue_nuts_params(object$ptr)
  stats_names <- c("accept_stat__", "stepsize__", "treedepth__", "n_leapfrog__", "divergent__", "energy__")
  if (!is.null(pars)) stats_names <- intersect(stats_names, pars)
  n <- length(s$chain)
  data.frame(Chain = rep(as.integer(s$chain), length(stats_names)),
             Iteration = rep(as.integer(s$iteration), length(stats_names)),
             Parameter = factor(rep(stats_names, each = n), levels = stats_names),
             Value = unlist(s[stats_names], use.names = FALSE))
}

#' @export
prior_summary <- function(object, ...) UseMethod("prior_summary")
#' @export
prior_summary.default <- function(object, ...) delegate("rstantools", "prior_summary", object, ...)

#' @export
prior_summary.credence_fit <- function(object, ...) {
  p <- glue_priors(object$ptr)
  user <- object$prior[p$class]
  out <- data.frame(prior = p$prior, class = p$class,
                    source = ifelse(!is.na(user) & nzchar(user), "user", "default"), stringsAsFactors = FALSE)
  class(out) <- c("credence_prior_summary", "data.frame")
  out
}

#' @export
print.credence_prior_summary <- function(x, ...) {
  print.data.frame(x, row.names = FALSE, right = FALSE)
  invisible(x)
}

# All draws as a plain matrix (draws x quantities) with chain/iteration attributes.
as_draws_matrix_base <- function(fit) {
  d <- glue_draws(fit$ptr)
  n <- d$chains * d$draws
  m <- matrix(d$values, nrow = n, dimnames = list(NULL, d$names))
  attr(m, "chain") <- rep(seq_len(d$chains), each = d$draws)
  attr(m, "iteration") <- rep(seq_len(d$draws), times = d$chains)
  m
}

#' @export
as_draws_df <- function(x, ...) UseMethod("as_draws_df")
#' @export
as_draws_df.default <- function(x, ...) delegate("posterior", "as_draws_df", x, ...)

#' @export
as_draws_df.credence_fit <- function(x, ...) {
  if (!requireNamespace("posterior", quietly = TRUE)) {
    stop("as_draws_df() needs the posterior package (install.packages(\"posterior\")); ",
         "as.data.frame(fit) gives the draws without it", call. = FALSE)
  }
  posterior::as_draws_df(as.data.frame(x))
}

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

#' @export
fit_summary <- function(fit, power = 0.8, R_new = 1, rope = NULL, pairs = c("auto", "all", "ranked")) {
  if (inherits(fit, "credence_across")) return(fit$summary)
  if (!inherits(fit, "credence_fit")) stop("fit_summary: fit must be a credence_fit or credence_across", call. = FALSE)
  pairs <- match.arg(pairs)
  glue_fit_summary(fit$ptr, as.double(power), as.double(R_new), if (is.null(rope)) NULL else as.double(rope), pairs)
}
