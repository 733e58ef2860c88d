//! An external agent's walls (docs/agents.md, "The sandbox"): whether it
//! runs sandboxed, whether it may use the network, what else it may read,
//! and its limits. Defaults say nothing in the spec's canonical JSON, so a
//! spec written before the sandbox keeps its id.

use toml::{Table, Value};

use super::SpecError;
use super::fields::{bad, int_in, take_int};

/// Whether an agent runs in the sandbox.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SandboxMode {
    /// Sandboxed with what the kernel allows; what it refuses is said once
    /// in the worker's log (`sandbox = true`, the default).
    #[default]
    On,
    /// Sandboxed with every wall, or the agent does not start: a worker
    /// whose kernel refuses one fails the task (`sandbox = "required"`).
    Required,
    /// No walls, for a trusted program (`sandbox = false`): it is still
    /// contained (its processes die with it) and never given the token.
    Off,
}

/// The sandbox's settings of one agent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Walls {
    /// Sandboxed, required, or not.
    pub sandbox: SandboxMode,
    /// Whether it may open network connections (`network = true`).
    pub network: bool,
    /// Most MiB of data memory of each of its processes (`RLIMIT_DATA`).
    pub memory_mb: u32,
    /// Most processes (and threads) it may run at once.
    pub processes: u32,
    /// Most files each of its processes may hold open.
    pub open_files: u32,
    /// Most seconds of CPU time of each of its processes (0: no limit).
    pub cpu_s: u32,
    /// More paths it may read (a model file, a library outside the system).
    pub read: Vec<String>,
}

/// Defaults: sandboxed, no network, 4 GiB, 256 processes, 1024 files, no CPU limit.
impl Default for Walls {
    fn default() -> Walls {
        Walls {
            sandbox: SandboxMode::On,
            network: false,
            memory_mb: 4096,
            processes: 256,
            open_files: 1024,
            cpu_s: 0,
            read: Vec::new(),
        }
    }
}

/// The walls of table `t` (agent `p`, e.g. `agents.mybot`); its keys are removed.
pub(super) fn walls_of(p: &str, t: &mut Table) -> Result<Walls, SpecError> {
    let key = |k: &str| format!("{p}.{k}");
    let d = Walls::default();
    let sandbox = match t.remove("sandbox") {
        None | Some(Value::Boolean(true)) => SandboxMode::On,
        Some(Value::Boolean(false)) => SandboxMode::Off,
        Some(Value::String(s)) if s == "required" => SandboxMode::Required,
        Some(v) => return Err(bad(&key("sandbox"), v, "true (the default), \"required\" or false")),
    };
    let network = match t.remove("network") {
        None | Some(Value::Boolean(false)) => false,
        Some(Value::Boolean(true)) => true,
        Some(v) => return Err(bad(&key("network"), v, "true or false")),
    };
    let mut int = |k: &str, default: u32, lo: i64, hi: i64| -> Result<u32, SpecError> {
        Ok(int_in(&key(k), take_int(t, p, k)?.unwrap_or(default as i64), lo, hi)? as u32)
    };
    let memory_mb = int("memory_mb", d.memory_mb, 16, 1 << 20)?;
    let processes = int("processes", d.processes, 1, 65_536)?;
    let open_files = int("open_files", d.open_files, 16, 1 << 20)?;
    let cpu_s = int("cpu_s", d.cpu_s, 0, 1 << 30)?;
    let read = match t.remove("read") {
        None => Vec::new(),
        Some(Value::Array(a)) => a
            .into_iter()
            .map(|v| match v {
                Value::String(s) if !s.is_empty() => Ok(s),
                other => Err(bad(&key("read"), other, "each element is a path")),
            })
            .collect::<Result<_, _>>()?,
        Some(v) => return Err(bad(&key("read"), v, "a list of paths, e.g. [\"models/\"]")),
    };
    if sandbox == SandboxMode::Off && (network || !read.is_empty()) {
        let k = if network { "network" } else { "read" };
        return Err(bad(
            &key(k),
            if network {
                "true".to_string()
            } else {
                format!("{read:?}")
            },
            "means nothing with sandbox = false (an agent without a sandbox reads and connects as the worker can)",
        ));
    }
    Ok(Walls {
        sandbox,
        network,
        memory_mb,
        processes,
        open_files,
        cpu_s,
        read,
    })
}

impl Walls {
    /// The settings that differ from the defaults, as canonical JSON
    /// members each starting with a comma (empty for the defaults).
    pub(super) fn canonical(&self) -> String {
        let d = Walls::default();
        let mut s = String::new();
        match self.sandbox {
            SandboxMode::On => {}
            SandboxMode::Required => s.push_str(",\"sandbox\":\"required\""),
            SandboxMode::Off => s.push_str(",\"sandbox\":false"),
        }
        if self.network {
            s.push_str(",\"network\":true");
        }
        for (k, v, dv) in [
            ("memory_mb", self.memory_mb, d.memory_mb),
            ("processes", self.processes, d.processes),
            ("open_files", self.open_files, d.open_files),
            ("cpu_s", self.cpu_s, d.cpu_s),
        ] {
            if v != dv {
                s.push_str(&format!(",\"{k}\":{v}"));
            }
        }
        if !self.read.is_empty() {
            let list: Vec<String> = self
                .read
                .iter()
                .map(|r| serde_json::to_string(r).expect("a string serialises"))
                .collect();
            s.push_str(&format!(",\"read\":[{}]", list.join(",")));
        }
        s
    }
}
