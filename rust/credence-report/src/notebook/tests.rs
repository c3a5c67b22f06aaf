//! The notebook HTML holds the numbers of the result it shows, escaped.

use ndarray::array;

use super::EvcxrDisplay;
use crate::format::num;
use credence::compare::{Decision, Plan, PlanPoint};
use credence::credal::{CredalOptions, Normalisation, evaluate_credal, from_samples, rank_over_lambda};
use credence::io::Table;
use credence::quantiles::{CiOptions, quantile_table};

/// The first known case: samples (0.7, 0.2, 0.1) and (0.5, 0.3, 0.2), label 0:
/// KL = -ln 0.7 = 0.356675, NS = 0.2 ln 2 = 0.138629, E(lambda = 1) = 0.495304.
#[test]
fn credal_report_shows_the_known_values() {
    let s = array![[[0.7, 0.2, 0.1]], [[0.5, 0.3, 0.2]]];
    let m = from_samples(s.view(), None, Normalisation::default()).unwrap();
    let r = evaluate_credal(&m, Some(&[0]), &CredalOptions::default()).unwrap();
    let html = r.to_html();
    assert!(html.starts_with("<div class=\"credence-credal\">"));
    // Closed forms, formatted as the table formats numbers.
    for v in [-(0.7f64.ln()), 0.2 * 2f64.ln(), -(0.7f64.ln()) + 0.2 * 2f64.ln()] {
        assert!(html.contains(&format!("{} &plusmn; 0", num(v))), "{v} missing from {html}");
    }
    assert!(html.contains("accuracy 1.000"));
    assert!(html.contains("correct (n = 1)") && html.contains("incorrect (n = 0)"));
    // One E row per lambda of the default grid (0, 0.1, ..., 1).
    assert_eq!(html.matches("<th>E (&lambda; = ").count(), 11);
    assert!(html.contains("JS [nats (divergence)]") && html.contains("bits</div>"), "{html}");
    assert_eq!(html.matches("<tr>").count(), 1 + 3 + 11);
}

/// Model names are escaped and the ranking follows mean E = d + lambda NS.
#[test]
fn lambda_ranking_escapes_names() {
    let point = array![[[0.6, 0.3, 0.1]]];
    let wide = array![[[0.9, 0.05, 0.05]], [[0.3, 0.4, 0.3]]];
    let opts = CredalOptions::default();
    let rp = evaluate_credal(&from_samples(point.view(), None, Normalisation::default()).unwrap(), Some(&[0]), &opts)
        .unwrap();
    let rw = evaluate_credal(&from_samples(wide.view(), None, Normalisation::default()).unwrap(), Some(&[0]), &opts)
        .unwrap();
    let ranks = rank_over_lambda(&[("<point>".into(), &rp), ("a&b".into(), &rw)], &[0.0]).unwrap();
    let html = ranks.to_html();
    assert!(html.contains("&lt;point&gt;") && html.contains("a&amp;b") && !html.contains("<point>"));
    // At lambda = 0, E = d: d(point) = -ln 0.6; for the two samples P_low({1, 2}) = min(0.1, 0.7),
    // so Pl({0}) = 0.9 and d(wide) = -ln 0.9 < -ln 0.6: the wide model ranks first.
    let first = html.find("a&amp;b").unwrap();
    assert!(first < html.find("&lt;point&gt;").unwrap());
    assert!(html.contains(&num(-(0.6f64.ln()))));
}

/// What a quantile table left out is listed under it, escaped; a table without any has no list.
#[test]
fn quantile_table_lists_its_warnings() {
    let method: Vec<String> = (0..12).map(|i| if i == 11 { "<A>".into() } else { "B".into() }).collect();
    let mut crps: Vec<String> = (1..=11).map(|i| i.to_string()).collect();
    crps.push("NaN".into());
    let t = Table::from_columns("t.csv", vec![("method".into(), method), ("crps".into(), crps)]).unwrap();
    let q = quantile_table(&t, "crps", &["method".into()], &[0.5], &CiOptions::default()).unwrap();
    let html = q.to_html();
    assert!(html.contains("<ul class=\"credence-quantile-warnings\"><li>t.csv: column "));
    assert!(html.contains("1 in group &lt;A&gt;</li>"), "{html}");
    let clean = quantile_table(&t, "crps", &[], &[0.5], &CiOptions::default()).unwrap();
    assert_eq!(clean.warnings.len(), 1);
    let full = Table::from_columns("f.csv", vec![("crps".into(), (1..=9).map(|i| i.to_string()).collect())]).unwrap();
    let none = quantile_table(&full, "crps", &[], &[0.5], &CiOptions::default()).unwrap();
    assert!(none.warnings.is_empty() && !none.to_html().contains("<ul"));
}

