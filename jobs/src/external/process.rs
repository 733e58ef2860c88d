//! One agent process (docs/agents.md): started in a fresh directory of its
//! own with only the environment the spec names, greeted, asked, and ended.
//! Its stdout is read by a thread into a channel (a line longer than
//! [`MAX_LINE`] is a protocol error, never a growing buffer); its stderr by
//! another, which passes the first [`STDERR_SHOWN`] lines to the worker's
//! log and keeps the last [`STDERR_KEPT`] for error messages.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::messages::{FromAgent, PROTOCOL, PROTOCOLS, ToAgent};
use crate::spec::ExternalAgent;
/// The longest line an agent may print, in bytes.
pub const MAX_LINE: usize = 1 << 20;
/// Lines of an agent's stderr passed to the worker's log, per process.
pub const STDERR_SHOWN: usize = 200;
/// Lines of an agent's stderr kept for error messages.
pub const STDERR_KEPT: usize = 20;
/// Why a wait on an agent ended when the worker stopped (the game is given
/// back, not forfeited).
pub const STOPPING: &str = "killed: the worker is stopping";
/// How often a wait on an agent looks whether the worker is stopping.
const CANCEL_POLL: Duration = Duration::from_millis(50);
/// How long a process gets to answer the greeting, at least.
const HELLO_MS: u64 = 10_000;

/// Why an exchange with an agent failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// No reply within the limit.
    Time,
    /// The process ended (its exit status when known).
    Crash(String),
    /// A reply that is not the protocol (what it was, shortened).
    Protocol(String),
}

impl Failure {
    /// The reason as rows and reports name it: `time`, `crash`, `protocol`.
    pub fn kind(&self) -> &'static str {
        match self {
            Failure::Time => "time",
            Failure::Crash(_) => "crash",
            Failure::Protocol(_) => "protocol",
        }
    }

    /// The reason with its detail, for messages.
    pub fn describe(&self) -> String {
        match self {
            Failure::Time => "time: no reply within the limit".to_string(),
            Failure::Crash(s) => format!("crash: {s}"),
            Failure::Protocol(s) => format!("protocol: {s}"),
        }
    }
}

/// A running agent process.
#[derive(Debug)]
pub struct AgentProcess {
    name: String,
    process: sandbox::Contained,
    stdin: Option<ChildStdin>,
    lines: Receiver<Result<String, String>>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    dir: PathBuf,
    /// The version its `hello` named.
    protocol: u64,
    /// The last `decide` id sent.
    asked: u64,
}

