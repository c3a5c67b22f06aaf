//! The shape of the code, checked: layers that never climb back, small files, short functions.
//!
//! - Layering: the core's top-level modules form an order (foundation -> io -> predictive ->
//!   metrics/quantiles/credal/summary -> compare/nn -> backend -> study -> plots -> report ->
//!   notebook); no module refers to (`use crate::x` or a `crate::x::` path in code) a module
//!   later in it.
//!   Inside `compare/`, the folders follow the same rule in the order data flows.
//! - Size: no file over 600 lines and no function over 120 lines, test code not counted (inline
//!   `#[cfg(test)] mod` blocks, the files such a declaration names, `tests.rs` and `tests/`).
//! - No `#[path]` mounts: a module's file is where its name says.
//!
//! The scan is lexical (comments, strings and char literals blanked, braces matched), which is
//! enough for rustfmt-formatted code; each rule is checked on a small planted example too.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The core's top-level modules by tier; a module may use its own tier and those before it.
const TIERS: &[&[&str]] = &[
    &["error", "special", "simd", "seeds"],
    &["io"],
    &["predictive"],
    &["metrics", "quantiles", "credal", "summary"],
    &["compare", "nn"],
    &["backend"],
    &["request"],
];

/// `compare/`'s folders in the order data flows (files directly in `compare/` are not ranked).
const COMPARE_TIERS: &[&[&str]] = &[&["model"], &["diagnostics"], &["sampler"], &["fit"], &["post"]];

