//! The job grid (dataset x training size x method x realization), per-job seeds and shards.
//!
//! # Seeds
//!
//! - The realization seed, written to the `seed` column, is `r + n + seed_offset` as the study
//!   prescribes: it draws the training subsample ([`crate::data::Realization::draw`]),
//!   so every method sees the same points for a given (dataset, n, r) and the comparison is
//!   paired. Note that `r + n` collides across sizes (r = 20 at n = 30 and r = 0 at n = 50 both
//!   give 50), and because draws are nested the smaller subsample is then a prefix of the larger
//!   one; comparisons within one size are unaffected.
//! - The training seed, handed to the method, is [`Job::train_seed`]: the realization seed
//!   passed through a SplitMix64 finaliser together with n, the method's index in
//!   [`Method::ALL`] and the data set's index in [`Dataset::ALL`]. It differs between methods
//!   and sizes (so the collision above does not extend to the initialisations) and depends on
//!   nothing else, so results do not depend on threads, order or sharding.
//! - Repeated training (`credence study --train-seeds K`, the low-data study's algorithm
//!   variance): repeat k > 0 of a job trains on the same data (same realization seed) with the
//!   training seed mixed once more with k; repeat 0 is the ordinary job, so a table with K = 1
//!   is the table without repeats.

use std::str::FromStr;

use crate::data::Dataset;
use crate::methods::Method;
use credence::error::{Error, Result};

/// One training run: a method on one realization of one training size.
///
/// The derived order (dataset, n, realization, method) is the canonical order of the grid and
/// of merged tables: all methods of a realization come together, so a partial run still holds
/// complete paired realizations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Job {
    /// The data set.
    pub dataset: Dataset,
    /// Training size.
    pub n: usize,
    /// Realization index r (0-based).
    pub realization: usize,
    /// Training repeat k (0-based; 0 unless `--train-seeds` asks for more): same data, another
    /// training seed.
    pub train_rep: usize,
    /// The method.
    pub method: Method,
}

/// What the task-independent part of a run ([`crate::engine`]) and the shard helpers need of
/// a job of either study: a printable, ordered key with a realization seed and a shard.
pub trait GridJob: Copy + Ord + std::hash::Hash + std::fmt::Display + Send + Sync {
    /// The realization seed `r + n + seed_offset` (the table's `seed` column).
    fn data_seed(&self, seed_offset: u64) -> u64;
    /// The shard (0-based, below `count`) the job belongs to: a hash of its key.
    fn shard(&self, count: usize) -> usize;
    /// The data set's name.
    fn dataset_name(&self) -> &'static str;
}

impl GridJob for Job {
    fn data_seed(&self, seed_offset: u64) -> u64 {
        Job::data_seed(self, seed_offset)
    }
    fn shard(&self, count: usize) -> usize {
        Job::shard(self, count)
    }
    fn dataset_name(&self) -> &'static str {
        self.dataset.name()
    }
}

/// SplitMix64's finaliser: a bijective mix of 64 bits.
pub(crate) fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn method_index(m: Method) -> u64 {
    Method::ALL.iter().position(|&a| a == m).unwrap_or(0) as u64
}

fn dataset_index(d: Dataset) -> u64 {
    Dataset::ALL.iter().position(|&a| a == d).unwrap_or(0) as u64
}

impl Job {
    /// The realization seed `r + n + seed_offset` (the `seed` column; draws the subsample).
    pub fn data_seed(&self, seed_offset: u64) -> u64 {
        (self.realization as u64).wrapping_add(self.n as u64).wrapping_add(seed_offset)
    }

    /// The seed handed to the method (initialisation, minibatches, dropout masks, samples).
    pub fn train_seed(&self, seed_offset: u64) -> u64 {
        let h = mix(self.data_seed(seed_offset));
        let h = mix(h ^ self.n as u64);
        let h = mix(h ^ method_index(self.method));
        let h = mix(h ^ dataset_index(self.dataset));
        if self.train_rep == 0 { h } else { mix(h ^ mix(self.train_rep as u64)) }
    }

