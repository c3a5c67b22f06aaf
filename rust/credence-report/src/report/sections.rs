//! The report's later sections that fit again: the planning section's simulated experiments
//! and the calibration audits, per data set at its largest n with enough realizations.

use credence::backend::Batched;
use credence::compare::{
    AuditModel, AuditOptions, Decision, Family, PlanOptions, PlanSource, audit, plan_with_progress,
};

use super::build::{AuditCell, PlanCell, Report};
use super::options::AUDIT_MIN_REALIZATIONS;

impl Report {
    /// Plans per data set for the first fitted metric: the fit at the largest n as the pilot, the best
    /// two methods of the ranking, the decision P(best better than runner-up) >= 0.95 at the
    /// report's power. `progress(done, total)` counts their simulated fits (a stage of its own
    /// after the cells' fits).
    pub(super) fn plan_cells(&self, progress: &(dyn Fn(usize, usize) + Sync)) -> Vec<PlanCell> {
        let mut jobs = Vec::new();
        for d in &self.datasets {
            // The first fitted metric only: a plan costs hundreds of fits (`credence plan` plans
            // any other).
            for m in self.options.metrics.iter().take(1) {
                let Some(cell) = self.fits_of(d, m).into_iter().rev().find(|c| c.fit.is_some()) else { continue };
                let Some(fit) = cell.fit.as_ref() else { continue };
                let known: Vec<String> =
                    self.ranking(d, m).into_iter().filter(|x| fit.design().groups().contains(x)).collect();
                let [a, b, ..] = known.as_slice() else { continue };
                let options = PlanOptions {
                    a: a.clone(),
                    b: b.clone(),
                    realizations: self.options.plan_realizations.clone(),
                    sims: self.options.plan_sims,
                    decision: Decision::default(),
                    power: self.options.power,
                    methods: Some(vec![a.clone(), b.clone()]),
                    seed: self.options.fit.sampler.seed(),
                    ..Default::default()
                };
                jobs.push((d, m, cell.n, fit, options));
            }
        }
        let total: usize = jobs.iter().map(|j| j.4.max_fits()).sum();
        if total > 0 {
            progress(0, total);
        }
        let mut before = 0;
        let mut out = Vec::new();
        for (d, m, n, fit, options) in jobs {
            let offset = before;
            let plan = Batched::new(self.options.backend)
                .and_then(|fitter| {
                    plan_with_progress(PlanSource::Pilot(fit), &options, &fitter, &|done, _| {
                        progress(offset + done, total)
                    })
                })
                .map_err(|e| e.to_string());
            before += options.max_fits();
            progress(before, total);
            out.push(PlanCell { dataset: d.clone(), metric: m.clone(), n, plan });
        }
        out
    }

    /// Audits per data set for the first fitted metric at the largest n with enough
    /// realizations: the cell's own model beside the paired-difference baseline, subsets of 5
    /// and 10 realizations. `progress(done, total)` counts their fits (a stage of its own).
    pub(super) fn audit_cells(&self, progress: &(dyn Fn(usize, usize) + Sync)) -> Vec<AuditCell> {
        let mut jobs = Vec::new();
        for d in &self.datasets {
            for m in self.options.metrics.iter().take(1) {
                let found = self.fits_of(d, m).into_iter().rev().find_map(|c| {
                    c.fit.as_ref().filter(|f| f.design().n_pairs() >= AUDIT_MIN_REALIZATIONS).map(|f| (c.n, f))
                });
                let Some((n, fit)) = found else { continue };
                let name = match fit.options().family {
                    Family::Paired(_) => "paired",
                    Family::Gaussian(_) => "additive",
                    Family::BetaBinomial(_) => "beta_binomial",
                };
                let model = AuditModel { name: name.into(), options: *fit.options() };
                let options = AuditOptions {
                    subsets: self.options.audit_subsets,
                    seed: self.options.fit.sampler.seed(),
                    ..AuditOptions::default()
                };
                jobs.push((d, m, n, fit, model, options));
            }
        }
        let per = |o: &AuditOptions| o.realizations.len() * o.subsets;
        let total: usize = jobs.iter().map(|j| per(&j.5)).sum();
        if total > 0 {
            progress(0, total);
        }
        let mut before = 0;
        let mut out = Vec::new();
        for (d, m, n, fit, model, options) in jobs {
            let offset = before;
            let result =
                audit(fit.design(), std::slice::from_ref(&model), &options, &|done, _| progress(offset + done, total))
                    .map_err(|e| e.to_string());
            before += per(&options);
            progress(before, total);
            out.push(AuditCell { dataset: d.clone(), metric: m.clone(), n, audit: result });
        }
        out
    }

    /// The audit of one data set and metric.
    pub fn audit_of(&self, dataset: &str, metric: &str) -> Option<&AuditCell> {
        self.audits.iter().find(|a| a.dataset == dataset && a.metric == metric)
    }

    /// The plan of one data set and metric.
    pub fn plan_of(&self, dataset: &str, metric: &str) -> Option<&PlanCell> {
        self.plans.iter().find(|p| p.dataset == dataset && p.metric == metric)
    }
}
