//! The samplers: NUTS one fit at a time ([`nuts`]), batched ChEES-HMC ([`chees`]) with its
//! Philox4x32-10 streams ([`philox`]) and its Laplace start ([`laplace`]).

pub(crate) mod chees;
pub(crate) mod laplace;
pub(crate) mod memory;
pub(crate) mod nuts;
pub(crate) mod philox;
