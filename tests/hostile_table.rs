//! The hostile-input sweep as a table (tests/data/hostile_cases.txt): every case is one
//! `credence` command line on generated inputs with its expected class, and every case is also
//! held to the rules that hold for all of them: no panic or abort (exit 0, 1 or 2), no hang
//! (20 s), peak memory under 1 GB, no input file changed, and no raw control character on the
//! terminal.
//!
//! A case line reads `class | needles | arguments`: class `ok` (exit 0, no warning), `warning`
//! (exit 0, a `Warning:` line, each needle in the output), `error` (exit 1 or 2, each needle in the error);
//! needles are separated by `;` (for `ok` they must appear in standard output); arguments are
//! split on spaces and `{name}` is an input file of [`fixtures`] or an output path.
//!
//! A class followed by `long` (`ok long`) is one of the speed issue's largest accepted sizes:
//! work that takes most of a minute on two cores in a release build. It is held to the
//! release build's limits instead (`cargo test --release --test hostile_table -- long`, which
//! scripts/test-all runs): no hang, that is no 20 s without a line of output (progress goes
//! to standard error), at most [`LONG`] in all, and peak memory under 2 GB, the speed issue's
//! bound. The test build (opt-level 1) leaves these cases out.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use credence_testkit::predictions::write_npy;

const CASES: &str = include_str!("data/hostile_cases.txt");
const EXAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/data/");
const TEST_DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/");
/// Longer is a hang (the issue's bound): in all for a case, without output for a long case.
const HANG: Duration = Duration::from_secs(20);
/// The most a long case may take in all (its target is 60 s on an idle machine; CI shares it).
const LONG: Duration = Duration::from_secs(180);
/// Peak resident memory allowed to any case, in KiB.
const PEAK_KIB: i64 = 1 << 20;
/// Peak resident memory allowed to a long case, in KiB: 2 GB (2e9 bytes).
const LONG_PEAK_KIB: i64 = 1_953_125;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Class {
    Ok,
    Warning,
    Error,
}

struct Case {
    line: usize,
    class: Class,
    /// One of the speed issue's largest sizes (see the module docs).
    long: bool,
    needles: Vec<String>,
    args: Vec<String>,
}

fn parse_cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for (i, text) in CASES.lines().enumerate() {
        let text = text.trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        let parts: Vec<&str> = text.splitn(3, " | ").collect();
        assert_eq!(parts.len(), 3, "hostile_cases.txt:{}: want `class | needles | arguments`", i + 1);
        let (class, long) = parts[0].strip_suffix(" long").map_or((parts[0], false), |c| (c, true));
        let class = match class {
            "ok" => Class::Ok,
            "warning" => Class::Warning,
            "error" => Class::Error,
            c => panic!("hostile_cases.txt:{}: unknown class {c}", i + 1),
        };
        let needles = parts[1].split(';').map(str::trim).filter(|n| !n.is_empty()).map(String::from).collect();
        let args = parts[2].split_whitespace().map(String::from).collect();
        cases.push(Case { line: i + 1, class, long, needles, args });
    }
    cases
}

/// The example table's rows with the crps column (third) mapped by `f(value, method)`.
fn table_with(f: impl Fn(f64, &str) -> String) -> String {
    let text = std::fs::read_to_string(format!("{EXAMPLES}metric_table.csv")).unwrap();
    let mut lines = text.lines();
    let mut out = format!("{}\n", lines.next().unwrap());
    for l in lines {
        let mut c: Vec<String> = l.split(',').map(String::from).collect();
        c[2] = f(c[2].parse().unwrap(), &c[0].clone());
        out.push_str(&c.join(","));
        out.push('\n');
    }
    out
}

