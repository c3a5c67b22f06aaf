//! `credence fit`: the hierarchical comparison of methods from a long metric table, on one data
//! set or, with `--dataset-column`, across data sets. The flags fill one
//! [`FitRequest`]; the core resolves and checks it.

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::Args;
use credence::backend::Backend;
use credence::compare::{
    AcrossDesign, AcrossScale, AcrossSigma, Draws, Interaction, MethodEffects, Pairs, SamplerName, TableFormat,
};
use credence::request::{EnergyError, FitRequest};

use crate::model_args::ModelArgs;
use crate::output::{emit, with_progress};

/// Arguments of `credence fit`.
#[derive(Debug, Args)]
pub struct FitArgs {
    /// Long CSV table: one row per method x realization (x data set with --dataset-column).
    pub(crate) data: PathBuf,
    /// The table's columns and the model.
    #[command(flatten)]
    pub model: ModelArgs,
    /// A data set column and the across-data-sets model's options.
    #[command(flatten)]
    pub across: AcrossArgs,
    /// The sampler and what the summary computes.
    #[command(flatten)]
    pub sampler: SamplerArgs,
    /// Write the JSON result to this file ("-" for standard output, instead of the tables).
    #[arg(long)]
    pub(crate) json: Option<String>,
    /// Write all draws (posterior's draws_df layout) to this CSV file.
    #[arg(long)]
    pub(crate) save_draws: Option<PathBuf>,
    /// Print the paper's table (one row per method: posterior mean, P(best), expected rank,
    /// P(better than next), IQM) as markdown or latex instead of the text tables (one data set).
    #[arg(long, value_name = "markdown|latex")]
    pub(crate) table: Option<TableFormat>,
}

/// The sampler's options and the summary's (defaults in the core; `credence fit --help`).
#[derive(Debug, Args)]
pub struct SamplerArgs {
    /// Sampler: nuts (Stan's algorithm, 4 chains; the default) or chees (batched ChEES-HMC:
    /// superchains of chains in lockstep, with nested R-hat).
    #[arg(long)]
    pub(crate) sampler: Option<SamplerName>,
    /// Number of chains (NUTS; default 4).
    #[arg(long)]
    pub(crate) chains: Option<usize>,
    /// Where ChEES runs: auto (the GPU when CUDA is usable and its kernel implements the model,
    /// else the CPU; the default), cpu or cuda (an error when it cannot run there). NUTS runs
    /// on the CPU.
    #[arg(long)]
    pub(crate) backend: Option<Backend>,
    /// ChEES: number of superchains (chains of one superchain share their initial point).
    #[arg(long)]
    pub(crate) superchains: Option<usize>,
    /// ChEES: chains per superchain.
    #[arg(long)]
    pub(crate) chains_per_superchain: Option<usize>,
    /// Warmup iterations per chain (default 300 for NUTS, 75 for ChEES).
    #[arg(long)]
    pub(crate) warmup: Option<u64>,
    /// Kept draws per chain (default 800 for NUTS, 100 for ChEES).
    #[arg(long)]
    pub(crate) draws: Option<u64>,
    /// Kept draws per chain at most: a fit that is not clean after --draws is run longer, in
    /// blocks of draws / 2 (default 2000 for NUTS, 200 for ChEES; --max-draws equal to --draws
    /// keeps the length fixed).
    #[arg(long)]
    pub(crate) max_draws: Option<u64>,
    /// Seed (identical results for the same seed, whatever the thread count; default 1).
    #[arg(long)]
    pub(crate) seed: Option<u64>,
    /// Target acceptance rate of the step-size adaptation (Stan's adapt_delta; default 0.8).
    #[arg(long)]
    pub(crate) target_accept: Option<f64>,
    /// Energy error beyond which a leapfrog step is halved (WALNUTS-style within-orbit
    /// adaptation, default 2), or `none` for fixed steps (plain NUTS, Stan's algorithm).
    #[arg(long, value_name = "ERROR|none")]
    pub(crate) max_energy_error: Option<EnergyError>,
    /// Power for the minimum detectable difference (default 0.8).
    #[arg(long)]
    pub(crate) power: Option<f64>,
    /// Realizations of a planned experiment for the MDD (default 1: one new realization).
    #[arg(long)]
    pub(crate) r_new: Option<f64>,
    /// Also report P(|mu_A - mu_B| < EPS) for every pair compared (with --dataset-column:
    /// baycomp's decision on a new data set, P(A - B < -EPS), P(|A - B| <= EPS), P(A - B > EPS)).
    #[arg(long)]
    pub(crate) rope: Option<f64>,
    /// Pairs of methods compared: all (every ordered pair), ranked (each method against the
    /// next in the ranking by posterior mean, and the best against every other), or auto (all
    /// up to 20 methods, ranked beyond; the default).
    #[arg(long)]
    pub(crate) pairs: Option<Pairs>,
}

