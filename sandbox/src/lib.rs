//! The walls around a program muggins did not write (docs/agents.md, "The
//! sandbox"), on Linux:
//!
//! - **containment**: its own session, killed with it; the first process of
//!   a PID namespace, so every process it starts dies when it does, and dies
//!   when the worker does (`PR_SET_PDEATHSIG` on each level);
//! - **namespaces**: a user namespace (no capability outside it), its own
//!   `/proc` (it sees only its processes, never the worker's environment or
//!   arguments), mounts (the [`protect`]ed paths covered), IPC and, without
//!   `network`, a network namespace with no interface up;
//! - **Landlock**: it reads only the system, its program's installation and
//!   the paths it is given, writes only its own directory, and cannot signal
//!   or reach an abstract socket outside;
//! - **limits**: data memory, processes, open files, CPU time, no core files.
//!
//! What the kernel refuses is reported ([`Started::missing`]); with
//! `required`, a refusal stops the start instead. The one crate with
//! `unsafe` code: the system calls between `fork` and `exec` (`child.rs`).

#[cfg(target_os = "linux")]
mod child;
mod paths;

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::Mutex;

pub use paths::{DEVICES, SYSTEM, installation};

/// Limits of an agent's processes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// MiB of data memory a process may have (`RLIMIT_DATA`).
    pub memory_mb: u32,
    /// Processes and threads at once (`RLIMIT_NPROC`, counted in its user
    /// namespace).
    pub processes: u32,
    /// Open files a process may hold.
    pub open_files: u32,
    /// Seconds of CPU time a process may use (0: no limit).
    pub cpu_s: u32,
}

/// How to start one program.
#[derive(Clone, Debug)]
pub struct Config {
    /// Sandboxed (`false`: only contained, for a trusted program).
    pub walls: bool,
    /// Refuse to start it unless every wall is applied.
    pub required: bool,
    /// Whether it may use the network.
    pub network: bool,
    pub limits: Limits,
    /// What it may read besides [`SYSTEM`] and its program's installation.
    pub read: Vec<PathBuf>,
    /// The one directory it may write (its working directory).
    pub dir: PathBuf,
}

/// Why a program could not be started.
#[derive(Debug)]
pub enum StartError {
    /// `exec` or the system refused (the program does not exist, ...).
    Io(std::io::Error),
    /// `required`, and these walls could not be applied.
    Refused(Vec<&'static str>),
    /// It needs `path` (to read), which is under `under`, a [`protect`]ed
    /// path.
    Protected { path: PathBuf, under: PathBuf },
}

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StartError::Io(e) => write!(f, "{e}"),
            StartError::Refused(m) => write!(
                f,
                "the sandbox is required, and this worker cannot apply {}",
                m.join(", ")
            ),
            StartError::Protected { path, under } => write!(
                f,
                "it needs {} (its cwd, a file of its command, its program or a path of its `read`), \
                 which is under {}, a path no agent may read (the results root, the coordinator's state or \
                 the token file); keep the agent's files elsewhere",
                path.display(),
                under.display()
            ),
        }
    }
}

impl std::error::Error for StartError {}

/// A started program: its process and what of the walls could not be applied.
#[derive(Debug)]
pub struct Started {
    pub process: Contained,
    /// The walls the kernel refused (empty when all are up).
    pub missing: Vec<&'static str>,
}

/// Paths no sandboxed program may read, whatever it is given (the results
/// root, the coordinator's state, the token file): covered in its mount
/// namespace, and never given to Landlock.
static PROTECTED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Adds `path` to the protected paths (made absolute; kept for the process's life).
pub fn protect(path: &Path) {
    let p = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut g = PROTECTED.lock().unwrap_or_else(|e| e.into_inner());
    if !g.contains(&p) {
        g.push(p);
    }
}

/// The protected paths.
pub fn protected() -> Vec<PathBuf> {
    PROTECTED.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// A process started by [`start`] and what it started: killed together.
#[derive(Debug)]
pub struct Contained {
    child: Child,
    /// Whether its exit has been collected (its pid may then be reused).
    reaped: bool,
}

impl Contained {
    /// Its standard streams and id.
    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    /// How it ended, if it has (without collecting it, so that [`kill`](Self::kill)
    /// can still reach its group).
    pub fn exited(&mut self) -> Option<String> {
        #[cfg(target_os = "linux")]
        {
            if self.reaped {
                return Some("the process exited".into());
            }
            // SAFETY: waitid on our own child, WNOWAIT: nothing is collected.
            let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
            let r = unsafe {
                libc::waitid(
                    libc::P_PID,
                    self.child.id(),
                    &mut info,
                    libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
                )
            };
            // SAFETY: filled by waitid for a child that exited.
            let pid = unsafe { info.si_pid() };
            (r == 0 && pid != 0).then(|| {
                let status = unsafe { info.si_status() };
                match info.si_code {
                    libc::CLD_EXITED if status > 128 => format!("the process was killed by signal {}", status - 128),
                    libc::CLD_EXITED => format!("the process exited (exit status: {status})"),
                    _ => format!("the process was killed by signal {status}"),
                }
            })
        }
        #[cfg(not(target_os = "linux"))]
        {
            self.child
                .try_wait()
                .ok()
                .flatten()
                .map(|s| format!("the process exited ({s})"))
        }
    }

    /// Kills it and every process of its group (its PID namespace goes
    /// with it), then collects it.
    pub fn kill(&mut self) {
        if !self.reaped {
            #[cfg(unix)]
            // SAFETY: a signal to the group our child leads; not yet
            // collected, so its id is not anyone else's.
            unsafe {
                libc::kill(-(self.child.id() as libc::pid_t), libc::SIGKILL);
            }
            let _ = self.child.kill();
            let _ = self.child.wait();
            self.reaped = true;
        }
    }

    /// Whether it has exited, collecting it then (after a kill of its group).
    pub fn finished(&mut self) -> bool {
        if self.reaped {
            return true;
        }
        if self.exited().is_some() {
            self.kill();
            return true;
        }
        false
    }
}

impl Drop for Contained {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Starts `cmd` inside the walls of `config`.
pub fn start(mut cmd: Command, config: &Config) -> Result<Started, StartError> {
    #[cfg(target_os = "linux")]
    {
        linux::start(&mut cmd, config)
    }
    #[cfg(not(target_os = "linux"))]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
        if config.walls && config.required {
            return Err(StartError::Refused(vec!["every wall (this system is not Linux)"]));
        }
        let child = cmd.spawn().map_err(StartError::Io)?;
        let missing = if config.walls {
            vec!["every wall (this system is not Linux)"]
        } else {
            vec![]
        };
        Ok(Started {
            process: Contained { child, reaped: false },
            missing,
        })
    }
}

#[cfg(target_os = "linux")]
mod linux;