    /// The shard (0-based, below `count`) this job belongs to: a hash of the job's key, so
    /// shards are balanced in expectation across methods and sizes, and a job stays in its
    /// shard when the grid grows (more realizations or sizes).
    pub fn shard(&self, count: usize) -> usize {
        let h = mix(mix(mix(mix(dataset_index(self.dataset)) ^ self.n as u64) ^ self.realization as u64)
            ^ method_index(self.method));
        let h = if self.train_rep == 0 { h } else { mix(h ^ self.train_rep as u64) };
        (h % count.max(1) as u64) as usize
    }
}

impl std::fmt::Display for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} n={} {} r={}", self.dataset, self.n, self.method, self.realization)?;
        if self.train_rep > 0 {
            write!(f, " k={}", self.train_rep)?;
        }
        Ok(())
    }
}

/// A slice `index` of `count` (1-based, `I/N` on the command line) of the job grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// Which slice, 1..=count.
    pub index: usize,
    /// Number of slices.
    pub count: usize,
}

impl Shard {
    /// Whether `job` belongs to this slice.
    pub fn contains<J: GridJob>(&self, job: &J) -> bool {
        job.shard(self.count) + 1 == self.index
    }
}

impl FromStr for Shard {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        let bad = || Error::argument("shard", s, "I/N with 1 <= I <= N, e.g. 3/10");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count) = (i.trim().parse::<usize>().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Every job of `dataset` over `sizes` x `realizations` x `train_seeds` repeats x `methods`, in
/// canonical order.
pub fn jobs(
    dataset: Dataset,
    sizes: &[usize],
    methods: &[Method],
    realizations: usize,
    train_seeds: usize,
) -> Vec<Job> {
    let mut out = Vec::with_capacity(sizes.len() * methods.len() * realizations * train_seeds);
    for &n in sizes {
        for realization in 0..realizations {
            for train_rep in 0..train_seeds {
                for &method in methods {
                    out.push(Job { dataset, n, realization, train_rep, method });
                }
            }
        }
    }
    out.sort();
    out
}

/// How a grid splits into shards: what `credence study --plan-shards K` prints, so the size of
/// a scheduler's array job is never computed by hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardPlan {
    /// Jobs in the grid.
    pub jobs: usize,
    /// Number of shards N (a Slurm array `--array=1-N`).
    pub count: usize,
    /// Jobs in the largest shard (what a task's time limit must allow).
    pub largest: usize,
    /// Jobs in the smallest shard (0 when a shard is empty; it then writes an empty table).
    pub smallest: usize,
}

