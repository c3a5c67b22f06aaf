#!/usr/bin/env Rscript
# Fits the same data with brms (Stan) and with credence and prints the largest difference of
# posterior means in posterior-sd units, with both wall-clock times.
#
# Usage (from the repository root, after `cargo build --release -p credence-cli`):
#   Rscript benches/compare_brms.R [target/release/credence] [n_methods] [n_realizations]
#
# Model (the same in both): y[m,i] ~ Normal(mu[m] + gamma[i], sigma[m]),
# gamma[i] ~ Normal(0, sigma_gamma), mu[m] ~ Normal(mu0, tau), mu0 ~ Normal(0, 1),
# tau, sigma[m], sigma_gamma ~ HalfNormal(1). In brms: y ~ 1 + (1 | method) + (1 | realization)
# with sigma ~ 0 + method (log link); the half-normal prior on sigma[m] = exp(b_sigma[m]) is
# added as Stan code with its Jacobian, so both programs sample the same posterior.

suppressPackageStartupMessages({
  library(brms)
  library(jsonlite)
})
rstan::rstan_options(boost_lib = "/usr/include") # Debian's rstan cannot find Boost otherwise
args <- commandArgs(trailingOnly = TRUE)
credence <- if (length(args) >= 1) args[1] else "target/release/credence"
n_methods <- if (length(args) >= 2) as.integer(args[2]) else 6L
n_real <- if (length(args) >= 3) as.integer(args[3]) else 50L

set.seed(20261122)
methods <- c("MAP", "MCD", "Ensemble", "SWAG", "BBB", "CP", LETTERS)[seq_len(n_methods)]
mu <- seq(0.30, 0.45, length.out = n_methods)
sigma <- seq(0.04, 0.09, length.out = n_methods)
df <- do.call(rbind, lapply(seq_len(n_real), function(i) {
  g <- rnorm(1, 0, 0.05)
  data.frame(method = methods, realization = i, crps = mu + g + rnorm(n_methods, 0, sigma))
}))
path <- tempfile(fileext = ".csv")
write.csv(df, path, row.names = FALSE)
df <- read.csv(path) # both programs see the same numbers

t0 <- Sys.time()
out <- system2(credence, c("fit", path, "--response", "crps", "--group", "method", "--pair", "realization",
                           "--json", "-"), stdout = TRUE)
t_credence <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
cr <- fromJSON(paste(out, collapse = "\n"), simplifyVector = FALSE)

priors <- c(
  prior(normal(0, 1), class = Intercept),
  prior(normal(0, 1), class = sd, group = method),
  prior(normal(0, 1), class = sd, group = realization),
  set_prior("target += normal_lpdf(exp(b_sigma) | 0, 1) + sum(b_sigma)", check = FALSE)
)
form <- bf(crps ~ 1 + (1 | method) + (1 | realization), sigma ~ 0 + method)
t0 <- Sys.time()
fit <- brm(form, data = df, prior = priors, chains = 4, iter = 2000, warmup = 1000, seed = 1,
           cores = 2, refresh = 0, silent = 2)
t_brms_total <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
t0 <- Sys.time()
fit2 <- update(fit, seed = 2, refresh = 0, silent = 2, recompile = FALSE)
t_brms_sample <- as.numeric(difftime(Sys.time(), t0, units = "secs"))

dr <- as_draws_df(fit)
b <- list(mu0 = dr$b_Intercept, tau = dr$sd_method__Intercept, sigma_gamma = dr$sd_realization__Intercept)
for (m in methods) {
  b[[sprintf("mu[%s]", m)]] <- dr$b_Intercept + dr[[sprintf("r_method[%s,Intercept]", m)]]
  b[[sprintf("sigma[%s]", m)]] <- exp(dr[[sprintf("b_sigma_method%s", m)]])
}
rows <- lapply(names(b), function(p) {
  x <- b[[p]]
  c(brms_mean = mean(x), brms_sd = sd(x), credence_mean = cr$parameters[[p]]$mean,
    credence_sd = cr$parameters[[p]]$sd)
})
tab <- as.data.frame(do.call(rbind, rows))
rownames(tab) <- names(b)
tab$diff_in_sd <- (tab$credence_mean - tab$brms_mean) / tab$brms_sd
print(round(tab, 4))
div_brms <- sum(subset(nuts_params(fit), Parameter == "divergent__")$Value)
cat(sprintf("\nlargest |posterior mean difference| = %.3f posterior sd (%s)\n",
            max(abs(tab$diff_in_sd)), rownames(tab)[which.max(abs(tab$diff_in_sd))]))
cat(sprintf("largest sd ratio credence/brms = %.3f, smallest = %.3f\n",
            max(tab$credence_sd / tab$brms_sd), min(tab$credence_sd / tab$brms_sd)))
cat(sprintf("divergences: brms %d, credence %d\n", div_brms, cr$diagnostics$divergences))
cat(sprintf("wall clock: credence %.2f s (fit %.3f s); brms compile + sample %.1f s, sample only %.1f s\n",
            t_credence, cr$seconds, t_brms_total, t_brms_sample))