const MAX_FILE_LINES: usize = 600;
const MAX_FN_LINES: usize = 120;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n != "target") {
                rust_files(&p, out);
            }
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The source with comments, string and char literals replaced by spaces (newlines kept).
fn blank(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    let wipe = |out: &mut Vec<u8>, from: usize, to: usize| {
        for c in &mut out[from..to] {
            if *c != b'\n' {
                *c = b' ';
            }
        }
    };
    while i < b.len() {
        let ident_before = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if b[i..].starts_with(b"//") {
            let end = b[i..].iter().position(|&c| c == b'\n').map_or(b.len(), |k| i + k);
            wipe(&mut out, i, end);
            i = end;
        } else if b[i..].starts_with(b"/*") {
            let (mut depth, mut j) = (0usize, i);
            while j < b.len() {
                if b[j..].starts_with(b"/*") {
                    depth += 1;
                    j += 2;
                } else if b[j..].starts_with(b"*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            wipe(&mut out, i, j);
            i = j;
        } else if !ident_before && (b[i..].starts_with(b"r\"") || b[i..].starts_with(b"r#")) {
            let hashes = b[i + 1..].iter().take_while(|&&c| c == b'#').count();
            if b.get(i + 1 + hashes) != Some(&b'"') {
                i += 1;
                continue;
            }
            let close: Vec<u8> = std::iter::once(b'"').chain(std::iter::repeat_n(b'#', hashes)).collect();
            let start = i + 2 + hashes;
            let end = (start..b.len()).find(|&k| b[k..].starts_with(&close)).map_or(b.len(), |k| k + close.len());
            wipe(&mut out, i, end);
            i = end;
        } else if b[i] == b'"' {
            let mut j = i + 1;
            while j < b.len() && b[j] != b'"' {
                j += if b[j] == b'\\' { 2 } else { 1 };
            }
            wipe(&mut out, i, (j + 1).min(b.len()));
            i = j + 1;
        } else if b[i] == b'\'' {
            // A char literal ('x', '\n', '\u{..}'), not a lifetime ('a).
            let end = if b.get(i + 1) == Some(&b'\\') {
                // Skip the escaped character (it may be a quote), then find the closing one.
                b.get(i + 3..).and_then(|r| r.iter().position(|&c| c == b'\'')).map(|k| i + 3 + k)
            } else if b.get(i + 2) == Some(&b'\'') {
                Some(i + 2)
            } else {
                // A multi-byte char: find the closing quote within 5 bytes.
                (i + 2..(i + 6).min(b.len())).find(|&k| b[k] == b'\'' && !b[i + 1].is_ascii())
            };
            match end {
                Some(e) => {
                    wipe(&mut out, i, e + 1);
                    i = e + 1;
                }
                None => i += 1,
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The byte index of the brace closing the one opened at `open`.
fn matching(s: &[u8], open: usize) -> usize {
    let mut depth = 0i64;
    for (k, &c) in s.iter().enumerate().skip(open) {
        match c {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return k;
                }
            }
            _ => {}
        }
    }
    s.len().saturating_sub(1)
}

fn line_of(s: &str, at: usize) -> usize {
    s.as_bytes()[..at].iter().filter(|&&c| c == b'\n').count()
}

/// One scanned file: blanked text, its test-code line ranges and the test modules it names.
struct Scanned {
    text: String,
    test_lines: Vec<(usize, usize)>,
    test_files: Vec<String>,
}

fn scan(src: &str) -> Scanned {
    let text = blank(src);
    let b = text.as_bytes();
    let (mut test_lines, mut test_files) = (Vec::new(), Vec::new());
    let mut from = 0;
    while let Some(k) = text[from..].find("#[cfg(test)]") {
        let at = from + k;
        from = at + 1;
        let rest = &text[at + "#[cfg(test)]".len()..];
        let trimmed = rest.trim_start();
        let after_vis = trimmed.strip_prefix("pub(crate)").or(trimmed.strip_prefix("pub")).unwrap_or(trimmed);
        let Some(after_mod) = after_vis.trim_start().strip_prefix("mod ") else { continue };
        let name: String = after_mod.trim_start().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        let tail = after_mod.trim_start()[name.len()..].trim_start();
        if tail.starts_with(';') {
            test_files.push(name);
        } else if tail.starts_with('{') {
            let open = b.len() - tail.len();
            test_lines.push((line_of(&text, at), line_of(&text, matching(b, open))));
        }
    }
    Scanned { text, test_lines, test_files }
}

impl Scanned {
    fn in_test(&self, line: usize) -> bool {
        self.test_lines.iter().any(|&(a, z)| (a..=z).contains(&line))
    }

    fn code_lines(&self) -> usize {
        let total = self.text.lines().count();
        total - self.test_lines.iter().map(|(a, z)| z - a + 1).sum::<usize>()
    }

    /// (name, first line, length in lines) of every function with a body outside test code.
    fn functions(&self) -> Vec<(String, usize, usize)> {
        let b = self.text.as_bytes();
        let mut out = Vec::new();
        let mut from = 0;
        while let Some(k) = self.text[from..].find("fn ") {
            let at = from + k;
            from = at + 3;
            if at > 0 && (b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_') {
                continue;
            }
            let name: String = self.text[at + 3..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if name.is_empty() {
                continue;
            }
            // The body opens at the first `{` outside parentheses, unless a `;` ends a declaration.
            let (mut paren, mut open) = (0i64, None);
            for (j, &c) in b.iter().enumerate().skip(at) {
                match c {
                    b'(' | b'[' => paren += 1,
                    b')' | b']' => paren -= 1,
                    b';' if paren == 0 => break,
                    b'{' if paren == 0 => {
                        open = Some(j);
                        break;
                    }
                    _ => {}
                }
            }
            let Some(open) = open else { continue };
            let first = line_of(&self.text, at);
            if self.in_test(first) {
                continue;
            }
            out.push((name, first + 1, line_of(&self.text, matching(b, open)) - first + 1));
        }
        out
    }

    /// The top-level modules referred to as `crate::x`, with the line of each reference.
    fn crate_refs(&self) -> Vec<(String, usize)> {
        let mut out = Vec::new();
        for (n, line) in self.text.lines().enumerate() {
            if self.in_test(n) {
                continue;
            }
            let mut rest = line;
            while let Some(k) = rest.find("crate::") {
                let before = &rest[..k];
                rest = &rest[k + "crate::".len()..];
                if before.ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == '$') {
                    continue;
                }
                let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if !name.is_empty() {
                    out.push((name, n + 1));
                }
                if let Some(inner) = rest.strip_prefix('{') {
                    // `use crate::{a::x, b::y}`: every item of the group.
                    let group: String = inner.chars().take_while(|&c| c != '}').collect();
                    for item in group.split(',') {
                        let m: String = item.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                        if !m.is_empty() {
                            out.push((m, n + 1));
                        }
                    }
                }
            }
        }
        out
    }
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

/// Files declared by `#[cfg(test)] mod x;` (x.rs or x/mod.rs next to the declaring module).
fn declared_test_files(file: &Path, names: &[String]) -> Vec<PathBuf> {
    let stem = file.file_stem().unwrap().to_string_lossy();
    let dir = file.parent().unwrap();
    let base = if stem == "mod" || stem == "lib" || stem == "main" { dir.to_path_buf() } else { dir.join(&*stem) };
    names.iter().flat_map(|n| [base.join(format!("{n}.rs")), base.join(n).join("mod.rs")]).collect()
}

fn is_test_path(p: &Path) -> bool {
    p.file_name().is_some_and(|n| n == "tests.rs") || p.components().any(|c| c.as_os_str() == "tests")
}

/// Every violation of the size and `#[path]` rules among `files`.
fn size_violations(files: &[PathBuf]) -> Vec<String> {
    let scanned: Vec<(PathBuf, Scanned)> =
        files.iter().map(|f| (f.clone(), scan(&std::fs::read_to_string(f).unwrap()))).collect();
    let test_files: BTreeSet<PathBuf> =
        scanned.iter().flat_map(|(f, s)| declared_test_files(f, &s.test_files)).collect();
    let mut out = Vec::new();
    for (f, s) in &scanned {
        if s.text.contains("#[path") {
            out.push(format!("{}: a #[path] mount", f.display()));
        }
        if is_test_path(f) || test_files.contains(f) {
            continue;
        }
        if s.code_lines() > MAX_FILE_LINES {
            out.push(format!("{}: {} lines of non-test code (at most {MAX_FILE_LINES})", f.display(), s.code_lines()));
        }
        for (name, line, len) in s.functions() {
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
        let compare_from = f.starts_with(&compare).then(|| module_of(&compare, f));
        for (to, line) in s.crate_refs() {
            if let (Some(a), Some(b)) = (from_tier, tier(TIERS, &to))
                && b > a
            {
                out.push(format!("{}:{line}: {from} (tier {a}) refers to crate::{to} (tier {b})", f.display()));
            }
        }
        // Inside compare: `crate::compare::<folder>` and `super::<folder>` references.
        if let Some(cf) = compare_from.and_then(|m| tier(COMPARE_TIERS, &m)) {
            for (n, line) in s.text.lines().enumerate() {
                if s.in_test(n) {
                    continue;
                }
                for pat in ["crate::compare::", "super::"] {
                    let mut rest = line;
                    while let Some(k) = rest.find(pat) {
                        rest = &rest[k + pat.len()..];
                        let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                        if let Some(b) = tier(COMPARE_TIERS, &name)
                            && b > cf
                        {
                            out.push(format!(
                                "{}:{}: compare/{} refers to compare::{name}",
                                f.display(),
                                n + 1,
                                COMPARE_TIERS[cf][0]
                            ));
                        }
                    }
                }
            }
        }
    }
    out
}

#[test]
fn no_module_refers_to_a_later_layer() {
    let v = layering_violations(&repo().join("rust/credence/src"));
    assert!(v.is_empty(), "imports that climb back:\n{}", v.join("\n"));
}

#[test]
fn every_top_level_module_has_a_tier() {
    let src = repo().join("rust/credence/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(&src, f)).collect();
    let unranked: Vec<_> = modules.iter().filter(|m| *m != "lib" && tier(TIERS, m).is_none()).collect();
    assert!(unranked.is_empty(), "modules missing from TIERS: {unranked:?}");
}

#[test]
fn files_and_functions_are_small_and_no_path_mounts() {
    let root = repo();
    let mut files = Vec::new();
    for dir in [
        "rust/credence/src",
        "rust/credence-study/src",
        "rust/credence-report/src",
        "rust/credence-cli/src",
        "rust/credence-testkit/src",
        "rpkg/src/rust/src",
        "benches",
        "examples",
        "tests",
    ] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(files.len() > 100, "found only {} files: wrong root?", files.len());
    let v = size_violations(&files);
    assert!(v.is_empty(), "{}", v.join("\n"));
}

/// The rules catch planted offenders (so a passing scan means something).
#[test]
fn the_scanner_sees_planted_offenders() {
    let dir = std::env::temp_dir().join(format!("credence-layering-{}", std::process::id()));
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("compare/model")).unwrap();
    std::fs::create_dir_all(src.join("compare/post")).unwrap();
    let long_body = "    let x = 1;\n".repeat(MAX_FN_LINES);
    let files = [
        // An upward import, one hidden in a group, one in a path, and one only in a comment/string.
        (
            "io/mod.rs",
            "use crate::{error::Error, compare::Fit};\n// crate::backend::x\nfn f() { let _ = \"crate::nn\"; }\n",
        ),
        ("metrics/mod.rs", "fn g() { crate::backend::run(); }\n"),
        ("predictive.rs", "use crate::io::read;\n"),
        ("compare/model/mod.rs", "use super::post::plan;\n"),
        ("compare/post/mod.rs", "use crate::compare::model::Design;\n"),
        ("plots/mod.rs", "#[cfg(test)]\nmod tests {\n    use crate::notebook::X;\n}\n"),
    ];
    for (p, text) in files {
        std::fs::create_dir_all(src.join(p).parent().unwrap()).unwrap();
        std::fs::write(src.join(p), text).unwrap();
    }
    let v = layering_violations(&src);
    let has = |needle: &str| v.iter().any(|l| l.contains(needle));
    assert!(has("io/mod.rs:1: io (tier 1) refers to crate::compare"), "{v:?}");
    assert!(has("metrics/mod.rs:1: metrics (tier 3) refers to crate::backend"), "{v:?}");
    assert!(has("compare/model refers to compare::post"), "{v:?}");
    assert_eq!(v.len(), 3, "only the three planted violations: {v:?}");

    let big = dir.join("big.rs");
    let test_only = dir.join("tested.rs");
    std::fs::write(
        &big,
        format!(
            "#[path = \"x.rs\"]\nmod x;\nfn long() {{\n{long_body}}}\nfn short(c: char) -> bool {{ c == '}}' || c == '\\'' }}\n{}#[cfg(test)]\nmod checks;\n",
            "const A: u8 = 0;\n".repeat(MAX_FILE_LINES)
        ),
    )
    .unwrap();
    std::fs::write(&test_only, format!("#[cfg(test)]\nmod tests {{\n    fn long() {{\n{long_body}    }}\n}}\n"))
        .unwrap();
    std::fs::create_dir_all(dir.join("big")).unwrap();
    std::fs::write(dir.join("big/checks.rs"), "const B: u8 = 0;\n".repeat(2 * MAX_FILE_LINES)).unwrap();
    let v = size_violations(&[big.clone(), test_only, dir.join("big/checks.rs")]);
    assert!(v.iter().any(|l| l.contains("#[path]")), "{v:?}");
    assert!(v.iter().any(|l| l.contains("fn long is 122 lines")), "{v:?}");
    assert!(v.iter().any(|l| l.contains("lines of non-test code")), "{v:?}");
    assert_eq!(v.len(), 3, "test code is not counted: {v:?}");
    std::fs::remove_dir_all(&dir).unwrap();
}
