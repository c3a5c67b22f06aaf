# credence_fit and update: data checks and conversion; the model is fitted by the Rust core.

#' @title Fit the hierarchical comparison model (brms-style formula)
#'
#' @description Fits the Bayesian hierarchical model that compares methods from metric values across data
#' realizations. The formula is parsed in R; data are converted and the posterior is sampled by NUTS
#' (or batched ChEES-HMC, on the CPU or a GPU) in the Rust core of credence (no model compilation).
#' @param formula One of \code{y ~ method + (1 | realization)} (the published model: method means
#'   plus a realization intercept that pairs methods trained on the same data), \code{y ~ method}
#'   (no pairing), or for coverage counts \code{covered | trials(n) ~ method} (optionally
#'   \code{+ (1 | realization)}, an effect on the logit scale) with \code{family = beta_binomial()}.
#'   Column names are free. Adding \code{+ (1 | dataset:method)} (a method-by-data-set
#'   interaction) fits the model across data sets (see \code{\link{credence_across}}). Any other
#'   term is an error that names it.
#' @param data A data frame. Method and realization columns may be factor, character or integer;
#'   the response (and trials) numeric or integer. Rows with \code{NA} in a model column are
#'   dropped with a warning, as in brms.
#' @param family \code{gaussian()}, \code{beta_binomial()}, a family function, or the name
#'   \code{"gaussian"} / \code{"beta_binomial"}.
#' @param sigma Gaussian only: \code{~ method} (one residual sd per method, default) or \code{~ 1}
#'   (shared). Across data sets: \code{"per_cell"} (default) or \code{"per_method"} (see
#'   \code{\link{credence_across}}).
#' @param prior \code{NULL} (defaults) or the result of \code{\link{credence_prior}}.
#' @param chains Number of chains (NUTS; ChEES counts its chains in \code{control}).
#' @param iter Iterations per chain, warmup included; exact, as in brms (the chains are not made
#'   longer when the fit is not clean, as the CLI's default does). With \code{sampler = "chees"}
#'   the default is the core's ChEES default: 75 warmup + 100 draws per chain, run on in blocks of
#'   50 up to 200 draws while the fit is not clean (nested R-hat > 1.01 or bulk-ESS < 400); an
#'   \code{iter} given is exact.
#' @param warmup Warmup iterations per chain (discarded). The default, a quarter of \code{iter}
#'   (500 + 1500 of 2000): the sampler halves leapfrog steps where the energy varies too much
#'   (WALNUTS), which settles its adaptation early, and more kept draws raise the effective
#'   sample size.
#' @param seed Seed of the sampler; \code{NULL} draws one from R's RNG (so \code{set.seed()}
#'   makes the fit reproducible). The seed used is stored in \code{fit$seed}.
#' @param cores Accepted for brms compatibility. The core runs chains in parallel with rayon on
#'   all available cores; every chain has its own seeded stream, so results do not depend on it.
#' @param higher_is_better Whether higher metric values are better (coverage, accuracy); it sets
#'   the direction of \code{\link{prob_superior}}.
#' @param control As in brms: \code{adapt_delta} (target acceptance rate of step-size
#'   adaptation) and \code{max_treedepth} (NUTS). With \code{sampler = "chees"}:
#'   \code{adapt_delta}, \code{superchains} (default 10) and \code{chains_per_superchain}
#'   (default 4).
#' @param sampler \code{"nuts"} (the default: NUTS with WALNUTS' step halving, one fit at a time
#'   on the CPU) or \code{"chees"} (batched ChEES-HMC: superchains of chains in lockstep, with
#'   nested R-hat; \code{credence::backend::fit_many_chees_on}, as the CLI's
#'   \code{credence fit --sampler chees}). The fit works with every method of a NUTS fit;
#'   \code{fit$chees} holds nested R-hat, step size, trajectory length and the backend that
#'   ran.
#' @param backend \code{"auto"}, \code{"cpu"} or \code{"cuda"} (see
#'   \code{\link{credence_backend}}): where ChEES runs. \code{"auto"} uses the GPU when CUDA is
#'   usable and the ChEES kernel implements the model, else the
#'   CPU. NUTS runs on the CPU: \code{backend = "cuda"} with NUTS is an error.
#' @param dataset The data set column: fits the model across data sets, as
#'   \code{+ (1 | dataset:method)} in the formula does (\code{\link{credence_across}}).
#' @param across_scale,interaction,rope Options of the model across data sets (see
#'   \code{\link{credence_across}}); an error for a fit on one data set.
#' @return Across data sets, an object of class \code{"credence_across"} (see
#'   \code{\link{credence_across}}). Otherwise an object of class \code{"credence_fit"}: a list with
#'   the core's fit (external pointer),
#'   \code{sampler}, \code{backend} (where it ran), \code{chees} (ChEES only),
#'   \code{summary} (data frame), \code{info} (design, sampler settings, diagnostics, warnings),
#'   \code{seed}, \code{formula}, \code{family}, the data used and the arguments (for
#'   \code{\link[=update.credence_fit]{update}}).
#'
#' @details Gaussian model: \eqn{y_{mi} \sim N(\mu_m + \gamma_i, \sigma_m)}, \eqn{\gamma_i \sim N(0,
#' \sigma_\gamma)}, \eqn{\mu_m \sim N(\mu_0, \tau)}. Beta-binomial model:
#' \eqn{k_{mi} \sim BetaBinomial(n_{mi}, p_m \phi, (1 - p_m)\phi)}, \eqn{logit(p_m) \sim
#' N(\mu_0, \tau)}. See \code{\link{prior_summary}} for the priors.
#' @seealso \code{\link{summary.credence_fit}}, \code{\link{prob_superior}}, \code{\link{mdd}},
#'   \code{\link{plan_realizations}},
#'   \code{\link{as_draws_df}}, \code{\link{nuts_params}}, \code{\link{credence_prior}}
#' @examples
#' d <- data.frame(method = rep(c("A", "B"), 10), realization = rep(1:10, each = 2),
#'                 crps = c(0.30, 0.35) + rep(rnorm(10, sd = 0.02), each = 2) + rnorm(20, sd = 0.01))
#' f <- credence_fit(crps ~ method + (1 | realization), d, iter = 400, seed = 1)
#' f
#' prob_superior(f)
#' g <- credence_fit(crps ~ method + (1 | realization), d, sampler = "chees", seed = 1)
#' g$chees$max_nested_rhat
#' @export
credence_fit <- function(formula, data, family = stats::gaussian(), sigma = ~method, prior = NULL, chains = 4,
                         iter = 2000, warmup = floor(iter / 4), seed = NULL, cores = getOption("mc.cores", 1L),
                         higher_is_better = FALSE, control = list(adapt_delta = 0.8, max_treedepth = 10),
                         sampler = c("nuts", "chees"), backend = "auto", dataset = NULL,
                         across_scale = c("as_given", "per_dataset"), interaction = c("normal", "student_t"),
                         rope = NULL) {
  sampler <- match.arg(sampler)
  across_scale <- match.arg(across_scale)
  interaction <- match.arg(interaction)
  args <- list(formula = formula, data = data, family = family, sigma = sigma, prior = prior, chains = chains,
               iter = iter, warmup = warmup, seed = seed, cores = cores, higher_is_better = higher_is_better,
               control = control, sampler = sampler, backend = backend, dataset = dataset,
               across_scale = across_scale, interaction = interaction, rope = rope)
  # An unspecified warmup stays a quarter of iter when update() changes iter (500 warmup +
  # 1500 draws of 2000 iterations). As in brms, iter is exact: the chains are not made longer
  # when the fit is not clean (the CLI's and the Rust API's default do that). Unspecified
  # chains, iter and warmup take the sampler's defaults (ChEES: 10 superchains x 4 chains,
  # 75 warmup + 100 draws), also when update() changes the sampler.
  if (missing(warmup)) args["warmup"] <- list(NULL)
  if (missing(iter)) args["iter"] <- list(NULL)
  if (missing(chains)) args["chains"] <- list(NULL)
  fit_from_args(args, data_name = deparse1(substitute(data)), sigma_given = !missing(sigma))
}