/// x = 1..10 per group: the type-7 median is 5.5 and the mean 5.5; every interval of the result
/// appears in its row; group values and the column name are escaped.
#[test]
fn quantile_table_shows_every_interval_escaped() {
    let mut method = vec!["<A>".to_string(); 10];
    method.extend(vec!["B&C".to_string(); 10]);
    let crps: Vec<String> = (1..=10).chain(11..=20).map(|i| i.to_string()).collect();
    let t = Table::from_columns("t.csv", vec![("method".into(), method), ("crps \"x\"".into(), crps)]).unwrap();
    let q = quantile_table(&t, "crps \"x\"", &["method".into()], &[0.1, 0.5, 0.9], &CiOptions::default()).unwrap();
    let html = q.to_html();
    assert!(
        html.contains("crps &quot;x&quot;") && html.contains("<td>&lt;A&gt;</td>") && html.contains("<td>B&amp;C</td>")
    );
    assert!(!html.contains("<A>"));
    assert_eq!(q.groups[0].quantiles[1].estimate, 5.5);
    assert!(html.contains("<td>5.500 ["));
    for g in &q.groups {
        let row_start = html.find(&format!("<td>{}</td>", super::escape(&g.key[0]))).unwrap();
        let row = &html[row_start..row_start + html[row_start..].find("</tr>").unwrap()];
        assert!(row.contains(&format!("<td>{}</td>", g.n)));
        for ci in &g.quantiles {
            let cell = match (ci.lower, ci.upper) {
                (Some(l), Some(u)) => format!("{} [{}, {}]", num(ci.estimate), num(l), num(u)),
                _ => format!("{} none", num(ci.estimate)),
            };
            assert!(row.contains(&cell), "{cell} not in {row}");
        }
        let m = g.mean.unwrap();
        assert!(row.contains(&format!("{} [{}, {}]", num(m.mean), num(m.lower), num(m.upper))));
        // Shapiro-Wilk beside it (both groups are 10 evenly spaced values: R's W = 0.9701646).
        let t = g.normality.unwrap();
        assert!((t.w - 0.970_164_611_231).abs() < 1e-11);
        assert!(row.contains(&format!("<td>{} ({})</td>", num(t.w), num(t.p_value))), "{row}");
    }
    assert!(html.contains("Shapiro-Wilk W (p)"));
    // u = 0.1 and 0.9 with 10 runs at level 0.9: no exact interval exists (the minimum n is 22).
    assert!(html.contains("none"));
    assert_eq!(html.matches("<tr>").count(), 3);
}

