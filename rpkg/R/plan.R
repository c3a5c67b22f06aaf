# plan_realizations: how many realizations settle a comparison (assurance by simulated
# experiments, credence::compare::plan). R checks and converts the arguments; the simulations,
# fits and every number come from the Rust core.

# Evaluates a call into the core; its error becomes an R error that names the R function. The
# core's "interrupted" (Ctrl-C during a long fit or plan: src/rust/src/worker.rs) is first
# signalled as R's interrupt condition, as Ctrl-C in R code is, so tryCatch(interrupt = ) sees it.
core <- function(fn, expr) {
  tryCatch(expr, error = function(e) {
    if (identical(conditionMessage(e), "interrupted")) {
      signalCondition(structure(class = c("interrupt", "condition"),
                                list(message = paste0(fn, ": interrupted"), call = NULL)))
    }
    stop(fn, ": ", conditionMessage(e), call. = FALSE)
  })
}

# How a long fit or plan runs: its threads (`cores`, NULL for all cores) and its progress
# (option credence.progress: NULL shows it once the work has run a second, TRUE from the
# start, FALSE never), as the glue's last two arguments take them.
# (Called inside core(), which names the function in the error.)
run_cores <- function(cores) {
  if (is.null(cores)) return(NULL)
  if (!is_number(cores) || cores < 1 || cores != floor(cores)) {
    stop("cores must be NULL (all cores) or a whole number >= 1", call. = FALSE)
  }
  as.double(cores)
}
run_progress <- function() {
  p <- getOption("credence.progress")
  if (is.null(p)) NULL else isTRUE(p)
}

is_number <- function(x) is.numeric(x) && length(x) == 1L && !is.na(x)

