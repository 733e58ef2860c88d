//! Rules (and with them seats and partnerships) as a factor of the grid:
//! `[rules.NAME]` tables and `[grid] rules`.

use jobs::{GameRow, Spec, SpecError};

use crate::run_all;

/// Three rule sets of double-6 All Fives: two seats, four in partnerships,
/// three cutthroat.
const FACTOR: &str = r#"
name = "seats"
seed = 5
[rules]
preset = "all-fives"
[rules.two]
seats = 2
[rules.teams]
seats = 4
teams = true
[rules.three]
seats = 3
[grid]
rules = ["two", "teams", "three"]
information_source = ["oracle"]
observability = ["full"]
target = ["scorer", "random"]
engine = ["mstar", "expectimax"]
starting_states = "spread:4"
repeats = 1
[search]
depth = 2
[shards]
games = 5
"#;

/// The same design with one rule set, `knobs` in `[rules]`.
fn single(knobs: &str) -> String {
    FACTOR
        .replace(
            "[rules.two]\nseats = 2\n[rules.teams]\nseats = 4\nteams = true\n[rules.three]\nseats = 3\n",
            &format!("{knobs}\n"),
        )
        .replace("rules = [\"two\", \"teams\", \"three\"]\n", "")
}

/// A row as its grid point plays it, wherever the grid put it.
fn played(r: &GameRow) -> GameRow {
    GameRow {
        game_index: 0,
        elapsed_us: 0,
        rules: None,
        ..r.clone()
    }
}

#[test]
fn each_rule_set_plays_exactly_the_games_of_a_spec_with_those_rules_alone() {
    let spec = Spec::from_toml(FACTOR).unwrap();
    let names: Vec<&str> = spec.rule_sets.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["two", "teams", "three"], "the grid's order");
    let per_set = 2 * 4 * 2;
    assert_eq!(spec.games(), 3 * per_set);
    let rows = run_all(&spec);
    assert!(rows.iter().enumerate().all(|(i, r)| r.game_index == i as u64));
    for (k, (name, knobs)) in [
        ("two", "seats = 2"),
        ("teams", "seats = 4\nteams = true"),
        ("three", "seats = 3"),
    ]
    .into_iter()
    .enumerate()
    {
        let alone = Spec::from_toml(&single(knobs)).unwrap();
        assert!(alone.rule_sets.is_empty());
        assert_eq!(alone.full.unwrap().config, spec.rule_sets[k].config, "{name}");
        let want = run_all(&alone);
        let got = &rows[k * per_set as usize..(k + 1) * per_set as usize];
        assert!(got.iter().all(|r| r.rules.as_deref() == Some(name)), "{name}");
        assert!(want.iter().all(|r| r.rules.is_none()));
        assert_eq!(
            got.iter().map(played).collect::<Vec<_>>(),
            want.iter().map(played).collect::<Vec<_>>(),
            "rule set {name}: the same deals, moves and scores as the spec of its rules alone"
        );
        // A rule set's checksum line names it; a spec without the factor's does not.
        assert!(got[0].canonical_line().contains(&format!(",rules={name}")));
        assert!(!want[0].canonical_line().contains("rules="));
    }
    // Each set's games are its own: four seats play other deals than two.
    let moves = |k: usize| rows[k * per_set as usize].moves.clone();
    assert_ne!(moves(0), moves(1));
    // The column is written and read back.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("part-00000.parquet");
    jobs::write_partition(&path, &spec.id(), &rows).unwrap();
    let back: Vec<GameRow> = jobs::read_partition(&path)
        .unwrap()
        .into_iter()
        .map(|(_, r)| r)
        .collect();
    assert_eq!(back, rows);
}

#[test]
fn named_agents_play_every_two_sided_rule_set_seat_swapped() {
    let text = r#"
name = "pool-seats"
seed = 9
[rules]
preset = "all-fives"
[rules.two]
seats = 2
[rules.teams]
seats = 4
teams = true
[agents.deep]
engine = "expectimax"
depth = 2
[grid]
rules = ["two", "teams"]
agents = ["deep"]
opponents = ["scorer"]
information_source = ["oracle"]
observability = ["full"]
starting_states = "spread:3"
repeats = 1
[search]
depth = 2
"#;
    let spec = Spec::from_toml(text).unwrap();
    assert_eq!(spec.games(), 2 * 3 * 2);
    let rows = run_all(&spec);
    for (k, name) in ["two", "teams"].into_iter().enumerate() {
        let mine = &rows[k * 6..(k + 1) * 6];
        assert!(mine.iter().all(|r| r.rules.as_deref() == Some(name)));
        assert_eq!(
            mine.iter().map(|r| r.agent_side.unwrap()).collect::<Vec<_>>(),
            [0, 1, 0, 1, 0, 1],
            "each deal at both sides"
        );
        let alone = Spec::from_toml(&text.replace("rules = [\"two\", \"teams\"]\n", "").replace(
            "[rules.two]\nseats = 2\n[rules.teams]\nseats = 4\nteams = true\n",
            if name == "two" {
                "seats = 2\n"
            } else {
                "seats = 4\nteams = true\n"
            },
        ))
        .unwrap();
        assert_eq!(
            mine.iter().map(played).collect::<Vec<_>>(),
            run_all(&alone).iter().map(played).collect::<Vec<_>>(),
            "{name}"
        );
    }
}

