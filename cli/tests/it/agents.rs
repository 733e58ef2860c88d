//! Named agents through `muggins run`: a tournament's report (Elo,
//! pairings, plots) and an SPRT that stops the experiment where the test
//! decides, the same shard whatever the number of workers.

use crate::util::{Dir, TestCommand};

const SPRT: &str = r#"
name = "sprt"
seed = 8
[rules]
preset = "all-fives"
[grid]
information_source = ["oracle"]
observability = ["full"]
starting_states = "spread:400"
repeats = 1
agents = ["searching"]
opponents = ["random"]
[search]
depth = 2
[agents.searching]
engine = "expectimax"
[stop]
sprt = { elo0 = 0, elo1 = 60, alpha = 0.05, beta = 0.05 }
[shards]
games = 10
"#;

fn run(dir: &Dir, text: &str, workers: &str) -> String {
    let spec = dir.create_spec(text);
    let out = TestCommand::new(&["run"])
        .arg(&spec)
        .arg("--out")
        .arg(dir.path())
        .arg("--workers")
        .arg(workers)
        .arg("--threads")
        .arg(workers)
        .timeout(std::time::Duration::from_secs(300))
        .success();
    // The run's workers stop before its coordinator: a task the SPRT made
    // unneeded is never retried against a closed port after the success,
    // and its completion or release, turned down as not needed (also when
    // the test decides between the coordinator's two looks at the lease), is
    // no warning.
    for noise in [
        "tcp connect error",
        "heartbeat failed",
        "could not report",
        "completion refused",
        "did not take the failure",
    ] {
        assert!(!out.stderr.contains(noise), "{noise:?} in {}", out.stderr);
    }
    out.stdout
}

fn manifest(dir: &Dir, name: &str) -> jobs::Manifest {
    serde_json::from_slice(&std::fs::read(dir.join(name).join("_manifest.json")).unwrap()).unwrap()
}

#[test]
fn an_sprt_stops_leasing_where_it_decides_and_keeps_exactly_those_games() {
    let (one, two) = (Dir::new(), Dir::new());
    let out = run(&two, SPRT, "2");
    assert!(out.contains("): H1 accepted after"), "{out}");
    run(&one, SPRT, "1");
    let (m1, m2) = (manifest(&one, "sprt"), manifest(&two, "sprt"));
    let grid = jobs::Spec::from_toml(SPRT).unwrap().games();
    assert!(
        m2.games < grid / 4,
        "the planted difference decides early: {} of {grid} games",
        m2.games
    );
    // The shards kept (and their rows) do not depend on how many workers
    // raced ahead: the test is walked in shard order.
    let sums = |m: &jobs::Manifest| {
        m.shards
            .iter()
            .map(|s| (s.shard, s.checksum.clone()))
            .collect::<Vec<_>>()
    };
    assert_eq!(sums(&m1), sums(&m2));
    assert_eq!(m1.games, m2.games);
    let kept = m2.shards.len() as u64;
    assert_eq!(
        m2.shards.iter().map(|s| s.shard).collect::<Vec<_>>(),
        (0..kept).collect::<Vec<_>>()
    );
    // The games directory holds exactly the kept partitions, nothing after.
    let parts = jobs::partitions(&two.join("sprt")).unwrap();
    assert_eq!(parts.len() as u64, kept, "{parts:?}");
    // The report: the verdict, the trace (one point a pair, in game order)
    // ending past the upper bound at the deciding pair and not before, in
    // the last shard kept; the games the test used and kept.
    let r: serde_json::Value = serde_json::from_str(&two.read("sprt/report/report.json")).unwrap();
    let s = &r["tournament"]["sprt"];
    assert_eq!(s["verdict"], "h1", "{s}");
    assert_eq!(s["kept_games"].as_u64(), Some(m2.games));
    assert_eq!(s["grid_games"].as_u64(), Some(grid));
    let trace = s["trace"].as_array().unwrap();
    let pairs = s["pairs"].as_u64().unwrap();
    assert_eq!(trace.len() as u64, pairs);
    assert_eq!(s["games"].as_u64(), Some(2 * pairs));
    assert_eq!(trace.last().unwrap()["shard"].as_u64(), Some(kept - 1));
    assert!(m2.games < 2 * pairs + 10, "{} games kept for {pairs} pairs", m2.games);
    let upper = s["upper"].as_f64().unwrap();
    assert!(trace.last().unwrap()["llr"].as_f64().unwrap() >= upper);
    assert!(
        trace[..trace.len() - 1]
            .iter()
            .all(|t| t["llr"].as_f64().unwrap() < upper)
    );
    // The trace is the test walked over the kept rows pair by pair.
    let sprt = jobs::Spec::from_toml(SPRT).unwrap().stop.unwrap();
    let mut walk = jobs::sprt::Walk::new(sprt);
    for p in &parts {
        let rows = jobs::read_partition(p).unwrap();
        walk.step(&jobs::sprt::ShardPairs::of_rows(rows.iter().map(|(_, r)| r)));
    }
    assert_eq!(walk.trace.len(), trace.len());
    for (a, b) in walk.trace.iter().zip(trace) {
        assert!((a.llr - b["llr"].as_f64().unwrap()).abs() < 1e-12);
    }
    assert!(two.join("sprt/report/sprt.svg").exists());
    let md = two.read("sprt/report/report.md");
    assert!(
        md.contains("### Sequential test (SPRT)") && md.contains("**H1 accepted**"),
        "{md}"
    );
}

