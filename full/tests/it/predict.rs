//! Predicting the opponent's play: the models against scikit-learn and
//! SciPy, EM's monotone fit and planted parameters, and the search's
//! shaping (plain where it should be, exact under pruning).

use std::process::Command;
use std::sync::OnceLock;

use engine::PlayerEngine;
use engine::seed::keyed_rng;
use full::predict::{
    BINARY_FEATURES, Dbn, Decision, LOGIT_L2, Logit, NaiveBayes, PLAY_FEATURE_COUNT, POOLED, PredictModel,
    PredictTraining, Predictor, Predictors, TOP_N, TYPES, fit_predictors, logit_objective, predict_decisions, rank_of,
};
use full::{AlphaBeta, Evaluation, FivesPosition, FivesTable, FullRules, FullTarget, Limits, Shaping};

use super::alphabeta::{position, rules};
use engine::{ActionList, TargetKind};

fn training() -> PredictTraining {
    PredictTraining {
        seed: 11,
        hands: 150,
        seats: 2,
    }
}

/// A small fit, shared by the tests.
fn small() -> &'static Predictors {
    static SET: OnceLock<Predictors> = OnceLock::new();
    SET.get_or_init(|| fit_predictors(&training()).expect("fits"))
}

fn python(script: &str, dir: &std::path::Path) -> String {
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .arg(dir)
        .output()
        .expect("python3 is needed for this test");
    assert!(
        out.status.success(),
        "python failed (install scikit-learn and scipy: python3 -m pip install scikit-learn scipy): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn scratch_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("muggins-predict-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Rows of (binary features, class) for every play of every choice.
fn nb_rows(ds: &[Decision]) -> String {
    let mut s = String::new();
    for d in ds.iter().filter(|d| d.is_choice()) {
        for (i, p) in d.plays.iter().enumerate() {
            for x in &p.x[..BINARY_FEATURES] {
                s.push_str(&format!("{x},"));
            }
            s.push_str(if i == d.chosen as usize { "1\n" } else { "0\n" });
        }
    }
    s
}

#[test]
fn naive_bayes_and_its_chi2_selection_equal_scikit_learn() {
    let (train, holdout) = predict_decisions(&training()).unwrap();
    // The scorer's model and the pooled one.
    for k in [1usize, POOLED] {
        let of = |ds: &[Decision]| -> Vec<Decision> {
            ds.iter()
                .filter(|d| k == POOLED || d.kind as usize == k)
                .cloned()
                .collect()
        };
        let (tr, te) = (of(&train), of(&holdout));
        let nb = NaiveBayes::fit(tr.iter());
        let dir = scratch_dir("nb");
        std::fs::write(dir.join("train.csv"), nb_rows(&tr)).unwrap();
        std::fs::write(dir.join("test.csv"), nb_rows(&te)).unwrap();
        let kept = nb.kept.iter().map(|j| j.to_string()).collect::<Vec<_>>().join(",");
        let script = format!(
            "import sys, numpy as np\n\
             from sklearn.feature_selection import chi2\n\
             from sklearn.naive_bayes import BernoulliNB\n\
             tr = np.loadtxt(sys.argv[1] + '/train.csv', delimiter=',')\n\
             te = np.loadtxt(sys.argv[1] + '/test.csv', delimiter=',')\n\
             X, y = tr[:, :-1], tr[:, -1].astype(int)\n\
             s, _ = chi2(X, y)\n\
             print(' '.join(repr(float(v)) for v in np.nan_to_num(s)))\n\
             kept = [{kept}]\n\
             m = BernoulliNB(alpha=1.0).fit(X[:, kept], y)\n\
             print(' '.join(repr(float(v)) for v in m.predict_proba(te[:, :-1][:, kept])[:, 1]))\n"
        );
        let out = python(&script, &dir);
        let mut lines = out.lines();
        let theirs_chi2: Vec<f64> = lines
            .next()
            .unwrap()
            .split_whitespace()
            .map(|v| v.parse().unwrap())
            .collect();
        assert_eq!(theirs_chi2.len(), BINARY_FEATURES);
        for (j, (a, b)) in nb.chi2.iter().zip(&theirs_chi2).enumerate() {
            assert!(
                (a - b).abs() <= 1e-9 * b.abs().max(1.0),
                "chi2 of feature {j}: {a} vs {b}"
            );
        }
        // The kept features are the largest statistics.
        let least_kept = nb.kept.iter().map(|&j| nb.chi2[j]).fold(f64::INFINITY, f64::min);
        assert!((0..BINARY_FEATURES).all(|j| nb.kept.contains(&j) || nb.chi2[j] <= least_kept));
        let theirs: Vec<f64> = lines
            .next()
            .unwrap()
            .split_whitespace()
            .map(|v| v.parse().unwrap())
            .collect();
        let ours: Vec<f64> = te
            .iter()
            .filter(|d| d.is_choice())
            .flat_map(|d| d.plays.iter().map(|p| nb.prob_made(p)))
            .collect();
        assert_eq!(ours.len(), theirs.len());
        assert!(ours.len() > 500, "{} held-out plays", ours.len());
        for (a, b) in ours.iter().zip(&theirs) {
            assert!((a - b).abs() < 1e-9, "P(made) {a} vs scikit-learn {b}");
        }
        std::fs::remove_dir_all(&dir).ok();
    }
}

#[test]
fn the_logit_is_the_penalised_maximum_scipy_finds() {
    let (train, holdout) = predict_decisions(&training()).unwrap();
    let tr: Vec<Decision> = train.iter().filter(|d| d.kind == 2).cloned().collect();
    let logit = Logit::fit(tr.iter());
    // Rows: decision id, chosen flag, features.
    let rows = |ds: &[Decision]| {
        let mut s = String::new();
        for (id, d) in ds.iter().filter(|d| d.is_choice()).enumerate() {
            for (i, p) in d.plays.iter().enumerate() {
                s.push_str(&format!("{id},{}", (i == d.chosen as usize) as u8));
                for x in &p.x {
                    s.push_str(&format!(",{x}"));
                }
                s.push('\n');
            }
        }
        s
    };
    let dir = scratch_dir("logit");
    std::fs::write(dir.join("train.csv"), rows(&tr)).unwrap();
    let script = format!(
        "import sys, numpy as np\n\
         from scipy.optimize import minimize\n\
         from scipy.special import logsumexp\n\
         a = np.loadtxt(sys.argv[1] + '/train.csv', delimiter=',')\n\
         ids, y, X = a[:, 0].astype(int), a[:, 1], a[:, 2:]\n\
         starts = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])\n\
         def f(w):\n\
         \x20   u = X @ w\n\
         \x20   lse = np.array([logsumexp(s) for s in np.split(u, starts[1:])])\n\
         \x20   p = np.exp(u - np.repeat(lse, np.diff(np.r_[starts, len(u)])))\n\
         \x20   ll = (u * y).sum() - lse.sum() - {LOGIT_L2} / 2 * w @ w\n\
         \x20   g = X.T @ (y - p) - {LOGIT_L2} * w\n\
         \x20   return -ll, -g\n\
         r = minimize(f, np.zeros(X.shape[1]), jac=True, method='BFGS', options={{'gtol': 1e-9, 'maxiter': 10000}})\n\
         print(' '.join(repr(float(v)) for v in r.x))\n"
    );
    let theirs: Vec<f64> = python(&script, &dir)
        .split_whitespace()
        .map(|v| v.parse().unwrap())
        .collect();
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(theirs.len(), PLAY_FEATURE_COUNT);
    let ds: Vec<&Decision> = tr.iter().filter(|d| d.is_choice()).collect();
    let (ours_obj, theirs_obj) = (logit_objective(&logit.weights, &ds), logit_objective(&theirs, &ds));
    assert!(
        ours_obj >= theirs_obj - 1e-6,
        "Newton reached {ours_obj}, SciPy {theirs_obj}"
    );
    for (j, (a, b)) in logit.weights.iter().zip(&theirs).enumerate() {
        assert!((a - b).abs() < 1e-3, "weight {j}: {a} vs SciPy {b}");
    }
    // The same ranking of held-out plays.
    let other = Logit {
        weights: theirs,
        ..logit.clone()
    };
    let mut same = 0;
    let mut total = 0;
    let (mut p, mut q) = ([0.0; 64], [0.0; 64]);
    for d in holdout.iter().filter(|d| d.kind == 2 && d.is_choice()) {
        logit.probs(&d.plays, &mut p);
        other.probs(&d.plays, &mut q);
        let n = d.plays.len();
        let top = |v: &[f64]| (0..n).find(|&i| rank_of(&v[..n], i) == 0).unwrap();
        same += (top(&p) == top(&q)) as usize;
        total += 1;
    }
    assert!(total > 100 && same as f64 >= 0.995 * total as f64, "{same}/{total}");
}

/// Sequences from a planted two-state DBN.
fn planted(seqs: usize) -> (Dbn, Vec<Vec<u16>>) {
    let dbn = Dbn {
        initial: vec![0.6, 0.4],
        transition: vec![vec![0.9, 0.1], vec![0.2, 0.8]],
        emission: vec![
            vec![0.9, 0.1, 0.8, 0.3, 0.5, 0.7, 0.2, 0.6, 0.1],
            vec![0.2, 0.7, 0.1, 0.6, 0.5, 0.3, 0.9, 0.2, 0.8],
        ],
        trace: vec![],
    };
    let mut rng = keyed_rng(3, 4, 5, b"testdbn1", 0);
    let mut unit = || (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
    let mut out = Vec::new();
    for _ in 0..seqs {
        let mut s = if unit() < dbn.initial[0] { 0 } else { 1 };
        let mut seq = Vec::new();
        for _ in 0..8 {
            let mut x = 0u16;
            for (j, &q) in dbn.emission[s].iter().enumerate() {
                if unit() < q {
                    x |= 1 << j;
                }
            }
            seq.push(x);
            s = if unit() < dbn.transition[s][0] { 0 } else { 1 };
        }
        out.push(seq);
    }
    (dbn, out)
}

use rand_core::RngCore;

#[test]
fn em_never_lowers_the_log_posterior_and_recovers_planted_parameters() {
    let (truth, seqs) = planted(4000);
    let fit = Dbn::fit(&seqs, 2, &mut keyed_rng(1, 0, 0, b"testdbn2", 0));
    assert!(fit.trace.len() >= 3, "{} iterations", fit.trace.len());
    for w in fit.trace.windows(2) {
        assert!(
            w[1] >= w[0] - 1e-9 * w[0].abs(),
            "the log posterior fell: {} -> {}",
            w[0],
            w[1]
        );
    }
    // The fitted states in the planted order.
    let same = fit.emission[0][0] > fit.emission[1][0];
    let perm = if same { [0, 1] } else { [1, 0] };
    for s in 0..2 {
        for j in 0..9 {
            let (a, b) = (fit.emission[perm[s]][j], truth.emission[s][j]);
            assert!((a - b).abs() < 0.04, "emission {s},{j}: {a} vs planted {b}");
        }
        for t in 0..2 {
            let (a, b) = (fit.transition[perm[s]][perm[t]], truth.transition[s][t]);
            assert!((a - b).abs() < 0.05, "transition {s}->{t}: {a} vs planted {b}");
        }
    }
    // The artifact's DBN was fitted the same way.
    for w in small().dbn.trace.windows(2) {
        assert!(w[1] >= w[0] - 1e-9 * w[0].abs());
    }
}

#[test]
fn a_fit_is_a_pure_function_of_its_training_and_scores_every_model() {
    let a = small();
    let b = fit_predictors(&training()).unwrap();
    assert_eq!(*a, b);
    a.check().unwrap();
    assert_eq!(a.holdout.len(), PredictModel::ALL.len() * TYPES.len());
    for s in &a.holdout {
        assert!(s.decisions > 50, "{s:?}");
        assert_eq!(s.top_n.len(), TOP_N);
        assert!(s.top_n.windows(2).all(|w| w[0] <= w[1]), "{s:?}");
        assert!(s.log_loss.is_finite() && s.log_loss > 0.0);
    }
    // The deterministic strategies are predictable: the logit puts the
    // scorer's play first far more often than chance does.
    let scorer = a
        .holdout
        .iter()
        .find(|s| s.model == "logit" && s.target == "scorer")
        .unwrap();
    assert!(
        scorer.top_n[0] > 0.8 && scorer.top_n[0] > 2.0 / scorer.mean_plays,
        "{scorer:?}"
    );
}

/// One search case: a position searched by `engine` against `model` in
/// every other seat, to `depth`, with the opponents' plays predicted by
/// `predictor`.
struct Case<'a> {
    r: &'a FullRules,
    pos: &'a FivesPosition,
    engine: PlayerEngine,
    model: FullTarget,
    depth: u8,
    predictor: &'a Predictor<'a>,
}

impl Case<'_> {
    /// The root values searched with `shaping` (pruned, or plain), and the
    /// nodes it took.
    fn values(&self, shaping: Shaping, plain: bool) -> (Vec<f64>, u64) {
        let Case {
            r,
            pos,
            engine,
            model,
            depth,
            predictor,
        } = *self;
        let mut table = FivesTable::with_mb(4);
        let mut ab = AlphaBeta::new(r, pos.mover, engine, [model; 4], Evaluation::Score, &mut table);
        if plain {
            ab = ab.plain();
        }
        let mut ab = ab.shaped(shaping, predictor);
        let mut list = ActionList::default();
        pos.actions(r, &mut list);
        let mut out = [0.0; 64];
        ab.root(pos, Limits { depth, budget: 0 }, &mut out);
        (out[..list.len()].to_vec(), ab.nodes())
    }
}

#[test]
fn shaping_that_keeps_every_play_at_its_depth_is_plain_search_and_pruning_keeps_shaped_values() {
    let set = small();
    let all = Shaping::Prune {
        top_n: u8::MAX,
        epsilon_ppm: 0,
    };
    let flat = Shaping::Asymmetric {
        likely: 2,
        extend: 0,
        reduce: 0,
    };
    let shapings = [
        Shaping::Prune {
            top_n: 2,
            epsilon_ppm: 50_000,
        },
        Shaping::Asymmetric {
            likely: 1,
            extend: 1,
            reduce: 1,
        },
        Shaping::Expect,
    ];
    let mut cases = 0;
    let mut fewer = 0;
    for (set_n, seats, teams) in [(4, 2, false), (4, 3, false), (6, 2, false), (6, 4, true)] {
        let r = rules(set_n, seats, teams);
        let depth = if set_n == 4 { 6 } else { 4 };
        for seed in 0..12u64 {
            let Some(pos) = position(&r, seed, 1 + seed % 6) else {
                continue;
            };
            for (engine, model) in [
                (PlayerEngine::Expectimax, FullTarget::Thesis(TargetKind::Scorer)),
                (PlayerEngine::MStar, FullTarget::Thesis(TargetKind::Random)),
                (PlayerEngine::MStar, FullTarget::Searcher),
            ] {
                for m in PredictModel::ALL {
                    let p = Predictor::new(set, m, &[model; 4]);
                    let case = Case {
                        r: &r,
                        pos: &pos,
                        engine,
                        model,
                        depth,
                        predictor: &p,
                    };
                    let (base, base_nodes) = case.values(Shaping::None, false);
                    for s in [all, flat] {
                        let (v, _) = case.values(s, false);
                        assert_eq!(v, base, "{s:?} {engine:?} {model} {m:?}");
                    }
                    for s in shapings {
                        let (pruned, nodes) = case.values(s, false);
                        let (plain, _) = case.values(s, true);
                        for (a, b) in pruned.iter().zip(&plain) {
                            assert!((a - b).abs() < 1e-9, "{s:?} {engine:?} {model} {m:?}: {a} vs {b}");
                        }
                        if matches!(s, Shaping::Prune { .. }) && nodes < base_nodes {
                            fewer += 1;
                        }
                    }
                    cases += 1;
                }
            }
        }
    }
    assert!(cases > 100, "{cases} cases");
    assert!(
        fewer * 2 > cases,
        "pruning saved nodes in only {fewer} of {cases} searches"
    );
}
