//! The real data sets compiled into the binary, so that `credence study --dataset NAME` runs on
//! a plain clone and on a binary installed far from it (`cargo install --path
//! rust/credence-cli`) with no data directory. The files are the repository's `data/` folder
//! (its README names each source, licence and checksum), about 1.7 MB in all; a data
//! directory given by the user (`--data-dir`, `$CREDENCE_DATA`) replaces them.
//!
//! Embedding was chosen over looking for the files at run time: an installed binary has no
//! reliable way back to the checkout it was built from, and at this size the copy costs less
//! than any search path would explain.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use credence::error::Result;
use credence::io::{format_error, io_error};

/// One file of the repository's `data/` folder, compiled in.
#[derive(Debug, Clone, Copy)]
pub struct DataFile {
    /// Its path in the repository (`data/uci/energy.txt`); errors about it name this path.
    pub path: &'static str,
    /// Its bytes, as in the repository.
    pub bytes: &'static [u8],
}

impl DataFile {
    /// The file's name (`energy.txt`), as a data directory holds it.
    pub fn name(&self) -> &'static str {
        self.path.rsplit('/').next().unwrap_or(self.path)
    }
}

/// A file of `data/` by its path below that folder.
macro_rules! data_file {
    ($rel:literal) => {
        DataFile {
            path: concat!("data/", $rel),
            bytes: include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/", $rel)),
        }
    };
}

/// The training data of every real data set of the study (the regression and the
/// classification ones).
pub const EMBEDDED: [DataFile; 6] = [
    data_file!("uci/energy.txt"),
    data_file!("uci/concrete.txt"),
    data_file!("uci/kin8nm.txt"),
    data_file!("uci/yacht.txt"),
    data_file!("classification/digits.csv"),
    data_file!("classification/breast_cancer.csv"),
];

/// The built-in file named `name` (`energy.txt`), if there is one.
pub fn built_in(name: &str) -> Option<&'static DataFile> {
    EMBEDDED.iter().find(|f| f.name() == name)
}

/// Where the file `name` of a real data set is read from: `data_dir/name` when a directory is
/// given, else the built-in copy, named by its repository path and "(built in)".
pub fn data_origin(name: &str, data_dir: Option<&Path>) -> PathBuf {
    match (data_dir, built_in(name)) {
        (Some(dir), _) => dir.join(name),
        (None, Some(f)) => PathBuf::from(format!("{} (built in)", f.path)),
        (None, None) => PathBuf::from(name),
    }
}

/// The text of the file `name` of a real data set and the path its errors name (see
/// [`data_origin`]): read from `data_dir` when given, else the built-in copy.
pub fn data_text(name: &str, data_dir: Option<&Path>) -> Result<(PathBuf, Cow<'static, str>)> {
    let origin = data_origin(name, data_dir);
    if data_dir.is_some() {
        let text = std::fs::read_to_string(&origin).map_err(|e| io_error(&origin, e))?;
        return Ok((origin, Cow::Owned(text)));
    }
    let file = built_in(name).ok_or_else(|| format_error(&origin, "no such built-in data file"))?;
    let text = std::str::from_utf8(file.bytes).map_err(|e| format_error(&origin, format!("not UTF-8 text: {e}")))?;
    Ok((origin, Cow::Borrowed(text)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::{Digest, Sha256};
    use std::collections::BTreeMap;

    fn data_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data")
    }

    fn sha256(bytes: &[u8]) -> String {
        Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
    }

    /// `data/SHA256SUMS` as (path below data/, digest).
    fn listed_sums() -> BTreeMap<String, String> {
        let text = std::fs::read_to_string(data_dir().join("SHA256SUMS")).unwrap();
        let mut sums = BTreeMap::new();
        for line in text.lines() {
            let (digest, path) = line.split_once("  ").unwrap_or_else(|| panic!("SHA256SUMS: '{line}'"));
            assert!(sums.insert(path.to_owned(), digest.to_owned()).is_none(), "{path} listed twice");
        }
        sums
    }

    /// Every file below data/ but the two lists, as paths below data/.
    fn files_on_disk(dir: &Path, prefix: &str, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                files_on_disk(&p, &format!("{prefix}{name}/"), out);
            } else if !(prefix.is_empty() && (name == "README.md" || name == "SHA256SUMS")) {
                out.push(format!("{prefix}{name}"));
            }
        }
    }

    /// The data files are the ones their README and SHA256SUMS describe, byte for byte, and
    /// the built-in copies are those files: a changed, added or removed file fails here.
    #[test]
    fn data_files_match_their_checksums_and_the_readme() {
        let sums = listed_sums();
        let mut on_disk = Vec::new();
        files_on_disk(&data_dir(), "", &mut on_disk);
        on_disk.sort();
        assert_eq!(on_disk, sums.keys().cloned().collect::<Vec<_>>(), "data/ against data/SHA256SUMS");
        let readme = std::fs::read_to_string(data_dir().join("README.md")).unwrap();
        for (path, digest) in &sums {
            let bytes = std::fs::read(data_dir().join(path)).unwrap();
            assert_eq!(&sha256(&bytes), digest, "data/{path} against SHA256SUMS");
            let name = path.rsplit('/').next().unwrap();
            let row = readme.lines().find(|l| l.starts_with(&format!("| `{name}` |")));
            let row = row.unwrap_or_else(|| panic!("data/README.md has no row for {name}"));
            assert!(row.contains(&format!("`{digest}`")), "data/README.md's row of {name} lacks its SHA-256");
        }
        for f in &EMBEDDED {
            let rel = f.path.strip_prefix("data/").unwrap();
            assert_eq!(Some(&sha256(f.bytes)), sums.get(rel), "the built-in {}", f.path);
        }
    }

    #[test]
    fn files_are_found_by_name_and_errors_name_their_origin() {
        assert_eq!(built_in("yacht.txt").map(|f| f.path), Some("data/uci/yacht.txt"));
        assert!(built_in("missing.txt").is_none());
        let (origin, text) = data_text("digits.csv", None).unwrap();
        assert_eq!(origin, PathBuf::from("data/classification/digits.csv (built in)"));
        assert_eq!(text.lines().count(), 1797);
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("yacht.txt"), "1 2\n").unwrap();
        assert_eq!(data_text("yacht.txt", Some(dir.path())).unwrap(), (dir.path().join("yacht.txt"), "1 2\n".into()));
        let e = data_text("energy.txt", Some(dir.path())).unwrap_err().to_string();
        assert!(e.contains(&dir.path().join("energy.txt").display().to_string()), "{e}");
    }
}
