//! The SPRT's arithmetic: the pentanomial GSPRT against values computed
//! independently (fishtest's `LLR_alt2` worked with SciPy's root finder),
//! regularized empty categories, the walk pair by pair, the error rates
//! over simulated runs, and the shard size under `[stop]`.

use jobs::Spec;
use jobs::sprt::{ShardPairs, Tally, Verdict, Walk, elo_score, logistic_elo};

fn elo(h0: f64, h1: f64) -> jobs::Sprt {
    jobs::Sprt {
        on: jobs::SprtOn::Elo,
        h0,
        h1,
        alpha: 0.05,
        beta: 0.05,
    }
}

/// Reference values: fishtest's stats/LLRcalc.py `LLR_alt2` on
/// `regularize`d counts, computed in Python with scipy.optimize.brentq for
/// the secular equation (an implementation independent of this crate's
/// bisection).
#[test]
fn the_gsprt_matches_fishtests_llr_computed_independently() {
    let cases: [([u64; 5], f64, f64, f64); 3] = [
        ([0, 2, 5, 3, 0], 0.0, 20.0, 0.09819906153165793),
        ([3, 10, 40, 20, 7], -10.0, 0.0, 1.2709859829174368),
        ([0, 0, 16, 0, 0], 0.0, 30.0, -1.4335705241631265),
    ];
    for (penta, h0, h1, want) in cases {
        let got = elo(h0, h1).llr(&Tally::of_penta(penta));
        assert!((got - want).abs() < 1e-9, "{penta:?} [{h0}, {h1}]: {got} vs {want}");
    }
    // The score difference: pair means -1.5 (2), 0 (3), 2.5 (5); H0 0, H1
    // 1; regularizing points at -1.5 - 4 and 2.5 + 4.
    let mut t = Tally::default();
    for (d1, d2, n) in [(-3, 0, 2), (1, -1, 3), (5, 0, 5)] {
        for _ in 0..n {
            t.add(d1, d2);
        }
    }
    let diff = jobs::Sprt {
        on: jobs::SprtOn::ScoreDiff,
        ..elo(0.0, 1.0)
    };
    let got = diff.llr(&t);
    assert!((got - 1.2249243698607974).abs() < 1e-9, "{got}");
    let (lo, hi) = diff.bounds();
    assert!((lo - (0.05f64 / 0.95).ln()).abs() < 1e-15 && (hi - (0.95f64 / 0.05).ln()).abs() < 1e-15);
    assert!((logistic_elo(elo_score(37.0)) - 37.0).abs() < 1e-9);
}

/// A walk over `pairs` in shards of `per` pairs: the verdict, the pair
/// and the shard where it decided.
fn walk_pairs(t: &jobs::Sprt, pairs: &[[i32; 2]], per: usize) -> Walk {
    let mut w = Walk::new(*t);
    for chunk in pairs.chunks(per) {
        if w.step(&ShardPairs { pairs: chunk.to_vec() }) != Verdict::Undecided {
            break;
        }
    }
    w
}

#[test]
fn identical_agents_accept_h0_instead_of_dividing_by_zero() {
    // Every pair one win each: the true difference is exactly elo0.
    let t = elo(0.0, 30.0);
    let w = walk_pairs(&t, &[[5, -5]; 4000], 16);
    assert_eq!(w.verdict, Verdict::H0, "LLR {}", w.llr);
    assert!(w.total().pairs() < 100, "{} pairs", w.total().pairs());
    // The same on the score difference: every pair's mean is 0.
    let d = jobs::Sprt {
        on: jobs::SprtOn::ScoreDiff,
        ..elo(0.0, 2.0)
    };
    assert_eq!(walk_pairs(&d, &[[5, -5]; 4000], 16).verdict, Verdict::H0);
}

#[test]
fn the_walk_decides_at_the_first_pair_past_a_bound_whatever_the_shard_size() {
    let t = elo(0.0, 50.0);
    // A planted difference: 3 pairs in 4 won outright, 1 lost.
    let pairs: Vec<[i32; 2]> = (0..4000).map(|i| if i % 4 == 3 { [-3, -3] } else { [3, 3] }).collect();
    let by_one = walk_pairs(&t, &pairs, 1);
    assert_eq!(by_one.verdict, Verdict::H1);
    let n = by_one.trace.len();
    assert_eq!(n as u64, by_one.total().pairs(), "one trace point a pair");
    assert!(by_one.trace[n - 1].llr >= t.bounds().1 && by_one.trace[n - 2].llr < t.bounds().1);
    for per in [3, 16, 1000] {
        let w = walk_pairs(&t, &pairs, per);
        assert_eq!(w.total(), by_one.total(), "shards of {per}");
        assert_eq!(
            w.trace,
            by_one
                .trace
                .iter()
                .map(|p| jobs::sprt::TracePoint {
                    shard: (p.pairs - 1) / per as u64,
                    ..*p
                })
                .collect::<Vec<_>>()
        );
        assert_eq!(w.decided_at(), Some((n as u64 - 1) / per as u64));
    }
    // Too few pairs to say anything.
    assert_eq!(walk_pairs(&t, &pairs[..3], 16).verdict, Verdict::Undecided);
}

