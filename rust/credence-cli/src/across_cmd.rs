//! `credence fit --dataset-column COLUMN`: methods compared across several data sets with the
//! across-data-sets model (`credence::compare::fit_across`), printed brms-style.

use anyhow::{Result, bail};
use clap::{Args, ValueEnum};
use credence::backend::Backend;
use credence::compare::{
    AcrossDesign, AcrossFitOptions, AcrossOptions, AcrossPriors, AcrossScale, AcrossSigma, AcrossSummary, Interaction,
    MethodEffects, ScalePrior, fit_across_with_progress,
};

use crate::fit_cmd::{FitArgs, SamplerKind, nuts_settings, with_progress};
use crate::table::{number, render};

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
    /// study` table is already in each data set's pool units) or per-dataset (each data set's
    /// values centred and divided by their sd; effects in data-set sds).
    #[arg(long, value_enum, default_value = "as-given", requires = "dataset_column")]
    pub across_scale: ScaleArg,
    /// Across data sets: residual sds per-cell (one per data set and method) or per-method.
    #[arg(long, value_enum, default_value = "per-cell", requires = "dataset_column")]
    pub across_sigma: SigmaArg,
    /// Across data sets: the method-by-data-set interaction, normal, student-t (df estimated;
    /// one data set far off pulls a method's effect less) or student-t-per-data-set (one
    /// mixing variance per data set: a data set on which the methods differ unusually pulls
    /// less; baycomp's model for two methods).
    #[arg(long, value_enum, default_value = "normal", requires = "dataset_column")]
    pub interaction: InteractionArg,
    /// Across data sets: the methods' population effects pooled (delta ~ normal(0, tau_delta),
    /// the default) or flat (no shrinkage of the differences, baycomp's prior).
    #[arg(long, value_enum, default_value = "pooled", requires = "dataset_column")]
    pub method_effects: MethodEffectsArg,
    /// Across data sets: prior of tau_delta, the sd of the method effects (default
    /// half_normal(1)).
    #[arg(long, value_name = "PRIOR", requires = "dataset_column")]
    pub prior_tau_delta: Option<ScalePrior>,
    /// Across data sets: prior of tau_u, the interaction's scale (default half_normal(1)).
    #[arg(long, value_name = "PRIOR", requires = "dataset_column")]
    pub prior_tau_u: Option<ScalePrior>,
    /// Across data sets: prior of a Student-t interaction's df > 1 (default gamma(2, 0.1);
    /// baycomp_nu() is baycomp's).
    #[arg(long, value_name = "PRIOR", requires = "dataset_column")]
    pub prior_df: Option<ScalePrior>,
    /// Across data sets: baycomp's hierarchical test as this model's options (flat method
    /// effects and data-set levels, Student-t per data set, baycomp's df prior, flat scales;
    /// only differences of delta are identified). With --rope, the left/rope/right answer is
    /// baycomp's for each pair.
    #[arg(
        long,
        requires = "dataset_column",
        conflicts_with_all = ["interaction", "method_effects", "prior_tau_delta", "prior_tau_u", "prior_df"]
    )]
    pub baycomp: bool,
}

/// `--method-effects`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MethodEffectsArg {
    /// delta\[m\] ~ Normal(0, tau_delta).
    Pooled,
    /// A flat prior on each delta\[m\].
    Flat,
}

/// `--across-scale`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ScaleArg {
    /// The values as given.
    AsGiven,
    /// Each data set centred and scaled by its own sd.
    PerDataset,
}

/// `--across-sigma`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SigmaArg {
    /// One sigma per (data set, method).
    PerCell,
    /// One sigma per method.
    PerMethod,
}

/// `--interaction`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InteractionArg {
    /// Normal(0, tau_u).
    Normal,
    /// Student-t(df, 0, tau_u).
    StudentT,
    /// Student-t with one mixing variance per data set.
    StudentTPerDataSet,
}

/// The single-data-set options that have no meaning here, as (given, flag).
fn unsupported(a: &FitArgs) -> Vec<&'static str> {
    let m = &a.model;
    [
        (a.sampler == SamplerKind::Chees, "--sampler chees"),
        (a.backend.is_some_and(|b| b != Backend::Cpu), "--backend auto/cuda"),
        (m.family.replace('_', "-") != "gaussian", "--family other than gaussian"),
        (m.trials.is_some(), "--trials"),
        (m.target.is_some(), "--target"),
        (m.shared_sigma, "--shared-sigma (use --across-sigma per-method)"),
        (m.student_t, "--student-t (use --interaction student-t)"),
        (m.standardize, "--standardize (use --across-scale per-dataset)"),
        (m.phi_per_method, "--phi-per-method"),
        (m.realization_effect, "--realization-effect"),
        (m.prior_mu0.is_some(), "--prior-mu0"),
        (m.prior_tau.is_some(), "--prior-tau"),
        (m.prior_phi.is_some(), "--prior-phi"),
        (a.save_draws.is_some(), "--save-draws"),
    ]
    .into_iter()
    .filter_map(|(given, flag)| given.then_some(flag))
    .collect()
}