#[test]
fn a_rules_factor_has_its_own_id_and_specs_without_one_keep_theirs() {
    let spec = Spec::from_toml(FACTOR).unwrap();
    let json = spec.canonical_json();
    assert!(json.contains("\"rule_sets\":[{\"name\":\"two\""), "{json}");
    let alone = Spec::from_toml(&single("seats = 2")).unwrap();
    assert!(!alone.canonical_json().contains("rule_sets"));
    // Renaming a set renames its rows, and changing its knobs changes its games.
    for changed in [
        FACTOR
            .replace("[rules.three]", "[rules.cutthroat]")
            .replace("\"three\"]", "\"cutthroat\"]"),
        FACTOR.replace(
            "[rules.three]\nseats = 3",
            "[rules.three]\nseats = 3\nblocked = \"difference\"",
        ),
        FACTOR.replace("[\"two\", \"teams\", \"three\"]", "[\"teams\", \"two\", \"three\"]"),
    ] {
        let other = Spec::from_toml(&changed).unwrap();
        assert_ne!(other.id(), spec.id(), "{changed}");
    }
    // [rules]'s own keys are every set's defaults.
    let shared = FACTOR.replace(
        "preset = \"all-fives\"\n[rules.two]",
        "preset = \"all-fives\"\nround = false\n[rules.two]",
    );
    let shared = Spec::from_toml(&shared).unwrap();
    assert!(shared.rule_sets.iter().all(|s| !s.config.round));
    assert!(spec.rule_sets.iter().all(|s| s.config.round));
}

fn refused(text: &str) -> SpecError {
    Spec::from_toml(text).expect_err(text)
}