/// The input files the cases name, written into `dir`: copies of the example and test tables
/// and arrays, and tables made hostile one way each.
fn fixtures(dir: &Path) -> BTreeMap<String, PathBuf> {
    let mut files = BTreeMap::new();
    let mut put = |name: &str, bytes: Vec<u8>| {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        files.insert(name.split('.').next().unwrap().to_owned(), path);
    };
    let table = std::fs::read_to_string(format!("{EXAMPLES}metric_table.csv")).unwrap();
    put("table.csv", table.clone().into_bytes());
    for f in ["ensemble_probs.npy", "labels.npy", "ens_mean.npy", "ens_sd.npy", "y.npy"] {
        put(f, std::fs::read(format!("{EXAMPLES}{f}")).unwrap());
    }
    for f in ["report", "shift", "across"] {
        put(&format!("{f}.csv"), std::fs::read(format!("{TEST_DATA}{f}_table.csv")).unwrap());
    }
    put("crlf.csv", table.replace('\n', "\r\n").into_bytes());
    put("bom.csv", format!("\u{feff}{table}").into_bytes());
    put("constant.csv", table_with(|v, m| if m == "MAP" { "0.5".into() } else { v.to_string() }).into_bytes());
    put("allsame.csv", table_with(|_, _| "0.3".into()).into_bytes());
    // MCD = MAP + 0.05 in every realization: the realization effects can fit both exactly.
    let map: Vec<&str> = table.lines().filter(|l| l.starts_with("MAP,")).collect();
    let tied = table.lines().map(|l| match l.strip_prefix("MCD,") {
        Some(rest) => {
            let r = rest.split(',').next().unwrap();
            let m = map.iter().find(|m| m.split(',').nth(1) == Some(r)).unwrap();
            let v: f64 = m.split(',').nth(2).unwrap().parse().unwrap();
            let c: Vec<&str> = l.split(',').collect();
            format!("MCD,{r},{},{}\n", v + 0.05, c[3..].join(","))
        }
        None => format!("{l}\n"),
    });
    put("tied.csv", tied.collect::<String>().into_bytes());
    // Realization 1 written `1.0` on one row of MAP: the same realization as its `1`.
    let mut once = false;
    let numlabels: String = table
        .lines()
        .map(|l| match l.strip_prefix("MAP,2,") {
            Some(rest) if !once => {
                once = true;
                format!("MAP,1.0,{rest}\n")
            }
            _ => format!("{l}\n"),
        })
        .collect();
    put("numlabels.csv", numlabels.into_bytes());
    // Every method but MAP named NA: read as missing values, which the error must say.
    let na: String = table
        .lines()
        .enumerate()
        .map(|(k, l)| match l.split_once(',') {
            Some((m, rest)) if k > 0 && m != "MAP" => format!("NA,{rest}\n"),
            _ => format!("{l}\n"),
        })
        .collect();
    put("namethods.csv", na.into_bytes());
    // 3000 methods x 3 realizations: every pair over every draw would take many minutes.
    let many: String = std::iter::once("method,realization,crps\n".to_string())
        .chain((0..9000).map(|k| format!("M{},{},{}\n", k / 3, k % 3, 0.3 + 0.001 * (k % 7) as f64)))
        .collect();
    put("m3000.csv", many.into_bytes());
    // A method name longer than a format width (u16): printed in full.
    put("longname.csv", table.replace("MAP,", &format!("{},", "M".repeat(70_000))).into_bytes());
    put("micro.csv", table_with(|v, _| format!("{:e}", v * 1e-6)).into_bytes());
    put("tiny300.csv", table_with(|v, _| format!("{:e}", v * 1e-300)).into_bytes());
    put("huge.csv", table_with(|v, _| format!("{:e}", v * 1e300)).into_bytes());
    put("large.csv", table_with(|v, _| format!("{:e}", v * 1e5)).into_bytes());
    put("text.csv", table_with(|v, m| if m == "SWAG" { "abc".into() } else { v.to_string() }).into_bytes());
    put("inf.csv", table_with(|v, m| if m == "SWAG" { "inf".into() } else { v.to_string() }).into_bytes());
    put("nan.csv", table_with(|v, m| if m == "CP" { "NaN".into() } else { v.to_string() }).into_bytes());
    put("escape.csv", table.replace("MAP,", "MAP\u{1b}[2J\u{7},").into_bytes());
    let first_row = table.lines().nth(1).unwrap();
    put("duprow.csv", format!("{table}{first_row}\n").into_bytes());
    put("dupheader.csv", table.replacen("covered", "crps", 1).into_bytes());
    let map_only: String =
        table.lines().filter(|l| l.starts_with("MAP,") || l.starts_with("method")).map(|l| format!("{l}\n")).collect();
    put("onemethod.csv", map_only.into_bytes());
    put("headeronly.csv", format!("{}\n", table.lines().next().unwrap()).into_bytes());
    put("empty.csv", Vec::new());
    put("binary.csv", (0u8..=255).cycle().take(4096).collect());
    put("overcount.csv", table.replacen(",243,360", ",400,360", 1).into_bytes());
    put("negcount.csv", table.replacen(",243,360", ",-3,360", 1).into_bytes());
    put("ragged.csv", table.replacen(",243,360", ",243", 1).into_bytes());
    let shift = std::fs::read_to_string(format!("{TEST_DATA}shift_table.csv")).unwrap();
    put("shiftlow.csv", shift.replacen(",noise,1,", ",noise,low,", 1).into_bytes());
    put("shiftna.csv", shift.replacen(",noise,1,", ",noise,,", 1).into_bytes());
    let across = std::fs::read_to_string(format!("{TEST_DATA}across_table.csv")).unwrap();
    let one_cell_constant: String = across
        .lines()
        .map(|l| match l.strip_prefix("concrete,30,A,") {
            Some(rest) => format!("concrete,30,A,{},0.5\n", rest.split(',').next().unwrap()),
            None => format!("{l}\n"),
        })
        .collect();
    put("acrossconst.csv", one_cell_constant.into_bytes());
    // B = A + a constant: on concrete only, and on every data set (a constant per data set).
    let a_of = |d: &str, n: &str, r: &str| -> f64 {
        let l = across.lines().find(|l| l.starts_with(&format!("{d},{n},A,{r},"))).unwrap();
        l.rsplit(',').next().unwrap().parse().unwrap()
    };
    let tie_b = |offset: &dyn Fn(&str) -> Option<f64>| -> String {
        across
            .lines()
            .map(|l| {
                let c: Vec<&str> = l.split(',').collect();
                match (c[2], offset(c[0])) {
                    ("B", Some(o)) => format!("{},{},B,{},{}\n", c[0], c[1], c[3], a_of(c[0], c[1], c[3]) + o),
                    _ => format!("{l}\n"),
                }
            })
            .collect()
    };
    put("acrosstied.csv", tie_b(&|d| (d == "concrete").then_some(0.05)).into_bytes());
    put("acrosstiedall.csv", tie_b(&|d| Some(if d == "yacht" { 0.1 } else { -0.02 })).into_bytes());
    // The across table's values rescaled (its last column).
    for (name, factor) in [("acrosslarge", 1e5), ("acrosssmall", 1e-8), ("acrosshuge", 1e300), ("acrosstiny", 1e-300)] {
        let scaled: String = across
            .lines()
            .enumerate()
            .map(|(i, l)| match (i, l.rsplit_once(',')) {
                (1.., Some((head, v))) => format!("{head},{:e}\n", v.parse::<f64>().unwrap() * factor),
                _ => format!("{l}\n"),
            })
            .collect();
        put(&format!("{name}.csv"), scaled.into_bytes());
    }
    let report = std::fs::read_to_string(format!("{TEST_DATA}report_table.csv")).unwrap();
    put("nomethod.csv", report.replace(",method,", ",model,").into_bytes());
    put("nosize.csv", report.replacen(",30,", ",,", 1).into_bytes());
    // Quantile tables: plain, a NaN value, labels that are all "missing".
    let q: String = (0..30).map(|i| format!("{},{}\n", ["A", "B"][i % 2], (i * 37 % 29) as f64 / 29.0)).collect();
    put("runs.csv", format!("method,x\n{q}").into_bytes());
    put("runsnan.csv", format!("method,x\n{q}A,NaN\n").into_bytes());
    put("runslabels.csv", format!("method,x\n{q},0.5\nNA,0.4\nNaN,0.3\n").into_bytes());
    put("runsfew.csv", "method,x\nA,1\n".to_string().into_bytes());
    // Draws: two chains of a well-mixed quantity, then hostile variants.
    let draws: String = (0..200).map(|i| format!("{},{}\n", i / 100 + 1, ((i * 7919) % 101) as f64 / 100.0)).collect();
    put("draws.csv", format!(".chain,mu\n{draws}").into_bytes());
    let with_nan: String =
        draws.lines().enumerate().map(|(i, l)| if i == 17 { "1,NaN\n".into() } else { format!("{l}\n") }).collect();
    put("drawsnan.csv", format!(".chain,mu\n{with_nan}").into_bytes());
    put("drawstext.csv", format!(".chain,mu\n{}", with_nan.replace("NaN", "abc")).into_bytes());
    put("drawsone.csv", ".chain,mu\n1,0.5\n".to_string().into_bytes());
    // The speed issue's sizes (issue 29): many methods with few realizations, many data sets
    // (the tables of the examples many_methods and across that benches/README.md times).
    for (methods, realizations) in [(500, 2), (2000, 3), (10_000, 2)] {
        let many = credence_testkit::fit_data::gaussian_design(methods, realizations, 1);
        let rows: String = (0..many.n_obs())
            .map(|j| format!("{},{},{}\n", many.groups()[many.group()[j]], many.pairs()[many.pair()[j]], many.y()[j]))
            .collect();
        put(&format!("many{methods}x{realizations}.csv"), format!("method,realization,crps\n{rows}").into_bytes());
    }
    let truth = credence_testkit::across_data::AcrossTruth::crps_like(3);
    for datasets in [50, 200] {
        let (ds, ms, rs, y) = credence_testkit::across_data::across_rows(&truth, datasets, 3, 1);
        let rows: String = (0..y.len()).map(|k| format!("{},{},{},{}\n", ds[k], ms[k], rs[k], y[k])).collect();
        put(&format!("sets{datasets}.csv"), format!("dataset,method,realization,crps\n{rows}").into_bytes());
    }
    // Credal inputs: Dirichlet parameters and labels, a budget without focal sets.
    let alpha = dir.join("alpha.npy");
    write_npy(&alpha, &[50, 3], &(0..150).map(|i| 1.0 + (i % 7) as f64).collect::<Vec<_>>());
    files.insert("alpha".into(), alpha);
    let alabels = dir.join("alabels.npy");
    write_npy(&alabels, &[50], &(0..50).map(|i| i % 3).collect::<Vec<_>>());
    files.insert("alabels".into(), alabels);
    let badlabels = dir.join("badlabels.npy");
    write_npy(&badlabels, &[50], &(0..50).map(|i| if i == 7 { 9 } else { i % 3 }).collect::<Vec<_>>());
    files.insert("badlabels".into(), badlabels);
    let nanalpha = dir.join("nanalpha.npy");
    write_npy(&nanalpha, &[50, 3], &(0..150).map(|i| if i == 4 { f64::NAN } else { 1.0 }).collect::<Vec<_>>());
    files.insert("nanalpha".into(), nanalpha);
    let nanprobs = dir.join("nanprobs.npy");
    write_npy(&nanprobs, &[50, 3], &(0..150).map(|i| if i == 4 { f64::NAN } else { 1.0 / 3.0 }).collect::<Vec<_>>());
    files.insert("nanprobs".into(), nanprobs);
    let budget = dir.join("nofocal.json");
    std::fs::write(&budget, r#"{"classes": ["a", "b", "c"], "focal_sets": []}"#).unwrap();
    files.insert("nofocal".into(), budget);
    // Manifests of the example arrays: fine, and hostile one way each.
    let head = "method,realization,task,mean,sd,y\n";
    let row = |m: &str, r: &str, y: &str| format!("{m},{r},regression,ens_mean.npy,ens_sd.npy,{y}\n");
    let fine = format!("{head}{}{}", row("A", "0", "y.npy"), row("B", "0", "y.npy"));
    for (name, text) in [
        ("manifest", fine.clone()),
        ("mfcolumn", fine.replace("task,", "taks,")),
        ("mftask", format!("{head}{}", row("A", "0", "y.npy").replace("regression", "regresion"))),
        ("mfdup", format!("{head}{}{}", row("A", "0", "y.npy"), row("A", "0", "y.npy"))),
        ("mfmissing", format!("{head}{}", row("A", "0", "nowhere.npy"))),
        ("mfshape", format!("{head}{}", row("A", "0", "labels.npy"))),
        ("mfmixed", format!("{}A,1,classification,,,\n", fine)),
        ("mfempty", head.to_owned()),
    ] {
        let path = dir.join(format!("{name}.csv"));
        std::fs::write(&path, text).unwrap();
        files.insert(name.into(), path);
    }
    // A FIFO that nothing writes to: opening it to read would block for ever.
    let fifo = dir.join("pipe.npy");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    files.insert("fifo".into(), fifo);
    let sub = dir.join("adir");
    std::fs::create_dir(&sub).unwrap();
    files.insert("adir".into(), sub);
    files
}

/// Every file under `dir` (not directories) with its bytes.
fn contents(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.path().is_file() {
            out.insert(e.path(), std::fs::read(e.path()).unwrap());
        }
    }
    out
}

