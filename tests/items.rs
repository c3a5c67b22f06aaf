//! Per-item scores (`credence fit --item`) on worlds whose truth is set
//! (`credence_testkit::items`): with no true difference the per-item model settles (P >= 0.95
//! either way) at most about the nominal 10% of tables, where the fit of the realization means
//! alone settles far more on one fixed test set (its items' offset is shared by every
//! realization, which the means cannot see).

use credence::compare::{Design, average_items};
use credence::request::FitRequest;
use credence_testkit::items::{ItemWorld, item_scores};

const TABLES: u64 = 300;

/// Shares settled by the per-item model and by the paired model of the realization means.
fn settled(shared: bool, training: f64) -> (f64, f64) {
    let w = ItemWorld { methods: 2, realizations: 5, items: 200, shared, gap: 0.0, training, item: 1.0 };
    let request = FitRequest::default();
    let mut hits = (0, 0);
    for s in 0..TABLES {
        let t = item_scores(s, w);
        let items = average_items(&t.group, &t.pair, &t.item, &t.y, "item").unwrap();
        let means = Design::new(
            items.group().iter().map(|&g| items.groups()[g].clone()).collect(),
            Some(items.pair().iter().map(|&p| items.pairs()[p].clone()).collect()),
            items.y().to_vec(),
            None,
        )
        .unwrap();
        let p = |d: &Design| request.fit(d, &|_, _| {}).unwrap().prob_better("A", "B").unwrap().0;
        hits.0 += usize::from(!(0.05..0.95).contains(&p(&items)));
        hits.1 += usize::from(!(0.05..0.95).contains(&p(&means)));
    }
    (hits.0 as f64 / TABLES as f64, hits.1 as f64 / TABLES as f64)
}

#[test]
fn with_no_true_difference_the_per_item_model_settles_at_most_the_nominal_share() {
    // The Monte Carlo standard error of a share near 0.1 of 300 tables is about 0.017.
    let (items, means) = settled(true, 0.1);
    eprintln!("shared items, training noise dominant: per-item {items:.3}, means {means:.3}");
    assert!((0.04..=0.15).contains(&items), "{items}");
    let (items, means) = settled(true, 0.005);
    eprintln!("shared items, test noise dominant: per-item {items:.3}, means {means:.3}");
    assert!(items <= 0.15, "{items}");
    assert!(means >= 0.4, "the means alone cannot see the shared test set: {means}");
    let (items, means) = settled(false, 0.005);
    eprintln!("nested items, test noise dominant: per-item {items:.3}, means {means:.3}");
    assert!(items <= 0.15, "{items}");
}
