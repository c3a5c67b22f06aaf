//! Tables of per-item scores whose truth is set: `methods` methods on `realizations`
//! trainings, each scored on `items` test items, a method's score on an item being
//!
//! ```text
//! y[m, r, i] = gap m + a[r] + b[m, r] + c[i] + d[m, i] + e[m, r, i]
//! ```
//!
//! a the realization's common effect (sd 0.05), b each method's training noise (sd
//! `training`), c the item's difficulty that every method shares (sd `item`), d the method's
//! own item effect (sd `item` / 2) and e a small item-by-training residual (sd `item` / 5).
//! With `shared` items the same c and d hold on every realization (one fixed test set);
//! otherwise each realization draws its own items (a test split each). The population gap
//! between method m and method 0 is `gap` m.

use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

/// One table's long columns: method, realization, item and score.
pub struct ItemTable {
    /// Method of each row (`A`, `B`, ...).
    pub group: Vec<String>,
    /// Realization (training) of each row.
    pub pair: Vec<String>,
    /// Test item of each row.
    pub item: Vec<String>,
    /// The score.
    pub y: Vec<f64>,
}

/// What a generated table is like (see the module's text).
#[derive(Debug, Clone, Copy)]
pub struct ItemWorld {
    /// Methods.
    pub methods: usize,
    /// Realizations (trainings).
    pub realizations: usize,
    /// Items per realization.
    pub items: usize,
    /// One fixed test set (true) or a test split per realization.
    pub shared: bool,
    /// The population gap between consecutive methods.
    pub gap: f64,
    /// The training noise's sd.
    pub training: f64,
    /// The item difficulty's sd.
    pub item: f64,
}

/// The table of seed `seed`.
pub fn item_scores(seed: u64, w: ItemWorld) -> ItemTable {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut normal = || -> f64 { StandardNormal.sample(&mut rng) };
    let names: Vec<String> = (0..w.methods).map(|m| char::from(b'A' + (m % 26) as u8).to_string()).collect();
    let draw_items = |normal: &mut dyn FnMut() -> f64| -> Vec<(f64, Vec<f64>)> {
        (0..w.items).map(|_| (w.item * normal(), (0..w.methods).map(|_| 0.5 * w.item * normal()).collect())).collect()
    };
    let fixed = draw_items(&mut normal);
    let n = w.methods * w.realizations * w.items;
    let mut t = ItemTable {
        group: Vec::with_capacity(n),
        pair: Vec::with_capacity(n),
        item: Vec::with_capacity(n),
        y: Vec::with_capacity(n),
    };
    for r in 0..w.realizations {
        let a = 0.05 * normal();
        let b: Vec<f64> = (0..w.methods).map(|_| w.training * normal()).collect();
        let own = if w.shared { None } else { Some(draw_items(&mut normal)) };
        let items = own.as_ref().unwrap_or(&fixed);
        for (i, (c, d)) in items.iter().enumerate() {
            for m in 0..w.methods {
                t.group.push(names[m].clone());
                t.pair.push(format!("train{r}"));
                t.item.push(if w.shared { format!("x{i}") } else { format!("{r}:x{i}") });
                t.y.push(w.gap * m as f64 + a + b[m] + c + d[m] + 0.2 * w.item * normal());
            }
        }
    }
    t
}
