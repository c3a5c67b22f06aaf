//! The larger simulation-based calibration run (the test suite runs 200 simulations per model):
//! ranks of the true values among thinned posterior draws for both hierarchical models, a
//! chi-square table, the ranks as CSV and one SVG rank histogram per model with the 99% band
//! of a uniform histogram.
//!
//! Run: `cargo run --release -p credence --example sbc_report -- [OUT_DIR] [N_SIMS]`
//! (defaults: target/sbc, 1000).

use std::fmt::Write as _;
use std::path::PathBuf;

use credence::compare::{SbcOptions, SbcResult, sbc};

use credence_testkit::sbc_cases;

const BINS: usize = 20;

/// Histogram of ranks per quantity with the 99% band of Binomial(n, 1/BINS) counts.
fn svg(title: &str, result: &SbcResult) -> String {
    let (w, h, pad) = (220.0, 140.0, 20.0);
    let cols = result.quantities.len();
    let n = result.ranks[0].len() as f64;
    let expected = n / BINS as f64;
    let sd = (n * (1.0 / BINS as f64) * (1.0 - 1.0 / BINS as f64)).sqrt();
    let (lo, hi) = (expected - 2.576 * sd, expected + 2.576 * sd);
    let ymax = result
        .ranks
        .iter()
        .map(|r| {
            let mut c = [0usize; BINS];
            r.iter().for_each(|&x| c[x * BINS / (result.thin_to + 1)] += 1);
            *c.iter().max().unwrap_or(&1) as f64
        })
        .fold(hi, f64::max)
        * 1.1;
    let mut s = String::new();
    let total_w = cols as f64 * (w + pad) + pad;
    let _ = write!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{total_w}" height="{}" font-family="sans-serif" font-size="11">"#,
        h + 60.0
    );
    let _ = write!(
        s,
        r#"<text x="{pad}" y="16" font-size="13">{title}: SBC rank histograms ({n} simulations, {BINS} bins; grey: 99% band of a uniform histogram)</text>"#
    );
    for (q, (name, ranks)) in result.quantities.iter().zip(&result.ranks).enumerate() {
        let x0 = pad + q as f64 * (w + pad);
        let y0 = 30.0;
        let mut c = [0usize; BINS];
        ranks.iter().for_each(|&x| c[x * BINS / (result.thin_to + 1)] += 1);
        let y = |v: f64| y0 + h - v / ymax * h;
        let _ = write!(s, r##"<rect x="{x0}" y="{}" width="{w}" height="{}" fill="#dddddd"/>"##, y(hi), y(lo) - y(hi));
        let bw = w / BINS as f64;
        for (b, &count) in c.iter().enumerate() {
            let top = y(count as f64);
            let _ = write!(
                s,
                r##"<rect x="{}" y="{top}" width="{}" height="{}" fill="#0072b2" fill-opacity="0.8"/>"##,
                x0 + b as f64 * bw + 1.0,
                bw - 2.0,
                y0 + h - top
            );
        }
        let _ = write!(
            s,
            r##"<line x1="{x0}" x2="{}" y1="{}" y2="{}" stroke="#d55e00"/>"##,
            x0 + w,
            y(expected),
            y(expected)
        );
        let _ = write!(s, r#"<text x="{x0}" y="{}">{name}</text>"#, y0 + h + 16.0);
        let _ =
            write!(s, r##"<text x="{x0}" y="{}" fill="#555555">rank 0 .. {}</text>"##, y0 + h + 30.0, result.thin_to);
    }
    s.push_str("</svg>\n");
    s
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let out = PathBuf::from(args.get(1).map_or("target/sbc", String::as_str));
    let n_sims: usize = args.get(2).map_or(Ok(1000), |s| s.parse())?;
    std::fs::create_dir_all(&out)?;
    let options = SbcOptions { n_sims, ..Default::default() };

    let runs = [sbc_cases::gaussian(), sbc_cases::beta_binomial()];
    println!("| model | quantity | chi-square (df 19) | p-value |");
    println!("|---|---|---|---|");
    for sbc_cases::Case { name, template, family, quantities } in runs {
        let t = std::time::Instant::now();
        let result = sbc(&template, &family, &quantities, &options)?;
        for test in result.chi_square(BINS)? {
            println!("| {name} | {} | {:.1} | {:.3} |", test.quantity, test.chi_square, test.p_value);
        }
        eprintln!(
            "{name}: {n_sims} fits in {:.1} s, {} divergences in total",
            t.elapsed().as_secs_f64(),
            result.divergences
        );
        let mut csv = format!("simulation,{}\n", result.quantities.join(","));
        for s in 0..n_sims {
            let row: Vec<String> = result.ranks.iter().map(|r| r[s].to_string()).collect();
            let _ = writeln!(csv, "{s},{}", row.join(","));
        }
        std::fs::write(out.join(format!("sbc_{name}_ranks.csv")), csv)?;
        std::fs::write(out.join(format!("sbc_{name}.svg")), svg(name, &result))?;
    }
    eprintln!("wrote ranks and plots to {}", out.display());
    Ok(())
}
