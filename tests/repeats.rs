//! Repeated trainings within a realization, with no true difference between two methods: the
//! paired model of each realization's mean over its trainings (`average_repeats`, `--repeat`)
//! settles (P >= 0.95 either way) about the nominal 10% of tables, where taking each training
//! as a realization of its own settles far more when the data split moves the methods apart
//! (the trainings of one split share it). When training noise dominates, both are near nominal.

use credence::compare::{Design, average_repeats};
use credence::request::FitRequest;
use credence_testkit::repeats::repeated_trainings;

const TABLES: u64 = 600;

fn settled(designs: &[Design]) -> f64 {
    let request: FitRequest = serde_json::from_str(r#"{"draws": 1000}"#).unwrap();
    let hits = designs
        .iter()
        .filter(|d| {
            let p = request.fit(d, &|_, _| {}).unwrap().prob_better("A", "B").unwrap().0;
            !(0.05..0.95).contains(&p)
        })
        .count();
    hits as f64 / designs.len() as f64
}

/// (settled with the means, settled with each training as a realization) over the tables.
fn rates(between: f64, training: f64) -> (f64, f64) {
    let (mut means, mut each) = (Vec::new(), Vec::new());
    for s in 0..TABLES {
        let t = repeated_trainings(s, 5, 3, between, training);
        means.push(average_repeats(&t.group, &t.pair, &t.repeat, &t.y, "train_rep").unwrap().0);
        let own: Vec<String> = t.pair.iter().zip(&t.repeat).map(|(p, k)| format!("{p}/{k}")).collect();
        each.push(Design::new(t.group.clone(), Some(own), t.y.clone(), None).unwrap());
    }
    (settled(&means), settled(&each))
}

#[test]
fn the_means_of_repeated_trainings_settle_at_the_nominal_rate() {
    // The split moves the methods apart (sd 0.03) more than a seed does (sd 0.01).
    let (means, each) = rates(0.03, 0.01);
    eprintln!(
        "split effect dominant: settled {means:.3} with the means, {each:.3} with each training as a realization"
    );
    // 10% nominal; the Monte Carlo standard error of a share of 600 is about 0.012.
    assert!((0.06..=0.14).contains(&means), "{means}");
    assert!(each >= 0.3, "{each}");
    // Training noise dominant: the trainings are nearly independent, and both near nominal.
    let (means, each) = rates(0.0, 0.03);
    eprintln!("training noise dominant: settled {means:.3} with the means, {each:.3} with each training");
    assert!((0.06..=0.14).contains(&means), "{means}");
    assert!((0.06..=0.15).contains(&each), "{each}");
}
