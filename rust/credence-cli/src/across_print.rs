//! How `credence fit --dataset-column` prints an across-data-sets fit, brms-style: the
//! header, the parameter table, P(best on a new data set) with the expected ranks, rliable's
//! cross-checks, the pairs on a new data set and on
//! each data set, and the method share of the variance.

use std::path::Path;

use credence::compare::{AcrossSigma, AcrossSummary, Interaction, MethodEffects, SETTLED_LEVEL};

use crate::output::{halving, parameter_rows, print_draws, print_form_and_data, print_sentences_and_warnings};
use crate::table::{number, prob, render};

/// The header: model, form, data, draws and sampler, as brms prints them.
fn print_header(s: &AcrossSummary, data: &Path) {
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
    let d = &s.data;
    let counts = [(d.datasets.len(), "data sets"), (d.methods.len(), "methods"), (d.realizations, "realizations")];
    print_form_and_data(&s.form, data, d.observations, &counts);
    outln!(
        "  Scale: {}",
        if s.scale == "per_data_set" { "per data set (effects in data-set sds)" } else { "as given" }
    );
    let sm = &s.sampler;
    print_draws(sm.chains, sm.warmup, sm.draws);
    outln!("Sampler: NUTS ({}), target acceptance {}", halving(sm.walnuts), sm.target_accept);
    outln!(" Fitted in {:.3} s\n", s.seconds);
}

/// The header, the parameter table, P(best), the pairs, the variance share, the
/// diagnostics, the fit in sentences (`metric` the gaps' unit) and the warnings.
pub(crate) fn print_tables(s: &AcrossSummary, data: &Path, metric: &str) {
    print_header(s, data);
    out!(
        "{}",
        render(&parameter_rows(&s.parameters, ("Rhat", &s.parameters.iter().map(|p| p.rhat).collect::<Vec<_>>())))
    );
    let better = if s.higher_is_better { "higher" } else { "lower" };
    outln!("\nP(best on a new data set), {better} is better:");
    let mut rows = vec![["method", "delta", "P(best)", "E[rank]", "95% rank"].map(String::from).to_vec()];
    for m in &s.ranking {
        let delta = s.parameters.iter().find(|p| p.name == format!("delta[{m}]")).map(|p| p.mean);
        let p = s.prob_best_new.iter().find(|(x, _)| x == m).map(|(_, p)| *p);
        let rank = s.expected_rank_new.iter().find(|(x, _)| x == m).map(|(_, r)| r);
        rows.push(vec![
            m.clone(),
            number(delta),
            prob(p),
            rank.map_or_else(|| "-".into(), |r| format!("{:.2}", r.mean)),
            rank.map_or_else(|| "-".into(), |r| format!("[{}, {}]", r.q2_5, r.q97_5)),
        ]);
    }
    out!("{}", render(&rows));
    print_checks(s);
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
    print_sentences_and_warnings(s.sentences(metric, SETTLED_LEVEL), &s.warnings);
}

/// rliable's cross-checks on scores normalised per data set: IQM and mean with their
/// intervals, and the share of runs above half of each data set's range (the performance
/// profile at 0.5).
fn print_checks(s: &AcrossSummary) {
    let Some(c) = &s.checks else { return };
    outln!(
        "\nFrequentist cross-checks (rliable; scores min-max normalised per data set, 1 = best run; stratified \
         bootstrap, {} resamples, seed {}):",
        c.aggregates.reps,
        c.aggregates.seed
    );
    let mid = c.profiles.taus.iter().position(|&t| t >= 0.5);
    let mut rows = vec![["method", "IQM", "95% interval", "mean", "runs above 0.5"].map(String::from).to_vec()];
    for m in &s.ranking {
        let Some(a) = c.aggregates.methods.get(m) else { continue };
        let above = mid.and_then(|i| c.profiles.methods.get(m).map(|p| p.fraction[i]));
        rows.push(vec![
            m.clone(),
            format!("{:.3}", a.iqm.estimate),
            format!("[{:.3}, {:.3}]", a.iqm.lower, a.iqm.upper),
            format!("{:.3}", a.mean.estimate),
            above.map_or_else(|| "-".into(), |f| format!("{f:.3}")),
        ]);
    }
    out!("{}", render(&rows));
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
            vec![x.clone(), y.clone(), prob(Some(p.prob_better_new)), format!("{:.3}", p.prob_better_new_mcse)];
        if let Some(r) = &p.rope {
            let [l, o, g] = r.most_probable;
            row.extend([
                prob(Some(r.left)),
                prob(Some(r.rope)),
                prob(Some(r.right)),
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
        let cell = |d: &String| prob(p.prob_better_on.iter().find(|(e, _)| e == d).map(|(_, v)| *v));
        rows.push(std::iter::once(format!("{x} - {y}")).chain(s.data.datasets.iter().map(cell)).collect());
    }
    out!("{}", render(&rows));
}
