//! The seam to a device that runs the transitions (`kernels/chees.cu` behind
//! [`crate::backend`]): what the host asks of a transition and what comes back.

use crate::compare::model::Posterior;
use crate::error::Result;

/// Where one design's transitions run when not on the CPU: a device (the CUDA backend runs
/// `kernels/chees.cu`), which keeps the chains' positions, gradients, log densities and
/// Philox streams itself (initialised from the host's
/// [`Ensemble::new`](super::ensemble::Ensemble::new)), computes the cross-chain reductions the
/// adaptation needs, and writes back only what the host asked for.
pub(crate) trait ChainMover: Send {
    /// One transition of every chain (as
    /// [`Ensemble::transition`](super::ensemble::Ensemble::transition)) under the metric
    /// `inv_mass`, each step halved as [`Trajectory::run`](super::trajectory::Trajectory::run) does
    /// under the settings' tolerance (the device holds the settings it was attached with), then the
    /// reductions `want` names, computed as
    /// [`Ensemble::mean_accept`](super::ensemble::Ensemble::mean_accept),
    /// [`Ensemble::chees_gradient`](super::ensemble::Ensemble::chees_gradient) and
    /// [`MetricWindow::add`](super::adapt::MetricWindow::add) do, to the last bit.
    fn transition(
        &mut self,
        eps: f64,
        steps: usize,
        move_chains: bool,
        inv_mass: &[f64],
        want: Want,
        out: &mut MoverOut<'_>,
    ) -> Result<()>;
}

/// What the host needs from a transition on a device, besides the log density evaluations
/// (always) and the mean acceptance the step size adapts to (always; one number).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Want {
    /// Nothing else (the step-size search).
    MeanAccept,
    /// A warmup iteration: the ChEES gradient at this jitter (the positions before the
    /// transition are kept on the device), and inside a metric window its Welford update.
    Adapt {
        /// The iteration's jitter h_t.
        jitter: f64,
        /// The metric window's step, when the iteration is in one.
        window: Option<WindowStep>,
    },
    /// A kept draw: the positions and the per-chain acceptance, divergence and energy.
    Draws,
}

/// One iteration's update of a metric window on a device.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct WindowStep {
    /// States pooled in the window before this iteration (0: the window starts from zero).
    pub count: f64,
    /// Whether this is the window's last iteration: its M2 comes back.
    pub last: bool,
}

/// The cross-chain reductions a device computed with the last transition.
#[derive(Debug, Clone, Default)]
pub(crate) struct Reduced {
    /// [`Ensemble::mean_accept`](super::ensemble::Ensemble::mean_accept) (every transition).
    pub mean_accept: f64,
    /// [`Ensemble::chees_gradient`](super::ensemble::Ensemble::chees_gradient) at the asked jitter
    /// ([`Want::Adapt`]).
    pub chees_gradient: f64,
    /// The metric window's M2 per coordinate (a [`WindowStep`] with `last`).
    pub window_m2: Vec<f64>,
}

/// What a [`ChainMover`] writes after a transition (chain-major, as in
/// [`Ensemble`](super::ensemble::Ensemble)).
pub(crate) struct MoverOut<'b> {
    /// Kept positions ([`Want::Draws`]).
    pub pos: &'b mut [f64],
    /// Acceptance probabilities ([`Want::Draws`]).
    pub accept: &'b mut [f64],
    /// Divergence flags ([`Want::Draws`]).
    pub divergent: &'b mut [bool],
    /// Hamiltonian at the kept points ([`Want::Draws`]).
    pub energy: &'b mut [f64],
    /// Log density evaluations, added to (every transition).
    pub gradient_evals: &'b mut [u64],
    /// The reductions (the mean acceptance every transition, the others as asked for).
    pub reduced: &'b mut Reduced,
}

/// A device that runs the transitions of many designs (one [`ChainMover`] per design).
pub(crate) trait ChainDevice: Sync {
    /// The mover of design `data_set`, initialised with the positions, gradients and log
    /// densities (chain-major) of its chains' initial points.
    fn attach<'a>(
        &'a self,
        post: &'a dyn Posterior,
        data_set: u32,
        init: (&[f64], &[f64], &[f64]),
    ) -> Result<Box<dyn ChainMover + 'a>>;
}