/// Splits `jobs` into `ceil(jobs / jobs_per_shard)` shards (at least one). Shards take jobs by
/// a hash of the job's key ([`GridJob::shard`]), so they hold `jobs_per_shard` jobs on average,
/// not exactly: [`ShardPlan::largest`] says how many the fullest one holds.
pub fn plan_shards<J: GridJob>(jobs: &[J], jobs_per_shard: usize) -> Result<ShardPlan> {
    if jobs_per_shard == 0 {
        return Err(Error::argument("jobs per shard", 0, "at least 1"));
    }
    let count = jobs.len().div_ceil(jobs_per_shard).max(1);
    let mut sizes = vec![0usize; count];
    for job in jobs {
        sizes[job.shard(count)] += 1;
    }
    let largest = sizes.iter().copied().max().unwrap_or(0);
    let smallest = sizes.iter().copied().min().unwrap_or(0);
    Ok(ShardPlan { jobs: jobs.len(), count, largest, smallest })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_are_r_plus_n_plus_offset_and_training_seeds_differ() {
        let j = Job { dataset: Dataset::Synthetic, n: 50, realization: 7, train_rep: 0, method: Method::Mcd };
        assert_eq!(j.data_seed(0), 57);
        assert_eq!(j.data_seed(1000), 1057);
        let all = jobs(Dataset::Synthetic, &[30, 50], &Method::ALL, 30, 1);
        let mut seeds: Vec<u64> = all.iter().map(|j| j.train_seed(0)).collect();
        seeds.sort_unstable();
        seeds.dedup();
        assert_eq!(seeds.len(), all.len(), "training seeds must be distinct across jobs");
        assert_ne!(j.train_seed(0), j.train_seed(1));
        let other_data = Job { dataset: Dataset::Energy, ..j };
        assert_ne!(j.train_seed(0), other_data.train_seed(0));
        assert_eq!(other_data.data_seed(0), j.data_seed(0));
        // Training repeats: same data seed, distinct training seeds, repeat 0 unchanged.
        let reps = jobs(Dataset::Synthetic, &[30], &[Method::Map], 2, 3);
        assert_eq!(reps.len(), 6);
        assert!(reps.iter().all(|r| r.data_seed(0) == 30 + r.realization as u64));
        let mut t: Vec<u64> = reps.iter().map(|r| r.train_seed(0)).collect();
        t.sort_unstable();
        t.dedup();
        assert_eq!(t.len(), 6);
        let plain = jobs(Dataset::Synthetic, &[30], &[Method::Map], 2, 1);
        assert_eq!(
            plain[1].train_seed(0),
            reps.iter().find(|r| r.realization == 1 && r.train_rep == 0).unwrap().train_seed(0)
        );
    }

    #[test]
    fn grid_order_and_shards_partition_the_jobs() {
        let all = jobs(Dataset::Yacht, &[50, 30], &[Method::Cp, Method::Map], 3, 1);
        assert_eq!(all.len(), 12);
        assert_eq!((all[0].n, all[0].realization, all[0].method), (30, 0, Method::Map));
        assert_eq!((all[1].n, all[1].realization, all[1].method), (30, 0, Method::Cp));
        let shards: Vec<Shard> = (1..=4).map(|i| format!("{i}/4").parse().unwrap()).collect();
        for job in &all {
            assert_eq!(shards.iter().filter(|s| s.contains(job)).count(), 1, "{job}");
        }
        // Shards are stable when the grid grows, and not all in one slice.
        let big = jobs(Dataset::Yacht, &[30, 50, 100], &Method::ALL, 50, 1);
        let counts: Vec<usize> = shards.iter().map(|s| big.iter().filter(|&j| s.contains(j)).count()).collect();
        assert!(counts.iter().all(|&c| c > big.len() / 8), "{counts:?}");
    }

    #[test]
    fn shard_plans_count_the_jobs_of_every_shard() {
        let all = jobs(Dataset::Synthetic, &[30, 50], &[Method::Map, Method::Cp, Method::Mcd], 3, 1);
        let plan = plan_shards(&all, 6).unwrap();
        assert_eq!((plan.jobs, plan.count), (18, 3));
        let sizes: Vec<usize> =
            (1..=3).map(|index| all.iter().filter(|&j| Shard { index, count: 3 }.contains(j)).count()).collect();
        assert_eq!(sizes.iter().sum::<usize>(), 18);
        assert_eq!((plan.largest, plan.smallest), (*sizes.iter().max().unwrap(), *sizes.iter().min().unwrap()));
        assert!(plan.largest > plan.smallest, "hashing balances only in expectation: {sizes:?}");
        // Rounded up; never zero shards; one job per shard asks for as many shards as jobs.
        assert_eq!(plan_shards(&all, 4).unwrap().count, 5);
        assert_eq!(plan_shards(&all, 100).unwrap(), ShardPlan { jobs: 18, count: 1, largest: 18, smallest: 18 });
        assert_eq!(plan_shards(&all, 1).unwrap().count, 18);
        assert_eq!(plan_shards::<Job>(&[], 5).unwrap(), ShardPlan { jobs: 0, count: 1, largest: 0, smallest: 0 });
        assert!(
            plan_shards(&all, 0).unwrap_err().to_string().contains("invalid jobs per shard = 0: expected at least 1")
        );
    }

    #[test]
    fn shard_strings_are_checked() {
        assert_eq!("2/5".parse::<Shard>().unwrap(), Shard { index: 2, count: 5 });
        assert_eq!(Shard { index: 2, count: 5 }.to_string(), "2/5");
        for bad in ["0/5", "6/5", "2", "a/5", "2/0", "-1/3"] {
            let e = bad.parse::<Shard>().unwrap_err().to_string();
            assert!(e.contains("I/N with 1 <= I <= N"), "{bad}: {e}");
        }
    }
}
