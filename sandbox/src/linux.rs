//! Linux: the plan made before the fork, the start, and what failed.

use std::ffi::CString;
use std::io::Read;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::process::Command;

use super::child::{Plan, bit};
use super::{Config, Contained, StartError, Started, paths, protected};

/// The walls `config` asks for.
fn wanted(config: &Config) -> u32 {
    if !config.walls {
        // Contained only: a PID namespace (a user namespace to make it
        // unless the worker is root), no other wall.
        let user = if unsafe { libc::geteuid() } == 0 { 0 } else { bit::USER };
        return user | bit::PID;
    }
    let net = if config.network { 0 } else { bit::NET };
    bit::USER | bit::PID | bit::MOUNT | net | bit::PROC | bit::HIDE | bit::LIMITS | bit::NO_NEW_PRIVS | bit::LANDLOCK
}

fn cstring(p: &std::path::Path) -> Option<CString> {
    CString::new(p.as_os_str().as_bytes()).ok()
}

/// The walls' names of `bits`.
fn names(bits: u32) -> Vec<&'static str> {
    bit::ALL
        .iter()
        .filter(|(b, _)| bits & b != 0)
        .map(|(_, n)| *n)
        .collect()
}

pub(super) fn start(cmd: &mut Command, config: &Config) -> Result<Started, StartError> {
    let want = wanted(config);
    let path_var = cmd
        .get_envs()
        .find(|(k, _)| *k == "PATH")
        .and_then(|(_, v)| v.map(|v| v.to_os_string()));
    let protected = protected();
    let ruleset = if want & bit::LANDLOCK != 0 {
        let mut read = config.read.clone();
        read.extend(paths::installation(
            std::path::Path::new(cmd.get_program()),
            path_var.as_deref(),
        ));
        // A protected path is never given to Landlock: what needs one is refused.
        if let Some((path, under)) = read.iter().find_map(|r| {
            protected
                .iter()
                .find(|p| r.starts_with(p))
                .map(|p| (r.clone(), p.clone()))
        }) {
            return Err(StartError::Protected { path, under });
        }
        paths::ruleset(&read, &config.dir, config.network)
    } else {
        None
    };
    let mut refused = 0;
    if want & bit::LANDLOCK != 0 && ruleset.is_none() {
        refused |= bit::LANDLOCK;
    }
    // Fault injection (tests): as if the kernel refused PID namespaces.
    if std::env::var_os("MUGGINS_FAILPOINT").is_some_and(|v| v == "sandbox-no-pid") {
        refused |= want & (bit::PID | bit::PROC);
    }
    if config.required && refused != 0 {
        return Err(StartError::Refused(names(refused)));
    }
    let asked = want;
    let want = want & !refused;
    let hidden = protected
        .iter()
        .filter_map(|p| {
            let meta = std::fs::metadata(p).ok()?;
            Some((cstring(p)?, meta.is_dir()))
        })
        .collect();
    let limits = &config.limits;
    let mut rlimits = vec![
        (libc::RLIMIT_DATA as i32, u64::from(limits.memory_mb) << 20),
        (libc::RLIMIT_NPROC as i32, u64::from(limits.processes)),
        (libc::RLIMIT_NOFILE as i32, u64::from(limits.open_files)),
        (libc::RLIMIT_CORE as i32, 0),
    ];
    if limits.cpu_s > 0 {
        rlimits.push((libc::RLIMIT_CPU as i32, u64::from(limits.cpu_s)));
    }
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two descriptors we then own.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(StartError::Io(std::io::Error::last_os_error()));
    }
    let (read_end, write_end) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let plan = Plan {
        want,
        required: config.required,
        parent: std::process::id() as libc::pid_t,
        uid_map: CString::new(format!("{uid} {uid} 1")).expect("no NUL"),
        gid_map: CString::new(format!("{gid} {gid} 1")).expect("no NUL"),
        hidden,
        limits: rlimits,
        ruleset,
        report: write_end,
    };
    // SAFETY: `enter` makes only system calls on what the plan holds.
    unsafe {
        cmd.pre_exec(move || super::child::enter(&plan));
    }
    let spawned = cmd.spawn();
    // The command keeps the plan (and its copy of the pipe's write end)
    // until it is dropped: read what the children said once they are done
    // with theirs.
    drop(std::mem::replace(cmd, Command::new("/")));
    let mut said = Vec::new();
    let _ = std::fs::File::from(read_end).read_to_end(&mut said);
    let failed = said
        .chunks_exact(4)
        .fold(refused, |m, c| m | u32::from_le_bytes([c[0], c[1], c[2], c[3]]));
    match spawned {
        Ok(child) => Ok(Started {
            process: Contained { child, reaped: false },
            missing: names(failed & asked),
        }),
        Err(_) if config.required && failed & asked != 0 => Err(StartError::Refused(names(failed & asked))),
        Err(e) => Err(StartError::Io(e)),
    }
}
