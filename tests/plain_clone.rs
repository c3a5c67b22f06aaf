//! A plain clone is the whole product: no tracked file (code, tests, benches, notebooks,
//! scripts, docs) names the directory beside the repository that developers' machines happen
//! to have, so nothing can read data from it or send a user there. The real data sets are in
//! the repository's `data/` (checked against their checksums by the study crate's tests), and
//! the tests that read them fail, never skip, when a file is missing. Std and git only.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The directory beside the repository, as a relative path would name it (built from parts so
/// that this file does not name it).
fn beside() -> String {
    ["..", "shared"].join("/")
}

/// The tracked files of the repository at `root`.
fn tracked(root: &Path) -> Vec<PathBuf> {
    let out = Command::new("git").args(["ls-files", "-z"]).current_dir(root).output();
    let out = out.unwrap_or_else(|e| panic!("git ls-files in {}: {e}", root.display()));
    assert!(out.status.success(), "git ls-files: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| root.join(String::from_utf8_lossy(p).as_ref()))
        .collect()
}

/// `file:line` of every line of `files` that holds `needle`.
fn mentions(files: &[PathBuf], root: &Path, needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for f in files {
        let Ok(bytes) = std::fs::read(f) else { continue };
        let text = String::from_utf8_lossy(&bytes);
        for (i, line) in text.lines().enumerate().filter(|(_, l)| l.contains(needle)) {
            let name = f.strip_prefix(root).unwrap_or(f).display();
            found.push(format!("{name}:{}: {}", i + 1, line.trim()));
        }
    }
    found
}

#[test]
fn no_tracked_file_names_the_directory_beside_the_repository() {
    let root = repo();
    let files = tracked(&root);
    assert!(files.iter().any(|f| f.ends_with("data/uci/yacht.txt")), "the data are tracked");
    let found = mentions(&files, &root, &beside());
    assert!(found.is_empty(), "a plain clone has nothing beside it; these lines name it:\n{}", found.join("\n"));
}

#[test]
fn the_scan_finds_a_planted_mention() {
    let dir = tempfile::tempdir().unwrap();
    let planted = dir.path().join("t.rs");
    std::fs::write(&planted, format!("fn f() {{}}\nlet d = \"{}/data\";\n", beside())).unwrap();
    let clean = dir.path().join("u.md");
    std::fs::write(&clean, "the data/ folder\n").unwrap();
    let found = mentions(&[planted, clean], dir.path(), &beside());
    assert_eq!(found, [format!("t.rs:2: let d = \"{}/data\";", beside())]);
}
