//! The plan of `credence demo`: a reduced synthetic study that still shows every part of a
//! report.

use credence_study::methods::{Method, MethodConfig};
use credence_study::runner::{StudyPlan, Units};

/// Metrics the demo's report fits.
pub const DEMO_METRICS: [&str; 2] = ["crps", "nll"];

/// All six methods at n = 30, 100 and 300 with 20 realizations each (360 training runs, about
/// a minute on 2 cores in a release build), on the data set's fixed pool-standardised scale.
pub fn demo_plan(threads: Option<usize>) -> StudyPlan {
    StudyPlan {
        sizes: vec![30, 100, 300],
        methods: vec![Method::Map, Method::Mcd, Method::Ensemble, Method::Swag, Method::Bbb, Method::Cp],
        realizations: 20,
        train_seeds: 1,
        seed_offset: 0,
        units: Units::Pool,
        threads,
        shard: None,
        method_config: MethodConfig::default(),
    }
}
