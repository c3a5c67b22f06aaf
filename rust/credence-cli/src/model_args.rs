//! The table and model options `credence fit` and `credence plan` share: which columns hold
//! what, which rows to keep, and the model's part of the [`FitRequest`].

use std::path::Path;

use anyhow::{Context, Result, bail};
use clap::Args;
use credence::compare::{Design, Repeats};
use credence::io::Table;
use credence::request::{FamilyName, FitRequest, ModelName};

/// Which columns of a long metric table hold what, which rows to keep, and the model.
#[derive(Debug, Args)]
pub struct ModelArgs {
    /// Keep only rows where COLUMN equals VALUE (repeatable), e.g. `--where n=100` to fit one
    /// training size of a `credence study` table.
    #[arg(long = "where", value_name = "COLUMN=VALUE")]
    pub filters: Vec<String>,
    /// Column with the metric (or, for beta-binomial, the covered count).
    #[arg(long)]
    pub response: Option<String>,
    /// Column naming the method (group).
    #[arg(long, default_value = "method")]
    pub group: String,
    /// Column naming the data realization that pairs methods (omit for an unpaired design).
    #[arg(long)]
    pub pair: Option<String>,
    /// Column naming the training within a realization (`train_rep` of `credence study
    /// --train-seeds K`): each method's trainings on a realization are averaged, the model is
    /// fitted to the means (the repeats make a realization's mean surer, never the
    /// realizations more numerous), and the summary gives each method's training sd and its
    /// share of the means' variance. Needs --pair.
    #[arg(long, value_name = "COLUMN")]
    pub repeat: Option<String>,
    /// Column naming the test item of per-item scores (`item` of `credence metrics table
    /// --per-item`): the per-item model, which measures each realization's test-set noise from
    /// its items and keeps a training term per method; one fixed test set (the same items in
    /// every realization) or a test split per realization (no item in two) is read from the
    /// labels and stated in the output. Needs --pair.
    #[arg(long, value_name = "COLUMN")]
    pub item: Option<String>,
    /// Model family: gaussian (default) or beta-binomial.
    #[arg(long)]
    pub family: Option<FamilyName>,
    /// Gaussian model: paired (the methods' values on a realization as one normal draw, an
    /// unstructured covariance, exact draws) or additive (the source study's model, Zhan et
    /// al. 2026, by MCMC). Default: paired for a paired table it suits unless an option of the
    /// additive model or of its sampler is given.
    #[arg(long)]
    pub model: Option<ModelName>,
    /// Paired model: prior degrees of freedom of the covariance, pseudo-realizations borrowed
    /// from its one-factor fit (default 0.1).
    #[arg(long)]
    pub covariance_df: Option<f64>,
    /// Paired model: the realizations are the folds of one data set's cross-validation (or
    /// repeated random splits) with test fraction F, e.g. 0.1 for 10-fold; the folds share
    /// training data, and the model carries their correlation (Nadeau-Bengio: a mean over R
    /// folds has variance Sigma (1/R + F/(1 - F))). Default: independent realizations.
    #[arg(long, value_name = "F")]
    pub cv_test_fraction: Option<f64>,
    /// Column with the number of test points behind each count (beta-binomial).
    #[arg(long)]
    pub trials: Option<String>,
    /// Higher metric values are better (coverage, accuracy); default: lower is better.
    #[arg(long)]
    pub higher_is_better: bool,
    /// Closer to this value is better, e.g. 0.9 for the coverage of 90% intervals (a
    /// proportion for the beta-binomial): P(|mu_A - T| < |mu_B - T|) replaces the direction.
    #[arg(long, conflicts_with = "higher_is_better", allow_negative_numbers = true)]
    pub target: Option<f64>,
    /// Gaussian: one sigma shared by all methods instead of one per method.
    #[arg(long)]
    pub shared_sigma: bool,
    /// Leave out the realization effect (Gaussian and across data sets).
    #[arg(long, conflicts_with = "realization_effect")]
    pub no_realization_effect: bool,
    /// Gaussian: Student-t likelihood (robust to heavy tails).
    #[arg(long)]
    pub student_t: bool,
    /// Gaussian: fit on the standardised response, report on the original scale.
    #[arg(long)]
    pub standardize: bool,
    /// Beta-binomial: one precision phi per method.
    #[arg(long)]
    pub phi_per_method: bool,
    /// Beta-binomial: add a realization effect on the logit scale.
    #[arg(long)]
    pub realization_effect: bool,
    /// Prior of mu0, e.g. "normal(0, 1)".
    #[arg(long)]
    pub prior_mu0: Option<String>,
    /// Prior of tau, e.g. "half_normal(1)" or "half_student_t(3, 2.5)".
    #[arg(long)]
    pub prior_tau: Option<String>,
    /// Prior of sigma (Gaussian and across data sets).
    #[arg(long)]
    pub prior_sigma: Option<String>,
    /// Prior of sigma_gamma.
    #[arg(long)]
    pub prior_sigma_gamma: Option<String>,
    /// Prior of phi (beta-binomial), e.g. "exponential(0.01)".
    #[arg(long)]
    pub prior_phi: Option<String>,
}

