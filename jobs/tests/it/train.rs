//! Training as an experiment (`jobs::train`): the spec's refusals, the rows
//! self-play writes, determinism over thread counts, and the same final
//! network after a stop anywhere and a resume.

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use jobs::train::{StartFrom, Summary, TrainSearch, TrainSpec, TrainSpecError, Trainer, read_train};

pub(crate) const TINY: &str = r#"
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
pub(crate) fn decided(s: &Summary) -> String {
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
            "train.population = mstar: M* with learned leaves plays all-fives only",
        ),
        (
            "population_share = 0.5",
            "population_share = 0.5\nsearched = 0.2\nsearch = \"mstar:100x2\"",
            "train.search = mstar:100x2: M* with learned leaves plays all-fives only",
        ),
        (
            "\"ismcts:200x4\"",
            "\"mstar:0x4\"",
            "train.eval.anchors = mstar:0x4: a budget of 1 to 1000000",
        ),
        (
            "hidden = [16]",
            "hidden = [16]\nstart = \"no/such.safetensors\"",
            "train.start = \"no/such.safetensors\"",
        ),
        (
            "hidden = [16]",
            "hidden = [16]\nstart_sha256 = \"00\"",
            "train.start_sha256 = \"00\": muggins writes it from train.start's file",
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
            "train.search = random: expected \"ismcts\", \"ismcts:BUDGETxWORLDS\", \"mstar\", \"mstar:BUDGETxWORLDS\" or \"guided:SIMULATIONS\"",
        ),
        (
            "population_share = 0.5",
            "population_share = 0.5\nsearch = \"mcts\"",
            "train.search = mcts: expected \"ismcts\", \"ismcts:BUDGETxWORLDS\", \"mstar\", \"mstar:BUDGETxWORLDS\" or \"guided:SIMULATIONS\"",
        ),
        (
            "game = \"block\"",
            "game = \"block\"\nseats = 4",
            "train.seats = 4: block and team have their seats",
        ),
        (
            "game = \"block\"",
            "game = \"all-fives\"\nseats = 3",
            "train.seats = 3: 2, or 4 in partnerships",
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
    // Handed to what takes experiment specs (a coordinator, `muggins
    // submit`), a training spec is named for what it is.
    let err = jobs::Spec::from_toml(TINY).unwrap_err().to_string();
    assert!(
        err.contains("`train`") && err.contains("training spec") && err.contains("muggins run"),
        "{err}"
    );
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
    for name in [
        "train-block",
        "train-team",
        "train-all-fives",
        "train-all-fives-mstar",
        "train-all-fives-4",
        "train-team-ismcts",
        "train-block-ismcts",
    ] {
        let text = std::fs::read_to_string(root.join(format!("jobs/specs/{name}.toml"))).unwrap();
        // A start file is named from the repository root, where the specs
        // run; the id covers the path as the spec gives it.
        let rooted = text.replace("start = \"models/", &format!("start = \"{}/models/", root.display()));
        let mut spec = TrainSpec::from_toml(&rooted).unwrap();
        if let Some(start) = &mut spec.train.start {
            *start = start.replacen(&format!("{}/", root.display()), "", 1);
        }
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

/// Tiny All Fives, against M* (the population and an anchor) and from M*
/// (its plays as the searched rows' targets).
pub(crate) const TINY_FIVES: &str = r#"
name = "tiny-fives"
seed = 9

[train]
game = "all-fives"
generations = 1
games = 120
shard_games = 60
hidden = [16]
population_share = 0.5
population = ["heaviest", "mstar:60x2"]
searched = 0.3
search = "mstar:60x2"

[train.fit]
batch = 64

[train.gate]
pairs = 20

[train.eval]
pairs = 20
anchors = ["random", "mstar:60x2"]
"#;

/// `train.start`: the first generation starts from a model file's weights
/// (its hash in the spec's id; a file of another game or shape, or one
/// changed after the spec was read, is refused naming it), and M* plays
/// All Fives in training: in the population, as an anchor, and as the
/// searched decisions' expert, whose play is the row's whole target.
#[test]
fn all_fives_trains_from_a_start_network_against_and_from_mstar() {
    let plain = TrainSpec::from_toml(TINY_FIVES).unwrap();
    assert_eq!(
        plain.search(),
        Some((0.3, TrainSearch::Mstar { budget: 60, worlds: 2 }))
    );
    let first = tempfile::tempdir().unwrap();
    let made = train(&plain, first.path(), 2, None).unwrap();
    let names: Vec<&str> = made.first_anchors.iter().map(|(a, _)| a.as_str()).collect();
    assert_eq!(names, ["random", "mstar:60x2"]);
    let rows = read_train(&first.path().join("gen-001/selfplay/part-00000.parquet")).unwrap();
    let searched: Vec<_> = rows.iter().filter(|r| r.searched).collect();
    assert!(
        !searched.is_empty() && searched.len() < rows.len(),
        "{} of {}",
        searched.len(),
        rows.len()
    );
    for r in searched {
        let k = r.legal.iter().position(|&l| l == r.action).unwrap();
        let want: Vec<f32> = (0..r.legal.len()).map(|i| f32::from(u8::from(i == k))).collect();
        assert_eq!(r.policy, want, "M*'s play is the target: {r:?}");
    }

    // Its best network is the next spec's start.
    let start = first.path().join("start.safetensors");
    std::fs::copy(first.path().join("best.safetensors"), &start).unwrap();
    let with_start = |path: &Path| TINY_FIVES.replacen("hidden = [16]", &format!("hidden = [16]\nstart = {path:?}"), 1);
    let spec = TrainSpec::from_toml(&with_start(&start)).unwrap();
    assert_eq!(spec.train.start_sha256.as_deref(), Some(made.best.as_str()));
    // Where a coordinator reads it: the bytes a submission sent, then its
    // workers' copy; the same id either way, and no file, no copy.
    let text = with_start(Path::new("elsewhere/gone.safetensors"));
    let bytes = std::fs::read(&start).unwrap();
    let sent = TrainSpec::from_toml_with(&text, StartFrom::Bytes(&bytes)).unwrap();
    let copied = TrainSpec::from_toml_with(&text, StartFrom::Copy(&start)).unwrap();
    assert_eq!(sent.id(), copied.id());
    assert_eq!(sent.train.start_sha256, spec.train.start_sha256);
    assert_eq!(copied.start_model().unwrap().unwrap().sha256, made.best);
    let unread = TrainSpec::from_toml_with(&text, StartFrom::Unread).unwrap();
    assert_eq!(unread.train.start_sha256, None);
    let err = TrainSpec::from_toml_with(&text, StartFrom::Bytes(&[])).unwrap_err();
    assert!(err.to_string().contains("no copy of the file"), "{err}");
    let err = TrainSpec::from_toml_with(&text, StartFrom::Bytes(b"junk")).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("train.start = \"elsewhere/gone.safetensors\": the file sent: not a safetensors"),
        "{err}"
    );
    assert_ne!(spec.id(), plain.id());
    let dir = tempfile::tempdir().unwrap();
    let summary = train(&spec, dir.path(), 2, None).unwrap();
    // Generation 0 is the start's weights under this spec's provenance.
    let (a, b) = (
        net::Model::load(&start).unwrap(),
        net::Model::load(&dir.path().join(format!("nets/{}.safetensors", summary.first))).unwrap(),
    );
    assert_eq!(b.meta.provenance.spec_id.as_deref(), Some(spec.id().as_str()));
    let obs: Vec<f32> = (0..a.meta.inputs).map(|i| (i % 3) as f32 * 0.5).collect();
    let run = |m: &net::Model| {
        let (mut logits, mut value) = (vec![0.0; m.meta.actions], [0.0]);
        m.mlp
            .forward(&obs, 1, &mut logits, &mut value, &mut net::Scratch::default());
        (logits, value)
    };
    assert_eq!(run(&a), run(&b));
    let again = tempfile::tempdir().unwrap();
    assert_eq!(
        decided(&train(&spec, again.path(), 1, None).unwrap()),
        decided(&summary)
    );

    // Refusals: another game's network, other layers, a file changed since.
    let block = tempfile::tempdir().unwrap();
    let block_spec = TrainSpec::from_toml(&TINY.replacen("generations = 2", "generations = 1", 1)).unwrap();
    train(&block_spec, block.path(), 2, None).unwrap();
    let err = TrainSpec::from_toml(&with_start(&block.path().join("best.safetensors"))).unwrap_err();
    assert!(
        err.to_string()
            .contains("it is for game \"block\", not \"all-fives\" (train.game \"all-fives\""),
        "{err}"
    );
    let wide = with_start(&start).replacen("hidden = [16]", "hidden = [32]", 1);
    let err = TrainSpec::from_toml(&wide).unwrap_err();
    assert!(
        err.to_string().contains("hidden layers [16], and train.hidden is [32]"),
        "{err}"
    );
    // The same shape, other weights: another network of the plain run.
    let other = if made.best == made.first {
        &made.generations[0].candidate
    } else {
        &made.first
    };
    assert_ne!(other, &made.best);
    std::fs::copy(first.path().join(format!("nets/{other}.safetensors")), &start).unwrap();
    let stop = AtomicBool::new(false);
    let later = tempfile::tempdir().unwrap();
    let trainer = Trainer {
        spec: &spec,
        dir: later.path().to_path_buf(),
        threads: 1,
        stop: &stop,
        progress: &|_| {},
    };
    let err = trainer.run().expect_err("a changed start file is refused");
    let want = format!("train.start = {:?}: its SHA-256 is {other}", start.to_str().unwrap());
    assert!(err.to_string().starts_with(&want), "{err}");
}

/// `seats = 4`: All Fives in partnerships, one network a side; rows from
/// every seat, each with its side's outcome; the same networks on any
/// thread count; the network plays four-seat hands and no other; M*'s
/// learned leaves (two seats) are refused there.
#[test]
fn all_fives_trains_four_seats_in_partnerships() {
    let text = TINY_FIVES
        .replacen("game = \"all-fives\"", "game = \"all-fives\"\nseats = 4", 1)
        .replacen("searched = 0.3\nsearch = \"mstar:60x2\"\n", "", 1);
    let err = TrainSpec::from_toml(&text).unwrap_err().to_string();
    assert!(
        err.contains("train.population = mstar:60x2: M*'s learned leaves are fitted for two seats"),
        "{err}"
    );
    let text = text
        .replacen("[\"heaviest\", \"mstar:60x2\"]", "[\"heaviest\"]", 1)
        .replacen("[\"random\", \"mstar:60x2\"]", "[\"random\"]", 1);
    let spec = TrainSpec::from_toml(&text).unwrap();
    assert_eq!(spec.rules().seats(), 4);
    assert_ne!(
        spec.id(),
        TrainSpec::from_toml(&text.replacen("seats = 4", "seats = 2", 1))
            .unwrap()
            .id()
    );
    let dir = tempfile::tempdir().unwrap();
    let summary = train(&spec, dir.path(), 2, None).unwrap();
    let rows = read_train(&dir.path().join("gen-001/selfplay/part-00000.parquet")).unwrap();
    let mut seats: Vec<u8> = rows.iter().map(|r| r.seat).collect();
    seats.sort_unstable();
    seats.dedup();
    assert_eq!(seats, [0, 1, 2, 3]);
    for g in rows.chunk_by(|a, b| a.game_index == b.game_index) {
        for r in g {
            let partner = g.iter().find(|p| p.seat == (r.seat + 2) % 4);
            assert!(
                partner.is_none_or(|p| p.outcome == r.outcome),
                "partners share the outcome: {r:?}"
            );
        }
    }
    let again = tempfile::tempdir().unwrap();
    assert_eq!(
        decided(&train(&spec, again.path(), 1, None).unwrap()),
        decided(&summary)
    );
    let best = dir.path().join("best.safetensors");
    let best = best.to_str().unwrap();
    jobs::nets::load(best, 0.0, &spec.rules()).unwrap();
    let two = TrainSpec::from_toml(&text.replacen("seats = 4", "seats = 2", 1)).unwrap();
    let err = jobs::nets::load(best, 0.0, &two.rules()).unwrap_err().to_string();
    assert!(err.contains(best), "{err}");
}
