# Registers credence's methods on the generics of brms' ecosystem when those packages load, so
# fixef(fit), nuts_params(fit), ... also work after library(brms) masks credence's generics.

foreign_generics <- list(
  c("nlme", "fixef"), c("rstantools", "prior_summary"), c("bayesplot", "pp_check"),
  c("bayesplot", "nuts_params"), c("posterior", "as_draws_df")
)

register_foreign <- function(pkg, generic) {
  method <- get(paste0(generic, ".credence_fit"), envir = asNamespace("credence"))
  ns <- asNamespace(pkg)
  if (exists(generic, envir = ns, inherits = FALSE)) registerS3method(generic, "credence_fit", method, envir = ns)
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
