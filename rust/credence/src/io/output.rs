//! The output guard every command shares: no output may resolve to one of the command's inputs
//! or to another of its outputs, and an output is written whole or not at all.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Refuses, before any work, an output that would overwrite an input or another output.
/// `inputs` are the files the command reads (an `.npz` member's `file.npz:name` counts as
/// `file.npz`); `outputs` pair each output's flag with its path (`-`, standard output, is
/// skipped). Two paths are the same file when they resolve to the same canonical path (symbolic
/// links, `..`, a relative and an absolute spelling) or, on Unix, share device and inode (hard
/// links). An output that is a directory is refused too.
pub fn check_outputs(inputs: &[&Path], outputs: &[(&str, &Path)]) -> Result<()> {
    let outputs: Vec<(&str, &Path)> = outputs.iter().copied().filter(|(_, p)| p.as_os_str() != "-").collect();
    for (i, &(flag, out)) in outputs.iter().enumerate() {
        // Found now, not after the work whose result it was to hold.
        if out.is_dir() {
            return Err(Error::Argument {
                name: flag.to_string(),
                value: out.display().to_string(),
                expected: "a file path (this is a directory)".into(),
            });
        }
        if let Some(input) = inputs.iter().map(|p| input_file(p)).find(|p| same_file(p, out)) {
            return Err(clash(flag, out, &format!("the input {}", input.display())));
        }
        if let Some((other, _)) = outputs[..i].iter().find(|(_, p)| same_file(p, out)) {
            return Err(clash(flag, out, &format!("the path of {other}")));
        }
    }
    Ok(())
}

/// Writes `bytes` to `path` through a temporary file beside it and a rename, so that an
/// interrupted write leaves the old file (or none), never half of the new one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let io = |source| Error::Io { path: path.to_path_buf(), source };
    // A device or pipe (`/dev/null`, `/dev/stdout`, a FIFO) is written as it is: a rename would
    // put a regular file in its place.
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file()) {
        return std::fs::write(path, bytes).map_err(io);
    }
    let name = path.file_name().ok_or_else(|| io(std::io::Error::other("not a file name")))?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    tmp_name.push(format!(".{}.tmp", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    std::fs::write(&tmp, bytes).map_err(io)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io(e)
    })
}

fn clash(flag: &str, out: &Path, what: &str) -> Error {
    Error::Argument {
        name: flag.to_string(),
        value: out.display().to_string(),
        expected: format!("a path other than {what} (writing it would destroy that file)"),
    }
}

/// The file an input argument names: `file.npz:member` is `file.npz` when that file exists.
fn input_file(p: &Path) -> PathBuf {
    if !p.exists()
        && let Some((file, _)) = p.to_str().and_then(|s| s.rsplit_once(':'))
        && Path::new(file).is_file()
    {
        return PathBuf::from(file);
    }
    p.to_path_buf()
}

fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(x), Ok(y)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return x.dev() == y.dev() && x.ino() == y.ino();
        }
    }
    match (resolved(a), resolved(b)) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// The canonical path of `p`, or of its directory joined with its name when `p` does not exist
/// yet (an output about to be created).
fn resolved(p: &Path) -> Option<PathBuf> {
    if let Ok(c) = std::fs::canonicalize(p) {
        return Some(c);
    }
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    Some(std::fs::canonicalize(dir).ok()?.join(p.file_name()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    #[test]
    fn an_output_on_an_input_is_refused_in_every_spelling() {
        let d = dir();
        let input = d.path().join("t.csv");
        std::fs::write(&input, "a\n").unwrap();
        std::fs::create_dir(d.path().join("sub")).unwrap();
        let dotted = d.path().join("sub").join("..").join("t.csv");
        let e = check_outputs(&[&input], &[("--json", &dotted)]).unwrap_err().to_string();
        assert!(e.contains("--json") && e.contains("the input") && e.contains("t.csv"), "{e}");
        #[cfg(unix)]
        {
            let link = d.path().join("link.csv");
            std::os::unix::fs::symlink(&input, &link).unwrap();
            assert!(check_outputs(&[&input], &[("--html", &link)]).is_err());
            let hard = d.path().join("hard.csv");
            std::fs::hard_link(&input, &hard).unwrap();
            assert!(check_outputs(&[&input], &[("--html", &hard)]).is_err());
        }
        // An .npz member names its file.
        let npz = d.path().join("a.npz");
        std::fs::write(&npz, "x").unwrap();
        let member = PathBuf::from(format!("{}:probs", npz.display()));
        assert!(check_outputs(&[&member], &[("--budget-out", &npz)]).is_err());
    }

    #[test]
    fn two_outputs_on_one_path_are_refused_and_distinct_ones_pass() {
        let d = dir();
        let input = d.path().join("t.csv");
        std::fs::write(&input, "a\n").unwrap();
        let a = d.path().join("a.json");
        let e = check_outputs(&[&input], &[("--json", &a), ("--save-draws", &a)]).unwrap_err().to_string();
        assert!(e.contains("--save-draws") && e.contains("the path of --json"), "{e}");
        let b = d.path().join("b.csv");
        check_outputs(&[&input], &[("--json", &a), ("--save-draws", &b), ("--out", Path::new("-"))]).unwrap();
        check_outputs(&[&input], &[("--json", Path::new("-")), ("--html", Path::new("-"))]).unwrap();
    }

    #[test]
    fn an_atomic_write_replaces_the_file_and_leaves_no_temporary() {
        let d = dir();
        let p = d.path().join("out.json");
        std::fs::write(&p, "old").unwrap();
        write_atomic(&p, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "new");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
        #[cfg(unix)]
        {
            write_atomic(Path::new("/dev/null"), b"x").unwrap();
            assert!(!std::fs::metadata("/dev/null").unwrap().is_file(), "/dev/null replaced by a file");
        }
        let e = write_atomic(&d.path().join("missing").join("x.json"), b"y").unwrap_err().to_string();
        assert!(e.contains("missing"), "{e}");
    }
}
