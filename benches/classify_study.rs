//! Runs a grid of the classification study on one data set (its built-in copy) through
//! `run_class_study` (the engine behind `credence study --task classification`), writes its long
//! table and prints the mean of accuracy, NLL, ECE and entropy per (method, n, shift,
//! intensity), the OOD entropy AUROC on the i.i.d. rows, and the time. `credence fit` reads
//! the table, e.g. `--where n=100 --where shift=rotation --where intensity=5 --response ece
//! --pair realization`. The output file is resumed if it exists.
//!
//! Usage: `cargo run --release -p credence-study --example classify_study -- DATASET OUT.csv
//! [N,N,..] [REALIZATIONS] [SHIFT,SHIFT,..] [EPOCH_SCALE]`, e.g. `digits /tmp/digits.csv
//! 100,500 5 rotation,noise`.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use credence_study::classify::data::ClassDataset;
use credence_study::classify::methods::ClassMethod;
use credence_study::classify::run::{ClassPlan, run_class_study};
use credence_study::classify::shift::Shift;
use credence_study::classify::table::ClassRow;
use credence_study::engine::Silent;
use credence_study::methods::MethodConfig;
use credence_study::table::read_rows;

fn list<T: std::str::FromStr>(arg: Option<&String>, default: &str) -> Vec<T>
where
    T::Err: std::fmt::Debug,
{
    arg.map_or(default, |s| s.as_str()).split(',').map(|v| v.parse().expect("a list item")).collect()
}

fn main() -> credence::error::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dataset: ClassDataset = args.first().map_or("synthetic", |s| s.as_str()).parse()?;
    let out = Path::new(args.get(1).map_or("/tmp/classify.csv", |s| s.as_str()));
    let plan = ClassPlan {
        sizes: list(args.get(2), "100,500"),
        realizations: args.get(3).map_or(5, |s| s.parse().expect("a count")),
        shifts: Some(list(args.get(4), if dataset.is_image() { "rotation,noise" } else { "feature_noise" })),
        methods: ClassMethod::ALL.into_iter().filter(|&m| m != ClassMethod::Cp).collect(),
        method_config: MethodConfig {
            epoch_scale: args.get(5).map_or(1.0, |s| s.parse().expect("a number")),
            ..Default::default()
        },
        ..Default::default()
    };

    let start = Instant::now();
    let split = dataset.load(None)?;
    let s = run_class_study(dataset, &split, &plan, out, &Silent, &AtomicBool::new(false))?;
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "{dataset}: {} jobs run in {seconds:.1} s ({} already there, {} not converged); table {}",
        s.ran,
        s.already_done,
        s.not_converged,
        out.display()
    );

    // Means over realizations per (n, method, shift, intensity), in the table's key order.
    type Cell = (usize, ClassMethod, Option<Shift>, usize);
    let mut means: BTreeMap<Cell, (usize, [f64; 5])> = BTreeMap::new();
    for (_, row) in read_rows::<ClassRow>(out)? {
        let (Some(m), k) = (row.metrics, row.key) else { continue };
        let ood = row.ood.map_or(f64::NAN, |o| o.entropy_auroc);
        let cell = means.entry((k.job.n, k.job.method, k.shift, k.intensity)).or_default();
        cell.0 += 1;
        for (sum, v) in cell.1.iter_mut().zip([m.accuracy, m.nll, m.ece, m.entropy, ood]) {
            *sum += v;
        }
    }
    println!("method   n    shift        int  accuracy  nll    ece    entropy  ood_auroc(H)");
    for ((n, method, shift, intensity), (count, sums)) in means {
        let [acc, nll, ece, entropy, ood] = sums.map(|s| s / count as f64);
        let ood = if shift.is_none() { format!("{ood:.3}") } else { String::new() };
        let shift = shift.map_or("none", Shift::name);
        println!(
            "{:<8} {n:<4} {shift:<12} {intensity}    {acc:.3}     {nll:.3}  {ece:.3}  {entropy:.3}    {ood}",
            method.name()
        );
    }
    Ok(())
}
