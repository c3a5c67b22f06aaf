//! MAP: one heteroscedastic network trained with Adam (lr 1e-3, weight decay 1e-5, 500
//! epochs); the predictive is its Gaussian head.

use super::common::{Data, EPOCHS, MEMBER, scaled_epochs, train_adam};
use super::predict::{TestSet, to_f64};
use super::{MethodConfig, MethodOutput};
use credence::error::Result;
use credence::nn::mlp::Net;
use credence::nn::{Real, stream_seed};

pub(super) fn run<R: Real>(
    data: &Data<R>,
    test: &TestSet<'_>,
    config: &MethodConfig,
    seed: u64,
) -> Result<MethodOutput> {
    let mut net = Net::new(data.d, config.batch_size.min(data.n()));
    let trained =
        train_adam(&mut net, data, config, scaled_epochs(EPOCHS, config.epoch_scale), 0.0, member_seed(seed, 0))?;
    Ok(MethodOutput { prediction: test.ensemble(&to_f64(&trained.params))?, converged: trained.converged })
}

/// The seed of network `k` under the job seed (MAP and CP use network 0).
pub(super) fn member_seed(seed: u64, k: u64) -> u64 {
    stream_seed(seed, &[MEMBER, k])
}

#[cfg(test)]
mod tests {
    use super::super::common::{INIT, rng};
    use super::super::test_support::{problem, quick};
    use super::*;

    /// Training lowers the full-data NLL well below its value at initialisation and the
    /// per-epoch loss falls.
    #[test]
    fn map_improves_training_loss() {
        let (x, y) = problem(64, 3);
        let data = Data::<f32>::new(x.view(), &y);
        let cfg = quick();
        let mut net = Net::new(3, 32);
        let init = {
            let mut p = vec![0f32; net.layout().len];
            net.layout().init(&mut rng(member_seed(5, 0), &[INIT]), &mut p);
            net.mean_loss(&p, &data.x, &data.y).unwrap()
        };
        let t =
            train_adam(&mut net, &data, &cfg, scaled_epochs(EPOCHS, cfg.epoch_scale), 0.0, member_seed(5, 0)).unwrap();
        let after = net.mean_loss(&t.params, &data.x, &data.y).unwrap();
        assert!(t.converged);
        assert_eq!(t.losses.len(), 50);
        assert!(after < init - 0.3, "init {init}, after {after}");
        assert!(t.losses[49] < t.losses[0] - 0.3, "{:?}", t.losses);
    }
}
