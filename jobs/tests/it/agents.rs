//! Named agents, paired seat-swapped deals and the SPRT's arithmetic.

use jobs::sprt::shard_stats;
use jobs::{AgentPlay, Format, GameRow, Spec, SpecError};

use crate::run_all;

const POOL: &str = r#"
name = "pool"
seed = 3
[rules]
preset = "all-fives"
[grid]
observability = ["full"]
information_source = ["oracle"]
starting_states = "spread:5"
repeats = 1
agents = ["a", "b", "scorer"]
tournament = "round-robin"
[search]
depth = 2
[agents.a]
engine = "expectimax"
[agents.b]
engine = "expectimax"
[shards]
games = 7
"#;

#[test]
fn a_round_robin_pairs_every_two_agents_once_and_strategies_never_meet_each_other() {
    let spec = Spec::from_toml(POOL).unwrap();
    let pool = spec.pool.as_ref().unwrap();
    assert_eq!(pool.format, Format::RoundRobin);
    let names = |(a, o): (u16, u16)| {
        (
            pool.agents[a as usize].name.as_str(),
            pool.agents[o as usize].name.as_str(),
        )
    };
    let pairs: Vec<_> = pool.pairings.iter().map(|&p| names(p)).collect();
    assert_eq!(pairs, [("a", "b"), ("a", "scorer"), ("b", "scorer")]);
    assert!(matches!(pool.agents[2].play, AgentPlay::Strategy(_)));
    // Paired by default, and a pair never straddles two shards.
    assert!(pool.paired);
    assert_eq!(
        spec.shard_games, 8,
        "an odd shard size is rounded up to keep pairs whole"
    );
    assert_eq!(spec.games(), 3 * 5 * 2);
    let mut with_defender = POOL.replace("\"scorer\"]", "\"scorer\", \"defender\"]");
    with_defender = with_defender.replace(
        "tournament = \"round-robin\"",
        "tournament = \"round-robin\"\npaired = false",
    );
    let s = Spec::from_toml(&with_defender).unwrap();
    let pool = s.pool.clone().unwrap();
    assert_eq!(
        pool.pairings.len(),
        5,
        "scorer and defender do not meet: {:?}",
        pool.pairings
    );
    assert_eq!(s.games(), 5 * 5);
}

#[test]
fn identical_agents_on_swapped_seats_replay_each_deal_mirrored() {
    // a and b are the same deterministic search: a deal's second game is
    // its first with the names swapped, so the agent's score difference
    // changes sign. This is what seat swapping means, move for move.
    let spec = Spec::from_toml(POOL).unwrap();
    let rows = run_all(&spec);
    assert_eq!(rows.len() as u64, spec.games());
    let ab: Vec<&GameRow> = rows.iter().filter(|r| r.opponent.as_deref() == Some("b")).collect();
    assert_eq!(ab.len(), 10);
    for pair in ab.chunks(2) {
        let (x, y) = (pair[0], pair[1]);
        assert_eq!((x.agent_side, y.agent_side), (Some(0), Some(1)));
        assert_eq!(x.game_index + 1, y.game_index);
        assert_eq!(x.starting_state, y.starting_state);
        assert_eq!(x.moves, y.moves, "the same plays from the same seats");
        assert_eq!(x.score_diff, -y.score_diff);
        assert_eq!((x.player_score, x.target_score), (y.target_score, y.player_score));
    }
    // Against the scorer the agent plays both hands of every deal.
    let vs: Vec<&GameRow> = rows
        .iter()
        .filter(|r| r.agent.as_deref() == Some("a") && r.opponent.as_deref() == Some("scorer"))
        .collect();
    assert!(vs.chunks(2).any(|p| p[0].moves != p[1].moves));
    // Every row names its agent and opponent; the counts of a's pairs add up.
    let stats = shard_stats(
        &rows
            .iter()
            .filter(|r| r.opponent.as_deref() == Some("b"))
            .cloned()
            .collect::<Vec<_>>(),
    );
    assert_eq!(stats.pairs(), 5);
    assert_eq!(
        stats.penta[2], 5,
        "mirrored pairs score 1 of 2 points each: {:?}",
        stats.penta
    );
}

