//! Times kernel 3 of issue #7 (batched ChEES-HMC, `kernels/chees.cu`) end to end through
//! `credence::backend::fit_many_on` on the GPU against the CPU (rayon) on the same
//! designs, and prints the floors of the `credence::backend` docs. Needs a CUDA device; run
//! through `benches/gpu.sh`.
//!
//! ```text
//! cargo run --release --example gpu_chees_timing -- [DESIGNS] [METHODS] [REALIZATIONS]
//! ```

use std::time::Instant;

use credence::backend::{Backend, fit_many_on};
use credence::compare::{CheesSettings, Design, FitOptions, Sampler};
use credence::seeds::SplitMix64;

fn arg(i: usize, default: usize) -> usize {
    std::env::args().nth(i).and_then(|a| a.parse().ok()).unwrap_or(default)
}

fn main() -> credence::Result<()> {
    let (designs, methods, reals) = (arg(1, 1000), arg(2, 10), arg(3, 50));
    let mut rng = SplitMix64(1);
    let data: Vec<Design> = (0..designs)
        .map(|_| {
            let (mut g, mut p, mut y) = (Vec::new(), Vec::new(), Vec::new());
            for r in 0..reals {
                let gamma = 0.1 * (rng.uniform() - 0.5);
                for m in 0..methods {
                    g.push(format!("M{m}"));
                    p.push(format!("r{r}"));
                    y.push(0.3 + 0.02 * m as f64 + gamma + 0.05 * (rng.uniform() - 0.5));
                }
            }
            Design::new(g, Some(p), y, None)
        })
        .collect::<credence::Result<_>>()?;
    let settings = CheesSettings::default();
    let options = FitOptions { sampler: Sampler::Chees(settings), ..Default::default() };
    println!(
        "kernel 3: {designs} designs x {} chains, {methods} methods x {reals} realizations, {} + {} iterations",
        settings.chains(),
        settings.warmup,
        settings.draws
    );
    for backend in [Backend::Cuda, Backend::Cpu] {
        let t = Instant::now();
        let fits = fit_many_on(backend, &data, &options)?;
        let secs = t.elapsed().as_secs_f64();
        let ok = fits.iter().filter(|f| f.is_ok()).count();
        let steps: f64 = fits.iter().flatten().filter_map(|f| f.chees()).map(|c| c.mean_leapfrog_steps).sum::<f64>()
            / ok.max(1) as f64;
        println!("{backend:?}: {secs:.2} s ({ok} fits, mean {steps:.1} leapfrog steps per iteration after warmup)");
    }
    Ok(())
}
