//! The settings file beside a results table (`results.csv.settings`): the units, seed offset and
//! method hyperparameters its rows were computed with, and a digest of its data when they are
//! not the data set's own (`data_setting`).
//!
//! The rows cannot show these settings, so a run records them when it starts a table and
//! refuses to resume the table with others ([`crate::runner::run_study`]), and
//! `credence study merge` refuses shard tables whose settings differ ([`common_settings`]),
//! naming the files and the first setting that differs.

use std::path::{Path, PathBuf};

use crate::methods::{EnsemblePredictive, MethodConfig, SwagSchedule};
use crate::plan::StudyPlan;
use credence::error::{Error, Result};
use credence::io::{format_error, io_error};
use sha2::{Digest, Sha256};

/// The file next to the table that records the settings its rows were computed with
/// (`results.csv` -> `results.csv.settings`).
pub fn settings_path(out: &Path) -> PathBuf {
    let mut name = out.as_os_str().to_owned();
    name.push(".settings");
    name.into()
}

/// The method hyperparameters as the settings file records them: every field of
/// [`MethodConfig`] but `backend` (where the passes run changes the numbers by rounding only),
/// in the text of the derived `Debug` the file used before the field existed, so tables
/// started then still resume; `ensemble_predictive` and `swag_schedule` only when they are not
/// the choices before they existed (see below), and `swag_clip` only when set.
struct Hyperparameters<'a>(&'a MethodConfig);

impl std::fmt::Debug for Hyperparameters<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Destructured in full: a new field must be added here (or deliberately left out).
        let MethodConfig {
            epoch_scale,
            batch_size,
            ensemble_size,
            ensemble_predictive,
            samples,
            dropout,
            swag_rank,
            swag_schedule,
            swag_clip,
            kl_weight,
            level,
            calibration_fraction,
            precision,
            backend: _,
        } = self.0;
        let mut s = f.debug_struct("MethodConfig");
        s.field("epoch_scale", epoch_scale).field("batch_size", batch_size).field("ensemble_size", ensemble_size);
        // Left out for the mixture (and SWAG's cosine schedule), the only choice before the field
        // existed: those tables resume with `--ensemble-predictive mixture --swag-schedule
        // cosine`, and are refused with the new defaults.
        if *ensemble_predictive != EnsemblePredictive::Mixture {
            s.field("ensemble_predictive", ensemble_predictive);
        }
        s.field("samples", samples).field("dropout", dropout).field("swag_rank", swag_rank);
        if *swag_schedule != SwagSchedule::Cosine {
            s.field("swag_schedule", swag_schedule);
        }
        // Left out unclipped, the only choice before 2026-12-03: those tables resume with
        // `--swag-clip none`.
        if let Some(clip) = swag_clip {
            s.field("swag_clip", clip);
        }
        s.field("kl_weight", kl_weight)
            .field("level", level)
            .field("calibration_fraction", calibration_fraction)
            .field("precision", precision)
            .finish()
    }
}

/// The method hyperparameters as the settings file's `methods` line records them (the
/// classification study's file records them the same way).
pub(crate) fn method_settings(config: &MethodConfig) -> String {
    format!("{:?}", Hyperparameters(config))
}

/// The text of the settings file of `plan`.
pub(crate) fn settings_text(plan: &StudyPlan) -> String {
    format!(
        "units = {:?}\nseed_offset = {}\nmethods = {:?}\n",
        plan.units,
        plan.seed_offset,
        Hyperparameters(&plan.method_config)
    )
}

/// The settings line of a table's data: nothing for the data set's own data (the built-in copy
/// of a real set, the generated synthetic one), so tables of those resume whichever source gave
/// the same numbers, as tables written before the line existed do; else `data = sha256:HEX`,
/// the SHA-256 of `numbers` (the split's values in a fixed order), so a table started on other
/// data (`--data-dir`) never takes rows of the built-in ones, or of a third set, on resume or
/// merge.
pub(crate) fn data_setting(own: bool, numbers: impl IntoIterator<Item = f64>) -> String {
    if own {
        return String::new();
    }
    let mut h = Sha256::new();
    numbers.into_iter().for_each(|v| h.update(v.to_le_bytes()));
    let hex: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
    format!("data = sha256:{hex}\n")
}

