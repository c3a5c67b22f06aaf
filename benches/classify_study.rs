//! Runs a grid of the classification study (issue 34) on one data set in parallel and writes
//! its long table, one row per (method, n, realization, test set): the i.i.d. test set
//! (`shift = none`, intensity 0) and each shift at intensities 1-5. `credence fit` reads it,
//! e.g. `--where n=100 --where shift=rotation --where intensity=5 --response ece --pair
//! realization`. Prints the mean of each metric per (method, n, shift, intensity) and the time.
//!
//! Usage: `cargo run --release -p credence-study --example classify_study -- DATASET DATA_DIR
//! OUT.csv [N,N,..] [REALIZATIONS] [SHIFT,SHIFT,..] [EPOCH_SCALE]`, e.g. `digits
//! ../shared/data/classification /tmp/digits.csv 100,500 5 rotation,noise`.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;

use rayon::prelude::*;

use credence_study::classify::data::ClassDataset;
use credence_study::classify::job::{ClassJob, JobScores, TestSets, run_class_job};
use credence_study::classify::methods::ClassMethod;
use credence_study::classify::shift::Shift;
use credence_study::methods::MethodConfig;

fn list<T: std::str::FromStr>(arg: Option<&String>, default: &str) -> Vec<T>
where
    T::Err: std::fmt::Debug,
{
    arg.map_or(default, |s| s.as_str()).split(',').map(|v| v.parse().expect("a list item")).collect()
}

fn opt(v: Option<f64>) -> String {
    v.map_or("NA".into(), |v| v.to_string())
}

fn main() -> credence::error::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dataset: ClassDataset = args.first().map_or("synthetic", |s| s.as_str()).parse()?;
    let dir = args.get(1).map(Path::new);
    let out = args.get(2).map_or("/tmp/classify.csv", |s| s.as_str());
    let sizes: Vec<usize> = list(args.get(3), "100,500");
    let realizations: usize = args.get(4).map_or(5, |s| s.parse().expect("a count"));
    let shifts: Vec<Shift> = list(args.get(5), if dataset.is_image() { "rotation,noise" } else { "feature_noise" });
    let epoch_scale: f64 = args.get(6).map_or(1.0, |s| s.parse().expect("a number"));
    let methods = [
        ClassMethod::Map,
        ClassMethod::Temp,
        ClassMethod::Mcd,
        ClassMethod::Ensemble,
        ClassMethod::Swag,
        ClassMethod::Bbb,
    ];
    let config = MethodConfig { epoch_scale, ..Default::default() };

    let start = Instant::now();
    let split = dataset.load(dir)?;
    let tests = TestSets::new(&split, &shifts)?;
    let mut jobs = Vec::new();
    for &n in &sizes {
        for realization in 0..realizations {
            for &method in &methods {
                jobs.push(ClassJob { dataset, n, realization, method });
            }
        }
    }
    let done: Vec<JobScores> = jobs
        .par_iter()
        .with_max_len(1)
        .map(|&job| run_class_job(&split, &tests, job, &config, 0))
        .collect::<Result<_, _>>()?;
    let seconds = start.elapsed().as_secs_f64();

    let mut text = String::from(
        "method,n,realization,shift,intensity,accuracy,nll,brier,ece,entropy,mi,auroc,set_coverage,set_size,\
         referral_area,referral_random,credal_ns,credal_uncertainty,credal_distance,credal_set_size,\
         ood_entropy_auroc,ood_mi_auroc,converged,seconds\n",
    );
    for j in &done {
        for s in &j.scores {
            let m = &s.metrics;
            let _ = writeln!(
                text,
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.3}",
                j.job.method,
                j.job.n,
                j.job.realization,
                s.shift.map_or("none", Shift::name),
                s.intensity,
                m.accuracy,
                m.nll,
                m.brier,
                m.ece,
                m.entropy,
                m.mutual_information,
                opt(m.auroc),
                opt(m.set_coverage),
                opt(m.set_size),
                opt(m.referral_area),
                opt(m.referral_random),
                m.credal_ns,
                m.credal_uncertainty,
                m.credal_distance,
                m.credal_set_size,
                opt(s.ood.map(|o| o.entropy_auroc)),
                opt(s.ood.map(|o| o.mi_auroc)),
                j.converged,
                j.seconds
            );
        }
    }
    std::fs::write(out, text).map_err(|e| credence::io::io_error(Path::new(out), e))?;

    println!(
        "{dataset}: {} jobs in {seconds:.1} s ({} not converged); table {out}",
        done.len(),
        done.iter().filter(|j| !j.converged).count()
    );
    println!("method   n    shift        int  accuracy  nll    ece    entropy  ood_auroc(H)");
    for &n in &sizes {
        for &method in &methods {
            let rows: Vec<&JobScores> =
                done.iter().filter(|j| j.job.n == n && j.job.method == method && j.converged).collect();
            for (k, set) in tests.sets.iter().enumerate() {
                let mean =
                    |f: &dyn Fn(&JobScores) -> f64| rows.iter().map(|j| f(j)).sum::<f64>() / rows.len().max(1) as f64;
                let metric =
                    |f: fn(&credence_study::classify::score::ClassMetrics) -> f64| mean(&|j| f(&j.scores[k].metrics));
                let ood = if k == 0 {
                    format!("{:.3}", mean(&|j| j.scores[0].ood.map_or(f64::NAN, |o| o.entropy_auroc)))
                } else {
                    String::new()
                };
                println!(
                    "{:<8} {:<4} {:<12} {}    {:.3}     {:.3}  {:.3}  {:.3}    {ood}",
                    method.name(),
                    n,
                    set.shift.map_or("none", Shift::name),
                    set.intensity,
                    metric(|m| m.accuracy),
                    metric(|m| m.nll),
                    metric(|m| m.ece),
                    metric(|m| m.entropy),
                );
            }
        }
    }
    Ok(())
}
