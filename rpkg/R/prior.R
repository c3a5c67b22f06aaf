# Prior constructors: each returns the text form the Rust core parses (class "credence_dist").

dist_text <- function(name, ...) {
  args <- c(...)
  if (!is.numeric(args) || any(!is.finite(args))) stop(name, "(): arguments must be finite numbers", call. = FALSE)
  structure(paste0(name, "(", paste(as.character(args), collapse = ", "), ")"),
            class = "credence_dist")
}

#' @export
normal <- function(mean, sd) dist_text("normal", mean, sd)
#' @export
half_normal <- function(scale) dist_text("half_normal", scale)
#' @export
half_student_t <- function(df, scale) dist_text("half_student_t", df, scale)
#' @export
student_t <- function(df, location, scale) dist_text("student_t", df, location, scale)
#' @export
exponential <- function(rate) dist_text("exponential", rate)
#' @export
gamma_dist <- function(shape, rate) dist_text("gamma", shape, rate)

#' @export
print.credence_dist <- function(x, ...) {
  cat(unclass(x), "\n")
  invisible(x)
}

prior_slots <- c("mu0", "tau", "sigma", "sigma_gamma", "phi")

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

#' @export
print.credence_prior <- function(x, ...) {
  set <- unlist(x)[nzchar(unlist(x))]
  if (!length(set)) cat("credence_prior: all defaults\n")
  for (k in names(set)) cat(k, "~", set[[k]], "\n")
  invisible(x)
}

# prior argument of credence_fit -> the 5 strings glue_fit expects ("" keeps the default).
prior_strings <- function(prior) {
  if (is.null(prior)) return(rep("", length(prior_slots)))
  if (!inherits(prior, "credence_prior")) stop("credence_fit: prior must come from credence_prior()", call. = FALSE)
  vapply(prior_slots, function(k) prior[[k]], "")
}
