//! External agents through `muggins run` (docs/agents.md): the reference
//! agent in a gauntlet read back by DuckDB, and agents that misbehave in
//! every way the protocol names (crash, hang, garbage, illegal id, stderr
//! flood, another protocol version, slow within the limit). Each ends as
//! documented, nothing hangs, no other game is lost, and the messages name
//! the agent and the reason.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::util::{Dir, TestCommand};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

/// A gauntlet: M* against `reference` (scripts/agents/random_agent.py) and
/// the misbehaving agent `bad` (its `args` and limits).
fn spec(name: &str, bad: &str, limits: &str, games: u32, preset: &str) -> String {
    let agent = repo().join("scripts/agents/random_agent.py");
    let misbehave = repo().join("cli/tests/agents/misbehave.py");
    format!(
        r#"
name = "{name}"
seed = 3
[rules]
preset = "{preset}"
[grid]
information_source = ["oracle"]
observability = ["{obs}"]
starting_states = "spread:{games}"
repeats = 1
agents = ["mstar", "reference", "bad"]
tournament = "gauntlet"
paired = true
[search]
depth = 2
worlds = 2
[agents.mstar]
engine = "mstar"
[agents.reference]
command = ["python3", "{agent}"]
[agents.bad]
command = ["python3", "{misbehave}", {bad}]
{limits}
"#,
        agent = agent.display(),
        misbehave = misbehave.display(),
        obs = if preset == "all-fives" { "partial" } else { "full" },
    )
}

/// Runs `text`; returns (success, stdout + stderr, the games rows).
fn run(dir: &Dir, text: &str) -> (bool, String, Vec<jobs::GameRow>) {
    let path = dir.create_spec(text);
    let start = Instant::now();
    let out = TestCommand::new(&["run"])
        .arg(&path)
        .arg("--out")
        .arg(dir.path())
        .args(["--workers", "1", "--threads", "2"])
        .timeout(Duration::from_secs(240))
        .output();
    assert!(
        start.elapsed() < Duration::from_secs(200),
        "a run took {:?}",
        start.elapsed()
    );
    let text = format!("{}{}", out.stdout, out.stderr);
    let spec = jobs::Spec::from_toml(text_of(&path).as_str()).unwrap();
    let games = dir.join(&spec.name).join("games");
    let mut rows = Vec::new();
    if let Ok(entries) = std::fs::read_dir(&games) {
        for e in entries.flatten() {
            rows.extend(jobs::read_partition(&e.path()).unwrap().into_iter().map(|(_, r)| r));
        }
    }
    (out.status.success(), text, rows)
}

