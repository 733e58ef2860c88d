//! Unknown keys are refused first, by name, with the nearest known key:
//! a typo is never blamed on the key it was meant to be.

use jobs::Spec;

const AGENTS: &str = r#"
name = "ab"
seed = 2
[rules]
preset = "all-fives"
[grid]
observability = ["full"]
information_source = ["oracle"]
starting_states = "spread:4"
repeats = 1
agents = ["a"]
opponents = ["random"]
[agents.a]
engine = "expectimax"
depth = 2
"#;

fn refused(text: &str) -> String {
    match Spec::from_toml(text) {
        Ok(_) => panic!("accepted: {text}"),
        Err(e) => {
            assert!(e.key().is_some(), "{e}");
            e.to_string()
        }
    }
}

#[test]
fn a_typo_is_named_as_unknown_with_the_key_it_was_meant_to_be() {
    Spec::from_toml(AGENTS).expect("the base spec");
    let cases: Vec<(String, &str, &str)> = vec![
        // The agent's depth misspelt: not "an unlimited depth needs a budget".
        (AGENTS.replace("depth = 2", "dept = 2"), "agents.a.dept", "depth"),
        (
            jobs::SMOKE_SPEC.replace("engine = [", "engines = ["),
            "grid.engines",
            "engine",
        ),
        (
            jobs::SMOKE_SPEC.replace("repeats = 1", "repeat = 1"),
            "grid.repeat",
            "repeats",
        ),
        (
            AGENTS.replace("[rules]\npreset", "[rules.two]\nseat = 2\n[rules]\npreset"),
            "rules.two.seat",
            "seats",
        ),
        (format!("{AGENTS}[search]\nworld = 4\n"), "search.world", "worlds"),
        (
            format!("{AGENTS}[stop]\nsprt = {{ elo0 = 0, elo = 5 }}\n"),
            "stop.sprt.elo",
            "elo0",
        ),
        (format!("{AGENTS}[stop]\nsptr = 1\n"), "stop.sptr", "sprt"),
        (format!("{AGENTS}[output]\ndirr = \"x\"\n"), "output.dirr", "dir"),
        (
            jobs::SMOKE_SPEC.replace("folds = 5", "fold = 5"),
            "classifier.fold",
            "folds",
        ),
        (
            jobs::SMOKE_SPEC.replace("games = 450", "game = 450"),
            "shards.game",
            "games",
        ),
        (
            jobs::SMOKE_SPEC.replace("seed = 7", "seed = 7\nnmae = \"x\""),
            "nmae",
            "name",
        ),
    ];
    for (text, key, meant) in cases {
        let e = refused(&text);
        assert!(
            e.contains(&format!("unknown key `{key}`")) && e.contains(&format!("did you mean `{meant}`?")),
            "{key}: {e}"
        );
    }
}

/// A two-seat All Fives grid with one shaping and a target list, for the
/// settings that only some levels read.
fn fives(search: &str, targets: &str) -> String {
    format!(
        r#"
name = "f"
seed = 1
[rules]
preset = "all-fives"
[grid]
information_source = ["oracle"]
observability = ["partial"]
target = [{targets}]
starting_states = "spread:4"
engine = ["mstar", "expectimax"]
repeats = 1
[search]
budget = 500
worlds = 2
{search}
"#
    )
}

#[test]
fn settings_that_nothing_reads_are_refused_naming_what_would_read_them() {
    Spec::from_toml(&fives("", "\"scorer\"")).expect("the base spec");
    let cases: Vec<(String, &str, &str)> = vec![
        (
            fives("predictor = \"dbn\"", "\"scorer\""),
            "search.predictor",
            "shaping",
        ),
        (
            fives("shaping = \"expect\"\ntop_n = 3", "\"scorer\""),
            "search.top_n",
            "\"prune\"",
        ),
        (
            fives("shaping = \"prune\"\nlikely = 2", "\"scorer\""),
            "search.likely",
            "\"asymmetric\"",
        ),
        (
            fives("target_depth = 3", "\"scorer\""),
            "search.target_depth",
            "searcher",
        ),
        (
            format!("{}[classifier]\nsamples = 100\n", fives("", "\"scorer\"")),
            "classifier",
            "information_source",
        ),
    ];
    for (text, key, reader) in cases {
        let e = Spec::from_toml(&text).unwrap_err();
        assert_eq!(e.key(), Some(key), "{e}");
        assert!(e.to_string().contains(reader), "{key}: {e}");
    }
    // Each is accepted where something reads it.
    Spec::from_toml(&fives(
        "shaping = \"prune\"\ntop_n = 3\npredictor = \"dbn\"",
        "\"scorer\"",
    ))
    .unwrap();
    Spec::from_toml(&fives(
        "shaping = [\"prune\", \"asymmetric\"]\nlikely = 2",
        "\"scorer\"",
    ))
    .unwrap();
    Spec::from_toml(&fives("target_depth = 3", "\"scorer\", \"searcher\"")).unwrap();
}