/// A plan shows every R with its assurance &plusmn; MCSE, the mean P(A better than B), the
/// counts and the MDD approximation in its row; the smallest R's row is marked; names and
/// warnings are escaped.
#[test]
fn plan_shows_every_r_and_its_assurance() {
    let point = |r: usize, assurance: f64, mdd: f64| PlanPoint {
        r,
        assurance,
        assurance_mcse: (assurance * (1.0 - assurance) / 100.0).sqrt(),
        expected_prob_better: 0.5 + assurance / 2.5,
        fits: 100 - r / 5,
        refit: r / 2,
        unclean: r / 10,
        failed: r / 5,
        mdd,
        mdd_detection_probability: assurance.sqrt(),
    };
    let plan = Plan {
        a: "<A>".into(),
        b: "B&C".into(),
        methods: vec!["<A>".into(), "B&C".into(), "D".into()],
        source: "pilot".into(),
        decision: Decision { level: 0.9, rope: Some(0.01) },
        power: 0.8,
        sims: 100,
        points: vec![point(3, 0.31, 0.25), point(5, 0.57, 0.18), point(10, 0.83, 0.12)],
        smallest_r: Some(10),
        backend: "cpu".into(),
        sampler: credence::compare::SamplerName::Nuts,
        trial: Some(credence::compare::SamplerTrial { tables: 8, chees_gradient_evals: 900, nuts_gradient_evals: 300 }),
        exact: false,
        seed: 7,
        seconds: 12.34,
        warnings: vec!["R = 3: 1 of 100 simulated fits were not clean <x>".into()],
    };
    let html = plan.to_html();
    assert!(html.starts_with("<div class=\"credence-plan\">") && html.contains("class=\"credence-plan-table\""));
    assert!(html.contains("&lt;A&gt; vs B&amp;C") && !html.contains("<A>"), "{html}");
    assert!(html.contains("P(&lt;A&gt; better than B&amp;C by more than 0.01) &gt;= 0.9"), "{html}");
    assert!(
        html.contains("smallest R: <b>R = 10</b>")
            && html.contains("fitted on cpu in 12.3 s (seed 7) by NUTS (a trial of 8 tables")
    );
    assert!(html.contains("3 methods simulated, worlds drawn from the pilot fit's posterior"));
    assert_eq!(html.matches("<tr>").count() + html.matches("<tr class=").count(), 1 + plan.points.len());
    for p in &plan.points {
        let start = html
            .find(&format!("<td>{}</td><td>{:.3} &plusmn; ", p.r, p.assurance))
            .unwrap_or_else(|| panic!("R = {} missing: {html}", p.r));
        let row = &html[start..start + html[start..].find("</tr>").unwrap()];
        let want = format!(
            "<td>{}</td><td>{:.3} &plusmn; {:.3}</td><td>{:.3}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.3}</td>",
            p.r,
            p.assurance,
            p.assurance_mcse,
            p.expected_prob_better,
            p.fits,
            p.refit,
            p.unclean,
            p.failed,
            num(p.mdd),
            p.mdd_detection_probability
        );
        assert_eq!(row, want);
    }
    assert!(html.contains("<tr class=\"ok\"><td>10</td><td>0.830 &plusmn; 0.038</td>"), "{html}");
    assert!(html.contains("<li>R = 3: 1 of 100 simulated fits were not clean &lt;x&gt;</li>"));
    // No R reaching the power, stated values, no warnings: said so, no marked row, no list.
    let none = Plan { smallest_r: None, source: "stated".into(), warnings: vec![], ..plan };
    let html = none.to_html();
    assert!(html.contains("smallest R: <b>none of the grid</b>") && html.contains("world from stated values"));
    assert!(!html.contains("class=\"ok\"") && !html.contains("<ul"));
}

#[test]
fn across_summary_shows_p_best_and_pairs_escaped() {
    use credence::compare::{AcrossFitOptions, AcrossSummary, fit_across};
    let design = crate::plots::across::tests::three_data_sets([("A<b>", 0.0), ("B", 0.3)]);
    let mut o = AcrossFitOptions::default();
    o.sampler.chains = 2;
    o.sampler.warmup = 200;
    o.sampler.draws = 200;
    let fit = fit_across(&design, &o).unwrap();
    let s = AcrossSummary::new(&fit, None).unwrap();
    let html = s.to_html();
    assert!(html.contains("credence-across"));
    assert!(html.contains("A&lt;b&gt;") && !html.contains("A<b>"));
    assert!(html.contains("P(best)") && html.contains("on a new data") && html.contains("yacht"));
    let p = s.prob_best_new.iter().find(|x| x.1 > 0.5).unwrap().1;
    assert!(html.contains(&format!("{p:.3}")));
    let pb = s.pairwise.get("A<b>", "B").unwrap().prob_better_new;
    assert!(html.contains(&format!("{pb:.3}")));
    // The ranks on a new data set and rliable's IQM on normalised scores.
    assert!(html.contains("credence-across-ranks"));
    let e = &s.expected_rank_new[0].1;
    assert!(html.contains(&format!("{:.2} [{}, {}]", e.mean, e.q2_5, e.q97_5)));
    // The fit in sentences, escaped like every name.
    let first = &s.sentences("", credence::compare::SETTLED_LEVEL).unwrap()[0];
    assert!(html.contains(&format!("<li>{}</li>", crate::plots::html::escape(first))));
}

/// A long table shows its first rows, escaped, missing cells as NA, and counts the rest.
#[test]
fn a_long_table_shows_its_first_rows() {
    let n = super::TABLE_ROWS + 5;
    let table = Table::from_columns(
        "t.csv",
        vec![
            ("method".into(), (0..n).map(|i| if i == 0 { "<b>".into() } else { format!("M{i}") }).collect()),
            ("crps".into(), (0..n).map(|i| if i == 1 { "NA".into() } else { format!("0.{i}") }).collect()),
        ],
    )
    .unwrap();
    let html = table.to_html();
    assert!(html.starts_with("<table class=\"credence-table\">") && html.contains("<th>crps</th>"));
    assert!(html.contains("<td>&lt;b&gt;</td>") && html.contains("<td>NA</td>") && html.contains("<td>0.2</td>"));
    assert_eq!(html.matches("<tr>").count(), 1 + super::TABLE_ROWS);
    assert!(html.contains("... and 5 more rows"), "{html}");
}