#[test]
fn agents_rows_round_trip_through_parquet_and_keep_their_checksums() {
    let spec = Spec::from_toml(POOL).unwrap();
    let rows = run_all(&spec);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("part.parquet");
    jobs::write_partition(&p, "pool", &rows).unwrap();
    let back: Vec<GameRow> = jobs::read_partition(&p).unwrap().into_iter().map(|(_, r)| r).collect();
    assert_eq!(jobs::checksum(&back), jobs::checksum(&rows));
    assert_eq!(back[1].agent.as_deref(), Some("a"));
    assert_eq!(back[1].agent_side, Some(1));
}

fn err(text: &str) -> SpecError {
    Spec::from_toml(text).unwrap_err()
}

#[test]
fn agent_specs_refuse_mistakes_by_name() {
    let e = err(&POOL.replace("agents = [\"a\", \"b\", \"scorer\"]", "agents = [\"a\", \"c\"]"));
    assert_eq!(e.key(), Some("grid.agents"), "{e}");
    assert!(e.to_string().contains("\"c\""), "{e}");
    let e = err(&POOL.replace(
        "engine = \"expectimax\"\n[agents.b]",
        "engine = \"alphazero\"\n[agents.b]",
    ));
    assert_eq!(e.key(), Some("agents.a.engine"), "{e}");
    let e = err(&POOL.replace(
        "[agents.b]\nengine = \"expectimax\"",
        "[agents.b]\nengine = \"expectimax\"\nbudgte = 5",
    ));
    assert_eq!(e.key(), Some("agents.b.budgte"), "{e}");
    let e = err(&POOL.replace(
        "tournament = \"round-robin\"",
        "tournament = \"round-robin\"\nopponents = [\"a\"]",
    ));
    assert_eq!(e.key(), Some("grid.tournament"), "{e}");
    let e = err(&POOL.replace("tournament = \"round-robin\"", ""));
    assert_eq!(e.key(), Some("grid.opponents"), "{e}");
    let e = err(&POOL.replace(
        "[agents.b]\nengine = \"expectimax\"",
        "[agents.b]\nengine = \"ismcts\"\nbudget = 100\nadaptive = 0.95",
    ));
    assert_eq!(e.key(), Some("agents.b.adaptive"), "{e}");
    assert!(e.to_string().contains("agents.b.adaptive = 0.95"), "{e}");
    assert!(e.to_string().contains("mstar and expectimax, not ismcts"), "{e}");
    // Learned leaves said of an agent that has none are refused, never
    // written into its name and left unused.
    for engine in ["ismcts", "dominai"] {
        let e = err(&POOL.replace(
            "[agents.b]\nengine = \"expectimax\"",
            &format!("[agents.b]\nengine = \"{engine}\"\nbudget = 100\nevaluation = \"learned\""),
        ));
        assert_eq!(e.key(), Some("agents.b.evaluation"), "{e}");
        assert!(e.to_string().contains(&format!("{engine} has none")), "{e}");
    }
    // Block and team search to the score: All Fives' learned leaves and
    // beliefs are refused there, naming the agent's key.
    let block = POOL.replace("preset = \"all-fives\"", "preset = \"block\"").replace(
        "agents = [\"a\", \"b\", \"scorer\"]",
        "agents = [\"a\", \"b\", \"random\"]",
    );
    assert!(Spec::from_toml(&block).is_ok());
    for (key, line) in [
        ("evaluation", "evaluation = \"learned\""),
        ("belief", "belief = \"model\""),
    ] {
        let text = block
            .replace("observability = [\"full\"]", "observability = [\"partial\"]")
            .replace("depth = 2", "depth = 2\nworlds = 4")
            .replace(
                "[agents.b]\nengine = \"expectimax\"",
                &format!("[agents.b]\nengine = \"expectimax\"\n{line}"),
            );
        let e = err(&text);
        assert_eq!(e.key(), Some(format!("agents.b.{key}").as_str()), "{e}");
        assert!(e.to_string().contains("block"), "{e}");
    }
    let e = err(&POOL.replace("[grid]", "[grid]\nengine = [\"mstar\"]"));
    assert_eq!(e.key(), Some("grid.engine"), "{e}");
    let e = err(&POOL
        .replace("tournament = \"round-robin\"", "opponents = [\"scorer\"]\n")
        .replace("\"a\", \"b\", \"scorer\"", "\"scorer\""));
    assert!(e.to_string().contains("strategy"), "{e}");
    let e = err(&POOL.replace(
        "agents = [\"a\", \"b\", \"scorer\"]\ntournament = \"round-robin\"",
        "target = [\"scorer\"]\nengine = [\"mstar\"]",
    ));
    assert_eq!(e.key(), Some("agents.a"), "{e}");
    // Under partial observation every searching agent samples worlds.
    let e = err(&POOL.replace("observability = [\"full\"]", "observability = [\"partial\"]"));
    assert_eq!(e.key(), Some("agents.a.worlds"), "{e}");
    let ok = POOL
        .replace("observability = [\"full\"]", "observability = [\"partial\"]")
        .replace("[search]\ndepth = 2", "[search]\ndepth = 2\nworlds = 4");
    assert!(Spec::from_toml(&ok).is_ok());
    // Budgets given per agent are enough: [search] needs none.
    let budgets = POOL
        .replace("[search]\ndepth = 2\n", "")
        .replace("engine = \"expectimax\"\n", "engine = \"expectimax\"\nbudget = 500\n");
    assert!(
        Spec::from_toml(&budgets).is_ok(),
        "{:?}",
        Spec::from_toml(&budgets).err()
    );
    let e = err(&POOL.replace("[search]\ndepth = 2\n", ""));
    assert_eq!(e.key(), Some("agents.a.depth"), "{e}");
    let e = err(&format!("{POOL}\n[stop]\nsprt = {{ elo0 = 0, elo1 = 5 }}\n"));
    assert_eq!(e.key(), Some("stop.sprt"), "{e}");
    assert!(e.to_string().contains("3 pairing"), "{e}");
}

