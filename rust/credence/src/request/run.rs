//! Fitting what a request asks for, where it asks, and summarising the fit: the backend
//! fallbacks and the refusals of a fit that is not a posterior.

use super::{Convention, FitRequest, refuse, shown};
use crate::backend::{Backend, fit_one_on, runs_on};
use crate::compare::{
    AcrossDesign, AcrossFit, AcrossSummary, Design, Family, Fit, FitOptions, FitSummary, Pairs, REWARM_RHAT, Sampler,
    fit_across_with_progress, fit_with_progress,
};
use crate::error::{Error, Result};

impl FitRequest {
    /// The single-data-set fit's options: model, sampler and direction (the model as asked,
    /// before the design's say: [`FitRequest::fit_options_for`]).
    pub fn fit_options(&self) -> Result<FitOptions> {
        let family = self.family()?;
        Ok(FitOptions { family, sampler: self.sampler_for(&family)?, higher_is_better: self.higher_is_better })
    }

    /// The sampler settings of `family`. The paired model draws exactly: its draws are the
    /// request's or the core's default, whatever the convention (brms' iter 2000 is a length of
    /// NUTS, and the paired model takes no iter), so every face draws the same by default.
    fn sampler_for(&self, family: &Family) -> Result<Sampler> {
        match family {
            Family::Paired(_) => FitRequest { convention: Convention::Credence, ..self.clone() }.sampler(),
            _ => self.sampler(),
        }
    }

    /// [`FitRequest::fit_options`] for `design` ([`FitRequest::family_for`]), with the reason
    /// when the default paired model gave way to the additive one.
    pub fn fit_options_for(&self, design: &Design) -> Result<(FitOptions, Option<String>)> {
        let (family, why) = self.family_for(design)?;
        Ok((FitOptions { family, sampler: self.sampler_for(&family)?, higher_is_better: self.higher_is_better }, why))
    }

    /// Where the fit of `design` runs: the CPU, or the GPU for batched ChEES when CUDA is
    /// usable and its kernel implements the model ([`crate::backend::runs_on`]).
    pub fn runs_on(&self, design: &Design) -> Result<Backend> {
        runs_on(self.backend, std::slice::from_ref(design), &self.fit_options_for(design)?.0)
    }

    /// Fits one data set's design: NUTS on the CPU (calling `progress(done, total)` with the
    /// iterations of all chains), or batched ChEES on the request's backend. A ChEES fit whose
    /// superchains still disagree after the longest warmup is refused (it is not a posterior),
    /// and the target, if any, is applied. A ROPE that is not a finite half-width > 0 is
    /// refused before fitting.
    pub fn fit(&self, design: &Design, progress: &(dyn Fn(u64, u64) + Sync)) -> Result<Fit> {
        let (options, why) = self.fit_options_for(design)?;
        self.check_rope()?;
        // A summary of every pair that could not finish is refused before the fit, not after.
        if self.pairs == crate::compare::Pairs::All {
            let draws = options.sampler.chains() as u64 * options.sampler.draws();
            crate::compare::fit::summary::check_all_pairs(design.n_groups(), draws)?;
        }
        let fit = match options.sampler {
            Sampler::Nuts(_) => fit_with_progress(design, &options, progress)?,
            Sampler::Chees(s) => {
                let f = fit_one_on(self.backend, design, &options, progress)?;
                let worst = f.sampler_rhat();
                if worst > REWARM_RHAT {
                    let reason = format!(
                        "ChEES did not converge: largest nested R-hat {worst:.3} after {} warmup iterations (the \
                         superchains disagree, the warmup at its cap of {})",
                        f.options().sampler.warmup(),
                        s.max_warmup.unwrap_or(s.warmup)
                    );
                    return Err(Error::refused("sampler", "chees", reason).instead("sampler", "nuts"));
                }
                f
            }
        };
        let fit = fit.with_note(why);
        match self.target {
            Some(t) => fit.with_target(t),
            None => Ok(fit),
        }
    }

    /// Fits the across-data-sets model (NUTS; `progress` and the ROPE as for
    /// [`FitRequest::fit`]).
    pub fn fit_across(&self, design: &AcrossDesign, progress: &(dyn Fn(u64, u64) + Sync)) -> Result<AcrossFit> {
        let options = self.across_options()?;
        self.check_rope()?;
        fit_across_with_progress(design, &options, progress)
    }

    /// The summary of a single-data-set fit (the JSON contract).
    pub fn summarize(&self, fit: &Fit) -> Result<FitSummary> {
        self.check_rope()?;
        FitSummary::new(fit, &self.summary_options())
    }

    /// The summary of an across-data-sets fit (its JSON contract): every pair on a new data
    /// set, with the ROPE decision when the request has one. The single-data-set summary's
    /// options are refused.
    pub fn summarize_across(&self, fit: &AcrossFit) -> Result<AcrossSummary> {
        let none = "the across-data-sets summary has no minimum detectable difference";
        refuse(self.power.is_some(), "power", self.power.unwrap_or_default(), none)?;
        refuse(self.r_new.is_some(), "r_new", self.r_new.unwrap_or_default(), none)?;
        refuse(
            self.pairs != Pairs::Auto,
            "pairs",
            shown(&self.pairs),
            "the across-data-sets summary chooses its pairs",
        )?;
        self.check_rope()?;
        AcrossSummary::new(fit, self.rope)
    }
}
