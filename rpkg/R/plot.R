# plot (trace + density per parameter) and pp_check (density overlay); ggplot2 when installed,
# base graphics otherwise.

use_ggplot <- function() requireNamespace("ggplot2", quietly = TRUE)

#' @title Trace and density plots
#'
#' @description Trace and per-chain density of each summarised parameter (or of \code{pars}); with
#' ggplot2 installed, two faceted ggplots (printed, and returned invisibly), otherwise base
#' graphics.
#' @param x A \code{credence_fit} (or the plots it returned).
#' @param pars Parameter names; default all in the summary.
#' @param ... Ignored.
#' @return With ggplot2, a list of class \code{"credence_plots"} with \code{density} and
#'   \code{trace}; otherwise \code{NULL}.
#' @method plot credence_fit
#' @export
plot.credence_fit <- function(x, pars = NULL, ...) {
  m <- as_draws_matrix_base(x)
  chain <- attr(m, "chain")
  iteration <- attr(m, "iteration")
  if (is.null(pars)) pars <- x$summary$name
  bad <- setdiff(pars, colnames(m))
  if (length(bad)) stop("plot: unknown parameter(s) ", paste(bad, collapse = ", "), call. = FALSE)
  if (use_ggplot()) {
    long <- data.frame(Parameter = factor(rep(pars, each = nrow(m)), levels = pars),
                       Value = as.vector(m[, pars, drop = FALSE]),
                       Chain = factor(rep(chain, length(pars))), Iteration = rep(iteration, length(pars)))
    trace <- ggplot2::ggplot(long, ggplot2::aes(x = .data$Iteration, y = .data$Value, colour = .data$Chain)) +
      ggplot2::geom_line(linewidth = 0.3) + ggplot2::facet_wrap(~Parameter, scales = "free_y", ncol = 1) +
      ggplot2::labs(title = "Trace")
    dens <- ggplot2::ggplot(long, ggplot2::aes(x = .data$Value, colour = .data$Chain)) +
      ggplot2::geom_density() + ggplot2::facet_wrap(~Parameter, scales = "free", ncol = 1) +
      ggplot2::labs(title = "Density")
    out <- list(density = dens, trace = trace)
    class(out) <- "credence_plots"
    print(out)
    return(invisible(out))
  }
  old <- graphics::par(mfrow = c(min(length(pars), 4), 2), mar = c(3, 3, 2, 1))
  on.exit(graphics::par(old))
  cols <- grDevices::hcl.colors(max(chain), "Dark 3")
  for (p in pars) {
    v <- m[, p]
    dens <- lapply(split(v, chain), stats::density)
    graphics::plot(NULL, xlim = range(vapply(dens, function(d) range(d$x), numeric(2))),
                   ylim = c(0, max(vapply(dens, function(d) max(d$y), 0))), main = p, xlab = "", ylab = "")
    for (c in seq_along(dens)) graphics::lines(dens[[c]], col = cols[c])
    graphics::plot(NULL, xlim = range(iteration), ylim = range(v), main = p, xlab = "", ylab = "")
    for (c in seq_len(max(chain))) graphics::lines(iteration[chain == c], v[chain == c], col = cols[c])
  }
  invisible(NULL)
}

#' @rdname plot.credence_fit
#' @method print credence_plots
#' @export
print.credence_plots <- function(x, ...) {
  for (p in x) print(p)
  invisible(x)
}

#' @title Posterior predictive check
#'
#' @description Density of the observed response overlaid with the densities of \code{ndraws}
#' replicated data sets drawn by the core from the posterior predictive distribution. Uses
#' ggplot2 when installed, base graphics otherwise. A credence S3 generic; the default method
#' calls \code{bayesplot::pp_check}.
#' @param object A \code{credence_fit}.
#' @param ndraws Number of replicated data sets.
#' @param seed Seed of the replication draws.
#' @param ... Passed on by the default method.
#' @return A ggplot object, or (base graphics) the replicated data invisibly (ndraws x
#'   observations).
#' @export
pp_check <- function(object, ...) UseMethod("pp_check")

#' @rdname pp_check
#' @method pp_check credence_fit
#' @export
pp_check.credence_fit <- function(object, ndraws = 20, seed = object$seed, ...) {
  y <- object$info$y
  yrep <- matrix(glue_predict(fit_ptr(object), ndraws, seed), nrow = ndraws, byrow = TRUE)
  if (use_ggplot()) {
    long <- data.frame(value = c(as.vector(t(yrep)), y),
                       draw = factor(c(rep(seq_len(ndraws), each = length(y)), rep(0, length(y)))),
                       what = c(rep("y_rep", ndraws * length(y)), rep("y", length(y))))
    g <- ggplot2::ggplot(long, ggplot2::aes(x = .data$value, group = .data$draw, colour = .data$what,
                                            linewidth = .data$what)) +
      ggplot2::geom_density(fill = NA, key_glyph = "path") +
      ggplot2::scale_colour_manual(values = c(y = "#011f4b", y_rep = "#b3cde0"), name = NULL) +
      ggplot2::scale_linewidth_manual(values = c(y = 1, y_rep = 0.4), name = NULL) +
      ggplot2::labs(x = object$terms$response, y = "density")
    return(g)
  }
  dens_rep <- apply(yrep, 1, stats::density, simplify = FALSE)
  dy <- stats::density(y)
  graphics::plot(dy, main = "Posterior predictive check", xlab = object$terms$response, type = "n",
                 xlim = range(c(dy$x, unlist(lapply(dens_rep, `[[`, "x")))),
                 ylim = c(0, max(c(dy$y, unlist(lapply(dens_rep, `[[`, "y"))))))
  for (d in dens_rep) graphics::lines(d, col = "#b3cde0")
  graphics::lines(dy, col = "#011f4b", lwd = 2)
  graphics::legend("topright", c("y", "y_rep"), col = c("#011f4b", "#b3cde0"), lwd = c(2, 1), bty = "n")
  invisible(yrep)
}

#' @rdname pp_check
#' @method pp_check default
#' @export
pp_check.default <- function(object, ...) delegate("bayesplot", "pp_check", object, ...)
