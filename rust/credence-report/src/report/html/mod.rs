//! HTML of the core's results, shared by the report page and the notebook's rich display.

pub(crate) mod across;
pub(crate) mod credal;
pub(crate) mod plan;
pub(crate) mod quantiles;
