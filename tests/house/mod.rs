//! The lexical scanner behind the checks of the house (tests/layering.rs): source files found
//! by extension, comments, strings and char literals blanked, braces matched, test code marked,
//! functions measured. Enough for rustfmt- and clang-format-shaped code.

pub mod crates;
pub mod graph;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The files under `dir` (not under `target/`) whose extension is one of `exts`, sorted.
pub fn source_files(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n != "target") {
                source_files(&p, exts, out);
            }
        } else if p.extension().is_some_and(|e| exts.iter().any(|x| e == *x)) {
            out.push(p);
        }
    }
}

/// The Rust files under `dir`.
pub fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    source_files(dir, &["rs"], out);
}

fn wipe(out: &mut [u8], from: usize, to: usize) {
    for c in &mut out[from..to] {
        if *c != b'\n' {
            *c = b' ';
        }
    }
}

/// The end of the block comment opened at `i` (nested, as Rust's).
fn block_comment_end(b: &[u8], i: usize) -> usize {
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
    j
}

/// The end of the char literal opened at `i` ('x', '\n', '\u{..}'), or `None` for a lifetime.
fn char_end(b: &[u8], i: usize) -> Option<usize> {
    if b.get(i + 1) == Some(&b'\\') {
        // Skip the escaped character (it may be a quote), then find the closing one.
        b.get(i + 3..).and_then(|r| r.iter().position(|&c| c == b'\'')).map(|k| i + 3 + k)
    } else if b.get(i + 2) == Some(&b'\'') {
        Some(i + 2)
    } else {
        // A multi-byte char: find the closing quote within 5 bytes.
        (i + 2..(i + 6).min(b.len())).find(|&k| b[k] == b'\'' && !b[i + 1].is_ascii())
    }
}

