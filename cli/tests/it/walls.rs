//! The arena's walls (docs/agents.md, "The sandbox"), tried by agents
//! written in JavaScript from the docs (cli/tests/agents/attacker.js)
//! through `muggins run`: a spy that looks for the token, writes outside
//! its directory, reads the results, opens a connection and leaves
//! children behind, started through a wrapper script that does not `exec`;
//! an agent that writes a stray line; one that writes bytes that are not
//! UTF-8; Ctrl-C with a slow agent in play.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::util::{Dir, TestCommand};

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

/// A gauntlet of M* against agent `bad` (`command`, more keys), on
/// `deals` All-Fives deals from both seatings.
fn spec(name: &str, command: &str, keys: &str, deals: u32) -> String {
    format!(
        r#"
name = "{name}"
seed = 9
[rules]
preset = "all-fives"
[grid]
information_source = ["oracle"]
observability = ["partial"]
starting_states = "spread:{deals}"
repeats = 1
agents = ["mstar", "bad"]
tournament = "gauntlet"
paired = true
[search]
depth = 2
worlds = 2
[agents.mstar]
engine = "mstar"
[agents.bad]
command = {command}
{keys}
"#
    )
}

/// `node attacker.js ARGS` as a spec's command.
fn node(args: &[&str]) -> String {
    let script = repo().join("cli/tests/agents/attacker.js");
    let mut parts = vec![format!("{:?}", "node"), format!("{:?}", script.display().to_string())];
    parts.extend(args.iter().map(|a| format!("{a:?}")));
    format!("[{}]", parts.join(", "))
}

/// Runs `text` with `env`; (success, log, rows).
fn run(dir: &Dir, text: &str, env: &[(&str, &str)]) -> (bool, String, Vec<jobs::GameRow>) {
    let path = dir.create_spec(text);
    let mut cmd = TestCommand::new(&["run"]);
    cmd.arg(&path)
        .arg("--out")
        .arg(dir.path())
        .args(["--workers", "1", "--threads", "2", "--no-web"])
        .timeout(Duration::from_secs(240));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output();
    let log = format!("{}{}", out.stdout, out.stderr);
    (out.status.success(), log, rows_of(dir, text))
}

fn rows_of(dir: &Dir, text: &str) -> Vec<jobs::GameRow> {
    let spec = jobs::Spec::from_toml(text).unwrap();
    let mut rows = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir.join(&spec.name).join("games")) {
        for e in entries.flatten() {
            rows.extend(jobs::read_partition(&e.path()).unwrap().into_iter().map(|(_, r)| r));
        }
    }
    rows
}

/// Live processes of this machine whose command line holds `tag`.
fn with_tag(tag: &str) -> Vec<String> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|p| {
            let stat = std::fs::read_to_string(format!("/proc/{p}/stat")).ok()?;
            let zombie = stat.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z');
            let cmd = std::fs::read(format!("/proc/{p}/cmdline")).ok()?;
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            (!zombie && cmd.contains(tag) && p != std::process::id()).then(|| format!("{p}: {cmd}"))
        })
        .collect()
}