#' @title Plan an experiment: how many realizations settle a comparison
#'
#' @description The assurance (O'Hagan and Stevens) of a decision at each candidate number of realizations R,
#' by simulated experiments: for each R, \code{sims} worlds are drawn (from a pilot fit's posterior,
#' one posterior draw per simulation, or fixed by stated values), a new table of R realizations is
#' simulated in each, fitted with the pilot's model by batched ChEES-HMC on a GPU (fits ChEES stops at
#' its gradient budget or leaves unclean are fitted again by NUTS on the CPU) or, on the CPU, by
#' whichever of ChEES and NUTS costs fewer gradient evaluations on a trial of 8 tables at the largest
#' R, and the share of fits reaching
#' the decision is the assurance. The predictive-MDD approximation (\code{\link{mdd}}) is given side
#' by side. Everything is computed by the Rust core (\code{credence::compare::plan}); the CLI's
#' \code{credence plan} is the same computation.
#' @param fit A pilot \code{\link{credence_fit}} (NUTS or ChEES; gaussian or beta-binomial). Leave
#'   it \code{NULL} and give \code{effect}, \code{sigma_a} and \code{sigma_b} to plan without a
#'   pilot.
#' @param a The method hoped to be better (required with a pilot fit; \code{"A"} by default with
#'   stated values).
#' @param b The method it is compared with (\code{"B"} by default with stated values).
#' @param r Candidate numbers of realizations, each at least 2.
#' @param sims Simulated experiments per R, the most: the simulations of an R run in blocks of 100
#'   and stop once its assurance is decided against the power (more than 3 standard errors from
#'   it), unless \code{all_sims}. The assurance's Monte Carlo error is \eqn{\sqrt{a(1-a)/fits}},
#'   at most 0.016 with 1000 fits.
#' @param all_sims Run \code{sims} simulated experiments at every R, decided or not.
#' @param prob The decision: a simulated experiment is settled when
#'   \code{P(a better than b | y) >= prob}.
#' @param rope \code{NULL}, or a margin eps > 0: then settled when
#'   \code{P(a better than b by more than eps | y) >= prob}.
#' @param power The assurance the plan must reach; the smallest R of the grid that reaches it is
#'   \code{attr(, "smallest_r")}. Also the power of the MDD column.
#' @param methods Pilot fit only: the methods of the simulated tables (\code{a} and \code{b}
#'   among them); \code{NULL} keeps all of the pilot's.
#' @param backend Where the simulated fits run: \code{"auto"} (the GPU when CUDA is usable and the
#'   ChEES kernel implements the model, else the CPU), \code{"cpu"}, or \code{"cuda"} (an R error
#'   saying why when CUDA cannot run). See \code{\link{credence_backend}}.
#' @param seed Seed of the simulations and fits: the same seed gives the same plan, whatever the
#'   number of threads.
#' @param superchains,chains_per_superchain ChEES chains of each simulated fit; \code{NULL}
#'   keeps the core's plan defaults (6 superchains of 4 chains).
#' @param effect Stated values: how much better \code{a} is than \code{b} on the metric's scale
#'   (\eqn{\mu_b - \mu_a} when lower is better, \eqn{\mu_a - \mu_b} when higher is better).
#' @param sigma_a,sigma_b Stated values: residual sds of the two methods across realizations.
#' @param sigma_gamma Stated values: sd of the realization effect both methods share (0: none).
#' @param higher_is_better Stated values only (\code{FALSE} by default); a pilot fit brings its own
#'   direction (\code{credence_fit(..., higher_is_better = )}).
#' @param x A \code{credence_plan}.
#' @param digits Digits of the probabilities printed.
#' @param ... Ignored.
#' @param cores Threads the simulated fits run on (\code{NULL}, the default: all available
#'   cores). Results do not depend on it. As for \code{\link{credence_fit}}, the plan shows its
#'   progress (simulated fits) once it has run a second (option \code{credence.progress}), and
#'   Ctrl-C stops it.
#' @return A data frame of class \code{c("credence_plan", "data.frame")}, one row per R in increasing
#'   order, with columns \code{r}, \code{assurance}, \code{assurance_mcse} (its Monte Carlo
#'   standard error), \code{expected_prob_better} (mean of \code{P(a better than b | y)} over the
#'   simulated experiments), \code{fits} (simulated experiments fitted),
#'   \code{refit} (fitted again by NUTS), \code{unclean}, \code{failed}, \code{mdd} and
#'   \code{mdd_detection_probability}; and attributes \code{smallest_r} (\code{NA} when no R
#'   reaches the power), \code{decision} (in words), \code{backend} (\code{"cpu"} or
#'   \code{"cuda"}: where the fits ran), \code{sampler} (which sampler fitted the simulated tables,
#'   with its trial, in words), \code{warnings}, \code{power}, \code{a}, \code{b},
#'   \code{methods}, \code{source} (\code{"pilot"} or \code{"stated"}), \code{sims}, \code{seed} and
#'   \code{seconds}.
#'
#' @details With stated values the simulated tables are fitted with the core's default model, the
#' paired one (the two methods' values per realization as one normal draw whose covariance is the
#' shared realization effect; exact draws), and the world is fixed, so the assurance is the
#' classical power of the Bayesian decision. A pilot fit's simulated tables are fitted with the
#' pilot's model. A simulated table is analysed alone (a new
#' experiment, not pooled with the pilot). Fits still unclean after the NUTS refit count in the
#' share and are reported per R (\code{unclean}); fits that fail are left out of it
#' (\code{failed}). The MDD columns are the pilot's (or stated values') predictive approximation at
#' R new realizations: \code{mdd} at \code{power}, and the probability \eqn{\Phi(|gap| /
#' \sigma_{pred})} of detecting the gap, which ignores the gap's direction.
#'
#' Warnings of the plan (unclean or failed simulated fits, no R of the grid reaching the power) are
#' raised as R warnings and kept in \code{attr(, "warnings")}.
#'
#' \code{plot} draws the assurance against R with error bars of two Monte Carlo errors, the MDD
#' approximation's detection probability as a second line, and the power as a dashed line
#' (ggplot2 when installed, returned invisibly; base graphics otherwise).
#' @seealso \code{\link{mdd}}, \code{\link{credence_fit}}, \code{\link{credence_backend}}
#' @examples
#' # No pilot: A is better by 0.3 with residual sds 0.2 (small settings for speed).
#' p <- plan_realizations(effect = 0.3, sigma_a = 0.2, sigma_b = 0.2, r = c(3, 6, 12), sims = 20,
#'                        superchains = 2)
#' p
#' attr(p, "smallest_r")
#' \donttest{
#' plot(p)
#' }
#' @export
plan_realizations <- function(fit = NULL, a = NULL, b = NULL, r = c(5, 10, 20, 50), sims = 1000, prob = 0.95,
                              rope = NULL, power = 0.8, methods = NULL, backend = "auto", seed = 1,
                              superchains = NULL, chains_per_superchain = NULL, effect = NULL, sigma_a = NULL,
                              sigma_b = NULL, sigma_gamma = 0, higher_is_better = NULL, all_sims = FALSE,
                              cores = NULL) {
  fn <- "plan_realizations"
  fail <- function(...) stop(fn, ": ", ..., call. = FALSE)
  backend <- check_backend(backend, fn)
  stated <- !is.null(effect) || !is.null(sigma_a) || !is.null(sigma_b)
  if (!is.null(fit) && stated) {
    fail("give either a pilot fit or stated values (effect, sigma_a, sigma_b), not both")
  }
  if (is.null(fit) && !stated) {
    fail("give a pilot fit (a credence_fit), or effect, sigma_a and sigma_b to plan from stated values")
  }
  if (!is.null(fit) && !inherits(fit, "credence_fit")) fail("fit must be a credence_fit, not ", class(fit)[1])
  if (!is.numeric(r) || !length(r) || anyNA(r)) fail("r must be a numeric vector of numbers of realizations")
  for (k in c("sims", "prob", "power", "seed")) {
    if (!is_number(get(k))) fail(k, " must be one number")
  }
  if (!is.null(rope) && !is_number(rope)) fail("rope must be NULL or one number (the margin)")
  for (k in c("superchains", "chains_per_superchain")) {
    if (!is.null(get(k)) && !is_number(get(k))) fail(k, " must be NULL or one number")
  }
  if (stated) {
    for (k in c("effect", "sigma_a", "sigma_b", "sigma_gamma")) {
      if (!is_number(get(k))) fail(k, " must be one number (stated values need effect, sigma_a and sigma_b)")
    }
    if (!is.null(methods)) fail("methods applies to a pilot fit only (stated values have two methods, a and b)")
    if (is.null(a)) a <- "A"
    if (is.null(b)) b <- "B"
    if (!is.null(higher_is_better) && (!is.logical(higher_is_better) || length(higher_is_better) != 1L ||
                                       is.na(higher_is_better))) {
      fail("higher_is_better must be TRUE or FALSE")
    }
  } else {
    if (is.null(a) || is.null(b)) fail("a and b (the methods to compare) are required with a pilot fit")
    if (!is.null(higher_is_better)) {
      fail("higher_is_better comes from the pilot fit (credence_fit(..., higher_is_better = ))")
    }
  }
  for (k in c("a", "b")) {
    v <- get(k)
    if (!(is.character(v) || is.factor(v) || is.numeric(v)) || length(v) != 1L || is.na(v)) {
      fail(k, " must be one method name")
    }
  }
  a <- as.character(a)
  b <- as.character(b)
  if (!is.null(methods)) methods <- as.character(methods)
  # Options not given stay NULL (dropped at the boundary): their defaults are the core's. The
  # vectors go as lists, so one R value stays a sequence of one.
  given <- function(x, unset) if (!unset) x
  options <- list(a = a, b = b, realizations = given(as.list(as.double(r)), missing(r)), sims = given(sims, missing(sims)),
                  sequential = given(!isTRUE(all_sims), missing(all_sims)), power = given(power, missing(power)),
                  decision = list(level = given(prob, missing(prob)), rope = rope),
                  methods = if (!is.null(methods)) as.list(methods),
                  seed = given(seed, missing(seed)),
                  sampler = list(superchains = superchains, chains_per_superchain = chains_per_superchain))
  values <- if (stated) {
    list(effect = effect, sigma_a = sigma_a, sigma_b = sigma_b,
         sigma_gamma = given(sigma_gamma, missing(sigma_gamma)), higher_is_better = higher_is_better)
  }
  p <- core(fn, glue_plan(if (!stated) fit_ptr(fit), values, options, backend, run_cores(cores), run_progress()))
  out <- data.frame(r = as.integer(p$r), assurance = p$assurance, assurance_mcse = p$assurance_mcse,
                    expected_prob_better = p$expected_prob_better, fits = as.integer(p$fits),
                    refit = as.integer(p$refit), unclean = as.integer(p$unclean), failed = as.integer(p$failed),
                    mdd = p$mdd, mdd_detection_probability = p$mdd_detection_probability)
  attr(out, "smallest_r") <- if (is.nan(p$smallest_r)) NA_integer_ else as.integer(p$smallest_r)
  attr(out, "decision") <- p$decision
  attr(out, "backend") <- p$backend
  attr(out, "sampler") <- p$sampler
  attr(out, "warnings") <- p$warnings
  attr(out, "power") <- p$power
  attr(out, "a") <- p$a
  attr(out, "b") <- p$b
  attr(out, "methods") <- p$methods
  attr(out, "source") <- p$source
  attr(out, "sims") <- as.integer(p$sims)
  attr(out, "seed") <- p$seed
  attr(out, "seconds") <- p$seconds
  class(out) <- c("credence_plan", "data.frame")
  for (w in p$warnings) warning(fn, ": ", w, call. = FALSE)
  out
}

