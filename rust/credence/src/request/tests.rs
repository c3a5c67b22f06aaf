use super::*;
use crate::compare::{CheesSettings, FitOptions, NutsSettings, Sampler};

fn request(json: &str) -> FitRequest {
    serde_json::from_str(json).unwrap()
}

fn refused(r: Result<impl std::fmt::Debug>) -> (String, Option<(String, String)>) {
    match r.unwrap_err() {
        Error::Refused { option, instead, .. } => (option, instead),
        other => panic!("expected a refusal, got {other}"),
    }
}

#[test]
fn an_empty_request_is_the_core_defaults() {
    let r = FitRequest::default();
    // The core's defaults, but for the model: the paired one where the design allows it.
    let paired = FitOptions { family: Family::Paired(PairedOptions::default()), ..FitOptions::default() };
    assert_eq!(r.fit_options().unwrap(), paired);
    assert_eq!(request(r#"{"model": "additive"}"#).fit_options().unwrap(), FitOptions::default());
    assert_eq!(r.summary_options(), SummaryOptions::default());
    let across = r.across_options().unwrap();
    assert_eq!(across, AcrossFitOptions::default());
    let chees = request(r#"{"sampler": "chees"}"#);
    assert_eq!(chees.sampler().unwrap(), Sampler::Chees(CheesSettings::default()));
}

/// The default model is paired unless an option only the additive model has is given; a named
/// paired model refuses those options, the additive one refuses covariance_df, and a design the
/// paired model cannot take gets the additive model by default (with the reason) or a refusal
/// when the paired model was named.
#[test]
fn the_model_follows_the_options_and_the_design() {
    let family = |json: &str| request(json).family().unwrap();
    assert!(matches!(family("{}"), Family::Paired(o) if o.covariance_df == crate::compare::PAIRED_COVARIANCE_DF));
    assert!(matches!(family(r#"{"covariance_df": 2}"#), Family::Paired(o) if o.covariance_df == 2.0));
    assert!(matches!(family(r#"{"draws": 500, "chains": 2, "seed": 3}"#), Family::Paired(_)));
    // A realization effect asked for is the paired model's too (its covariance holds one), and
    // brms' length convention is a face's, not a model's.
    assert!(matches!(family(r#"{"realization_effect": true, "convention": "brms"}"#), Family::Paired(_)));
    for additive in [
        r#"{"student_t": true}"#,
        r#"{"shared_sigma": false}"#,
        r#"{"realization_effect": false}"#,
        r#"{"sampler": "chees"}"#,
        r#"{"warmup": 200}"#,
        r#"{"priors": {"tau": "half_normal(2)"}}"#,
        r#"{"model": "additive"}"#,
    ] {
        assert!(matches!(family(additive), Family::Gaussian(_)), "{additive}");
    }
    let (o, instead) = refused(request(r#"{"model": "paired", "student_t": true}"#).family());
    assert_eq!((o.as_str(), instead), ("student_t", Some(("model".into(), "additive".into()))));
    assert_eq!(refused(request(r#"{"model": "paired", "backend": "cuda"}"#).family()).0, "backend");
    assert_eq!(refused(request(r#"{"model": "additive", "covariance_df": 1}"#).family()).0, "covariance_df");
    assert_eq!(refused(request(r#"{"covariance_df": 0}"#).family()).0, "covariance_df");
    assert_eq!(refused(request(r#"{"family": "beta_binomial", "model": "paired"}"#).family()).0, "model");
    assert_eq!(refused(request(r#"{"model": "paired"}"#).across_options()).0, "model");
    let unpaired =
        Design::new(vec!["A".into(), "B".into(), "A".into(), "B".into()], None, vec![1.0, 2.0, 1.5, 2.5], None)
            .unwrap();
    // An unpaired table has nothing to pair: the additive model, without a note.
    let (f, why) = FitRequest::default().family_for(&unpaired).unwrap();
    assert!(matches!(f, Family::Gaussian(_)) && why.is_none());
    // A paired table whose gaps leave one complete realization: the additive model, with why.
    let gappy = Design::new(
        ["A", "B", "A", "B", "A"].map(String::from).to_vec(),
        Some(["1", "1", "2", "2", "3"].map(String::from).to_vec()),
        vec![1.0, 2.0, 1.5, 2.5, 1.2],
        None,
    )
    .unwrap();
    let gappy = gappy.subset_pairs(&[0, 2]).unwrap();
    let (f, why) = FitRequest::default().family_for(&gappy).unwrap();
    assert!(matches!(f, Family::Gaussian(_)) && why.is_some_and(|w| w.contains("1 realization(s) with every method")));
    let (o, instead) = refused(request(r#"{"model": "paired"}"#).family_for(&unpaired));
    assert_eq!((o.as_str(), instead), ("model", Some(("model".into(), "additive".into()))));
}

/// Cross-validation folds: only the paired model carries their correlation, so every other
/// model refuses the test fraction by name, and a design the paired model cannot take is
/// refused instead of falling back to a model that would treat the folds as independent.
#[test]
fn a_cv_test_fraction_asks_for_the_paired_model() {
    let family = |json: &str| request(json).family();
    assert!(matches!(family(r#"{"cv_test_fraction": 0.1}"#).unwrap(), Family::Paired(o) if o.cv_test_fraction == 0.1));
    assert!(matches!(family(r#"{"cv_test_fraction": 0}"#).unwrap(), Family::Paired(o) if o.shared_variance() == 0.0));
    let (o, instead) = refused(family(r#"{"model": "additive", "cv_test_fraction": 0.1}"#));
    assert_eq!((o.as_str(), instead), ("cv_test_fraction", Some(("model".into(), "paired".into()))));
    assert_eq!(refused(family(r#"{"student_t": true, "cv_test_fraction": 0.1}"#)).0, "cv_test_fraction");
    assert_eq!(refused(family(r#"{"family": "beta_binomial", "cv_test_fraction": 0.1}"#)).0, "cv_test_fraction");
    assert_eq!(refused(request(r#"{"cv_test_fraction": 0.1}"#).across_options()).0, "cv_test_fraction");
    for bad in ["1", "-0.1", "1.5"] {
        let e = family(&format!(r#"{{"cv_test_fraction": {bad}}}"#)).unwrap_err().to_string();
        assert!(e.contains("cv_test_fraction") && e.contains("[0, 1)"), "{bad}: {e}");
    }
    let unpaired =
        Design::new(vec!["A".into(), "B".into(), "A".into(), "B".into()], None, vec![1.0, 2.0, 1.5, 2.5], None)
            .unwrap();
    assert!(FitRequest::default().family_for(&unpaired).is_ok());
    assert_eq!(refused(request(r#"{"cv_test_fraction": 0.2}"#).family_for(&unpaired)).0, "model");
    // A df prior needs a Student-t interaction.
    assert_eq!(refused(request(r#"{"priors": {"df": "gamma(2, 0.1)"}}"#).across_options()).0, "prior_df");
    assert!(request(r#"{"priors": {"df": "gamma(2, 0.1)"}, "interaction": "student_t"}"#).across_options().is_ok());
    // A realization effect needs realizations.
    assert_eq!(refused(request(r#"{"realization_effect": true}"#).family_for(&unpaired)).0, "realization_effect");
}

#[test]
fn lengths_follow_the_convention() {
    // brms: iter is warmup + draws exactly; NUTS's iter defaults to 2000 with a quarter warmup.
    let nuts = |json: &str| match request(json).sampler().unwrap() {
        Sampler::Nuts(s) => (s.warmup, s.draws, s.max_draws),
        other => panic!("{other:?}"),
    };
    assert_eq!(nuts(r#"{"convention": "brms"}"#), (500, 1500, None));
    assert_eq!(nuts(r#"{"convention": "brms", "warmup": 300}"#), (300, 1700, None));
    assert_eq!(nuts(r#"{"iter": 1000, "warmup": 100}"#), (100, 900, None));
    let d = NutsSettings::default();
    assert_eq!(nuts("{}"), (d.warmup, d.draws, d.max_draws));
    // ChEES under brms without iter keeps the core's lengths and extension; with iter, exact.
    let chees = |json: &str| match request(json).sampler().unwrap() {
        Sampler::Chees(s) => (s.warmup, s.draws, s.max_draws),
        other => panic!("{other:?}"),
    };
    let c = CheesSettings::default();
    assert_eq!(chees(r#"{"sampler": "chees", "convention": "brms"}"#), (c.warmup, c.draws, c.max_draws));
    assert_eq!(chees(r#"{"sampler": "chees", "convention": "brms", "iter": 200}"#), (50, 150, None));
    // Without iter, ChEES's iter under brms is the core's warmup + draws (175): a warmup given
    // shortens the draws, and one as long as iter is refused.
    assert_eq!(chees(r#"{"sampler": "chees", "convention": "brms", "warmup": 100}"#), (100, 75, c.max_draws));
    assert_eq!(chees(r#"{"sampler": "chees", "warmup": 100}"#), (100, c.draws, c.max_draws));
    assert_eq!(refused(request(r#"{"sampler": "chees", "convention": "brms", "warmup": 175}"#).sampler()).0, "warmup");
    assert_eq!(refused(request(r#"{"iter": 100, "warmup": 100}"#).sampler()).0, "iter");
    assert_eq!(refused(request(r#"{"iter": 100, "draws": 10}"#).sampler()).0, "draws");
    // A cap below the draws would do nothing: refused, not raised silently.
    assert_eq!(refused(request(r#"{"draws": 100, "max_draws": 10}"#).sampler()).0, "max_draws");
    assert!(request(r#"{"draws": 100, "max_draws": 100}"#).sampler().is_ok());
}

#[test]
fn options_that_do_not_apply_are_refused_by_name() {
    assert_eq!(refused(request(r#"{"superchains": 4}"#).sampler()).0, "superchains");
    assert_eq!(refused(request(r#"{"sampler": "chees", "chains": 4}"#).sampler()).0, "chains");
    let (o, instead) = refused(request(r#"{"backend": "cuda"}"#).sampler());
    assert_eq!((o.as_str(), instead), ("backend", Some(("sampler".into(), "chees".into()))));
    assert_eq!(refused(request(r#"{"interaction": "student_t"}"#).family()).0, "interaction");
    assert_eq!(refused(request(r#"{"family": "beta_binomial", "student_t": true}"#).family()).0, "student_t");
    let (o, instead) = refused(request(r#"{"student_t": true}"#).across_options());
    assert_eq!((o.as_str(), instead), ("student_t", Some(("interaction".into(), "student_t".into()))));
    assert_eq!(refused(request(r#"{"sampler": "chees"}"#).across_options()).0, "sampler");
    assert_eq!(
        refused(request(r#"{"baycomp": true, "method_effects": "pooled"}"#).across_options()).0,
        "method_effects"
    );
    assert_eq!(refused(request(r#"{"priors": {"tau": "bogus(1)"}}"#).family()).0, "prior_tau");
    // Each model takes its own priors, by name.
    assert_eq!(refused(request(r#"{"priors": {"phi": "exponential(1)"}}"#).family()).0, "prior_phi");
    let bb = request(r#"{"family": "beta_binomial", "priors": {"sigma": "half_normal(1)"}}"#);
    assert_eq!(refused(bb.family()).0, "prior_sigma");
    assert_eq!(refused(request(r#"{"priors": {"mu0": "normal(0, 1)"}}"#).across_options()).0, "prior_mu0");
    let across = request(r#"{"priors": {"tau_u": "half_normal(0.5)", "sigma": "half_normal(2)"}}"#);
    let o = across.across_options().unwrap();
    assert_eq!(o.model.priors.tau_u, "half_normal(0.5)".parse().unwrap());
    assert_eq!(o.model.priors.sigma, "half_normal(2)".parse().unwrap());
    let baycomp = request(r#"{"baycomp": true, "priors": {"df": "gamma(2, 0.1)"}}"#);
    assert_eq!(refused(baycomp.across_options()).0, "prior_df");
    // Unknown fields are an error, not ignored.
    assert!(serde_json::from_str::<FitRequest>(r#"{"shared_sigmas": true}"#).is_err());
}

#[test]
fn names_read_as_the_faces_write_them() {
    let r = request(r#"{"family": "beta-binomial", "across_scale": "per_dataset", "max_energy_error": "none"}"#);
    assert_eq!(r.family, FamilyName::BetaBinomial);
    assert_eq!(r.across_scale, Some(AcrossScale::PerDataSet));
    assert_eq!(r.sampler().map(|s| s.walnuts()).unwrap(), None);
    assert_eq!(refused(request(r#"{"max_energy_error": -1}"#).sampler()).0, "max_energy_error");
    let rendered = Error::refused("student_t", true, "no Student-t here").instead("interaction", "student_t");
    assert_eq!(rendered.to_string(), "student_t: no Student-t here; use interaction = student_t");
}

#[test]
fn shared_sigma_given_either_way_is_refused_where_there_is_no_such_sigma() {
    let sigma = |json: &str| match request(json).family().unwrap() {
        Family::Gaussian(o) => o.sigma,
        other => panic!("{other:?}"),
    };
    assert_eq!(sigma(r#"{"shared_sigma": true}"#), SigmaStructure::Shared);
    assert_eq!(sigma(r#"{"shared_sigma": false}"#), SigmaStructure::PerMethod);
    assert_eq!(sigma(r#"{"model": "additive"}"#), SigmaStructure::PerMethod);
    for value in ["true", "false"] {
        let bb = format!(r#"{{"family": "beta_binomial", "shared_sigma": {value}}}"#);
        assert_eq!(refused(request(&bb).family()).0, "shared_sigma");
        let (o, instead) = refused(request(&format!(r#"{{"shared_sigma": {value}}}"#)).across_options());
        assert_eq!((o.as_str(), instead), ("shared_sigma", Some(("across_sigma".into(), "per_method".into()))));
    }
}

#[test]
fn the_across_model_refuses_chees_options_without_pointing_to_chees() {
    for json in [r#"{"superchains": 4}"#, r#"{"chains_per_superchain": 2}"#] {
        let (_, instead) = refused(request(json).across_options());
        assert_eq!(instead, None);
    }
    let (o, instead) = refused(request(r#"{"backend": "cuda"}"#).across_options());
    assert_eq!((o.as_str(), instead), ("backend", Some(("backend".into(), "cpu".into()))));
    assert!(request(r#"{"backend": "cpu", "max_depth": 12}"#).across_options().is_ok());
}

#[test]
fn a_rope_that_is_not_a_positive_half_width_is_refused_before_fitting() {
    for eps in [0.0, -0.1, f64::INFINITY, f64::NAN] {
        let r = FitRequest { rope: Some(eps), ..FitRequest::default() };
        assert_eq!(refused(r.check_rope()).0, "rope");
    }
    assert!(request(r#"{"rope": 0.01}"#).check_rope().is_ok());
    let g = ["A", "A", "B", "B"].map(String::from).to_vec();
    let d = crate::compare::Design::new(g, None, vec![0.1, 0.2, 0.3, 0.5], None).unwrap();
    // Refused before sampling: no progress is reported.
    let r = request(r#"{"rope": 0}"#).fit(&d, &|_, _| panic!("sampled"));
    assert_eq!(refused(r).0, "rope");
    let a = crate::compare::AcrossDesign::new(
        ["x", "x", "y", "y"].map(String::from).to_vec(),
        ["A", "B", "A", "B"].map(String::from).to_vec(),
        None,
        vec![0.1, 0.2, 0.3, 0.5],
    )
    .unwrap();
    assert_eq!(refused(request(r#"{"rope": -1}"#).fit_across(&a, &|_, _| panic!("sampled"))).0, "rope");
}
