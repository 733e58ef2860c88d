//! Thesis-style specs: parsing, defaults, refusals, hashing, grid order
//! and shards, starting states and the `output` key. The shared fixtures
//! `BASE`, `with` and `top` live here.

use jobs::{MYERS2014_SPEC, SMOKE_SPEC, Source, Spec, StateSet, coords, shards};

pub(crate) const BASE: &str = r#"
name = "t"
seed = 1
[grid]
information_source = ["oracle"]
observability = ["full"]
target = ["scorer"]
starting_states = "0-9"
engine = ["mstar"]
repeats = 2
"#;

/// `BASE` with `line` replacing the line that starts with the same key (or added to its table).
pub(crate) fn with(key_line: &str) -> String {
    let key = key_line.split('=').next().unwrap().trim();
    let mut out = String::new();
    let mut replaced = false;
    for l in BASE.lines() {
        if l.split('=').next().unwrap().trim() == key && l.contains('=') {
            out.push_str(key_line);
            replaced = true;
        } else {
            out.push_str(l);
        }
        out.push('\n');
    }
    if !replaced {
        out.push_str(key_line);
        out.push('\n');
    }
    out
}

/// `BASE` with a top-level key added.
pub(crate) fn top(line: &str) -> String {
    BASE.replace("seed = 1\n", &format!("seed = 1\n{line}\n"))
}