#' @rdname plan_realizations
#' @method print credence_plan
#' @export
print.credence_plan <- function(x, digits = 3, ...) {
  # A subset (x[rows, ]) loses the plan's attributes: print it as the data frame it is.
  if (is.null(attr(x, "decision"))) return(invisible(print.data.frame(x, ...)))
  cat("   Plan:", attr(x, "decision"), "\n")
  cat(" Worlds:", if (identical(attr(x, "source"), "pilot")) "the pilot fit's posterior" else "stated values", "\n")
  cat("Methods: ", paste(attr(x, "methods"), collapse = ", "), " (", attr(x, "sims"),
      " simulated experiments per R, on the ", toupper(attr(x, "backend")), ", seed ",
      attr(x, "seed"), ", ", sprintf("%.1f", attr(x, "seconds")), " s)\n", sep = "")
  cat("Sampler:", attr(x, "sampler"), "\n\n")
  tab <- as.data.frame(unclass(x))
  attributes(tab) <- attributes(tab)[c("names", "row.names", "class")]
  num <- c("assurance", "assurance_mcse", "expected_prob_better", "mdd_detection_probability")
  tab[num] <- lapply(tab[num], round, digits)
  tab$mdd <- signif(tab$mdd, 4)
  print.data.frame(tab, row.names = FALSE)
  s <- attr(x, "smallest_r")
  power <- attr(x, "power")
  if (is.na(s)) {
    cat("\nNo R of the grid reaches assurance ", power, "\n", sep = "")
  } else {
    cat("\nSmallest R with assurance >= ", power, ": ", s, "\n", sep = "")
  }
  cat("(mdd: the predictive-MDD approximation at power ", power, ", for comparison.)\n", sep = "")
  for (w in attr(x, "warnings")) cat("Warning:", w, "\n")
  invisible(x)
}

