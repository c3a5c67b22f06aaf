//! The manifest: what it accepts and refuses (each error naming the line and column), the
//! table against the metrics of each row computed on its own, and resumption.

use std::path::Path;

use super::*;
use crate::metrics::{ClassificationOptions, RegressionOptions, evaluate_classification, evaluate_regression};
use crate::{ClassProbs, Gaussian, Samples};

/// A folder with CSV arrays: Gaussian means/sds, samples, intervals and targets for two
/// realizations; probabilities and labels for a classification row.
fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let w = |name: &str, rows: &[&[f64]]| {
        let text: String =
            rows.iter().map(|r| r.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(",") + "\n").collect();
        std::fs::write(dir.path().join(name), text).unwrap();
    };
    w("y0.csv", &[&[0.1], &[0.9], &[2.2], &[2.9]]);
    w("y1.csv", &[&[0.0], &[1.2], &[1.8], &[3.4]]);
    w("mean.csv", &[&[0.0], &[1.0], &[2.0], &[3.0]]);
    w("sd.csv", &[&[0.5], &[0.4], &[0.6], &[0.5]]);
    w("samples.csv", &[&[0.1, 1.1, 2.0, 3.1], &[-0.2, 0.8, 2.3, 2.7], &[0.3, 1.0, 1.7, 3.3]]);
    w("lower.csv", &[&[-0.5], &[0.4], &[1.2], &[2.1]]);
    w("upper.csv", &[&[0.5], &[0.8], &[2.8], &[3.9]]);
    w("probs.csv", &[&[0.7, 0.3], &[0.2, 0.8], &[0.6, 0.4]]);
    w("labels.csv", &[&[0.0], &[1.0], &[1.0]]);
    dir
}

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

const REGRESSION: &str = "method,realization,task,mean,sd,samples,lower,upper,y\n\
    Gauss,0,regression,mean.csv,sd.csv,,,,y0.csv\n\
    Gauss,1,regression,mean.csv,sd.csv,,,,y1.csv\n\
    MC,0,regression,,,samples.csv,,,y0.csv\n\
    MC,1,regression,,,samples.csv,,,y1.csv\n\
    CP,0,regression,,,,lower.csv,upper.csv,y0.csv\n";

fn read_error(text: &str) -> String {
    let d = fixture();
    Manifest::read(&write(d.path(), "m.csv", text)).unwrap_err().to_string()
}

#[test]
fn bad_manifests_are_refused_by_line_and_column() {
    let cases = [
        ("method,realization,task,mean,sd,y,seed\nA,0,regression,mean.csv,sd.csv,y0.csv,1\n", "column 'seed'"),
        ("method,task,mean,sd,y\nA,regression,mean.csv,sd.csv,y0.csv\n", "no column 'realization'"),
        ("method,realization,task,mean,sd,y\nA,0,regresion,mean.csv,sd.csv,y0.csv\n", "line 2, column 'task'"),
        (
            "method,realization,task,mean,sd,y,probs,labels\nA,0,regression,mean.csv,sd.csv,y0.csv,,\n\
             B,0,classification,,,,probs.csv,labels.csv\n",
            "line 3, column 'task': classification after regression rows",
        ),
        (
            "method,realization,task,mean,sd,y\nA,0,regression,mean.csv,sd.csv,y0.csv\nA,0,regression,mean.csv,sd.csv,y1.csv\n",
            "line 3: the same keys (method A, realization 0) as line 2",
        ),
        ("method,realization,task,mean,sd,y\nA,,regression,mean.csv,sd.csv,y0.csv\n", "line 2, column 'realization'"),
        (
            "method,realization,task,mean,sd,y,probs\nA,0,regression,mean.csv,sd.csv,y0.csv,probs.csv\n",
            "column 'probs'",
        ),
        ("method,realization,task,mean,sd\nA,0,regression,mean.csv,sd.csv\n", "line 2, column 'y'"),
    ];
    for (text, want) in cases {
        let e = read_error(text);
        assert!(e.contains(want) && e.contains("m.csv"), "{want:?} not in {e:?}");
    }
}