/// The fit's options from the command line.
fn options(a: &FitArgs) -> Result<AcrossFitOptions> {
    let d = AcrossPriors::default();
    let x = &a.across;
    // --baycomp sets what the options below it would (clap refuses them beside it).
    let mut model = if x.baycomp {
        AcrossOptions::baycomp()
    } else {
        AcrossOptions {
            interaction: match x.interaction {
                InteractionArg::Normal => Interaction::Normal,
                InteractionArg::StudentT => Interaction::StudentT,
                InteractionArg::StudentTPerDataSet => Interaction::StudentTPerDataSet,
            },
            method_effects: match x.method_effects {
                MethodEffectsArg::Pooled => MethodEffects::Pooled,
                MethodEffectsArg::Flat => MethodEffects::Flat,
            },
            priors: AcrossPriors {
                tau_delta: x.prior_tau_delta.unwrap_or(d.tau_delta),
                tau_u: x.prior_tau_u.unwrap_or(d.tau_u),
                df: x.prior_df.unwrap_or(d.df),
                ..d
            },
            ..AcrossOptions::default()
        }
    };
    model.scale = match x.across_scale {
        ScaleArg::AsGiven => AcrossScale::AsGiven,
        ScaleArg::PerDataset => AcrossScale::PerDataSet,
    };
    model.sigma = match x.across_sigma {
        SigmaArg::PerCell => AcrossSigma::PerCell,
        SigmaArg::PerMethod => AcrossSigma::PerMethod,
    };
    model.no_realization_effect = a.model.no_realization_effect;
    model.priors.sigma = a.model.prior_sigma.unwrap_or(model.priors.sigma);
    model.priors.sigma_gamma = a.model.prior_sigma_gamma.unwrap_or(model.priors.sigma_gamma);
    model.validate()?;
    Ok(AcrossFitOptions { model, sampler: nuts_settings(a)?, higher_is_better: a.model.higher_is_better })
}

/// Runs `credence fit --dataset-column COLUMN`.
pub fn run(a: &FitArgs, column: &str) -> Result<()> {
    let bad = unsupported(a);
    if !bad.is_empty() {
        bail!("--dataset-column fits the across-data-sets model (NUTS, gaussian), which has no {}", bad.join(", "));
    }
    let options = options(a)?;
    let response = a.model.response()?;
    let table = a.model.load_table(&a.data)?;
    let (design, mut notes) =
        AcrossDesign::from_table(&table, response, column, &a.model.group, a.model.pair.as_deref())?;
    let message = format!("({} data sets, {} methods)", design.datasets().len(), design.methods().len());
    let fit = with_progress(&message, |p| fit_across_with_progress(&design, &options, p))??;
    let mut summary = AcrossSummary::new(&fit, a.rope)?;
    // The table's notes first, then the fit's own warnings.
    notes.append(&mut summary.warnings);
    summary.warnings = notes;
    crate::fit_cmd::emit(a.json.as_deref(), &summary, || print_tables(&summary, a))
}

/// The header: model, form, data, draws and sampler, as brms prints them.
fn print_header(s: &AcrossSummary, a: &FitArgs) {
    let m = &s.model;
    outln!(
        "  Model: across data sets (sigma {}, {} interaction{}{})",
        if m.sigma == AcrossSigma::PerCell { "per data set and method" } else { "per method" },
        match m.interaction {
            Interaction::Normal => "normal",
            Interaction::StudentT => "Student-t",
            Interaction::StudentTPerDataSet => "Student-t per data set",
        },
        if m.method_effects == MethodEffects::Flat { ", flat method effects" } else { "" },
        if s.data.realizations > 0 && !m.no_realization_effect { ", realization effect" } else { "" }
    );
    outln!("   Form: {}", s.form);
    outln!(
        "   Data: {} ({} observations, {} data sets, {} methods, {} realizations)",
        a.data.display(),
        s.data.observations,
        s.data.datasets.len(),
        s.data.methods.len(),
        s.data.realizations
    );
    outln!(
        "  Scale: {}",
        if s.scale == "per_data_set" { "per data set (effects in data-set sds)" } else { "as given" }
    );
    let sm = &s.sampler;
    outln!(
        "  Draws: {} chains, each with iter = {}; warmup = {}; total post-warmup draws = {}",
        sm.chains,
        sm.warmup + sm.draws,
        sm.warmup,
        sm.chains as u64 * sm.draws
    );
    let halving = match sm.walnuts {
        Some(e) => format!("steps halved beyond energy error {e}"),
        None => "fixed steps".into(),
    };
    outln!("Sampler: NUTS ({halving}), target acceptance {}", sm.target_accept);
    outln!(" Fitted in {:.3} s\n", s.seconds);
}

