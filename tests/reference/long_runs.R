#!/usr/bin/env Rscript
# Independent long-run reference posteriors (rstan) for the tables in tests/data/long_runs/.
#
# Usage: Rscript tests/reference/long_runs.R      (from the repository root)
# Reads every tests/data/long_runs/*.csv (columns method, realization, crps; any other column,
# e.g. `table`, is ignored) and writes tests/data/long_runs/reference.json.
#
# Model (credence's Gaussian hierarchical model, default priors):
#   y[m,i] = mu[m] + gamma[i] + eps,  eps ~ N(0, sigma[m]),  gamma[i] ~ N(0, sigma_gamma),
#   mu[m] ~ N(mu0, tau),  mu0 ~ N(0, 1),  tau, sigma[m], sigma_gamma ~ HalfNormal(1).
#
# Formulation (deliberately independent of credence's own algebra): mu0, mu and gamma are
# integrated out by writing the whole table as ONE dense multivariate normal,
#   y ~ N(0, V),  V = 1 1' + tau^2 Zm Zm' + sigma_gamma^2 Zg Zg' + diag(sigma[method]^2),
# (Zm / Zg: method / realization indicator matrices; mean 0 = prior mean of mu0, the 1 1'
# term is its prior variance), evaluated with a full N x N Cholesky factor. Stan samples only
# tau, sigma_gamma and sigma[] (<lower=0>, normal(0, 1) priors = half-normal). In generated
# quantities (mu0, mu) is drawn exactly from its Gaussian conditional given the scales and y
# by dense Gaussian conditioning (posterior mean C_xy V^-1 y, covariance C_xx - C_xy V^-1 C_yx,
# then multi_normal_rng). The conditioning is done on the standardised x = (mu0, (mu-mu0)/tau),
# prior N(0, I), which is the same distribution as conditioning (mu0, mu) with prior covariance
# 1 1' + tau^2 I but stays positive definite as tau -> 0.
# Checked during development: the log density matches mvtnorm::dmvnorm with V built from an
# explicit linear map of independent latents (to 1e-9), and 2e5 gqs() draws at fixed scales
# match the exact conditional mean / sd / correlation of (mu0, mu).
#
# Settings: 4 chains, 5000 warmup + 25000 kept draws per chain, adapt_delta 0.99,
# max_treedepth 12, fixed seed, chains run sequentially in one R process. Targets: 0 divergent
# transitions, max R-hat <= 1.005, bulk ESS >= 10000 for every reported parameter (posterior
# package). If a run has divergences it is repeated with adapt_delta 0.999 and 10000 warmup;
# every attempt and whether the targets were met is recorded in the JSON.
# Needs Debian's r-cran-rstan (2.21), posterior, jsonlite.

suppressPackageStartupMessages({
  library(rstan)
  library(posterior)
  library(jsonlite)
})
rstan::rstan_options(boost_lib = "/usr/include")  # else Boost is "not found" with Debian's rstan
makevars <- tempfile("Makevars")
writeLines("CXX14FLAGS = -O3", makevars)  # -march=native crashes with the prebuilt rstan library
Sys.setenv(R_MAKEVARS_USER = makevars)

data_dir <- file.path("tests", "data", "long_runs")
out_file <- file.path(data_dir, "reference.json")
if (!dir.exists(data_dir)) stop("run from the repository root (", data_dir, " not found)")

settings <- list(
  chains = 4L, warmup = 5000L, draws_per_chain = 25000L, adapt_delta = 0.99,
  max_treedepth = 12L, seed = 20260517L, cores = 1L,
  retry_on_divergence = list(adapt_delta = 0.999, warmup = 10000L),
  targets = list(divergences = 0L, max_rhat = 1.005, min_ess_bulk = 10000),
  summaries = "posterior::summarise_draws(mean, sd, mcse_mean, rhat, ess_bulk)",
  formulation = paste(
    "y ~ multi_normal_cholesky(0, chol(V)), V = 11' + tau^2 ZmZm' + sigma_gamma^2 ZgZg' +",
    "diag(sigma[method]^2); tau, sigma_gamma, sigma sampled (half-normal(1));",
    "(mu0, mu) drawn exactly from the Gaussian conditional in generated quantities"),
  rstan_version = as.character(packageVersion("rstan")),
  posterior_version = as.character(packageVersion("posterior"))
)