/// Resuming with other units, seed offset or method hyperparameters would mix incomparable
/// rows in one table (the rows cannot show it), so the settings are recorded beside the table
/// when it is started and must match when it is resumed. The backend is not recorded: a table
/// may be resumed on another one.
pub(crate) fn check_settings(out: &Path, want: &str, fresh: bool) -> Result<()> {
    let path = settings_path(out);
    if !fresh {
        match std::fs::read_to_string(&path) {
            Ok(found) if found == want => return Ok(()),
            Ok(found) => {
                // Name the first setting that differs (as merge does), not the whole file.
                let what = match first_difference(&found, want) {
                    Some((line, _, key, recorded, ours)) => {
                        format!("{}{key} = {recorded}, but this run has {key} = {ours}", at_line(line))
                    }
                    None => "the same settings in another layout (edited by hand?)".into(),
                };
                return Err(format_error(
                    &path,
                    format!(
                        "{what}; the rows of {} were computed with the recorded settings, so resume it with the \
                         same settings (or write to another file)",
                        out.display()
                    ),
                ));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_error(&path, e)),
        }
    }
    std::fs::write(&path, want).map_err(|e| io_error(&path, e))
}

/// One setting of a settings file: its line (1-based), name and value. The `methods` line is
/// split into its hyperparameters (`epoch_scale`, `batch_size`, ...).
fn fields(text: &str) -> Vec<(usize, String, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let Some((key, value)) = line.split_once(" = ") else {
            out.push((i + 1, line.to_owned(), String::new()));
            continue;
        };
        let inner = value.strip_prefix("MethodConfig { ").and_then(|v| v.strip_suffix(" }"));
        match inner {
            Some(inner) => {
                for field in inner.split(", ") {
                    let (k, v) = field.split_once(": ").unwrap_or((field, ""));
                    out.push((i + 1, k.to_owned(), v.to_owned()));
                }
            }
            None => out.push((i + 1, key.to_owned(), value.to_owned())),
        }
    }
    out
}

/// The first setting whose value differs between two settings texts (or that only one has):
/// `(line in a, line in b, name, value in a, value in b)`, values `(none)` where absent.
fn first_difference(a: &str, b: &str) -> Option<(usize, usize, String, String, String)> {
    let (fa, fb) = (fields(a), fields(b));
    let find = |f: &[(usize, String, String)], key: &str| f.iter().find(|(_, k, _)| k == key).cloned();
    for (line, key, value) in &fa {
        match find(&fb, key) {
            Some((_, _, vb)) if &vb == value => {}
            Some((lb, _, vb)) => return Some((*line, lb, key.clone(), value.clone(), vb)),
            None => return Some((*line, 0, key.clone(), value.clone(), "(none)".into())),
        }
    }
    let (lb, key, vb) = fb.into_iter().find(|(_, k, _)| find(&fa, k).is_none())?;
    Some((0, lb, key, "(none)".into(), vb))
}

/// `line N: ` before a setting's name, nothing for a setting a file lacks (line 0).
fn at_line(line: usize) -> String {
    if line == 0 { String::new() } else { format!("line {line}: ") }
}

