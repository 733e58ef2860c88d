//! `[agents.NAME] command = [...]`: an agent that is a program outside
//! muggins, speaking the agent protocol (docs/agents.md): its command, the
//! directory its relative paths are in, its environment, its time limits
//! and restarts, and what of it the spec id covers.

use sha2::{Digest, Sha256};
use toml::{Table, Value};

use super::SpecError;
use super::fields::{bad, int_in, missing, no_unknown, take_int, take_str};
use super::keys::EXTERNAL_KEYS;
use super::walls::{Walls, walls_of};

/// The worker's secrets: never passed to an agent, whatever `pass_env` says.
pub const SECRET_ENV: [&str; 2] = ["MUGGINS_TOKEN", "MUGGINS_WEB_TOKEN"];

/// An agent played by a program outside muggins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExternalAgent {
    /// The program and its arguments. The program and each argument that
    /// is a relative path of an existing file under `cwd` are made absolute.
    pub command: Vec<String>,
    /// The directory relative paths of the command are in ("." : the
    /// worker's own); the process itself runs in a fresh directory of its own.
    pub cwd: String,
    /// Environment variables set for it (nothing else of the worker's
    /// environment is passed but `PATH` and those named in `pass_env`).
    pub env: Vec<(String, String)>,
    /// The worker's environment variables passed on by name.
    pub pass_env: Vec<String>,
    /// Most milliseconds one decision may take.
    pub time_ms: u64,
    /// Most milliseconds the decisions of one game may take together.
    pub game_ms: u64,
    /// Restarts after a crash or a forfeit that leaves the process out of
    /// step (a time-out, a reply that is not the protocol), per process.
    pub restarts: u32,
    /// With `hash_files = true`: the SHA-256 of each file the command names
    /// (path as given, hash), which the spec id then covers.
    pub files: Option<Vec<(String, String)>>,
    /// Its sandbox and limits.
    pub walls: Walls,
}

/// Default limits: 10 s a decision, 10 minutes a game, 3 restarts.
const TIME_MS: i64 = 10_000;
const GAME_MS: i64 = 600_000;
const RESTARTS: i64 = 3;

/// The external agent of table `t` (which has `command`).
pub(super) fn external_of(name: &str, mut t: Table) -> Result<ExternalAgent, SpecError> {
    let p = format!("agents.{name}");
    let key = |k: &str| format!("{p}.{k}");
    // An engine or search setting here is refused by name (keys.rs).
    no_unknown(&t, &p, EXTERNAL_KEYS)?;
    let command = match t.remove("command") {
        Some(Value::Array(a)) if !a.is_empty() => a
            .into_iter()
            .map(|v| match v {
                Value::String(s) if !s.is_empty() => Ok(s),
                other => Err(bad(&key("command"), other, "each element is a non-empty string")),
            })
            .collect::<Result<Vec<_>, _>>()?,
        Some(v) => {
            return Err(bad(
                &key("command"),
                v,
                "the program and its arguments, e.g. [\"python3\", \"bot.py\", \"--depth\", \"3\"]",
            ));
        }
        None => return Err(missing(&key("command"), "the program to run")),
    };
    let cwd = take_str(&mut t, &p, "cwd")?.unwrap_or_else(|| ".".into());
    let env = match t.remove("env") {
        None => Vec::new(),
        Some(Value::Table(e)) => e
            .into_iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k, s)),
                other => Err(bad(&key(&format!("env.{k}")), other, "must be a string")),
            })
            .collect::<Result<_, _>>()?,
        Some(v) => {
            return Err(bad(
                &key("env"),
                v,
                "a table of strings, e.g. env = { OMP_NUM_THREADS = \"1\" }",
            ));
        }
    };
    let pass_env = match t.remove("pass_env") {
        None => Vec::new(),
        Some(Value::Array(a)) => a
            .into_iter()
            .map(|v| match v {
                Value::String(s) => Ok(s),
                other => Err(bad(&key("pass_env"), other, "names of environment variables")),
            })
            .collect::<Result<_, _>>()?,
        Some(v) => {
            return Err(bad(
                &key("pass_env"),
                v,
                "a list of names, e.g. [\"CUDA_VISIBLE_DEVICES\"]",
            ));
        }
    };
    if let Some(secret) = pass_env.iter().find(|v| SECRET_ENV.contains(&v.as_str())) {
        return Err(bad(
            &key("pass_env"),
            format!("{secret:?}"),
            "is the coordinator's token, which never reaches an agent (give the agent what it needs with env)",
        ));
    }
    let time_ms = int_in(
        &key("time_ms"),
        take_int(&mut t, &p, "time_ms")?.unwrap_or(TIME_MS),
        1,
        3_600_000,
    )? as u64;
    let game_ms = int_in(
        &key("game_ms"),
        take_int(&mut t, &p, "game_ms")?.unwrap_or(GAME_MS),
        1,
        86_400_000,
    )? as u64;
    let restarts = int_in(
        &key("restarts"),
        take_int(&mut t, &p, "restarts")?.unwrap_or(RESTARTS),
        0,
        1000,
    )? as u32;
    let hash_files = match t.remove("hash_files") {
        None | Some(Value::Boolean(false)) => false,
        Some(Value::Boolean(true)) => true,
        Some(v) => return Err(bad(&key("hash_files"), v, "true or false")),
    };
    let walls = walls_of(&p, &mut t)?;
    let mut agent = ExternalAgent {
        command,
        cwd,
        env,
        pass_env,
        time_ms,
        game_ms,
        restarts,
        files: None,
        walls,
    };
    if hash_files {
        agent.files = Some(agent.hash_files());
    }
    Ok(agent)
}