#[test]
fn rows_resolve_paths_beside_the_manifest_in_key_order() {
    let d = fixture();
    let m = Manifest::read(&write(
        d.path(),
        "m.csv",
        "realization,method,task,mean,sd,y,n\n0,A,regression,mean.csv,sd.csv,y0.csv,30\n",
    ))
    .unwrap();
    assert_eq!(m.keys, ["n", "method", "realization"]);
    assert_eq!(m.rows[0].keys, ["30", "A", "0"]);
    assert_eq!(m.columns()[3..], REGRESSION_METRICS.map(String::from));
    let RowInputs::Regression(f) = &m.rows[0].inputs else { panic!("a regression row") };
    assert_eq!(Path::new(&f.y), d.path().join("y0.csv"));
}

/// The table's cells read back as the metrics computed on each row's arrays directly.
#[test]
fn the_table_holds_each_rows_own_metrics() {
    let d = fixture();
    let m = Manifest::read(&write(d.path(), "m.csv", REGRESSION)).unwrap();
    let t = metrics_table(&m, &MetricsTableOptions::default(), &|_, _| {}).unwrap();
    let read = |name: &str| crate::io::read_array(d.path().join(name).to_str().unwrap()).unwrap();
    let y = |r: usize| read(&format!("y{r}.csv")).into_vec("y").unwrap();
    let gauss = Gaussian::new(read("mean.csv").into_vec("m").unwrap(), read("sd.csv").into_vec("s").unwrap()).unwrap();
    let samples = Samples::new(read("samples.csv").into_matrix("s").unwrap()).unwrap();
    let opts = RegressionOptions::default();
    let crps = t.numbers("crps").unwrap();
    let nll = t.numbers("nll").unwrap();
    let covered = t.numbers("covered").unwrap();
    for r in 0..2 {
        let g = evaluate_regression(&gauss, &y(r), &opts).unwrap().metrics;
        assert_eq!(crps[r], g.crps);
        assert_eq!(nll[r], g.nll);
        assert_eq!(covered[r], Some(g.covered as f64));
        let s = evaluate_regression(&samples, &y(r), &opts).unwrap().metrics;
        assert_eq!(crps[2 + r], s.crps);
        assert_eq!(nll[2 + r], None, "samples have no density");
    }
    assert_eq!(crps[4], None, "bare intervals have no CRPS");
    assert_eq!(t.numbers("picp").unwrap()[4], Some(0.75));
    assert_eq!(t.text("method").unwrap()[4].as_deref(), Some("CP"));

    let c = Manifest::read(&write(
        d.path(),
        "c.csv",
        "method,realization,task,probs,labels\nA,0,classification,probs.csv,labels.csv\n",
    ))
    .unwrap();
    let t = metrics_table(&c, &MetricsTableOptions::default(), &|_, _| {}).unwrap();
    let probs = ClassProbs::from_single(read("probs.csv").into_matrix("p").unwrap()).unwrap();
    let want = evaluate_classification(&probs, &[0, 1, 1], &ClassificationOptions::default()).unwrap().metrics;
    assert_eq!(t.numbers("accuracy").unwrap()[0], Some(want.accuracy));
    assert_eq!(t.numbers("correct").unwrap()[0], Some(2.0));
    assert_eq!(t.numbers("ece").unwrap()[0], Some(want.ece));
    assert_eq!(t.numbers("auroc").unwrap()[0], want.auroc);
}

