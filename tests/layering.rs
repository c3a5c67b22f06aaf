//! The shape of the code, checked: layers that never climb back, no circles, small files,
//! short functions.
//!
//! - Crates: credence depends on no other crate of the workspace; credence-study and
//!   credence-testkit only on credence; credence-report on credence and credence-study;
//!   credence-cli on those three; the R glue (rpkg/src/rust) only on credence.
//! - Layering: the core's top-level modules form an order (foundation -> io -> predictive ->
//!   metrics/quantiles/credal/summary -> compare/nn -> backend); no module refers to (`use
//!   crate::x` or a `crate::x::` path in code) a module later in it.
//!   Inside `compare/`, the folders follow the same rule in the order data flows.
//! - No circles: in every crate, no files refer to each other in a circle, not even inside a
//!   folder (a file's references to its own ancestor modules, the facade, do not count; see
//!   house/graph.rs).
//! - Size: no file over 600 lines and no function over 120 lines, in Rust (test code not
//!   counted: inline `#[cfg(test)] mod` blocks, the files such a declaration names, `tests.rs`
//!   and `tests/`) and in the kernels' C++ (`kernels/*.cu`, `.cuh`, `.cpp`, `.h`).
//! - No `#[path]` mounts: a module's file is where its name says.
//! - The clean standard's thresholds (R-hat 1.01, bulk-ESS 400) are written in one file only.
//! - `unsafe` (denied by the workspace's lints) is allowed only in the audited files of
//!   [`UNSAFE_ALLOWED`], the list the workspace's Cargo.toml names.
//!
//! The scan is lexical (comments, strings and char literals blanked, braces matched: see
//! house/mod.rs), which is enough for rustfmt-formatted code; each rule is checked on a small
//! planted example too, so that a passing scan means something.

mod house;

use std::path::{Path, PathBuf};

use house::crates::crate_violations;
use house::graph::circle_report;
use house::{Scanned, non_test, rust_files, scan, source_files};

/// The core's top-level modules by tier; a module may use its own tier and those before it.
const TIERS: &[&[&str]] = &[
    &["error", "special", "simd", "seeds", "limits", "interrupt"],
    &["io"],
    &["predictive"],
    &["metrics", "quantiles", "credal", "summary", "manifest"],
    &["compare", "nn"],
    &["backend"],
    &["request"],
];

/// `compare/`'s folders in the order data flows (files directly in `compare/` are not ranked).
const COMPARE_TIERS: &[&[&str]] = &[&["model"], &["diagnostics"], &["sampler"], &["fit"], &["post"]];

/// Each crate (the package name) with the crates of the workspace it may depend on.
const CRATES: &[(&str, &[&str])] = &[
    ("credence", &[]),
    ("credence-study", &["credence"]),
    ("credence-report", &["credence", "credence-study"]),
    ("credence-cli", &["credence", "credence-study", "credence-report"]),
    ("credence-testkit", &["credence"]),
    ("credence-r", &["credence"]),
];

/// Every crate's sources.
const CRATE_SOURCES: &[&str] = &[
    "rust/credence/src",
    "rust/credence-study/src",
    "rust/credence-report/src",
    "rust/credence-cli/src",
    "rust/credence-testkit/src",
    "rpkg/src/rust/src",
];

/// The file that holds the clean standard's thresholds, the one place they may be written.
const CLEAN_STANDARD: &str = "rust/credence/src/compare/diagnostics/clean.rs";

/// The files that may allow `unsafe_code`, each use with a SAFETY comment: the CPU-feature
/// dispatch, the huge-page advice, loading NVRTC and the CUDA launches.
const UNSAFE_ALLOWED: &[&str] = &[
    "rust/credence/src/simd.rs",
    "rust/credence/src/special.rs",
    "rust/credence/src/backend/kernels.rs",
    "rust/credence/src/backend/cuda.rs",
];

