//! `engine = "mstar"` (or `"expectimax"`) with `net` and `evaluation =
//! "learned"`: the searches' learned leaves on the worlds a network's
//! agent draws (`full::spiel::world_decide`). Its games are a function of
//! the coordinates, the spec and the model's bytes whatever the threads;
//! its settings are in the spec's id; it plays far above `random`; every
//! refusal names the key.

use jobs::Spec;

use crate::nets::untimed;
use crate::run_all;

const MODEL: &str = "../models/train-all-fives.safetensors";

fn spec(preset: &str, model: &str, agent: &str) -> String {
    format!(
        r#"
name = "net-worlds"
seed = 11
[rules]
preset = "{preset}"
[grid]
observability = ["partial"]
information_source = ["oracle"]
starting_states = "spread:8"
repeats = 1
agents = ["worlds"]
opponents = ["random"]
[search]
budget = 400
worlds = 4
[agents.worlds]
engine = "mstar"
net = "{model}"
evaluation = "learned"
{agent}
[shards]
games = 8
"#
    )
}

fn err(toml: &str) -> String {
    Spec::from_toml(toml).unwrap_err().to_string()
}

#[test]
fn the_learned_leaves_search_the_networks_worlds_repeatably_and_beat_random() {
    let ids: Vec<String> = [
        "",
        "belief = \"policy\"",
        "belief = \"policy\"\nbudget = 800",
        // The adaptive stop (its worlds stop once the play is decided).
        "belief = \"policy\"\nworlds = 12\nadaptive = 0.95",
        "belief = \"policy\"\nworlds = 12",
    ]
    .iter()
    .map(|extra| {
        let s = Spec::from_toml(&spec("all-fives", MODEL, extra)).unwrap();
        let rows = untimed(run_all(&s));
        assert_eq!(rows.len() as u64, s.games());
        assert!(rows.iter().all(|r| r.forfeit.is_none()), "{rows:?}");
        assert!(rows.iter().all(|r| r.agent.as_deref() == Some("worlds")));
        let again = untimed(crate::run_all_on(&s, 1));
        assert_eq!(rows, again, "{extra}: the same games on one thread");
        // M* with the learned leaves against random play: most hands won.
        let won = rows.iter().filter(|r| r.score_diff > 0).count();
        let mean = rows.iter().map(|r| r.score_diff as f64).sum::<f64>() / rows.len() as f64;
        assert!(
            won * 3 >= rows.len() * 2 && mean > 10.0,
            "{extra}: {won} of {} won, mean {mean}",
            rows.len()
        );
        s.id()
    })
    .collect();
    let distinct: std::collections::HashSet<&String> = ids.iter().collect();
    assert_eq!(distinct.len(), ids.len(), "{ids:?}");
    // The adaptive stop enters the id only when set.
    let plain = Spec::from_toml(&spec("all-fives", MODEL, "")).unwrap().canonical_json();
    assert!(
        plain.contains("\"world_search\"") && !plain.contains("adaptive"),
        "{plain}"
    );
    let stopped = Spec::from_toml(&spec("all-fives", MODEL, "adaptive = true")).unwrap();
    assert!(
        stopped.canonical_json().contains("\"eval_sha256\":") && stopped.canonical_json().contains("\"adaptive\":true")
    );
    // The value-leaf search of the same network is another agent.
    let leaves = spec("all-fives", MODEL, "depth = 2").replace("evaluation = \"learned\"\n", "");
    assert!(!ids.contains(&Spec::from_toml(&leaves).unwrap().id()));
}

#[test]
fn the_learned_leaves_over_a_networks_worlds_are_refused_naming_the_key() {
    let e = err(&spec("all-fives", MODEL, "").replace("\"learned\"", "\"score\""));
    assert!(
        e.contains("agents.worlds.evaluation = \"score\"") && e.contains("\"learned\""),
        "{e}"
    );
    let e = err(&spec("all-fives", MODEL, "depth = 3"));
    assert!(e.contains("agents.worlds.depth") && e.contains("budget"), "{e}");
    let e = err(&spec("all-fives", MODEL, "belief = \"head\""));
    assert!(e.contains("agents.worlds.belief") && e.contains("\"policy\""), "{e}");
    let e = err(&spec("all-fives", MODEL, "budget = 0"));
    assert!(e.contains("agents.worlds.budget"), "{e}");
    let e = err(&spec("all-fives", MODEL, "worlds = 1001"));
    assert!(e.contains("agents.worlds.worlds"), "{e}");
    let e = err(&spec("all-fives", MODEL, "adaptive = 1.5"));
    assert!(e.contains("agents.worlds.adaptive = 1.5"), "{e}");
    let e = err(&spec("all-fives", MODEL, "simulations = 10"));
    assert!(e.contains("agents.worlds.simulations"), "{e}");
    let e = err(&spec("all-fives", MODEL, "").replace("budget = 400\n", ""));
    assert!(e.contains("agents.worlds.budget") && e.contains("node budget"), "{e}");
    // Block's network on block: the learned leaves value All-Fives positions.
    let block = spec("block", "../models/train-block.safetensors", "budget = 400")
        .replace("[search]\nbudget = 400\n", "[search]\n");
    let e = err(&block);
    assert!(e.contains("agents.worlds") && e.contains("All-Fives"), "{e}");
}
