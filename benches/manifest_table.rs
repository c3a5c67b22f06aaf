//! `credence metrics table` on the manifest: 6 methods x 20 realizations x 10 000 test
//! points, once with Gaussian and 50-sample regression predictions (three methods each) and
//! once with 10-class probabilities (three 5-member ensembles, three single networks), the
//! files written by credence-testkit into DIR. Prints the time of each table (files read,
//! every metric computed, the table written) over several repeats; benches/README.md records
//! them ("Manifest to table").
//!
//!   cargo run --release -p credence --example manifest_table -- DIR [REPEATS]
//!
//! With `credence metrics table DIR/regression/manifest.csv --out T` the same table from the
//! CLI.

use std::path::Path;
use std::time::Instant;

use credence::manifest::{Manifest, MetricsTableOptions, write_metrics_table};
use credence_testkit::predictions::{Kind, classification_manifest, regression_manifest};

fn time(manifest: &Path, out: &Path, repeats: usize) -> Result<Vec<f64>, Box<dyn std::error::Error>> {
    let mut seconds = Vec::new();
    for _ in 0..repeats {
        let _ = std::fs::remove_file(out);
        let start = Instant::now();
        let m = Manifest::read(manifest)?;
        let run = write_metrics_table(&m, &MetricsTableOptions::default(), out, &|_, _| {})?;
        seconds.push(start.elapsed().as_secs_f64());
        assert_eq!(run.computed, 120);
    }
    Ok(seconds)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let dir = Path::new(args.get(1).ok_or("usage: manifest_table DIR [REPEATS]")?);
    let repeats: usize = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(3);
    let (reg, cls) = (dir.join("regression"), dir.join("classification"));
    std::fs::create_dir_all(&reg)?;
    std::fs::create_dir_all(&cls)?;
    let start = Instant::now();
    let methods = [
        ("map", Kind::Gaussian),
        ("ensemble", Kind::Gaussian),
        ("bbb", Kind::Gaussian),
        ("mcd", Kind::Samples(50)),
        ("swag", Kind::Samples(50)),
        ("sgld", Kind::Samples(50)),
    ];
    let r = regression_manifest(&reg, &methods, 20, 10_000, 1);
    let ensembles = [("ens_a", 5), ("ens_b", 5), ("ens_c", 5), ("map_a", 1), ("map_b", 1), ("map_c", 1)];
    let c = classification_manifest(&cls, &ensembles, 20, 10_000, 10, 2);
    println!("files written in {:.1} s", start.elapsed().as_secs_f64());
    for (what, manifest, out) in
        [("regression", &r, reg.join("table.csv")), ("classification", &c, cls.join("table.csv"))]
    {
        let s = time(manifest, &out, repeats)?;
        let text: Vec<String> = s.iter().map(|t| format!("{t:.2}")).collect();
        println!("{what}: 120 rows x 10 000 points in {} s", text.join(" / "));
    }
    Ok(())
}
