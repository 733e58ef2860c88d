//! Training as an experiment (`jobs::train`): the spec's refusals, the rows
//! self-play writes, determinism over thread counts, and the same final
//! network after a stop anywhere and a resume.

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use jobs::train::{Summary, TrainSearch, TrainSpec, TrainSpecError, Trainer, read_train};

const TINY: &str = r#"
name = "tiny"
seed = 5

[train]
game = "block"
generations = 2
games = 240
shard_games = 60
hidden = [16]
population_share = 0.5

[train.fit]
epochs = 2
batch = 64
learning_rate = 0.003

[train.gate]
pairs = 40

[train.eval]
pairs = 30
anchors = ["random", "heaviest", "ismcts:200x4"]
"#;

/// Runs `spec` in `dir` on `threads` threads, setting the stop flag when a
/// progress line contains `stop_at`; the summary (`None` when stopped).
pub(crate) fn train(spec: &TrainSpec, dir: &Path, threads: usize, stop_at: Option<&str>) -> Option<Summary> {
    let stop = AtomicBool::new(false);
    let lines = Mutex::new(Vec::new());
    let progress = |line: &str| {
        if stop_at.is_some_and(|s| line.contains(s)) {
            stop.store(true, Ordering::Relaxed);
        }
        lines.lock().unwrap().push(line.to_string());
    };
    let trainer = Trainer {
        spec,
        dir: dir.to_path_buf(),
        threads,
        stop: &stop,
        progress: &progress,
    };
    trainer.run().unwrap()
}

/// What a summary decides, without wall times and floats read back from
/// JSON (the last digit of a float may differ): the networks' hashes, the
/// rows, the gates' and the anchors' pair counts and verdicts.
fn decided(s: &Summary) -> String {
    let mut out = format!("first {} best {}\n", s.first, s.best);
    for (a, m) in &s.first_anchors {
        out += &format!("  {a} {:?}\n", m.penta);
    }
    for g in &s.generations {
        out += &format!(
            "gen {} by {} rows {} steps {} candidate {} gate {:?} {:?} kept {} best {}\n",
            g.generation,
            g.played_by,
            g.rows,
            g.fit.steps,
            g.candidate,
            g.gate.result.penta,
            g.gate.verdict,
            g.gate.kept_candidate,
            g.best
        );
        for (a, m) in &g.anchors {
            out += &format!("  {a} {:?}\n", m.penta);
        }
    }
    out
}

#[test]
fn refusals_name_the_field_and_the_value() {
    let cases = [
        ("game = \"block\"", "game = \"thesis\"", "train.game = \"thesis\""),
        (
            "game = \"block\"",
            "game = \"all-fives\"",
            "train.eval.anchors = ismcts:200x4: muggins' ISMCTS plays block and team only",
        ),
        ("generations = 2", "generations = 0", "train.generations = 0"),
        ("hidden = [16]", "hidden = []", "train.hidden = []"),
        (
            "hidden = [16]",
            "hidden = [16]\ntemperature = 0.0",
            "train.temperature = 0",
        ),
        (
            "population_share = 0.5",
            "population_share = 1.5",
            "train.population_share = 1.5",
        ),
        (
            "population_share = 0.5",
            "population_share = 0.5\npopulation = [\"mstar\"]",
            "train.population = mstar",
        ),
        ("epochs = 2", "epochs = 2\nclip = 0.0", "train.fit.clip = 0"),
        ("pairs = 40", "pairs = 0", "train.gate.pairs = 0"),
        (
            "\"ismcts:200x4\"",
            "\"ismcts:0x4\"",
            "train.eval.anchors = ismcts:0x4: a budget of 1 to 1000000",
        ),
        (
            "\"ismcts:200x4\"",
            "\"ismcts:200\"",
            "train.eval.anchors = ismcts:200: ismcts:BUDGETxWORLDS",
        ),
        (
            "population_share = 0.5",
            "population_share = 0.5\nsearch = \"guided:0\"",
            "train.search = guided:0: guided:SIMULATIONS takes 1 to 1000000",
        ),
        (
            "population_share = 0.5",
            "population_share = 0.5\nsearch = \"random\"",
            "train.search = random: expected \"ismcts\", \"ismcts:BUDGETxWORLDS\" or \"guided:SIMULATIONS\"",
        ),
        (
            "population_share = 0.5",
            "population_share = 0.5\nsearch = \"mcts\"",
            "train.search = mcts: expected \"ismcts\", \"ismcts:BUDGETxWORLDS\" or \"guided:SIMULATIONS\"",
        ),
        ("name = \"tiny\"", "name = \"../up\"", "name = \"../up\""),
        ("games = 240", "games = 240\ngamez = 3", "unknown field `gamez`"),
    ];
    for (from, to, want) in cases {
        let text = TINY.replacen(from, to, 1);
        let err = TrainSpec::from_toml(&text).unwrap_err();
        assert!(err.to_string().contains(want), "{to}: {err}");
        if want.starts_with("unknown") {
            assert!(matches!(err, TrainSpecError::Toml(_)));
        }
    }
    assert!(jobs::train::is_train_spec(TINY));
    assert!(!jobs::train::is_train_spec(jobs::SMOKE_SPEC));
}