/// Waits up to `secs` for no process with `tag`; those left.
fn none_left(tag: &str, secs: u64) -> Vec<String> {
    let t = Instant::now();
    loop {
        let left = with_tag(tag);
        if left.is_empty() || t.elapsed() > Duration::from_secs(secs) {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn unique(what: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("muggins-{what}-{}-{nanos}", std::process::id())
}

#[test]
fn a_spying_agent_finds_no_token_writes_nowhere_else_connects_nowhere_and_leaves_nothing_running() {
    let dir = Dir::new();
    // The agent's files, outside the results root (which no agent reads).
    let home = Dir::new();
    let agents = home.create_dir("agents");
    let tag = unique("tag");
    let secret = unique("secret");
    let reversed: String = secret.chars().rev().collect();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let outside: Vec<PathBuf> = vec![
        std::env::temp_dir().join(format!("{tag}-escape")),
        agents.join(format!("{tag}-escape")),
        dir.join(format!("{tag}-escape")),
    ];
    let outside_arg = outside
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(",");
    let results = dir.path().display().to_string();
    // Through a wrapper that does not exec: node is its child. Its files
    // are in its cwd (the one directory of the user's it may read).
    std::fs::copy(repo().join("cli/tests/agents/attacker.js"), agents.join("attacker.js")).unwrap();
    std::fs::write(
        agents.join("run.sh"),
        format!(
            "node \"$(dirname \"$0\")/attacker.js\" --mode spy --tag {tag} --port {port} --results {results} --outside {outside_arg} --secret-rev {reversed}\necho wrapper-done >&2\n"
        ),
    )
    .unwrap();
    let keys = format!("cwd = {:?}\nrestarts = 0", agents.display().to_string());
    let text = spec("spy", r#"["bash", "run.sh"]"#, &keys, 4);
    let (ok, log, rows) = run(
        &dir,
        &text,
        &[("MUGGINS_TOKEN", &secret), ("MUGGINS_WEB_TOKEN", &secret)],
    );
    assert!(ok, "{log}");
    assert_eq!(rows.len(), 8, "every game has its row: {log}");
    assert!(rows.iter().all(|r| r.forfeit.is_none()), "{log}");
    assert!(
        !log.contains("sandbox: this worker cannot"),
        "every wall is up here: {log}"
    );
    for (what, want) in [("secret", "absent"), ("results", "unreadable"), ("children", "started")] {
        assert!(log.contains(&format!("SPY {what}: {want}")), "{what}: {log}");
    }
    assert!(log.contains("SPY network: refused"), "{log}");
    for p in &outside {
        assert!(log.contains(&format!("SPY write {}: denied", p.display())), "{log}");
        assert!(!p.exists(), "{} was written", p.display());
    }
    for bad in ["FOUND", "ALLOWED", "READABLE", "CONNECTED", &secret] {
        assert!(!log.contains(bad), "{bad}: {log}");
    }
    // It sees its own processes only: node, bash and the children it started.
    let seen: u32 = log
        .lines()
        .find_map(|l| l.split("SPY processes: ").nth(1))
        .and_then(|n| n.trim().parse().ok())
        .expect("it counted the processes it sees");
    assert!(seen <= 6, "{seen} processes seen: {log}");
    assert!(listener.accept().is_err(), "no connection reached the test's port");
    assert_eq!(
        none_left(&tag, 2),
        Vec::<String>::new(),
        "nothing of the agent's is left running"
    );
}

#[test]
fn without_the_sandbox_an_agent_is_still_contained() {
    let dir = Dir::new();
    let tag = unique("tag");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let results = dir.path().display().to_string();
    let command = node(&[
        "--mode",
        "spy",
        "--tag",
        &tag,
        "--port",
        &port,
        "--results",
        &results,
        "--secret-rev",
        "x",
    ]);
    let text = spec("trusted", &command, "sandbox = false\nrestarts = 0", 2);
    let (ok, log, rows) = run(&dir, &text, &[]);
    assert!(ok, "{log}");
    assert_eq!(rows.len(), 4, "{log}");
    // Not walled in: it reads the results and connects (which is what
    // `sandbox = false` gives up) ...
    assert!(
        log.contains("SPY results: READABLE") && log.contains("SPY network: CONNECTED"),
        "{log}"
    );
    // ... but what it started dies with it.
    assert_eq!(none_left(&tag, 2), Vec::<String>::new());
}

#[test]
fn a_stray_line_costs_at_most_one_game() {
    let dir = Dir::new();
    let text = spec("stray", &node(&["--mode", "stray"]), "restarts = 100", 10);
    let (ok, log, rows) = run(&dir, &text, &[]);
    assert!(ok, "{log}");
    assert_eq!(rows.len(), 20, "{log}");
    let strays = log.matches("STRAY").count();
    let forfeits: Vec<&str> = rows.iter().filter_map(|r| r.forfeit.as_deref()).collect();
    assert!(strays >= 1, "{log}");
    assert!(forfeits.iter().all(|f| *f == "protocol"), "{forfeits:?}: {log}");
    assert!(
        !forfeits.is_empty() && forfeits.len() <= strays,
        "{} forfeits for {strays} stray lines: {log}",
        forfeits.len()
    );
    // Found waiting before a question, or read as the answer to the next.
    assert!(
        log.contains("a line that answers nothing") || log.contains("names id"),
        "{log}"
    );
}

#[test]
fn a_line_that_is_not_utf8_is_a_protocol_forfeit() {
    let dir = Dir::new();
    let text = spec("utf8", &node(&["--mode", "badutf8"]), "restarts = 100", 3);
    let (ok, log, rows) = run(&dir, &text, &[]);
    assert!(ok, "{log}");
    assert_eq!(rows.len(), 6, "{log}");
    let forfeits: Vec<&str> = rows.iter().filter_map(|r| r.forfeit.as_deref()).collect();
    assert!(
        !forfeits.is_empty() && forfeits.iter().all(|f| *f == "protocol"),
        "{forfeits:?}: {log}"
    );
    assert!(log.contains("not UTF-8"), "{log}");
}

#[test]
fn ctrl_c_with_a_slow_agent_in_play_ends_the_run_within_two_seconds() {
    let dir = Dir::new();
    let tag = unique("tag");
    let text = spec(
        "slow",
        &node(&["--mode", "slow", "--delay", "150", "--tag", &tag]),
        "",
        10,
    );
    let path = dir.create_spec(&text);
    let log = dir.join("run.log");
    let mut proc = TestCommand::run_spec(&path, dir.path(), 2, Some(&log)).spawn();
    crate::cluster::wait_for("an agent at play", 120, || !with_tag(&tag).is_empty());
    // Let decisions be in flight.
    std::thread::sleep(Duration::from_millis(700));
    let t = Instant::now();
    proc.signal("-INT");
    let status = proc.wait_timeout(Duration::from_secs(60)).expect("Ctrl-C ends the run");
    let took = t.elapsed();
    let mut said = String::new();
    std::fs::File::open(&log).unwrap().read_to_string(&mut said).unwrap();
    assert_eq!(status.code(), Some(130), "{said}");
    assert!(took <= Duration::from_secs(2), "Ctrl-C took {took:?}: {said}");
    assert_eq!(none_left(&tag, 1), Vec::<String>::new(), "{said}");
    // What it played is kept; the same command finishes it, every game once.
    let (ok, log, rows) = run(&dir, &text, &[]);
    assert!(ok, "{log}");
    let mut index: Vec<u64> = rows.iter().map(|r| r.game_index).collect();
    index.sort_unstable();
    index.dedup();
    assert_eq!((rows.len(), index.len()), (20, 20), "{log}");
}

#[test]
fn an_agent_dies_with_a_worker_killed_outright() {
    let dir = Dir::new();
    let tag = unique("tag");
    let text = spec("killed", &node(&["--mode", "slow", "--tag", &tag]), "", 40);
    let path = dir.create_spec(&text);
    let proc = TestCommand::run_spec(&path, dir.path(), 2, None).spawn();
    crate::cluster::wait_for("an agent at play", 120, || !with_tag(&tag).is_empty());
    proc.signal("-KILL");
    assert_eq!(none_left(&tag, 2), Vec::<String>::new(), "no agent outlives its worker");
}

#[test]
fn a_wall_the_kernel_refuses_is_said_once_or_with_required_refuses_the_task() {
    // MUGGINS_FAILPOINT=sandbox-no-pid: as if the kernel refused PID
    // namespaces (an unprivileged container, say).
    let fail = [("MUGGINS_FAILPOINT", "sandbox-no-pid")];
    let dir = Dir::new();
    let text = spec("degraded", &node(&[]), "", 4);
    let (ok, log, rows) = run(&dir, &text, &fail);
    assert!(ok, "{log}");
    assert_eq!(rows.len(), 8, "{log}");
    assert_eq!(
        log.matches("sandbox: this worker cannot give external agents a PID namespace")
            .count(),
        1,
        "said once: {log}"
    );
    let dir = Dir::new();
    let text = spec("required", &node(&[]), "sandbox = \"required\"", 4);
    let (ok, log, rows) = run(&dir, &text, &fail);
    assert!(!ok, "{log}");
    assert!(rows.is_empty(), "{log}");
    assert!(
        log.contains("agent bad cannot start: the sandbox is required, and this worker cannot apply a PID namespace"),
        "{log}"
    );
    // Where every wall is up, "required" plays.
    let dir = Dir::new();
    let (ok, log, rows) = run(&dir, &text, &[]);
    assert!(ok && rows.len() == 8, "{log}");
}

#[test]
fn what_an_agent_started_dies_when_it_crashes_or_is_ended_for_time() {
    for (mode, reason, limits) in [
        ("orphan-crash", "crash", "restarts = 3"),
        ("orphan-hang", "time", "restarts = 3\ntime_ms = 300"),
    ] {
        let dir = Dir::new();
        let tag = unique("tag");
        let text = spec(mode, &node(&["--mode", mode, "--tag", &tag]), limits, 4);
        let path = dir.create_spec(&text);
        let mut proc = TestCommand::run_spec(&path, dir.path(), 1, None).spawn();
        // While it runs: each ended process leaves a `sleep` if nothing
        // contains it; contained, at most the current one's is alive.
        let mut most = 0;
        let t = Instant::now();
        while proc.wait_timeout(Duration::from_millis(20)).is_none() {
            let sleeps = with_tag(&tag).iter().filter(|p| p.contains("sleep")).count();
            most = most.max(sleeps);
            assert!(t.elapsed() < Duration::from_secs(180), "{mode}: the run did not end");
        }
        let rows = rows_of(&dir, &text);
        assert_eq!(rows.len(), 8, "{mode}");
        let forfeits: Vec<&str> = rows.iter().filter_map(|r| r.forfeit.as_deref()).collect();
        // Four processes, each ended by its own doing; then no restart is
        // left (`crash`).
        let own = forfeits.iter().filter(|f| **f == reason).count();
        assert!(
            own >= 4 && forfeits.iter().all(|f| *f == reason || *f == "crash"),
            "{mode}: {forfeits:?}"
        );
        assert!(most <= 1, "{mode}: {most} children alive at once");
        assert_eq!(none_left(&tag, 2), Vec::<String>::new(), "{mode}");
    }
}