check_count <- function(name, x, min) {
  if (!is.numeric(x) || length(x) != 1 || is.na(x) || x != round(x) || x < min) {
    stop("credence_fit: ", name, " must be a whole number >= ", min, call. = FALSE)
  }
  as.double(x)
}

# The data frame's rows the model uses: checks that the numeric and label columns exist and have
# usable types, and drops rows with an NA in one of them (with a warning, as brms).
model_rows <- function(data, numeric, labels) {
  if (!is.data.frame(data)) stop("credence_fit: data must be a data frame", call. = FALSE)
  cols <- c(numeric, labels)
  missing_cols <- setdiff(cols, names(data))
  if (length(missing_cols)) {
    stop("credence_fit: column(s) not in data: ", paste(missing_cols, collapse = ", "), call. = FALSE)
  }
  for (k in numeric) {
    if (!is.numeric(data[[k]])) {
      stop("credence_fit: column '", k, "' must be numeric or integer, not ", class(data[[k]])[1], call. = FALSE)
    }
  }
  for (k in labels) {
    if (!(is.factor(data[[k]]) || is.character(data[[k]]) || is.numeric(data[[k]]) || is.logical(data[[k]]))) {
      stop("credence_fit: column '", k, "' must be a factor or character, not ", class(data[[k]])[1], call. = FALSE)
    }
  }
  keep <- stats::complete.cases(data[, cols, drop = FALSE])
  if (any(!keep)) {
    warning(sum(!keep), " row(s) containing NAs were dropped (excluded from the model)", call. = FALSE)
  }
  data[keep, , drop = FALSE]
}

