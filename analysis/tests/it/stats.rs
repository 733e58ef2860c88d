//! The significance tests against values worked by hand and against SciPy.

use std::process::Command;

use analysis::stats;

use crate::{close, moments};

#[test]
fn statistics_against_values_worked_by_hand() {
    // erfc(x) = 2 P(Z > x sqrt(2)) = P(chi2_1 > 2 x^2), against tabulated erfc.
    assert_eq!(stats::normal_sf(0.0), 0.5);
    for (x, erfc) in [
        (1.0f64, 0.157_299_207_050_285_13),
        (2.0, 0.004_677_734_981_047_266),
        (-1.0, 1.842_700_792_949_714_8),
    ] {
        let sf = 2.0 * stats::normal_sf(x * std::f64::consts::SQRT_2);
        assert!(close(sf, erfc, 1e-12), "erfc({x}): {sf}");
        if x > 0.0 {
            let chi = stats::chi_square_sf(1.0, 2.0 * x * x);
            assert!(close(chi, erfc, 1e-12), "erfc({x}): {chi}");
        }
    }
    // Chi-square with 2 degrees of freedom: P(X > x) = exp(-x / 2).
    assert!(close(stats::chi_square_sf(2.0, 3.0), (-1.5f64).exp(), 1e-12));
    assert!(stats::chi_square_sf(0.0, 1.0).is_nan());
    assert!(close(stats::normal_sf(stats::Z95), 0.025, 1e-12));
    assert!(close(stats::normal_sf(stats::Z95_ONE), 0.05, 1e-12));

    // Eq. 10: M* 1,2,3,4 (mean 2.5, population variance 1.25), EM 0,0,2,2 (1, 1):
    // sigma = sqrt(1.25/4 + 1/4) = 0.75, z = 1.5 / 0.75 = 2.
    let t = stats::diff_of_means(&moments(&[1.0, 2.0, 3.0, 4.0]), &moments(&[0.0, 0.0, 2.0, 2.0]));
    assert!(close(t.diff, 1.5, 1e-12) && close(t.sigma, 0.75, 1e-12) && close(t.z, 2.0, 1e-12));
    assert!(close(t.p, 0.022_750_131_948_179_2, 1e-9));
    assert!(t.significant);

    // Eq. 11: 60 vs 50 wins of 100: p0 = 0.5, se = 0.05, z = 2, two-tailed p = 0.0455.
    let b = stats::binomial_test(60, 50, 100);
    assert_eq!(b.diff, 10);
    assert!(close(b.z, 2.0, 1e-12) && close(b.p, 0.045_500_263_896_358_4, 1e-9));
    assert!(b.significant);
    assert!(!stats::binomial_test(52, 50, 100).significant);

    // Paired: d = 1..5, mean 3, sample sd sqrt(2.5), se sqrt(0.5).
    let p = stats::paired_test(&moments(&[1.0, 2.0, 3.0, 4.0, 5.0]));
    assert!(close(p.mean, 3.0, 1e-12) && close(p.sd, 2.5f64.sqrt(), 1e-12));
    assert!(close(p.ci_low, 3.0 - stats::Z95 * 0.5f64.sqrt(), 1e-12));
    assert!(close(p.z, 3.0 / 0.5f64.sqrt(), 1e-12));

    // McNemar: b = 10, c = 2: chi2 = 64 / 12.
    let m = stats::mcnemar(10, 2);
    assert!(close(m.chi2, 64.0 / 12.0, 1e-12));
    assert!(close(m.p, 0.020_921_335_337_794_2, 1e-9));
    assert!(m.significant);
    assert_eq!(stats::mcnemar(0, 0).p, 1.0);
}

/// The same statistics from scipy (installed by scripts/ci.sh) on fixed
/// inputs, to 1e-12: statrs's own `Normal::sf` would miss that by a wide
/// margin (see `stats::normal_sf`).
#[test]
fn statistics_agree_with_scipy() {
    let zs = [-3.5, -1.0, 0.0, 0.3, 1.2, 1.644_853_6, 2.5, 4.0, 6.0, 8.5];
    let chis = [0.1, 1.0, 3.841_458_820_694_124, 5.333_333_333_333_333, 12.0, 40.0];
    // The workers' test has W - 1 degrees of freedom.
    let dfs = [2.0, 3.0, 7.0, 30.0];
    let d: Vec<f64> = (0..2000)
        .map(|i| ((i * 7919 % 23) as f64 - 10.0) * 0.5 + (i % 3) as f64)
        .collect();
    let script = format!(
        "import numpy as np\nfrom scipy import stats\nzs = {zs:?}\nchis = {chis:?}\ndfs = {dfs:?}\nd = np.array({d:?})\n\
         print(' '.join(repr(float(stats.norm.sf(z))) for z in zs))\n\
         print(' '.join(repr(float(stats.chi2.sf(c, 1))) for c in chis))\n\
         print(' '.join(repr(float(stats.chi2.sf(c, k))) for k in dfs for c in chis))\n\
         se = d.std(ddof=1) / np.sqrt(len(d))\n\
         print(repr(float(d.mean())), repr(float(d.std(ddof=1))), repr(float(2 * stats.norm.sf(abs(d.mean()) / se))))\n"
    );
    let out = Command::new("python3")
        .arg("-c")
        .arg(&script)
        .output()
        .expect("python3 is needed for this test");
    assert!(
        out.status.success(),
        "scipy failed (python3 -m pip install scipy): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<Vec<f64>> = text
        .lines()
        .map(|l| l.split_whitespace().map(|v| v.parse().unwrap()).collect())
        .collect();
    assert_eq!(lines[0].len(), zs.len());
    for (z, want) in zs.iter().zip(&lines[0]) {
        let got = stats::normal_sf(*z);
        assert!(close(got, *want, 1e-12), "sf({z}): {got} vs scipy {want}");
    }
    assert_eq!(lines[1].len(), chis.len());
    for (c, want) in chis.iter().zip(&lines[1]) {
        // McNemar's p-value is the chi-square(1) tail.
        let got = stats::chi_square_sf(1.0, *c);
        assert!(close(got, *want, 1e-12), "chi2 sf({c}): {got} vs scipy {want}");
    }
    let by_df = dfs.iter().flat_map(|k| chis.iter().map(move |c| (*k, *c)));
    assert_eq!(lines[2].len(), dfs.len() * chis.len());
    for ((k, c), want) in by_df.zip(&lines[2]) {
        let got = stats::chi_square_sf(k, c);
        assert!(close(got, *want, 1e-12), "chi2 sf({c}, {k}): {got} vs scipy {want}");
    }
    let p = stats::paired_test(&moments(&d));
    assert!(close(p.mean, lines[3][0], 1e-12));
    assert!(close(p.sd, lines[3][1], 1e-12));
    assert!(close(p.p, lines[3][2], 1e-12), "{} vs {}", p.p, lines[3][2]);
    let m = stats::mcnemar(30, 12);
    let out = Command::new("python3")
        .arg("-c")
        .arg("from scipy import stats; print(repr(float(stats.chi2.sf((30-12)**2/42, 1))))")
        .output()
        .unwrap();
    let want: f64 = String::from_utf8(out.stdout).unwrap().trim().parse().unwrap();
    assert!(close(m.p, want, 1e-12), "{} vs {want}", m.p);
}