/// The issue's example: M* (2,000 nodes, 8 worlds, partial observation)
/// against the random strategy on 4,000 deals with H1 = 30 Elo and the
/// default shards: the experiment keeps at most max(2 x, x + 64) games for
/// a crossing after x games, the same rows with 1 worker and with 2, and
/// the plot draws the LLR as a line over the pairs with the bounds.
const CLEAR: &str = r#"
name = "clear"
seed = 23
[rules]
preset = "all-fives"
[grid]
information_source = ["oracle"]
observability = ["partial"]
starting_states = "spread:4000"
repeats = 1
agents = ["mstar"]
opponents = ["random"]
[agents.mstar]
engine = "mstar"
budget = 2000
worlds = 8
[stop]
sprt = { elo0 = 0, elo1 = 30, alpha = 0.05, beta = 0.05 }
"#;

#[test]
fn a_clear_result_stops_within_a_task_of_the_pair_where_the_test_decides() {
    let (one, two) = (Dir::new(), Dir::new());
    run(&two, CLEAR, "2");
    run(&one, CLEAR, "1");
    let (m1, m2) = (manifest(&one, "clear"), manifest(&two, "clear"));
    let r: serde_json::Value = serde_json::from_str(&two.read("clear/report/report.json")).unwrap();
    let s = &r["tournament"]["sprt"];
    assert_eq!(s["verdict"], "h1", "{s}");
    let crossing = s["games"].as_u64().unwrap();
    assert!(
        m2.games <= (2 * crossing).max(crossing + 64),
        "{} games kept for a crossing after {crossing}",
        m2.games
    );
    let sums = |m: &jobs::Manifest| m.shards.iter().map(|s| s.checksum.clone()).collect::<Vec<_>>();
    assert_eq!(sums(&m1), sums(&m2), "the same rows with 1 and 2 workers");
    let svg = two.read("clear/report/sprt.svg");
    assert!(svg.contains("<polyline"), "the LLR is a line");
    assert!(svg.contains("stroke-dasharray"), "the bounds are horizontal lines");
    assert!(!svg.contains(".5</text>"), "integer ticks: {svg}");
}

#[test]
fn two_identical_agents_accept_h0() {
    let dir = Dir::new();
    let text = SPRT
        .replace("name = \"sprt\"", "name = \"same\"")
        .replace("opponents = [\"random\"]", "opponents = [\"twin\"]")
        .replace("[stop]", "[agents.twin]\nengine = \"expectimax\"\n[stop]")
        .replace("elo1 = 60", "elo1 = 30");
    let out = run(&dir, &text, "2");
    assert!(out.contains("): H0 accepted after"), "{out}");
    let r: serde_json::Value = serde_json::from_str(&dir.read("same/report/report.json")).unwrap();
    let s = &r["tournament"]["sprt"];
    assert_eq!(s["verdict"], "h0", "{s}");
    assert_eq!(
        s["penta"][2].as_u64(),
        s["pairs"].as_u64(),
        "every pair one win each: {s}"
    );
}

