//! MAP: one heteroscedastic network trained with Adam (lr 1e-3, weight decay 1e-5, 500
//! epochs); the predictive is its Gaussian head.

use super::MethodOutput;
use super::inputs::Inputs;
use super::predict::to_f64;
use credence::error::Result;
use credence::nn::Real;

pub(super) fn run<R: Real>(job: &Inputs<'_, R>) -> Result<MethodOutput> {
    let trained = job.train_member(&mut job.net(), 0.0, 0)?;
    Ok(MethodOutput { prediction: job.test.ensemble(&to_f64(&trained.params))?, converged: trained.converged })
}

#[cfg(test)]
mod tests {
    use super::super::common::{EPOCHS, INIT, member_seed, rng, scaled_epochs, train_adam};
    use super::super::test_support::{assert_loss_falls, quick, training_problem};

    /// Training lowers the full-data NLL well below its value at initialisation and the
    /// per-epoch loss falls.
    #[test]
    fn map_improves_training_loss() {
        let (data, mut net) = training_problem(3);
        let cfg = quick();
        let init = {
            let mut p = vec![0f32; net.layout().len];
            net.layout().init(&mut rng(member_seed(5, 0), &[INIT]), &mut p);
            net.mean_loss(&p, &data.x, &data.y).unwrap()
        };
        let t =
            train_adam(&mut net, &data, &cfg, scaled_epochs(EPOCHS, cfg.epoch_scale), 0.0, member_seed(5, 0)).unwrap();
        let after = net.mean_loss(&t.params, &data.x, &data.y).unwrap();
        assert!(t.converged);
        assert!(after < init - 0.3, "init {init}, after {after}");
        assert_loss_falls(&t.losses);
    }
}
