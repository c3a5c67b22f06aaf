# The plan's assurance against the subsampled settle rate on real study tables (benches/README.md,
# "Calibration on real study tables"): Rscript benches/plan_vs_subsamples.R DIR OUT.csv, DIR holding
# the study tables synthetic.csv, yacht.csv, energy.csv and breast_cancer.csv of 200 realizations;
# optional third and fourth arguments: the plan's simulations (default 200) and the subsets
# (default 100). For four pairs of each table (by the full fit's ranks: 1-2, 1-3, 2-3, 1-4) and
# R = 5, 10: the plan from the full table's paired fit, and the share of random subsets of R
# realizations whose paired fit settles P(a better than b) >= 0.95.
library(credence); options(credence.progress = FALSE)
args <- commandArgs(TRUE)
sims <- if (length(args) >= 3) as.integer(args[3]) else 200L
n_subsets <- if (length(args) >= 4) as.integer(args[4]) else 100L
cells <- list(
  list("synthetic", 30, "crps", FALSE), list("synthetic", 100, "crps", FALSE),
  list("yacht", 30, "crps", FALSE), list("yacht", 100, "crps", FALSE),
  list("energy", 30, "crps", FALSE), list("energy", 100, "crps", FALSE),
  list("breast_cancer", 100, "ece", FALSE), list("breast_cancer", 100, "accuracy", TRUE))
out <- list()
for (cl in cells) {
  t <- read.csv(file.path(args[1], paste0(cl[[1]], ".csv")))
  t <- t[t$n == cl[[2]], ]
  if ("shift" %in% names(t)) t <- t[t$shift == "none", ]
  t <- t[is.finite(t[[cl[[3]]]]), ]
  d <- data.frame(method = t$method, realization = t$realization, y = t[[cl[[3]]]])
  full <- credence_fit(y ~ method + (1 | realization), d, higher_is_better = cl[[4]], seed = 1)
  rk <- rank_posterior(full)
  ord <- rk$method[order(rk$expected_rank)]
  reals <- unique(d$realization)
  # Every ordered pair (a the better by the full table), as the plan asks "a better than b".
  for (ij in list(c(1, 2), c(1, 3), c(2, 3), c(1, 4))) { i <- ij[1]; j <- ij[2]
    a <- ord[i]; b <- ord[j]
    p <- plan_realizations(full, a = a, b = b, r = c(5, 10), sims = sims, prob = 0.95, seed = 1,
                           all_sims = TRUE)
    set.seed(1)
    for (r in c(5, 10)) {
      settled <- replicate(n_subsets, {
        s <- d[d$realization %in% sample(reals, r), ]
        f <- tryCatch(credence_fit(y ~ method + (1 | realization), s, higher_is_better = cl[[4]], seed = 1,
                                   model = "paired"), error = function(e) NULL)
        if (is.null(f)) NA else prob_superior(f)[a, b] >= 0.95
      })
      out[[length(out) + 1]] <- data.frame(table = cl[[1]], n = cl[[2]], metric = cl[[3]], a = a, b = b, r = r,
        assurance = p$assurance[p$r == r], mcse = p$assurance_mcse[p$r == r],
        subsampled = mean(settled, na.rm = TRUE), subsets = sum(!is.na(settled)))
    }
  }
  cat(cl[[1]], cl[[2]], cl[[3]], "done\n")
}
res <- do.call(rbind, out)
res$gap <- res$assurance - res$subsampled
# Monte Carlo standard error of the gap: the plan's and the subsampled share's.
res$gap_se <- sqrt(res$mcse^2 + res$subsampled * (1 - res$subsampled) / res$subsets)
write.csv(res, args[2], row.names = FALSE)
print(summary(abs(res$gap)))
cat("within 0.1:", sum(abs(res$gap) <= 0.1), "of", nrow(res), "\n")
cat("within 2 Monte Carlo se:", sum(abs(res$gap) <= 2 * res$gap_se), "of", nrow(res), "\n")
