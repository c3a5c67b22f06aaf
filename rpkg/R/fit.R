# credence_fit and update: data checks and conversion; the model is fitted by the Rust core.

#' @title Fit the hierarchical comparison model (brms-style formula)
#'
#' @description Fits the Bayesian model that compares methods from metric values across data
#' realizations. The formula is parsed in R; data are converted and the posterior is drawn in the
#' Rust core of credence (no model compilation): exactly for the paired model (the default where
#' every method ran on the same realizations), by NUTS (or batched ChEES-HMC, on the CPU or a GPU)
#' for the additive and beta-binomial models.
#' The arguments become one request of the core (\code{credence::request::FitRequest}, as the CLI's
#' flags do): the core holds the defaults, and an option that does not apply to the model or the
#' sampler is an error that names it.
#' @param formula One of \code{y ~ method + (1 | realization)} (the published model: method means
#'   plus a realization intercept that pairs methods trained on the same data), \code{y ~ method}
#'   (no pairing), or for coverage counts \code{covered | trials(n) ~ method} (optionally
#'   \code{+ (1 | realization)}, an effect on the logit scale) with \code{family = beta_binomial()}.
#'   \code{y ~ method + (1 | realization/train_rep)} names repeated trainings within a realization
#'   (\code{credence study --train-seeds}): each cell's trainings are averaged, the model is fitted to
#'   the means, and \code{fit_summary(fit)$repeats} gives each method's training sd and its share of
#'   the realization means' variance (the CLI's \code{--repeat}).
#'   \code{crps ~ method + (1 | realization) + (1 | item)} fits per-item scores (one row per
#'   method, realization and test item): the per-item model measures each realization's test-set
#'   noise from its items and keeps a training term per method; the items are one fixed test set
#'   (the same labels in every realization) or a split per realization (no label in two), read
#'   from the labels (the CLI's \code{--item}).
#'   Column names are free. Adding \code{+ (1 | dataset:method)} (a method-by-data-set
#'   interaction) fits the model across data sets (see \code{\link{credence_across}}). Any other
#'   term is an error that names it.
#' @param data A data frame. Method and realization columns may be factor, character or integer;
#'   the response (and trials) numeric or integer. Rows with \code{NA} in a model column are
#'   dropped with a warning, as in brms.
#' @param family \code{gaussian()}, \code{beta_binomial()}, a family function, or the name
#'   \code{"gaussian"} / \code{"beta_binomial"}.
#' @param model Gaussian family on one data set: \code{NULL} (the core's default: the paired
#'   model where the formula pairs methods by realization, every method ran on at least two
#'   realizations and no option of the additive model is given, else the additive one, with the
#'   reason in \code{fit$info$form}), \code{"paired"} (an error where the design does not suit it,
#'   or with an option only the additive model has) or \code{"additive"}.
#' @param covariance_df Paired model: the prior degrees of freedom of the methods' covariance
#'   (pseudo-realizations borrowed from its one-factor fit); \code{NULL} keeps the core's default
#'   (0.1, which makes each pair's answer the paired-difference posterior's).
#' @param cv_test_fraction Paired model: the realizations are the folds of one data set's
#'   cross-validation (or repeated random splits) with this test fraction, e.g. 0.1 for 10-fold.
#'   The folds share training data, so the model carries their correlation (Nadeau and Bengio:
#'   a mean over \eqn{R} folds has variance \eqn{\Sigma (1/R + F/(1 - F))}); for two methods it
#'   is baycomp's correlated t-test. \code{NULL}: independent realizations. The other models refuse it.
#' @param sigma Gaussian only: \code{~ method} (one residual sd per method, default) or \code{~ 1}
#'   (shared). Across data sets: \code{"per_cell"} (default) or \code{"per_method"} (see
#'   \code{\link{credence_across}}).
#' @param prior \code{NULL} (defaults) or the result of \code{\link{credence_prior}}.
#' @param chains Number of chains (NUTS; ChEES counts its chains in \code{control}).
#' @param iter Iterations per chain, warmup included; exact, as in brms (the chains are not made
#'   longer when the fit is not clean, as the CLI's default does). With \code{sampler = "chees"}
#'   the default is the core's ChEES default: 75 warmup + 100 draws per chain, run on in blocks of
#'   50 up to 200 draws while the fit is not clean (nested R-hat > 1.01 or bulk-ESS < 400), so
#'   a \code{warmup} given without \code{iter} leaves 175 - \code{warmup} draws; an
#'   \code{iter} given is exact.
#' @param warmup Warmup iterations per chain (discarded). The default, a quarter of \code{iter}
#'   (500 + 1500 of 2000): the sampler halves leapfrog steps where the energy varies too much
#'   (WALNUTS), which settles its adaptation early, and more kept draws raise the effective
#'   sample size.
#' @param seed Seed of the sampler; \code{NULL} draws one from R's RNG (so \code{set.seed()}
#'   makes the fit reproducible). The seed used is stored in \code{fit$seed}.
#' @param cores Threads the fit runs on (its chains in parallel): \code{NULL}, the default, uses
#'   all available cores (brms' default, \code{getOption("mc.cores", 1)}, would run the chains
#'   one after another and make fits slower). Every chain has its own seeded stream, so the draws
#'   do not depend on \code{cores}.
#' @param higher_is_better Whether higher metric values are better (coverage, accuracy); it sets
#'   the direction of \code{\link{prob_superior}}.
#' @param control As in brms: \code{adapt_delta} (target acceptance rate of step-size
#'   adaptation) and \code{max_treedepth} (NUTS). With \code{sampler = "chees"}:
#'   \code{adapt_delta}, \code{superchains} (default 10) and \code{chains_per_superchain}
#'   (default 4). Entries not given take the core's defaults (\code{adapt_delta} 0.8,
#'   \code{max_treedepth} 10); one given that does not apply to the sampler is an error.
#' @param sampler Additive and beta-binomial models: \code{"nuts"} (the default: NUTS with WALNUTS' step halving, one fit at a time
#'   on the CPU) or \code{"chees"} (batched ChEES-HMC: superchains of chains in lockstep, with
#'   nested R-hat; \code{credence::request::FitRequest::fit}, as the CLI's
#'   \code{credence fit --sampler chees}; a fit whose superchains still disagree is an error).
#'   The fit works with every method of a NUTS fit;
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
#'   \code{\link[=update.credence_fit]{update}}). A fit survives \code{saveRDS}/\code{readRDS} and
#'   the trip to a \code{parallel} worker: R does not save what the external pointer points to, so
#'   on its first use in the new session the core fit is made again from the recorded data,
#'   arguments, seed and backend, which give the same draws (it takes the fit's time once).
#'
#' @details Paired model: the methods' values on realization \eqn{i} are one draw
#' \eqn{y_i \sim N(\mu, \Sigma)}, flat prior on \eqn{\mu}, \eqn{\Sigma \sim IW(M - 1 + k, k \Sigma_0)}
#' with \eqn{\Sigma_0} the one-factor fit of the sample covariance and \eqn{k} =
#' \code{covariance_df}; its posterior is drawn exactly (no sampler, no warmup, no divergences),
#' from the realizations where every method ran. With \code{cv_test_fraction} \eqn{F} the folds share an
#' offset \eqn{u \sim N(0, \Sigma F/(1 - F))}, so \eqn{\mu | \Sigma, y \sim N(\bar y, \Sigma (1/R + F/(1 - F)))}. Additive model: \eqn{y_{mi} \sim N(\mu_m + \gamma_i,
#' \sigma_m)}, \eqn{\gamma_i \sim N(0, \sigma_\gamma)}, \eqn{\mu_m \sim N(\mu_0, \tau)}. Beta-binomial model:
#' \eqn{k_{mi} \sim BetaBinomial(n_{mi}, p_m \phi, (1 - p_m)\phi)}, \eqn{logit(p_m) \sim
#' N(\mu_0, \tau)}. See \code{\link{prior_summary}} for the priors.
#'
#' Progress and interrupts: a NUTS fit that runs longer than a second shows its progress on
#' stderr as brms does, one line per tenth (\code{Sampling: 30\% (2400/8000 iterations)});
#' \code{options(credence.progress = TRUE)} shows it from the start and \code{FALSE} never.
#' Ctrl-C (Esc in RStudio) stops a fit within a fraction of a second and returns to the prompt:
#' the fit signals R's \code{interrupt} condition (so \code{tryCatch(interrupt = )} sees it), then
#' is an error \code{"credence_fit: interrupted"}.
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
credence_fit <- function(formula, data, family = stats::gaussian(), model = NULL, covariance_df = NULL,
                         cv_test_fraction = NULL, sigma = ~method, prior = NULL, chains = 4,
                         iter = 2000, warmup = floor(iter / 4), seed = NULL, cores = NULL,
                         higher_is_better = FALSE, control = list(adapt_delta = 0.8, max_treedepth = 10),
                         sampler = c("nuts", "chees"), backend = "auto", dataset = NULL,
                         across_scale = c("as_given", "per_dataset"), interaction = c("normal", "student_t"),
                         rope = NULL) {
  # Options not given are left to the core's request (NULL), which holds the defaults: brms'
  # lengths (iter 2000 with a quarter warmup, exact) for NUTS, ChEES's 75 warmup + 100 draws run
  # on while the fit is not clean, also when update() changes iter or the sampler.
  unset <- c(chains = missing(chains), iter = missing(iter), warmup = missing(warmup), control = missing(control),
             sampler = missing(sampler), across_scale = missing(across_scale), interaction = missing(interaction))
  sampler <- match.arg(sampler)
  across_scale <- match.arg(across_scale)
  interaction <- match.arg(interaction)
  args <- list(formula = formula, data = data, family = family, model = model, covariance_df = covariance_df,
               cv_test_fraction = cv_test_fraction, sigma = sigma, prior = prior, chains = chains,
               iter = iter, warmup = warmup, seed = seed, cores = cores, higher_is_better = higher_is_better,
               control = control, sampler = sampler, backend = backend, dataset = dataset,
               across_scale = across_scale, interaction = interaction, rope = rope)
  args[names(unset)[unset]] <- list(NULL)
  fit_from_args(args, data_name = deparse1(substitute(data)), sigma_given = !missing(sigma))
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

# brms' control entries and the request's fields they set.
control_fields <- c(adapt_delta = "target_accept", max_treedepth = "max_depth", superchains = "superchains",
                    chains_per_superchain = "chains_per_superchain")

# The fields of the core's request (credence::request::FitRequest) that both models share: the
# sampler, its lengths and settings, the seed and the direction, with brms' conventions. A NULL
# leaves a field to the core's defaults; an option that does not apply (a NUTS option with
# ChEES, ...) is the core's error naming it.
sampler_request <- function(args, seed) {
  control <- as.list(args$control)
  entries <- names(control)
  if (length(control) && (is.null(entries) || !all(entries %in% names(control_fields)))) {
    bad <- if (is.null(entries)) "(unnamed)" else setdiff(entries, names(control_fields))
    stop("credence_fit: unsupported control entries: ", paste(bad, collapse = ", "), "; expected ",
         paste(names(control_fields), collapse = ", "), call. = FALSE)
  }
  out <- list(sampler = args$sampler, backend = args$backend, chains = args$chains, iter = args$iter,
              warmup = args$warmup, seed = seed,
              higher_is_better = flag_arg(args$higher_is_better, "credence_fit", "higher_is_better"),
              convention = "brms")
  out[unname(control_fields[entries])] <- control
  out
}

# The seed of a fit: the one given, else one drawn from R's RNG (so set.seed() reproduces it).
fit_seed <- function(seed) if (is.null(seed)) sample.int(.Machine$integer.max, 1) else seed

fit_from_args <- function(args, data_name, sigma_given = TRUE) {
  f <- parse_credence_formula(args$formula)
  if (!is.null(f$dataset) || !is.null(args$dataset)) return(fit_across_from_args(args, f, data_name, sigma_given))
  # The fit on one data set computes no summary: its rope is fit_summary()'s argument.
  if (!is.null(args$rope)) {
    stop("credence_fit: rope applies to the model across data sets; for one data set use ",
         "fit_summary(fit, rope = ...)", call. = FALSE)
  }
  family <- resolve_family(args$family)
  shared_sigma <- if (sigma_given) parse_sigma_formula(args$sigma, f$group)
  d <- model_rows(args$data, c(f$response, f$trials), c(f$group, f$pair, f$training, f$item))
  within <- if (!is.null(f$item)) c("item", f$item) else if (!is.null(f$training)) c("repeat", f$training)
  seed <- fit_seed(args$seed)
  priors <- prior_strings(args$prior)
  request <- c(list(family = family, model = args$model, covariance_df = args$covariance_df,
                    cv_test_fraction = args$cv_test_fraction, shared_sigma = shared_sigma, realization_effect = if (!is.null(f$pair)) TRUE,
                    across_scale = args$across_scale, interaction = args$interaction),
               prior_request(priors), sampler_request(args, seed))
  r <- core("credence_fit", glue_fit(request, as.character(d[[f$group]]),
                                     if (is.null(f$pair)) NULL else as.character(d[[f$pair]]),
                                     as.double(d[[f$response]]), if (is.null(f$trials)) NULL else as.double(d[[f$trials]]),
                                     if (is.null(within)) NULL else as.character(d[[within[[2]]]]),
                                     within,
                                     run_cores(args$cores), run_progress()))
  args$seed <- seed
  info <- glue_info(r$ptr)
  structure(list(ptr = r$ptr, cache = new.env(parent = emptyenv()), formula = args$formula, family = family,
                 shared_sigma = isTRUE(shared_sigma),
                 terms = f, data = d, data_name = data_name, seed = info$seed, sigma_given = sigma_given, prior = priors,
                 args = args, sampler = r$sampler, backend = r$backend, chees = r$chees,
                 summary = as.data.frame(glue_summary(r$ptr)), info = info),
            class = "credence_fit")
}

# The fit's core object. A fit read back by readRDS (or sent to a parallel worker) holds a dead
# external pointer (R does not serialise what it points to): the core fit is made again from the
# recorded arguments, seed and backend, which give the same draws (results depend on the data and
# the seed only), once per R session (kept in the fit's environment `cache`).
fit_ptr <- function(fit) {
  dead <- function(p) is.null(p) || identical(p, methods::new("externalptr"))
  if (!dead(fit$ptr)) return(fit$ptr)
  if (!is.null(fit$cache) && !dead(fit$cache$ptr)) return(fit$cache$ptr)
  args <- fit$args
  args$backend <- fit$backend
  again <- fit_from_args(args, fit$data_name, sigma_given = isTRUE(fit$sigma_given))
  if (!is.null(fit$cache)) fit$cache$ptr <- again$ptr
  again$ptr
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

# A logical argument: one TRUE or FALSE (NULL: FALSE), else an error naming it (NA, "yes", 0.5
# or c(TRUE, FALSE) would otherwise be read as FALSE without a word).
flag_arg <- function(x, fn, name) {
  if (is.null(x)) return(FALSE)
  if (!is.logical(x) || length(x) != 1L || is.na(x)) {
    stop(fn, ": ", name, " must be TRUE or FALSE, not ", paste(deparse(x), collapse = " "), call. = FALSE)
  }
  x
}
