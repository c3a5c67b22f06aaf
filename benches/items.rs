//! Per-item scores (`credence fit --item`): the share of tables the per-item model settles
//! (P(A better) >= 0.95 either way) beside the paired model of the realization means, on
//! `credence_testkit::items` worlds whose truth is set, and the speed of one fit of the
//! issue's two sizes. Prints benches/README.md's table:
//!
//! `cargo run --release -p credence --example items [TABLES] [REALIZATIONS]` (default 2000 and 5).

use std::time::Instant;

use credence::compare::{Design, average_items};
use credence::request::FitRequest;
use credence_testkit::items::{ItemWorld, item_scores};
use rayon::prelude::*;

/// The design of a table's per-item scores, and of its realization means alone.
fn designs(seed: u64, w: ItemWorld) -> (Design, Design) {
    let t = item_scores(seed, w);
    let items = average_items(&t.group, &t.pair, &t.item, &t.y, "item").expect("a per-item design");
    let means = Design::new(
        items.group().iter().map(|&g| items.groups()[g].clone()).collect(),
        Some(items.pair().iter().map(|&p| items.pairs()[p].clone()).collect()),
        items.y().to_vec(),
        None,
    )
    .expect("a design of means");
    (items, means)
}

/// One table's outcome: settled (per-item, means), settled wrong (per-item, means), and whether
/// the per-item fit missed the clean standard.
type Outcome = ([usize; 2], [usize; 2], usize);

/// Shares settled (P >= 0.95 either way) and settled wrong (P(B better) >= 0.95 with A
/// better by `gap`), per-item model then the means', and the per-item fits that are not clean.
fn rates(n: u64, w: ItemWorld) -> ([f64; 2], [f64; 2], usize) {
    let request = FitRequest::default();
    let out: Vec<Outcome> = (0..n)
        .into_par_iter()
        .map(|s| {
            let (items, means) = designs(s, w);
            let fit = request.fit(&items, &|_, _| {}).expect("a per-item fit");
            let p_items = fit.prob_better("B", "A").expect("two methods").0;
            let p_means = request.fit(&means, &|_, _| {}).expect("a fit").prob_better("B", "A").expect("two").0;
            let settled = |p: f64| usize::from(!(0.05..0.95).contains(&p));
            let wrong = |p: f64| usize::from(w.gap > 0.0 && p >= 0.95);
            ([settled(p_items), settled(p_means)], [wrong(p_items), wrong(p_means)], usize::from(!fit.is_clean()))
        })
        .collect();
    let share = |f: &dyn Fn(&Outcome) -> usize| out.iter().map(f).sum::<usize>() as f64 / n as f64;
    ([share(&|o| o.0[0]), share(&|o| o.0[1])], [share(&|o| o.1[0]), share(&|o| o.1[1])], out.iter().map(|o| o.2).sum())
}

fn main() {
    let n: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(2000).clamp(10, 1_000_000);
    let r: usize = std::env::args().nth(2).and_then(|a| a.parse().ok()).unwrap_or(5).clamp(2, 100);
    let world =
        |shared, gap, training| ItemWorld { methods: 2, realizations: r, items: 200, shared, gap, training, item: 1.0 };
    println!(
        "| items | truth | noise | settled: per-item / means | wrong: per-item / means | per-item fits not clean |"
    );
    println!("|---|---|---|---|---|---|");
    for (shared, gap, training, noise) in [
        (true, 0.0, 0.1, "training dominant"),
        (true, 0.0, 0.005, "test dominant"),
        (false, 0.0, 0.1, "training dominant"),
        (false, 0.0, 0.005, "test dominant"),
        (false, 0.06, 0.005, "test dominant"),
        (true, 0.06, 0.005, "test dominant"),
    ] {
        let (settled, wrong, div) = rates(n, world(shared, gap, training));
        println!(
            "| {} | gap {gap} | {noise} | {:.3} / {:.3} | {:.3} / {:.3} | {div} |",
            if shared { "shared" } else { "nested" },
            settled[0],
            settled[1],
            wrong[0],
            wrong[1]
        );
    }
    // Speed: one fit, from the long columns to P(A better), as `credence fit --item` does.
    for (m, r, items) in [(2, 3, 300), (6, 5, 10_000)] {
        let w = ItemWorld { methods: m, realizations: r, items, shared: true, gap: 0.01, training: 0.01, item: 1.0 };
        let t = item_scores(1, w);
        let start = Instant::now();
        let d = average_items(&t.group, &t.pair, &t.item, &t.y, "item").expect("a per-item design");
        let read = start.elapsed().as_secs_f64();
        let fit = FitRequest::default().fit(&d, &|_, _| {}).expect("a fit");
        let _ = fit.prob_better("A", "B").expect("two methods");
        println!(
            "{m} methods x {r} trainings x {items} items ({} rows): {:.3} s ({read:.3} s averaging), clean: {}",
            t.y.len(),
            start.elapsed().as_secs_f64(),
            fit.is_clean()
        );
    }
}
