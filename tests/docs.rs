//! The documentation's own checks: every relative link and image of README.md, benches/README.md
//! and docs/*.md resolves (a file or directory, and for `page.md#anchor` or `#anchor` a heading
//! of that page by GitHub's slug rule), README.md stays at most [`README_MAX_BYTES`], and every
//! docs/*.md page is linked from README.md or docs/README.md. Links inside fenced code blocks
//! and inline code spans are not links; http(s) and mailto links are not checked. Std only.

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};

/// The README is read in five minutes; the reference lives in docs/.
const README_MAX_BYTES: usize = 12_000;

fn repo() -> PathBuf {
    normalize(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../.."))
}

/// `a/b/../c` -> `a/c`, without touching the file system (so a missing target stays missing).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// A link found in a page: its 1-based line and its target as written.
#[derive(Debug, Clone, PartialEq)]
struct Link {
    line: usize,
    target: String,
}

/// The opening fence of a fenced code block (``` or ~~~, at most 3 spaces in): its character
/// and length.
fn fence(line: &str) -> Option<(char, usize)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let c = rest.chars().next()?;
    if c != '`' && c != '~' {
        return None;
    }
    let n = rest.chars().take_while(|&x| x == c).count();
    (n >= 3).then_some((c, n))
}

/// The page with fenced code blocks blanked (lines kept, so line numbers hold).
fn without_fences(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut open: Option<(char, usize)> = None;
    for line in text.split('\n') {
        match (open, fence(line)) {
            (None, Some(f)) => open = Some(f),
            (Some((c, n)), Some((c2, n2))) if c == c2 && n2 >= n && line.trim().chars().all(|x| x == c) => open = None,
            (None, None) => out.push_str(line),
            _ => {}
        }
        out.push('\n');
    }
    out.pop();
    out
}

/// Inline code spans blanked: a run of n backticks up to the next run of exactly n within the
/// same paragraph; an unmatched run is literal. Newlines are kept.
fn without_code_spans(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = b.clone();
    let mut i = 0;
    while i < b.len() {
        if b[i] != '`' {
            i += 1;
            continue;
        }
        let n = b[i..].iter().take_while(|&&c| c == '`').count();
        let mut j = i + n;
        let mut close = None;
        while j < b.len() {
            if b[j] == '\n' {
                let blank = b[j + 1..].iter().take_while(|&&c| c != '\n').all(|c| c.is_whitespace());
                if blank {
                    break; // a blank line ends the paragraph, and a code span with it
                }
            }
            if b[j] == '`' {
                let m = b[j..].iter().take_while(|&&c| c == '`').count();
                if m == n {
                    close = Some(j);
                    break;
                }
                j += m;
            } else {
                j += 1;
            }
        }
        match close {
            Some(j) => {
                for c in &mut out[i..j + n] {
                    if *c != '\n' {
                        *c = ' ';
                    }
                }
                i = j + n;
            }
            None => i += n,
        }
    }
    out.into_iter().collect()
}

