//! Full-game specs (`[rules] preset`, e.g. all-fives): the preset's knobs
//! and match, what a full-game spec refuses, and spreads of starting states.
//! The shared full-game fixture `ALL_FIVES` lives here.

use jobs::{Spec, StateSet};

use crate::spec::{BASE, with};

pub(crate) const ALL_FIVES: &str = r#"
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
            vec!["search.budget = 1000", "per agent", "[agents.NAME] budget", "all-fives"],
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