#[test]
fn a_rules_factor_refuses_what_it_cannot_play_naming_the_set_key_and_value() {
    let cases: Vec<(String, Vec<&str>)> = vec![
        (
            FACTOR.replace("rules = [\"two\", \"teams\", \"three\"]\n", ""),
            vec!["grid.rules", "[rules.", "is a named rule set"],
        ),
        (
            single("seats = 2").replace("[grid]\n", "[grid]\nrules = [\"two\"]\n"),
            vec!["grid.rules = \"two\"", "none defined", "define a set as a table"],
        ),
        (
            FACTOR.replace("[\"two\", \"teams\", \"three\"]", "[\"two\", \"tems\"]"),
            vec![
                "grid.rules = \"tems\"",
                "[rules.tems] table",
                "defined: teams, three, two",
                "preset",
            ],
        ),
        (
            single("seats = 2").replace("[grid]\n", "[grid]\nrules = [\"all-fives\", \"thesis\"]\n"),
            vec!["grid.rules = \"thesis\"", "nor a full-game preset"],
        ),
        (
            FACTOR.replace("[\"two\", \"teams\", \"three\"]", "[\"two\", \"two\"]"),
            vec!["grid.rules = \"two\"", "listed twice"],
        ),
        (
            FACTOR.replace("[\"two\", \"teams\", \"three\"]", "\"two\""),
            vec!["grid.rules = \"two\"", "a list of rule-set names"],
        ),
        (
            FACTOR.replace("[\"two\", \"teams\", \"three\"]", "[]"),
            vec!["grid.rules = []", "at least one level"],
        ),
        (FACTOR.replace("seats = 3", "seats = 5"), vec!["rules.three.seats = 5"]),
        (
            FACTOR.replace("seats = 3", "seats = 3\nteams = true"),
            vec!["rules.three.teams = true", "seats = 3"],
        ),
        (
            FACTOR.replace("seats = 3", "seats = 3\nsets = 6"),
            vec!["rules.three.sets"],
        ),
        (
            FACTOR.replace("preset = \"all-fives\"\n[rules.two]", "[rules.two]"),
            vec!["rules.two.preset", "full-game preset"],
        ),
        (
            FACTOR.replace("seats = 3", "preset = \"dominoes\""),
            vec!["rules.three.preset = \"dominoes\"", "all-fives"],
        ),
        (
            FACTOR.replace("seats = 3", "preset = \"block\"") + "[match]\nto = 100\n",
            vec!["rules.three.preset = \"block\"", "[match]", "all-fives"],
        ),
        (
            FACTOR.replace("seats = 3", "preset = \"block\""),
            vec!["grid.target = \"scorer\"", "rule set [rules.three]"],
        ),
        (
            FACTOR
                .replace("\"spread:4\"", "\"0-999\"")
                .replace("seats = 2", "seats = 2\nhand = 1")
                .replace(
                    "[rules.teams]\nseats = 4\nteams = true\n[rules.three]\nseats = 3\n",
                    "[rules.teams]\nseats = 4\nteams = true\n",
                )
                .replace("[\"two\", \"teams\", \"three\"]", "[\"teams\", \"two\"]"),
            vec!["grid.starting_states", "out of range"],
        ),
        (
            FACTOR
                .replace(
                    "target = [\"scorer\", \"random\"]\nengine = [\"mstar\", \"expectimax\"]\n",
                    "",
                )
                .replace("[grid]\n", "[grid]\nagents = [\"a\"]\nopponents = [\"scorer\"]\n")
                + "[agents.a]\nengine = \"mstar\"\n",
            vec!["grid.agents", "two sides", "rule set [rules.three]"],
        ),
    ];
    let sprt = FACTOR
        .replace(
            "target = [\"scorer\", \"random\"]\nengine = [\"mstar\", \"expectimax\"]\n",
            "",
        )
        .replace("[rules.three]\nseats = 3\n", "")
        .replace(", \"three\"]", "]")
        .replace("[grid]\n", "[grid]\nagents = [\"a\"]\nopponents = [\"scorer\"]\n")
        + "[agents.a]\nengine = \"mstar\"\n[stop]\nsprt = { elo0 = 0, elo1 = 50 }\n";
    let e = refused(&sprt).to_string();
    assert!(e.contains("stop.sprt") && e.contains("one rule set"), "{e}");
    Spec::from_toml(&sprt.replace("[stop]\nsprt = { elo0 = 0, elo1 = 50 }\n", "")).expect("the same without the test");
    let e = refused(&single("seats = 2").replace("[grid]\n", "[grid]\nseats = [2, 4]\n")).to_string();
    assert!(
        e.contains("grid.seats = [2, 4]") && e.contains("[rules.four]") && e.contains("grid.rules"),
        "{e}"
    );
    for (text, needles) in cases {
        let e = refused(&text).to_string();
        for n in needles {
            assert!(e.contains(n), "{e:?} should contain {n:?}");
        }
    }
}

#[test]
fn the_docs_rules_factor_example_reads() {
    let doc = include_str!("../../../docs/specs.md");
    let from = doc.find("## Rules as a factor").expect("the section");
    let start = doc[from..].find("```toml\n").expect("a toml block") + from + "```toml\n".len();
    let end = doc[start..].find("```").expect("the block's end") + start;
    let text = format!("name = \"docex\"\nseed = 1\n{}", &doc[start..end]);
    let spec = Spec::from_toml(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let seats: Vec<(u8, bool)> = spec
        .rule_sets
        .iter()
        .map(|s| (s.config.seats, s.config.teams))
        .collect();
    assert_eq!(seats, [(2, false), (3, false), (4, true)]);
    assert_eq!(spec.games(), 3 * 2 * 200 * 2);
}

#[test]
fn a_preset_name_is_a_rule_set_with_its_defaults() {
    let text = r#"
name = "open"
seed = 2
[grid]
rules = ["block", "team"]
information_source = ["oracle"]
observability = ["full"]
target = ["random"]
engine = ["mstar"]
starting_states = "spread:3"
repeats = 1
[search]
depth = 2
"#;
    let spec = Spec::from_toml(text).unwrap();
    let sets: Vec<(&str, u8)> = spec
        .rule_sets
        .iter()
        .map(|s| (s.name.as_str(), s.config.seats))
        .collect();
    assert_eq!(sets, [("block", 2), ("team", 4)]);
    let rows = run_all(&spec);
    assert_eq!(rows.len(), 6);
    assert_eq!(rows[0].rules.as_deref(), Some("block"));
    assert_eq!(rows[5].rules.as_deref(), Some("team"));
    // [rules]'s keys still apply to a preset named in the grid.
    let e = Spec::from_toml(&text.replace("[grid]", "[rules]\nseats = 3\n[grid]")).unwrap_err();
    assert!(e.to_string().contains("rules.block.seats"), "{e}");
}