fit_from_args <- function(args, data_name, sigma_given = TRUE) {
  f <- parse_credence_formula(args$formula)
  if (!is.null(f$dataset) || !is.null(args$dataset)) return(fit_across_from_args(args, f, data_name, sigma_given))
  for (k in c("across_scale", "interaction")) {
    if (!is.null(args[[k]]) && !identical(args[[k]], formals(credence_fit)[[k]][[2]])) {
      stop("credence_fit: ", k, " applies to the model across data sets only (add + (1 | dataset:method) ",
           "or dataset = \"column\")", call. = FALSE)
    }
  }
  if (!is.null(args$rope)) {
    stop("credence_fit: rope applies to the model across data sets; for one data set use ",
         "fit_summary(fit, rope = ...)", call. = FALSE)
  }
  family <- resolve_family(args$family)
  if (family == "beta_binomial" && is.null(f$trials)) {
    stop("credence_fit: beta_binomial() needs the trials on the left-hand side, e.g. covered | trials(n_test) ~ method",
         call. = FALSE)
  }
  if (family == "gaussian" && !is.null(f$trials)) {
    stop("credence_fit: trials() needs family = beta_binomial()", call. = FALSE)
  }
  shared_sigma <- parse_sigma_formula(args$sigma, f$group)
  if (family == "beta_binomial" && sigma_given) {
    stop("credence_fit: sigma applies to the gaussian family only (beta_binomial has phi)", call. = FALSE)
  }
  d <- model_rows(args$data, c(f$response, f$trials), c(f$group, f$pair))
  sampler <- if (is.null(args$sampler)) "nuts" else args$sampler
  if (!is.character(sampler) || length(sampler) != 1L || !sampler %in% c("nuts", "chees")) {
    stop("credence_fit: sampler must be \"nuts\" or \"chees\"", call. = FALSE)
  }
  backend <- check_backend(if (is.null(args$backend)) "auto" else args$backend, "credence_fit")
  chees <- sampler == "chees"
  if (!chees && backend == "cuda") {
    stop("credence_fit: NUTS runs on the CPU only; backend = \"cuda\" needs sampler = \"chees\"", call. = FALSE)
  }
  if (chees && !is.null(args$chains)) {
    stop("credence_fit: sampler = \"chees\" counts chains as control = list(superchains, chains_per_superchain), ",
         "not chains", call. = FALSE)
  }
  chains <- check_count("chains", if (is.null(args$chains)) 4 else args$chains, 1)
  iter <- check_count("iter", if (!is.null(args$iter)) args$iter else if (chees) 175 else 2000, 1)
  warmup <- check_count("warmup", if (!is.null(args$warmup)) args$warmup else if (chees && is.null(args$iter)) 75
                        else floor(iter / 4), 0)
  if (iter <= warmup) stop("credence_fit: iter (", iter, ") must exceed warmup (", warmup, ")", call. = FALSE)
  seed <- args$seed
  if (is.null(seed)) seed <- sample.int(.Machine$integer.max, 1)
  seed <- check_count("seed", seed, 0)
  defaults <- if (chees) list(adapt_delta = 0.8, superchains = 10, chains_per_superchain = 4) else
    list(adapt_delta = 0.8, max_treedepth = 10)
  control <- utils::modifyList(defaults, as.list(args$control))
  # A NUTS control list (the default) passed on to ChEES keeps working: max_treedepth is NUTS's.
  if (chees) control$max_treedepth <- NULL
  unknown <- setdiff(names(control), names(defaults))
  if (length(unknown)) {
    stop("credence_fit: unsupported control entries for sampler = \"", sampler, "\": ",
         paste(unknown, collapse = ", "), "; expected ", paste(names(defaults), collapse = ", "), call. = FALSE)
  }
  priors <- prior_strings(args$prior)
  # The arguments of the core's fit, built here once (named as the glue functions' arguments).
  request <- list(group = as.character(d[[f$group]]), pair = if (is.null(f$pair)) NULL else as.character(d[[f$pair]]),
                  y = as.double(d[[f$response]]), trials = if (is.null(f$trials)) NULL else as.double(d[[f$trials]]),
                  family = family, shared_sigma = shared_sigma, realization_effect = !is.null(f$pair),
                  phi_per_method = FALSE, priors = unname(priors), warmup = warmup, draws = iter - warmup, seed = seed,
                  target_accept = as.double(control$adapt_delta), higher_is_better = isTRUE(args$higher_is_better))
  chees_info <- NULL
  if (chees) {
    r <- core("credence_fit", do.call(glue_fit_chees, c(request, list(
      superchains = check_count("superchains", control$superchains, 2),
      chains_per_superchain = check_count("chains_per_superchain", control$chains_per_superchain, 1),
      # The ChEES defaults (iter unspecified) run a fit that is not clean on, up to 200 draws per
      # chain, as the core's; an iter given is exact, as in brms.
      max_draws = if (is.null(args$iter)) 200 else iter - warmup, backend = backend))))
    ptr <- r$ptr
    chees_info <- r[setdiff(names(r), "ptr")]
  } else {
    ptr <- core("credence_fit", do.call(glue_fit, c(request, list(
      student_t = FALSE, standardize = FALSE, chains = chains, max_depth = as.double(control$max_treedepth)))))
  }
  args$seed <- seed
  structure(list(ptr = ptr, formula = args$formula, family = family, shared_sigma = shared_sigma,
                 terms = f, data = d, data_name = data_name, seed = seed, sigma_given = sigma_given, prior = priors, args = args,
                 sampler = sampler, backend = if (chees) chees_info$backend else "cpu", chees = chees_info,
                 summary = as.data.frame(glue_summary(ptr)), info = glue_info(ptr)),
            class = "credence_fit")
}

