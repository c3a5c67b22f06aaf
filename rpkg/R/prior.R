# Priors of the hierarchical model: credence_prior() collects them; each constructor returns the
# text form the Rust core parses (class "credence_dist").

prior_slots <- c("mu0", "tau", "sigma", "sigma_gamma", "phi")

#' @title Priors of the hierarchical model
#'
#' @description Overrides the default priors of \code{\link{credence_fit}}. Each constructor
#' returns the text form the Rust core parses; plain strings such as \code{"normal(0, 1)"} are
#' accepted as well. Inside \code{credence_prior()}, \code{gamma(shape, rate)} means the gamma
#' prior (as in brms), not \code{base::gamma}; elsewhere use \code{gamma_dist()}.
#' @param mu0 Prior of the grand mean (a \code{normal}); default \code{normal(0, 1)} (Gaussian)
#'   or \code{normal(0, 2.5)} (beta-binomial, logit scale).
#' @param tau Prior of the between-method sd; default \code{half_normal(1)}.
#' @param sigma Gaussian: prior of the residual sds; default \code{half_normal(1)}.
#' @param sigma_gamma Prior of the realization-effect sd; default \code{half_normal(1)}.
#' @param phi Beta-binomial: prior of the precision; default \code{exponential(0.01)}.
#' @param mean,sd,scale,df,location,rate,shape Parameters of the distribution.
#'   \code{student_t(df, 0, scale)} and \code{normal(0, scale)} on a scale parameter mean the
#'   half distributions, as in brms.
#' @param x Object to print.
#' @param ... Ignored.
#' @return \code{credence_prior()}: a list of class \code{"credence_prior"} (\code{""} keeps a
#'   default). The constructors: a string of class \code{"credence_dist"}.
#' @seealso \code{\link{prior_summary}}
#' @examples
#' credence_prior(mu0 = normal(0, 1), tau = half_normal(0.5), sigma_gamma = gamma(2, 4))
#' @export
credence_prior <- function(mu0 = NULL, tau = NULL, sigma = NULL, sigma_gamma = NULL, phi = NULL) {
  # Arguments are evaluated with `gamma(shape, rate)` meaning the gamma prior (as in brms),
  # not base::gamma; the other constructors are the package's own functions.
  calls <- as.list(match.call())[-1]
  mask <- list2env(list(gamma = gamma_dist, normal = normal, half_normal = half_normal,
                        half_student_t = half_student_t, student_t = student_t, exponential = exponential),
                   parent = parent.frame())
  out <- stats::setNames(as.list(rep("", length(prior_slots))), prior_slots)
  for (k in names(calls)) {
    v <- eval(calls[[k]], mask)
    if (is.null(v)) next
    if (!(is.character(v) && length(v) == 1)) {
      stop("credence_prior: ", k, " must be a prior such as normal(0, 1) or its text", call. = FALSE)
    }
    out[[k]] <- as.character(unclass(v))
  }
  structure(out, class = "credence_prior")
}

dist_text <- function(name, ...) {
  args <- c(...)
  if (!is.numeric(args) || any(!is.finite(args))) stop(name, "(): arguments must be finite numbers", call. = FALSE)
  structure(paste0(name, "(", paste(as.character(args), collapse = ", "), ")"),
            class = "credence_dist")
}

#' @rdname credence_prior
#' @export
normal <- function(mean, sd) dist_text("normal", mean, sd)
#' @rdname credence_prior
#' @export
half_normal <- function(scale) dist_text("half_normal", scale)
#' @rdname credence_prior
#' @export
half_student_t <- function(df, scale) dist_text("half_student_t", df, scale)
#' @rdname credence_prior
#' @export
student_t <- function(df, location, scale) dist_text("student_t", df, location, scale)
#' @rdname credence_prior
#' @export
exponential <- function(rate) dist_text("exponential", rate)
#' @rdname credence_prior
#' @export
gamma_dist <- function(shape, rate) dist_text("gamma", shape, rate)

#' @rdname credence_prior
#' @method print credence_prior
#' @export
print.credence_prior <- function(x, ...) {
  set <- unlist(x)[nzchar(unlist(x))]
  if (!length(set)) cat("credence_prior: all defaults\n")
  for (k in names(set)) cat(k, "~", set[[k]], "\n")
  invisible(x)
}

#' @rdname credence_prior
#' @method print credence_dist
#' @export
print.credence_dist <- function(x, ...) {
  cat(unclass(x), "\n")
  invisible(x)
}

# prior argument of credence_fit -> the 5 strings named by slot ("" keeps the default).
prior_strings <- function(prior) {
  if (is.null(prior)) return(stats::setNames(rep("", length(prior_slots)), prior_slots))
  if (!inherits(prior, "credence_prior")) stop("credence_fit: prior must come from credence_prior()", call. = FALSE)
  vapply(prior_slots, function(k) prior[[k]], "")
}

# The priors given (not "") as the request's field priors: a named list of their texts.
prior_request <- function(priors) {
  given <- priors[nzchar(priors)]
  if (!length(given)) return(list())
  list(priors = as.list(given))
}