const AB: &str = r#"
name = "ab"
seed = 3
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
[shards]
games = 10
"#;

#[test]
fn sprt_specs_read_and_refuse_by_name() {
    let s = Spec::from_toml(AB).unwrap();
    let t = s.stop.unwrap();
    assert_eq!((t.h0, t.h1, t.alpha, t.beta), (0.0, 50.0, 0.05, 0.05));
    let e = err(&AB.replace("elo1 = 50", "elo1 = -5"));
    assert_eq!(e.key(), Some("stop.sprt.elo1"), "{e}");
    let e = err(&AB.replace("alpha = 0.05", "alpha = 0.7"));
    assert_eq!(e.key(), Some("stop.sprt.alpha"), "{e}");
    let e = err(&AB.replace("elo0 = 0, elo1 = 50", "elo0 = 0, diff1 = 3"));
    assert_eq!(e.key(), Some("stop.sprt"), "{e}");
    let e = err(&AB.replace("[grid]", "[grid]\npaired = false"));
    assert!(e.to_string().contains("paired = false"), "{e}");
    let diff = Spec::from_toml(&AB.replace("elo0 = 0, elo1 = 50", "diff0 = 0, diff1 = 4")).unwrap();
    assert_eq!(diff.stop.unwrap().on, jobs::SprtOn::ScoreDiff);
    assert_ne!(
        Spec::from_toml(AB).unwrap().hash(),
        diff.hash(),
        "the test is part of the experiment"
    );
}