fn text_of(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

/// The games of `opponent`, and its forfeits by reason.
fn against(rows: &[jobs::GameRow], opponent: &str) -> (usize, Vec<String>) {
    let mine: Vec<_> = rows
        .iter()
        .filter(|r| r.opponent.as_deref() == Some(opponent))
        .collect();
    let forfeits = mine.iter().filter_map(|r| r.forfeit.clone()).collect();
    (mine.len(), forfeits)
}

#[test]
fn misbehaving_agents_forfeit_their_games_and_lose_nothing_else() {
    // (mode args, limits, the forfeit reason expected, the log's words)
    let cases = [
        (
            "\"--mode\", \"crash\"",
            "restarts = 100",
            "crash",
            "crashing on purpose",
        ),
        ("\"--mode\", \"hang\"", "time_ms = 300\nrestarts = 100", "time", "time"),
        (
            "\"--mode\", \"garbage\"",
            "restarts = 100",
            "protocol",
            "this is not json",
        ),
        ("\"--mode\", \"illegal\"", "", "illegal", "illegal action 9999"),
    ];
    for (args, limits, reason, words) in cases {
        let dir = Dir::new();
        let (ok, log, rows) = run(&dir, &spec("bad", args, limits, 6, "all-fives"));
        assert!(ok, "{reason}: {log}");
        // Every game of the grid has its row, the reference's untouched.
        assert_eq!(rows.len(), 24, "{reason}: {log}");
        let (n, clean) = against(&rows, "reference");
        assert_eq!((n, clean.len()), (12, 0), "{reason}");
        let (n, forfeits) = against(&rows, "bad");
        assert_eq!(n, 12);
        assert!(!forfeits.is_empty(), "{reason}: no forfeit in {log}");
        assert!(forfeits.iter().all(|f| f == reason), "{reason}: {forfeits:?}");
        // The worker's log names the agent and the reason.
        assert!(log.contains("bad forfeits") && log.contains(words), "{reason}: {log}");
        let report = dir.read("bad/report/report.md");
        assert!(
            report.contains("External agents") && report.contains("`bad`"),
            "{report}"
        );
        assert!(report.contains(&format!("| bad | {reason} |")), "{report}");
    }
}

#[test]
fn a_crashing_agent_out_of_restarts_forfeits_the_rest() {
    let dir = Dir::new();
    let (ok, log, rows) = run(
        &dir,
        &spec(
            "bad",
            "\"--mode\", \"crash\", \"--every\", \"1\"",
            "restarts = 1",
            6,
            "all-fives",
        ),
    );
    assert!(ok, "{log}");
    let (n, forfeits) = against(&rows, "bad");
    assert_eq!((n, forfeits.len()), (12, 12), "{log}");
    assert!(log.contains("no restarts left"), "{log}");
}

#[test]
fn a_flooding_or_slow_agent_within_its_limit_plays_every_game() {
    for (args, limits) in [
        ("\"--mode\", \"flood\", \"--every\", \"1000\"", ""),
        ("\"--mode\", \"slow\"", "time_ms = 5000"),
    ] {
        let dir = Dir::new();
        let (ok, log, rows) = run(&dir, &spec("bad", args, limits, 4, "all-fives"));
        assert!(ok, "{log}");
        let (n, forfeits) = against(&rows, "bad");
        assert_eq!((n, forfeits.len()), (8, 0), "{args}: {forfeits:?}");
        // A flood reaches the log capped, not in full.
        if args.contains("flood") {
            assert!(log.contains("further stderr lines are not shown"), "capped");
            assert!(log.len() < 2_000_000, "the log holds {} bytes", log.len());
        }
    }
}

#[test]
fn an_agent_of_another_protocol_version_fails_the_task_naming_it() {
    let dir = Dir::new();
    let (ok, log, _) = run(
        &dir,
        &spec("bad", "\"--mode\", \"version\"", "restarts = 0", 2, "all-fives"),
    );
    assert!(!ok, "{log}");
    assert!(log.contains("agent bad cannot start"), "{log}");
    assert!(log.contains("protocol 3") && log.contains("protocols 1 and 2"), "{log}");
    // Its stderr's last lines are named.
    assert!(log.contains("misbehave: hello"), "{log}");
}

#[test]
fn an_agent_that_cannot_start_fails_the_task_naming_it() {
    let dir = Dir::new();
    let text = spec("bad", "\"--mode\", \"none\"", "", 2, "all-fives")
        .replace("command = [\"python3\", ", "command = [\"/nonexistent/python9\", ");
    let (ok, log, _) = run(&dir, &text);
    assert!(!ok, "{log}");
    assert!(
        log.contains("agent reference cannot start") || log.contains("agent bad"),
        "{log}"
    );
    assert!(log.contains("/nonexistent/python9"), "{log}");
    // A script named relative to a cwd that lacks it: the message says so
    // (the program itself only sees its own empty directory).
    let dir = Dir::new();
    let misbehave = repo().join("cli/tests/agents/misbehave.py");
    let text = spec("bad", "\"--mode\", \"none\"", "", 2, "all-fives")
        .replace(&misbehave.display().to_string(), "bots/nobot.py");
    let (ok, log, _) = run(&dir, &text);
    assert!(!ok, "{log}");
    assert!(log.contains("agent bad cannot start"), "{log}");
    assert!(log.contains("\"bots/nobot.py\" names no file under cwd \".\""), "{log}");
}

#[test]
fn external_agents_play_block_and_team_and_duckdb_reads_the_rows() {
    for preset in ["block", "team"] {
        let dir = Dir::new();
        let (ok, log, rows) = run(&dir, &spec("ext", "\"--mode\", \"none\"", "", 5, preset));
        assert!(ok, "{preset}: {log}");
        assert_eq!(rows.len(), 20, "{preset}");
        assert!(rows.iter().all(|r| r.forfeit.is_none()), "{preset}");
        // DuckDB reads the same rows, the forfeit column among them.
        let glob = dir.join("ext/games/*.parquet");
        let q = format!(
            "select opponent, count(*), count(forfeit) from '{}' group by opponent order by opponent",
            glob.display()
        );
        let out = std::process::Command::new("python3")
            .args(["-c", &format!("import duckdb; print(duckdb.sql(\"{q}\").fetchall())")])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(text.trim(), "[('bad', 10, 0), ('reference', 10, 0)]", "{preset}");
    }
}

#[test]
fn openspiel_bots_play_as_external_agents() {
    let agent = repo().join("scripts/agents/openspiel_agent.py");
    for (preset, bot) in [("block", "ismcts"), ("team", "mcts"), ("block", "random")] {
        let dir = Dir::new();
        let text = format!(
            r#"
name = "os"
seed = 9
[rules]
preset = "{preset}"
[grid]
information_source = ["oracle"]
observability = ["partial"]
starting_states = "spread:2"
repeats = 1
agents = ["mstar"]
opponents = ["openspiel"]
paired = true
[search]
depth = 2
worlds = 4
[agents.mstar]
engine = "mstar"
[agents.openspiel]
command = ["python3", "{agent}", "--bot", "{bot}", "--simulations", "30"]
time_ms = 60000
"#,
            agent = agent.display()
        );
        let (ok, log, rows) = run(&dir, &text);
        assert!(ok, "{preset} {bot}: {log}");
        assert_eq!(rows.len(), 4, "{preset} {bot}");
        assert!(rows.iter().all(|r| r.forfeit.is_none()), "{preset} {bot}: {log}");
        assert!(
            log.contains("[agent openspiel]") && log.contains("ms per decision"),
            "{log}"
        );
    }
}

#[test]
fn an_sprt_runs_against_an_external_opponent() {
    let dir = Dir::new();
    let agent = repo().join("scripts/agents/random_agent.py");
    let text = format!(
        r#"
name = "sprt-ext"
seed = 8
[rules]
preset = "all-fives"
[grid]
information_source = ["oracle"]
observability = ["full"]
starting_states = "spread:200"
repeats = 1
agents = ["searching"]
opponents = ["reference"]
[search]
depth = 2
[agents.searching]
engine = "expectimax"
[agents.reference]
command = ["python3", "{}"]
[stop]
sprt = {{ elo0 = 0, elo1 = 100, alpha = 0.05, beta = 0.05 }}
"#,
        agent.display()
    );
    let (ok, log, rows) = run(&dir, &text);
    assert!(ok, "{log}");
    assert!(log.contains("H1 accepted") || log.contains("H0 accepted"), "{log}");
    assert!(!rows.is_empty() && (rows.len() as u64) < 400, "{}", rows.len());
}

/// A spec of named agents where `mine` (external) takes the agent's side:
/// `grid` says whom it plays.
fn agent_side_spec(name: &str, preset: &str, obs: &str, grid: &str, extra: &str) -> String {
    let agent = repo().join("scripts/agents/random_agent.py");
    format!(
        r#"
name = "{name}"
seed = 4
[rules]
preset = "{preset}"
[grid]
information_source = ["oracle"]
observability = ["{obs}"]
repeats = 1
{grid}
[search]
depth = 2
worlds = 2
[agents.mine]
command = ["python3", "{a}"]
[agents.other]
command = ["python3", "{a}"]
[agents.searching]
engine = "expectimax"
{extra}
"#,
        a = agent.display()
    )
}

#[test]
fn an_external_agent_takes_the_agents_side_against_strategies_and_engines() {
    let dir = Dir::new();
    let grid = "starting_states = \"spread:10\"\nagents = [\"mine\"]\nopponents = [\"random\", \"searching\"]";
    let (ok, log, rows) = run(&dir, &agent_side_spec("ext-mine", "all-fives", "full", grid, ""));
    assert!(ok, "{log}");
    assert_eq!(rows.len(), 40, "{log}");
    for r in &rows {
        assert_eq!(r.agent.as_deref(), Some("mine"));
        assert_eq!(
            r.engine,
            engine::PlayerEngine::External,
            "the agent side's rows name the engine external"
        );
        assert_eq!(r.budget, None);
        assert!(r.forfeit.is_none(), "{r:?}");
    }
    assert_eq!(against(&rows, "random").0, 20);
    assert_eq!(against(&rows, "searching").0, 20);
    // Each seating's games: the agent's side is the external one, on both sides of a deal.
    assert!(rows.iter().any(|r| r.agent_side == Some(0)) && rows.iter().any(|r| r.agent_side == Some(1)));
}

/// Issue 41: a forfeit is credited to the side that gave the game up, also
/// when the external agent is the agent's side (before, the report named
/// the opponent, `| random | protocol | n |`).
#[test]
fn an_agent_side_forfeit_is_credited_to_the_agent_not_its_opponent() {
    let dir = Dir::new();
    let misbehave = repo().join("cli/tests/agents/misbehave.py");
    let grid = "starting_states = \"spread:4\"\nagents = [\"bad\"]\nopponents = [\"random\"]";
    let extra = format!(
        "[agents.bad]\ncommand = [\"python3\", \"{}\", \"--mode\", \"garbage\"]\nrestarts = 100",
        misbehave.display()
    );
    let (ok, log, rows) = run(&dir, &agent_side_spec("ext-forfeit", "all-fives", "full", grid, &extra));
    assert!(ok, "{log}");
    assert_eq!(rows.len(), 8, "{log}");
    let forfeited: Vec<_> = rows.iter().filter(|r| r.forfeit.is_some()).collect();
    assert!(!forfeited.is_empty(), "{log}");
    // The agent side gave the game up: it scores 0.
    assert!(
        forfeited
            .iter()
            .all(|r| r.agent.as_deref() == Some("bad") && r.player_score == 0)
    );
    let report = dir.read("ext-forfeit/report/report.md");
    assert!(
        report.contains(&format!("| bad | protocol | {} |", forfeited.len())),
        "{report}"
    );
    assert!(!report.contains("| random | protocol"), "{report}");
    let json: serde_json::Value = serde_json::from_str(&dir.read("ext-forfeit/report/report.json")).unwrap();
    let f = &json["tournament"]["forfeits"];
    assert_eq!(f[0]["agent"], "bad", "{f}");
}

#[test]
fn two_external_agents_play_each_other_in_a_round_robin_of_team_dominoes() {
    let dir = Dir::new();
    let grid =
        "starting_states = \"spread:4\"\nagents = [\"mine\", \"other\", \"heaviest\"]\ntournament = \"round-robin\"";
    let (ok, log, rows) = run(&dir, &agent_side_spec("ext-rr", "team", "partial", grid, ""));
    assert!(ok, "{log}");
    assert_eq!(rows.len(), 24, "three pairings of 4 deals, both seatings: {log}");
    let both: Vec<_> = rows.iter().filter(|r| r.opponent.as_deref() == Some("other")).collect();
    assert_eq!(both.len(), 8, "mine against other");
    assert!(
        both.iter()
            .all(|r| r.agent.as_deref() == Some("mine") && r.forfeit.is_none())
    );
    // A team game's returns: one side's gain is the other's loss.
    assert!(both.iter().all(|r| r.player_score == 0 || r.target_score == 0));
    assert!(
        log.contains("[agent mine]") && log.contains("[agent other]"),
        "each agent's timing is logged: {log}"
    );
}

#[test]
fn an_sprt_tests_an_external_agent_against_an_engine() {
    let dir = Dir::new();
    let grid = "starting_states = \"spread:400\"\nagents = [\"mine\"]\nopponents = [\"searching\"]";
    let stop = "[stop]\nsprt = { elo0 = 0, elo1 = 60 }\n[shards]\ngames = 10";
    let (ok, log, rows) = run(&dir, &agent_side_spec("ext-sprt-a", "all-fives", "full", grid, stop));
    assert!(ok, "{log}");
    // The random agent is the weaker: the test accepts H0 (no gain) early.
    assert!(log.contains("H0 accepted"), "{log}");
    assert!(!rows.is_empty() && rows.len() < 800, "{}", rows.len());
    assert!(rows.iter().all(|r| r.agent.as_deref() == Some("mine")));
}

/// The scratch directories of the agents of the worker process `pid`.
fn agent_dirs(pid: u32) -> usize {
    let tag = format!("-{pid}-");
    std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.starts_with("muggins-agent-") && n.contains(&tag)
        })
        .count()
}

