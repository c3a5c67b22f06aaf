//! How `credence fit` prints a single-data-set fit: brms' header and parameter table, then
//! P(A better than B), the minimum detectable differences and the ROPE.

use std::collections::HashMap;
use std::path::Path;

use credence::compare::{Family, FitSummary, Likelihood, Pairs, SETTLED_LEVEL, SigmaStructure};

use crate::output::{halving, parameter_rows, print_draws, print_form_and_data, print_sentences_and_warnings};
use crate::table::{number, prob, render};

/// The header: family, form, data, draws and sampler, as brms prints them.
fn print_header(s: &FitSummary, data: &Path) {
    let family = match s.model {
        Family::Gaussian(o) => format!(
            "gaussian ({} likelihood, {} sigma{}{})",
            if o.likelihood == Likelihood::StudentT { "Student-t" } else { "normal" },
            if o.sigma == SigmaStructure::Shared { "shared" } else { "method-specific" },
            if o.realization_effect && s.data.realizations > 0 { ", realization effect" } else { "" },
            if o.standardize { ", standardised internally" } else { "" }
        ),
        Family::BetaBinomial(o) => format!(
            "beta-binomial (logit link{}{})",
            if o.phi_per_method { ", phi per method" } else { "" },
            if o.realization_effect { ", realization effect" } else { "" }
        ),
        Family::Paired(_) if s.items.is_some() => {
            let i = s.items.as_ref().map_or_else(String::new, |i| {
                let n = if i.per_realization.0 == i.per_realization.1 {
                    i.per_realization.0.to_string()
                } else {
                    format!("{}-{}", i.per_realization.0, i.per_realization.1)
                };
                let layout = match i.layout {
                    credence::compare::ItemLayout::Shared => format!("one test set of {n} shared by every realization"),
                    credence::compare::ItemLayout::Nested => format!("a test split of {n} per realization"),
                };
                format!("{} scores by '{}', {layout}", i.scores, i.column)
            });
            format!("paired, per-item ({i})")
        }
        Family::Paired(o) => format!(
            "paired (normal across methods per realization, prior df {}{})",
            o.covariance_df,
            if o.cv_test_fraction > 0.0 {
                format!(", cross-validation folds with test fraction {}", o.cv_test_fraction)
            } else {
                String::new()
            }
        ),
    };
    let sm = &s.sampler;
    outln!(" Family: {family}");
    let counts = [(s.data.methods.len(), "methods"), (s.data.realizations, "realizations")];
    print_form_and_data(&s.form, data, s.data.observations, &counts);
    print_draws(sm.chains, sm.warmup, sm.draws as u64);
    let halving = halving(sm.max_energy_error);
    match &sm.chees {
        _ if sm.exact => outln!("Sampler: none (exact draws from the posterior)"),
        None => outln!("Sampler: NUTS ({halving}), target acceptance {}", sm.target_accept),
        Some(c) => outln!(
            "Sampler: ChEES-HMC ({halving}), step size {:.4}, trajectory length {:.4} ({:.1} leapfrog steps per iteration), largest nested R-hat {:.3}",
            c.step_size,
            c.trajectory_length,
            c.mean_leapfrog_steps,
            c.max_nested_rhat
        ),
    }
    outln!(" Fitted in {:.3} s\n", s.seconds);
}