#[test]
fn a_bad_row_names_its_line_and_file() {
    let d = fixture();
    write(d.path(), "short.csv", "0.0\n1.0\n");
    let text =
        REGRESSION.replace("MC,1,regression,,,samples.csv,,,y1.csv", "MC,1,regression,mean.csv,sd.csv,,,,short.csv");
    let m = Manifest::read(&write(d.path(), "m.csv", &text)).unwrap();
    let e = metrics_table(&m, &MetricsTableOptions::default(), &|_, _| {}).unwrap_err().to_string();
    assert!(e.contains("m.csv") && e.contains("line 5 (method MC, realization 1)") && e.contains("short.csv"), "{e}");
    let out = d.path().join("t.csv");
    assert!(write_metrics_table(&m, &MetricsTableOptions::default(), &out, &|_, _| {}).is_err());
    assert!(!out.exists(), "no half table");
    assert!(run::journal_path(&out).exists(), "the good rows are kept for the next run");
}

#[test]
fn an_interrupted_run_resumes_without_recomputing_and_writes_the_same_file() {
    let d = fixture();
    let m = Manifest::read(&write(d.path(), "m.csv", REGRESSION)).unwrap();
    let opts = MetricsTableOptions::default();
    let whole = d.path().join("whole.csv");
    let run = write_metrics_table(&m, &opts, &whole, &|_, _| {}).unwrap();
    assert_eq!((run.rows, run.computed, run.reused), (5, 5, 0));
    let whole_text = std::fs::read_to_string(&whole).unwrap();
    assert!(!run::journal_path(&whole).exists());

    // A journal as a run stopped after two rows leaves it, the second line cut short.
    let out = d.path().join("t.csv");
    let lines: Vec<&str> = whole_text.lines().collect();
    let settings = serde_json::to_string(&run::settings_value(&m, &opts)).unwrap();
    let cut = &lines[3][..lines[3].len() / 2];
    std::fs::write(run::journal_path(&out), format!("{settings}\n{}\n{}", lines[1], cut)).unwrap();
    let resumed = write_metrics_table(&m, &opts, &out, &|_, _| {}).unwrap();
    assert_eq!((resumed.computed, resumed.reused), (4, 1));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), whole_text);

    // Rows of the journal are taken as they stand: a marked value shows it was not recomputed.
    std::fs::remove_file(&out).unwrap();
    let marked = lines[1].replacen(",0.", ",9.", 1);
    std::fs::write(run::journal_path(&out), format!("{settings}\n{marked}\n")).unwrap();
    write_metrics_table(&m, &opts, &out, &|_, _| {}).unwrap();
    assert!(std::fs::read_to_string(&out).unwrap().contains(&marked));

    // A finished table is resumed only under its settings; a grown manifest adds its rows.
    let other = MetricsTableOptions { level: 0.8, ..opts.clone() };
    let e = write_metrics_table(&m, &other, &whole, &|_, _| {}).unwrap_err().to_string();
    assert!(e.contains("options.level (recorded 0.9, now 0.8)"), "{e}");
    let grown = Manifest::read(&write(
        d.path(),
        "m.csv",
        &format!("{REGRESSION}CP,1,regression,,,,lower.csv,upper.csv,y1.csv\n"),
    ))
    .unwrap();
    let again = write_metrics_table(&grown, &opts, &whole, &|_, _| {}).unwrap();
    assert_eq!((again.computed, again.reused), (1, 5));
    assert!(std::fs::read_to_string(&whole).unwrap().starts_with(&whole_text));
}

#[test]
fn outputs_that_are_inputs_or_foreign_files_are_refused() {
    let d = fixture();
    let manifest = write(d.path(), "m.csv", REGRESSION);
    let m = Manifest::read(&manifest).unwrap();
    let opts = MetricsTableOptions::default();
    for input in [manifest.clone(), d.path().join("y0.csv")] {
        let before = std::fs::read(&input).unwrap();
        let e = write_metrics_table(&m, &opts, &input, &|_, _| {}).unwrap_err().to_string();
        assert!(e.contains("--out"), "{e}");
        assert_eq!(std::fs::read(&input).unwrap(), before);
    }
    let foreign = write(d.path(), "table.csv", "method,realization,crps\nA,0,1\n");
    let e = write_metrics_table(&m, &opts, &foreign, &|_, _| {}).unwrap_err().to_string();
    assert!(e.contains("not a table of credence metrics table"), "{e}");
}