#[test]
fn shards_sized_in_minutes_follow_the_estimated_cost_of_a_game() {
    let d6 = Spec::from_toml(jobs::DOUBLE6_SPEC).unwrap();
    let smoke = Spec::from_toml(jobs::DOUBLE6_SMOKE_SPEC).unwrap();
    // Same design: the smoke spec is the reference workload on 20 deals.
    assert_eq!(d6.games(), 100_000);
    assert_eq!(smoke.games(), 400);
    assert_eq!(d6.estimated_game_secs(), smoke.estimated_game_secs());
    // 5 minutes of a ~0.07 s game (about 5 searched decisions a hand;
    // half the games sample 16 worlds of 20,000 nodes, half search one):
    // thousands of games a shard.
    let g = d6.estimated_game_secs();
    assert!((0.05..0.5).contains(&g), "{g}");
    assert_eq!(d6.shard_games, (300.0 / g).round() as u64);
    assert_eq!(smoke.shard_games, (6.0 / g).round() as u64);
    // The thesis's games are ~10^4 times cheaper.
    let thesis = Spec::from_toml(jobs::MYERS2014_SPEC).unwrap();
    assert!(g / thesis.estimated_game_secs() > 1e3);
    let e = Spec::from_toml(&jobs::DOUBLE6_SPEC.replace("minutes = 5", "minutes = 5\ngames = 10")).unwrap_err();
    assert_eq!(e.key(), Some("shards.minutes"), "{e}");
    let e = Spec::from_toml(&jobs::DOUBLE6_SPEC.replace("minutes = 5", "minutes = 0")).unwrap_err();
    assert_eq!(e.key(), Some("shards.minutes"), "{e}");
    // The model's terms: a side's seats and hand size count decisions,
    // leaves set the node rate, and ISMCTS spends its budget at any depth.
    let seats = |rules: &str| {
        let text = jobs::DOUBLE6_SPEC.replace("preset = \"all-fives\"", &format!("preset = \"all-fives\"\n{rules}"));
        Spec::from_toml(&text).unwrap().estimated_game_secs()
    };
    let (two, three, teams) = (seats(""), seats("seats = 3"), seats("seats = 4\nteams = true"));
    assert!(two > three && teams > three, "{two} {three} {teams}");
    let score = Spec::from_toml(&jobs::DOUBLE6_SPEC.replace("evaluation = \"learned\"", "")).unwrap();
    assert!(score.estimated_game_secs() < g);
    let ismcts = |budget: u32| {
        let text = jobs::DOUBLE6_SPEC
            .replace("engine = [\"mstar\", \"expectimax\"]", "engine = [\"ismcts\"]")
            .replace("budget = 20000", &format!("budget = {budget}\ndepth = 2"));
        Spec::from_toml(&text).unwrap().estimated_game_secs()
    };
    assert!(ismcts(200_000) > 9.0 * ismcts(20_000));
    // Adaptive effort searches fewer of a partial decision's worlds, the
    // fewer the lower its level; the full-observation half is unchanged.
    let adaptive = |level: &str| {
        let text = jobs::DOUBLE6_SPEC.replace("[search]", &format!("[search]\nadaptive = {level}"));
        Spec::from_toml(&text).unwrap().estimated_game_secs()
    };
    let (a99, a95) = (adaptive("true"), adaptive("0.95"));
    assert!(a95 < a99 && a99 < g, "{a95} {a99} {g}");
    assert!(
        a95 > 0.5 * g,
        "the full half and at least a quarter of the worlds: {a95} {g}"
    );
    assert_eq!(adaptive("false"), g);
    let successor = Spec::from_toml(include_str!("../../specs/double6-adaptive.toml")).unwrap();
    assert_eq!(successor.estimated_game_secs(), a95);
    assert_eq!(successor.shard_games, (120.0 / a95).round() as u64);
}

