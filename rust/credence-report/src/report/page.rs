//! The HTML page of a report.

use std::fmt::Write;

use plotly::Plot;

use super::build::{PlanCell, Report};
use super::html::across::pairs_table;
use super::options::higher_is_better;
use super::tables::{convergence_table, metric_table, plan_table, posterior_table, power_law_table, variance_table};
use crate::format::num;
use crate::plots::across::{forest, prob_best, rope_bars};
use crate::plots::html::{escape, plot_div, plotly_script};
use crate::plots::{comparison, diagnostics, plan, scaling, shift};
use credence::compare::{CLEAN, Fit, SETTLED_LEVEL, Sampler, beside, is_settled, mdd_curve, prob_text};

const STYLE: &str = "body{font-family:Helvetica,Arial,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}\
h1{margin-bottom:.2em}h2{border-bottom:2px solid #0072B2;padding-bottom:.2em;margin-top:2em}\
table{border-collapse:collapse;margin:.8em 0;font-size:.92em}th,td{border:1px solid #ccc;padding:.3em .6em;text-align:right}\
thead th{background:#f1f5f9}tbody th{text-align:left;background:#fafafa}.count{color:#888;font-size:.85em}\
.bad{background:#fde8df}.good{background:#e3f1fa}.small{font-size:.85em;color:#555}\
.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:1em}\
details{margin:.5em 0}summary{cursor:pointer;font-weight:bold}footer{margin-top:3em;border-top:1px solid #ccc;font-size:.9em;color:#444}\
nav a{margin-right:1em}code{background:#f4f4f4;padding:0 .2em}";

/// Collects figures with unique ids.
pub(super) struct Figures(usize);

impl Figures {
    pub(super) fn add(&mut self, out: &mut String, plot: &Plot) {
        self.0 += 1;
        out.push_str(&plot_div(plot, &format!("fig-{}", self.0)));
    }
}

fn anchor(dataset: &str, metric: &str) -> String {
    let clean = |s: &str| s.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect::<String>();
    format!("{}-{}", clean(dataset), clean(metric))
}

fn dataset_name(d: &str) -> &str {
    if d.is_empty() { "(all rows)" } else { d }
}

