//! Which file of a crate refers to which, and the circles of that graph.
//!
//! A reference is a path that starts with `crate::`, `super::` (any number of them), `self::`
//! or the name of a child module, including every branch of a `use` group; it goes to the
//! deepest file module the path names (`a/b.rs`, `a/b/mod.rs` or `a.rs`). A path into another
//! crate is no edge (the crates are layered), nor is a reference to the file itself or to one
//! of its ancestor modules: a child using its parent's items, and the parent declaring and
//! re-exporting its children, is a facade, not a circle. Test code is left out, as the size
//! rule leaves it out.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::{Scanned, line_of, non_test, rust_files};

/// A reference from one file to another: (from, line, to).
pub type Edge = (PathBuf, usize, PathBuf);

/// The module path of a file of `src`: `a/b.rs` and `a/b/mod.rs` are `[a, b]`, `lib.rs` and
/// `main.rs` the crate root `[]`.
pub fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).unwrap();
    let mut parts: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if !(stem == "mod" || (parts.is_empty() && (stem == "lib" || stem == "main"))) {
        parts.push(stem.to_owned());
    }
    parts
}

fn ident(s: &[u8], at: usize) -> usize {
    s[at..].iter().take_while(|c| c.is_ascii_alphanumeric() || **c == b'_').count()
}

fn skip_space(s: &[u8], mut at: usize) -> usize {
    while at < s.len() && s[at].is_ascii_whitespace() {
        at += 1;
    }
    at
}

/// The paths of the use tree (or plain path) that starts at `at`, each after `prefix`.
fn use_tree(s: &[u8], mut at: usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut path = prefix;
    loop {
        at = skip_space(s, at);
        if s.get(at) == Some(&b'{') {
            // A group: each comma-separated branch is a tree of its own.
            let end = super::matching(s, at);
            let mut depth = 0;
            let mut start = at + 1;
            for k in at + 1..=end {
                match s[k] {
                    b'{' => depth += 1,
                    b'}' if depth > 0 => depth -= 1,
                    b',' | b'}' if depth == 0 => {
                        use_tree(s, start, path.clone(), out);
                        start = k + 1;
                    }
                    _ => {}
                }
            }
            return;
        }
        let n = ident(s, at);
        if n == 0 {
            break;
        }
        let name = String::from_utf8_lossy(&s[at..at + n]).into_owned();
        at += n;
        if name != "self" {
            path.push(name);
        }
        let next = skip_space(s, at);
        if !s[next..].starts_with(b"::") {
            break;
        }
        at = next + 2;
    }
    out.push(path);
}

/// Every path the non-test code of `file` (module `module`, whose child modules are
/// `children`) refers to, as (line, absolute module path).
fn references(file: &Scanned, module: &[String], children: &BTreeSet<String>) -> Vec<(usize, Vec<String>)> {
    let s = file.text.as_bytes();
    let mut out = Vec::new();
    let mut at = 0;
    while at < s.len() {
        let n = ident(s, at);
        if n == 0 {
            at += 1;
            continue;
        }
        let start = at;
        at += n;
        let before = if start > 0 { s[start - 1] } else { b' ' };
        if before == b'$' || before == b':' || !s[at..].starts_with(b"::") || file.in_test(line_of(&file.text, start)) {
            continue;
        }
        let word = &file.text[start..at];
        let mut base: Vec<String> = match word {
            "crate" => Vec::new(),
            "self" => module.to_vec(),
            "super" => module[..module.len().saturating_sub(1)].to_vec(),
            w if children.contains(w) => module.to_vec(),
            _ => continue,
        };
        let mut tree = if matches!(word, "crate" | "self" | "super") { at + 2 } else { start };
        // Further `super::` segments climb on.
        while word == "super" && s[tree..].starts_with(b"super::") {
            base.pop();
            tree += "super::".len();
        }
        let mut paths = Vec::new();
        use_tree(s, tree, base, &mut paths);
        let line = line_of(&file.text, start) + 1;
        out.extend(paths.into_iter().map(|p| (line, p)));
    }
    out
}

/// Every reference between the non-test files of the crate whose sources are `src`, leaving
/// out those to the file itself and to its ancestor modules.
pub fn edges(src: &Path) -> Vec<Edge> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let scanned = non_test(&files);
    let modules: BTreeMap<Vec<String>, PathBuf> =
        scanned.iter().map(|(f, _)| (module_path(src, f), f.clone())).collect();
    let mut out = Vec::new();
    for (f, s) in &scanned {
        let module = module_path(src, f);
        let children: BTreeSet<String> = modules
            .keys()
            .filter(|m| m.len() == module.len() + 1 && m.starts_with(&module))
            .map(|m| m[module.len()].clone())
            .collect();
        for (line, path) in references(s, &module, &children) {
            let to = (0..=path.len()).rev().find_map(|k| modules.get(&path[..k]).map(|g| (k, g)));
            if let Some((k, g)) = to
                && g != f
                && !module.starts_with(&path[..k])
            {
                out.push((f.clone(), line, g.clone()));
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The strongly connected components of two or more files (Tarjan), each sorted.
pub fn circles(edges: &[Edge]) -> Vec<Vec<PathBuf>> {
    let mut next: BTreeMap<&Path, BTreeSet<&Path>> = BTreeMap::new();
    for (a, _, b) in edges {
        next.entry(a).or_default().insert(b);
        next.entry(b).or_default();
    }
    struct Tarjan<'a> {
        next: &'a BTreeMap<&'a Path, BTreeSet<&'a Path>>,
        index: BTreeMap<&'a Path, (usize, usize)>,
        stack: Vec<&'a Path>,
        on_stack: BTreeSet<&'a Path>,
        out: Vec<Vec<PathBuf>>,
    }
    impl<'a> Tarjan<'a> {
        fn visit(&mut self, v: &'a Path) {
            let i = self.index.len();
            self.index.insert(v, (i, i));
            self.stack.push(v);
            self.on_stack.insert(v);
            for &w in &self.next[v] {
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.index[v].1.min(self.index[w].1);
                    self.index.get_mut(v).unwrap().1 = low;
                } else if self.on_stack.contains(w) {
                    let low = self.index[v].1.min(self.index[w].0);
                    self.index.get_mut(v).unwrap().1 = low;
                }
            }
            if self.index[v].0 == self.index[v].1 {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    component.push(w.to_path_buf());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.out.push(component);
                }
            }
        }
    }
    let mut t =
        Tarjan { next: &next, index: BTreeMap::new(), stack: Vec::new(), on_stack: BTreeSet::new(), out: Vec::new() };
    for &v in next.keys() {
        if !t.index.contains_key(v) {
            t.visit(v);
        }
    }
    t.out.sort();
    t.out
}

/// One line per circle among the files of `src`: its files (relative to `root`), then the
/// references that close it.
pub fn circle_report(src: &Path, root: &Path) -> Vec<String> {
    let edges = edges(src);
    let rel = |p: &Path| p.strip_prefix(root).unwrap_or(p).display().to_string();
    circles(&edges)
        .iter()
        .map(|c| {
            let files: Vec<String> = c.iter().map(|f| rel(f)).collect();
            let inner: Vec<String> = edges
                .iter()
                .filter(|(a, _, b)| c.contains(a) && c.contains(b))
                .map(|(a, line, b)| format!("{}:{line} -> {}", rel(a), rel(b)))
                .collect();
            format!("a circle of {} files: {}\n    {}", files.len(), files.join(", "), inner.join("\n    "))
        })
        .collect()
}