/// docs/specs.md's agents example is a spec that reads (with a name, a seed
/// and the rules put in front): 2 agents x 3 opponents, less the one that
/// would play itself.
#[test]
fn the_docs_agents_example_reads() {
    let doc = include_str!("../../../docs/specs.md");
    let from = doc.find("## Agents, tournaments and stopping").expect("the section");
    let start = doc[from..].find("```toml\n").expect("a toml block") + from + "```toml\n".len();
    let end = doc[start..].find("```").expect("the block's end") + start;
    let text = format!(
        "name = \"docex\"\nseed = 1\n[rules]\npreset = \"all-fives\"\n{}",
        &doc[start..end]
    );
    let spec = Spec::from_toml(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert!(spec.needs_predictors(), "expect_logit shapes its search");
    assert_eq!(spec.pool.expect("a pool").pairings.len(), 5);
}

#[test]
fn an_agent_may_have_its_own_table_which_changes_no_result() {
    let big = POOL.replace(
        "[agents.a]\nengine = \"expectimax\"\n",
        "[agents.a]\nengine = \"expectimax\"\nbudget = 3000\ntable_mb = 96\n",
    );
    let small = big.replace("table_mb = 96\n", "table_mb = 2\n");
    let (big, small) = (Spec::from_toml(&big).unwrap(), Spec::from_toml(&small).unwrap());
    let table = |s: &Spec| match s.pool.as_ref().unwrap().agents[0].play {
        AgentPlay::Search(a) => a.table_mb,
        AgentPlay::Strategy(_) | AgentPlay::External(_) | AgentPlay::Net(_) => unreachable!("a searches"),
    };
    assert_eq!((table(&big), table(&small)), (96, 2));
    assert!(big.canonical_json().contains("\"table_mb\":96"));
    // An agent that leaves it out takes [search]'s, and its canonical JSON
    // is as before the key existed.
    let plain = Spec::from_toml(POOL).unwrap();
    assert!(!plain.canonical_json().contains("table_mb"));
    let strip = |rows: Vec<GameRow>| {
        rows.into_iter()
            .map(|r| GameRow { elapsed_us: 0, ..r })
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(run_all(&big)), strip(run_all(&small)));
    // A table too small for the agent's budget could replace entries: refused.
    let e = Spec::from_toml(&POOL.replace(
        "[agents.a]\nengine = \"expectimax\"\n",
        "[agents.a]\nengine = \"expectimax\"\nbudget = 1000000\ntable_mb = 8\n",
    ))
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("agents.a.table_mb = 8") && e.contains("at least 48 MB"),
        "{e}"
    );
    let e = Spec::from_toml(&POOL.replace(
        "[agents.b]\nengine = \"expectimax\"\n",
        "[agents.b]\nengine = \"expectimax\"\ntable_mb = 0\n",
    ))
    .unwrap_err();
    assert_eq!(e.key(), Some("agents.b.table_mb"));
}

/// An agent's own `evaluation = "learned"`, with none in `[search]`,
/// searches with the learned leaves: the worker panicked on every game of
/// such a spec ("a learned evaluation is given with settings that use it")
/// before the leaves were given whenever any seat's search reads them.
#[test]
fn an_agents_own_learned_leaves_are_given_without_search_saying_so() {
    let learned = POOL.replace(
        "[agents.a]\nengine = \"expectimax\"\n",
        "[agents.a]\nengine = \"expectimax\"\nevaluation = \"learned\"\n",
    );
    let (learned, score) = (Spec::from_toml(&learned).unwrap(), Spec::from_toml(POOL).unwrap());
    let (rows, plain) = (run_all(&learned), run_all(&score));
    assert_eq!(rows.len() as u64, learned.games());
    // The leaves change a's plays somewhere; b's own games are the same.
    let of = |rows: &[GameRow], agent: &str| -> Vec<String> {
        rows.iter()
            .filter(|r| r.agent.as_deref() == Some(agent) || r.opponent.as_deref() == Some(agent))
            .map(|r| r.moves.clone())
            .collect()
    };
    assert_ne!(of(&rows, "a"), of(&plain, "a"));
    let b_scorer = |rows: &[GameRow]| -> Vec<String> {
        rows.iter()
            .filter(|r| r.agent.as_deref() == Some("b") && r.opponent.as_deref() == Some("scorer"))
            .map(|r| r.moves.clone())
            .collect()
    };
    assert_eq!(b_scorer(&rows), b_scorer(&plain));
    assert!(!b_scorer(&rows).is_empty());
}

