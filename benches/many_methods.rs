//! A sweep of many configurations compared as "methods": writes the long table of
//! `credence-testkit`'s simulated CRPS-like values (M methods x R realizations, seeded) for
//! `credence fit` to time end to end (scripts/test-all runs it on 1000 x 10; benches/README.md,
//! "Many methods").
//!
//!   cargo run --release -p credence --example many_methods -- OUT.csv [METHODS] [REALIZATIONS]

use std::io::Write;

use credence_testkit::fit_data;

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let out = args.get(1).map_or("many_methods.csv", String::as_str);
    let arg = |i: usize, default: usize| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default);
    let (methods, realizations) = (arg(2, 1000), arg(3, 10));
    let d = fit_data::gaussian_design(methods, realizations, 1);
    let mut w = std::io::BufWriter::new(std::fs::File::create(out)?);
    writeln!(w, "method,realization,crps")?;
    for j in 0..d.n_obs() {
        writeln!(w, "{},{},{}", d.groups()[d.group()[j]], d.pairs()[d.pair()[j]], d.y()[j])?;
    }
    println!("wrote {methods} methods x {realizations} realizations to {out}");
    Ok(())
}