#' @rdname plan_realizations
#' @method plot credence_plan
#' @export
plot.credence_plan <- function(x, ...) {
  power <- attr(x, "power")
  if (is.null(power)) stop("plot: x has lost the plan's attributes (plot the whole plan)", call. = FALSE)
  # Error bars: the assurance plus and minus two Monte Carlo standard errors.
  lo <- pmax(x$assurance - 2 * x$assurance_mcse, 0)
  hi <- pmin(x$assurance + 2 * x$assurance_mcse, 1)
  title <- attr(x, "decision")
  what <- c("assurance (simulated experiments)", "detection probability (MDD approximation)")
  cols <- c("#011f4b", "#d95f02")
  if (use_ggplot()) {
    long <- data.frame(r = c(x$r, x$r), value = c(x$assurance, x$mdd_detection_probability),
                       lo = c(lo, rep(NA_real_, nrow(x))), hi = c(hi, rep(NA_real_, nrow(x))),
                       what = factor(rep(what, each = nrow(x)), levels = what))
    g <- ggplot2::ggplot(long, ggplot2::aes(x = .data$r, y = .data$value, colour = .data$what)) +
      ggplot2::geom_hline(yintercept = power, linetype = "dashed", colour = "grey40") +
      ggplot2::geom_line() + ggplot2::geom_point() +
      ggplot2::geom_errorbar(ggplot2::aes(ymin = .data$lo, ymax = .data$hi), width = 0, na.rm = TRUE) +
      ggplot2::scale_colour_manual(values = stats::setNames(cols, what), name = NULL) +
      ggplot2::coord_cartesian(ylim = c(0, 1)) +
      ggplot2::labs(x = "realizations R", y = "probability", title = title,
                    caption = paste0("dashed: power ", power, "; bars: assurance +/- 2 Monte Carlo errors")) +
      ggplot2::theme(legend.position = "bottom")
    print(g)
    return(invisible(g))
  }
  graphics::plot(x$r, x$assurance, type = "b", pch = 19, col = cols[1], ylim = c(0, 1),
                 xlab = "realizations R", ylab = "probability", main = title)
  graphics::arrows(x$r, lo, x$r, hi, angle = 90, code = 3, length = 0.03, col = cols[1])
  graphics::lines(x$r, x$mdd_detection_probability, type = "b", pch = 17, col = cols[2])
  graphics::abline(h = power, lty = 2, col = "grey40")
  graphics::legend("bottomright", what, col = cols, pch = c(19, 17), lty = 1, bty = "n")
  invisible(NULL)
}
