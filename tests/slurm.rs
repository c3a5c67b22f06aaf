//! The study on a live Slurm: the test starts a one-node cluster (munged, slurmctld, slurmd
//! from Debian's slurm-wlm and munge; a slurm.conf of its own in a temporary directory, no
//! systemd, no cgroups), submits a small grid with `scripts/slurm/submit` (an array job of
//! `credence study --shard` tasks and an afterok merge job) and checks the merged table against
//! a single-process run; a second case cancels an array task mid-run, resubmits it and checks
//! that its shard keeps every finished job once.
//!
//! Ignored in `cargo test --workspace`: scripts/test-all runs it as its own step
//! (`cargo test --locked -p credence-cli --test slurm -- --ignored`). It needs root and the
//! daemons; without them it skips with a message, except in a full run (CREDENCE_STRICT=1,
//! which scripts/test-all sets, or CI=true), where that fails.

use std::collections::BTreeSet;
use std::fs::File;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

mod common;
use common::{CLASS_GRID, complete_rows, credence, rows_without_timing};

use credence_study::data::Dataset;
use credence_study::grid::{Shard, jobs};
use credence_study::methods::Method;

/// The repository's root (scripts/slurm lives there).
const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
/// How long a submission may take before the test gives up and shows the logs.
const LIMIT: Duration = Duration::from_secs(300);

/// One cluster at a time: both cases fit the node, but timing the cancel needs a quiet one.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Finds a program on PATH or in the sbin directories (root's daemons live there).
fn program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/bin"].map(PathBuf::from))
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

/// A free TCP port on localhost (the kernel's pick; released for the daemon to bind).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A one-node Slurm in a temporary directory. Dropping it (also on panic) cancels its jobs
/// and kills its daemons.
struct Cluster {
    dir: tempfile::TempDir,
    conf: PathBuf,
    daemons: Vec<(&'static str, Child)>,
    /// Held from the start until the daemons have stopped ([`ONE_AT_A_TIME`]).
    _one: MutexGuard<'static, ()>,
}

impl Cluster {
    /// Why this machine cannot run the daemons (not root, programs missing), if it cannot.
    fn unavailable() -> Option<String> {
        let uid = Command::new("id").arg("-u").output().map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned());
        if uid.as_deref().ok() != Some("0") {
            return Some("not root (munged and slurmd run as root here)".into());
        }
        let missing: Vec<&str> = ["munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "scontrol", "sinfo"]
            .into_iter()
            .filter(|p| program(p).is_none())
            .collect();
        (!missing.is_empty()).then(|| format!("{} not found (apt-get install slurm-wlm munge)", missing.join(", ")))
    }

    /// Starts the cluster, or returns `None` with a message where it cannot run; in a full run
    /// (CREDENCE_STRICT=1 or CI=true) that is a failure.
    fn start_or_skip() -> Option<Cluster> {
        if let Some(why) = Cluster::unavailable() {
            let strict =
                std::env::var("CI").as_deref() == Ok("true") || std::env::var("CREDENCE_STRICT").as_deref() == Ok("1");
            assert!(!strict, "a full test run needs a live Slurm: {why}");
            eprintln!("skipped: {why}");
            return None;
        }
        Some(Cluster::start())
    }

