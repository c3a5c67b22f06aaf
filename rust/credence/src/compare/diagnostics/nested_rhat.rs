//! Nested R-hat (Margossian, Hoffman, Sountsov, Riou-Durand, Vehtari & Gelman 2024, "Nested
//! R-hat: assessing the convergence of Markov chain Monte Carlo when running many short
//! chains", Bayesian Analysis): the chains are grouped into K superchains of M chains each
//! (chains of one superchain start from the same point), and convergence is judged by
//! whether the superchains agree, which stays meaningful when each chain is too short to
//! have forgotten its start on its own.
//!
//! For draws f\[n, m, k\] (N per chain, chain m of superchain k):
//! - B = 1/(K - 1) sum_k (fbar\[., ., k\] - fbar)^2, the variance of the superchain means;
//! - Btilde_k = 1/(M - 1) sum_m (fbar\[., m, k\] - fbar\[., ., k\])^2 (0 when M = 1), the
//!   spread of chain means within superchain k;
//! - Wtilde_k = 1/M sum_m 1/(N - 1) sum_n (f\[n, m, k\] - fbar\[., m, k\])^2 (0 when N = 1);
//! - W = 1/K sum_k (Btilde_k + Wtilde_k);
//! - nested R-hat = sqrt(1 + B / W).
//!
//! With one chain per superchain nested R-hat^2 equals classic (unsplit) R-hat^2 + 1/N, and
//! for independent draws it tends to 1 as M N grows (B/W -> 1/(M N)).

use crate::error::{Error, Result};