impl Report {
    /// What the `n` column holds: the training size, or the intensity of a shift table.
    pub(super) fn size_label(&self) -> &'static str {
        if self.shift { "intensity" } else { "n" }
    }

    /// A figure drawn against `n`, relabelled for a shift table: linear intensity axis, `title`.
    fn against_size(&self, plot: Plot, title: &str) -> Plot {
        if !self.shift {
            return plot;
        }
        let mut plot = plot;
        let layout = plot.layout().clone().title(title).x_axis(crate::plots::axis(shift::INTENSITY_AXIS));
        plot.set_layout(layout);
        plot
    }

    /// The report as one self-contained HTML page (plotly.js embedded once; no network).
    pub fn to_html(&self) -> String {
        let mut figs = Figures(0);
        let mut body = String::new();
        self.overview(&mut body);
        for d in &self.datasets {
            self.dataset_section(&mut body, &mut figs, d);
        }
        self.across_section(&mut body, &mut figs);
        self.diagnostics_section(&mut body, &mut figs);
        self.footer(&mut body);
        format!(
            "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>credence report: {}</title>\n\
             <style>{STYLE}</style>\n{}\n</head>\n<body>\n{body}</body>\n</html>\n",
            escape(&self.source),
            plotly_script()
        )
    }

    fn overview(&self, out: &mut String) {
        let _ = write!(
            out,
            "<h1>credence report</h1>\n<p class=\"small\">{} rows of <code>{}</code>; {} data set(s), {} method(s) \
             ({}); fitted metric(s): {}; MDD at power {}.</p>\n",
            self.rows,
            escape(&self.source),
            self.datasets.len(),
            self.methods.len(),
            escape(&self.methods.join(", ")),
            escape(&self.options.metrics.join(", ")),
            self.options.power
        );
        out.push_str("<h2 id=\"overview\">Overview</h2>\n<nav>");
        for d in &self.datasets {
            for m in &self.options.metrics {
                let _ = write!(out, "<a href=\"#{}\">{} / {}</a>", anchor(d, m), escape(dataset_name(d)), escape(m));
            }
        }
        if !self.across.is_empty() {
            out.push_str("<a href=\"#across\">across data sets</a>");
        }
        out.push_str("<a href=\"#diagnostics\">diagnostics</a></nav>\n");
        let _ = write!(
            out,
            "<table><thead><tr><th>data set</th><th>metric</th><th>{}</th><th>best method</th><th>runner-up</th>\
             <th>P(best better than runner-up)</th><th>MDD (1 new realization)</th><th>observed gap</th>\
             <th>detection probability</th><th>fit problems</th></tr></thead><tbody>",
            self.size_label()
        );
        let best = self.best_by_size();
        for d in &self.datasets {
            for m in &self.options.metrics {
                for cell in self.fits_of(d, m) {
                    let problems = cell.problems();
                    let _ = write!(
                        out,
                        "<tr><th>{}</th><th>{}</th><td>{}</td>",
                        escape(dataset_name(d)),
                        escape(m),
                        cell.n
                    );
                    let row = best.iter().find(|b| b.dataset == *d && b.metric == *m && b.n == cell.n);
                    match cell.fit.as_ref().zip(row) {
                        Some((f, b)) => {
                            let p = b.prob_better;
                            let mdd = f.mdd(&b.best, &b.runner_up, self.options.power, 1.0).ok();
                            let _ = write!(
                                out,
                                "<td>{}</td><td>{}</td><td class=\"{}\">{}</td><td>{}</td><td>{}</td><td>{}</td>",
                                escape(&b.best),
                                escape(&b.runner_up),
                                if is_settled(p) { "good" } else { "" },
                                prob_text(p),
                                mdd.map_or("NA".into(), |x| num(x.mdd)),
                                mdd.map_or("NA".into(), |x| num(x.gap.abs())),
                                mdd.map_or("NA".into(), |x| format!("{:.3}", x.detection_probability)),
                            );
                        }
                        None => out.push_str("<td colspan=\"6\">no fit</td>"),
                    }
                    let _ = write!(
                        out,
                        "<td class=\"{}\">{}</td></tr>",
                        if problems.is_empty() { "" } else { "bad" },
                        if problems.is_empty() { "none".to_string() } else { escape(&problems.join("; ")) }
                    );
                }
            }
        }
        let _ = writeln!(
            out,
            "</tbody></table>\n<p class=\"small\">\"Better\" means lower for error metrics and higher for \
             accuracy-like metrics; each row's best method is the one with the best posterior mean in that row's \
             fit, and P is that fit's P(best better than runner-up), highlighted when settled (at least \
             {SETTLED_LEVEL}). The sections below compare the best method at the largest n with the others.</p>",
        );
    }

    fn dataset_section(&self, out: &mut String, figs: &mut Figures, d: &str) {
        let _ = writeln!(out, "<h2 id=\"{}\">Data set: {}</h2>", anchor(d, ""), escape(dataset_name(d)));
        let sizes: &[f64] = self.sizes.iter().find(|(x, _)| x == d).map_or(&[], |(_, s)| s.as_slice());
        let rates: Vec<_> = self.convergence.iter().filter(|c| c.dataset == d).cloned().collect();
        if !rates.is_empty() {
            out.push_str(
                "<h3>Runs converged</h3>\n<p class=\"small\">Runs that did not converge (a non-finite loss, or a \
                 SWAG run whose SGD failed) have no metrics and are left out of every table and fit below, as the \
                 low-data study excludes them.</p>\n",
            );
            out.push_str(&convergence_table(&rates, &self.methods, sizes));
        }
        out.push_str("<h3>Metric tables (mean &plusmn; sd over realizations, count in brackets)</h3>\n");
        let mut metrics: Vec<&str> =
            self.summaries.iter().filter(|s| s.dataset == d).map(|s| s.metric.as_str()).collect();
        metrics.dedup();
        for m in metrics {
            let _ = write!(
                out,
                "<h4>{}</h4>\n{}\n",
                escape(m),
                metric_table(&self.summaries_of(d, m), &self.methods, sizes, self.size_label())
            );
        }
        if self.class_study {
            self.class_figures(out, figs, d);
        }
        for m in &self.options.metrics {
            self.metric_section(out, figs, d, m);
        }
    }

    fn metric_section(&self, out: &mut String, figs: &mut Figures, d: &str, m: &str) {
        let _ = writeln!(out, "<h2 id=\"{}\">{}: {}</h2>", anchor(d, m), escape(dataset_name(d)), escape(m));
        let cells = self.fits_of(d, m);
        let fits: Vec<(f64, &Fit)> = cells.iter().filter_map(|c| c.fit.as_ref().map(|f| (c.n, f))).collect();
        let summaries = self.summaries_of(d, m);
        if self.shift {
            let over = if self.class_study { "shift types and realizations" } else { "shift types" };
            let what = if self.class_study {
                "A classification study at one training size: each intensity (0 the i.i.d. test set) is compared \
                 with every (shift type, realization) as a paired realization"
            } else {
                "A dataset-shift table: each intensity is compared with the shift types as the paired realizations"
            };
            let _ = writeln!(out, "<p class=\"small\">{what}; the boxes span the quartiles over {over}.</p>");
            let cells: Vec<_> = self.shift_cells.iter().filter(|c| c.dataset == d && c.metric == m).cloned().collect();
            figs.add(out, &shift::quartiles_by_intensity(&cells, m, over));
        } else {
            let runs: Vec<_> = self.convergence.iter().filter(|c| c.dataset == d).cloned().collect();
            figs.add(out, &scaling::mean_sd_with_runs(&summaries, &runs, m));
        }
        out.push_str("<h3>Quantiles over realizations (distribution-free intervals)</h3>\n");
        match self.quantiles_of(d, m).map(|q| &q.table) {
            Some(Ok(t)) => out.push_str(&super::html::quantiles::quantile_table(t)),
            Some(Err(e)) => {
                let _ = write!(out, "<p class=\"bad\">{}</p>", escape(e));
            }
            None => {}
        }
        let ranking = self.ranking(d, m);
        let common: Vec<String> =
            ranking.iter().filter(|x| fits.iter().all(|(_, f)| f.design().groups().contains(x))).cloned().collect();
        out.push_str("<h3>P(A better than B) by training size</h3>\n");
        let direction = match self.options.targets.get(m) {
            Some(t) => format!("closer to the nominal {t} is better: P(|mu_A - {t}| &lt; |mu_B - {t}|)"),
            None if higher_is_better(m) => "higher is better".into(),
            None => "lower is better".into(),
        };
        let _ = writeln!(out, "<p class=\"small\">{}: {direction}.</p>", escape(m));
        if let Some(best) = common.first() {
            let pairs: Vec<(&str, &str)> = common[1..].iter().map(|o| (best.as_str(), o.as_str())).collect();
            match comparison::prob_better_vs_n(&fits, &pairs, m) {
                Ok(p) => figs.add(out, &self.against_size(p, &format!("P(A better than B) by shift intensity ({m})"))),
                Err(e) => {
                    let _ = write!(out, "<p class=\"bad\">{}</p>", escape(&e.to_string()));
                }
            }
        }
        out.push_str("<h3>Pairwise P(row better than column)</h3>\n<div class=\"grid\">");
        for (n, f) in &fits {
            let title = format!("P(row better than column), {m}, {} = {n}", self.size_label());
            if let Ok(p) = comparison::prob_better_heatmap(f, &title) {
                out.push_str("<div>");
                figs.add(out, &p);
                out.push_str("</div>");
            }
        }
        out.push_str("</div>\n<h3>Minimum detectable difference</h3>\n");
        if let [best, second, ..] = common.as_slice() {
            if let Ok(points) = mdd_curve(&fits, best, second, self.options.power, 1.0) {
                let plot = comparison::mdd_curve(&points, best, second, self.options.power, m);
                let title = format!("Minimum detectable difference by shift intensity, {best} vs {second} ({m})");
                figs.add(out, &self.against_size(plot, &title));
            }
            out.push_str(&self.mdd_table(&fits, best, &common[1..]));
        }
        if let Some((n, f)) = fits.last() {
            self.ranks_section(out, figs, *n, f, m);
        }
        if let Some(cell) = self.plan_of(d, m) {
            self.plan_section(out, figs, cell, m);
        }
        if let Some(cell) = self.audit_of(d, m) {
            self.audit_section(out, figs, cell);
        }
        let splits: Vec<_> = self.variance.iter().filter(|s| s.dataset == d && s.metric == m).cloned().collect();
        if !splits.is_empty() {
            out.push_str(
                "<h3>Data and algorithm variance</h3>\n<p class=\"small\">Each realization was trained with \
                 several seeds (<code>credence study --train-seeds K</code>): the variance of one run splits into \
                 data variance (a new training set) and algorithm variance (the same data, a new seed), by a \
                 one-way random-effects ANOVA over the realizations with every repeat (data / algorithm, data share \
                 in brackets). The fits on this page are of each realization's mean over its trainings (as \
                 <code>credence fit --repeat train_rep</code>); the other tables use repeat 0.</p>\n",
            );
            let sizes: Vec<f64> = cells.iter().map(|c| c.n).collect();
            out.push_str(&variance_table(&splits, &self.methods, &sizes));
            figs.add(out, &scaling::variance_split_vs_n(&splits, m));
        }
        if !self.shift {
            out.push_str("<h3>How the spread shrinks with n (power laws)</h3>\n");
            figs.add(out, &scaling::sd_vs_n(&summaries, m));
            out.push_str(&power_law_table(&scaling::power_laws(&summaries)));
        }
        out.push_str("<h3>Posterior predictive check (largest n)</h3>\n");
        if let Some((_, f)) = fits.last()
            && let Ok(rep) = f.posterior_predictive(40, self.options.fit.sampler.seed())
        {
            figs.add(out, &diagnostics::ppc_overlay(f, &rep, m));
        }
        out.push_str("<h3>Posterior summaries</h3>\n");
        for c in &cells {
            let flag = if c.problems().is_empty() {
                String::new()
            } else {
                format!(" &mdash; <span class=\"bad\">{}</span>", escape(&c.problems().join("; ")))
            };
            let _ = write!(
                out,
                "<details><summary>{} = {}{flag}</summary>\n{}\n",
                self.size_label(),
                c.n,
                posterior_table(c)
            );
            for w in &c.warnings {
                let _ = write!(out, "<p class=\"small\">note: {}</p>", escape(w));
            }
            out.push_str("</details>\n");
        }
    }

    fn plan_section(&self, out: &mut String, figs: &mut Figures, cell: &PlanCell, m: &str) {
        out.push_str("<h3>Planning: realizations to settle the best two methods</h3>\n");
        let p = match &cell.plan {
            Ok(p) => p,
            Err(e) => {
                let _ = write!(out, "<p class=\"bad\">no plan: {}</p>", escape(e));
                return;
            }
        };
        let _ = writeln!(
            out,
            "<p class=\"small\">Assurance: the share of {} simulated experiments of R realizations (worlds drawn from \
             the posterior of the fit at n = {}, new realizations simulated, each fitted like the pilot) whose fit \
             reaches {}. The smallest R with assurance &ge; {}: <b>{}</b>. The predictive-MDD approximation's \
             detection probability is shown for comparison. <code>credence plan</code> plans other pairs, decisions \
             and more simulations.</p>",
            p.sims,
            cell.n,
            escape(&p.decision.describe(&p.a, &p.b)),
            p.power,
            p.smallest_r.map_or("none of the grid".to_string(), |r| r.to_string())
        );
        figs.add(out, &plan::assurance_curve(p, m));
        out.push_str(&plan_table(p));
        for w in &p.warnings {
            let _ = write!(out, "<p class=\"small\">note: {}</p>", escape(w));
        }
    }

    fn mdd_table(&self, fits: &[(f64, &Fit)], best: &str, others: &[String]) -> String {
        let mut out = format!(
            "<table><thead><tr><th>{} vs</th><th>{}</th><th>MDD (power {})</th><th>observed gap |E[mu_A - mu_B]|</th>\
             <th>detection probability</th><th>detectable?</th></tr></thead><tbody>",
            escape(best),
            self.size_label(),
            self.options.power
        );
        for o in others {
            for (n, f) in fits {
                if let Ok(x) = f.mdd(best, o, self.options.power, 1.0) {
                    let yes = x.gap.abs() > x.mdd;
                    let _ = write!(
                        out,
                        "<tr><th>{}</th><td>{n}</td><td>{}</td><td>{}</td><td>{:.3}</td><td class=\"{}\">{}</td></tr>",
                        escape(o),
                        num(x.mdd),
                        num(x.gap.abs()),
                        x.detection_probability,
                        if yes { "good" } else { "" },
                        if yes { "yes" } else { "no" }
                    );
                }
            }
        }
        out.push_str("</tbody></table>");
        out
    }

    fn diagnostics_section(&self, out: &mut String, figs: &mut Figures) {
        let flagged = self.flagged();
        let _ = write!(
            out,
            "<h2 id=\"diagnostics\">Diagnostics</h2>\n<p>{} of {} fits show a problem (R-hat &gt; {}, bulk-ESS \
             &lt; {}, divergent transitions, or a failed fit); treat their probabilities with care.</p>\n",
            flagged.len(),
            self.fits.len(),
            CLEAN.rhat_max,
            CLEAN.ess_bulk_min
        );
        if flagged.is_empty() {
            return;
        }
        out.push_str(
            "<table id=\"flagged\"><thead><tr><th>data set</th><th>metric</th><th>n</th><th>max R-hat</th>\
             <th>min bulk-ESS</th><th>divergences</th><th>problems</th></tr></thead><tbody>",
        );
        for (c, problems) in &flagged {
            let d = c.diagnostics();
            let _ = write!(
                out,
                "<tr class=\"bad\"><th>{}</th><th>{}</th><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(dataset_name(&c.dataset)),
                escape(&c.metric),
                c.n,
                d.map_or("NA".into(), |d| beside(d.max_rhat, CLEAN.rhat_max, 3)),
                d.map_or("NA".into(), |d| beside(d.min_ess_bulk, CLEAN.ess_bulk_min, 0)),
                d.map_or("NA".into(), |d| d.divergences.to_string()),
                escape(&problems.join("; "))
            );
        }
        out.push_str("</tbody></table>\n");
        // Trace and rank plots of the worst quantity of the (up to) two worst fits.
        let mut worst: Vec<(&Fit, &credence::compare::ParamSummary, String)> = flagged
            .iter()
            .filter_map(|(c, _)| {
                let f = c.fit.as_ref()?;
                let s = f.summary().iter().max_by(|a, b| a.rhat.total_cmp(&b.rhat))?;
                Some((f, s, format!("{} / {} / n = {}", dataset_name(&c.dataset), c.metric, c.n)))
            })
            .collect();
        worst.sort_by(|a, b| b.1.rhat.total_cmp(&a.1.rhat));
        for (f, s, label) in worst.into_iter().take(2) {
            let _ = write!(
                out,
                "<h3>{}: {} (R-hat {})</h3>\n<div class=\"grid\">",
                escape(&label),
                escape(&s.name),
                beside(s.rhat, CLEAN.rhat_max, 3)
            );
            for plot in [diagnostics::trace_plot(f, &s.name), diagnostics::rank_plot(f, &s.name)].into_iter().flatten()
            {
                out.push_str("<div>");
                figs.add(out, &plot);
                out.push_str("</div>");
            }
            out.push_str("</div>\n");
        }
    }

    fn footer(&self, out: &mut String) {
        let sampler = match &self.options.fit.sampler {
            Sampler::Nuts(s) => format!(
                "NUTS, {} chains, {} warmup + {} draws per chain, target acceptance {}, seed {}",
                s.chains, s.warmup, s.draws, s.target_accept, s.seed
            ),
            Sampler::Chees(c) => {
                let nuts = self.options.across_sampler();
                let refit = self.fits.iter().filter(|f| f.fit.as_ref().is_some_and(|f| f.chees().is_none())).count();
                format!(
                    "ChEES-HMC, {} superchains x {} chains, {} warmup + {} draws per chain, target acceptance {}, \
                     seed {}; the fits it leaves unclean refitted by NUTS ({} chains, {} warmup + {} draws): {refit} \
                     of {}",
                    c.superchains,
                    c.chains_per_superchain,
                    c.warmup,
                    c.draws,
                    c.target_accept,
                    c.seed,
                    nuts.chains,
                    nuts.warmup,
                    nuts.draws,
                    self.fits.len()
                )
            }
        };
        let _ = writeln!(
            out,
            "<footer id=\"reproducibility\"><h2>Reproducibility</h2><ul>\
             <li>credence {}</li><li>source table: <code>{}</code> ({} rows)</li>\
             <li>command: <code>{}</code></li>\
             <li>sampler: {} \
             (draws are identical for a seed whatever the thread count)</li>\
             <li>data realizations: the table's own seeds (a <code>credence study</code> table records each row's \
             seed: realization r of size n uses seed r + n + seed offset)</li>\
             <li>fitting took {:.1} s for {} fits</li></ul></footer>",
            escape(&self.version),
            escape(&self.source),
            self.rows,
            escape(self.options.command_line.as_deref().unwrap_or("(library call)")),
            sampler,
            self.fit_seconds,
            self.fits.len()
        );
    }
}

