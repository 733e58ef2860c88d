//! What runs in the agent's process between `fork` and `exec`: only system
//! calls on what [`Plan`] prepared before the fork (no allocation, no lock),
//! as `pre_exec` requires.
//!
//! The forked process (the *shim*) makes its namespaces, then forks the
//! agent as the first process of its PID namespace and waits for it, with
//! every descriptor closed; the agent limits itself, takes `no_new_privs`
//! and Landlock's ruleset, and `exec`s the program. Each reports what it
//! could not apply as four bytes on [`Plan::report`]. When the shim dies
//! (the worker kills it, or the worker itself dies) the agent gets SIGKILL,
//! and with the first process of a PID namespace every process in it dies.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};

/// The walls, one bit each (what was asked, and what failed).
pub(crate) mod bit {
    pub const USER: u32 = 1;
    pub const PID: u32 = 1 << 1;
    pub const MOUNT: u32 = 1 << 2;
    pub const NET: u32 = 1 << 3;
    pub const PROC: u32 = 1 << 4;
    pub const HIDE: u32 = 1 << 5;
    pub const LIMITS: u32 = 1 << 6;
    pub const NO_NEW_PRIVS: u32 = 1 << 7;
    pub const LANDLOCK: u32 = 1 << 8;
    pub const ALL: [(u32, &str); 9] = [
        (USER, "a user namespace (no capability outside it)"),
        (PID, "a PID namespace (its processes die with it; it sees no other)"),
        (MOUNT, "a mount namespace"),
        (NET, "a network namespace (no network)"),
        (PROC, "a /proc of its own"),
        (HIDE, "hiding the protected paths"),
        (LIMITS, "the limits"),
        (NO_NEW_PRIVS, "no_new_privs"),
        (LANDLOCK, "Landlock (what it may read and write)"),
    ];
}

/// Everything the child needs, made before the fork.
#[derive(Debug)]
pub(crate) struct Plan {
    /// The walls to apply ([`bit`]).
    pub want: u32,
    /// Whether a wall that cannot be applied stops the start.
    pub required: bool,
    /// The worker's pid: a child whose parent is already gone exits.
    pub parent: libc::pid_t,
    pub uid_map: CString,
    pub gid_map: CString,
    /// Paths covered in its mount namespace: (path, is a directory).
    pub hidden: Vec<(CString, bool)>,
    /// `(resource, limit)` pairs for `setrlimit`.
    pub limits: Vec<(i32, u64)>,
    /// Landlock's ruleset (the fd of `landlock_create_ruleset`).
    pub ruleset: Option<OwnedFd>,
    /// The write end of the pipe the bits that failed go on.
    pub report: OwnedFd,
}

const READ_FILE: u64 = 1 << 2;
const READ_DIR: u64 = 1 << 3;
const RULE_PATH_BENEATH: libc::c_int = 1;

/// `struct landlock_path_beneath_attr`.
#[repr(C, packed)]
struct PathBeneath {
    allowed_access: u64,
    parent_fd: i32,
}

/// Runs in the forked child; `Ok` goes on to `exec`.
pub(crate) fn enter(plan: &Plan) -> io::Result<()> {
    // SAFETY (for every block of this module): plain system calls on
    // values made before the fork; nothing allocates or takes a lock.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0);
        if libc::getppid() != plan.parent {
            libc::_exit(137);
        }
        // Its own session and process group, out of the terminal's reach
        // (Ctrl-C is the worker's to handle) and killable as one.
        libc::setsid();
    }
    let want = plan.want;
    let mut failed = 0;
    if want & bit::USER != 0 && !user_namespace(plan) {
        failed |= bit::USER;
    }
    for (b, flags) in [
        (bit::PID, libc::CLONE_NEWPID),
        (bit::MOUNT, libc::CLONE_NEWNS | libc::CLONE_NEWIPC),
        (bit::NET, libc::CLONE_NEWNET),
    ] {
        if want & b != 0 && unsafe { libc::unshare(flags) } != 0 {
            failed |= b;
        }
    }
    if want & bit::MOUNT != 0 && failed & bit::MOUNT == 0 {
        if !private_mounts() {
            failed |= bit::MOUNT;
        } else if !hide(&plan.hidden) {
            failed |= bit::HIDE;
        }
    }
    if failed & bit::MOUNT != 0 {
        failed |= want & (bit::HIDE | bit::PROC);
    }
    if failed & bit::PID != 0 {
        failed |= want & bit::PROC;
    }
    report(plan, failed)?;
    if plan.required && failed != 0 {
        return Err(io::Error::from_raw_os_error(libc::EPERM));
    }
    if want & bit::PID != 0 && failed & bit::PID == 0 {
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        if pid > 0 {
            shim(pid);
        }
        unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) };
    }
    let mut failed = 0;
    if want & bit::PROC != 0 && !own_proc(plan.ruleset.as_ref()) {
        failed |= bit::PROC;
    }
    if want & bit::LIMITS != 0 {
        for &(resource, limit) in &plan.limits {
            let rl = libc::rlimit {
                rlim_cur: limit,
                rlim_max: limit,
            };
            if unsafe { libc::setrlimit(resource as _, &rl) } != 0 {
                failed |= bit::LIMITS;
            }
        }
    }
    if want & bit::NO_NEW_PRIVS != 0 && unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        failed |= bit::NO_NEW_PRIVS;
    }
    if want & bit::LANDLOCK != 0 {
        let ok = plan
            .ruleset
            .as_ref()
            .is_some_and(|fd| unsafe { libc::syscall(libc::SYS_landlock_restrict_self, fd.as_raw_fd(), 0) } == 0);
        if !ok {
            failed |= bit::LANDLOCK;
        }
    }
    report(plan, failed)?;
    if plan.required && failed != 0 {
        return Err(io::Error::from_raw_os_error(libc::EPERM));
    }
    Ok(())
}

