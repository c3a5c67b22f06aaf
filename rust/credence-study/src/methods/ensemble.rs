//! Deep ensemble (Lakshminarayanan et al. 2017): M = 5 MAP networks with independent
//! initialisation, batch order and seeds (network k uses the k-th member stream, so member 0 is
//! the MAP network of the same job seed); the predictive is the Gaussian with the mean and
//! variance of the members' equally weighted mixture (the paper's section 2.4), or the mixture
//! itself ([`EnsemblePredictive::Mixture`]).

use super::inputs::Inputs;
use super::{EnsemblePredictive, MethodOutput, Prediction};
use credence::error::Result;
use credence::nn::Real;
use credence::predictive::GaussianMixture;

pub(super) fn run<R: Real>(job: &Inputs<'_, R>) -> Result<MethodOutput> {
    let mut net = job.net();
    // The members' parameters one after the other, for one forward call over all of them.
    let mut params = Vec::with_capacity(job.config.ensemble_size * net.layout().len);
    let mut converged = true;
    for k in 0..job.config.ensemble_size {
        let trained = job.train_member(&mut net, 0.0, k as u64)?;
        converged &= trained.converged;
        params.extend(trained.params.iter().map(|v| v.to_f64()));
    }
    let prediction = match (job.config.ensemble_predictive, job.test.ensemble(&params)?) {
        (EnsemblePredictive::Gaussian, Prediction::Mixture(mix)) => Prediction::Mixture(moment_matched(&mix)?),
        (_, p) => p,
    };
    Ok(MethodOutput { prediction, converged })
}

/// The one-member "mixture" holding the Gaussian with `mix`'s mean and variance, so every
/// metric scores it as a Gaussian.
fn moment_matched(mix: &GaussianMixture) -> Result<GaussianMixture> {
    let g = mix.moment_matched();
    let row = |v: &[f64]| ndarray::Array2::from_shape_fn((1, v.len()), |(_, i)| v[i]);
    GaussianMixture::new(row(g.mean()), row(g.sd()), None)
}

#[cfg(test)]
mod tests {
    use super::super::common::{Data, member_seed, train_adam};
    use super::super::test_support::{assert_loss_falls, problem, quick};
    use super::super::{EnsemblePredictive, Method, MethodConfig, Prediction, train_and_predict};
    use credence::RegressionPredictive;
    use credence::nn::mlp::Net;

    /// Members are distinct networks, each trained (member 0 is the MAP network), and the
    /// ensemble's training NLL beats the networks' initial NLL.
    #[test]
    fn ensemble_members_differ_and_member_zero_is_map() {
        let (x, y) = problem(48, 6);
        let cfg = MethodConfig { ensemble_size: 3, ensemble_predictive: EnsemblePredictive::Mixture, ..quick() };
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
        assert_loss_falls(&t.losses);
        let nll: f64 = e.nll_all(&y, 0.0).unwrap().iter().sum::<f64>() / 48.0;
        assert!(nll < t.losses[0], "ensemble NLL {nll} vs first-epoch loss {}", t.losses[0]);
    }

    /// The default predictive is one Gaussian per point with the mean and variance of the
    /// members' mixture, computed here from the mixture's heads by hand.
    #[test]
    fn gaussian_predictive_has_the_mixtures_mean_and_variance() {
        let (x, y) = problem(40, 5);
        let mix = MethodConfig { ensemble_size: 4, ensemble_predictive: EnsemblePredictive::Mixture, ..quick() };
        let gauss = MethodConfig { ensemble_predictive: EnsemblePredictive::Gaussian, ..mix.clone() };
        let run = |cfg: &MethodConfig| match train_and_predict(Method::Ensemble, cfg, x.view(), &y, x.view(), 9)
            .unwrap()
            .prediction
        {
            Prediction::Mixture(m) => m,
            Prediction::Conformal { .. } => panic!("a mixture was expected"),
        };
        let (m, g) = (run(&mix), run(&gauss));
        assert_eq!((m.n_members(), g.n_members()), (4, 1));
        for i in 0..40 {
            let (mu, sd) = (m.point_means(i), m.point_sds(i));
            let mean = mu.iter().sum::<f64>() / 4.0;
            let var = mu.iter().zip(sd).map(|(a, s)| s * s + (a - mean).powi(2)).sum::<f64>() / 4.0;
            assert!((g.point_means(i)[0] - mean).abs() < 1e-12 * (1.0 + mean.abs()), "point {i}");
            assert!((g.point_sds(i)[0] - var.sqrt()).abs() < 1e-9 * var.sqrt(), "point {i}");
        }
    }
}