impl Report {
    /// The "Across data sets" section (nothing without across fits).
    pub(super) fn across_section(&self, out: &mut String, figs: &mut Figures) {
        let Some(first) = self.across.first() else { return };
        let sizes: Vec<String> = first.sizes.iter().map(|(d, n)| format!("{} at n = {n}", escape(d))).collect();
        let _ = write!(
            out,
            "<h2 id=\"across\">Across data sets</h2>\n<p class=\"small\">Every data set at once: the across-data-sets \
             model y = nu[d] + delta[m] + u[d,m] + gamma[d,i] + noise (data-set levels nu, method effects delta \
             shared by all data sets, method-by-data-set interactions u, realization effects gamma), fitted to {}. \
             It answers how the methods compare on a new data set from the same population (baycomp's hierarchical \
             test), and on each data set with partial pooling. <code>credence fit TABLE --dataset-column dataset \
             --where n=N</code> fits one by hand.</p>\n",
            sizes.join(", ")
        );
        for c in &self.across {
            let _ = writeln!(out, "<h3>{}</h3>", escape(&c.metric));
            let problems = c.problems();
            if !problems.is_empty() {
                let _ = writeln!(out, "<p class=\"bad\">{}</p>", escape(&problems.join("; ")));
            }
            let Ok(s) = &c.summary else { continue };
            if let Ok(sentences) = s.sentences(&c.metric, SETTLED_LEVEL) {
                out.push_str("<ul class=\"words\">");
                for line in sentences {
                    let _ = write!(out, "<li>{}</li>", escape(&line));
                }
                out.push_str("</ul>\n");
            }
            figs.add(out, &forest(s, &c.metric));
            out.push_str("<div class=\"grid\"><div>");
            figs.add(out, &prob_best(s, &c.metric));
            out.push_str("</div>");
            if let Some(p) = rope_bars(s, &c.metric) {
                out.push_str("<div>");
                figs.add(out, &p);
                out.push_str("</div>");
            }
            out.push_str("</div>\n");
            Self::across_ranks(out, figs, s, &c.metric);
            out.push_str(&pairs_table(s));
            let v = &s.variance_share;
            let _ = writeln!(
                out,
                "<p>Method share of the variance: <b>{:.3}</b> [{:.3}, {:.3}] (the methods' variation common to all \
                 data sets against the method-by-data-set interaction; near 1, the ranking travels between data \
                 sets).</p>",
                v.mean, v.q2_5, v.q97_5
            );
            for w in &s.warnings {
                let _ = write!(out, "<p class=\"small\">note: {}</p>", escape(w));
            }
            match &c.audit {
                Some(Ok(a)) => {
                    let clear = a.verdicts.iter().filter(|v| v.clear).count();
                    let _ = writeln!(
                        out,
                        "<h3>Calibration audit across data sets: what 5 or 10 realizations would have said</h3>\n\
                         <p class=\"small\">{} random subsets of R realizations of every data set, each fitted with \
                         this model and scored per data set on the {clear} of {} (data set, pair) verdicts whose \
                         paired z over all realizations exceeds {}, beside each pair's own paired-difference \
                         posterior on its data set (<code>credence audit --dataset-column</code>, docs/audit.md).</p>",
                        a.options.subsets,
                        a.verdicts.len(),
                        a.options.clear_z
                    );
                    Self::audit_body(out, figs, a);
                }
                Some(Err(e)) => {
                    let _ = write!(out, "<p class=\"bad\">no audit across data sets: {}</p>", escape(e));
                }
                None => {}
            }
            let json = serde_json::to_string(s).unwrap_or_default().replace("</", "<\\/");
            let _ = writeln!(
                out,
                "<script type=\"application/json\" class=\"credence-across\" data-metric=\"{}\">{json}</script>",
                escape(&c.metric)
            );
        }
    }
}