/// Block and team, with named agents on both seatings of each deal: a row
/// scores the agent's side, whichever seats it played. Identical agents
/// (a deterministic search, and ISMCTS, whose worlds come from each seat's
/// own stream) replay a deal mirrored, and every row's `score_diff` is its
/// agent side's return when OpenSpiel's history in `moves` is replayed.
#[test]
fn block_and_team_rows_score_the_agents_side_on_both_seatings() {
    use full::{FullRules, Preset, openspiel::replay_history};
    for (preset, name) in [(Preset::Block, "block"), (Preset::Team, "team")] {
        for engine in ["expectimax\"\ndepth = 2", "ismcts\"\nbudget = 2000"] {
            let text = format!(
                r#"
name = "sides"
seed = 5
[rules]
preset = "{name}"
[grid]
observability = ["partial"]
information_source = ["oracle"]
starting_states = "spread:6"
repeats = 1
agents = ["a", "b", "random"]
tournament = "round-robin"
[search]
worlds = 4
belief = "constraints"
[agents.a]
engine = "{engine}
[agents.b]
engine = "{engine}
"#
            );
            let spec = Spec::from_toml(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
            let rules = FullRules::preset(preset);
            let rows = run_all(&spec);
            assert_eq!(rows.len() as u64, spec.games());
            let mut won = [0u32; 2];
            for r in &rows {
                let ids: Vec<u64> = r.moves.split(' ').map(|t| t.parse().unwrap()).collect();
                let returns = replay_history(&rules, &ids).unwrap().returns.expect("a whole hand");
                let side = r.agent_side.expect("named agents") as u8;
                let seat = (0..rules.seats()).find(|&s| rules.side(s) == side).unwrap();
                assert_eq!(r.score_diff, returns[seat as usize], "{name} {engine}: {r:?}");
                assert_eq!(r.score_diff, r.player_score as i32 - r.target_score as i32);
                assert_eq!(r.leader == engine::Seat::Player, side == 0);
                if r.agent.as_deref() == Some("a") && r.opponent.as_deref() == Some("random") {
                    won[side as usize] += (r.score_diff > 0) as u32;
                }
            }
            // A search beats random play from either seating.
            assert!(won[0] >= 3 && won[1] >= 3, "{name} {engine}: wins by side {won:?}");
            let ab: Vec<&GameRow> = rows.iter().filter(|r| r.opponent.as_deref() == Some("b")).collect();
            for pair in ab.chunks(2) {
                let (x, y) = (pair[0], pair[1]);
                assert_eq!((x.agent_side, y.agent_side), (Some(0), Some(1)));
                assert_eq!(x.moves, y.moves, "{name} {engine}: the same plays from the same seats");
                assert_eq!(x.score_diff, -y.score_diff);
            }
        }
    }
}

/// Engines are named through the one engine type: every engine muggins
/// runs is an agent's `engine` (so a new variant needs no parser here),
/// read back as itself, and a misspelt one is refused naming them all.
#[test]
fn every_engine_of_the_one_engine_type_is_an_agents_engine() {
    for e in engine::PlayerEngine::SEARCHES {
        let toml = POOL
            .replace("observability = [\"full\"]", "observability = [\"partial\"]")
            .replace("[search]\ndepth = 2", "[search]\ndepth = 2\nbudget = 500\nworlds = 2")
            .replace(
                "[agents.a]\nengine = \"expectimax\"",
                &format!("[agents.a]\nengine = \"{e}\""),
            );
        let spec = Spec::from_toml(&toml).unwrap_or_else(|err| panic!("{e}: {err}"));
        match spec.pool.as_ref().unwrap().agents[0].play {
            AgentPlay::Search(s) => assert_eq!(s.settings.engine, e),
            ref other => panic!("{e}: {other:?}"),
        }
    }
    // Rows carry the engine through serde: the same names.
    for e in engine::PlayerEngine::ALL {
        assert_eq!(serde_json::to_value(e).unwrap(), e.name());
    }
    let bad = POOL.replace(
        "[agents.a]\nengine = \"expectimax\"",
        "[agents.a]\nengine = \"minimax\"",
    );
    let err = Spec::from_toml(&bad).unwrap_err().to_string();
    assert!(
        err.contains("agents.a.engine") && err.contains("mstar, expectimax, ismcts or dominai"),
        "{err}"
    );
}
