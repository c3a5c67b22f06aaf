use super::*;

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

/// Two methods x three realizations x two trainings: the means, the pooled training sd, the
/// sd of the means and the share, against the arithmetic written out.
#[test]
fn repeats_average_to_cell_means_and_a_decomposition() {
    let g = s(&["A", "A", "B", "B", "A", "A", "B", "B", "A", "A", "B", "B"]);
    let p = s(&["1", "1", "1", "1", "2", "2", "2", "2", "3", "3", "3", "3"]);
    let k = s(&["0", "1", "0", "1", "0", "1", "0", "1", "0", "1", "0", "1"]);
    let y = vec![1.0, 1.2, 2.0, 2.4, 1.4, 1.4, 2.2, 2.0, 0.9, 1.3, 2.1, 2.3];
    let (d, r) = average_repeats(&g, &p, &k, &y, "train_rep").unwrap();
    assert_eq!(d.groups(), ["A", "B"]);
    assert_eq!(d.n_pairs(), 3);
    let at = |m: usize, i: usize| (0..d.n_obs()).find(|&j| d.group()[j] == m && d.pair()[j] == i).map(|j| d.y()[j]);
    let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
    assert!(close(at(0, 0).unwrap(), 1.1) && close(at(1, 1).unwrap(), 2.1) && close(at(0, 2).unwrap(), 1.1));
    // A: within-cell squares 0.02 + 0 + 0.08 over 3 df; its means 1.1, 1.4, 1.1.
    let a = &r.methods[0];
    assert_eq!((a.method.as_str(), a.df), ("A", 3));
    assert!(close(a.training_sd, (0.1f64 / 3.0).sqrt()));
    let means_var = ((1.1f64 - 1.2).powi(2) * 2.0 + (1.4f64 - 1.2).powi(2)) / 2.0;
    assert!(close(a.means_sd, means_var.sqrt()));
    assert!(close(a.training_share, (0.1 / 3.0 / 2.0 / means_var).min(1.0)));
    assert_eq!(r.per_cell, (2, 2));
    assert!(r.warning.is_none());
}

/// Unequal trainings per cell are named; a training on two rows, a non-finite value, one
/// training per cell and vectors of different lengths are errors naming what is wrong.
#[test]
fn bad_repeats_are_refused_by_index() {
    let g = s(&["A", "A", "A", "B", "B"]);
    let p = s(&["1", "1", "1", "1", "1"]);
    let (_, r) = average_repeats(&g, &p, &s(&["0", "1", "2", "0", "1"]), &[1.0, 2.0, 3.0, 1.0, 1.5], "rep").unwrap();
    assert_eq!(r.per_cell, (2, 3));
    assert!(r.warning.as_deref().is_some_and(|w| w.contains("2 to 3 trainings ('rep')")));
    let e = average_repeats(&g, &p, &s(&["0", "1", "1", "0", "1"]), &[1.0; 5], "rep").unwrap_err().to_string();
    assert!(e.contains("rep[2]") && e.contains("realization '1', rep '1' has one at [1]"), "{e}");
    let e = average_repeats(&g, &p, &s(&["0", "1", "2", "0", "1"]), &[1.0, f64::NAN, 1.0, 1.0, 1.0], "rep")
        .unwrap_err()
        .to_string();
    assert!(e.contains("response[1]"), "{e}");
    let e = average_repeats(&s(&["A", "B"]), &s(&["1", "1"]), &s(&["0", "0"]), &[1.0, 2.0], "rep").unwrap_err();
    assert!(e.to_string().contains("at least one cell with two or more trainings"), "{e}");
    assert!(average_repeats(&g, &p, &s(&["0"]), &[1.0; 5], "rep").is_err());
}

/// From a table: rows with a missing value are dropped with a warning, and a training on two
/// rows is an error naming the file and both lines.
#[test]
fn a_repeated_table_is_read_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.csv");
    std::fs::write(&path, "method,realization,train_rep,crps\nA,1,0,1.0\nA,1,1,1.2\nB,1,0,2.0\nB,1,1,\nA,2,0,1.1\nA,2,1,1.3\nB,2,0,2.2\nB,2,1,2.1\n")
        .unwrap();
    let t = Table::read(&path).unwrap();
    let (d, r, warnings) = Design::from_repeated_table(&t, "crps", "method", "realization", "train_rep").unwrap();
    assert_eq!(d.n_obs(), 4);
    assert_eq!(r.per_cell, (1, 2));
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    std::fs::write(&path, "method,realization,train_rep,crps\nA,1,0,1.0\nA,1,0,1.2\nB,1,0,2.0\nB,1,1,2.1\n").unwrap();
    let t = Table::read(&path).unwrap();
    let e = Design::from_repeated_table(&t, "crps", "method", "realization", "train_rep").unwrap_err().to_string();
    assert!(e.contains("t.csv") && e.contains("train_rep '0' on lines 2, 3"), "{e}");
}