/// The header, the parameter table, P(better), the MDDs, the ROPE, the summary in words (the
/// metric named `metric`) and the warnings.
pub(crate) fn print_tables(s: &FitSummary, data: &Path, metric: &str) {
    print_header(s, data);
    out!("{}", {
        let (heading, rhats) = s.sampler_rhats();
        render(&parameter_rows(&s.parameters, (heading, &rhats)))
    });
    print_repeats(s);
    print_items(s);
    let groups = &s.data.methods;
    let better = match s.target {
        Some(t) => format!("closer to {t}"),
        None if s.higher_is_better => "higher".into(),
        None => "lower".into(),
    };
    if s.pairs == Pairs::Ranked {
        print_ranking(s, &better);
    } else {
        outln!("\nP(row better than column), {better} is better:");
        let mut rows = vec![std::iter::once(String::new()).chain(groups.iter().cloned()).collect::<Vec<_>>()];
        for g in groups {
            let cell = |h: &String| prob(s.prob_better.get(g, h).copied());
            rows.push(std::iter::once(g.clone()).chain(groups.iter().map(cell)).collect());
        }
        out!("{}", render(&rows));
        print_ranks(s);
    }
    outln!("\nMinimum detectable difference at power {} ({} new realization(s)):", s.power, s.r_new);
    let mut rows = vec![["pair", "gap", "MDD", "P(detect gap)"].map(String::from).to_vec()];
    let ranks: HashMap<&str, usize> = s.ranking.iter().enumerate().map(|(k, m)| (m.as_str(), k)).collect();
    let rank: Vec<Option<usize>> = groups.iter().map(|g| ranks.get(g.as_str()).copied()).collect();
    for (i, x) in groups.iter().enumerate() {
        for (j, y) in groups.iter().enumerate().skip(i + 1) {
            // With ranked pairs, neighbours in the ranking only (the best's other pairs are in
            // the JSON).
            let neighbours = rank[i].zip(rank[j]).is_some_and(|(a, b)| a.abs_diff(b) == 1);
            if s.pairs == Pairs::Ranked && !neighbours {
                continue;
            }
            if let Some(m) = s.mdd.get(x, y) {
                rows.push(vec![
                    format!("{x} - {y}"),
                    number(Some(m.gap)),
                    number(Some(m.mdd)),
                    format!("{:.3}", m.detection_probability),
                ]);
            }
        }
    }
    out!("{}", render(&rows));
    if let (Some(eps), Some(rope)) = (s.rope_eps, &s.rope) {
        outln!("\nP(|difference| < {eps}):");
        let mut rows = vec![["pair", "P(ROPE)"].map(String::from).to_vec()];
        for (i, x) in groups.iter().enumerate() {
            for y in &groups[i + 1..] {
                if let Some(p) = rope.get(x, y) {
                    rows.push(vec![format!("{x} - {y}"), prob(Some(*p))]);
                }
            }
        }
        out!("{}", render(&rows));
    }
    print_aggregates(s);
    print_sentences_and_warnings(s.sentences(metric, SETTLED_LEVEL), &s.warnings);
}

/// rliable's cross-checks, methods in the ranking's order: mean and IQM with their
/// stratified-bootstrap intervals, and P(improvement) of each method over the next.
fn print_aggregates(s: &FitSummary) {
    let Some(a) = s.aggregates.as_ref().filter(|_| s.pairs != Pairs::Ranked) else { return };
    outln!(
        "\nFrequentist cross-check (rliable: stratified bootstrap, {} resamples, seed {}; 95% intervals):",
        a.reps,
        a.seed
    );
    let head = ["method", "runs", "mean", "95% interval", "IQM", "95% interval", "P(improves on next)"];
    let mut rows = vec![head.map(String::from).to_vec()];
    let interval = |i: &credence::compare::Interval| format!("[{}, {}]", number(Some(i.lower)), number(Some(i.upper)));
    for (k, m) in s.ranking.iter().enumerate() {
        let Some(x) = a.methods.get(m) else { continue };
        let next = s.ranking.get(k + 1).and_then(|n| a.prob_improvement.get(m)?.get(n));
        rows.push(vec![
            m.clone(),
            x.runs.to_string(),
            number(Some(x.mean.estimate)),
            interval(&x.mean),
            number(Some(x.iqm.estimate)),
            interval(&x.iqm),
            next.map_or_else(|| "-".into(), |p| format!("{:.3} [{:.3}, {:.3}]", p.estimate, p.lower, p.upper)),
        ]);
    }
    out!("{}", render(&rows));
}

/// Per-item scores: each method's test and training noise in a realization mean.
fn print_items(s: &FitSummary) {
    let Some(i) = &s.items else { return };
    outln!(
        "\nPer-item scores ('{}', {} df): what limits each method's comparisons, its test items or its trainings:",
        i.column,
        i.df
    );
    let mut rows = vec![["method", "test sd", "training sd", "test share"].map(String::from).to_vec()];
    for m in &i.methods {
        rows.push(vec![
            m.method.clone(),
            format!("{:.4}", m.test_sd),
            format!("{:.4}", m.training_sd),
            format!("{:.2}", m.test_share),
        ]);
    }
    out!("{}", render(&rows));
    outln!("(test share near 1: more test items per realization would settle sooner; near 0: only more trainings)");
}

