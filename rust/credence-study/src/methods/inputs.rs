//! What every method's `run` takes: one job's training data, test points, settings and seed.

use super::MethodConfig;
use super::common::{Data, EPOCHS, Trained, member_seed, scaled_epochs, train_adam};
use super::predict::TestSet;
use credence::error::Result;
use credence::nn::Real;
use credence::nn::mlp::Net;

/// One job as every method's `run` takes it: the training data, the test points, the
/// settings and the job seed.
#[derive(Clone, Copy)]
pub(super) struct Inputs<'a, R> {
    pub data: &'a Data<R>,
    pub test: &'a TestSet<'a>,
    pub config: &'a MethodConfig,
    pub seed: u64,
}

impl<R: Real> Inputs<'_, R> {
    /// A network for the training data, its buffers one mini-batch long.
    pub(super) fn net(&self) -> Net<R> {
        Net::new(self.data.d, self.config.batch_size.min(self.data.n()))
    }

    /// Network `k` trained with Adam on the training data for the study's (scaled) epochs,
    /// with drop probability `dropout` (see [`train_adam`]).
    pub(super) fn train_member(&self, net: &mut Net<R>, dropout: f64, k: u64) -> Result<Trained<R>> {
        let epochs = scaled_epochs(EPOCHS, self.config.epoch_scale);
        train_adam(net, self.data, self.config, epochs, dropout, member_seed(self.seed, k))
    }
}