#[test]
fn a_round_robin_reports_elo_pairings_and_pentanomial_counts() {
    let dir = Dir::new();
    let text = r#"
name = "pool"
seed = 4
[rules]
preset = "all-fives"
[grid]
information_source = ["oracle"]
observability = ["partial"]
starting_states = "spread:8"
repeats = 1
agents = ["mstar_b300", "expectimax_b300", "scorer", "random"]
tournament = "round-robin"
[search]
depth = 3
worlds = 4
budget = 300
[agents.mstar_b300]
engine = "mstar"
[agents.expectimax_b300]
engine = "expectimax"
belief = "constraints"
"#;
    let out = run(&dir, text, "2");
    assert!(out.contains("rank agent") && out.contains("mstar_b300"), "{out}");
    // 5 pairings (the two strategies never meet) x 8 deals x 2 seatings.
    assert!(out.contains("80 rows in"), "{out}");
    let mut rows = Vec::new();
    for part in jobs::partitions(&dir.join("pool")).unwrap() {
        rows.extend(jobs::read_partition(&part).unwrap().into_iter().map(|(_, r)| r));
    }
    assert_eq!(rows.len(), 80);
    assert!(rows.iter().all(|r| r.agent.is_some() && r.opponent.is_some()));
    let got: Vec<_> = rows.into_iter().map(|r| jobs::GameRow { elapsed_us: 0, ..r }).collect();
    assert_eq!(got, crate::cluster::expected(text, &dir.join("pool")));
    let r: serde_json::Value = serde_json::from_str(&dir.read("pool/report/report.json")).unwrap();
    let t = &r["tournament"];
    assert_eq!(t["format"], "round-robin");
    assert_eq!(t["ratings"].as_array().unwrap().len(), 4);
    let pairings = t["pairings"].as_array().unwrap();
    assert_eq!(pairings.len(), 5);
    for p in pairings {
        let penta: u64 = p["penta"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap()).sum();
        assert_eq!(penta, 8, "every deal is one pair: {p}");
        let wtl = p["wins"].as_u64().unwrap() + p["ties"].as_u64().unwrap() + p["losses"].as_u64().unwrap();
        assert_eq!(wtl, 16);
    }
    // The ratings are centred on 0 and ordered best first.
    let elo: Vec<f64> = t["ratings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["elo"].as_f64().unwrap())
        .collect();
    assert!(elo.iter().sum::<f64>().abs() < 1e-6, "{elo:?}");
    assert!(elo.windows(2).all(|w| w[0] >= w[1]), "{elo:?}");
    let md = dir.read("pool/report/report.md");
    // The two searching agents faced scorer and random on the same deals
    // and seatings: their paired difference, as the rows give it.
    let comps = t["comparisons"].as_array().unwrap();
    assert_eq!(comps.len(), 2, "{comps:?}");
    for c in comps {
        let (a, b, o) = (
            c["a"].as_str().unwrap(),
            c["b"].as_str().unwrap(),
            c["opponent"].as_str().unwrap(),
        );
        let diff = |agent: &str| -> std::collections::BTreeMap<(u64, u32, Option<u32>), i32> {
            got.iter()
                .filter(|r| r.agent.as_deref() == Some(agent) && r.opponent.as_deref() == Some(o))
                .map(|r| ((r.starting_state, r.repeat, r.agent_side), r.score_diff))
                .collect()
        };
        let (da, db) = (diff(a), diff(b));
        assert_eq!(da.len(), 16);
        let mean = da.iter().map(|(k, v)| (v - db[k]) as f64).sum::<f64>() / 16.0;
        assert_eq!(c["test"]["n"].as_u64(), Some(16));
        assert!((c["test"]["mean"].as_f64().unwrap() - mean).abs() < 1e-9, "{c}");
    }
    assert!(
        md.contains("### Agents against the same opponent on the same deals"),
        "{md}"
    );
    for f in ["elo.svg", "elo.csv", "tournament.csv"] {
        assert!(dir.join("pool/report").join(f).exists(), "{f}");
    }
    assert!(md.contains("## Agents") && md.contains("**Headline:**"), "{md}");
}