/// Reads the settings file of every shard table and checks they agree: shards computed with
/// other units, seed offsets or hyperparameters would mix incomparable rows in one table.
/// Returns the common text (to record beside the merged table). A missing or unreadable
/// settings file is an error naming it; differing files are an error naming both files, the
/// lines and the first setting that differs.
pub fn common_settings(shards: &[PathBuf]) -> Result<String> {
    let mut first: Option<(PathBuf, String)> = None;
    for shard in shards {
        let path = settings_path(shard);
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(format_error(
                    &path,
                    format!(
                        "not found; every shard table needs the settings file credence study writes beside it \
                         (copy it together with {})",
                        shard.display()
                    ),
                ));
            }
            Err(e) => return Err(io_error(&path, e)),
        };
        match &first {
            None => first = Some((path, text)),
            Some((p0, t0)) if *t0 != text => {
                let (l0, l1, key, v0, v1) = first_difference(t0, &text).unwrap_or((
                    0,
                    0,
                    "the text".into(),
                    format!("{t0:?}"),
                    format!("{text:?}"),
                ));
                return Err(format_error(
                    &path,
                    format!(
                        "{}{key} = {v1}, but {}: {}{key} = {v0}; shards computed with other settings cannot be \
                         merged (rerun this shard with the options of the others)",
                        at_line(l1),
                        p0.display(),
                        at_line(l0),
                    ),
                ));
            }
            Some(_) => {}
        }
    }
    first.map(|(_, text)| text).ok_or_else(|| Error::argument("shards", "none", "one or more shard tables"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Units;
    use credence::backend::Backend;

    /// Settings files written before `MethodConfig::backend` existed still match, whatever the
    /// backend (such tables resume, and a table may be resumed on another backend), when the
    /// ensemble is the mixture they were computed with.
    #[test]
    fn settings_text_leaves_the_backend_out() {
        let old = "units = Pool\nseed_offset = 0\nmethods = MethodConfig { epoch_scale: 0.01, batch_size: 32, \
                   ensemble_size: 5, samples: 50, dropout: 0.1, swag_rank: 20, kl_weight: 0.0001, level: 0.9, \
                   calibration_fraction: 0.2, precision: F32 }\n";
        for backend in [Backend::Auto, Backend::Cpu, Backend::Cuda] {
            let mut p = StudyPlan::default();
            p.method_config.epoch_scale = 0.01;
            p.method_config.backend = backend;
            p.method_config.ensemble_predictive = EnsemblePredictive::Mixture;
            p.method_config.swag_schedule = SwagSchedule::Cosine;
            p.method_config.swag_clip = None;
            assert_eq!(settings_text(&p), old, "{backend:?}");
        }
        // SWAG's gradient clip (the default now) does not resume a table trained without it.
        let mut p = StudyPlan::default();
        p.method_config.epoch_scale = 0.01;
        p.method_config.ensemble_predictive = EnsemblePredictive::Mixture;
        p.method_config.swag_schedule = SwagSchedule::Cosine;
        let (line, _, key, recorded, ours) = first_difference(old, &settings_text(&p)).unwrap();
        assert_eq!((line, key.as_str(), recorded.as_str(), ours.as_str()), (0, "swag_clip", "(none)", "500.0"));
        // The Gaussian ensemble (the default now) does not resume a table of mixtures.
        let mut p = StudyPlan::default();
        p.method_config.swag_schedule = SwagSchedule::Cosine;
        p.method_config.epoch_scale = 0.01;
        let (line, _, key, recorded, ours) = first_difference(old, &settings_text(&p)).unwrap();
        assert_eq!(
            (line, key.as_str(), recorded.as_str(), ours.as_str()),
            (0, "ensemble_predictive", "(none)", "Gaussian")
        );
        let mut p = StudyPlan::default();
        p.method_config.samples = 20;
        assert_ne!(settings_text(&p), settings_text(&StudyPlan::default()));
    }

    /// The data set's own data add nothing (old tables resume); other data add a digest of
    /// their numbers, equal for equal numbers only.
    #[test]
    fn data_other_than_the_data_sets_own_are_recorded_by_digest() {
        assert_eq!(data_setting(true, [1.0, 2.0]), "");
        let a = data_setting(false, [1.0, 2.0]);
        assert!(a.starts_with("data = sha256:") && a.len() == "data = sha256:".len() + 65, "{a}");
        assert_eq!(a, data_setting(false, vec![1.0, 2.0]));
        assert_ne!(a, data_setting(false, [2.0, 1.0]));
        assert_ne!(a, data_setting(false, [1.0, 2.0, 0.0]));
        let text = settings_text(&StudyPlan::default());
        let (line, _, key, recorded, ours) = first_difference(&(text.clone() + &a), &text).unwrap();
        assert_eq!((line, key.as_str(), ours.as_str()), (4, "data", "(none)"));
        assert!(recorded.starts_with("sha256:"), "{recorded}");
    }

    /// Resuming with other settings is refused with the first setting that differs, by line
    /// and name, not the recorded text (which holds a Debug-printed struct).
    #[test]
    fn resume_refusal_names_the_setting() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("r.csv");
        check_settings(&out, &settings_text(&StudyPlan::default()), true).unwrap();
        check_settings(&out, &settings_text(&StudyPlan::default()), false).unwrap();
        let mut other = StudyPlan::default();
        other.method_config.epoch_scale = 0.5;
        let e = check_settings(&out, &settings_text(&other), false).unwrap_err().to_string();
        let want = format!(
            "{}: line 3: epoch_scale = 1.0, but this run has epoch_scale = 0.5; the rows of {} were computed",
            settings_path(&out).display(),
            out.display()
        );
        assert!(e.starts_with(&want), "{e}");
        assert!(!e.contains("MethodConfig") && !e.contains('\n'), "{e}");
        let e = check_settings(&out, &settings_text(&StudyPlan { seed_offset: 7, ..StudyPlan::default() }), false)
            .unwrap_err();
        assert!(e.to_string().contains("line 2: seed_offset = 0, but this run has seed_offset = 7;"), "{e}");
    }

    #[test]
    fn shards_must_agree_on_their_settings() {
        let dir = tempfile::tempdir().unwrap();
        let shard = |name: &str, plan: &StudyPlan| {
            let p = dir.path().join(name);
            std::fs::write(settings_path(&p), settings_text(plan)).unwrap();
            p
        };
        let base = StudyPlan::default();
        let (a, b) = (shard("a.csv", &base), shard("b.csv", &base));
        assert_eq!(common_settings(&[a.clone(), b.clone()]).unwrap(), settings_text(&base));

        let mut other = StudyPlan::default();
        other.method_config.epoch_scale = 0.5;
        let c = shard("c.csv", &other);
        let e = common_settings(&[a.clone(), b.clone(), c.clone()]).unwrap_err().to_string();
        let (pa, pc) = (settings_path(&a), settings_path(&c));
        let want =
            format!("{}: line 3: epoch_scale = 0.5, but {}: line 3: epoch_scale = 1.0;", pc.display(), pa.display());
        assert!(e.starts_with(&want), "{e}");
        let d = shard("d.csv", &StudyPlan { units: Units::Original, seed_offset: 3, ..StudyPlan::default() });
        let e = common_settings(&[a.clone(), d]).unwrap_err().to_string();
        assert!(e.contains("line 1: units = Original, but") && e.contains("line 1: units = Pool;"), "{e}");
        // A setting only one file has is named too.
        let e_path = dir.path().join("e.csv");
        std::fs::write(settings_path(&e_path), format!("{}extra = 1\n", settings_text(&base))).unwrap();
        let e = common_settings(&[a.clone(), e_path]).unwrap_err().to_string();
        assert!(e.contains("line 4: extra = 1, but") && e.contains("extra = (none)"), "{e}");
        // A shard without its settings file.
        let lone = dir.path().join("lone.csv");
        let e = common_settings(&[a, lone.clone()]).unwrap_err().to_string();
        assert!(e.contains(&format!("{}: not found", settings_path(&lone).display())), "{e}");
    }
}
