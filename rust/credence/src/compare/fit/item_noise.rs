//! What a fit of per-item scores says of each method's test and training noise.

/// The per-item summary of a fit of per-item scores: the items' account and, per method, its
/// test and training noise from the draws of tau\[m\].
pub(super) fn item_summary(fit: &super::Fit) -> crate::Result<Option<crate::compare::ItemSummary>> {
    let Some(stats) = fit.design().items() else { return Ok(None) };
    let own = stats.own_noise();
    let mut summary = stats.summary();
    for method in fit.design().groups() {
        let draws = fit.draws(&format!("tau[{method}]"))?.concat();
        let tau2 = draws.iter().map(|t| t * t).sum::<f64>() / draws.len() as f64;
        let tau = draws.iter().sum::<f64>() / draws.len() as f64;
        let test = stats.method(method).map_or(f64::NAN, |k| own[k]);
        summary.methods.push(crate::compare::ItemNoise {
            method: method.clone(),
            test_sd: test.sqrt(),
            training_sd: tau,
            test_share: test / (test + tau2),
        });
    }
    Ok(Some(summary))
}
