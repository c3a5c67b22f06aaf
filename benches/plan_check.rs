//! Planning by simulation (issue 16): the speed of a 4-point assurance curve (1000 simulated
//! experiments per point, 6 methods) on the CPU, and its check by an independent brute-force
//! simulation: worlds drawn at random from the pilot's posterior through the public draws,
//! tables simulated here, every table fitted by NUTS (the other sampler), the decision counted.
//!
//! ```text
//! cargo run --release -p credence --example plan_check -- [sims] [brute-force sims] [backend] [superchains]
//! ```

use std::time::Instant;

use credence::backend::{Backend, Batched};
use credence::compare::{Decision, Design, FitOptions, PlanOptions, PlanSource, fit, fit_many, plan};
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, StandardNormal};

use credence_testkit::fit_data;

fn main() -> credence::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let sims: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let brute: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(300);
    let backend: Backend = args.get(3).map(|s| s.parse()).transpose()?.unwrap_or(Backend::Cpu);
    // A pilot of 6 methods x 10 realizations (CRPS-like values); A = M0, B = M1: a small gap.
    let pilot_design = fit_data::gaussian_design(6, 10, 3);
    let pilot = fit(&pilot_design, &FitOptions::default())?;
    let (a, b) = ("M0", "M1");
    let options = PlanOptions {
        a: a.into(),
        b: b.into(),
        realizations: vec![5, 10, 20, 50],
        sims,
        decision: Decision::default(),
        sampler: credence::compare::CheesSettings {
            superchains: args.get(4).and_then(|s| s.parse().ok()).unwrap_or(credence::compare::PLAN_SUPERCHAINS),
            draws: args.get(5).and_then(|s| s.parse().ok()).unwrap_or(100),
            ..Default::default()
        },
        ..Default::default()
    };
    let start = Instant::now();
    let p = plan(PlanSource::Pilot(&pilot), &options, &Batched::new(backend)?)?;
    let secs = start.elapsed().as_secs_f64();
    println!(
        "plan: {} methods, R = {:?}, {sims} simulations per R, backend {:?}: {secs:.1} s ({:.1} fits/s), {} threads",
        p.methods.len(),
        options.realizations,
        p.backend,
        (sims * options.realizations.len()) as f64 / secs,
        rayon::current_num_threads()
    );
    println!("   R  assurance  mcse   E[P(A<B)]  refit  unclean  failed  MDD     MDD det.prob");
    for x in &p.points {
        println!(
            "{:>4}  {:>9.3}  {:.3}  {:>9.3}  {:>7}  {:>6}  {:.4}  {:.3}",
            x.r,
            x.assurance,
            x.assurance_mcse,
            x.expected_prob_better,
            x.unclean,
            x.failed,
            x.mdd,
            x.mdd_detection_probability
        );
    }
    println!("smallest R with assurance >= {}: {:?}", p.power, p.smallest_r);
    println!("simulated fits by {:?} (trial: {:?})", p.sampler, p.trial);
    if brute == 0 {
        return Ok(());
    }

    // Brute force, independently: random posterior draws, tables simulated here, NUTS fits.
    let draws = |name: String| -> credence::Result<Vec<f64>> { Ok(pilot.draws(&name)?.concat()) };
    let methods = pilot_design.groups().to_vec();
    let mu: Vec<Vec<f64>> = methods.iter().map(|m| draws(format!("mu[{m}]"))).collect::<credence::Result<_>>()?;
    let sigma: Vec<Vec<f64>> = methods.iter().map(|m| draws(format!("sigma[{m}]"))).collect::<credence::Result<_>>()?;
    let sg = draws("sigma_gamma".into())?;
    let mut rng = ChaCha8Rng::seed_from_u64(2026);
    let start = Instant::now();
    println!("\nbrute force ({brute} simulations per R, NUTS fits):");
    println!("   R  plan    brute   difference / combined se");
    for x in &p.points {
        let designs: Vec<Design> = (0..brute)
            .map(|_| {
                let k = rng.random_range(0..sg.len());
                let (mut g, mut pr, mut y) = (vec![], vec![], vec![]);
                for i in 0..x.r {
                    let gamma: f64 = sg[k] * rng.sample::<f64, _>(StandardNormal);
                    for (m, label) in methods.iter().enumerate() {
                        let e: f64 = StandardNormal.sample(&mut rng);
                        g.push(label.clone());
                        pr.push(format!("r{i}"));
                        y.push(mu[m][k] + gamma + sigma[m][k] * e);
                    }
                }
                Design::new(g, Some(pr), y, None)
            })
            .collect::<credence::Result<_>>()?;
        let fits = fit_many(&designs, &FitOptions::default());
        let mut settled = 0usize;
        for f in fits {
            if f?.prob_better(a, b)?.0 >= options.decision.level {
                settled += 1;
            }
        }
        let q = settled as f64 / brute as f64;
        let se = (x.assurance_mcse.powi(2) + q * (1.0 - q) / brute as f64).sqrt();
        println!("{:>4}  {:.3}   {:.3}   {:+.2}", x.r, x.assurance, q, (x.assurance - q) / se.max(1e-12));
    }
    println!("brute force took {:.1} s", start.elapsed().as_secs_f64());
    Ok(())
}