/// Nested R-hat of one quantity. `chains` are ordered superchain by superchain:
/// chains `k * superchain_size .. (k + 1) * superchain_size` form superchain k. Needs at least
/// two superchains, equal chain lengths, and either two chains per superchain or two draws per
/// chain. Returns NaN (like the other diagnostics) when a draw is not finite or all draws are
/// equal.
pub fn nested_rhat(chains: &[&[f64]], superchain_size: usize) -> Result<f64> {
    if superchain_size == 0 || !chains.len().is_multiple_of(superchain_size) {
        return Err(Error::argument(
            "superchain_size",
            superchain_size,
            format!("a divisor of the number of chains ({}) that is at least 1", chains.len()),
        ));
    }
    let k = chains.len() / superchain_size;
    if k < 2 {
        return Err(Error::argument("number of superchains", k, "at least 2"));
    }
    let n = chains[0].len();
    if let Some(c) = chains.iter().position(|c| c.len() != n) {
        return Err(Error::shape("chain", &[chains[c].len()], format!("[{n}], the length of chain 0 (chain {c})")));
    }
    if superchain_size < 2 && n < 2 {
        return Err(Error::argument("draws per chain", n, "at least 2 when superchains hold one chain"));
    }
    if chains.iter().any(|c| c.iter().any(|v| !v.is_finite())) {
        return Ok(f64::NAN);
    }
    let m = superchain_size;
    let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len() as f64;
    let chain_means: Vec<f64> = chains.iter().map(|c| mean(c)).collect();
    let chain_vars: Vec<f64> = chains
        .iter()
        .zip(&chain_means)
        .map(|(c, mu)| if n > 1 { c.iter().map(|v| (v - mu).powi(2)).sum::<f64>() / (n - 1) as f64 } else { 0.0 })
        .collect();
    let super_means: Vec<f64> = chain_means.chunks_exact(m).map(mean).collect();
    let grand = mean(&super_means);
    let between = super_means.iter().map(|v| (v - grand).powi(2)).sum::<f64>() / (k - 1) as f64;
    let within = chain_means
        .chunks_exact(m)
        .zip(chain_vars.chunks_exact(m))
        .zip(&super_means)
        .map(|((means, vars), mu)| {
            let b = if m > 1 { means.iter().map(|v| (v - mu).powi(2)).sum::<f64>() / (m - 1) as f64 } else { 0.0 };
            b + mean(vars)
        })
        .sum::<f64>()
        / k as f64;
    if within <= 0.0 {
        return Ok(f64::NAN);
    }
    Ok((1.0 + between / within).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::sampler::philox::Stream;

    #[test]
    fn matches_a_hand_computation() {
        // K = 2 superchains of M = 2 chains of N = 3 draws.
        let c = [[1.0, 2.0, 3.0], [2.0, 3.0, 4.0], [4.0, 5.0, 9.0], [3.0, 3.0, 3.0]];
        // Chain means 2, 3, 6, 3; chain variances 1, 1, 7, 0.
        // Superchain means 2.5 and 4.5, grand mean 3.5: B = (1 + 1) / 1 = 2.
        // Btilde = (0.25 + 0.25) / 1 = 0.5 and (2.25 + 2.25) / 1 = 4.5;
        // Wtilde = (1 + 1) / 2 = 1 and (7 + 0) / 2 = 3.5; W = (1.5 + 8) / 2 = 4.75.
        let refs: Vec<&[f64]> = c.iter().map(|x| x.as_slice()).collect();
        let expected = (1.0f64 + 2.0 / 4.75).sqrt();
        assert!((nested_rhat(&refs, 2).unwrap() - expected).abs() < 1e-14);
    }

    #[test]
    fn one_chain_per_superchain_is_classic_rhat_plus_one_over_n() {
        let mut s = Stream::new(3, 0, 0);
        let chains: Vec<Vec<f64>> = (0..4).map(|c| (0..50).map(|_| s.normal() + 0.3 * c as f64).collect()).collect();
        let refs: Vec<&[f64]> = chains.iter().map(Vec::as_slice).collect();
        // Classic R-hat (Gelman & Rubin, unsplit): sqrt((N - 1)/N + B/(N W)), B = N var(means).
        let n = 50.0;
        let means: Vec<f64> = chains.iter().map(|c| c.iter().sum::<f64>() / n).collect();
        let gm = means.iter().sum::<f64>() / 4.0;
        let var_means = means.iter().map(|m| (m - gm).powi(2)).sum::<f64>() / 3.0;
        let w = chains
            .iter()
            .zip(&means)
            .map(|(c, m)| c.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1.0))
            .sum::<f64>()
            / 4.0;
        let classic_sq = (n - 1.0) / n + var_means / w;
        let nested = nested_rhat(&refs, 1).unwrap();
        assert!((nested * nested - (classic_sq + 1.0 / n)).abs() < 1e-12);
    }

    #[test]
    fn independent_draws_give_about_one_and_stuck_superchains_do_not() {
        let mut s = Stream::new(11, 0, 0);
        // 32 superchains x 8 chains x 10 draws, all independent standard normals: nested R-hat^2
        // is 1 + B/W with E[B/W] ~ 1/(M N) = 1/80, so R-hat ~ 1.006.
        let iid: Vec<Vec<f64>> = (0..256).map(|_| (0..10).map(|_| s.normal()).collect()).collect();
        let refs: Vec<&[f64]> = iid.iter().map(Vec::as_slice).collect();
        let r = nested_rhat(&refs, 8).unwrap();
        assert!(r > 1.0 && r < 1.02, "{r}");
        // Each superchain stuck near its own starting point (offset sd 1): clearly above 1.01.
        let offsets: Vec<f64> = (0..32).map(|_| s.normal()).collect();
        let stuck: Vec<Vec<f64>> =
            (0..256).map(|c| (0..10).map(|_| offsets[c / 8] + 0.3 * s.normal()).collect()).collect();
        let refs: Vec<&[f64]> = stuck.iter().map(Vec::as_slice).collect();
        assert!(nested_rhat(&refs, 8).unwrap() > 1.5);
    }

    #[test]
    fn bad_shapes_are_errors() {
        let a = [1.0, 2.0];
        let b = [1.0];
        assert!(nested_rhat(&[&a, &a, &a], 2).is_err());
        assert!(nested_rhat(&[&a, &a], 2).is_err());
        assert!(nested_rhat(&[&a, &b], 1).is_err());
        assert!(nested_rhat(&[&b, &b], 1).is_err());
        assert!(nested_rhat(&[&[1.0, f64::NAN], &a], 1).unwrap().is_nan());
    }
}
