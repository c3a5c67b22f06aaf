# Registers credence's methods on the generics of brms' ecosystem when those packages load, so
# fixef(fit), nuts_params(fit), ... also work after library(brms) masks credence's generics.

foreign_generics <- list(
  c("nlme", "fixef"), c("rstantools", "prior_summary"), c("bayesplot", "pp_check"),
  c("bayesplot", "nuts_params"), c("posterior", "as_draws_df")
)

register_foreign <- function(pkg, generic) {
  ns <- asNamespace(pkg)
  if (!exists(generic, envir = ns, inherits = FALSE)) return(invisible())
  for (cls in c("credence_fit", "credence_across")) {
    method <- get0(paste0(generic, ".", cls), envir = asNamespace("credence"), inherits = FALSE)
    if (!is.null(method)) registerS3method(generic, cls, method, envir = ns)
  }
}

.onLoad <- function(libname, pkgname) {
  for (g in foreign_generics) {
    local({
      pkg <- g[[1]]
      generic <- g[[2]]
      if (isNamespaceLoaded(pkg)) register_foreign(pkg, generic)
      setHook(packageEvent(pkg, "onLoad"), function(...) register_foreign(pkg, generic))
    })
  }
}

utils::globalVariables(".data")

# The routines of the Rust glue crate (R/glue.R calls them by their registered names).
#' @useDynLib credence, .registration = TRUE
NULL
