//! The Bradley-Terry fit of a pool of agents.

/// Bradley-Terry on a synthetic pool whose results are exactly the model's
/// expectations for strengths 4 : 2 : 1 (p(a over b) = 4 / 6, a over c
/// 4 / 5, b over c 2 / 3, 30 games a pairing): the maximum-likelihood fit
/// is those strengths, so the ratings are 400 log10 of them, centred:
/// a - b = b - c = 400 log10 2 = 120.41 Elo.
#[test]
fn bradley_terry_recovers_a_pool_fitted_by_hand() {
    use analysis::{Game, bradley_terry};
    let g = |a: &str, b: &str, score_a: f64| Game {
        a: a.into(),
        b: b.into(),
        score_a,
        n: 30.0,
    };
    let r = bradley_terry(&[g("a", "b", 20.0), g("a", "c", 24.0), g("c", "b", 10.0)]);
    let step = 400.0 * 2f64.log10();
    let names: Vec<&str> = r.iter().map(|x| x.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c"]);
    assert!((r[0].elo - step).abs() < 1e-6, "{r:?}");
    assert!(r[1].elo.abs() < 1e-6, "{r:?}");
    assert!((r[2].elo + step).abs() < 1e-6, "{r:?}");
    assert_eq!(r[0].games, 60);
    assert!((r[0].score - 44.0 / 60.0).abs() < 1e-12);
    // Two players: the closed form. Elo = 400 log10(w / (n - w)), split
    // about 0; the variance of the log-strength gap is 1 / (n p (1 - p)).
    let two = bradley_terry(&[Game {
        a: "x".into(),
        b: "y".into(),
        score_a: 75.0,
        n: 100.0,
    }]);
    let gap = 400.0 * 3f64.log10();
    assert!((two[0].elo - two[1].elo - gap).abs() < 1e-6, "{two:?}");
    let sd_gap = (1.0 / (100.0 * 0.75 * 0.25f64)).sqrt() * 400.0 / std::f64::consts::LN_10;
    // Centred, each rating carries half the gap's standard deviation.
    let half = (two[0].ci_high - two[0].ci_low) / 2.0 / 1.959964;
    assert!((half - sd_gap / 2.0).abs() < 1e-6, "{half} vs {}", sd_gap / 2.0);
    // LOS of x over y: Phi(gap / sd_gap).
    let los = two[0].los_next.unwrap();
    let z = gap / sd_gap;
    assert!(los > 0.999 && los < 1.0, "{los} at z = {z}");
    // A player who won everything still gets a finite rating (one virtual
    // draw a pairing), above the rest.
    let sweep = bradley_terry(&[g("p", "q", 30.0), g("q", "r", 15.0)]);
    assert_eq!(sweep[0].name, "p");
    assert!(sweep.iter().all(|x| x.elo.is_finite() && x.ci_low.is_finite()));
}