#[test]
fn self_play_rows_are_whole_decisions_with_their_outcomes() {
    let spec = TrainSpec::from_toml(TINY).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let summary = train(&spec, dir.path(), 2, None).unwrap();
    assert_eq!(summary.generations.len(), 2);
    let part = dir.path().join("gen-001/selfplay/part-00000.parquet");
    let rows = read_train(&part).unwrap();
    assert!(rows.len() > 60, "{} rows for 60 games", rows.len());
    let width = full::spiel::SpielState::new(spec.rules(), 0).encoding_size(spec.encoding());
    let mut by_game: std::collections::BTreeMap<u64, Vec<&jobs::train::TrainRow>> = Default::default();
    for r in &rows {
        assert!(r.game_index < 60);
        assert_eq!(r.observation.len(), width);
        assert!(r.legal.len() >= 2 && r.legal.windows(2).all(|w| w[0] < w[1]));
        assert!(r.legal.contains(&r.action));
        let mass: f32 = r.policy.iter().sum();
        assert!((mass - 1.0).abs() < 1e-4, "a distribution: {:?}", r.policy);
        by_game.entry(r.game_index).or_default().push(r);
    }
    for (g, rs) in by_game {
        assert!(rs.windows(2).all(|w| w[0].turn < w[1].turn), "game {g}: turns in order");
        // Block is zero-sum: the two seats' outcomes are opposite.
        for a in &rs {
            for b in &rs {
                if a.seat != b.seat {
                    assert_eq!(a.outcome, -b.outcome, "game {g}");
                } else {
                    assert_eq!(a.outcome, b.outcome, "game {g}");
                }
            }
        }
    }
    // The best network is a model file of the spec, with its provenance.
    let best = net::Model::load(&dir.path().join(jobs::layout::BEST_NET)).unwrap();
    assert_eq!(best.sha256, summary.best);
    assert_eq!(best.meta.provenance.spec_id.as_deref(), Some(spec.id().as_str()));
    assert!(dir.path().join(jobs::layout::TRAIN_SUMMARY).exists());
    // muggins' ISMCTS, an anchor, beats the untrained network.
    let ismcts = &summary.first_anchors[2];
    assert_eq!(ismcts.0, "ismcts:200x4");
    assert!(ismcts.1.score < 0.45, "{:?}", ismcts.1);
}

#[test]
fn the_same_networks_on_any_thread_count_and_after_a_stop_anywhere() {
    let spec = TrainSpec::from_toml(TINY).unwrap();
    let one = tempfile::tempdir().unwrap();
    let first_run = train(&spec, one.path(), 1, None).unwrap();
    assert_ne!(
        first_run.generations[0].candidate, first_run.first,
        "the fit moved the weights"
    );
    let want = decided(&first_run);
    let two = tempfile::tempdir().unwrap();
    assert_eq!(decided(&train(&spec, two.path(), 2, None).unwrap()), want);
    // Stopped mid self-play, after a fit, and mid-gate: each resumes to the
    // same record.
    for stop_at in [
        "generation 2: self-play partitions 1/",
        "generation 1: fit",
        "generation 2: fit",
        "generation 1: gate",
    ] {
        let dir = tempfile::tempdir().unwrap();
        assert!(
            train(&spec, dir.path(), 2, Some(stop_at)).is_none(),
            "{stop_at}: the run stopped"
        );
        assert!(!dir.path().join(jobs::layout::BEST_NET).exists());
        let resumed = decided(&train(&spec, dir.path(), 2, None).unwrap());
        assert_eq!(resumed, want, "stopped at {stop_at}");
    }
}

