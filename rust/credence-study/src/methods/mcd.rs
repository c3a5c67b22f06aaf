//! MC dropout (Gal & Ghahramani 2016): the MAP network and optimiser with inverted dropout
//! after both hidden ReLUs (rate [`MethodConfig::dropout`], 0.1), kept on at test time; the
//! predictive is the equally weighted mixture of T = 50 stochastic passes, run by the
//! backend's MC-dropout kernel with Philox masks keyed by the job's test-time seed.

use super::common::{Data, EPOCHS, scaled_epochs, train_adam};
use super::map::member_seed;
use super::predict::{TestSet, predict_seed, to_f64};
use super::{MethodConfig, MethodOutput};
use credence::error::Result;
use credence::nn::Real;
use credence::nn::mlp::Net;

pub(super) fn run<R: Real>(
    data: &Data<R>,
    test: &TestSet<'_>,
    config: &MethodConfig,
    seed: u64,
) -> Result<MethodOutput> {
    let mut net = Net::new(data.d, config.batch_size.min(data.n()));
    let epochs = scaled_epochs(EPOCHS, config.epoch_scale);
    let trained = train_adam(&mut net, data, config, epochs, config.dropout, member_seed(seed, 0))?;
    let params = to_f64(&trained.params);
    let prediction = test.dropout(&params, config.dropout, config.samples, predict_seed(seed))?;
    Ok(MethodOutput { prediction, converged: trained.converged })
}

#[cfg(test)]
mod tests {
    use super::super::Prediction;
    use super::super::test_support::{problem, quick};
    use super::*;

    /// Dropout training still lowers the (noisy) epoch loss, and the T passes differ from
    /// each other (the masks are on at test time).
    #[test]
    fn mcd_improves_training_loss_and_passes_differ() {
        let (x, y) = problem(64, 4);
        let data = Data::<f32>::new(x.view(), &y);
        let cfg = quick();
        let mut net = Net::new(3, 32);
        let t = train_adam(&mut net, &data, &cfg, 50, cfg.dropout, member_seed(1, 0)).unwrap();
        assert!(t.converged);
        assert!(t.losses[49] < t.losses[0] - 0.3, "{:?}", t.losses);
        let rows = super::super::common::rows::<f64>(x.view());
        let test = TestSet { x: &rows, d: 3, backend: credence::backend::Backend::Cpu };
        let out = run(&data, &test, &cfg, 1).unwrap();
        let Prediction::Mixture(mix) = out.prediction else { panic!("MC dropout gives a mixture") };
        assert_eq!(mix.n_members(), 10);
        let m = mix.point_means(0);
        assert!(m.iter().any(|&v| v != m[0]));
    }
}
