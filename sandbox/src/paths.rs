//! What an agent may read: the system's directories, its program's
//! installation, the paths its spec names; and Landlock's ruleset that
//! says so.

use std::path::{Path, PathBuf};

/// The system's directories every program may read (and execute from).
pub const SYSTEM: [&str; 12] = [
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/sys",
    "/nix/store",
    "/dev",
];

/// Devices it may also write.
pub const DEVICES: [&str; 3] = ["/dev/null", "/dev/zero", "/dev/full"];

/// The installation a program runs from: for `/x/venv/bin/python3`, the
/// directory `/x/venv` (the parent of its `bin`), both as found and with
/// links resolved; for a script, its interpreter's too (`#!`, one level,
/// through `env`). `path` is the `PATH` a bare name is looked up in.
pub fn installation(program: &Path, path: Option<&std::ffi::OsStr>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Some(found) = lookup(program, path) else {
        return out;
    };
    let mut add = |p: &Path| {
        for q in [Some(p.to_path_buf()), std::fs::canonicalize(p).ok()]
            .into_iter()
            .flatten()
        {
            if let Some(prefix) = prefix_of(&q)
                && !out.contains(&prefix)
            {
                out.push(prefix);
            }
        }
    };
    add(&found);
    if let Some(interpreter) = shebang(&found) {
        let mut words = interpreter.split_whitespace();
        if let Some(first) = words.next() {
            let first = Path::new(first);
            add(first);
            if first.file_name().is_some_and(|n| n == "env")
                && let Some(next) = words.find(|w| !w.starts_with('-'))
                && let Some(p) = lookup(Path::new(next), path)
            {
                add(&p);
            }
        }
    }
    out
}

/// `program` as a file: itself if it names a path, else the first match on `path`.
fn lookup(program: &Path, path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    if program.components().count() > 1 {
        return program.is_file().then(|| program.to_path_buf());
    }
    std::env::split_paths(path?)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

/// The directory above a program's own (`/usr/bin/x` -> `/usr`); its own
/// directory when that is at the root (`/bin/x` -> `/bin`).
fn prefix_of(file: &Path) -> Option<PathBuf> {
    let dir = file.parent()?;
    match dir.parent() {
        Some(up) if up != Path::new("/") && !up.as_os_str().is_empty() => Some(up.to_path_buf()),
        _ => Some(dir.to_path_buf()),
    }
}

/// A script's `#!` line, without the `#!`.
fn shebang(file: &Path) -> Option<String> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(file).ok()?.read(&mut head).ok()?;
    let text = std::str::from_utf8(&head[..n]).ok().or_else(|| {
        // A line cut in the middle of a character: up to its end.
        let end = head[..n].iter().position(|&b| b == b'\n')?;
        std::str::from_utf8(&head[..end]).ok()
    })?;
    let line = text.strip_prefix("#!")?.lines().next()?;
    Some(line.trim().to_string())
}

/// Landlock's ruleset: read `read` and the system, write `dir` and the
/// devices, and (without `network`) no TCP; signals and abstract sockets
/// scoped to the sandbox where the kernel knows them. `None` where the
/// kernel has no Landlock.
#[cfg(target_os = "linux")]
pub(crate) fn ruleset(read: &[PathBuf], dir: &Path, network: bool) -> Option<std::os::fd::OwnedFd> {
    use landlock::{
        ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreatedAttr, Scope,
        path_beneath_rules,
    };
    let abi = ABI::V6;
    let mut rs = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))
        .ok()?
        .scope(Scope::from_all(abi))
        .ok()?;
    if !network {
        rs = rs.handle_access(AccessNet::from_all(abi)).ok()?;
    }
    let readable = SYSTEM.iter().map(PathBuf::from).chain(read.iter().cloned());
    let created = rs
        .create()
        .ok()?
        .add_rules(path_beneath_rules(readable, AccessFs::from_read(abi)))
        .ok()?
        .add_rules(path_beneath_rules(
            DEVICES,
            AccessFs::from_read(abi) | AccessFs::WriteFile,
        ))
        .ok()?
        .add_rules(path_beneath_rules([dir], AccessFs::from_all(abi)))
        .ok()?;
    let fd: Option<std::os::fd::OwnedFd> = created.into();
    fd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_s_installation_is_the_directory_above_its_own() {
        let t = tempfile::tempdir().unwrap();
        let bin = t.path().join("venv/bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(bin.join("tool"), "#!/usr/bin/env sh\n").unwrap();
        let found = installation(Path::new("tool"), Some(bin.as_os_str()));
        let venv = t.path().join("venv");
        assert!(found.contains(&venv), "{found:?}");
        // `env` is in /usr/bin or /bin; `sh` too.
        assert!(
            found.iter().any(|p| p == Path::new("/usr") || p == Path::new("/bin")),
            "{found:?}"
        );
        assert_eq!(prefix_of(Path::new("/bin/sh")), Some(PathBuf::from("/bin")));
        assert_eq!(prefix_of(Path::new("/usr/bin/node")), Some(PathBuf::from("/usr")));
        assert!(installation(Path::new("no-such-program-here"), Some(bin.as_os_str())).is_empty());
    }
}
