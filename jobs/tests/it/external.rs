//! `[agents.NAME] command = [...]`: external agents in specs (docs/agents.md):
//! their keys, the errors that name them, what the spec id covers.

use jobs::{AgentPlay, Spec};

fn spec(agent: &str, grid: &str) -> String {
    format!(
        r#"
name = "ext"
seed = 1
[rules]
preset = "all-fives"
[grid]
information_source = ["oracle"]
observability = ["full"]
starting_states = "spread:4"
repeats = 1
{grid}
[search]
depth = 2
[agents.mstar]
engine = "mstar"
[agents.bot]
{agent}
"#
    )
}

const CROSS: &str = "agents = [\"mstar\"]\nopponents = [\"bot\"]";

fn err(text: &str) -> String {
    Spec::from_toml(text).unwrap_err().to_string()
}

#[test]
fn an_external_agent_parses_with_its_defaults() {
    let s = Spec::from_toml(&spec("command = [\"python3\", \"bot.py\", \"--depth\", \"3\"]", CROSS)).unwrap();
    let pool = s.pool.as_ref().unwrap();
    let bot = pool.agents.iter().find(|a| a.name == "bot").unwrap();
    let AgentPlay::External(e) = &bot.play else {
        panic!("{bot:?}")
    };
    assert_eq!(e.command, ["python3", "bot.py", "--depth", "3"]);
    assert_eq!((e.time_ms, e.game_ms, e.restarts), (10_000, 600_000, 3));
    assert_eq!(e.cwd, ".");
    assert!(s.has_external_agents());
    assert_eq!(pool.pairings.len(), 1);
    // No bot.py here: the argument a failed start will name.
    assert_eq!(e.missing_file_arg(), Some("bot.py"));
    let s = Spec::from_toml(&spec(
        "command = [\"python3\", \"Cargo.toml\", \"--temperature\", \"0.5\", \"x=y.z\", \"http://h/a.b\"]",
        CROSS,
    ))
    .unwrap();
    let AgentPlay::External(e) = &s
        .pool
        .as_ref()
        .unwrap()
        .agents
        .iter()
        .find(|a| a.name == "bot")
        .unwrap()
        .play
    else {
        panic!("external")
    };
    assert_eq!(
        e.missing_file_arg(),
        None,
        "a file that exists, flags, numbers, settings and URLs"
    );
}

#[test]
fn bad_external_tables_are_refused_naming_the_key() {
    for (agent, words) in [
        (
            "command = []",
            vec!["agents.bot.command", "the program and its arguments"],
        ),
        ("command = \"bot.py\"", vec!["agents.bot.command"]),
        (
            "command = [\"bot\"]\nengine = \"mstar\"",
            vec!["agents.bot.engine", "expected one of: command"],
        ),
        ("command = [\"bot\"]\ntime_ms = 0", vec!["agents.bot.time_ms"]),
        (
            "command = [\"bot\"]\nenv = { A = 1 }",
            vec!["agents.bot.env.A", "string"],
        ),
        ("command = [\"bot\"]\ncolour = \"red\"", vec!["agents.bot.colour"]),
        (
            "command = [\"bot\"]\npass_env = [\"HOME\", \"MUGGINS_TOKEN\"]",
            vec!["agents.bot.pass_env", "MUGGINS_TOKEN", "token"],
        ),
        (
            "command = [\"bot\"]\npass_env = [\"MUGGINS_WEB_TOKEN\"]",
            vec!["agents.bot.pass_env", "MUGGINS_WEB_TOKEN"],
        ),
    ] {
        let e = err(&spec(agent, CROSS));
        for w in &words {
            assert!(e.contains(w), "{agent}: {e}");
        }
    }
    // An external agent takes either side: in grid.agents it is the agent
    // (its rows name the engine `external`); a strategy may not.
    let ok = Spec::from_toml(&spec(
        "command = [\"bot\"]",
        "agents = [\"bot\"]\nopponents = [\"mstar\"]",
    ))
    .unwrap();
    let pool = ok.pool.as_ref().unwrap();
    let (a, _) = pool.pairings[0];
    assert_eq!(pool.agents[a as usize].name, "bot");
    assert_eq!(jobs::coords(&ok, 0).engine, engine::PlayerEngine::External);
    let e = err(&spec(
        "command = [\"bot\"]",
        "agents = [\"scorer\"]\nopponents = [\"bot\"]",
    ));
    assert!(e.contains("is a strategy") && e.contains("grid.opponents"), "{e}");
    // No spec names the engine `external`.
    let e = err(&spec("engine = \"external\"", CROSS));
    assert!(e.contains("agents.bot.engine") && e.contains("command"), "{e}");
}