/// The kernels' C and C++ sources, by extension.
const CXX: &[&str] = &["cu", "cuh", "cpp", "h"];

const MAX_FILE_LINES: usize = 600;
const MAX_FN_LINES: usize = 120;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn tier(tiers: &[&[&str]], module: &str) -> Option<usize> {
    tiers.iter().position(|t| t.contains(&module))
}

/// The top-level module a file of `src/` belongs to (`lib` for lib.rs).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel.components().next().unwrap().as_os_str().to_string_lossy().into_owned();
    first.trim_end_matches(".rs").to_owned()
}

/// The top-level modules referred to as `crate::x` in non-test code, with the line of each.
fn crate_refs(s: &Scanned) -> Vec<(String, usize)> {
    let ident = |s: &str| -> String { s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect() };
    let mut out = Vec::new();
    for (n, line) in s.code() {
        let mut rest = line;
        while let Some(k) = rest.find("crate::") {
            let before = &rest[..k];
            rest = &rest[k + "crate::".len()..];
            if before.ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$') {
                continue;
            }
            out.push((ident(rest), n + 1));
            if let Some(inner) = rest.strip_prefix('{') {
                // `use crate::{a::x, b::y}`: every item of the group.
                let group: String = inner.chars().take_while(|&c| c != '}').collect();
                out.extend(group.split(',').map(|item| (ident(item.trim()), n + 1)));
            }
        }
    }
    out.retain(|(m, _)| !m.is_empty());
    out
}

/// Every violation of the size and `#[path]` rules among `files` (Rust, C and C++).
fn size_violations(files: &[PathBuf]) -> Vec<String> {
    let mut out = Vec::new();
    for f in files.iter().filter(|f| f.extension().is_some_and(|e| e == "rs")) {
        if scan(&std::fs::read_to_string(f).unwrap()).text.contains("#[path") {
            out.push(format!("{}: a #[path] mount", f.display()));
        }
    }
    for (f, s) in non_test(files) {
        if s.code_lines() > MAX_FILE_LINES {
            out.push(format!("{}: {} lines of non-test code (at most {MAX_FILE_LINES})", f.display(), s.code_lines()));
        }
        let functions = if f.extension().is_some_and(|e| e == "rs") { s.functions() } else { s.cxx_functions() };
        for (name, line, len) in functions {
            if len > MAX_FN_LINES {
                out.push(format!("{}:{line}: fn {name} is {len} lines (at most {MAX_FN_LINES})", f.display()));
            }
        }
    }
    out
}

/// Every reference from a module to a later one, within `src` by `TIERS` and within
/// `src/compare` by `COMPARE_TIERS`.
fn layering_violations(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let compare = src.join("compare");
    let mut out = Vec::new();
    for f in &files {
        let s = scan(&std::fs::read_to_string(f).unwrap());
        let from = module_of(src, f);
        let from_tier = tier(TIERS, &from);
        for (to, line) in crate_refs(&s) {
            if let (Some(a), Some(b)) = (from_tier, tier(TIERS, &to))
                && b > a
            {
                out.push(format!("{}:{line}: {from} (tier {a}) refers to crate::{to} (tier {b})", f.display()));
            }
        }
        // Inside compare: `crate::compare::<folder>` and `super::<folder>` references.
        let Some(cf) = f.starts_with(&compare).then(|| module_of(&compare, f)).and_then(|m| tier(COMPARE_TIERS, &m))
        else {
            continue;
        };
        for (n, line) in s.code() {
            for pat in ["crate::compare::", "super::"] {
                let mut rest = line;
                while let Some(k) = rest.find(pat) {
                    rest = &rest[k + pat.len()..];
                    let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                    if let Some(b) = tier(COMPARE_TIERS, &name)
                        && b > cf
                    {
                        let from = COMPARE_TIERS[cf][0];
                        out.push(format!("{}:{}: compare/{from} refers to compare::{name}", f.display(), n + 1));
                    }
                }
            }
        }
    }
    out
}