#[test]
fn the_shipped_specs_are_valid() {
    let s = Spec::from_toml(MYERS2014_SPEC).unwrap();
    // Table 12: 2 x 2 x 3 x 4200 x 2 x 12.
    assert_eq!(s.games(), 1_209_600);
    assert_eq!(s.grid.information_source, vec![Source::Oracle, Source::Classifier]);
    assert!(s.needs_classifier());
    assert_eq!(shards(&s).len(), 240);
    assert_eq!(s.samples_needed(), 130_000);
    let smoke = Spec::from_toml(SMOKE_SPEC).unwrap();
    assert!((1000..20_000).contains(&smoke.games()), "{}", smoke.games());
    assert_eq!(
        smoke.grid.information_source,
        vec![Source::Oracle, Source::Classifier, Source::Bayes]
    );
    let beyond = Spec::from_toml(jobs::BEYOND_SPEC).unwrap();
    assert_eq!(beyond.games(), 1_814_400);
    let oracle_text = MYERS2014_SPEC.replace(r#"["oracle", "classifier"]"#, r#"["oracle"]"#);
    // [classifier] trains the classifier source alone: refused without it.
    let e = Spec::from_toml(&oracle_text).unwrap_err();
    assert_eq!(e.key(), Some("classifier"), "{e}");
    let oracle_text = oracle_text.split("[classifier]").next().unwrap().to_string()
        + &oracle_text[oracle_text.find("[shards]").unwrap()..];
    let oracle_only = Spec::from_toml(&oracle_text).unwrap();
    assert!(!oracle_only.needs_classifier());
    assert_eq!(oracle_only.games(), 604_800);
}

#[test]
fn invalid_specs_are_refused_with_the_key_and_value() {
    // (spec text, fragments the error must contain)
    let cases: Vec<(String, Vec<&str>)> = vec![
        ("name = ".to_string(), vec!["not valid TOML", "line 1"]),
        (with("colour = \"red\""), vec!["unknown key `grid.colour`"]),
        (
            BASE.replace("seed = 1", "seed = 1\ncolour = \"red\""),
            vec!["unknown key `colour`", "expected one of"],
        ),
        (
            BASE.replace("[grid]", "[grid]\nrepeat = 3"),
            vec!["unknown key `grid.repeat`", "repeats"],
        ),
        (BASE.replace("name = \"t\"\n", ""), vec!["missing key `name`"]),
        (with("name = \"../up\""), vec!["name = \"../up\""]),
        (with("name = \"_hidden\""), vec!["name = \"_hidden\""]),
        (with("seed = -4"), vec!["seed = -4", "negative"]),
        (with("seed = \"x\""), vec!["seed = \"x\"", "integer"]),
        (top("output = \"/etc/x\""), vec!["output = \"/etc/x\"", "relative"]),
        (
            top("output = \"a/../../b\""),
            vec!["output = \"a/../../b\"", "inside the results root"],
        ),
        (with("repeats = 0"), vec!["grid.repeats = 0", "between 1 and"]),
        (with("repeats = 2.5"), vec!["grid.repeats = 2.5", "integer"]),
        (with("target = []"), vec!["grid.target = []", "at least one level"]),
        (
            with("target = [\"bully\"]"),
            vec!["grid.target = \"bully\"", "random, scorer or defender"],
        ),
        (
            with("target = [\"scorer\", \"scorer\"]"),
            vec!["grid.target = \"scorer\"", "twice"],
        ),
        (
            with("observability = \"full\""),
            vec!["grid.observability = \"full\"", "list"],
        ),
        (with("engine = [\"minimax\"]"), vec!["grid.engine = \"minimax\""]),
        (
            with("starting_states = \"0-4200\""),
            vec!["grid.starting_states = \"0-4200\"", "out of range", "0-4199"],
        ),
        (
            with("starting_states = \"9-3\""),
            vec!["grid.starting_states = \"9-3\"", "backwards"],
        ),
        (
            with("starting_states = [1, 1]"),
            vec!["grid.starting_states = 1", "twice"],
        ),
        (
            with("starting_states = \"some\""),
            vec!["grid.starting_states = \"some\""],
        ),
        (
            format!("{BASE}[rules]\nboneyard = 5\n"),
            vec!["rules.boneyard = 5", "10 tiles"],
        ),
        (format!("{BASE}[rules]\nset = 10\n"), vec!["rules.set = 10"]),
        (
            format!("{BASE}[rules]\nlead = \"lowest\"\n"),
            vec!["rules.lead = \"lowest\""],
        ),
        (
            format!("{BASE}[rules]\nset = 6\nhand = 7\nboneyard = 14\n"),
            vec!["search.depth = \"unlimited\"", "double-6"],
        ),
        (format!("{BASE}[search]\nworlds = 0\n"), vec!["search.worlds = 0"]),
        (
            format!("{BASE}[search]\nbelief = \"bayes\"\n"),
            vec!["search.belief = \"bayes\"", "uniform"],
        ),
        (format!("{BASE}[search]\ndepth = 300\n"), vec!["search.depth = 300"]),
        (format!("{BASE}[shards]\ngames = 0\n"), vec!["shards.games = 0"]),
        (
            format!("{BASE}[shards]\nsize = 10\n"),
            vec!["unknown key `shards.size`"],
        ),
        (
            format!(
                "{}[classifier]\nholdout = 1.5\n",
                BASE.replace(r#"["oracle"]"#, r#"["oracle", "classifier"]"#)
            ),
            vec!["classifier.holdout = 1.5"],
        ),
        (
            format!(
                "{}[classifier]\nkind = \"svm\"\n",
                BASE.replace(r#"["oracle"]"#, r#"["oracle", "classifier"]"#)
            ),
            vec!["classifier.kind = \"svm\""],
        ),
        (
            with("repeats = 1000000").replace("\"0-9\"", "\"all\""),
            vec!["grid = 4200000000 games", "at most 100000000"],
        ),
        (
            "name = \"x\"\nseed = 1\ngrid = 3\n".to_string(),
            vec!["grid = 3", "table"],
        ),
        (BASE.replace("[grid]", "[x]\n[grid]"), vec!["unknown key `x`"]),
        ("x".repeat(2 << 20), vec!["spec = 2097152 bytes"]),
    ];
    assert!(cases.len() >= 15);
    for (text, parts) in &cases {
        let e = match Spec::from_toml(text) {
            Ok(_) => panic!("accepted: {}", &text[..text.len().min(300)]),
            Err(e) => e.to_string(),
        };
        for p in parts {
            assert!(e.contains(p), "error {e:?} lacks {p:?}");
        }
    }
}

#[test]
fn defaults_fill_what_the_spec_leaves_out() {
    let s = Spec::from_toml(BASE).unwrap();
    assert_eq!(s.output, "t");
    assert_eq!(s.shard_games, jobs::DEFAULT_SHARD_GAMES);
    assert_eq!(s.rules, engine::RulesConfig::default());
    assert_eq!(s.grid.starting_states, StateSet::Range { first: 0, last: 9 });
    let all = Spec::from_toml(&BASE.replace("starting_states = \"0-9\"\n", "")).unwrap();
    assert_eq!(all.grid.starting_states.len(), 4200);
    let list = Spec::from_toml(&with("starting_states = [5, 3, 4000]")).unwrap();
    assert_eq!(list.grid.starting_states, StateSet::List(vec![5, 3, 4000]));
    assert_eq!(list.games(), 3 * 2);
}

#[test]
fn the_hash_follows_the_validated_spec() {
    let a = Spec::from_toml(BASE).unwrap();
    let b = Spec::from_toml(&format!("# a comment\n{BASE}")).unwrap();
    assert_eq!(a.hash(), b.hash());
    assert_eq!(a.hash().len(), 64);
    let c = Spec::from_toml(&with("seed = 2")).unwrap();
    assert_ne!(a.hash(), c.hash());
}

#[test]
fn grid_order_is_table_12_with_repeat_fastest() {
    let s = Spec::from_toml(MYERS2014_SPEC).unwrap();
    let c0 = coords(&s, 0);
    assert_eq!(
        (c0.starting_state, c0.repeat, c0.engine),
        (0, 1, engine::PlayerEngine::MStar)
    );
    let c1 = coords(&s, 1);
    assert_eq!((c1.starting_state, c1.repeat), (0, 2));
    let c12 = coords(&s, 12);
    assert_eq!((c12.engine, c12.repeat), (engine::PlayerEngine::Expectimax, 1));
    let c24 = coords(&s, 24);
    assert_eq!((c24.starting_state, c24.engine), (1, engine::PlayerEngine::MStar));
    let per_target = 4200 * 2 * 12;
    assert_eq!(
        coords(&s, per_target).target,
        full::FullTarget::Thesis(engine::TargetKind::Scorer)
    );
    let last = coords(&s, s.games() - 1);
    assert_eq!(last.information_source, Source::Classifier);
    assert_eq!(coords(&s, s.games() / 2).information_source, Source::Classifier);
    assert_eq!(coords(&s, s.games() / 2 - 1).information_source, Source::Oracle);
    assert_eq!(
        (last.observability, last.target, last.starting_state, last.repeat),
        (
            engine::Observability::Partial,
            full::FullTarget::Thesis(engine::TargetKind::Defender),
            4199,
            12
        )
    );
    // Every index decodes to distinct coordinates.
    let mut seen = std::collections::HashSet::new();
    for i in (0..s.games()).step_by(7) {
        let c = coords(&s, i);
        assert!(seen.insert((
            c.information_source,
            c.observability,
            c.target,
            c.starting_state,
            c.engine,
            c.repeat
        )));
    }
}

#[test]
fn shards_cover_the_grid_exactly() {
    let s = Spec::from_toml(&format!("{BASE}[shards]\ngames = 7\n")).unwrap();
    let plan = shards(&s);
    assert_eq!(plan.len(), 3);
    assert_eq!(plan.iter().map(|p| p.games).collect::<Vec<_>>(), vec![7, 7, 6]);
    assert_eq!(plan[2].first_game, 14);
    assert_eq!(jobs::part_file(2), "part-00002.parquet");
}

/// A stable-Rust companion of the cargo-fuzz target (fuzz/fuzz_targets/spec.rs):
/// thousands of seeded mutations of real specs (byte flips, deletions,
/// duplications, splices of TOML fragments) must each parse or be refused with
/// an error, never panic.
#[test]
fn mutated_specs_never_panic() {
    let seeds = [MYERS2014_SPEC, SMOKE_SPEC, jobs::BEYOND_SPEC, BASE];
    let fragments = [
        "[grid]",
        "[rules]",
        "= ",
        "\"",
        "[",
        "]",
        "\n",
        "repeats = 99999999999999999999",
        "set = -1",
        "starting_states = [",
        "\"0-\"",
        "information_source = [\"bayes\"]",
        "depth = 0",
        "worlds = \"all\"",
        "ü",
        "\u{0}",
        "games = 1",
    ];
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n.max(1) as u64) as usize
    };
    let (mut ok, mut refused) = (0, 0);
    for i in 0..6000 {
        let mut bytes = seeds[i % seeds.len()].as_bytes().to_vec();
        for _ in 0..1 + next(4) {
            let at = next(bytes.len() + 1);
            match next(4) {
                0 if !bytes.is_empty() => {
                    let i = at.min(bytes.len() - 1);
                    bytes[i] ^= 1 << next(8);
                }
                1 if at < bytes.len() => {
                    let end = (at + next(40)).min(bytes.len());
                    bytes.drain(at..end);
                }
                2 => {
                    let f = fragments[next(fragments.len())].as_bytes();
                    bytes.splice(at..at, f.iter().copied());
                }
                _ => {
                    let end = (at + next(30)).min(bytes.len());
                    let copy = bytes[at..end].to_vec();
                    bytes.splice(at..at, copy);
                }
            }
        }
        let Ok(text) = std::str::from_utf8(&bytes) else {
            continue;
        };
        match Spec::from_toml(text) {
            Ok(s) => {
                assert!(s.games() <= jobs::MAX_GAMES);
                ok += 1;
            }
            Err(e) => {
                assert!(e.to_string().starts_with("invalid spec"), "{e}");
                refused += 1;
            }
        }
    }
    assert!(ok > 100 && refused > 1000, "ok {ok}, refused {refused}");
}

#[test]
fn each_missing_grid_key_shows_its_own_valid_levels() {
    let check = |key: &str, example: &str| {
        let text: String = BASE
            .lines()
            .filter(|l| l.split('=').next().unwrap().trim() != key)
            .map(|l| format!("{l}\n"))
            .collect();
        let err = Spec::from_toml(&text).unwrap_err();
        assert_eq!(err.key(), Some(format!("grid.{key}").as_str()), "{err}");
        let msg = err.to_string();
        assert!(msg.contains(&format!("missing key `grid.{key}`")), "{msg}");
        assert!(msg.contains(example), "{key}: {msg} lacks {example:?}");
    };
    check(
        "information_source",
        r#"information_source = ["oracle", "classifier", "bayes"]"#,
    );
    check("observability", r#"observability = ["full", "partial"]"#);
    check("target", r#"target = ["random", "scorer", "defender"]"#);
    check("engine", r#"engine = ["mstar", "expectimax"]"#);
    check("repeats", "repeats = 12");
    // Every example is itself valid.
    for line in [
        r#"information_source = ["oracle", "classifier", "bayes"]"#,
        r#"observability = ["full", "partial"]"#,
        r#"target = ["random", "scorer", "defender"]"#,
        r#"engine = ["mstar", "expectimax"]"#,
        "repeats = 12",
    ] {
        Spec::from_toml(&with(line)).unwrap_or_else(|e| panic!("{line}: {e}"));
    }
}

#[test]
fn a_grid_without_starting_states_plays_every_starting_state_of_the_rules() {
    let text: String = BASE
        .lines()
        .filter(|l| !l.starts_with("starting_states"))
        .map(|l| format!("{l}\n"))
        .collect();
    let s = Spec::from_toml(&text).unwrap();
    assert_eq!(s.grid.starting_states, StateSet::Range { first: 0, last: 4199 });
    let small = Spec::from_toml(&text.replace("[grid]", "[rules]\nset = 2\nhand = 2\nboneyard = 2\n[grid]")).unwrap();
    assert_eq!(small.grid.starting_states, StateSet::Range { first: 0, last: 89 });
}

#[test]
fn a_classifier_that_could_never_fit_is_refused_up_front() {
    let clf = |body: &str| {
        format!(
            "{}[classifier]\n{body}\n",
            BASE.replace(r#"["oracle"]"#, r#"["oracle", "classifier"]"#)
        )
    };
    for (body, key, parts) in [
        (
            "samples = 100\nholdout = 0.95\nfolds = 20\ncompare_samples = [100]",
            "classifier.samples = 100",
            &["only 5 of 100 samples", "classifier.folds = 20"][..],
        ),
        (
            "samples = 100\nholdout = 0.001\ncompare_samples = [100]",
            "classifier.samples = 100",
            &["leaves no holdout sample"][..],
        ),
        (
            "samples = 1000\ncompare_samples = [100, 1000]\nholdout = 0.95\nfolds = 5",
            "classifier.compare_samples = 100",
            &["fits on 4"][..],
        ),
    ] {
        let e = Spec::from_toml(&clf(body)).unwrap_err().to_string();
        assert!(e.contains(key), "{body}: {e}");
        for p in parts {
            assert!(e.contains(p), "{body}: {e} lacks {p}");
        }
    }
    // The smallest that fits is accepted.
    Spec::from_toml(&clf("samples = 100\nholdout = 0.5\nfolds = 5\ncompare_samples = [100]")).unwrap();
}

#[test]
fn an_output_too_long_for_its_file_names_is_refused_at_submit_time() {
    let long = ["abcdefghijklmnopqrstuvwxyz0123456789"; 8].join("/");
    assert!(long.len() > jobs::MAX_OUTPUT_BYTES);
    let e = Spec::from_toml(&top(&format!("output = \"{long}\"")))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("output") && e.contains(&format!("{} bytes", long.len())),
        "{e}"
    );
    let ok = ["abcdefghijklmnopqrstuvwxyz0123456789"; 6].join("/");
    assert!(ok.len() <= jobs::MAX_OUTPUT_BYTES);
    let spec = Spec::from_toml(&top(&format!("output = \"{ok}\""))).unwrap();
    // Its longest file name still fits a completion.
    let longest = format!("{}/{}", spec.output, jobs::layout::model_file(&"f".repeat(64)));
    assert!(longest.len() <= jobs::MAX_PATH_BYTES);
}

#[test]
fn the_text_form_of_starting_states_is_one_parser_for_spec_and_cli() {
    // The forms: all, one index, one range, a list of indices and ranges.
    assert_eq!(
        StateSet::parse("all", 4200),
        Ok(StateSet::Range { first: 0, last: 4199 })
    );
    assert_eq!(StateSet::parse("17", 4200), Ok(StateSet::Range { first: 17, last: 17 }));
    assert_eq!(
        StateSet::parse(" 3 - 5 ", 4200),
        Ok(StateSet::Range { first: 3, last: 5 })
    );
    assert_eq!(
        StateSet::parse("0-2,20,30-31", 4200),
        Ok(StateSet::List(vec![0, 1, 2, 20, 30, 31]))
    );
    // Refusals say why, with the offending part.
    for (text, count, why) in [
        (
            "0-4200",
            4200,
            "state 4200 is out of range: these rules have 4200 starting states (0-4199)",
        ),
        ("9-3", 4200, "runs backwards"),
        ("0-3,2", 4200, "state 2 is listed twice"),
        ("a-b", 4200, "\"a-b\" is not a state index"),
        ("", 4200, "is not a state index"),
        (
            "0-10000000,20000000-20000001",
            100_000_000,
            "a list may name at most 10000000",
        ),
    ] {
        let err = StateSet::parse(text, count).unwrap_err();
        assert!(err.contains(why), "{text:?}: {err:?} should say {why:?}");
    }
    // A spec's list-of-ranges string is the same grid as the TOML list.
    let a = Spec::from_toml(&with("starting_states = \"0-2,20\"")).unwrap();
    let b = Spec::from_toml(&with("starting_states = [0, 1, 2, 20]")).unwrap();
    assert_eq!(a.grid.starting_states, b.grid.starting_states);
    assert_eq!(a.id(), b.id());
    let e = Spec::from_toml(&with("starting_states = \"0-3,2\""))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("grid.starting_states = \"0-3,2\"") && e.contains("listed twice"),
        "{e}"
    );
}

#[test]
fn a_source_parses_from_its_name_only() {
    for s in Source::ALL {
        assert_eq!(s.name().parse::<Source>(), Ok(s));
        assert_eq!(s.to_string(), s.name());
    }
    let e = "Oracle".parse::<Source>().unwrap_err();
    assert!(
        e.contains("\"Oracle\"") && e.contains("oracle, classifier or bayes"),
        "{e}"
    );
    let e = Spec::from_toml(&with("information_source = [\"model\"]"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("grid.information_source = \"model\"") && e.contains("oracle, classifier or bayes"),
        "{e}"
    );
}

#[test]
fn output_is_a_directory_or_a_table_with_the_moves_switch() {
    let plain = Spec::from_toml(BASE).unwrap();
    assert!(!plain.output_moves);
    let string = Spec::from_toml(&top("output = \"runs/t\"")).unwrap();
    assert_eq!((string.output.as_str(), string.output_moves), ("runs/t", false));
    let table = Spec::from_toml(&format!("{BASE}[output]\ndir = \"runs/t\"\nmoves = true\n")).unwrap();
    assert_eq!((table.output.as_str(), table.output_moves), ("runs/t", true));
    assert!(table.canonical_json().ends_with(r#","output":{"moves":true}}"#));
    // moves = false is the spec without it, hash and all.
    let off = Spec::from_toml(&format!("{BASE}[output]\nmoves = false\n")).unwrap();
    assert_eq!(off.id(), plain.id());
    for (text, parts) in [
        (
            format!("{BASE}[output]\nmoves = \"yes\"\n"),
            vec!["output.moves = \"yes\"", "true or false"],
        ),
        (
            format!("{BASE}[output]\nrows = true\n"),
            vec!["output.rows", "dir, moves"],
        ),
        (
            format!("{BASE}[output]\ndir = \"../x\"\n"),
            vec!["output", "inside the results root"],
        ),
        (top("output = 3"), vec!["output = 3", "[output]"]),
    ] {
        let e = Spec::from_toml(&text).unwrap_err().to_string();
        for p in parts {
            assert!(e.contains(p), "{e:?} lacks {p:?}");
        }
    }
}

#[test]
fn every_spec_under_jobs_specs_is_valid() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("specs");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            // A network's file is named from the repository root, where
            // the specs are run.
            let root = dir.parent().unwrap().parent().unwrap().display().to_string();
            let text = std::fs::read_to_string(&path)
                .unwrap()
                .replace("net = \"models/", &format!("net = \"{root}/models/"))
                .replace("start = \"models/", &format!("start = \"{root}/models/"));
            // A training spec (docs/train.md) has a grammar of its own.
            if jobs::train::is_train_spec(&text) {
                let spec =
                    jobs::train::TrainSpec::from_toml(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                assert!(spec.train.games > 0, "{}", path.display());
                n += 1;
                continue;
            }
            let spec = Spec::from_toml(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(spec.games() > 0, "{}", path.display());
            n += 1;
        }
    }
    assert!(n >= 12, "found only {n} specs in {}", dir.display());
    let seats = Spec::from_toml(include_str!("../../specs/double6-seats.toml")).unwrap();
    let sets: Vec<(&str, u8, bool)> = seats
        .rule_sets
        .iter()
        .map(|s| (s.name.as_str(), s.config.seats, s.config.teams))
        .collect();
    assert_eq!(
        sets,
        [
            ("two", 2, false),
            ("three", 3, false),
            ("four", 4, false),
            ("teams", 4, true)
        ]
    );
}
