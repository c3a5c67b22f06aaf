//! What crosses the seam of kernel 3 per launch: the batch's static part ([`BatchInit`]), one
//! launch's inputs ([`LaunchIn`]) and results ([`LaunchOut`]), and the launcher that runs them
//! ([`ChainLauncher`]: the GPU in `cuda.rs`, the CPU shim in the tests). The batching logic
//! (`chees.rs`) and the device code (`cuda.rs`) both import these types, neither the other.

use std::ops::Range;

use crate::compare::model::device::DeviceModel;
use crate::error::Result;

/// The static part of a batch, handed to the launcher with the first launch: per design
/// `off[4 b..]` = (offset in `mi`, offset in `md`, chains x dims of the earlier designs,
/// scratch offset), the flat models, and the initial chain states.
#[derive(Debug, Clone, Default)]
pub(crate) struct BatchInit {
    pub chains: usize,
    pub key: (u32, u32),
    pub off: Vec<i64>,
    pub mi: Vec<i32>,
    pub md: Vec<f64>,
    /// Sum of the designs' dims.
    pub dims: usize,
    /// Scratch doubles of all chains.
    pub work: usize,
    pub pos: Vec<f64>,
    pub grad: Vec<f64>,
    pub logp: Vec<f64>,
}

impl BatchInit {
    /// Number of designs.
    pub(crate) fn designs(&self) -> usize {
        self.off.len() / 4
    }

    /// Sum of the dims of the designs before design `b` (of all designs when `b` is their
    /// number): where design `b` starts in the metric's layout, and, times the chains, in the
    /// chains x dims vectors'.
    pub(crate) fn dims_before(&self, b: usize) -> usize {
        self.off.get(4 * b + 2).map_or(self.dims, |&o| o as usize / self.chains.max(1))
    }

    /// Appends the next design's model: its offsets, its flat model, its dims and its scratch
    /// (the chains' states are the caller's to append).
    pub(crate) fn push_model(&mut self, m: &DeviceModel) {
        let n = self.chains;
        self.off.extend([self.mi.len() as i64, self.md.len() as i64, (self.dims * n) as i64, self.work as i64]);
        self.mi.extend(&m.ints);
        self.md.extend(&m.doubles);
        self.dims += m.dim;
        self.work += m.work * n;
    }

    /// The metric-layout range (sums of dims) of the designs `designs`.
    pub(crate) fn dim_range(&self, designs: &Range<usize>) -> Range<usize> {
        if designs.is_empty() {
            return 0..0;
        }
        self.dims_before(designs.start)..self.dims_before(designs.end)
    }
}

/// A flag of [`LaunchIn::want`]: the ChEES gradient at [`LaunchIn::jitter`]
/// (`CH_WANT_GRADIENT`, read by `chees_reduce`).
pub(crate) const WANT_GRADIENT: i32 = 1;
/// A flag of [`LaunchIn::want`]: the metric window's Welford update from
/// [`LaunchIn::window_count`] states (`CH_WANT_WINDOW`, read by `chees_reduce`).
pub(crate) const WANT_WINDOW: i32 = 2;
/// A flag of [`LaunchIn::want`]: the window's M2 back to the host (its last iteration; read by
/// the launcher).
pub(crate) const WANT_WINDOW_M2: i32 = 4;
/// A flag of [`LaunchIn::want`]: the positions and the per-chain acceptance, divergence and
/// energy back to the host (a kept draw; read by the launcher).
pub(crate) const WANT_DRAWS: i32 = 8;

/// One launch's inputs: the metric (all designs' inv_mass concatenated), per design eps,
/// steps and the move flag (-1: the design has finished, skip it), and the step-halving
/// tolerance of all designs (`CheesSettings::walnuts`; NaN: none, fixed steps); per design
/// what it wants besides the mean acceptance and the evaluation counts (`WANT_*` flags), the
/// jitter of its ChEES gradient and the states its metric window holds.
#[derive(Debug, Clone, Default)]
pub(crate) struct LaunchIn {
    pub inv_mass: Vec<f64>,
    pub eps: Vec<f64>,
    pub steps: Vec<i32>,
    pub moves: Vec<i32>,
    pub max_error: f64,
    /// Per design: `WANT_*` flags.
    pub want: Vec<i32>,
    /// Per design: the jitter h_t of the ChEES gradient (with [`WANT_GRADIENT`]).
    pub jitter: Vec<f64>,
    /// Per design: states pooled in its metric window before this launch (with
    /// [`WANT_WINDOW`]; 0 starts the window from zero).
    pub window_count: Vec<f64>,
}

impl LaunchIn {
    /// The smallest range of designs that holds every design whose flags have `flag` (empty
    /// when none has): what a launcher copies back for `flag`, in one piece (designs run in
    /// lockstep, so this is usually every design or none).
    pub(crate) fn covering(&self, flag: i32) -> Range<usize> {
        let wants = |w: &i32| w & flag != 0;
        match (self.want.iter().position(wants), self.want.iter().rposition(wants)) {
            (Some(a), Some(b)) => a..b + 1,
            _ => 0..0,
        }
    }
}

/// What one launch returns: the reductions of every design, and the draws and window M2 of
/// the ranges of designs that asked for them ([`LaunchIn::covering`]; chain-major within each
/// design, designs in order).
#[derive(Debug, Clone, Default)]
pub(crate) struct LaunchOut {
    /// Per design: the mean acceptance the step size adapts to, and the ChEES gradient (0
    /// without [`WANT_GRADIENT`]).
    pub reduced: Vec<f64>,
    /// Per chain of every design: log density evaluations in this launch.
    pub evals: Vec<i32>,
    /// The designs whose draws came back (`covering(WANT_DRAWS)`).
    pub draws: Range<usize>,
    /// Their chains' positions.
    pub pos: Vec<f64>,
    /// Their chains' acceptance probabilities.
    pub accept: Vec<f64>,
    /// How their chains' trajectories ended: 0 kept going, 1 divergent, 2 rejected because a
    /// halved step was not reversible (not a divergence).
    pub divergent: Vec<i32>,
    /// Hamiltonian at their chains' kept points.
    pub energy: Vec<f64>,
    /// The designs whose metric window's M2 came back (`covering(WANT_WINDOW_M2)`).
    pub windows: Range<usize>,
    /// Their M2, per coordinate.
    pub window_m2: Vec<f64>,
}

/// Runs `chees_transition` and `chees_reduce` on a batch (the GPU, or the CPU shim in the
/// tests).
pub(crate) trait ChainLauncher: Send {
    /// One launch; `init` is the same on every call (the launcher uploads it on the first).
    fn launch(&mut self, init: &BatchInit, input: &LaunchIn) -> Result<LaunchOut>;
}
