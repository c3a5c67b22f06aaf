//! Agreement with independent long runs (issue 14): for the tables in tests/data/long_runs/,
//! credence's default Gaussian fit (the collapsed model) against rstan long runs of an
//! independent formulation (y as one multivariate normal with its dense N x N covariance, the
//! locations drawn from their dense Gaussian conditional; tests/reference/long_runs.R, whose
//! output tests/data/long_runs/reference.json is committed). Posterior means must agree within
//! 0.1 posterior sd and posterior sds within 15%.
//!
//! Slow in debug builds; the full test run executes it in release mode:
//! `cargo test --release -p credence --test long_runs`.

use credence::compare::{Design, FitOptions, NutsSettings, Sampler, fit};
use credence::io::Table;

fn root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
#[cfg_attr(debug_assertions, ignore = "slow without optimisation: cargo test --release --test long_runs")]
fn collapsed_fits_agree_with_independent_long_runs() {
    let dir = root().join("tests/data/long_runs");
    let reference: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("reference.json")).expect("reference.json")).unwrap();
    let tables = reference["tables"].as_object().expect("tables");
    assert!(tables.len() >= 3, "at least three reference tables");
    // Long credence runs too, so that its Monte Carlo error (sd / sqrt(ESS), ESS >= 5000 here)
    // stays near 0.01 sd, a tenth of the tolerance.
    let options = FitOptions {
        sampler: Sampler::Nuts(NutsSettings { draws: 6000, seed: 7, ..Default::default() }),
        ..Default::default()
    };
    let mut worst = (0.0f64, 0.0f64);
    for (name, run) in tables {
        assert_eq!(run["divergences"].as_u64(), Some(0), "{name}: the reference run diverged");
        let table = Table::read(&dir.join(name)).unwrap();
        let (design, _) = Design::from_table(&table, "crps", "method", Some("realization"), None).unwrap();
        let f = fit(&design, &options).unwrap();
        let d = f.diagnostics();
        assert!(d.divergences == 0 && d.max_rhat <= 1.01, "{name}: {d:?}");
        let params = run["parameters"].as_object().unwrap();
        for s in f.summary() {
            let r = &params[&s.name];
            let (mean, sd) = (r["mean"].as_f64().unwrap(), r["sd"].as_f64().unwrap());
            let gap = (s.mean - mean).abs() / sd;
            let ratio = (s.sd / sd - 1.0).abs();
            eprintln!(
                "{name:24} {:12} mean {:.5} vs {mean:.5} ({gap:.3} sd), sd {:.5} vs {sd:.5} ({ratio:.3})",
                s.name, s.mean, s.sd
            );
            assert!(gap < 0.1, "{name} {}: mean {} vs reference {mean} ({gap:.3} sd)", s.name, s.mean);
            assert!(ratio < 0.15, "{name} {}: sd {} vs reference {sd}", s.name, s.sd);
            worst = (worst.0.max(gap), worst.1.max(ratio));
        }
    }
    eprintln!("largest mean gap {:.3} sd, largest sd ratio error {:.3}", worst.0, worst.1);
}
