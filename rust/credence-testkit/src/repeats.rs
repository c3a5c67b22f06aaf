//! Tables of repeated trainings with no true difference between two methods: `realizations`
//! data splits, each with `repeats` trainings of each method (different seeds), so a training's
//! value is mu + b[m, i] + w[m, i, k], b the split's effect on the method (sd `between`, its own
//! per method, so it does not cancel in a difference) and w the training noise (sd `training`).

use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

/// One table's long columns: method, realization, repeat and value.
pub struct RepeatedTable {
    /// Method of each row (`A`, `B`).
    pub group: Vec<String>,
    /// Realization (data split) of each row.
    pub pair: Vec<String>,
    /// Training within the realization.
    pub repeat: Vec<String>,
    /// The metric value.
    pub y: Vec<f64>,
}

/// The table of seed `seed` (see the module's text).
pub fn repeated_trainings(
    seed: u64,
    realizations: usize,
    repeats: usize,
    between: f64,
    training: f64,
) -> RepeatedTable {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut normal = || -> f64 { StandardNormal.sample(&mut rng) };
    let mut t = RepeatedTable { group: Vec::new(), pair: Vec::new(), repeat: Vec::new(), y: Vec::new() };
    for i in 0..realizations {
        let shared = 0.05 * normal();
        for m in ["A", "B"] {
            let b = between * normal();
            for k in 0..repeats {
                t.group.push(m.into());
                t.pair.push(format!("split{i}"));
                t.repeat.push(k.to_string());
                t.y.push(1.0 + shared + b + training * normal());
            }
        }
    }
    t
}
