//! `credence quantiles FILE.csv`: quantiles of a metric over repeated runs with
//! distribution-free confidence intervals; `credence quantiles min-n`: the smallest number of
//! runs for which the intervals exist.

use std::path::PathBuf;

use anyhow::{Result, bail};
use clap::{Args, Subcommand};
use credence::io::Table;
use credence::quantiles::{
    AsymptoticAt, BootstrapStatistic, CiMethod, CiOptions, QuantileType, min_n_asymptotic, min_n_exact, quantile_table,
};
use serde_json::{Map, Value, json};

use crate::table::{number, render};

/// Arguments of `credence quantiles`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct QuantilesArgs {
    #[command(subcommand)]
    command: Option<QuantilesCommand>,
    /// A long CSV table with one row per run.
    #[arg(required = true)]
    file: Option<PathBuf>,
    /// The metric column.
    #[arg(long, required = true)]
    column: Option<String>,
    /// Group by these columns (comma-separated, e.g. method,n); one result per group, sorted by
    /// dataset, n (or intensity) and method among them, then the others, numbers numerically.
    #[arg(long, value_delimiter = ',')]
    by: Vec<String>,
    /// Quantile levels, each in (0, 1).
    #[arg(long, value_delimiter = ',', allow_negative_numbers = true, default_value = "0.1,0.5,0.9")]
    u: Vec<f64>,
    /// Confidence level 1 - alpha.
    #[arg(long, default_value_t = 0.9)]
    level: f64,
    /// exact (minimum length), equal-tailed, asymptotic, bootstrap (Monte Carlo) or
    /// bootstrap-exact (its B -> infinity limit).
    #[arg(long, default_value = "exact")]
    method: String,
    /// Sample-quantile type of the point estimate: 1, 6 or 7.
    #[arg(long = "type", default_value = "7")]
    quantile_type: String,
    /// For u < 0.5, the interval as minus that of the (1 - u)-quantile of -x (mirrored
    /// intervals); by default the quantile study's rule applies the formulas at u itself.
    #[arg(long)]
    flip_lower: bool,
    /// Asymptotic interval: read at the levels k/n, l/n by the type-6 estimator (levels, the
    /// study's) or at the order-statistic positions k, l (positions).
    #[arg(long, default_value = "levels")]
    asymptotic_at: String,
    /// Bootstrap replicates' statistic: the resample's sample quantile (sample-quantile, the
    /// study's) or its order statistic of rank round((n + 1) u) (order-statistic).
    #[arg(long, default_value = "sample-quantile")]
    bootstrap_statistic: String,
    /// Bootstrap replicates.
    #[arg(long, default_value_t = 2000)]
    replicates: usize,
    /// Bootstrap seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

/// Subcommands of `credence quantiles`.
#[derive(Debug, Subcommand)]
enum QuantilesCommand {
    /// The minimum number of runs for exact and asymptotic two-sided intervals.
    MinN(MinNArgs),
}

/// Arguments of `credence quantiles min-n`.
#[derive(Debug, Args)]
struct MinNArgs {
    /// Confidence level 1 - alpha.
    #[arg(long, default_value_t = 0.9)]
    level: f64,
    /// Quantile levels, each in (0, 1).
    #[arg(
        long,
        value_delimiter = ',',
        allow_negative_numbers = true,
        default_value = "0.01,0.025,0.05,0.1,0.25,0.5,0.75,0.9,0.95,0.975,0.99"
    )]
    u: Vec<f64>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    json: bool,
}

/// Runs `credence quantiles`.
pub fn run(a: QuantilesArgs) -> Result<()> {
    if let Some(QuantilesCommand::MinN(m)) = a.command {
        return min_n(m);
    }
    let (Some(file), Some(column)) = (a.file, a.column) else { bail!("give FILE.csv and --column") };
    let options = CiOptions {
        level: a.level,
        method: CiMethod::parse(&a.method)?,
        estimator: QuantileType::parse(&a.quantile_type)?,
        flip_lower: a.flip_lower,
        asymptotic_at: AsymptoticAt::parse(&a.asymptotic_at.replace('-', "_"))?,
        bootstrap_statistic: BootstrapStatistic::parse(&a.bootstrap_statistic.replace('-', "_"))?,
        replicates: a.replicates,
        seed: a.seed,
    };
    let table = Table::read(&file)?;
    let q = quantile_table(&table, &column, &a.by, &a.u, &options)?;
    let mut json_groups = Vec::new();
    let mut cells = vec![a.by.clone()];
    cells[0]
        .extend(["runs", "u", "estimate", "lower", "upper", "coverage", "shapiro_w", "shapiro_p"].map(String::from));
    for g in &q.groups {
        let mut qs = Map::new();
        for ci in &g.quantiles {
            qs.insert(
                ci.u.to_string(),
                json!({"estimate": ci.estimate, "lower": ci.lower, "upper": ci.upper, "coverage": ci.coverage}),
            );
            let mut row = g.key.clone();
            row.extend([
                g.n.to_string(),
                ci.u.to_string(),
                number(Some(ci.estimate)),
                number(ci.lower),
                number(ci.upper),
                number(ci.coverage),
                number(g.normality.map(|t| t.w)),
                number(g.normality.map(|t| t.p_value)),
            ]);
            cells.push(row);
        }
        let mean = g.mean.map(|m| json!({"mean": m.mean, "lower": m.lower, "upper": m.upper}));
        let by: Map<String, Value> = a.by.iter().cloned().zip(g.key.iter().map(|k| json!(k))).collect();
        let shapiro = g.normality.map(|t| json!({"w": t.w, "p_value": t.p_value}));
        json_groups.push(json!({"by": by, "n": g.n, "quantiles": qs, "mean": mean, "shapiro_wilk": shapiro}));
    }
    if a.json {
        let out = json!({"column": column, "level": a.level, "method": options.method, "groups": json_groups, "warnings": q.warnings});
        outln!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        out!("{}", render(&cells));
    }
    for w in &q.warnings {
        eprintln!("Warning: {}", crate::visible(w));
    }
    Ok(())
}

fn min_n(m: MinNArgs) -> Result<()> {
    let (mut exact, mut asym, mut flipped) = (Map::new(), Map::new(), Map::new());
    let mut cells = vec![["u", "exact", "asymptotic", "asymptotic (flipped)"].map(String::from).to_vec()];
    for &u in &m.u {
        let e = min_n_exact(u, m.level)?;
        let (s, f) = (min_n_asymptotic(u, m.level, false)?, min_n_asymptotic(u, m.level, true)?);
        exact.insert(u.to_string(), json!(e));
        asym.insert(u.to_string(), json!(s));
        flipped.insert(u.to_string(), json!(f));
        cells.push(vec![u.to_string(), e.to_string(), s.to_string(), f.to_string()]);
    }
    if m.json {
        let out = json!({"exact": exact, "asymptotic": asym, "asymptotic_flipped": flipped});
        outln!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        outln!("minimum runs for a two-sided interval at level {}", m.level);
        out!("{}", render(&cells));
    }
    Ok(())
}
