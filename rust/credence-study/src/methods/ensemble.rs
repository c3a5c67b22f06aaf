//! Deep ensemble (Lakshminarayanan et al. 2017): M = 5 MAP networks with independent
//! initialisation, batch order and seeds (network k uses the k-th member stream, so member 0 is
//! the MAP network of the same job seed); the predictive is the equally weighted mixture.

use super::common::{Data, EPOCHS, scaled_epochs, train_adam};
use super::map::member_seed;
use super::predict::TestSet;
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
    // The members' parameters one after the other, for one forward call over all of them.
    let mut params = Vec::with_capacity(config.ensemble_size * net.layout().len);
    let mut converged = true;
    for k in 0..config.ensemble_size {
        let trained = train_adam(&mut net, data, config, epochs, 0.0, member_seed(seed, k as u64))?;
        converged &= trained.converged;
        params.extend(trained.params.iter().map(|v| v.to_f64()));
    }
    Ok(MethodOutput { prediction: test.ensemble(&params)?, converged })
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{problem, quick};
    use super::super::{Method, Prediction, train_and_predict};
    use super::*;
    use credence::RegressionPredictive;

    /// Members are distinct networks, each trained (member 0 is the MAP network), and the
    /// ensemble's training NLL beats the networks' initial NLL.
    #[test]
    fn ensemble_members_differ_and_member_zero_is_map() {
        let (x, y) = problem(48, 6);
        let cfg = MethodConfig { ensemble_size: 3, ..quick() };
        let e = train_and_predict(Method::Ensemble, &cfg, x.view(), &y, x.view(), 3).unwrap();
        let m = train_and_predict(Method::Map, &cfg, x.view(), &y, x.view(), 3).unwrap();
        let (Prediction::Mixture(e), Prediction::Mixture(m)) = (e.prediction, m.prediction) else { panic!() };
        assert_eq!(e.n_members(), 3);
        for i in 0..48 {
            assert_eq!(e.point_means(i)[0], m.point_means(i)[0]);
            assert_ne!(e.point_means(i)[0], e.point_means(i)[1]);
        }
        let data = Data::<f32>::new(x.view(), &y);
        let mut net = Net::new(3, 32);
        let t = train_adam(&mut net, &data, &cfg, 50, 0.0, member_seed(3, 2)).unwrap();
        assert!(t.losses[49] < t.losses[0] - 0.3, "{:?}", t.losses);
        let nll: f64 = e.nll_all(&y, 0.0).unwrap().iter().sum::<f64>() / 48.0;
        assert!(nll < t.losses[0], "ensemble NLL {nll} vs first-epoch loss {}", t.losses[0]);
    }
}