/// The priors given as flags, by parameter name.
pub(crate) fn priors(given: &[(&str, &Option<String>)]) -> std::collections::BTreeMap<String, String> {
    given.iter().filter_map(|(name, text)| text.as_ref().map(|t| (name.to_string(), t.clone()))).collect()
}

impl ModelArgs {
    /// The model's part of the request (the core resolves and checks it).
    pub fn request(&self) -> FitRequest {
        FitRequest {
            family: self.family.unwrap_or_default(),
            model: self.model,
            covariance_df: self.covariance_df,
            cv_test_fraction: self.cv_test_fraction,
            shared_sigma: self.shared_sigma.then_some(true),
            realization_effect: if self.no_realization_effect {
                Some(false)
            } else {
                self.realization_effect.then_some(true)
            },
            student_t: self.student_t,
            standardize: self.standardize,
            phi_per_method: self.phi_per_method,
            higher_is_better: self.higher_is_better,
            target: self.target,
            priors: priors(&[
                ("mu0", &self.prior_mu0),
                ("tau", &self.prior_tau),
                ("sigma", &self.prior_sigma),
                ("sigma_gamma", &self.prior_sigma_gamma),
                ("phi", &self.prior_phi),
            ]),
            ..FitRequest::default()
        }
    }

    /// Reads the table, keeps the rows of `--where`, and builds the design; the notes say
    /// which rows were dropped.
    pub fn load_design(&self, data: &Path) -> Result<(Design, Vec<String>)> {
        let (design, repeats, mut notes) = self.load_repeated_design(data)?;
        notes.extend(repeats.and_then(|r| r.warning));
        Ok((design, notes))
    }

    /// As [`ModelArgs::load_design`], with `--repeat` the trainings of each cell averaged and
    /// their decomposition returned beside the design of the means.
    pub fn load_repeated_design(&self, data: &Path) -> Result<(Design, Option<Repeats>, Vec<String>)> {
        if self.family == Some(FamilyName::BetaBinomial) && self.trials.is_none() {
            bail!("--family beta-binomial needs --trials COLUMN (the number of test points behind each count)");
        }
        let response = self.response()?;
        let table = self.load_table(data)?;
        if let Some(item) = &self.item {
            let Some(pair) = &self.pair else {
                bail!(
                    "--item {item}: per-item scores are scores of a realization's test items: give --pair COLUMN too"
                );
            };
            if let Some(other) = self.trials.as_ref().or(self.repeat.as_ref()) {
                bail!(
                    "--item {item}: per-item scores are metric values of one training per realization, not with {other}"
                );
            }
            let (design, notes) = Design::from_item_table(&table, response, &self.group, pair, item)?;
            return Ok((design, None, notes));
        }
        let Some(repeat) = &self.repeat else {
            let (design, notes) =
                Design::from_table(&table, response, &self.group, self.pair.as_deref(), self.trials.as_deref())?;
            return Ok((design, None, notes));
        };
        let Some(pair) = &self.pair else {
            bail!("--repeat {repeat}: repeated trainings are within a realization: give --pair COLUMN too");
        };
        if self.trials.is_some() {
            bail!("--repeat {repeat}: the trainings of a cell are averaged, which counts with --trials are not");
        }
        let (design, repeats, notes) = Design::from_repeated_table(&table, response, &self.group, pair, repeat)?;
        Ok((design, Some(repeats), notes))
    }

    /// Refuses `--repeat` and `--item` for the across-data-sets model, which has neither term.
    pub fn no_repeat_across(&self) -> Result<()> {
        if let Some(item) = &self.item {
            bail!(
                "--item {item}: the across-data-sets model (--dataset-column) takes one value per data set, method and \
                 realization; fit each data set's items on its own (--where)"
            );
        }
        match &self.repeat {
            Some(r) => bail!(
                "--repeat {r}: the across-data-sets model (--dataset-column) takes one value per data set, method \
                 and realization; average the trainings first (or --where {r}=0)"
            ),
            None => Ok(()),
        }
    }

    /// The `--response` column, which every fit needs.
    pub fn response(&self) -> Result<&str> {
        self.response.as_deref().context("--response COLUMN is needed: the column with the metric")
    }

    /// Reads the table and keeps the rows of `--where`.
    pub fn load_table(&self, data: &Path) -> Result<Table> {
        keep_rows(Table::read(data)?, &self.filters)
    }
}

/// The rows of `table` that satisfy every `--where COLUMN=VALUE` filter.
pub fn keep_rows(mut table: Table, filters: &[String]) -> Result<Table> {
    for f in filters {
        let Some((column, value)) = f.split_once('=') else {
            bail!("--where {f}: expected COLUMN=VALUE");
        };
        table = table.filter_equal(column.trim(), value)?;
    }
    Ok(table)
}
