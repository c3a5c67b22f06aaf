//! MC dropout (Gal & Ghahramani 2016): the MAP network and optimiser with inverted dropout
//! after both hidden ReLUs (rate [`MethodConfig::dropout`](super::MethodConfig::dropout), 0.1),
//! kept on at test time; the predictive is the equally weighted mixture of T = 50 stochastic
//! passes, run by the backend's MC-dropout kernel with Philox masks keyed by the job's test-time
//! seed.

use super::MethodOutput;
use super::inputs::Inputs;
use super::predict::{predict_seed, to_f64};
use credence::error::Result;
use credence::nn::Real;

pub(super) fn run<R: Real>(job: &Inputs<'_, R>) -> Result<MethodOutput> {
    let config = job.config;
    let trained = job.train_member(&mut job.net(), config.dropout, 0)?;
    let params = to_f64(&trained.params);
    let prediction = job.test.dropout(&params, config.dropout, config.samples, predict_seed(job.seed))?;
    Ok(MethodOutput { prediction, converged: trained.converged })
}

#[cfg(test)]
mod tests {
    use super::super::Prediction;
    use super::super::common::{member_seed, train_adam};
    use super::super::predict::TestSet;
    use super::super::test_support::{assert_loss_falls, quick, training_problem};
    use super::*;

    /// Dropout training still lowers the (noisy) epoch loss, and the T passes differ from
    /// each other (the masks are on at test time).
    #[test]
    fn mcd_improves_training_loss_and_passes_differ() {
        let (data, mut net) = training_problem(4);
        let cfg = quick();
        let t = train_adam(&mut net, &data, &cfg, 50, cfg.dropout, member_seed(1, 0)).unwrap();
        assert!(t.converged);
        assert_loss_falls(&t.losses);
        let test = TestSet { x: &data.x64, d: 3, backend: credence::backend::Backend::Cpu };
        let out = run(&Inputs { data: &data, test: &test, config: &cfg, seed: 1 }).unwrap();
        let Prediction::Mixture(mix) = out.prediction else { panic!("MC dropout gives a mixture") };
        assert_eq!(mix.n_members(), 10);
        let m = mix.point_means(0);
        assert!(m.iter().any(|&v| v != m[0]));
    }
}
