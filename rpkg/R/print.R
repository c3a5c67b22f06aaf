# What the print and summary methods of a fit on one data set (credence_fit) and of the model
# across data sets (credence_across) have in common: the brms-style parameter table, the header
# lines (formula, sigma, data, draws), the tables' printing and the core's warnings. Every
# number comes from the core; these functions only lay them out.

# The brms-style table of parameters: one row per parameter, named by `names`.
param_table <- function(names, mean, sd, q2.5, q97.5, rhat, ess_bulk, ess_tail) {
  data.frame(Estimate = mean, Est.Error = sd, `l-95% CI` = q2.5, `u-95% CI` = q97.5,
             Rhat = rhat, Bulk_ESS = round(ess_bulk), Tail_ESS = round(ess_tail),
             row.names = names, check.names = FALSE)
}

# The header lines after Family and Links: the formula, the sigma formula (NULL: no line), the
# data (`extra` is appended inside the parentheses) and the draws, as brms prints them.
print_header <- function(formula, sigma, data_name, observations, extra, chains, iter, warmup) {
  cat("Formula:", deparse1(formula), "\n")
  if (!is.null(sigma)) cat("         sigma ~", sigma, "\n")
  cat("   Data: ", data_name, " (Number of observations: ", observations, extra, ")\n", sep = "")
  cat("  Draws: ", chains, " chains, each with iter = ", iter, "; warmup = ", warmup,
      "; thin = 1;\n         total post-warmup draws = ", chains * (iter - warmup), "\n", sep = "")
}

# One table of parameters under its title (nothing for an empty table), estimates rounded to
# `digits` decimals and R-hat to 2; `rows` renames the rows.
print_param_table <- function(title, tab, digits, rows = NULL) {
  if (!nrow(tab)) return(invisible())
  cat("\n", title, ":\n", sep = "")
  if (!is.null(rows)) rownames(tab) <- rows
  num <- c("Estimate", "Est.Error", "l-95% CI", "u-95% CI")
  tab[num] <- lapply(tab[num], round, digits)
  tab$Rhat <- formatC(tab$Rhat, format = "f", digits = 2)
  print(tab)
}

print_warnings <- function(warnings) {
  for (w in warnings) cat("Warning:", w, "\n")
}

# print() of a fit is print() of its summary.
print_via_summary <- function(x, digits, ...) {
  print(summary(x), digits = digits, ...)
  invisible(x)
}