#' @title Refit with changed data or arguments
#'
#' @description Refits with the original arguments (the recorded seed included) except those
#' given, so \code{update(fit, newdata = d2)} equals \code{credence_fit(..., d2, seed = fit$seed)}.
#' There is nothing to recompile.
#' @param object A \code{credence_fit}.
#' @param formula. Changes to the formula, as in \code{stats::update.formula}.
#' @param newdata New data frame.
#' @param ... Other arguments of \code{\link{credence_fit}} to change.
#' @param recompile Ignored (brms compatibility).
#' @return A new \code{credence_fit}.
#' @method update credence_fit
#' @export
update.credence_fit <- function(object, formula., newdata = NULL, ..., recompile = NULL) {
  refit(object, if (missing(formula.)) NULL else formula., newdata, deparse1(substitute(newdata)), list(...))
}

# update() of both classes (credence_fit and credence_across): the recorded arguments, the seed
# included, with the formula updated by `formula` (NULL: kept), the data replaced by `newdata`
# (named `newdata_name`) and the other arguments by `changes`; then fitted as credence_fit does,
# so a change may also move a fit from one model to the other.
refit <- function(object, formula, newdata, newdata_name, changes) {
  args <- object$args
  data_name <- object$data_name
  if (!is.null(formula)) args$formula <- stats::update(args$formula, formula)
  if (!is.null(newdata)) {
    args$data <- newdata
    data_name <- newdata_name
  }
  bad <- setdiff(names(changes), names(args))
  if (length(bad)) stop("update: unknown argument(s) ", paste(bad, collapse = ", "), call. = FALSE)
  for (k in names(changes)) args[k] <- list(changes[[k]])
  fit_from_args(args, data_name, sigma_given = isTRUE(object$sigma_given) || "sigma" %in% names(changes))
}