impl ExternalAgent {
    /// The command with its relative paths of existing files under `cwd`
    /// made absolute (what is started).
    pub fn resolved_command(&self) -> Vec<String> {
        self.command
            .iter()
            .map(|a| match self.file_of(a) {
                Some(path) => path.to_string_lossy().into_owned(),
                None => a.clone(),
            })
            .collect()
    }

    /// The first argument that reads like a relative file name (a `/` in
    /// it, or a short extension such as `.py`) but names no file under
    /// `cwd`: passed as written, it is looked for in the process's own empty
    /// directory, the likely cause of an agent that cannot start.
    pub fn missing_file_arg(&self) -> Option<&str> {
        self.command.iter().skip(1).map(String::as_str).find(|a| {
            let p = std::path::Path::new(a);
            let looks = a.contains('/')
                || p.extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| (1..=4).contains(&e.len()) && e.chars().all(|c| c.is_ascii_alphanumeric()));
            let other = a.starts_with('-') || a.contains("://") || a.contains('=') || a.parse::<f64>().is_ok();
            !other && !p.is_absolute() && looks && self.file_of(a).is_none()
        })
    }

    /// `arg` as a file under `cwd`, if it names one.
    fn file_of(&self, arg: &str) -> Option<std::path::PathBuf> {
        let p = std::path::Path::new(arg);
        let path = if p.is_absolute() {
            p.to_path_buf()
        } else {
            std::path::Path::new(&self.cwd).join(p)
        };
        if !path.is_file() {
            return None;
        }
        std::path::absolute(&path).ok()
    }

    /// The SHA-256 of each file the command names (path as given).
    fn hash_files(&self) -> Vec<(String, String)> {
        self.command
            .iter()
            .filter_map(|a| {
                let bytes = std::fs::read(self.file_of(a)?).ok()?;
                let hex: String = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
                Some((a.clone(), hex))
            })
            .collect()
    }

    /// The agent in the spec's canonical JSON (what the spec id covers).
    pub(super) fn canonical(&self, name: &str) -> String {
        let text = |s: &str| serde_json::to_string(s).expect("a string serialises");
        let list = |v: &[String]| v.iter().map(|s| text(s)).collect::<Vec<_>>().join(",");
        let pairs = |v: &[(String, String)]| {
            v.iter()
                .map(|(k, x)| format!("[{},{}]", text(k), text(x)))
                .collect::<Vec<_>>()
                .join(",")
        };
        let files = self
            .files
            .as_ref()
            .map_or(String::new(), |f| format!(",\"files\":[{}]", pairs(f)));
        format!(
            "{{\"name\":{},\"command\":[{}],\"cwd\":{},\"env\":[{}],\"pass_env\":[{}],\"time_ms\":{},\"game_ms\":{},\
             \"restarts\":{}{files}{}}}",
            text(name),
            list(&self.command),
            text(&self.cwd),
            pairs(&self.env),
            list(&self.pass_env),
            self.time_ms,
            self.game_ms,
            self.restarts,
            self.walls.canonical()
        )
    }
}