/// The number that starts at `at` (a digit): where its value (digits and `_`, a fraction, an
/// exponent) ends and where its suffix (`usize`, `_f64`) ends.
fn number_at(b: &[u8], at: usize) -> (usize, usize) {
    let digits = |k: usize| k + b[k..].iter().take_while(|c| c.is_ascii_digit() || **c == b'_').count();
    let mut end = digits(at);
    // A fraction (`1.01`, `400.`), but not a range (`0..400`), a method call (`1.max(x)`) or a
    // field (`x.0.1`).
    let after = b.get(end + 1);
    if b.get(end) == Some(&b'.')
        && after.is_none_or(|c| c.is_ascii_digit() || !(c.is_ascii_alphabetic() || b"_.".contains(c)))
    {
        end = digits(end + 1);
    }
    if matches!(b.get(end), Some(b'e' | b'E'))
        && b.get(end + 1).is_some_and(|c| c.is_ascii_digit() || b"+-".contains(c))
    {
        end = digits(end + 2);
    }
    (end, end + b[end..].iter().take_while(|c| c.is_ascii_alphanumeric() || **c == b'_').count())
}

/// The numeric literals 1.01 and 400 (in any spelling: `400.0`, `400usize`, `1.010_f64`) in
/// the non-test code of `files`, except in the clean standard's own file.
fn clean_standard_literals(files: &[PathBuf]) -> Vec<String> {
    let mut out = Vec::new();
    for (f, s) in non_test(files) {
        if f.ends_with(CLEAN_STANDARD) {
            continue;
        }
        for (n, line) in s.code() {
            let b = line.as_bytes();
            let mut at = 0;
            while at < b.len() {
                let word = b[at..].iter().take_while(|c| c.is_ascii_alphanumeric() || **c == b'_').count();
                if !b[at].is_ascii_digit() {
                    // An identifier (whose digits are no number) or any other character.
                    at += word.max(1);
                    continue;
                }
                let (value_end, end) = number_at(b, at);
                let value: String = line[at..value_end].chars().filter(|c| *c != '_').collect();
                if value.parse::<f64>().is_ok_and(|v| v == 1.01 || v == 400.0) {
                    let literal = &line[at..end];
                    out.push(format!(
                        "{}:{}: {literal} (the clean standard's; its home is {CLEAN_STANDARD})",
                        f.display(),
                        n + 1
                    ));
                }
                at = end;
            }
        }
    }
    out
}

/// A fresh folder of planted files, removed when dropped (also when a check fails).
struct Planted(PathBuf);

