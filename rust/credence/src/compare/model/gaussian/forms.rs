//! How the sampler sees the method and realization blocks: centred, non-centred or through
//! the realization block's exact conditional, chosen once from the data.

use crate::compare::model::design::Design;
use crate::compare::model::{GaussianOptions, Likelihood, Parameterization};

/// How the sampler sees the method and realization blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Forms {
    /// Per method.
    pub(super) centered_mu: Vec<bool>,
    pub(super) centered_gamma: bool,
    pub(super) conditional_gamma: bool,
    /// With gamma integrated out and the method block centred, the method whose mean is
    /// sampled as is; the others are sampled as differences from it (see [`Self::choose`]).
    pub(super) reference: Option<usize>,
}

impl Forms {
    /// Chooses the parameterisation from the data.
    ///
    /// - The method block is centred when its likelihood is informative relative to the
    ///   spread it is drawn from (the median standard error of a method mean below the spread
    ///   of the method means), which is when the non-centred form develops a funnel and the
    ///   centred one does not (measured: 27 divergences and bulk-ESS 102 non-centred against
    ///   none and > 1000 centred on a 6 x 50 design). Each method's standard error uses its
    ///   own residual sd: a pooled sd is dominated by one heavy-tailed method. The block is
    ///   centred as a whole: non-centring only the one weakly informed method (SWAG on the
    ///   study's table) was measured worse (n = 50: 116 divergences against 3; n = 30: R-hat
    ///   1.77 against 1.002), because the well-informed methods already keep tau away from 0.
    /// - With a Normal likelihood the realization block is integrated out
    ///   ([`Parameterization::Conditional`]): sampled gamma form a funnel with the sd of any
    ///   method whose metric tracks the realization closely (measured on the study's own
    ///   table at n = 100: sigma\[ensemble\] R-hat 1.38, bulk-ESS 10 with gamma centred).
    ///   Otherwise it is centred or not by the same rule as the methods.
    /// - Integrating gamma out leaves the method means correlated through the unknown mean of
    ///   the realization effects: the data fix differences of means more tightly than the
    ///   means. Sampling the most precise method's mean and the other means as differences
    ///   from it removes that direction (the differences are correlated only through the
    ///   reference's own small sd).
    pub(super) fn choose(design: &Design, opts: &GaussianOptions, effect: bool) -> Forms {
        let (m, r) = (design.n_groups(), design.n_pairs());
        let y = design.y();
        let mut sum = vec![0.0; m];
        let mut count = vec![0.0; m];
        for (j, &g) in design.group().iter().enumerate() {
            sum[g] += y[j];
            count[g] += 1.0;
        }
        let means: Vec<f64> = sum.iter().zip(&count).map(|(s, c)| s / c).collect();
        let resid: Vec<f64> = y.iter().zip(design.group()).map(|(v, &g)| v - means[g]).collect();
        let spread = |v: &[f64]| {
            let k = v.len() as f64;
            let mu = v.iter().sum::<f64>() / k;
            (v.iter().map(|x| (x - mu).powi(2)).sum::<f64>() / (k - 1.0).max(1.0)).sqrt()
        };
        // Realization means of the residuals, and each method's residual sd after removing them.
        let mut rmeans = vec![0.0; r];
        let mut rc = vec![0.0f64; r];
        if r > 0 {
            for (j, &p) in design.pair().iter().enumerate() {
                rmeans[p] += resid[j];
                rc[p] += 1.0;
            }
            rmeans.iter_mut().zip(&rc).for_each(|(s, c)| *s /= c.max(1.0));
        }
        let mut ss = vec![0.0; m];
        for (j, &g) in design.group().iter().enumerate() {
            let e = resid[j] - if effect { rmeans[design.pair()[j]] } else { 0.0 };
            ss[g] += e * e;
        }
        let sd: Vec<f64> = ss.iter().zip(&count).map(|(s, c)| (s / (c - 1.0).max(1.0)).sqrt()).collect();
        let auto_mu = m >= 2 && {
            let mut se: Vec<f64> = sd.iter().zip(&count).map(|(s, c)| s / c.sqrt()).collect();
            se.sort_by(f64::total_cmp);
            se[se.len() / 2] < spread(&means)
        };
        let auto_gamma = r >= 2 && {
            let pooled = ss.iter().sum::<f64>() / (y.len() as f64 - m as f64).max(1.0);
            let noise = rc.iter().map(|c| pooled / c.max(1.0)).sum::<f64>() / r as f64;
            let between = (spread(&rmeans).powi(2) - noise).max(0.0).sqrt();
            noise.sqrt() < between
        };
        let pick = |p: Parameterization, auto: bool| match p {
            Parameterization::Auto | Parameterization::Conditional | Parameterization::Collapsed => auto,
            Parameterization::Centered => true,
            Parameterization::NonCentered => false,
        };
        let conditional_gamma = effect
            && opts.likelihood == Likelihood::Normal
            && matches!(
                opts.gamma_parameterization,
                Parameterization::Auto | Parameterization::Conditional | Parameterization::Collapsed
            );
        let centered_mu = vec![pick(opts.mu_parameterization, auto_mu); m];
        let centred: Vec<usize> = (0..m).filter(|&g| centered_mu[g]).collect();
        let reference = if conditional_gamma && centred.len() >= 2 {
            centred.iter().copied().min_by(|&a, &b| sd[a].total_cmp(&sd[b]))
        } else {
            None
        };
        Forms {
            centered_mu,
            centered_gamma: pick(opts.gamma_parameterization, auto_gamma),
            conditional_gamma,
            reference,
        }
    }
}