/// The source with comments, string and char literals replaced by spaces (newlines kept).
pub fn blank(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    while i < b.len() {
        let ident_before = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
        if b[i..].starts_with(b"//") {
            let end = b[i..].iter().position(|&c| c == b'\n').map_or(b.len(), |k| i + k);
            wipe(&mut out, i, end);
            i = end;
        } else if b[i..].starts_with(b"/*") {
            let end = block_comment_end(b, i);
            wipe(&mut out, i, end);
            i = end;
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
            match char_end(b, i) {
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

/// C or C++ source blanked as [`blank`] does, and preprocessor lines (with their `\`
/// continuations) too, so that a macro's braces do not count.
pub fn blank_cxx(src: &str) -> String {
    let text = blank(src);
    let mut out = String::with_capacity(text.len());
    let mut continued = false;
    for line in text.split_inclusive('\n') {
        if continued || line.trim_start().starts_with('#') {
            continued = line.trim_end().ends_with('\\');
            out.extend(line.chars().map(|c| if c == '\n' { c } else { ' ' }));
        } else {
            out.push_str(line);
        }
    }
    out
}

/// The byte index of the bracket closing the one (`{`, `(` or `[`) opened at `open`.
pub fn matching(s: &[u8], open: usize) -> usize {
    let close = match s[open] {
        b'(' => b')',
        b'[' => b']',
        _ => b'}',
    };
    let mut depth = 0i64;
    for (k, &c) in s.iter().enumerate().skip(open) {
        if c == s[open] {
            depth += 1;
        } else if c == close {
            depth -= 1;
            if depth == 0 {
                return k;
            }
        }
    }
    s.len().saturating_sub(1)
}

pub fn line_of(s: &str, at: usize) -> usize {
    s.as_bytes()[..at].iter().filter(|&&c| c == b'\n').count()
}

fn ident_at(s: &str) -> String {
    s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect()
}

/// One scanned file: blanked text, its test-code line ranges and the test modules it names.
pub struct Scanned {
    pub text: String,
    pub test_lines: Vec<(usize, usize)>,
    pub test_files: Vec<String>,
}

/// A Rust file scanned: `#[cfg(test)] mod x { .. }` blocks marked as test code, `#[cfg(test)]
/// mod x;` declarations collected.
pub fn scan(src: &str) -> Scanned {
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
        let name = ident_at(after_mod.trim_start());
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

/// A C or C++ file scanned (it has no test code of its own).
pub fn scan_cxx(src: &str) -> Scanned {
    Scanned { text: blank_cxx(src), test_lines: Vec::new(), test_files: Vec::new() }
}

impl Scanned {
    pub fn in_test(&self, line: usize) -> bool {
        self.test_lines.iter().any(|&(a, z)| (a..=z).contains(&line))
    }

    pub fn code_lines(&self) -> usize {
        let total = self.text.lines().count();
        total - self.test_lines.iter().map(|(a, z)| z - a + 1).sum::<usize>()
    }

    /// The lines of non-test code, numbered from 0.
    pub fn code(&self) -> impl Iterator<Item = (usize, &str)> {
        self.text.lines().enumerate().filter(|(n, _)| !self.in_test(*n))
    }

    /// (name, first line, length in lines) of every Rust function with a body outside test code.
    pub fn functions(&self) -> Vec<(String, usize, usize)> {
        let b = self.text.as_bytes();
        let mut out = Vec::new();
        let mut from = 0;
        while let Some(k) = self.text[from..].find("fn ") {
            let at = from + k;
            from = at + 3;
            if at > 0 && (b[at - 1].is_ascii_alphanumeric() || b[at - 1] == b'_') {
                continue;
            }
            let name = ident_at(&self.text[at + 3..]);
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

    /// (name, first line, length in lines) of every C or C++ function body: a `{` that follows
    /// a parameter list `)` (and qualifiers such as `const`) outside any other function, from
    /// the declaration's first line (after the previous `;`, `{` or `}`) to the closing brace.
    pub fn cxx_functions(&self) -> Vec<(String, usize, usize)> {
        const QUALIFIERS: &[&str] = &["const", "noexcept", "override", "final", "volatile", "mutable"];
        let b = self.text.as_bytes();
        let (mut out, mut k) = (Vec::new(), 0);
        while k < b.len() {
            if b[k] != b'{' {
                k += 1;
                continue;
            }
            let mut head = self.text[..k].trim_end();
            while let Some(q) = QUALIFIERS.iter().find(|q| head.ends_with(*q)) {
                head = head[..head.len() - q.len()].trim_end();
            }
            let close = matching(b, k);
            if !head.ends_with(')') {
                k += 1;
                continue;
            }
            let start = head.rfind([';', '{', '}']).map_or(0, |p| p + 1);
            let decl = &self.text[start..head.len()];
            let lead = decl.len() - decl.trim_start().len();
            let name = ident_before(&self.text[..opening_paren(head.as_bytes())]);
            let first = line_of(&self.text, start + lead);
            out.push((name, first + 1, line_of(&self.text, close) - first + 1));
            k = close + 1;
        }
        out
    }
}

/// The byte index of the `(` that opens the parenthesised group `head` ends with.
fn opening_paren(head: &[u8]) -> usize {
    let mut depth = 0i64;
    for k in (0..head.len()).rev() {
        match head[k] {
            b')' => depth += 1,
            b'(' => {
                depth -= 1;
                if depth == 0 {
                    return k;
                }
            }
            _ => {}
        }
    }
    0
}

/// The identifier `s` ends with (spaces before the end skipped).
fn ident_before(s: &str) -> String {
    let s = s.trim_end();
    let start = s.rfind(|c: char| !(c.is_alphanumeric() || c == '_')).map_or(0, |p| p + 1);
    s[start..].to_owned()
}

/// Files declared by `#[cfg(test)] mod x;` (x.rs or x/mod.rs next to the declaring module).
pub fn declared_test_files(file: &Path, names: &[String]) -> Vec<PathBuf> {
    let stem = file.file_stem().unwrap().to_string_lossy();
    let dir = file.parent().unwrap();
    let base = if stem == "mod" || stem == "lib" || stem == "main" { dir.to_path_buf() } else { dir.join(&*stem) };
    names.iter().flat_map(|n| [base.join(format!("{n}.rs")), base.join(n).join("mod.rs")]).collect()
}

pub fn is_test_path(p: &Path) -> bool {
    p.file_name().is_some_and(|n| n == "tests.rs") || p.components().any(|c| c.as_os_str() == "tests")
}

/// The files of `files` that hold code other than tests, scanned: not `tests.rs`, not under
/// `tests/`, not declared by a `#[cfg(test)] mod x;` of another file. C and C++ files (by
/// extension) are scanned as such.
pub fn non_test(files: &[PathBuf]) -> Vec<(PathBuf, Scanned)> {
    let scanned: Vec<(PathBuf, Scanned)> = files
        .iter()
        .map(|f| {
            let src = std::fs::read_to_string(f).unwrap();
            (f.clone(), if f.extension().is_some_and(|e| e == "rs") { scan(&src) } else { scan_cxx(&src) })
        })
        .collect();
    let test_files: BTreeSet<PathBuf> =
        scanned.iter().flat_map(|(f, s)| declared_test_files(f, &s.test_files)).collect();
    scanned.into_iter().filter(|(f, _)| !is_test_path(f) && !test_files.contains(f)).collect()
}
