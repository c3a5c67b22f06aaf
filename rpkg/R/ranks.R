# The rank figures of a fit: the Bayesian and classic critical-difference diagrams, and rliable's
# performance profiles across data sets. Positions, groups and profiles are the core's (the
# summary's keys); R only draws them.

check_rank_fit <- function(fit, what) {
  if (!inherits(fit, c("credence_fit", "credence_across"))) {
    stop(what, ": fit must be a credence_fit or credence_across", call. = FALSE)
  }
  invisible(fit)
}

#' @title Critical-difference diagram
#'
#' @description Methods on a rank axis, a thick bar joining each group of methods that are not
#' told apart (Demsar 2006's drawing). \code{"bayesian"}: each method at its expected rank (on
#' a new data set for a \code{credence_across}); two methods are told apart when P(A better
#' than B) is at least 0.95 or at most 0.05 and, with a ROPE, they are not practically
#' equivalent with probability 0.95 or more. \code{"classic"}: the frequentist Friedman/Nemenyi
#' diagram (average ranks within realizations, or within data sets across data sets; methods
#' joined when their average ranks differ by less than the critical difference, drawn as a
#' scale bar). The ranks and groups are the core's (\code{fit_summary(fit)$cd}), the same as
#' the report draws.
#' @param fit A \code{credence_fit} or a \code{credence_across}.
#' @param type \code{"bayesian"} or \code{"classic"}.
#' @return A ggplot (requires the ggplot2 package); its \code{data} holds \code{method} and
#'   \code{rank}, best first.
#' @examples
#' d <- data.frame(method = rep(c("A", "B", "C"), 10), realization = rep(1:10, each = 3),
#'                 crps = c(0.30, 0.35, 0.36) + rep(rnorm(10, sd = 0.02), each = 3) + rnorm(30, sd = 0.01))
#' f <- credence_fit(crps ~ method + (1 | realization), d, iter = 400, seed = 1, chains = 2)
#' if (requireNamespace("ggplot2", quietly = TRUE)) {
#'   print(cd_diagram(f))
#'   print(cd_diagram(f, "classic"))
#' }
#' @export
cd_diagram <- function(fit, type = c("bayesian", "classic")) {
  check_rank_fit(fit, "cd_diagram")
  type <- match.arg(type)
  if (!use_ggplot()) stop("cd_diagram: the ggplot2 package is needed", call. = FALSE)
  s <- fit_summary(fit)
  across <- inherits(fit, "credence_across")
  cd <- NULL
  if (type == "bayesian") {
    er <- s[[if (across) "expected_rank_new" else "expected_rank"]]
    if (length(er) < 2) stop("cd_diagram: no expected ranks (one method, or more than 20)", call. = FALSE)
    rank <- vapply(er, function(e) as.numeric(e$mean), 0)
    groups <- s$cd$bayesian
    xlab <- if (across) "expected rank on a new data set (1 = best)" else "expected rank (1 = best)"
    title <- "Bayesian CD diagram"
  } else {
    if (is.null(s$classic_cd)) {
      stop("cd_diagram: no classic analysis (it needs two or more methods scored in two or more complete blocks)",
           call. = FALSE)
    }
    rank <- unlist(s$classic_cd$average_ranks)
    groups <- s$cd$classic
    cd <- s$classic_cd$critical_difference
    xlab <- sprintf("average rank (Friedman/Nemenyi, alpha = %g)", s$classic_cd$alpha)
    title <- "Classic CD diagram"
  }
  rank <- sort(rank)
  k <- length(rank)
  pos <- data.frame(method = names(rank), rank = unname(rank), y = -seq_len(k), stringsAsFactors = FALSE)
  pos$label <- sprintf("%s (%.2f)", pos$method, pos$rank)
  pos$right <- pos$rank <= (k + 1) / 2
  bars <- do.call(rbind, lapply(seq_along(groups), function(g) {
    r <- rank[unlist(groups[[g]])]
    data.frame(x = min(r) - 0.03, xend = max(r) + 0.03, y = 0.4 * g)
  }))
  p <- ggplot2::ggplot(pos, ggplot2::aes(x = .data$rank)) +
    ggplot2::geom_segment(ggplot2::aes(xend = .data$rank, y = 0, yend = .data$y), colour = "grey60") +
    ggplot2::geom_point(ggplot2::aes(y = .data$y, colour = .data$method), size = 3, show.legend = FALSE) +
    ggplot2::geom_text(ggplot2::aes(y = .data$y, label = .data$label,
                                    hjust = ifelse(.data$right, -0.15, 1.15)), size = 3.5) +
    ggplot2::scale_x_continuous(xlab, limits = c(0.5, k + 0.5), breaks = seq_len(k)) +
    ggplot2::scale_y_continuous(NULL, breaks = NULL) +
    ggplot2::labs(title = title) + ggplot2::theme_minimal()
  if (!is.null(bars)) {
    p <- p + ggplot2::geom_segment(data = bars, ggplot2::aes(x = .data$x, xend = .data$xend, y = .data$y,
                                                             yend = .data$y), linewidth = 2)
  }
  if (!is.null(cd)) {
    top <- 0.4 * (length(groups) + 1.5)
    p <- p + ggplot2::annotate("segment", x = 1, xend = 1 + cd, y = top, yend = top, colour = "#D55E00",
                               linewidth = 1.2) +
      ggplot2::annotate("text", x = 1 + cd, y = top, label = sprintf("CD = %.2f", cd), hjust = -0.1, size = 3.5)
  }
  p
}

#' @title Performance profiles across data sets
#'
#' @description rliable's performance profiles (Agarwal et al. 2021), a frequentist cross-check
#' beside the across fit's Bayesian answers: each run's score min-max normalised within its data
#' set in the metric's direction (1 = the best run on that data set), and per method the fraction
#' of runs above each threshold tau (averaged over the data sets), with a stratified-bootstrap
#' 95\% band (2000 resamples, seeded by the fit's seed). Computed by the core
#' (\code{fit_summary(fit)$checks}).
#' @param fit A \code{credence_across}.
#' @return A data frame: \code{method}, \code{tau}, \code{fraction}, \code{lower}, \code{upper}.
#' @examples
#' set.seed(1)
#' d <- expand.grid(realization = 1:6, method = c("A", "B"), dataset = c("energy", "yacht", "wine"))
#' d$crps <- 0.3 * as.integer(d$dataset) + 0.1 * (d$method == "B") + rnorm(nrow(d), sd = 0.03)
#' f <- credence_fit(crps ~ method + (1 | realization) + (1 | dataset:method), d, chains = 2, iter = 600,
#'                   seed = 1)
#' head(performance_profiles(f))
#' if (requireNamespace("ggplot2", quietly = TRUE)) print(cd_diagram(f, "classic"))
#' @export
performance_profiles <- function(fit) {
  check_across(fit, "performance_profiles")
  p <- fit$summary$checks$profiles
  if (is.null(p)) stop("performance_profiles: the fit has no cross-checks (a score was not finite)", call. = FALSE)
  taus <- as.numeric(unlist(p$taus))
  do.call(rbind, lapply(names(p$methods), function(m) {
    q <- p$methods[[m]]
    data.frame(method = m, tau = taus, fraction = as.numeric(unlist(q$fraction)), lower = as.numeric(unlist(q$lower)),
               upper = as.numeric(unlist(q$upper)), stringsAsFactors = FALSE)
  }))
}