impl std::ops::Deref for Planted {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Planted {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Writes `files` (path, text) under a fresh folder named for `name`.
fn planted(name: &str, files: &[(&str, &str)]) -> Planted {
    let dir = std::env::temp_dir().join(format!("credence-house-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (p, text) in files {
        std::fs::create_dir_all(dir.join(p).parent().unwrap()).unwrap();
        std::fs::write(dir.join(p), text).unwrap();
    }
    Planted(dir)
}

/// Asserts that `found` is exactly one line containing each of `needles`.
fn expect_exactly(found: &[String], needles: &[&str]) {
    for needle in needles {
        assert!(found.iter().any(|l| l.contains(needle)), "no {needle:?} in {found:#?}");
    }
    assert_eq!(found.len(), needles.len(), "only the planted offenders: {found:#?}");
}

fn all_files(dir: &Path, exts: &[&str]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    source_files(dir, exts, &mut files);
    files
}

#[test]
fn no_module_refers_to_a_later_layer() {
    let v = layering_violations(&repo().join("rust/credence/src"));
    assert!(v.is_empty(), "imports that climb back:\n{}", v.join("\n"));
}

#[test]
fn every_top_level_module_has_a_tier() {
    let src = repo().join("rust/credence/src");
    let modules: std::collections::BTreeSet<String> =
        all_files(&src, &["rs"]).iter().map(|f| module_of(&src, f)).collect();
    let unranked: Vec<_> = modules.iter().filter(|m| *m != "lib" && tier(TIERS, m).is_none()).collect();
    assert!(unranked.is_empty(), "modules missing from TIERS: {unranked:?}");
}

#[test]
fn crates_depend_only_on_lower_layers() {
    let root = repo();
    let mut manifests: Vec<String> =
        CRATE_SOURCES.iter().map(|src| format!("{}/Cargo.toml", src.strip_suffix("/src").unwrap())).collect();
    manifests.sort();
    let texts: Vec<(String, String)> =
        manifests.into_iter().map(|m| (m.clone(), std::fs::read_to_string(root.join(&m)).unwrap())).collect();
    assert_eq!(texts.len(), CRATES.len());
    let v = crate_violations(CRATES, &texts);
    assert!(v.is_empty(), "{}", v.join("\n"));
}

#[test]
fn no_circles_between_files() {
    let root = repo();
    let v: Vec<String> = CRATE_SOURCES.iter().flat_map(|src| circle_report(&root.join(src), &root)).collect();
    assert!(v.is_empty(), "files that refer to each other in a circle:\n{}", v.join("\n"));
}

#[test]
fn files_and_functions_are_small_and_no_path_mounts() {
    let root = repo();
    let mut files = Vec::new();
    for dir in CRATE_SOURCES.iter().chain(&["benches", "examples", "tests"]) {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 100, "found only {} files: wrong root?", files.len());
    let kernels = all_files(&root.join("kernels"), CXX);
    assert!(kernels.len() > 5, "found only {} kernel files", kernels.len());
    files.extend(kernels);
    let v = size_violations(&files);
    assert!(v.is_empty(), "{}", v.join("\n"));
}

#[test]
fn the_clean_standard_is_written_in_one_place() {
    let root = repo();
    let files: Vec<PathBuf> = CRATE_SOURCES.iter().flat_map(|src| all_files(&root.join(src), &["rs"])).collect();
    let v = clean_standard_literals(&files);
    assert!(v.is_empty(), "{}", v.join("\n"));
}

#[test]
fn unsafe_is_allowed_only_in_the_audited_files() {
    let root = repo();
    let mut allowing: Vec<String> = CRATE_SOURCES
        .iter()
        .flat_map(|src| all_files(&root.join(src), &["rs"]))
        .filter(|f| std::fs::read_to_string(f).unwrap().contains("allow(unsafe_code)"))
        .map(|f| f.strip_prefix(&root).unwrap().display().to_string())
        .collect();
    allowing.sort();
    let mut want: Vec<String> = UNSAFE_ALLOWED.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(allowing, want, "the files that allow unsafe_code against UNSAFE_ALLOWED (and Cargo.toml's list)");
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    for f in UNSAFE_ALLOWED {
        let name = f.strip_prefix("rust/credence/src/").unwrap();
        assert!(manifest.contains(name), "Cargo.toml's note on unsafe_code does not name {name}");
    }
}

/// The tier rules catch planted offenders.
#[test]
fn the_tier_rules_see_planted_offenders() {
    let dir = planted(
        "tiers",
        &[
            // An upward import, one hidden in a group, one in a path, and one only in a comment/string.
            (
                "src/io/mod.rs",
                "use crate::{error::Error, compare::Fit};\n// crate::backend::x\nfn f() { let _ = \"crate::nn\"; }\n",
            ),
            ("src/metrics/mod.rs", "fn g() { crate::backend::run(); }\n"),
            ("src/predictive.rs", "use crate::io::read;\n"),
            ("src/compare/model/mod.rs", "use super::post::plan;\n"),
            ("src/compare/post/mod.rs", "use crate::compare::model::Design;\n"),
            ("src/plots/mod.rs", "#[cfg(test)]\nmod tests {\n    use crate::notebook::X;\n}\n"),
        ],
    );
    expect_exactly(
        &layering_violations(&dir.join("src")),
        &[
            "io/mod.rs:1: io (tier 1) refers to crate::compare",
            "metrics/mod.rs:1: metrics (tier 3) refers to crate::backend",
            "compare/model refers to compare::post",
        ],
    );
}

/// The size and `#[path]` rules catch planted offenders, in Rust and in C++.
#[test]
fn the_size_rules_see_planted_offenders() {
    let long_body = "    let x = 1;\n".repeat(MAX_FN_LINES);
    let big = format!(
        "#[path = \"x.rs\"]\nmod x;\nfn long() {{\n{long_body}}}\nfn short(c: char) -> bool {{ c == '}}' || c == '\\'' }}\n{}#[cfg(test)]\nmod checks;\n",
        "const A: u8 = 0;\n".repeat(MAX_FILE_LINES)
    );
    let tested = format!("#[cfg(test)]\nmod tests {{\n    fn long() {{\n{long_body}    }}\n}}\n");
    let checks = "const B: u8 = 0;\n".repeat(2 * MAX_FILE_LINES);
    let cxx_body = "  x += 1;\n".repeat(MAX_FN_LINES);
    // A long kernel whose signature spans lines, a short method in a struct, a macro with
    // braces, braces in a comment and a string: one long function, one long file.
    let cu = format!(
        "#define SWAP(a, b) {{ \\\n  int t = a; }}\nstruct S {{\n  int f() const {{ return 1; }}\n}};\n\
         extern \"C\" __global__ void __launch_bounds__(256, 1)\nlong_kernel(int* x,\n            int n) {{\n{cxx_body}  // }}\n  const char* s = \"}}\";\n}}\n{}",
        "int y;\n".repeat(MAX_FILE_LINES)
    );
    let dir = planted(
        "size",
        &[
            ("big.rs", &big),
            ("tested.rs", &tested),
            ("big/checks.rs", &checks),
            ("k.cu", &cu),
            ("short.cuh", "int f() { return 0; }\n"),
        ],
    );
    let files: Vec<PathBuf> =
        ["big.rs", "tested.rs", "big/checks.rs", "k.cu", "short.cuh"].iter().map(|f| dir.join(f)).collect();
    // Test code is not counted.
    expect_exactly(
        &size_violations(&files),
        &[
            "#[path]",
            "big.rs:3: fn long is 122 lines",
            "big.rs: 727 lines of non-test code",
            "k.cu:6: fn long_kernel is 126 lines",
            "k.cu: 731 lines of non-test code",
        ],
    );
}

/// The crate rule catches planted dependencies, in every kind of dependency table.
#[test]
fn the_crate_rule_sees_planted_offenders() {
    let manifests = [
        (
            "core",
            "[package]\nname = \"credence\"\n[dependencies]\nndarray.workspace = true\ncredence-study = { path = \"..\" }\n\
             [dev-dependencies]\ncredence-testkit = { path = \"..\" }\n",
        ),
        (
            "kit",
            "[package]\nname = \"credence-testkit\"\n[target.'cfg(unix)'.dependencies]\ncredence-report.workspace = true\n",
        ),
        ("r", "[package]\nname = \"credence-r\"\n[dependencies.credence-study]\npath = \"..\"\n"),
        (
            "cli",
            "[package]\nname = \"credence-cli\"\n[dependencies]\ncredence.workspace = true\ncredence-report.workspace = true\n",
        ),
        ("extra", "[package]\nname = \"credence-extra\"\n"),
    ];
    let texts: Vec<(String, String)> = manifests.iter().map(|(p, t)| (p.to_string(), t.to_string())).collect();
    expect_exactly(
        &crate_violations(CRATES, &texts),
        &[
            "core: crate credence depends on credence-study",
            "kit: crate credence-testkit depends on credence-report",
            "r: crate credence-r depends on credence-study",
            "extra: crate credence-extra has no place",
        ],
    );
}

/// The circle rule finds planted circles (through `crate::`, chains of `super::`, `use`
/// groups with `self`, child module paths) and none through ancestors, tests or comments.
#[test]
fn the_circle_rule_sees_planted_offenders() {
    let dir = planted(
        "circles",
        &[
            ("src/lib.rs", "mod a;\nmod b;\npub mod c;\nmod e;\nmod f;\nmod h;\nmod i;\nmod m;\nmod n;\n"),
            ("src/a.rs", "use crate::b::B;\npub struct X;\n"),
            ("src/b.rs", "pub fn f() {\n    super::a::g();\n}\n"),
            // The facade: c re-exports its child d, d uses c's items: no circle.
            ("src/c/mod.rs", "mod d;\npub use d::D;\nuse crate::a::X;\n"),
            ("src/c/d.rs", "use super::X;\nuse super::super::c::Y;\n"),
            ("src/e.rs", "use crate::{\n    f::{self, F},\n    a::X,\n};\n"),
            ("src/f.rs", "pub fn g() -> crate::e::E {\n    todo!()\n}\n"),
            // Only test code and comments close these: no circle.
            ("src/h.rs", "#[cfg(test)]\nmod tests {\n    use crate::i::I;\n}\n// crate::i::J\n"),
            ("src/i.rs", "use crate::h::H;\nconst S: &str = \"crate::h\";\n"),
            ("src/i/tests.rs", "use crate::h::H;\n"),
            // Three files: m/x -> n -> m/y -> m/x.
            ("src/m/mod.rs", "mod x;\nmod y;\n"),
            ("src/m/x.rs", "use super::super::n::N;\n"),
            ("src/n.rs", "use crate::m::y::Y;\n"),
            ("src/m/y.rs", "fn f() { crate::m::x::go(); }\n"),
        ],
    );
    let v = circle_report(&dir.join("src"), &dir);
    assert_eq!(v.len(), 3, "{v:#?}");
    assert!(v[0].starts_with("a circle of 2 files: src/a.rs, src/b.rs"), "{v:#?}");
    assert!(v[0].contains("src/b.rs:2 -> src/a.rs"), "{v:#?}");
    assert!(v[1].starts_with("a circle of 2 files: src/e.rs, src/f.rs"), "{v:#?}");
    assert!(v[2].starts_with("a circle of 3 files: src/m/x.rs, src/m/y.rs, src/n.rs"), "{v:#?}");
}

/// The clean standard's literals are found in code in any spelling, and not in comments,
/// strings, tests, other numbers or the standard's own file.
#[test]
fn the_clean_standard_rule_sees_planted_offenders() {
    let code = "fn f(x: f64) -> bool {\n    x > 1.01 && x < 400.0\n}\nconst N: usize = 400usize;\n\
                const A: f64 = 1.010_f64;\nconst OK: [f64; 6] = [1.011, 4000.0, 0.400, 11.01, 400e1, 1e-2];\n\
                // 1.01 and 400 in a comment\nconst S: &str = \"400\";\nfn r() { for _ in 0..400 {} }\n\
                #[cfg(test)]\nmod tests {\n    const T: f64 = 1.01;\n}\n";
    let dir = planted("clean", &[("src/a.rs", code), (CLEAN_STANDARD, "pub const RHAT: f64 = 1.01;\n")]);
    let v = clean_standard_literals(&[dir.join("src/a.rs"), dir.join(CLEAN_STANDARD)]);
    let lines: Vec<&str> = v.iter().map(|l| l.split(" (").next().unwrap()).collect();
    let at = |l: &str| format!("{}:{l}", dir.join("src/a.rs").display());
    assert_eq!(lines, [at("2: 1.01"), at("2: 400.0"), at("4: 400usize"), at("5: 1.010_f64"), at("9: 400")], "{v:#?}");
}
