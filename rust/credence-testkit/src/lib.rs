//! Fixtures shared by credence's integration tests and benches, so a test and the bench that
//! measures the same thing judge the same tables: deterministic simulated metric tables
//! ([`fit_data`]), the design families of the clean-fit standard ([`design_families`]) and the
//! simulation-based calibration cases ([`sbc_cases`]), tables of one metric on several data
//! sets ([`across_data`]), and the finite-difference check of a gradient ([`gradients`]). Not
//! published; a dev-dependency only.

pub mod across_data;
pub mod design_families;
pub mod fit_data;
pub mod gradients;
pub mod sbc_cases;
