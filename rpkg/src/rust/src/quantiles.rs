//! Quantiles of a metric over repeated runs with distribution-free intervals: R vectors in,
//! `credence::quantiles` calls, R lists out.

use credence::quantiles::{
    AsymptoticAt, BootstrapStatistic, CiMethod, CiOptions, QuantileType, min_n_asymptotic, min_n_exact, quantile_ci,
    shapiro_wilk, t_interval,
};
use extendr_api::prelude::*;

use crate::msg;

type R<T> = std::result::Result<T, String>;

/// Sample quantiles with confidence intervals, one row per `u`.
#[extendr]
#[allow(clippy::too_many_arguments)]
fn glue_quantiles(
    x: Vec<f64>,
    u: Vec<f64>,
    level: f64,
    method: &str,
    quantile_type: &str,
    replicates: i32,
    seed: f64,
    flip_lower: bool,
    asymptotic_at: &str,
    bootstrap_statistic: &str,
) -> R<List> {
    if !(seed.is_finite() && seed >= 0.0 && seed.fract() == 0.0) {
        return Err(format!("seed = {seed}: expected a whole number >= 0"));
    }
    let options = CiOptions {
        level,
        method: CiMethod::parse(method).map_err(msg)?,
        estimator: QuantileType::parse(quantile_type).map_err(msg)?,
        flip_lower,
        asymptotic_at: AsymptoticAt::parse(asymptotic_at).map_err(msg)?,
        bootstrap_statistic: BootstrapStatistic::parse(bootstrap_statistic).map_err(msg)?,
        replicates: usize::try_from(replicates).map_err(|_| format!("replicates = {replicates}: expected a count"))?,
        seed: seed as u64,
    };
    let cis = u.iter().map(|&u| quantile_ci(&x, u, &options)).collect::<credence::Result<Vec<_>>>().map_err(msg)?;
    let na = |v: Option<f64>| v.unwrap_or(f64::NAN);
    let mean = t_interval(&x, level).ok();
    let normality = shapiro_wilk(&x).ok();
    Ok(list!(
        u = cis.iter().map(|c| c.u).collect::<Vec<_>>(),
        n = cis.iter().map(|c| c.n as f64).collect::<Vec<_>>(),
        estimate = cis.iter().map(|c| c.estimate).collect::<Vec<_>>(),
        lower = cis.iter().map(|c| na(c.lower)).collect::<Vec<_>>(),
        upper = cis.iter().map(|c| na(c.upper)).collect::<Vec<_>>(),
        coverage = cis.iter().map(|c| na(c.coverage)).collect::<Vec<_>>(),
        mean = mean.map_or(Robj::from(NULL), |m| list!(mean = m.mean, lower = m.lower, upper = m.upper).into()),
        shapiro_wilk = normality.map_or(Robj::from(NULL), |t| list!(w = t.w, p_value = t.p_value).into())
    ))
}

/// The smallest number of runs for exact and asymptotic two-sided intervals, per `u`.
#[extendr]
fn glue_quantile_min_n(u: Vec<f64>, level: f64) -> R<List> {
    let exact = u.iter().map(|&u| min_n_exact(u, level).map(|n| n as f64)).collect::<credence::Result<Vec<_>>>();
    let asym = |flip: bool| {
        u.iter().map(|&u| min_n_asymptotic(u, level, flip).map(|n| n as f64)).collect::<credence::Result<Vec<_>>>()
    };
    let (study, flipped) = (asym(false).map_err(msg)?, asym(true).map_err(msg)?);
    Ok(list!(u = u.clone(), exact = exact.map_err(msg)?, asymptotic = study, asymptotic_flipped = flipped))
}

extendr_module! {
    mod quantiles;
    fn glue_quantiles;
    fn glue_quantile_min_n;
}