    fn start() -> Cluster {
        let one = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for sub in ["state", "spool", "log"] {
            std::fs::create_dir(d.join(sub)).unwrap();
        }
        let conf = d.join("slurm.conf");
        let mut cluster = Cluster { conf: conf.clone(), dir, daemons: Vec::new(), _one: one };
        let d = cluster.dir.path().to_owned();
        // munge: a fresh key, and socket, pid, log and seed files in the temporary directory
        // (--force: the directory's permissions are not munged's usual ones).
        let mut key = vec![0u8; 1024];
        std::io::Read::read_exact(&mut File::open("/dev/urandom").unwrap(), &mut key).unwrap();
        let mut file = std::os::unix::fs::OpenOptionsExt::mode(File::options().write(true).create_new(true), 0o600)
            .open(d.join("munge.key"))
            .unwrap();
        std::io::Write::write_all(&mut file, &key).unwrap();
        let socket = d.join("munge.socket");
        let arg = |flag: &str, name: &str| format!("--{flag}={}", d.join(name).display());
        cluster.spawn(
            "munged",
            &[
                "--foreground",
                "--force",
                &arg("socket", "munge.socket"),
                &arg("key-file", "munge.key"),
                &arg("pid-file", "munged.pid"),
                &arg("log-file", "log/munged.log"),
                &arg("seed-file", "munged.seed"),
            ],
        );
        cluster.wait_for("munged's socket", |_| socket.exists());
        std::fs::write(&conf, slurm_conf(&d, &socket)).unwrap();
        cluster.spawn("slurmctld", &["-D"]);
        cluster.spawn("slurmd", &["-D", "-N", &short_hostname()]);
        // sinfo fails until slurmctld listens.
        cluster.wait_for("the node to be idle", |c| {
            let out = c.command("sinfo").args(["-h", "-o", "%T"]).output().unwrap();
            out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == "idle"
        });
        cluster
    }

    /// Starts a daemon in the foreground with this cluster's configuration, output to log/.
    fn spawn(&mut self, name: &'static str, args: &[&str]) {
        let log = File::create(self.dir.path().join("log").join(format!("{name}.out"))).unwrap();
        let child = Command::new(program(name).unwrap())
            .args(args)
            .env("SLURM_CONF", &self.conf)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name}: {e}"));
        self.daemons.push((name, child));
    }

    /// A Slurm client (or scripts/slurm/submit) against this cluster: (stdout, stderr + stdout).
    fn run(&self, program_name: &str, args: &[&str]) -> (String, String) {
        let out = self.command(program_name).args(args).output().unwrap();
        assert!(out.status.success(), "{program_name} {args:?} failed:\n{}\n{}", text(&out), self.logs());
        (String::from_utf8_lossy(&out.stdout).into_owned(), text(&out))
    }

    fn command(&self, program_name: &str) -> Command {
        let path =
            if program_name.contains('/') { PathBuf::from(program_name) } else { program(program_name).unwrap() };
        let mut c = Command::new(path);
        c.env("SLURM_CONF", &self.conf).env("CREDENCE", env!("CARGO_BIN_EXE_credence")).env_remove("CREDENCE_DATA");
        c
    }

