use jobs::{MYERS2014_SPEC, SMOKE_SPEC, Source, Spec, StateSet, coords, shards};

const BASE: &str = r#"
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
fn with(key_line: &str) -> String {
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
fn top(line: &str) -> String {
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

const ALL_FIVES: &str = r#"
name = "af"
seed = 3
[rules]
preset = "all-fives"
[grid]
information_source = ["oracle"]
observability = ["full"]
target = ["scorer"]
starting_states = "0-9"
engine = ["mstar", "expectimax"]
repeats = 1
[search]
depth = 2
"#;

#[test]
fn an_all_fives_spec_reads_its_preset_knobs_and_match() {
    let s = Spec::from_toml(ALL_FIVES).unwrap();
    let f = s.full.expect("a full-game spec");
    assert_eq!(
        (f.config.seats, f.config.hand, f.config.teams, f.match_to),
        (2, 7, false, None)
    );
    assert!(
        s.canonical_json()
            .contains(r#""rules":{"preset":"all-fives","set":6,"seats":2,"hand":7"#)
    );
    assert!(s.canonical_json().contains(r#""match":null"#));
    assert_eq!(s.games(), 20);
    // Every target of the full game, heaviest included.
    let four = r#"["random", "scorer", "defender", "heaviest"]"#;
    let all = Spec::from_toml(&ALL_FIVES.replace(r#"["scorer"]"#, four)).unwrap();
    assert_eq!(all.grid.target.len(), 4);
    assert!(
        all.canonical_json()
            .contains(r#""target":["random","scorer","defender","heaviest"]"#)
    );
    // Four seats default to partnerships and hands of 5; [match] makes grid points matches.
    let four = ALL_FIVES.replace("preset = \"all-fives\"", "preset = \"all-fives\"\nseats = 4") + "[match]\nto = 100\n";
    let f4 = Spec::from_toml(&four).unwrap().full.unwrap();
    assert_eq!(
        (f4.config.seats, f4.config.hand, f4.config.teams, f4.match_to),
        (4, 5, true, Some(100))
    );
    assert_ne!(Spec::from_toml(&four).unwrap().id(), s.id());
    // The boneyard, when given, is what the hands leave.
    let with_boneyard = ALL_FIVES.replace("preset = \"all-fives\"", "preset = \"all-fives\"\nboneyard = 14");
    assert_eq!(Spec::from_toml(&with_boneyard).unwrap().id(), s.id());
    // Three separate seats: the agent against two targets.
    let three = ALL_FIVES.replace("preset = \"all-fives\"", "preset = \"all-fives\"\nseats = 3");
    let f3 = Spec::from_toml(&three).unwrap().full.unwrap();
    assert_eq!((f3.config.seats, f3.config.hand, f3.config.teams), (3, 5, false));
    // preset = "thesis" is the thesis spec, hash and all.
    let explicit = BASE.replace("[grid]", "[rules]\npreset = \"thesis\"\n[grid]");
    assert_eq!(
        Spec::from_toml(&explicit).unwrap().id(),
        Spec::from_toml(BASE).unwrap().id()
    );
}

#[test]
fn a_full_game_spec_refuses_what_it_cannot_run_naming_key_and_value() {
    let cases: Vec<(String, Vec<&str>)> = vec![
        (
            ALL_FIVES.replace("preset = \"all-fives\"", "preset = \"all-sixes\""),
            vec!["rules.preset = \"all-sixes\"", "all-fives"],
        ),
        (
            ALL_FIVES.replace(
                "preset = \"all-fives\"",
                "preset = \"all-fives\"\nseats = 3\nteams = true",
            ),
            vec!["rules.teams = true", "seats = 3"],
        ),
        (
            ALL_FIVES.replace("preset = \"all-fives\"", "preset = \"all-fives\"\nseats = 4\nhand = 8"),
            vec!["rules.hand = 8", "4 seats"],
        ),
        (
            ALL_FIVES.replace("preset = \"all-fives\"", "preset = \"all-fives\"\nboneyard = 4"),
            vec!["rules.boneyard = 4", "seats = 2 and hand = 7", "boneyard = 14"],
        ),
        (
            ALL_FIVES.replace("preset = \"all-fives\"", "preset = \"all-fives\"\nlead = \"player\""),
            vec!["rules.lead = \"player\"", "winner"],
        ),
        (
            ALL_FIVES.replace("preset = \"all-fives\"", "preset = \"all-fives\"\nkeep = 1"),
            vec!["rules.keep = 1", "0 or 2"],
        ),
        (
            ALL_FIVES.replace("preset = \"all-fives\"", "preset = \"block\"\nhand = 5"),
            vec!["rules.hand = 5", "preset = \"block\"", "hand = 7"],
        ),
        (
            ALL_FIVES.replace("preset = \"all-fives\"", "preset = \"block\""),
            vec!["grid.target = \"scorer\"", "random and heaviest"],
        ),
        (
            ALL_FIVES.replace("starting_states = \"0-9\"\n", ""),
            vec!["grid.starting_states", "all-fives", "137680171199"],
        ),
        (
            ALL_FIVES.replace("\"0-9\"", "\"137680171200\""),
            vec!["grid.starting_states", "out of range"],
        ),
        (
            ALL_FIVES.replace("depth = 2", "depth = \"unlimited\""),
            vec!["search.depth", "would not finish"],
        ),
        (
            ALL_FIVES.replace("[\"full\"]", "[\"partial\"]"),
            vec!["search.worlds", "give a number", "worlds = 16"],
        ),
        (
            ALL_FIVES.replace("depth = 2", "depth = 2\nworlds = 8"),
            vec!["search.worlds = 8", "partial observation only"],
        ),
        (
            ALL_FIVES
                .replace("[\"full\"]", "[\"partial\"]")
                .replace("depth = 2", "depth = 2\nworlds = 5000"),
            vec!["search.worlds = 5000", "at most 1000"],
        ),
        (
            ALL_FIVES.replace("depth = 2", "depth = 2\nbudget = 0"),
            vec!["search.budget = 0"],
        ),
        (
            ALL_FIVES.replace("depth = 2", "budget = 1000000\ntable_mb = 8"),
            vec!["search.table_mb = 8", "search.budget = 1000000", "at least 48 MB"],
        ),
        (
            ALL_FIVES.replace("depth = 2", "depth = 2\nevaluation = \"neural\""),
            vec!["search.evaluation = \"neural\"", "\"score\" or \"learned\""],
        ),
        (
            ALL_FIVES.replace("depth = 2", "depth = 2\ntarget_depth = 0"),
            vec!["search.target_depth = 0"],
        ),
        (
            ALL_FIVES.replace("depth = 2", "depth = 2\nbudjet = 100"),
            vec!["search.budjet", "unknown key", "did you mean `budget`", "table_mb"],
        ),
        (
            ALL_FIVES.replace("[\"mstar\", \"expectimax\"]", "[\"ismcts\"]"),
            vec!["grid.engine = \"ismcts\"", "search.budget"],
        ),
        (
            ALL_FIVES.replace("[\"mstar\", \"expectimax\"]", "[\"mcts\"]"),
            vec!["grid.engine", "mstar, expectimax, ismcts or dominai"],
        ),
        (
            ALL_FIVES
                .replace("preset = \"all-fives\"", "preset = \"block\"")
                .replace("[\"scorer\"]", "[\"searcher\"]"),
            vec!["grid.target = \"searcher\"", "random and heaviest"],
        ),
        (
            ALL_FIVES
                .replace("preset = \"all-fives\"", "preset = \"team\"")
                .replace("[\"scorer\"]", "[\"random\"]")
                .replace("depth = 2", "depth = 2\nbudget = 1000"),
            vec!["search.budget = 1000", "fixed depth", "all-fives"],
        ),
        (with("target = [\"searcher\"]"), vec!["grid.target = \"searcher\""]),
        (
            format!("{BASE}[search]\nbudget = 100\n"),
            vec!["search.budget = 100", "all-fives"],
        ),
        (
            ALL_FIVES.replace("[\"oracle\"]", "[\"bayes\"]"),
            vec!["grid.information_source = \"bayes\"", "oracle"],
        ),
        (
            with("target = [\"heaviest\"]"),
            vec!["grid.target = \"heaviest\"", "random, scorer or defender"],
        ),
        (format!("{BASE}[match]\nto = 100\n"), vec!["match", "all-fives"]),
        (format!("{ALL_FIVES}[match]\nto = 0\n"), vec!["match.to = 0"]),
        (format!("{ALL_FIVES}[match]\ngoal = 10\n"), vec!["match.goal"]),
    ];
    for (text, parts) in cases {
        let e = Spec::from_toml(&text).unwrap_err().to_string();
        for p in parts {
            assert!(e.contains(p), "{e:?} lacks {p:?}");
        }
    }
}

#[test]
fn an_all_fives_spec_reads_its_search_settings() {
    let s = Spec::from_toml(
        &ALL_FIVES
            .replace("[\"full\"]", "[\"full\", \"partial\"]")
            .replace(
                "depth = 2",
                "budget = 20000\nworlds = 16\ntable_mb = 32\nevaluation = \"learned\"\ntarget_depth = 3",
            )
            .replace("target = [\"scorer\"]", "target = [\"scorer\", \"searcher\"]"),
    )
    .unwrap();
    let f = s.full.expect("a full-game spec");
    assert_eq!(
        f.search,
        jobs::FullSearch {
            budget: 20_000,
            table_mb: 32,
            learned: true,
            target_depth: 3,
        }
    );
    assert_eq!(s.search.worlds, engine::WorldCount::Sample(16));
    // The settings enter the hash only when set: the spec without them keeps its id.
    let plain = Spec::from_toml(ALL_FIVES).unwrap();
    assert_eq!(plain.full.unwrap().search, jobs::FullSearch::default());
    assert!(!plain.canonical_json().contains("budget"));
    let json = s.canonical_json();
    for part in [
        "\"budget\":20000",
        "\"table_mb\":32",
        "\"target_depth\":3",
        jobs::evals::shipped_eval_hash(),
    ] {
        assert!(json.contains(part), "{json} lacks {part}");
    }
    let shipped = Spec::from_toml(include_str!("../../specs/double6-strength.toml")).unwrap();
    assert_eq!(shipped.games(), 900);
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
fn a_partner_is_the_agent_unless_the_spec_names_a_strategy() {
    let teams = ALL_FIVES.replace("preset = \"all-fives\"", "preset = \"all-fives\"\nseats = 4");
    let same = Spec::from_toml(&teams).unwrap();
    assert_eq!(same.full.unwrap().partner, None);
    let agent = Spec::from_toml(&teams.replace("depth = 2", "depth = 2\npartner = \"agent\"")).unwrap();
    assert_eq!(agent.id(), same.id(), "partner = \"agent\" is the default");
    let heavy = Spec::from_toml(&teams.replace("depth = 2", "depth = 2\npartner = \"heaviest\"")).unwrap();
    assert_eq!(heavy.full.unwrap().partner, Some(full::FullTarget::Heaviest));
    assert!(
        heavy
            .canonical_json()
            .contains(r#""lead":"winner","partner":"heaviest"}"#)
    );
    assert_ne!(heavy.id(), same.id());
    for (text, parts) in [
        (
            ALL_FIVES.replace("depth = 2", "depth = 2\npartner = \"heaviest\""),
            vec!["search.partner", "partnerships"],
        ),
        (
            format!("{BASE}[search]\npartner = \"random\"\n"),
            vec!["search.partner", "partnerships"],
        ),
        (
            teams.replace("depth = 2", "depth = 2\npartner = \"bully\""),
            vec!["search.partner = \"bully\"", "agent"],
        ),
        (
            ALL_FIVES
                .replace("preset = \"all-fives\"", "preset = \"team\"")
                .replace("[\"scorer\"]", "[\"random\"]")
                .replace("depth = 2", "depth = 2\npartner = \"scorer\""),
            vec!["search.partner = \"scorer\"", "no count"],
        ),
    ] {
        let e = Spec::from_toml(&text).unwrap_err().to_string();
        for p in parts {
            assert!(e.contains(p), "{e:?} lacks {p:?}");
        }
    }
}

#[test]
fn beliefs_are_read_as_one_level_or_a_grid_factor() {
    use engine::Belief;
    let partial = ALL_FIVES
        .replace("[\"full\"]", "[\"partial\"]")
        .replace("depth = 2", "depth = 2\nworlds = 8");
    let one = Spec::from_toml(&partial.replace("worlds = 8", "worlds = 8\nbelief = \"constraints\"")).unwrap();
    assert_eq!(one.grid.belief, vec![Belief::Constraints]);
    assert_eq!(one.search.belief, Belief::Constraints);
    assert_eq!(one.games(), 20);
    let text = partial.replace(
        "worlds = 8",
        "worlds = 8\nbelief = [\"uniform\", \"constraints\", \"dominai\", \"model\"]",
    );
    let four = Spec::from_toml(&text).unwrap();
    assert_eq!(four.grid.belief, Belief::ALL.to_vec());
    assert_eq!(four.games(), 80);
    assert!(
        four.canonical_json()
            .contains(r#""belief":["uniform","constraints","dominai","model"]"#)
    );
    // The belief varies just slower than the engine: the same deal and
    // repeat under every belief.
    let cs: Vec<_> = (0..8).map(|i| jobs::coords(&four, i)).collect();
    assert_eq!(cs[0].belief, Belief::Uniform);
    assert_eq!(cs[2].belief, Belief::Constraints);
    assert!(
        cs.iter()
            .all(|c| c.starting_state == cs[0].starting_state && c.repeat == 1)
    );
    // Each belief makes its own experiment; the default is uniform.
    let default = Spec::from_toml(&partial).unwrap();
    assert_eq!(default.grid.belief, vec![Belief::Uniform]);
    assert_ne!(default.id(), one.id());
    // The thesis keeps its hash with uniform written out, and takes constraints.
    let thesis = with("observability = [\"partial\"]");
    let written = format!("{thesis}[search]\nbelief = \"uniform\"\n");
    assert_eq!(
        Spec::from_toml(&written).unwrap().id(),
        Spec::from_toml(&thesis).unwrap().id()
    );
    let c = Spec::from_toml(&format!("{thesis}[search]\nbelief = \"constraints\"\n")).unwrap();
    assert!(c.canonical_json().contains(r#""belief":"Constraints""#));
}

#[test]
fn a_belief_the_spec_cannot_use_is_refused_naming_key_and_value() {
    let partial = ALL_FIVES
        .replace("[\"full\"]", "[\"partial\"]")
        .replace("depth = 2", "depth = 2\nworlds = 8");
    let thesis = with("observability = [\"partial\"]");
    let cases: Vec<(String, Vec<&str>)> = vec![
        (
            partial.replace("worlds = 8", "worlds = 8\nbelief = \"bayes\""),
            vec![
                "search.belief = \"bayes\"",
                "uniform",
                "constraints",
                "dominai",
                "model",
            ],
        ),
        (
            partial.replace("worlds = 8", "worlds = 8\nbelief = [\"model\", \"model\"]"),
            vec!["search.belief = \"model\"", "listed twice"],
        ),
        (
            partial.replace("worlds = 8", "worlds = 8\nbelief = 3"),
            vec!["search.belief = 3", "list of them"],
        ),
        (
            format!("{thesis}[search]\nbelief = \"model\"\n"),
            vec!["search.belief = \"model\"", "all-fives"],
        ),
        (
            ALL_FIVES.replace("depth = 2", "depth = 2\nbelief = \"constraints\""),
            vec!["search.belief", "partial"],
        ),
        (
            ALL_FIVES.replace("[\"mstar\", \"expectimax\"]", "[\"dominai\"]"),
            vec!["grid.observability = \"full\"", "dominai"],
        ),
        (
            with("engine = [\"dominai\"]"),
            vec!["grid.engine = \"dominai\"", "all-fives"],
        ),
    ];
    for (text, parts) in cases {
        let e = Spec::from_toml(&text).unwrap_err().to_string();
        for p in parts {
            assert!(e.contains(p), "{e:?} lacks {p:?}");
        }
    }
}

#[test]
fn a_spread_of_starting_states_covers_the_deals_evenly_without_repeats() {
    use std::collections::HashSet;
    let text = ALL_FIVES.replace("starting_states = \"0-9\"", "starting_states = \"spread:1000\"");
    let s = Spec::from_toml(&text).unwrap();
    assert!(s.canonical_json().contains(r#""starting_states":{"spread":1000}"#));
    assert_eq!(s.games(), 2000);
    let count = 137_680_171_200u64;
    let states: Vec<u64> = s.grid.starting_states.iter().collect();
    assert_eq!(states.len(), 1000);
    assert_eq!(states.iter().collect::<HashSet<_>>().len(), 1000, "no state twice");
    assert!(states.iter().all(|&i| i < count));
    // Every tenth of the index space holds about a tenth of them.
    let mut deciles = [0; 10];
    for &i in &states {
        deciles[(i as u128 * 10 / count as u128) as usize] += 1;
    }
    assert!(deciles.iter().all(|&d| (80..=120).contains(&d)), "{deciles:?}");
    // A spread of all the states is all of them, each once.
    let all = StateSet::parse("spread:4200", 4200).unwrap();
    let mut v: Vec<u64> = all.iter().collect();
    v.sort();
    assert_eq!(v, (0..4200).collect::<Vec<_>>());
    for bad in ["spread:0", "spread:4201", "spread:x"] {
        let e = StateSet::parse(bad, 4200).unwrap_err();
        assert!(e.contains("spread") && e.contains("4200"), "{e}");
    }
}

#[test]
fn shaping_is_read_as_levels_of_a_grid_factor() {
    use full::Shaping;
    use full::predict::PredictModel;
    use jobs::ShapingLevel;
    let text = ALL_FIVES.replace(
        "depth = 2",
        "depth = 2\nshaping = [\"none\", \"prune\", \"expect\"]\npredictor = [\"logit\", \"dbn\"]\ntop_n = 3\nepsilon = 0.05",
    );
    let s = Spec::from_toml(&text).unwrap();
    let names: Vec<String> = s.grid.shaping.iter().map(ShapingLevel::name).collect();
    assert_eq!(
        names,
        ["none", "prune/logit", "prune/dbn", "expect/logit", "expect/dbn"]
    );
    assert_eq!(
        s.grid.shaping[1].shaping,
        Shaping::Prune {
            top_n: 3,
            epsilon_ppm: 50_000
        }
    );
    assert_eq!(s.grid.shaping[2].predictor, PredictModel::Dbn);
    assert_eq!(s.games(), 100);
    // Just slower than the engine: every level on the same deal and repeat.
    let cs: Vec<_> = (0..10).map(|i| coords(&s, i)).collect();
    assert!(cs.iter().all(|c| c.starting_state == cs[0].starting_state));
    assert_eq!(cs[2].shaping.name(), "prune/logit");
    assert!(
        s.canonical_json()
            .contains(r#""shaping":[{"level":"none"},{"level":"prune/logit","top_n":3,"epsilon_ppm":50000}"#)
    );
    // The fit stage trains the predictors: at the defaults, the shipped ones.
    assert_eq!(s.prediction, Some(full::predict::default_predict_training()));
    assert!(s.needs_predictors() && s.needs_fit() && !s.needs_classifier());
    assert!(
        s.canonical_json()
            .contains(r#""prediction":{"hands":4000,"seed":2026,"seats":2}"#)
    );
    let trained = Spec::from_toml(&format!("{text}\n[prediction]\nhands = 500\nseed = 9\n")).unwrap();
    assert_eq!(trained.prediction.map(|p| (p.hands, p.seed)), Some((500, 9)));
    assert_ne!(trained.id(), s.id());
    // No shaping (or `none` written out) keeps the spec's id.
    let plain = Spec::from_toml(ALL_FIVES).unwrap();
    assert_eq!(plain.grid.shaping, vec![ShapingLevel::NONE]);
    let none = Spec::from_toml(&ALL_FIVES.replace("depth = 2", "depth = 2\nshaping = \"none\"")).unwrap();
    assert_eq!(none.id(), plain.id());
    assert_ne!(s.id(), plain.id());
    // Asymmetric with its parameters; the default predictor is the logit.
    let a = Spec::from_toml(&ALL_FIVES.replace(
        "depth = 2",
        "depth = 2\nshaping = \"asymmetric\"\nlikely = 2\nextend = 3\nreduce = 0",
    ))
    .unwrap();
    assert_eq!(
        a.grid.shaping,
        vec![ShapingLevel {
            shaping: Shaping::Asymmetric {
                likely: 2,
                extend: 3,
                reduce: 0
            },
            predictor: PredictModel::Logit
        }]
    );
}

#[test]
fn a_shaping_the_spec_cannot_use_is_refused_naming_key_and_value() {
    let cases: Vec<(String, Vec<&str>)> = vec![
        (
            ALL_FIVES.replace("depth = 2", "depth = 2\nshaping = \"deeper\""),
            vec!["search.shaping = \"deeper\"", "none, prune, asymmetric or expect"],
        ),
        (
            ALL_FIVES.replace("depth = 2", "depth = 2\nshaping = \"prune\"\npredictor = \"svm\""),
            vec!["search.predictor = \"svm\"", "naive-bayes, dbn or logit"],
        ),
        (
            ALL_FIVES.replace("depth = 2", "depth = 2\nshaping = [\"prune\", \"prune\"]"),
            vec!["search.shaping = \"prune\"", "listed twice"],
        ),
        (
            ALL_FIVES.replace("depth = 2", "depth = 2\nshaping = \"prune\"\ntop_n = 0"),
            vec!["search.top_n = 0"],
        ),
        (
            ALL_FIVES.replace("depth = 2", "depth = 2\nshaping = \"prune\"\nepsilon = 1.5"),
            vec!["search.epsilon = 1.5", "probability"],
        ),
        (
            ALL_FIVES.replace("depth = 2", "depth = 2\nshaping = \"asymmetric\"\nextend = 9"),
            vec!["search.extend = 9"],
        ),
        (
            ALL_FIVES
                .replace("[\"mstar\", \"expectimax\"]", "[\"mstar\", \"ismcts\"]")
                .replace("depth = 2", "budget = 100\nshaping = \"expect\""),
            vec!["search.shaping", "mstar and expectimax", "ismcts"],
        ),
        (
            format!("{BASE}[search]\nshaping = \"prune\"\n"),
            vec!["search.shaping", "all-fives"],
        ),
        (
            format!("{ALL_FIVES}[prediction]\nhands = 100\n"),
            vec!["prediction = hands", "shaping"],
        ),
        (
            format!(
                "{}[prediction]\nhands = 0\n",
                ALL_FIVES.replace("depth = 2", "depth = 2\nshaping = \"prune\"")
            ),
            vec!["prediction.hands = 0"],
        ),
        (
            format!(
                "{}[prediction]\nrounds = 3\n",
                ALL_FIVES.replace("depth = 2", "depth = 2\nshaping = \"prune\"")
            ),
            vec!["prediction.rounds", "unknown"],
        ),
        (
            ALL_FIVES
                .replace("preset = \"all-fives\"", "preset = \"team\"")
                .replace("depth = 2", "depth = 2\nshaping = \"prune\""),
            vec!["search.shaping", "all-fives"],
        ),
    ];
    for (text, parts) in cases {
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
            let text = std::fs::read_to_string(&path).unwrap();
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
