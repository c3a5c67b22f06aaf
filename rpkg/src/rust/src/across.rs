//! The across-data-sets model: R vectors in, `credence::compare::fit_across`, its
//! `AcrossSummary` (the JSON contract) out as a nested R list.

use credence::compare::{
    AcrossDesign, AcrossFitOptions, AcrossOptions, AcrossScale, AcrossSigma, AcrossSummary, Interaction,
    NutsSettings, fit_across,
};
use extendr_api::prelude::*;

use crate::fit::count;
use crate::msg;
use crate::summary::to_r;

type R<T> = std::result::Result<T, String>;

fn scale(name: &str) -> R<AcrossScale> {
    match name {
        "as_given" => Ok(AcrossScale::AsGiven),
        "per_dataset" | "per_data_set" => Ok(AcrossScale::PerDataSet),
        other => Err(format!("across_scale '{other}': expected as_given or per_dataset")),
    }
}

fn sigma(name: &str) -> R<AcrossSigma> {
    match name {
        "per_cell" => Ok(AcrossSigma::PerCell),
        "per_method" => Ok(AcrossSigma::PerMethod),
        other => Err(format!("sigma '{other}': expected per_cell or per_method")),
    }
}

fn interaction(name: &str) -> R<Interaction> {
    match name {
        "normal" => Ok(Interaction::Normal),
        "student_t" => Ok(Interaction::StudentT),
        other => Err(format!("interaction '{other}': expected normal or student_t")),
    }
}

/// Fits the across-data-sets model by NUTS (one value per data set x method x realization;
/// `realization` `NULL` for an unpaired design) and returns its `AcrossSummary` with the ROPE
/// decision at half-width `rope` (`NULL` for none).
#[extendr]
#[allow(clippy::too_many_arguments)]
fn glue_fit_across(
    dataset: Vec<String>,
    method: Vec<String>,
    realization: Nullable<Vec<String>>,
    y: Vec<f64>,
    across_scale: &str,
    sigma: &str,
    interaction: &str,
    chains: f64,
    warmup: f64,
    draws: f64,
    seed: f64,
    target_accept: f64,
    max_depth: f64,
    higher_is_better: bool,
    rope: Nullable<f64>,
) -> R<Robj> {
    let design = AcrossDesign::new(dataset, method, realization.into_option(), y).map_err(msg)?;
    let options = AcrossFitOptions {
        model: AcrossOptions {
            scale: scale(across_scale)?,
            sigma: self::sigma(sigma)?,
            interaction: self::interaction(interaction)?,
            ..Default::default()
        },
        sampler: NutsSettings {
            chains: count("chains", chains)? as usize,
            warmup: count("warmup", warmup)?,
            draws: count("draws", draws)?,
            seed: count("seed", seed)?,
            target_accept,
            max_depth: count("max_treedepth", max_depth)?,
            // brms' meaning of iter: exactly iter - warmup draws per chain.
            max_draws: None,
            ..Default::default()
        },
        higher_is_better,
    };
    let fit = fit_across(&design, &options).map_err(msg)?;
    let s = AcrossSummary::new(&fit, rope.into_option()).map_err(msg)?;
    Ok(to_r(&serde_json::to_value(&s).map_err(msg)?))
}

extendr_module! {
    mod across;
    fn glue_fit_across;
}