/// Every `[text](target)` and `![alt](target)` outside code, with an optional title after the
/// target dropped and `<target>` unwrapped.
fn links(text: &str) -> Vec<Link> {
    let clean = without_code_spans(&without_fences(text));
    let mut out = Vec::new();
    for (k, line) in clean.split('\n').enumerate() {
        let b = line.as_bytes();
        let mut from = 0;
        while let Some(at) = line[from..].find("](") {
            let close = from + at;
            let open = close + 2;
            from = open;
            if escaped_text(b, close) {
                continue;
            }
            let mut depth = 1;
            let mut end = None;
            for (p, &c) in b.iter().enumerate().skip(open) {
                match c {
                    b'(' => depth += 1,
                    b')' => {
                        depth -= 1;
                        if depth == 0 {
                            end = Some(p);
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let Some(end) = end else { continue };
            let raw = line[open..end].trim();
            let target = match raw.strip_prefix('<') {
                Some(r) => r.split('>').next().unwrap_or(""),
                None => raw.split_whitespace().next().unwrap_or(""),
            };
            out.push(Link { line: k + 1, target: target.to_string() });
            from = end;
        }
    }
    out
}

/// Whether the `[` that opens the link text closed at `close` is escaped (`\\[`): not a link.
/// Text opened on an earlier line counts as unescaped.
fn escaped_text(b: &[u8], close: usize) -> bool {
    let escaped = |p: usize| p > 0 && b[p - 1] == b'\\';
    let mut depth = 0;
    for p in (0..close).rev() {
        match b[p] {
            b']' if !escaped(p) => depth += 1,
            b'[' if depth == 0 => return escaped(p),
            b'[' if !escaped(p) => depth -= 1,
            _ => {}
        }
    }
    false
}

/// GitHub's anchor of a heading: lower case, punctuation other than '-' and '_' dropped,
/// spaces to '-'. Inline links in the heading count by their text.
fn slug(heading: &str) -> String {
    let mut text = String::new();
    let mut rest = heading;
    while let Some(at) = rest.find("](") {
        let close = rest[at..].find(')').map_or(rest.len(), |c| at + c + 1);
        text.push_str(&rest[..at]);
        rest = &rest[close..];
    }
    text.push_str(rest);
    text.trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a page's ATX headings, duplicates numbered as GitHub does (`x`, `x-1`, ...).
fn anchors(text: &str) -> HashSet<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = HashSet::new();
    for line in without_fences(text).lines() {
        let t = line.trim_start_matches(' ');
        if line.len() - t.len() > 3 {
            continue;
        }
        let level = t.chars().take_while(|&c| c == '#').count();
        if !(1..=6).contains(&level) || !(t.len() == level || t[level..].starts_with([' ', '\t'])) {
            continue;
        }
        let title = t[level..].trim().trim_end_matches('#').trim();
        let base = slug(title);
        let n = seen.entry(base.clone()).or_insert(0);
        out.insert(if *n == 0 { base.clone() } else { format!("{base}-{n}") });
        *n += 1;
    }
    out
}

/// Where a relative target points (its anchor split off), or `None` for an outside link.
fn resolve(page: &Path, root: &Path, target: &str) -> Option<(PathBuf, Option<String>)> {
    let lower = target.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") || lower.starts_with("mailto:") {
        return None;
    }
    let (path, anchor) = match target.split_once('#') {
        Some((p, a)) => (p, Some(a.to_string())),
        None => (target, None),
    };
    let file = if path.is_empty() {
        page.to_path_buf()
    } else if let Some(from_root) = path.strip_prefix('/') {
        normalize(&root.join(from_root))
    } else {
        normalize(&page.parent().unwrap_or(root).join(path))
    };
    Some((file, anchor))
}

/// The broken links of one page, as `page:line: message`.
fn check_page(page: &Path, text: &str, root: &Path) -> Vec<String> {
    let mut errors = Vec::new();
    let shown = page.strip_prefix(root).unwrap_or(page).display().to_string();
    for link in links(text) {
        let at = format!("{shown}:{}: ({})", link.line, link.target);
        if link.target.is_empty() {
            errors.push(format!("{at} empty link target"));
            continue;
        }
        let Some((file, anchor)) = resolve(page, root, &link.target) else { continue };
        if !file.starts_with(root) {
            errors.push(format!("{at} points outside the repository"));
            continue;
        }
        if file != page && !file.exists() {
            errors.push(format!("{at} {} does not exist", file.strip_prefix(root).unwrap_or(&file).display()));
            continue;
        }
        let Some(anchor) = anchor else { continue };
        if file.extension().is_none_or(|e| e != "md") {
            continue; // anchors of other files (source lines) are not headings
        }
        let body = if file == page { text.to_string() } else { std::fs::read_to_string(&file).unwrap_or_default() };
        if !anchors(&body).contains(&anchor) {
            errors.push(format!("{at} no heading with anchor #{anchor} in {}", file.display()));
        }
    }
    errors
}

/// An error when a README is over the limit.
fn check_readme_size(bytes: usize) -> Result<(), String> {
    if bytes > README_MAX_BYTES {
        Err(format!("README.md is {bytes} bytes, more than {README_MAX_BYTES}: move reference material to docs/"))
    } else {
        Ok(())
    }
}

/// The Markdown pages whose links are checked.
fn pages(root: &Path) -> Vec<PathBuf> {
    let mut out = vec![root.join("README.md"), root.join("benches/README.md")];
    out.extend(docs_pages(root));
    out
}

/// docs/*.md, sorted.
fn docs_pages(root: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/ is readable")
        .map(|e| e.expect("a docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    out.sort();
    out
}

/// The files the links of `page` point to.
fn targets(page: &Path, root: &Path) -> HashSet<PathBuf> {
    let text = std::fs::read_to_string(page).expect("page is readable");
    links(&text).iter().filter_map(|l| resolve(page, root, &l.target)).map(|(file, _)| file).collect()
}

#[test]
fn links_and_anchors_resolve() {
    let root = repo();
    let mut errors = Vec::new();
    let mut count = 0;
    for page in pages(&root) {
        let text = std::fs::read_to_string(&page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
        count += links(&text).len();
        errors.extend(check_page(&page, &text, &root));
    }
    assert!(count > 0, "no links found at all: is the repository root {}?", root.display());
    assert!(errors.is_empty(), "{} broken link(s):\n{}", errors.len(), errors.join("\n"));
}

#[test]
fn readme_is_short() {
    let bytes = std::fs::metadata(repo().join("README.md")).expect("README.md").len();
    check_readme_size(usize::try_from(bytes).unwrap_or(usize::MAX)).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn every_docs_page_is_linked_from_the_readme_or_the_index() {
    let root = repo();
    let mut linked = targets(&root.join("README.md"), &root);
    linked.extend(targets(&root.join("docs/README.md"), &root));
    let orphans: Vec<String> = docs_pages(&root)
        .into_iter()
        .filter(|p| !linked.contains(p))
        .map(|p| p.strip_prefix(&root).unwrap_or(&p).display().to_string())
        .collect();
    assert!(orphans.is_empty(), "docs pages linked from neither README.md nor docs/README.md: {orphans:?}");
}

#[test]
fn slugs_follow_github() {
    assert_eq!(
        slug("Across data sets: `credence fit --dataset-column`"),
        "across-data-sets-credence-fit---dataset-column"
    );
    assert_eq!(slug("GPU kernels (`credence::backend`, issue #7)"), "gpu-kernels-credencebackend-issue-7");
    assert_eq!(slug("baycomp's hierarchical test"), "baycomps-hierarchical-test");
    assert_eq!(slug("Notebooks headless (`notebooks/run.py`)"), "notebooks-headless-notebooksrunpy");
    assert_eq!(slug("See [the index](docs/README.md) now"), "see-the-index-now");
    let a = anchors("# T\n\n## Numbers\n\n```\n# not a heading\n```\n\n## Numbers\n####### seven\n#tag\n");
    let want: HashSet<String> = ["t", "numbers", "numbers-1"].map(String::from).into();
    assert_eq!(a, want);
}

#[test]
fn links_outside_code_only() {
    let text = "a [x](one.md) and ![img](pic.png \"title\")\n```bash\n[y](two.md)\n```\n\
                `[z](three.md)` and ``a ` [w](four.md)`` then [v](<five six.md>)\n\\[u](no)\n[t](x(1).md)";
    let got: Vec<(usize, String)> = links(text).into_iter().map(|l| (l.line, l.target)).collect();
    let want: Vec<(usize, String)> =
        [(1, "one.md"), (1, "pic.png"), (5, "five six.md"), (7, "x(1).md")].map(|(n, t)| (n, t.to_string())).into();
    assert_eq!(got, want);
}

#[test]
fn the_checker_finds_planted_breakage() {
    let root = normalize(&std::env::temp_dir().join(format!("credence-docs-check-{}", std::process::id())));
    let docs = root.join("docs");
    std::fs::create_dir_all(&docs).expect("temp dir");
    std::fs::write(docs.join("a.md"), "# Page A\n\n## Known section\n").expect("write");
    let page = root.join("README.md");
    let text = "# Top\n\n[ok](docs/a.md) [ok anchor](docs/a.md#known-section) [self](#top)\n\
                [gone](docs/missing.md) [bad anchor](docs/a.md#unknown) [bad self](#nowhere)\n\
                [out](../elsewhere.md) [web](https://example.org/x.md) [mail](mailto:a@b.c)\n";
    let errors = check_page(&page, text, &root);
    std::fs::remove_dir_all(&root).expect("clean up");
    assert_eq!(errors.len(), 4, "{errors:#?}");
    assert!(errors[0].contains("README.md:4: (docs/missing.md)") && errors[0].contains("does not exist"));
    assert!(errors[1].contains("#unknown"));
    assert!(errors[2].contains("#nowhere"));
    assert!(errors[3].contains("outside the repository"));
}

#[test]
fn an_oversized_readme_fails() {
    let planted = "x".repeat(README_MAX_BYTES + 1);
    assert!(check_readme_size(planted.len()).is_err());
    assert!(check_readme_size(README_MAX_BYTES).is_ok());
}