fn print_tables(s: &AcrossSummary, a: &FitArgs) {
    print_header(s, a);
    out!("{}", render(&crate::fit_cmd::parameter_rows(&s.parameters)));
    let better = if s.higher_is_better { "higher" } else { "lower" };
    outln!("\nP(best on a new data set), {better} is better:");
    let mut rows = vec![["method", "delta", "P(best)"].map(String::from).to_vec()];
    for m in &s.ranking {
        let delta = s.parameters.iter().find(|p| p.name == format!("delta[{m}]")).map(|p| p.mean);
        let p = s.prob_best_new.iter().find(|(x, _)| x == m).map(|(_, p)| *p);
        rows.push(vec![m.clone(), number(delta), p.map_or_else(|| "-".into(), |p| format!("{p:.3}"))]);
    }
    out!("{}", render(&rows));
    print_pairs(s);
    let v = &s.variance_share;
    outln!(
        "\nMethod share of the variance: {:.3} [{:.3}, {:.3}] (the methods' variation common to all data sets, \
         against the method-by-data-set interaction)",
        v.mean,
        v.q2_5,
        v.q97_5
    );
    let d = &s.diagnostics;
    outln!(
        "Diagnostics: {} divergent transition(s), {} at the maximum tree depth, largest R-hat {:.4}, smallest \
         bulk-ESS {:.0}",
        d.divergences,
        d.treedepth_hits,
        d.max_rhat,
        d.min_ess_bulk
    );
    if !s.warnings.is_empty() {
        outln!();
        for n in &s.warnings {
            outln!("Warning: {n}");
        }
    }
}

/// The compared pairs, each with A ahead of B in the ranking.
fn ranked_pairs(s: &AcrossSummary) -> Vec<(&String, &String)> {
    let mut out = Vec::new();
    for (i, x) in s.ranking.iter().enumerate() {
        for y in &s.ranking[i + 1..] {
            if s.pairwise.get(x, y).is_some() {
                out.push((x, y));
            }
        }
    }
    out
}

/// The pairs on a new data set (with the ROPE decision when asked for) and on each data set.
fn print_pairs(s: &AcrossSummary) {
    let pairs = ranked_pairs(s);
    outln!("\nP(A better than B) on a new data set:");
    let mut head = vec!["A", "B", "P(A better)", "MCSE"];
    if s.rope_eps.is_some() {
        head.extend(["P(A - B < -eps)", "P(rope)", "P(A - B > eps)", "most probable (left/rope/right)"]);
    }
    let mut rows = vec![head.into_iter().map(String::from).collect::<Vec<_>>()];
    for &(x, y) in &pairs {
        let Some(p) = s.pairwise.get(x, y) else { continue };
        let mut row =
            vec![x.clone(), y.clone(), format!("{:.3}", p.prob_better_new), format!("{:.3}", p.prob_better_new_mcse)];
        if let Some(r) = &p.rope {
            let [l, o, g] = r.most_probable;
            row.extend([
                format!("{:.3}", r.left),
                format!("{:.3}", r.rope),
                format!("{:.3}", r.right),
                format!("{l:.3} / {o:.3} / {g:.3}"),
            ]);
        }
        rows.push(row);
    }
    out!("{}", render(&rows));
    if let Some(eps) = s.rope_eps {
        outln!(
            "ROPE |A - B| <= {eps} on the metric's scale; \"most probable\" is baycomp's answer: the share of draws \
             in which each region is the most probable for the next data set."
        );
    }
    outln!("\nP(A better than B) on each data set:");
    let mut rows =
        vec![std::iter::once("A - B".to_string()).chain(s.data.datasets.iter().cloned()).collect::<Vec<_>>()];
    for &(x, y) in &pairs {
        let Some(p) = s.pairwise.get(x, y) else { continue };
        let cell = |d: &String| {
            p.prob_better_on.iter().find(|(e, _)| e == d).map_or_else(|| "-".into(), |(_, v)| format!("{v:.3}"))
        };
        rows.push(std::iter::once(format!("{x} - {y}")).chain(s.data.datasets.iter().map(cell)).collect());
    }
    out!("{}", render(&rows));
}