/// Repeated trainings: each method's training sd within a realization and its share of the
/// realization means' variance.
fn print_repeats(s: &FitSummary) {
    let Some(r) = &s.repeats else { return };
    let (lo, hi) = r.per_cell;
    let per_cell = if lo == hi { format!("{lo}") } else { format!("{lo}-{hi}") };
    outln!("\nRepeated trainings ('{}', {per_cell} per method and realization; the fit is of their means):", r.column);
    let mut rows =
        vec![["method", "training sd", "df", "sd of realization means", "training share"].map(String::from).to_vec()];
    for m in &r.methods {
        rows.push(vec![
            m.method.clone(),
            format!("{:.4}", m.training_sd),
            m.df.to_string(),
            format!("{:.4}", m.means_sd),
            format!("{:.2}", m.training_share),
        ]);
    }
    out!("{}", render(&rows));
    outln!(
        "(training share near 1: more trainings per realization would settle comparisons sooner; near 0: more realizations)"
    );
}

/// The rank posterior, methods best first: P(best) and the expected rank with its 95% interval.
fn print_ranks(s: &FitSummary) {
    if s.expected_rank.is_empty() {
        return;
    }
    outln!("\nRanks (1 = best; per posterior draw):");
    let mut rows = vec![["method", "P(best)", "E[rank]", "95% interval"].map(String::from).to_vec()];
    for m in &s.ranking {
        let best = s.prob_best.iter().find(|(n, _)| n == m).map(|(_, p)| *p);
        if let Some((_, e)) = s.expected_rank.iter().find(|(n, _)| n == m) {
            rows.push(vec![m.clone(), prob(best), format!("{:.2}", e.mean), format!("{}-{}", e.q2_5, e.q97_5)]);
        }
    }
    out!("{}", render(&rows));
    if let Some(cd) = &s.classic_cd {
        let mut order: Vec<(&String, f64)> = cd.average_ranks.iter().map(|(m, r)| (m, *r)).collect();
        order.sort_by(|a, b| a.1.total_cmp(&b.1));
        let ranks: Vec<String> = order.iter().map(|(m, r)| format!("{m} {r:.2}")).collect();
        outln!(
            "Frequentist cross-check (Friedman/Nemenyi over {} realizations): average ranks {}; critical difference \
             {:.2} at {}; Friedman chi2 = {:.2}, p = {:.3}",
            cd.blocks,
            ranks.join(", "),
            cd.critical_difference,
            cd.alpha,
            cd.friedman_chi2,
            cd.friedman_p
        );
    }
}

/// Many methods: the ranking with each method's estimate and its P(better than the next), and
/// P(the best better than each) summarised.
fn print_ranking(s: &FitSummary, better: &str) {
    outln!("\nMethods ranked by posterior mean ({} methods, {better} is better):", s.ranking.len());
    let mut rows = vec![["rank", "method", "estimate", "P(better than next)", "P(best)"].map(String::from).to_vec()];
    for (k, m) in s.ranking.iter().enumerate() {
        let estimate = s.method_parameter(m).map(|p| p.mean);
        let next = s.ranking.get(k + 1).and_then(|n| s.prob_better.get(m, n));
        let best = s.prob_best.iter().find(|(n, _)| n == m).map(|(_, p)| *p);
        rows.push(vec![(k + 1).to_string(), m.clone(), number(estimate), prob(next.copied()), prob(best)]);
    }
    out!("{}", render(&rows));
    if let Some(best) = s.ranking.first() {
        let p: Vec<f64> = s.ranking[1..].iter().filter_map(|m| s.prob_better.get(best, m).copied()).collect();
        let least = p.iter().copied().fold(f64::INFINITY, f64::min);
        outln!(
            "P({best} better than each other method): smallest {} (all pairs with the best in the JSON)",
            prob(Some(least))
        );
    }
}