/// A small seeded generator (SplitMix64) for simulated pairs.
struct Mix(u64);
impl Mix {
    fn unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Pairs drawn from a pentanomial whose expected score is `elo_score(e)`:
/// games independent, each a win with probability `w`, a draw `d`.
fn simulate(t: &jobs::Sprt, e: f64, seed: u64) -> Verdict {
    let d = 0.3;
    let w = elo_score(e) - d / 2.0;
    let mut g = Mix(seed);
    let game = |g: &mut Mix| {
        let u = g.unit();
        if u < w {
            1
        } else if u < w + d {
            0
        } else {
            -1
        }
    };
    let mut walk = Walk::untraced(*t);
    for _ in 0..200 {
        let pairs: Vec<[i32; 2]> = (0..16).map(|_| [game(&mut g), game(&mut g)]).collect();
        if walk.step(&ShardPairs { pairs }) != Verdict::Undecided {
            break;
        }
    }
    walk.verdict
}

#[test]
fn over_many_simulated_runs_the_errors_stay_near_alpha_and_beta() {
    let t = elo(0.0, 60.0);
    let runs = 300;
    let count = |e: f64, v: Verdict| (0..runs).filter(|s| simulate(&t, e, 1000 + s) == v).count();
    // No difference: H1 accepted about alpha of the time (5%: 15 of 300;
    // 30 is beyond four standard deviations of a binomial at 5%).
    let false_h1 = count(0.0, Verdict::H1);
    assert!(false_h1 <= 30, "{false_h1} of {runs} runs accepted H1 at 0 Elo");
    let true_h0 = count(0.0, Verdict::H0);
    assert!(true_h0 >= 240, "{true_h0} of {runs} runs accepted H0 at 0 Elo");
    // The difference H1 names: H0 accepted about beta of the time.
    let false_h0 = count(60.0, Verdict::H0);
    assert!(false_h0 <= 30, "{false_h0} of {runs} runs accepted H0 at +60 Elo");
    // A planted 100-Elo difference, well past H1: H1 in all but a rare run.
    let strong = count(100.0, Verdict::H1);
    assert!(strong >= 297, "{strong} of {runs} runs accepted H1 at +100 Elo");
}

const AB: &str = r#"
name = "ab"
seed = 2
[rules]
preset = "all-fives"
[grid]
observability = ["full"]
information_source = ["oracle"]
starting_states = "spread:50"
repeats = 1
agents = ["a"]
opponents = ["random"]
[search]
depth = 2
[agents.a]
engine = "expectimax"
[stop]
sprt = { elo0 = 0, elo1 = 50, alpha = 0.05, beta = 0.05 }
"#;

#[test]
fn with_stop_shards_hold_at_most_sixteen_pairs() {
    let cap = jobs::sprt::MAX_STOP_SHARD_GAMES;
    assert_eq!(cap, 32);
    assert_eq!(Spec::from_toml(AB).unwrap().shard_games, cap);
    assert_eq!(
        Spec::from_toml(&format!("{AB}[shards]\ngames = 10\n"))
            .unwrap()
            .shard_games,
        10
    );
    let e = Spec::from_toml(&format!("{AB}[shards]\ngames = 5040\n")).unwrap_err();
    assert_eq!(e.key(), Some("shards.games"), "{e}");
    assert!(e.to_string().contains("at most 32"), "{e}");
    let m = Spec::from_toml(&format!("{AB}[shards]\nminutes = 60\n")).unwrap();
    assert_eq!(m.shard_games, cap, "minutes are capped under [stop]");
    // Without [stop] the default is unchanged.
    let plain = AB.split("[stop]").next().unwrap();
    assert_eq!(Spec::from_toml(plain).unwrap().shard_games, jobs::DEFAULT_SHARD_GAMES);
}
