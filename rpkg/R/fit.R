#' Fit the hierarchical comparison model (brms-style formula).
credence_fit <- function(formula, data, family = "gaussian", sigma = ~method, chains = 4,
                         iter = 2000, warmup = floor(iter / 2), seed = 1) {
  rhs <- attr(stats::terms(formula), "term.labels")
  response <- all.vars(formula[[2]])
  re <- grep("|", rhs, fixed = TRUE, value = TRUE)
  fixed <- setdiff(rhs, re)
  if (length(fixed) != 1) stop("credence_fit: expected one method term, got: ", paste(fixed, collapse = ", "))
  pair_col <- if (length(re)) trimws(sub(".*\\|", "", re[[1]])) else NULL
  cols <- c(response, fixed, pair_col)
  keep <- stats::complete.cases(data[, cols, drop = FALSE])
  if (any(!keep)) warning(sum(!keep), " row(s) with missing values were dropped")
  d <- data[keep, , drop = FALSE]
  ptr <- glue_fit(as.character(d[[fixed]]), if (is.null(pair_col)) NULL else as.character(d[[pair_col]]),
                  as.double(d[[response[1]]]), NULL, family, identical(sigma, ~1), !is.null(pair_col),
                  FALSE, FALSE, FALSE, rep("", 5), chains, warmup, iter - warmup, seed, 0.8, FALSE)
  structure(list(ptr = ptr, formula = formula, summary = as.data.frame(glue_summary(ptr)),
                 info = glue_info(ptr)), class = "credence_fit")
}

#' @export
print.credence_fit <- function(x, digits = 2, ...) {
  i <- x$info
  cat(" Family: gaussian\n  Links: mu = identity; sigma = identity\nFormula:", deparse(x$formula), "\n")
  cat("   Data: data (Number of observations:", i$n_obs, ")\n")
  cat("  Draws:", i$chains, "chains, each with iter =", i$warmup + i$draws, "; warmup =", i$warmup,
      "; thin = 1;\n         total post-warmup draws =", i$chains * i$draws, "\n\n")
  s <- x$summary
  tab <- data.frame(Estimate = s$mean, Est.Error = s$sd, `l-95% CI` = s$q2_5, `u-95% CI` = s$q97_5,
                    Rhat = s$rhat, Bulk_ESS = round(s$ess_bulk), Tail_ESS = round(s$ess_tail),
                    row.names = s$name, check.names = FALSE)
  print(round(tab, digits))
  for (w in i$warnings) cat("\nWarning:", w, "\n")
  invisible(x)
}
