//! Focal sets as bitmasks over at most 63 classes, the full powerset, and budget JSON files.

use std::path::Path;

use crate::error::{Error, Result};

/// Largest number of classes for which the full powerset (2^K - 1 focal sets) is built.
pub const MAX_POWERSET_CLASSES: usize = 16;

/// A list of distinct non-empty focal sets over `k` classes; bit `c` of a set is class `c`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FocalSets {
    /// Number of classes K.
    pub k: usize,
    /// The focal sets, in the order of the columns of belief or mass arrays.
    pub sets: Vec<u64>,
}

impl FocalSets {
    /// Checks `sets`: K in 1..=63, every set non-empty, inside the frame and listed once.
    pub fn new(k: usize, sets: Vec<u64>) -> Result<Self> {
        if k == 0 || k > 63 {
            return Err(Error::argument("number of classes", k, "1 to 63"));
        }
        let frame = frame(k);
        for (j, &s) in sets.iter().enumerate() {
            if s == 0 || s & !frame != 0 {
                return Err(Error::value(
                    "focal_sets",
                    &[j],
                    format!("{s:#b}"),
                    format!("a non-empty subset of {k} classes"),
                ));
            }
            if sets[..j].contains(&s) {
                return Err(Error::value("focal_sets", &[j], members(s).len(), "a set not listed before"));
            }
        }
        Ok(FocalSets { k, sets })
    }

    /// All 2^K - 1 non-empty subsets, set `A` at index `A - 1` (so the frame is last).
    pub fn powerset(k: usize) -> Result<Self> {
        if k == 0 || k > MAX_POWERSET_CLASSES {
            return Err(Error::argument(
                "number of classes for the full powerset",
                k,
                format!("1 to {MAX_POWERSET_CLASSES}"),
            ));
        }
        Ok(FocalSets { k, sets: (1..=frame(k)).collect() })
    }

    /// From lists of class indices (`[[0], [1, 4], ...]`), K given.
    pub fn from_indices(k: usize, lists: &[Vec<usize>]) -> Result<Self> {
        if lists.is_empty() {
            // No set to put mass on: every prediction would be refused later, or worse, vacuous.
            return Err(Error::argument("focal_sets", "[]", "at least one focal set"));
        }
        let mut sets = Vec::with_capacity(lists.len());
        for (j, list) in lists.iter().enumerate() {
            let mut s = 0u64;
            for &c in list {
                if c >= k.min(63) {
                    return Err(Error::value("focal_sets", &[j], c, format!("a class index below {k}")));
                }
                s |= 1 << c;
            }
            sets.push(s);
        }
        Self::new(k, sets)
    }

    /// Number of focal sets.
    pub fn len(&self) -> usize {
        self.sets.len()
    }

    /// Whether there are no focal sets.
    pub fn is_empty(&self) -> bool {
        self.sets.is_empty()
    }

    /// Index of the whole frame among the sets, if listed.
    pub fn frame_index(&self) -> Option<usize> {
        let f = frame(self.k);
        self.sets.iter().position(|&s| s == f)
    }

    /// The same sets with the frame appended when it is missing.
    pub fn with_frame(&self) -> FocalSets {
        let mut out = self.clone();
        if out.frame_index().is_none() {
            out.sets.push(frame(self.k));
        }
        out
    }
}

/// A focal-set budget as stored next to a random-set network's outputs.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Budget {
    /// Class names, when the file lists them (`"classes"`).
    pub classes: Option<Vec<String>>,
    /// The focal sets (`"focal_sets"`: lists of class indices), one per belief column.
    pub focal: FocalSets,
}

#[derive(serde::Deserialize)]
struct BudgetFile {
    classes: Option<Vec<String>>,
    n_classes: Option<usize>,
    focal_sets: Vec<Vec<usize>>,
}

impl Budget {
    /// Parses `{"classes": [...], "focal_sets": [[0], [1, 4], ...]}`; K is the number of class
    /// names, else `"n_classes"`, else 1 + the largest index. `source` names the file in errors.
    pub fn from_json_str(text: &str, source: &Path) -> Result<Self> {
        let fmt = |message: String| Error::Format { path: source.to_path_buf(), message };
        let file: BudgetFile = serde_json::from_str(text)
            .map_err(|e| fmt(format!("expected {{\"classes\": [...], \"focal_sets\": [[0], [1, 4], ...]}}: {e}")))?;
        let largest = file.focal_sets.iter().flatten().copied().max().map_or(0, |c| c + 1);
        let k = file.classes.as_ref().map(Vec::len).or(file.n_classes).unwrap_or(largest);
        let focal = FocalSets::from_indices(k, &file.focal_sets).map_err(|e| e.in_file(source))?;
        Ok(Budget { classes: file.classes, focal })
    }

    /// The budget as the JSON [`Budget::from_json_str`] reads back: `n_classes`, `focal_sets`
    /// as lists of class indices, and `classes` when known.
    pub fn to_json(&self) -> serde_json::Value {
        let sets: Vec<Vec<usize>> = self.focal.sets.iter().map(|&s| members(s)).collect();
        let mut v = serde_json::json!({"n_classes": self.focal.k, "focal_sets": sets});
        if let Some(c) = &self.classes {
            v["classes"] = serde_json::json!(c);
        }
        v
    }

    /// Reads a budget JSON file (see [`Budget::from_json_str`]).
    pub fn read(path: &Path) -> Result<Self> {
        let text = crate::io::read_text_string(path)?;
        Self::from_json_str(&text, path)
    }
}

/// The whole frame of `k` classes as a bitmask.
pub fn frame(k: usize) -> u64 {
    if k >= 64 { u64::MAX } else { (1u64 << k) - 1 }
}

/// The classes of a set, ascending.
pub fn members(set: u64) -> Vec<usize> {
    (0..64).filter(|c| set >> c & 1 == 1).collect()
}

/// The number of classes in a set, |A|.
pub fn size(set: u64) -> u32 {
    set.count_ones()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budget_json_and_validation() {
        let b =
            Budget::from_json_str(r#"{"classes": ["a","b","c"], "focal_sets": [[0],[1],[0,2]]}"#, Path::new("b.json"))
                .unwrap();
        assert_eq!(b.focal.k, 3);
        assert_eq!(b.focal.sets, vec![1, 2, 5]);
        assert_eq!(b.focal.with_frame().sets, vec![1, 2, 5, 7]);
        let e = Budget::from_json_str(r#"{"classes": ["a","b"], "focal_sets": [[0],[2]]}"#, Path::new("b.json"))
            .unwrap_err();
        assert!(e.to_string().contains("b.json") && e.to_string().contains("focal_sets[1]"), "{e}");
        let e = Budget::from_json_str(r#"{"focal_sets": [[0],[0]]}"#, Path::new("b.json")).unwrap_err();
        assert!(e.to_string().contains("not listed before"), "{e}");
        assert!(Budget::from_json_str("[1]", Path::new("b.json")).is_err());
        let e = Budget::from_json_str(r#"{"n_classes": 3, "focal_sets": []}"#, Path::new("b.json")).unwrap_err();
        assert!(e.to_string().contains("b.json") && e.to_string().contains("at least one focal set"), "{e}");
        assert_eq!(FocalSets::powerset(3).unwrap().sets, (1..8).collect::<Vec<u64>>());
        assert!(FocalSets::powerset(17).is_err());
    }
}