#[test]
fn the_spec_id_covers_the_command_and_with_hash_files_the_files() {
    let dir = std::env::temp_dir().join(format!("muggins-ext-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bot.py");
    std::fs::write(&file, "print('v1')\n").unwrap();
    let agent = |hash: bool| format!("command = [\"python3\", \"{}\"]\nhash_files = {hash}", file.display());
    let id = |hash: bool| Spec::from_toml(&spec(&agent(hash), CROSS)).unwrap().id();
    let (plain, hashed) = (id(false), id(true));
    assert_ne!(plain, hashed);
    std::fs::write(&file, "print('v2')\n").unwrap();
    // Without hash_files the id stays; with it, the new code is a new id.
    assert_eq!(id(false), plain);
    assert_ne!(id(true), hashed);
    // Another command is another id.
    let other = Spec::from_toml(&spec("command = [\"python3\", \"other.py\"]", CROSS)).unwrap();
    assert_ne!(other.id(), plain);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_sandbox_keys_are_checked_and_only_those_set_change_the_id() {
    let walls = |keys: &str| -> jobs::Walls {
        let s = Spec::from_toml(&spec(&format!("command = [\"bot\"]\n{keys}"), CROSS)).unwrap();
        let pool = s.pool.unwrap();
        let AgentPlay::External(e) = &pool.agents.iter().find(|a| a.name == "bot").unwrap().play else {
            panic!("external")
        };
        e.walls.clone()
    };
    assert_eq!(walls(""), jobs::Walls::default());
    assert_eq!(walls("sandbox = true").sandbox, jobs::SandboxMode::On);
    assert_eq!(walls("sandbox = \"required\"").sandbox, jobs::SandboxMode::Required);
    assert_eq!(walls("sandbox = false").sandbox, jobs::SandboxMode::Off);
    let w = walls("network = true\nmemory_mb = 512\nprocesses = 8\nopen_files = 64\ncpu_s = 30\nread = [\"models\"]");
    assert_eq!(
        (w.network, w.memory_mb, w.processes, w.open_files, w.cpu_s, w.read),
        (true, 512, 8, 64, 30, vec!["models".to_string()])
    );
    for (keys, words) in [
        ("sandbox = \"off\"", vec!["agents.bot.sandbox", "\"required\""]),
        ("network = 1", vec!["agents.bot.network", "true or false"]),
        ("memory_mb = 1", vec!["agents.bot.memory_mb", "between 16"]),
        ("processes = 0", vec!["agents.bot.processes"]),
        ("read = \"models\"", vec!["agents.bot.read", "a list of paths"]),
        (
            "sandbox = false\nnetwork = true",
            vec!["agents.bot.network", "sandbox = false"],
        ),
        (
            "sandbox = false\nread = [\"m\"]",
            vec!["agents.bot.read", "sandbox = false"],
        ),
    ] {
        let e = err(&spec(&format!("command = [\"bot\"]\n{keys}"), CROSS));
        for w in &words {
            assert!(e.contains(w), "{keys}: {e}");
        }
    }
    let id = |keys: &str| {
        Spec::from_toml(&spec(&format!("command = [\"bot\"]\n{keys}"), CROSS))
            .unwrap()
            .id()
    };
    // The defaults written out say nothing new: the id a spec had before
    // the sandbox.
    assert_eq!(
        id(""),
        id("sandbox = true\nnetwork = false\nmemory_mb = 4096\nprocesses = 256\nopen_files = 1024\ncpu_s = 0")
    );
    for keys in [
        "sandbox = false",
        "sandbox = \"required\"",
        "network = true",
        "memory_mb = 512",
        "read = [\"m\"]",
    ] {
        assert_ne!(id(""), id(keys), "{keys}");
    }
}