/// The data set column and the across-data-sets model's options of `credence fit`.
#[derive(Debug, Args)]
pub struct AcrossArgs {
    /// Column naming the data set: fit the across-data-sets model (data-set levels, method
    /// effects, method-by-data-set interactions, realization effects) and report P(A better
    /// than B) on each data set and on a new one, P(best on a new data set) and the method
    /// share of the variance.
    #[arg(long, value_name = "COLUMN")]
    pub dataset_column: Option<String>,
    /// Across data sets: the comparable scale, as-given (the values as they are; a `credence
    /// study` table is already in each data set's pool units; the default) or per-dataset
    /// (each data set's values centred and divided by their sd; effects in data-set sds).
    #[arg(long)]
    pub across_scale: Option<AcrossScale>,
    /// Across data sets: residual sds per-cell (one per data set and method; the default) or
    /// per-method.
    #[arg(long)]
    pub across_sigma: Option<AcrossSigma>,
    /// Across data sets: the method-by-data-set interaction, normal (the default), student-t
    /// (df estimated; one data set far off pulls a method's effect less) or
    /// student-t-per-data-set (one mixing variance per data set: a data set on which the
    /// methods differ unusually pulls less; baycomp's model for two methods).
    #[arg(long)]
    pub interaction: Option<Interaction>,
    /// Across data sets: the methods' population effects pooled (delta ~ normal(0, tau_delta),
    /// the default) or flat (no shrinkage of the differences, baycomp's prior).
    #[arg(long)]
    pub method_effects: Option<MethodEffects>,
    /// Across data sets: prior of tau_delta, the sd of the method effects (default
    /// half_normal(1)).
    #[arg(long, value_name = "PRIOR")]
    pub prior_tau_delta: Option<String>,
    /// Across data sets: prior of tau_u, the interaction's scale (default half_normal(1)).
    #[arg(long, value_name = "PRIOR")]
    pub prior_tau_u: Option<String>,
    /// Across data sets: prior of a Student-t interaction's df > 1 (default gamma(2, 0.1);
    /// baycomp_nu() is baycomp's).
    #[arg(long, value_name = "PRIOR")]
    pub prior_df: Option<String>,
    /// Across data sets: baycomp's hierarchical test as this model's options (flat method
    /// effects and data-set levels, Student-t per data set, baycomp's df prior, flat scales;
    /// only differences of delta are identified). With --rope, the left/rope/right answer is
    /// baycomp's for each pair.
    #[arg(long)]
    pub baycomp: bool,
}

impl AcrossArgs {
    /// `request` with the across-data-sets model's options of these flags.
    pub(crate) fn apply(&self, request: FitRequest) -> FitRequest {
        let across = [("tau_delta", &self.prior_tau_delta), ("tau_u", &self.prior_tau_u), ("df", &self.prior_df)];
        FitRequest {
            priors: request.priors.clone().into_iter().chain(crate::model_args::priors(&across)).collect(),
            across_scale: self.across_scale,
            across_sigma: self.across_sigma,
            interaction: self.interaction,
            method_effects: self.method_effects,
            baycomp: self.baycomp,
            ..request
        }
    }
}

impl FitArgs {
    /// The request the flags make.
    pub(crate) fn request(&self) -> FitRequest {
        let s = &self.sampler;
        self.across.apply(FitRequest {
            sampler: s.sampler.unwrap_or_default(),
            chains: s.chains,
            superchains: s.superchains,
            chains_per_superchain: s.chains_per_superchain,
            warmup: s.warmup,
            draws: s.draws,
            max_draws: s.max_draws,
            seed: s.seed,
            target_accept: s.target_accept,
            max_energy_error: s.max_energy_error.clone(),
            backend: s.backend.unwrap_or_default(),
            power: s.power,
            r_new: s.r_new,
            rope: s.rope,
            pairs: s.pairs.unwrap_or_default(),
            ..self.model.request()
        })
    }
}

/// Runs `credence fit`.
pub fn run(a: FitArgs) -> Result<()> {
    let outputs = [("--json", a.json.as_deref().map(Path::new)), ("--save-draws", a.save_draws.as_deref())];
    crate::output::guard(&[&a.data], &outputs)?;
    let request = a.request();
    let save = |draws: &Draws| -> Result<()> {
        if let Some(path) = &a.save_draws {
            let mut bytes = Vec::new();
            draws.write_draws_csv(&mut bytes)?;
            credence::io::write_atomic(path, &bytes)?;
        }
        Ok(())
    };
    let Some(column) = a.across.dataset_column.as_deref() else {
        let (design, repeats, notes) = a.model.load_repeated_design(&a.data)?;
        let message = format!("({} methods)", design.n_groups());
        let start = std::time::Instant::now();
        let mut fit = with_progress(&message, |p| request.fit(&design, p))??;
        if let Some(r) = repeats {
            fit = fit.with_repeats(r);
        }
        save(&fit)?;
        let stage = format!("Summarising: the pairs, ranks and cross-checks of {} methods", design.n_groups());
        crate::output::stage_line(start, &stage);
        let mut summary = request.summarize(&fit)?;
        // The table's notes first, then the fit's own warnings.
        summary.warnings = notes.into_iter().chain(summary.warnings).collect();
        let metric = match &a.model.trials {
            Some(n) => format!("{}/{n}", a.model.response()?),
            None => a.model.response()?.to_owned(),
        };
        return emit(a.json.as_deref(), &summary, || match a.table {
            Some(format) => out!("{}", summary.paper_table().render(format)),
            None => crate::fit_print::print_tables(&summary, &a.data, &metric),
        });
    };
    if a.table.is_some() {
        anyhow::bail!("--table: the paper table is of one data set's fit, not of --dataset-column's model");
    }
    if a.model.trials.is_some() {
        anyhow::bail!("--trials: the across-data-sets model (--dataset-column) fits a metric, not counts");
    }
    a.model.no_repeat_across()?;
    let table = a.model.load_table(&a.data)?;
    let (design, notes) =
        AcrossDesign::from_table(&table, a.model.response()?, column, &a.model.group, a.model.pair.as_deref())?;
    let message = format!("({} data sets, {} methods)", design.datasets().len(), design.methods().len());
    let fit = with_progress(&message, |p| request.fit_across(&design, p))??;
    save(&fit)?;
    let mut summary = request.summarize_across(&fit)?;
    summary.warnings = notes.into_iter().chain(summary.warnings).collect();
    let metric = a.model.response()?;
    emit(a.json.as_deref(), &summary, || crate::across_print::print_tables(&summary, &a.data, metric))
}
