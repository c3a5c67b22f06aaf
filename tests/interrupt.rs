//! A stop request (`credence::interrupt`, Ctrl-C in R) ends a fit and a plan promptly with
//! `Error::Interrupted`, and withdrawing it restores normal fits; the threads of
//! `interrupt::on_threads` change no draw.
//!
//! One test function: the request is process-wide, so no other fit may run beside these.

use std::time::{Duration, Instant};

use credence::Error;
use credence::compare::{
    CheesSettings, CpuBatch, FitOptions, NutsSettings, PlanOptions, PlanSource, Sampler, Stated, fit, plan,
};
use credence::interrupt;
use credence_testkit::fit_data::gaussian_design;

#[test]
fn a_stop_request_ends_fits_and_plans_and_threads_change_no_draw() {
    let design = gaussian_design(3, 10, 1);
    let nuts = |warmup, draws| FitOptions {
        sampler: Sampler::Nuts(NutsSettings { warmup, draws, ..Default::default() }),
        ..Default::default()
    };

    // A fit of a million warmup iterations per chain stops within a second of the request.
    interrupt::clear();
    let stopped = std::thread::scope(|s| {
        let long = s.spawn(|| fit(&design, &nuts(1_000_000, 100)));
        std::thread::sleep(Duration::from_millis(300));
        let asked = Instant::now();
        interrupt::request();
        let out = long.join().unwrap();
        (out, asked.elapsed())
    });
    assert!(matches!(stopped.0, Err(Error::Interrupted)), "{:?}", stopped.0.map(|_| ()));
    assert!(stopped.1 < Duration::from_secs(1), "stopped after {:?}", stopped.1);
    assert_eq!(Error::Interrupted.to_string(), "interrupted");

    // While the request stands, ChEES and a plan stop too.
    let chees = FitOptions { sampler: Sampler::Chees(CheesSettings::default()), ..Default::default() };
    assert!(matches!(fit(&design, &chees), Err(Error::Interrupted)));
    let stated = Stated { effect: 0.3, sigma_a: 0.2, sigma_b: 0.2, ..Default::default() };
    let options = PlanOptions { a: "A".into(), b: "B".into(), realizations: vec![3], sims: 4, ..Default::default() };
    assert!(matches!(plan(PlanSource::Stated(&stated), &options, &CpuBatch), Err(Error::Interrupted)));

    // Withdrawn, fits run again; on one thread, two, or rayon's global pool, the same draws.
    interrupt::clear();
    let quick = nuts(200, 200);
    let free = fit(&design, &quick).unwrap();
    for threads in [Some(1), Some(2), None] {
        let on = interrupt::on_threads(threads, || fit(&design, &quick)).unwrap().unwrap();
        assert_eq!(on.summary(), free.summary(), "{threads:?} threads");
        for name in free.names() {
            assert_eq!(on.draws(name).unwrap(), free.draws(name).unwrap(), "{name}");
        }
    }
    assert!(interrupt::on_threads(Some(0), || ()).is_err());
}
