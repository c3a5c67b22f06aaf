//! What follows a fit: the calibration audit on a large table ([`audit`]), experiment plans by simulated experiments ([`plan`]) and by the
//! predictive MDD ([`planning`]), rankings across metrics ([`ranking`]) and simulation-based
//! calibration of the models ([`sbc`]).

pub(crate) mod audit;
pub(crate) mod audit_across;
pub(crate) mod plan;
pub(crate) mod planning;
pub(crate) mod ranking;
pub(crate) mod sbc;
