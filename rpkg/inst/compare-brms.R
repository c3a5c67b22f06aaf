# Fits the same data with brms (Stan) and credence and prints the largest difference of
# posterior means in units of brms' posterior sd, and both times.
#
#   Rscript rpkg/inst/compare-brms.R [metric_table.csv] [chains] [iter]
#
# The data default to examples/data/metric_table.csv (6 methods x 20 realizations, CRPS). The
# brms model is the same model as credence's (as in benches/compare_brms.R, which does this for
# the CLI): crps ~ 1 + (1 | method) + (1 | realization) with sigma ~ 0 + method (log link), the
# half-normal(1) prior on sigma[m] = exp(b_sigma[m]) added with its Jacobian, Intercept ~
# normal(0, 1), both sds ~ half-normal(1); mu[m] = b_Intercept + r_method[m].
args <- commandArgs(trailingOnly = TRUE)
path <- if (length(args) >= 1) args[[1]] else "examples/data/metric_table.csv"
chains <- if (length(args) >= 2) as.integer(args[[2]]) else 4L
iter <- if (length(args) >= 3) as.integer(args[[3]]) else 2000L
suppressPackageStartupMessages({
  library(credence)
  library(brms)
})
rstan::rstan_options(boost_lib = "/usr/include")
d <- utils::read.csv(path)
d$method <- as.character(d$method)
d$realization <- as.character(d$realization)

t0 <- proc.time()[["elapsed"]]
fc <- credence_fit(crps ~ method + (1 | realization), d, chains = chains, iter = iter, seed = 1)
t_credence <- proc.time()[["elapsed"]] - t0

priors <- c(
  brms::prior(normal(0, 1), class = Intercept),
  brms::prior(normal(0, 1), class = sd, group = method),
  brms::prior(normal(0, 1), class = sd, group = realization),
  brms::set_prior("target += normal_lpdf(exp(b_sigma) | 0, 1) + sum(b_sigma)", check = FALSE)
)
form <- brms::bf(crps ~ 1 + (1 | method) + (1 | realization), sigma ~ 0 + method)
t0 <- proc.time()[["elapsed"]]
fb <- brms::brm(form, data = d, prior = priors, chains = chains, iter = iter, seed = 1, refresh = 0,
                cores = 2, silent = 2)
t_brms <- proc.time()[["elapsed"]] - t0
t_brms_sampling <- sum(rstan::get_elapsed_time(fb$fit))

db <- as.data.frame(posterior::as_draws_df(fb))
methods <- unique(d$method)
ref <- list(mu0 = db[["b_Intercept"]], tau = db[["sd_method__Intercept"]],
            sigma_gamma = db[["sd_realization__Intercept"]])
for (m in methods) {
  ref[[sprintf("mu[%s]", m)]] <- db[["b_Intercept"]] + db[[sprintf("r_method[%s,Intercept]", m)]]
  ref[[sprintf("sigma[%s]", m)]] <- exp(db[[sprintf("b_sigma_method%s", m)]])
}
s <- fc$summary
z <- vapply(names(ref), function(k) (s$mean[s$name == k] - mean(ref[[k]])) / sd(ref[[k]]), 0)
ratio <- vapply(names(ref), function(k) s$sd[s$name == k] / sd(ref[[k]]), 0)
cat(sprintf("%-18s %12s %12s %10s %8s\n", "parameter", "credence", "brms", "brms sd", "diff/sd"))
for (k in names(ref)) {
  cat(sprintf("%-18s %12.5f %12.5f %10.5f %8.3f\n", k, s$mean[s$name == k], mean(ref[[k]]), sd(ref[[k]]), z[[k]]))
}
cat(sprintf("\nlargest |posterior-mean difference| / brms posterior sd: %.3f (%s)\n",
            max(abs(z)), names(z)[which.max(abs(z))]))
cat(sprintf("posterior sd ratio credence / brms: %.3f - %.3f\n", min(ratio), max(ratio)))
cat(sprintf("credence: %.1f s (%d chains x %d iter); brms: %.1f s in all (compile + sample), %.1f s sampling (sum over chains)\n",
            t_credence, chains, iter, t_brms, t_brms_sampling))
cat(sprintf("divergences: credence %d, brms %d\n", fc$info$divergences,
            sum(subset(brms::nuts_params(fb), Parameter == "divergent__")$Value)))