#[test]
fn another_spec_is_refused_in_the_same_directory() {
    let spec = TrainSpec::from_toml(TINY).unwrap();
    let dir = tempfile::tempdir().unwrap();
    train(&spec, dir.path(), 2, None).unwrap();
    let other = TrainSpec::from_toml(&TINY.replacen("seed = 5", "seed = 6", 1)).unwrap();
    let stop = AtomicBool::new(false);
    let err = Trainer {
        spec: &other,
        dir: dir.path().to_path_buf(),
        threads: 1,
        stop: &stop,
        progress: &|_: &str| {},
    }
    .run()
    .unwrap_err();
    assert!(err.to_string().contains("holds the training of another spec"), "{err}");
}

/// Each shipped network came from the shipped spec beside it: its header
/// names that spec's id (a spec changed since would have another).
#[test]
fn the_shipped_networks_name_the_shipped_specs_that_made_them() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    for name in ["train-block", "train-team"] {
        let text = std::fs::read_to_string(root.join(format!("jobs/specs/{name}.toml"))).unwrap();
        let spec = TrainSpec::from_toml(&text).unwrap();
        let model = net::Model::load(&root.join(format!("models/{name}.safetensors"))).unwrap();
        assert_eq!(
            model.meta.provenance.spec_id.as_deref(),
            Some(spec.id().as_str()),
            "{name}"
        );
        assert_eq!(model.meta.game, spec.train.game);
        assert_eq!(model.meta.hidden, spec.train.hidden);
    }
}

/// A searched share, by muggins' ISMCTS or by the network's own guided
/// search: those rows' policy is the search's visits (a distribution over
/// the legal actions, the played one among the most visited), the others
/// the network's draw; the run stays deterministic.
#[test]
fn searched_decisions_write_the_search_s_visits() {
    for (search, want) in [
        ("ismcts:100x2", TrainSearch::Ismcts { budget: 100, worlds: 2 }),
        ("guided:50", TrainSearch::Guided { simulations: 50 }),
    ] {
        let text = TINY.replacen(
            "population_share = 0.5",
            &format!("population_share = 0.5\nsearched = 0.3\nsearch = \"{search}\""),
            1,
        );
        let spec = TrainSpec::from_toml(&text).unwrap();
        assert_eq!(spec.search(), Some((0.3, want)));
        assert_ne!(spec.id(), TrainSpec::from_toml(TINY).unwrap().id());
        let dir = tempfile::tempdir().unwrap();
        let summary = train(&spec, dir.path(), 2, None).unwrap();
        let rows = read_train(&dir.path().join("gen-001/selfplay/part-00000.parquet")).unwrap();
        let searched: Vec<_> = rows.iter().filter(|r| r.searched).collect();
        assert!(
            searched.len() * 5 > rows.len() && searched.len() * 2 < rows.len(),
            "{search}: {} of {} searched",
            searched.len(),
            rows.len()
        );
        for r in searched {
            let mass: f32 = r.policy.iter().sum();
            assert!((mass - 1.0).abs() < 1e-4, "{search}: {:?}", r.policy);
            let k = r.legal.iter().position(|&l| l == r.action).unwrap();
            let top = r.policy.iter().copied().fold(0.0, f32::max);
            assert_eq!(r.policy[k], top, "{search}: the search plays its most visited: {r:?}");
        }
        let again = tempfile::tempdir().unwrap();
        assert_eq!(
            decided(&train(&spec, again.path(), 1, None).unwrap()),
            decided(&summary),
            "{search}"
        );
    }
}