#[test]
fn ctrl_c_gives_the_tasks_back_ends_the_agents_and_the_same_command_resumes() {
    let dir = Dir::new();
    let text = spec("slow", "\"--mode\", \"slow\"", "", 30, "all-fives");
    let path = dir.create_spec(&text);
    let log = dir.join("first.log");
    let mut first = TestCommand::run_spec(&path, dir.path(), 2, Some(&log)).spawn();
    let pid = first.0.id();
    crate::cluster::wait_for("an agent of the run", 120, || agent_dirs(pid) > 0);
    first.signal("-INT");
    let status = first
        .wait_timeout(Duration::from_secs(60))
        .expect("Ctrl-C ends the run");
    let said = text_of(&log);
    assert_eq!(status.code(), Some(130), "{said}");
    assert!(
        said.contains("interrupted: what was played is kept in") && said.contains("run the same command again"),
        "{said}"
    );
    // Each agent's process was ended and its directory deleted.
    assert_eq!(agent_dirs(pid), 0, "{said}");
    let spec = jobs::Spec::from_toml(&text).unwrap();
    assert!(!dir.join(&spec.name).join("_SUCCESS").exists(), "stopped unfinished");
    // The same command resumes it and plays every game once.
    let (ok, log, rows) = run(&dir, &text);
    assert!(ok, "{log}");
    assert!(log.contains("experiment"), "{log}");
    assert_eq!(rows.len(), 120, "{log}");
    let mut index: Vec<u64> = rows.iter().map(|r| r.game_index).collect();
    index.sort_unstable();
    index.dedup();
    assert_eq!(index.len(), 120, "no game twice");
}