/// A directory of its own for a process, under the system's scratch space.
fn scratch_dir(name: &str) -> std::io::Result<PathBuf> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    // The name as a file name (at most 40 characters of it).
    let shown: String = crate::layout::plain_name(name).chars().take(40).collect();
    let dir = std::env::temp_dir().join(format!(
        "muggins-agent-{shown}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    static SWEPT: std::sync::Once = std::sync::Once::new();
    SWEPT.call_once(|| sweep_stale_dirs(&std::env::temp_dir()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// Removes the directories of agents whose worker is gone (a worker stopped
/// at once, by a second Ctrl-C or SIGKILL, cannot delete its own): those
/// named `muggins-agent-NAME-PID-N` in `temp` whose process `PID` no longer
/// runs. Linux only (it asks `/proc`); elsewhere they stay.
pub(crate) fn sweep_stale_dirs(temp: &std::path::Path) {
    if !std::path::Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(temp) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix("muggins-agent-")) else {
            continue;
        };
        let mut fields = rest.rsplitn(3, '-');
        let (Some(n), Some(pid), Some(_)) = (fields.next(), fields.next(), fields.next()) else {
            continue;
        };
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        let mine = entry.metadata().is_ok_and(|m| m.is_dir()) && n.parse::<u64>().is_ok();
        if mine && pid != std::process::id() && !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

impl AgentProcess {
    /// Starts `spec`'s command for agent `name` and greets it; the reply
    /// must speak [`PROTOCOL`] and list `game`. Any failure is the message
    /// that fails the task (with the process's last stderr lines).
    pub fn start(name: &str, spec: &ExternalAgent, game: &str, cancel: &AtomicBool) -> Result<AgentProcess, String> {
        let command = spec.resolved_command();
        let dir = scratch_dir(name).map_err(|e| format!("agent {name}: cannot make its directory: {e}"))?;
        let mut cmd = Command::new(&command[0]);
        cmd.args(&command[1..])
            .current_dir(&dir)
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let passed = std::iter::once("PATH").chain(spec.pass_env.iter().map(String::as_str));
        // The spec refuses to pass a secret; never, whatever reaches here.
        for var in passed.filter(|v| !crate::spec::SECRET_ENV.contains(v)) {
            if let Some(v) = std::env::var_os(var) {
                cmd.env(var, v);
            }
        }
        cmd.env("HOME", &dir);
        for (k, v) in &spec.env {
            cmd.env(k, v);
        }
        cmd.env("TMPDIR", &dir);
        let walls = walls_of(spec, &command, &dir);
        let started = sandbox::start(cmd, &walls).map_err(|e| {
            let _ = std::fs::remove_dir_all(&dir);
            match e {
                sandbox::StartError::Io(e) => {
                    format!("agent {name} cannot start: cannot run {:?}: {e}", command.join(" "))
                }
                refused @ sandbox::StartError::Refused(_) => {
                    format!("agent {name} cannot start: {refused} (sandbox = \"required\")")
                }
                protected => format!("agent {name} cannot start: {protected}"),
            }
        })?;
        say_missing(&started.missing);
        let mut process = started.process;
        let child = process.child();
        let stdout = child.stdout.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        let (tx, lines) = sync_channel(16);
        std::thread::spawn(move || read_lines(stdout, tx));
        let kept = Arc::new(Mutex::new(VecDeque::new()));
        let tail = Arc::clone(&kept);
        let label = name.to_string();
        std::thread::spawn(move || log_stderr(stderr, &label, &tail));
        let stdin = child.stdin.take();
        let mut p = AgentProcess {
            name: name.to_string(),
            stdin,
            process,
            lines,
            stderr: kept,
            dir,
            protocol: PROTOCOL,
            asked: 0,
        };
        p.hello(game, spec.time_ms.max(HELLO_MS), cancel).map_err(|why| {
            // The likely cause: an argument naming no file under `cwd`.
            let note = spec.missing_file_arg().map_or(String::new(), |a| {
                format!(
                    " (note: {a:?} names no file under cwd {:?}; the program runs in an empty directory of its own, \
                     so relative paths must name files under cwd)",
                    spec.cwd
                )
            });
            p.fatal(&format!("{why}{note}"))
        })?;
        Ok(p)
    }

    /// The greeting: muggins' version, the agent's reply.
    fn hello(&mut self, game: &str, ms: u64, cancel: &AtomicBool) -> Result<(), String> {
        self.send(&ToAgent::Hello {
            protocol: PROTOCOL,
            protocols: PROTOCOLS,
        })
        .map_err(|f| f.describe())?;
        let reply = self
            .receive(Duration::from_millis(ms), cancel)
            .map_err(|f| f.describe())?;
        let FromAgent::Hello { protocol, games, .. } = reply else {
            return Err("protocol: expected a hello, got an action".into());
        };
        match protocol {
            Some(v) if PROTOCOLS.contains(&v) => self.protocol = v,
            Some(v) => return Err(format!("it speaks protocol {v}; muggins speaks protocols 1 and 2")),
            None => return Err("protocol: its hello has no \"protocol\" number".into()),
        }
        if !games.iter().any(|g| g == game) {
            return Err(format!("it plays {games:?}, not {game:?}"));
        }
        Ok(())
    }

    /// The message that fails the task: the agent, why, its last stderr lines.
    pub fn fatal(&mut self, why: &str) -> String {
        self.kill();
        // Let the stderr thread take what is left.
        std::thread::sleep(Duration::from_millis(50));
        let tail = self.stderr_tail();
        let tail = if tail.is_empty() {
            "(nothing on stderr)".to_string()
        } else {
            format!("its last stderr lines:\n{tail}")
        };
        format!("agent {} cannot start: {why}; {tail}", self.name)
    }

    /// The last lines the process wrote on stderr.
    pub fn stderr_tail(&self) -> String {
        let kept = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
        kept.iter().cloned().collect::<Vec<_>>().join("\n")
    }

    /// Sends one message (a line of JSON).
    pub fn send(&mut self, msg: &ToAgent) -> Result<(), Failure> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| Failure::Crash("stdin closed".into()))?;
        let mut line = serde_json::to_string(msg).expect("a message serialises");
        line.push('\n');
        stdin
            .write_all(line.as_bytes())
            .and_then(|_| stdin.flush())
            .map_err(|e| Failure::Crash(self_status(&mut self.process, &e.to_string())))
    }

    /// The protocol version it speaks.
    pub fn protocol(&self) -> u64 {
        self.protocol
    }

    /// The id of the next `decide`.
    pub fn next_id(&mut self) -> u64 {
        self.asked += 1;
        self.asked
    }

    /// A protocol error if a line is waiting (before a question, a line
    /// answers nothing).
    pub fn nothing_pending(&mut self) -> Result<(), Failure> {
        match self.lines.try_recv() {
            Ok(Ok(line)) => Err(Failure::Protocol(format!(
                "a line that answers nothing: {}",
                shorten(&line)
            ))),
            Ok(Err(why)) => Err(Failure::Protocol(why)),
            Err(_) => Ok(()),
        }
    }

    /// The next message, waiting at most `limit`, or until `cancel` is set
    /// (then the process is killed: the worker is stopping).
    pub fn receive(&mut self, limit: Duration, cancel: &AtomicBool) -> Result<FromAgent, Failure> {
        let deadline = std::time::Instant::now() + limit;
        let got = loop {
            if cancel.load(Ordering::Relaxed) {
                self.kill();
                return Err(Failure::Crash(STOPPING.into()));
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.lines.recv_timeout(left.min(CANCEL_POLL)) {
                Err(RecvTimeoutError::Timeout) if left > CANCEL_POLL => continue,
                other => break other,
            }
        };
        match got {
            Ok(Ok(line)) => serde_json::from_str(&line).map_err(|e| {
                let what = if e.is_syntax() || e.is_eof() {
                    "not JSON"
                } else {
                    "not a message of the protocol"
                };
                Failure::Protocol(format!("{} is {what} ({e})", shorten(&line)))
            }),
            Ok(Err(why)) => Err(Failure::Protocol(why)),
            Err(RecvTimeoutError::Timeout) => Err(Failure::Time),
            Err(RecvTimeoutError::Disconnected) => Err(Failure::Crash(self_status(&mut self.process, "stdout closed"))),
        }
    }

    /// Ends the process now.
    pub fn kill(&mut self) {
        self.stdin = None;
        self.process.kill();
    }

    /// Asks the process to quit, then ends it.
    pub fn quit(mut self) {
        let _ = self.send(&ToAgent::Quit);
        self.stdin = None;
        for _ in 0..20 {
            if self.process.finished() {
                return;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        self.kill();
    }
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// How the process ended, if it has.
fn self_status(process: &mut sandbox::Contained, otherwise: &str) -> String {
    std::thread::sleep(Duration::from_millis(20));
    process.exited().unwrap_or_else(|| otherwise.to_string())
}

/// The sandbox of agent `spec` (its `command` resolved) whose own
/// directory is `dir`: it may read its `cwd`, the directories of the
/// files its command names and its `read` paths (relative to `cwd`).
fn walls_of(spec: &ExternalAgent, command: &[String], dir: &std::path::Path) -> sandbox::Config {
    let w = &spec.walls;
    let cwd = std::path::absolute(&spec.cwd).unwrap_or_else(|_| PathBuf::from(&spec.cwd));
    let mut read = vec![cwd.clone()];
    for arg in command {
        let p = std::path::Path::new(arg);
        if p.is_absolute() && p.exists() {
            read.push(if p.is_dir() {
                p.to_path_buf()
            } else {
                p.parent().map_or(p.to_path_buf(), |d| d.to_path_buf())
            });
        }
    }
    read.extend(w.read.iter().map(|r| cwd.join(r)));
    sandbox::Config {
        walls: w.sandbox != crate::spec::SandboxMode::Off,
        required: w.sandbox == crate::spec::SandboxMode::Required,
        network: w.network,
        limits: sandbox::Limits {
            memory_mb: w.memory_mb,
            processes: w.processes,
            open_files: w.open_files,
            cpu_s: w.cpu_s,
        },
        read,
        dir: dir.to_path_buf(),
    }
}

/// Says once per worker process which walls its kernel refused.
fn say_missing(missing: &[&'static str]) {
    static SAID: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let mut said = SAID.lock().unwrap_or_else(|e| e.into_inner());
    let new: Vec<&str> = missing.iter().copied().filter(|m| !said.contains(m)).collect();
    if !new.is_empty() {
        tracing::warn!(
            target: super::LOG_TARGET,
            "sandbox: this worker cannot give external agents {}; they run without (a spec with sandbox = \"required\" refuses instead)",
            new.join(", ")
        );
        said.extend(new);
    }
}

/// A line for a message: at most 80 characters.
fn shorten(line: &str) -> String {
    let t: String = line.chars().take(80).collect();
    if t.len() < line.len() {
        format!("{t:?}...")
    } else {
        format!("{t:?}")
    }
}

/// Reads stdout line by line into `tx` (a line over [`MAX_LINE`] ends it
/// with an error); ends when stdout closes.
fn read_lines(stdout: impl Read, tx: std::sync::mpsc::SyncSender<Result<String, String>>) {
    let mut r = BufReader::new(stdout);
    loop {
        let mut buf = Vec::new();
        let n = match (&mut r).take(MAX_LINE as u64 + 1).read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if n > MAX_LINE && buf.last() != Some(&b'\n') {
            let _ = tx.send(Err(format!("a line longer than {MAX_LINE} bytes")));
            return;
        }
        let Ok(line) = String::from_utf8(buf) else {
            let _ = tx.send(Err("a line that is not UTF-8".into()));
            return;
        };
        let line = line.trim_end().to_string();
        if line.is_empty() {
            continue;
        }
        if tx.send(Ok(line)).is_err() {
            return;
        }
    }
}

/// Passes stderr's first lines to the worker's log, keeps the last ones.
fn log_stderr(stderr: impl Read, name: &str, kept: &Mutex<VecDeque<String>>) {
    let mut r = BufReader::new(stderr);
    let mut shown = 0;
    loop {
        let mut buf = Vec::new();
        match (&mut r).take(4096).read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let line = String::from_utf8_lossy(&buf).trim_end().to_string();
        if shown < STDERR_SHOWN {
            tracing::info!(target: super::LOG_TARGET, "[agent {name}] {line}");
            shown += 1;
            if shown == STDERR_SHOWN {
                tracing::info!(target: super::LOG_TARGET, "[agent {name}] (further stderr lines are not shown)");
            }
        }
        let mut k = kept.lock().unwrap_or_else(|e| e.into_inner());
        if k.len() == STDERR_KEPT {
            k.pop_front();
        }
        k.push_back(line);
    }
}

#[cfg(test)]
mod tests {
    use super::sweep_stale_dirs;

    #[test]
    fn only_the_directories_of_gone_workers_are_swept() {
        let temp = tempfile::tempdir().unwrap();
        let own = std::process::id();
        // No process has a pid this large (Linux's limit is 2^22).
        let gone = ["muggins-agent-bot-999999999-0", "muggins-agent-my-bot-999999999-12"];
        let kept = [
            format!("muggins-agent-bot-{own}-0"),
            "muggins-agent-bot-1-0".to_string(),
            "muggins-agent-bot-x-0".to_string(),
            "muggins-agents-999999999-0".to_string(),
            "something-else".to_string(),
        ];
        for d in gone.iter().map(|s| s.to_string()).chain(kept.iter().cloned()) {
            std::fs::create_dir(temp.path().join(&d)).unwrap();
            std::fs::write(temp.path().join(&d).join("f"), "x").unwrap();
        }
        // A file by such a name is not a directory of ours.
        std::fs::write(temp.path().join("muggins-agent-file-999999999-1"), "x").unwrap();
        sweep_stale_dirs(temp.path());
        for d in gone {
            assert!(!temp.path().join(d).exists(), "{d} is swept");
        }
        for d in kept
            .iter()
            .map(String::as_str)
            .chain(["muggins-agent-file-999999999-1"])
        {
            assert!(temp.path().join(d).exists(), "{d} is kept");
        }
    }
}