    /// Polls `ready` every 100 ms until it holds, or fails with the daemons' logs after LIMIT
    /// or as soon as a daemon has exited.
    fn wait_for(&mut self, what: &str, mut ready: impl FnMut(&Self) -> bool) {
        let start = Instant::now();
        while !ready(self) {
            assert!(start.elapsed() < LIMIT, "timed out waiting for {what}\n{}", self.logs());
            if let Some((name, status)) = self.daemons.iter_mut().find_map(|(n, c)| Some((*n, c.try_wait().ok()??))) {
                panic!("{name} exited ({status}) while waiting for {what}\n{}", self.logs());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// The states of a job (every task of an array), from `scontrol show job`.
    fn states(&self, job: &str) -> Vec<String> {
        let (out, _) = self.run("scontrol", &["show", "job", "-o", job]);
        out.lines()
            .filter_map(|l| l.split_whitespace().find_map(|f| f.strip_prefix("JobState=")).map(str::to_owned))
            .collect()
    }

    /// Waits until no task of `job` is pending or running, and returns their states.
    fn finish(&mut self, job: &str) -> Vec<String> {
        let done = |s: &String| !["PENDING", "RUNNING", "CONFIGURING", "COMPLETING"].contains(&s.as_str());
        self.wait_for(&format!("job {job}"), |c| c.states(job).iter().all(done));
        self.states(job)
    }

    /// Runs scripts/slurm/submit and returns (array job, merge job).
    fn submit(&self, args: &[&str]) -> (String, String) {
        let (out, all) = self.run(&format!("{ROOT}/scripts/slurm/submit"), args);
        eprintln!("scripts/slurm/submit {}\n{all}", args.join(" "));
        let field = |key: &str| {
            out.split_whitespace()
                .find_map(|f| f.strip_prefix(key))
                .unwrap_or_else(|| panic!("no {key} in the output of submit:\n{all}"))
                .to_owned()
        };
        (field("array_job="), field("merge_job="))
    }

    /// The daemons' output and the jobs' logs, for failure messages.
    fn logs(&self) -> String {
        let mut out = String::new();
        for dir in [self.dir.path().join("log"), self.dir.path().join("study")] {
            for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
                let tail: Vec<&str> = text.lines().rev().take(30).collect();
                out += &format!("--- {}\n", entry.path().display());
                out.extend(tail.into_iter().rev().map(|l| format!("{l}\n")));
            }
        }
        out
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // Cancel whatever still runs, so no job outlives the daemons, then stop them.
        let alive = self.daemons.iter_mut().all(|(_, c)| matches!(c.try_wait(), Ok(None)));
        if alive {
            let _ = self.command("scancel").args(["--user", "root"]).output();
            let start = Instant::now();
            while start.elapsed() < Duration::from_secs(15) {
                match self.command("squeue").args(["-h", "-o", "%i"]).output() {
                    Ok(o) if o.status.success() && !o.stdout.is_empty() => {
                        std::thread::sleep(Duration::from_millis(200))
                    }
                    _ => break,
                }
            }
        }
        // SIGTERM first (slurmctld stops its script helper, slurmd its steps), SIGKILL after 5 s.
        for (_, child) in self.daemons.iter_mut().rev() {
            let _ = Command::new("kill").arg(child.id().to_string()).output();
            let start = Instant::now();
            while matches!(child.try_wait(), Ok(None)) && start.elapsed() < Duration::from_secs(5) {
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn short_hostname() -> String {
    let out = Command::new("hostname").arg("-s").output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A minimal slurm.conf: root runs everything, no cgroups (linuxproc process tracking, no task
/// plugin), state, spool, pid and log files under `d`, free ports, one node with the machine's
/// CPUs and half its memory, consumable CPUs and memory (so the scripts' requests are checked).
fn slurm_conf(d: &Path, socket: &Path) -> String {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
    let kb: u64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .unwrap()
        .trim()
        .trim_end_matches(" kB")
        .trim()
        .parse()
        .unwrap();
    let host = short_hostname();
    let p = |name: &str| d.join(name).display().to_string();
    format!(
        "ClusterName=credence\nSlurmctldHost={host}(127.0.0.1)\nSlurmUser=root\nSlurmdUser=root\n\
         SlurmctldPort={}\nSlurmdPort={}\nAuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket={}\n\
         StateSaveLocation={}\nSlurmdSpoolDir={}\nSlurmctldPidFile={}\nSlurmdPidFile={}\n\
         SlurmctldLogFile={}\nSlurmdLogFile={}\nProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n\
         SelectType=select/cons_tres\nSelectTypeParameters=CR_CPU_Memory\nSchedulerType=sched/backfill\n\
         AccountingStorageType=accounting_storage/none\nJobAcctGatherType=jobacct_gather/none\n\
         JobCompType=jobcomp/none\nMpiDefault=none\nSwitchType=switch/none\nReturnToService=2\nKillWait=2\n\
         MinJobAge=600\nMailProg=/bin/true\n\
         NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} RealMemory={} State=UNKNOWN\n\
         PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n",
        free_port(),
        free_port(),
        socket.display(),
        p("state"),
        p("spool"),
        p("slurmctld.pid"),
        p("slurmd.pid"),
        p("log/slurmctld.log"),
        p("log/slurmd.log"),
        kb / 1024 / 2,
    )
}

/// A row's job: dataset, n, method, realization, train_rep.
fn job_key(row: &str) -> String {
    row.splitn(6, ',').take(5).collect::<Vec<_>>().join(",")
}

/// Runs `grid` in one process (no Slurm) and checks the merged table of `dir` against it, row
/// for row (training seconds aside), settings included.
fn check_against_one_process(dir: &Path, grid: &[&str], rows: usize) {
    let single = dir.join("single.csv");
    let mut args = vec!["study", "--threads", "2", "--quiet", "--out", single.to_str().unwrap()];
    args.extend(grid);
    let (ok, _, stderr) = credence(&args);
    assert!(ok, "{stderr}");
    let merged = dir.join("merged.csv");
    let got = rows_without_timing(&merged);
    assert_eq!(got.len(), rows);
    assert_eq!(got, rows_without_timing(&single));
    let settings = |p: &Path| std::fs::read_to_string(format!("{}.settings", p.display())).unwrap();
    assert_eq!(settings(&merged), settings(&single));
}

/// The arguments of scripts/slurm/submit for the study in `dir`: `select` (the jobs per shard,
/// or the tasks to resubmit), one CPU per task, and the study's own arguments `grid` after `--`.
fn submit_args<'a>(dir: &'a str, select: [&'a str; 2], grid: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["--dir", dir, select[0], select[1], "--sbatch", "--cpus-per-task=1", "--"];
    args.extend_from_slice(grid);
    args
}

/// The grid of the first case: 2 sizes x 3 methods x 3 realizations = 18 jobs.
const GRID: [&str; 10] = [
    "--dataset",
    "synthetic",
    "--n",
    "30,50",
    "--methods",
    "map,cp,mcd",
    "--realizations",
    "3",
    "--epoch-scale",
    "0.02",
];

#[test]
#[ignore = "starts a live Slurm: its own step of scripts/test-all (-- --ignored)"]
fn the_array_and_merge_jobs_give_the_single_process_table() {
    let Some(mut cluster) = Cluster::start_or_skip() else { return };
    let started = Instant::now();
    let study = cluster.dir.path().join("study");
    let (ok, count, stderr) = credence(&[&["study", "--plan-shards", "6"], &GRID[..]].concat());
    assert!(ok && count == "3\n" && stderr.contains("18 job(s) in 3 shard(s)"), "{count}{stderr}");

    let (array, merge) = cluster.submit(&submit_args(study.to_str().unwrap(), ["--jobs-per-shard", "6"], &GRID));
    assert_eq!(cluster.finish(&array), ["COMPLETED"; 3], "{}", cluster.logs());
    assert_eq!(cluster.finish(&merge), ["COMPLETED"], "{}", cluster.logs());
    eprintln!("live Slurm: 3 array tasks and the merge job in {:.1} s", started.elapsed().as_secs_f64());
    assert_eq!(std::fs::read_to_string(study.join("shards")).unwrap(), "3\n");
    check_against_one_process(&study, &GRID, 18);
    // Each task ran on the one CPU Slurm gave it, not on every core of the node.
    for task in 1..=3 {
        let log = std::fs::read_to_string(study.join(format!("slurm-{array}_{task}.out"))).unwrap();
        assert!(log.contains("1 thread(s), from SLURM_CPUS_PER_TASK"), "task {task}: {log}");
    }
    let log = std::fs::read_to_string(study.join(format!("slurm-{merge}.out"))).unwrap();
    assert!(log.contains("merged 18 rows (synthetic) from 3 file(s)"), "{log}");
}

#[test]
#[ignore = "starts a live Slurm: its own step of scripts/test-all (-- --ignored)"]
fn a_classification_study_runs_as_array_and_merge_jobs() {
    let Some(mut cluster) = Cluster::start_or_skip() else { return };
    let study = cluster.dir.path().join("class");
    // 2 methods x 4 realizations = 8 jobs of 6 rows each.
    let grid =
        common::args(&CLASS_GRID, &["--n", "60", "--realizations", "4", "--epoch-scale", "0.05", "--seed-offset", "3"]);
    let (array, merge) = cluster.submit(&submit_args(study.to_str().unwrap(), ["--jobs-per-shard", "4"], &grid));
    assert_eq!(cluster.finish(&array), ["COMPLETED"; 2], "{}", cluster.logs());
    assert_eq!(cluster.finish(&merge), ["COMPLETED"], "{}", cluster.logs());
    check_against_one_process(&study, &grid, 8 * 6);
    let log = std::fs::read_to_string(study.join(format!("slurm-{merge}.out"))).unwrap();
    assert!(log.contains("merged 48 rows (synthetic) from 2 file(s)"), "{log}");
}

/// The grid of the second case: 2 methods x 10 realizations = 20 jobs at n = 100 with the full
/// epochs, slow enough (about 0.5 s per ensemble in the debug build) that a task is cancelled
/// between its jobs.
const SLOW: [&str; 8] = ["--dataset", "synthetic", "--n", "100", "--methods", "map,ensemble", "--realizations", "10"];

#[test]
#[ignore = "starts a live Slurm: its own step of scripts/test-all (-- --ignored)"]
fn a_cancelled_task_resumes_its_shard_without_losing_or_duplicating_jobs() {
    let Some(mut cluster) = Cluster::start_or_skip() else { return };
    let started = Instant::now();
    let study = cluster.dir.path().join("study");
    let s = study.to_str().unwrap();
    let (array, merge) = cluster.submit(&submit_args(s, ["--jobs-per-shard", "10"], &SLOW));
    let shard_one: BTreeSet<String> = jobs(Dataset::Synthetic, &[100], &[Method::Map, Method::Ensemble], 10, 1)
        .into_iter()
        .filter(|j| Shard { index: 1, count: 2 }.contains(j))
        .map(|j| format!("{},{},{},{},{}", j.dataset.name(), j.n, j.method.name(), j.realization, j.train_rep))
        .collect();

    // Once task 1 has finished two jobs: resubmitting it while it runs is refused (two runs
    // would write one table); then it is cancelled.
    let table = study.join("shard.1.csv");
    cluster.wait_for("task 1's first two jobs", |_| complete_rows(&table).len() >= 2);
    let resubmit = submit_args(s, ["--tasks", "1"], &SLOW);
    let refused = cluster.command(&format!("{ROOT}/scripts/slurm/submit")).args(&resubmit).output().unwrap();
    let why = text(&refused);
    assert!(!refused.status.success() && why.contains(&format!("task {array}_1 is still queued or running")), "{why}");
    cluster.run("scancel", &[&format!("{array}_1")]);
    assert_eq!(cluster.finish(&format!("{array}_1")), ["CANCELLED"], "{}", cluster.logs());
    let before = complete_rows(&table);
    assert!(
        before.len() < shard_one.len(),
        "task 1 finished all {} jobs before it was cancelled: make SLOW slower",
        shard_one.len()
    );
    eprintln!("live Slurm: task 1 cancelled after {} of its {} jobs", before.len(), shard_one.len());
    assert_eq!(cluster.finish(&format!("{array}_2")), ["COMPLETED"], "{}", cluster.logs());
    assert!(!study.join("merged.csv").exists(), "the merge ran without task 1");

    // Resubmit task 1: it resumes its table; submit cancels the merge job that cannot start.
    let (again, merge_again) = cluster.submit(&resubmit);
    assert_eq!(cluster.finish(&merge), ["CANCELLED"], "{}", cluster.logs());
    assert_eq!(cluster.finish(&again), ["COMPLETED"], "{}", cluster.logs());
    assert_eq!(cluster.finish(&merge_again), ["COMPLETED"], "{}", cluster.logs());
    eprintln!("live Slurm: cancel, resubmit and merge in {:.1} s", started.elapsed().as_secs_f64());

    // No finished job lost (its row is still there, byte for byte), none run twice.
    let after = complete_rows(&table);
    for row in &before {
        assert!(after.contains(row), "row lost by the resumed task: {row}");
    }
    let keys: Vec<String> = after.iter().map(|r| job_key(r)).collect();
    let unique: BTreeSet<String> = keys.iter().cloned().collect();
    assert_eq!(unique.len(), keys.len(), "a job written twice: {keys:?}");
    assert_eq!(unique, shard_one);
    let log = std::fs::read_to_string(study.join(format!("slurm-{again}_1.out"))).unwrap();
    assert!(log.contains(&format!("resuming: {} job(s) already in the table", before.len())), "{log}");
    check_against_one_process(&study, &SLOW, 20);
}