stan_code <- "
functions {
  // V = 1 1' + tau^2 Zm Zm' + sigma_gamma^2 Zg Zg' + diag(sigma[method]^2), filled
  // element-wise from shared scalars (same values as the matrix expression, fewer autodiff nodes).
  matrix marginal_cov(real tau, real sigma_gamma, vector sigma, int[] method, int[] real_idx) {
    int N = size(method);
    matrix[N, N] V;
    real v_m = 1 + square(tau);            // same method, different realization
    real v_g = 1 + square(sigma_gamma);    // same realization, different method
    vector[rows(sigma)] v_d = 1 + square(tau) + square(sigma_gamma) + square(sigma);  // diagonal
    for (j in 1:N) {
      for (i in 1:N) {
        if (i == j) V[i, j] = v_d[method[i]];
        else if (method[i] == method[j]) V[i, j] = v_m;
        else if (real_idx[i] == real_idx[j]) V[i, j] = v_g;
        else V[i, j] = 1;
      }
    }
    return V;
  }
}
data {
  int<lower=1> N;
  int<lower=1> M;
  int<lower=1> R;
  int<lower=1, upper=M> method[N];
  int<lower=1, upper=R> real_idx[N];
  vector[N] y;
}
parameters {
  real<lower=0> tau;
  real<lower=0> sigma_gamma;
  vector<lower=0>[M] sigma;
}
model {
  tau ~ normal(0, 1);
  sigma_gamma ~ normal(0, 1);
  sigma ~ normal(0, 1);
  y ~ multi_normal_cholesky(rep_vector(0, N),
                            cholesky_decompose(marginal_cov(tau, sigma_gamma, sigma, method, real_idx)));
}
generated quantities {
  // Exact draw of (mu0, mu) | scales, y, conditioning the standardised x = (mu0, (mu - mu0) / tau),
  // prior N(0, I), E[y | x] = G x with G = [1, tau * Zm]:
  //   Cov(x, y) = G',  E[x | y] = G' V^-1 y,  Cov(x | y) = I - G' V^-1 G.
  real mu0;
  vector[M] mu;
  {
    matrix[N, N] L = cholesky_decompose(marginal_cov(tau, sigma_gamma, sigma, method, real_idx));
    matrix[N, M + 1] G = rep_matrix(0.0, N, M + 1);
    matrix[N, M + 1] A;
    matrix[M + 1, M + 1] C;
    vector[M + 1] x;
    for (i in 1:N) { G[i, 1] = 1.0; G[i, 1 + method[i]] = tau; }
    A = mdivide_left_tri_low(L, G);                         // L^-1 G
    C = diag_matrix(rep_vector(1.0, M + 1)) - crossprod(A); // I - G' V^-1 G
    x = multi_normal_rng(A' * mdivide_left_tri_low(L, y), 0.5 * (C + C'));
    mu0 = x[1];
    for (k in 1:M) mu[k] = x[1] + tau * x[1 + k];
  }
}
"

message("compiling Stan model ...")
model <- stan_model(model_code = stan_code, model_name = "credence_long_runs")

fit_table <- function(path) {
  d <- read.csv(path, stringsAsFactors = FALSE)
  methods <- unique(as.character(d$method))
  reals <- unique(as.character(d$realization))
  dat <- list(N = nrow(d), M = length(methods), R = length(reals),
              method = match(d$method, methods), real_idx = match(d$realization, reals),
              y = as.numeric(d$crps))
  stan_pars <- c("mu0", "tau", "sigma_gamma", paste0("mu[", seq_along(methods), "]"),
                 paste0("sigma[", seq_along(methods), "]"))
  out_names <- c("mu0", "tau", "sigma_gamma", paste0("mu[", methods, "]"),
                 paste0("sigma[", methods, "]"))
  attempts <- list()
  tries <- list(list(adapt_delta = settings$adapt_delta, warmup = settings$warmup),
                settings$retry_on_divergence)
  for (k in seq_along(tries)) {
    tr <- tries[[k]]
    message(sprintf("%s: attempt %d (adapt_delta %g, warmup %d) ...", basename(path), k,
                    tr$adapt_delta, tr$warmup))
    t0 <- proc.time()[["elapsed"]]
    fit <- sampling(model, data = dat, chains = settings$chains, cores = settings$cores,
                    warmup = tr$warmup, iter = tr$warmup + settings$draws_per_chain,
                    seed = settings$seed, refresh = 0,
                    control = list(adapt_delta = tr$adapt_delta,
                                   max_treedepth = settings$max_treedepth))
    secs <- proc.time()[["elapsed"]] - t0
    sp <- get_sampler_params(fit, inc_warmup = FALSE)
    div <- sum(sapply(sp, function(s) sum(s[, "divergent__"])))
    tdhits <- sum(sapply(sp, function(s) sum(s[, "treedepth__"] >= settings$max_treedepth)))
    draws <- as_draws_array(as.array(fit, pars = stan_pars))
    s <- summarise_draws(draws, "mean", "sd", "mcse_mean", "rhat", "ess_bulk")
    s <- s[match(stan_pars, s$variable), ]
    params <- list()
    for (j in seq_len(nrow(s))) {
      params[[out_names[j]]] <- list(mean = s$mean[j], sd = s$sd[j], mcse_mean = s$mcse_mean[j],
                                     rhat = s$rhat[j], ess_bulk = s$ess_bulk[j])
    }
    res <- list(
      parameters = params, divergences = div, max_rhat = max(s$rhat), min_ess_bulk = min(s$ess_bulk),
      seconds = round(secs, 1), max_treedepth_hits = tdhits,
      mean_leapfrog_steps = mean(unlist(lapply(sp, function(s) s[, "n_leapfrog__"]))),
      adapt_delta = tr$adapt_delta, warmup = tr$warmup, draws_per_chain = settings$draws_per_chain,
      n_obs = dat$N, methods = methods, n_realizations = dat$R)
    res$targets_met <- div == settings$targets$divergences && res$max_rhat <= settings$targets$max_rhat &&
      res$min_ess_bulk >= settings$targets$min_ess_bulk
    message(sprintf("  %.0f s, divergences %d, max rhat %.5f, min ess_bulk %.0f, targets met: %s",
                    secs, div, res$max_rhat, res$min_ess_bulk, res$targets_met))
    attempts[[k]] <- res[c("adapt_delta", "warmup", "divergences", "max_rhat", "min_ess_bulk", "seconds")]
    if (div == 0) break
  }
  res$attempts <- attempts
  res
}

files <- sort(list.files(data_dir, pattern = "\\.csv$", full.names = TRUE))
tables <- list()
for (f in files) tables[[basename(f)]] <- fit_table(f)

out <- list(stan_version = stan_version(), settings = settings, tables = tables)
writeLines(toJSON(out, auto_unbox = TRUE, pretty = TRUE, digits = NA), out_file)
message("wrote ", out_file)