/// What one run did.
struct Ran {
    code: Option<i32>,
    signal: Option<i32>,
    stdout: String,
    stderr: String,
    seconds: f64,
    /// The longest time without new output.
    silent: f64,
    peak_kib: i64,
}

/// The peak resident memory (VmHWM) of a running process in KiB, 0 once it has exited.
fn peak_kib(pid: u32) -> i64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with("VmHWM:"));
    line.and_then(|l| l.split_whitespace().nth(1)).and_then(|v| v.parse().ok()).unwrap_or(0)
}

/// Runs `credence args` with its output in files (no pipe to fill), polling every 5 ms: the
/// child's peak resident memory is its high-water mark as last seen (memory is touched far
/// slower than that, so a blow-up is seen), and a hang is killed at [`HANG`] (a long case:
/// [`HANG`] without new output, or [`LONG`] in all).
fn run(args: &[String], dir: &Path, tag: usize, long: bool) -> Ran {
    use std::os::unix::process::ExitStatusExt;
    let (out_path, err_path) = (dir.join(format!("stdout{tag}")), dir.join(format!("stderr{tag}")));
    let mut child = Command::new(env!("CARGO_BIN_EXE_credence"))
        .args(args)
        .env_remove("CREDENCE_DATA")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).unwrap())
        .stderr(std::fs::File::create(&err_path).unwrap())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let (mut peak, mut silent) = (0, 0.0f64);
    let (mut written, mut last_output) = (0, start);
    let status = loop {
        peak = peak.max(peak_kib(child.id()));
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        let size = |p: &Path| std::fs::metadata(p).map_or(0, |m| m.len());
        let now_written = size(&out_path) + size(&err_path);
        if now_written != written {
            (written, last_output) = (now_written, Instant::now());
        }
        silent = silent.max(last_output.elapsed().as_secs_f64());
        let hung = if long { last_output.elapsed() > HANG || start.elapsed() > LONG } else { start.elapsed() > HANG };
        if hung {
            let _ = child.kill();
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let read = |p: &Path| {
        let mut s = Vec::new();
        std::fs::File::open(p).unwrap().read_to_end(&mut s).unwrap();
        String::from_utf8_lossy(&s).into_owned()
    };
    Ran {
        code: status.code(),
        signal: status.signal(),
        stdout: read(&out_path),
        stderr: read(&err_path),
        seconds: start.elapsed().as_secs_f64(),
        silent,
        peak_kib: peak,
    }
}

/// What is wrong with a run of `case`, if anything.
fn verdict(case: &Case, ran: &Ran) -> Option<String> {
    if let Some(s) = ran.signal {
        return Some(format!("killed by signal {s} after {:.1} s (abort or hang)", ran.seconds));
    }
    let (limit, peak) = if case.long { (LONG, LONG_PEAK_KIB) } else { (HANG, PEAK_KIB) };
    if ran.seconds > limit.as_secs_f64() {
        return Some(format!("took {:.1} s", ran.seconds));
    }
    if case.long && ran.silent > HANG.as_secs_f64() {
        return Some(format!("{:.1} s without output", ran.silent));
    }
    if ran.peak_kib > peak {
        return Some(format!("peak memory {} MiB", ran.peak_kib / 1024));
    }
    if ran.stderr.contains("panicked") || !matches!(ran.code, Some(0..=2)) {
        return Some(format!("exit {:?} (panic?)", ran.code));
    }
    let terminal = format!("{}{}", ran.stdout, ran.stderr);
    if terminal.chars().any(|c| c.is_control() && c != '\n' && c != '\t' && c != '\r') {
        return Some("raw control characters on the terminal".into());
    }
    // A fit prints its warnings under its summary (standard output), other commands on
    // standard error.
    let warned = terminal.lines().any(|l| l.starts_with("Warning:"));
    let ok = ran.code == Some(0);
    let (good, haystack) = match case.class {
        Class::Ok => (ok && !warned, &ran.stdout),
        Class::Warning => (ok && warned, &terminal),
        Class::Error => (!ok, &ran.stderr),
    };
    let missing: Vec<&String> = case.needles.iter().filter(|n| !haystack.contains(n.as_str())).collect();
    (!good || !missing.is_empty()).then(|| format!("expected {:?}, missing {missing:?}", case.class))
}

#[test]
fn every_hostile_case_behaves() {
    let cases: Vec<Case> = parse_cases().into_iter().filter(|c| !c.long).collect();
    assert!(cases.len() >= 150, "the table holds {} cases, fewer than 150", cases.len());
    run_cases(&cases);
}

/// The speed issue's largest sizes, in a release build (too slow at the test build's
/// opt-level 1): `cargo test --release --test hostile_table -- long`.
#[test]
#[cfg_attr(debug_assertions, ignore = "release build only: cargo test --release --test hostile_table -- long")]
fn long_cases_behave() {
    let cases: Vec<Case> = parse_cases().into_iter().filter(|c| c.long).collect();
    assert!(cases.len() >= 3, "the table holds {} long cases", cases.len());
    run_cases(&cases);
}

/// Runs `cases` two at a time against fresh fixtures and checks each, and that no input
/// changed.
fn run_cases(cases: &[Case]) {
    let dir = tempfile::tempdir().unwrap();
    let inputs = dir.path().join("in");
    std::fs::create_dir(&inputs).unwrap();
    let files = fixtures(&inputs);
    let before = contents(&inputs);
    let outputs = dir.path().join("out");
    std::fs::create_dir(&outputs).unwrap();
    let expand = |arg: &str, k: usize| -> String {
        let mut s = arg.to_owned();
        for (name, path) in &files {
            s = s.replace(&format!("{{{name}}}"), &path.to_string_lossy());
        }
        for out in ["out", "out2"] {
            s = s.replace(&format!("{{{out}}}"), &outputs.join(format!("{out}-{k}")).to_string_lossy());
        }
        assert!(!s.contains('{'), "unknown placeholder in {arg}");
        s
    };
    // Two cases at a time (the machine has two cores; the limits are per case).
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                loop {
                    let k = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some(case) = cases.get(k) else { break };
                    let args: Vec<String> = case.args.iter().map(|a| expand(a, k)).collect();
                    let ran = run(&args, dir.path(), k, case.long);
                    if case.long {
                        eprintln!(
                            "hostile_cases.txt:{}: {:.1} s, at most {:.1} s without output, peak {} MiB",
                            case.line,
                            ran.seconds,
                            ran.silent,
                            ran.peak_kib / 1024
                        );
                    }
                    if let Some(why) = verdict(case, &ran) {
                        let shown = format!("{}{}", ran.stdout.chars().take(300).collect::<String>(), ran.stderr);
                        failures.lock().unwrap().push(format!(
                            "hostile_cases.txt:{}: {}\n    credence {}\n    {}",
                            case.line,
                            why,
                            case.args.join(" "),
                            shown.trim().replace('\n', "\n    ")
                        ));
                    }
                }
            });
        }
    });
    let changed: Vec<_> =
        contents(&inputs).into_iter().filter(|(p, b)| before.get(p) != Some(b)).map(|(p, _)| p).collect();
    let mut failures = failures.into_inner().unwrap();
    failures.sort();
    assert!(changed.is_empty(), "inputs changed: {changed:?}");
    assert!(failures.is_empty(), "{} of {} cases failed:\n{}", failures.len(), cases.len(), failures.join("\n"));
}