/// A user namespace mapping the worker's ids to themselves: the agent has
/// capabilities inside it (to make the other namespaces) and none outside.
fn user_namespace(plan: &Plan) -> bool {
    let made = unsafe { libc::unshare(libc::CLONE_NEWUSER) == 0 };
    made && write_file(c"/proc/self/setgroups", b"deny")
        && write_file(c"/proc/self/uid_map", plan.uid_map.as_bytes())
        && write_file(c"/proc/self/gid_map", plan.gid_map.as_bytes())
}

fn write_file(path: &std::ffi::CStr, bytes: &[u8]) -> bool {
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return false;
        }
        let n = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        libc::close(fd);
        n == bytes.len() as isize
    }
}

/// Mounts made here stay here.
fn private_mounts() -> bool {
    unsafe {
        libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ) == 0
    }
}

/// Covers each protected directory with an empty read-only tmpfs it cannot
/// enter, and each protected file with /dev/null.
fn hide(hidden: &[(CString, bool)]) -> bool {
    let mut ok = true;
    for (path, dir) in hidden {
        let r = unsafe {
            if *dir {
                libc::mount(
                    c"none".as_ptr(),
                    path.as_ptr(),
                    c"tmpfs".as_ptr(),
                    libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                    c"size=4k,mode=000".as_ptr().cast(),
                )
            } else {
                libc::mount(
                    c"/dev/null".as_ptr(),
                    path.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND,
                    std::ptr::null(),
                )
            }
        };
        // A path gone since the plan was made has nothing left to hide.
        ok &= r == 0 || unsafe { *libc::__errno_location() } == libc::ENOENT;
    }
    ok
}

/// A /proc that shows only its PID namespace, which Landlock then lets it
/// read (without it, /proc stays unreadable: the host's would show the
/// worker's).
fn own_proc(ruleset: Option<&OwnedFd>) -> bool {
    unsafe {
        if libc::mount(
            c"proc".as_ptr(),
            c"/proc".as_ptr(),
            c"proc".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            std::ptr::null(),
        ) != 0
        {
            return false;
        }
        let Some(rs) = ruleset else { return true };
        let fd = libc::open(c"/proc".as_ptr(), libc::O_PATH | libc::O_CLOEXEC);
        if fd < 0 {
            return false;
        }
        let attr = PathBeneath {
            allowed_access: READ_FILE | READ_DIR,
            parent_fd: fd,
        };
        let r = libc::syscall(
            libc::SYS_landlock_add_rule,
            rs.as_raw_fd(),
            RULE_PATH_BENEATH,
            &attr as *const PathBeneath,
            0,
        );
        libc::close(fd);
        r == 0
    }
}

fn report(plan: &Plan, failed: u32) -> io::Result<()> {
    let bytes = failed.to_le_bytes();
    let n = unsafe { libc::write(plan.report.as_raw_fd(), bytes.as_ptr().cast(), 4) };
    if n == 4 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The shim: holds nothing open, waits for the agent, exits as it did.
fn shim(agent: libc::pid_t) -> ! {
    unsafe {
        if libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32) != 0 {
            for fd in 0..4096 {
                libc::close(fd);
            }
        }
        let mut status = 0;
        loop {
            let r = libc::waitpid(agent, &mut status, 0);
            if r == agent {
                break;
            }
            if r < 0 && *libc::__errno_location() != libc::EINTR {
                libc::_exit(1);
            }
        }
        let code = if libc::WIFEXITED(status) {
            libc::WEXITSTATUS(status)
        } else if libc::WIFSIGNALED(status) {
            128 + libc::WTERMSIG(status)
        } else {
            1
        };
        libc::_exit(code)
    }
}
