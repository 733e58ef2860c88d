//! What every test of the `muggins` binary builds on: a temporary directory
//! per test ([`Dir`]), a builder for one run of the binary ([`TestCommand`])
//! with the checks the tests make of it, and a long-running process that is
//! killed when the test ends ([`Proc`]).
//!
//! Only this module names the binary; a test that runs `muggins` builds a
//! [`TestCommand`], so a failure says which command it was and what it wrote.

use std::ffi::OsStr;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A `std::process::Command` for the `muggins` binary Cargo built for these
/// tests, with nothing else set.
pub(crate) fn muggins_command() -> Command {
    Command::new(env!("CARGO_BIN_EXE_muggins"))
}

/// A temporary directory for one test, removed when the `Dir` is dropped:
/// keep it alive as long as anything uses its files.
#[derive(Debug)]
pub(crate) struct Dir {
    tmp: tempfile::TempDir,
}

impl Dir {
    /// A new, empty directory.
    pub(crate) fn new() -> Dir {
        let tmp = tempfile::Builder::new()
            .prefix("muggins-it-")
            .tempdir()
            .expect("create a temporary directory");
        Dir { tmp }
    }

    /// The directory itself.
    pub(crate) fn path(&self) -> &Path {
        self.tmp.path()
    }

    /// `rel` inside the directory (whether or not it exists).
    pub(crate) fn join(&self, rel: impl AsRef<Path>) -> PathBuf {
        self.path().join(rel)
    }

    /// Writes `contents` to `rel`, creating the folders above it and replacing
    /// any file there; returns its path.
    #[track_caller]
    pub(crate) fn create(&self, rel: impl AsRef<Path>, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap_or_else(|e| panic!("create {}: {e}", parent.display()));
        }
        std::fs::write(&path, contents).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
        path
    }

    /// Creates the folder `rel` and those above it; returns its path.
    #[track_caller]
    pub(crate) fn create_dir(&self, rel: impl AsRef<Path>) -> PathBuf {
        let path = self.join(rel);
        std::fs::create_dir_all(&path).unwrap_or_else(|e| panic!("create {}: {e}", path.display()));
        path
    }

    /// Writes an experiment spec to `spec.toml` (replacing the one there, if
    /// any); returns its path.
    #[track_caller]
    pub(crate) fn create_spec(&self, toml: &str) -> PathBuf {
        self.create("spec.toml", toml)
    }

    /// The text of the file `rel`, which must be UTF-8.
    #[track_caller]
    pub(crate) fn read(&self, rel: impl AsRef<Path>) -> String {
        let path = self.join(rel);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
    }
}

/// What a finished run of `muggins` gave. `stdout` must be UTF-8 (the binary
/// writes nothing else); `stderr` is decoded lossily so that no diagnostic is
/// lost to a stray byte.
#[derive(Debug)]
pub(crate) struct Output {
    pub(crate) status: ExitStatus,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// One run of the `muggins` binary: arguments, environment, working directory
/// and where its output goes, then a method that runs it and checks the
/// outcome ([`stdout`](Self::stdout), [`success`](Self::success),
/// [`assert_err`](Self::assert_err)), returns it unchecked
/// ([`output`](Self::output)), or starts it in the background
/// ([`spawn`](Self::spawn)).
///
/// The builder methods take and return `&mut Self`, as `Command`'s do.
#[derive(Debug)]
pub(crate) struct TestCommand {
    cmd: Command,
    stdout: Option<Stdio>,
    stderr: Option<Stdio>,
    timeout: Option<Duration>,
    /// What standard input reads (by default: nothing).
    stdin: Option<Vec<u8>>,
    /// The working directory made by [`in_empty_dir`](Self::in_empty_dir),
    /// kept as long as the command.
    own_dir: Option<Dir>,
}

impl TestCommand {
    /// `muggins args...`.
    pub(crate) fn new<S: AsRef<OsStr>>(args: &[S]) -> TestCommand {
        let mut cmd = muggins_command();
        cmd.args(args);
        TestCommand {
            cmd,
            stdout: None,
            stderr: None,
            timeout: None,
            stdin: None,
            own_dir: None,
        }
    }

    /// Gives the command `text` on standard input (by default: nothing).
    pub(crate) fn stdin(&mut self, text: impl Into<Vec<u8>>) -> &mut Self {
        self.stdin = Some(text.into());
        self
    }

    /// Adds one argument.
    pub(crate) fn arg(&mut self, arg: impl AsRef<OsStr>) -> &mut Self {
        self.cmd.arg(arg);
        self
    }

    /// Adds arguments.
    pub(crate) fn args<S: AsRef<OsStr>>(&mut self, args: impl IntoIterator<Item = S>) -> &mut Self {
        self.cmd.args(args);
        self
    }

    /// Runs the command in `dir` (by default: the tests' own directory).
    pub(crate) fn current_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.cmd.current_dir(dir);
        self
    }

    /// Runs the command in a new empty directory of its own, so that it
    /// finds no files it was not given.
    pub(crate) fn in_empty_dir(&mut self) -> &mut Self {
        let dir = Dir::new();
        self.current_dir(dir.path());
        self.own_dir = Some(dir);
        self
    }

    /// Sets an environment variable.
    pub(crate) fn env(&mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> &mut Self {
        self.cmd.env(key, value);
        self
    }

    /// Removes an environment variable the tests run with.
    pub(crate) fn env_remove(&mut self, key: impl AsRef<OsStr>) -> &mut Self {
        self.cmd.env_remove(key);
        self
    }

    /// Where standard output goes: by default, captured by the methods that
    /// run the command to its end, inherited by [`spawn`](Self::spawn).
    pub(crate) fn stdout_to(&mut self, to: impl Into<Stdio>) -> &mut Self {
        self.stdout = Some(to.into());
        self
    }

    /// Where standard error goes; defaults as for [`stdout_to`](Self::stdout_to).
    pub(crate) fn stderr_to(&mut self, to: impl Into<Stdio>) -> &mut Self {
        self.stderr = Some(to.into());
        self
    }

    /// `muggins run SPEC --out OUT` with one worker of `threads` threads and
    /// no web view; its stdout to /dev/null, its stderr to `log` (a new
    /// file) or /dev/null.
    pub(crate) fn run_spec(spec: &Path, out: &Path, threads: usize, log: Option<&Path>) -> TestCommand {
        let mut cmd = TestCommand::new(&["run"]);
        cmd.arg(spec)
            .arg("--out")
            .arg(out)
            .args(["--workers", "1", "--threads", &threads.to_string(), "--no-web"])
            .quiet();
        if let Some(log) = log {
            cmd.stderr_to(std::fs::File::create(log).unwrap());
        }
        cmd
    }

    /// Sends standard output and standard error to /dev/null.
    pub(crate) fn quiet(&mut self) -> &mut Self {
        self.stdout_to(Stdio::null()).stderr_to(Stdio::null())
    }

    /// Makes the methods that run the command to its end kill it, and fail,
    /// if it runs longer than `limit`.
    pub(crate) fn timeout(&mut self, limit: Duration) -> &mut Self {
        self.timeout = Some(limit);
        self
    }

    /// `muggins ["arg", ...]`, for messages.
    fn describe(&self) -> String {
        let args: Vec<_> = self.cmd.get_args().map(|a| a.to_string_lossy()).collect();
        format!("muggins {args:?}")
    }

    /// Runs the command to its end and returns what it gave, whether it
    /// succeeded or not.
    #[track_caller]
    pub(crate) fn output(&mut self) -> Output {
        let what = self.describe();
        let out = self.stdout.take().unwrap_or_else(Stdio::piped);
        let err = self.stderr.take().unwrap_or_else(Stdio::piped);
        let input = self.stdin.take();
        let mut child = Proc(
            self.cmd
                .stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() })
                .stdout(out)
                .stderr(err)
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start {what}: {e}")),
        );
        // Feed stdin and read both pipes while the command runs, so that none fills.
        if let (Some(text), Some(mut pipe)) = (input, child.0.stdin.take()) {
            std::thread::spawn(move || {
                use std::io::Write;
                let _ = pipe.write_all(&text);
            });
        }
        let out = drain(child.0.stdout.take());
        let err = drain(child.0.stderr.take());
        let status = match self.timeout {
            Some(limit) => child.wait_timeout(limit),
            None => Some(child.0.wait().unwrap_or_else(|e| panic!("wait for {what}: {e}"))),
        };
        let Some(status) = status else {
            let _ = child.0.kill();
            let _ = child.0.wait();
            let err = String::from_utf8_lossy(&err.join().unwrap()).into_owned();
            panic!(
                "{what} still ran after {} s; stderr: {err}",
                self.timeout.unwrap().as_secs()
            );
        };
        let stdout = String::from_utf8(out.join().unwrap())
            .unwrap_or_else(|e| panic!("{what} wrote stdout that is not UTF-8: {e}"));
        let stderr = String::from_utf8_lossy(&err.join().unwrap()).into_owned();
        Output { status, stdout, stderr }
    }

    /// Runs the command, which must succeed (else the test fails showing its
    /// stderr), and returns what it gave.
    #[track_caller]
    pub(crate) fn success(&mut self) -> Output {
        let o = self.output();
        assert!(
            o.status.success(),
            "{} failed ({}); stderr: {}",
            self.describe(),
            o.status,
            o.stderr
        );
        o
    }

    /// Runs the command, which must succeed, and returns its standard output.
    #[track_caller]
    pub(crate) fn stdout(&mut self) -> String {
        self.success().stdout
    }

    /// Runs a command that must fail with a message that has every one of
    /// `parts` (it names what is wrong); returns the message.
    #[track_caller]
    pub(crate) fn assert_err(&mut self, parts: &[&str]) -> String {
        let what = self.describe();
        let o = self.output();
        assert!(
            !o.status.success(),
            "{what} should fail; stdout: {}; stderr: {}",
            o.stdout,
            o.stderr
        );
        for p in parts {
            assert!(o.stderr.contains(p), "{what}: {:?} lacks {p:?}", o.stderr);
        }
        o.stderr
    }

    /// Starts the command in the background; it is killed when the returned
    /// [`Proc`] is dropped.
    #[track_caller]
    pub(crate) fn spawn(&mut self) -> Proc {
        if let Some(out) = self.stdout.take() {
            self.cmd.stdout(out);
        }
        if let Some(err) = self.stderr.take() {
            self.cmd.stderr(err);
        }
        let what = self.describe();
        Proc(self.cmd.spawn().unwrap_or_else(|e| panic!("cannot start {what}: {e}")))
    }
}

/// Reads a pipe to its end on a thread of its own.
fn drain(pipe: Option<impl Read + Send + 'static>) -> JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut p) = pipe {
            p.read_to_end(&mut bytes).expect("read the command's output");
        }
        bytes
    })
}

/// A process started by [`TestCommand::spawn`], killed (and reaped) when
/// dropped, so that a failing test leaves nothing running.
#[derive(Debug)]
pub(crate) struct Proc(pub(crate) Child);

impl Proc {
    /// Waits at most `limit` for the process to exit; `None` if it still runs.
    pub(crate) fn wait_timeout(&mut self, limit: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.0.try_wait().unwrap() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends the signal `sig` (as `kill` spells it: `-TERM`, `-STOP`, ...),
    /// which must be delivered.
    #[track_caller]
    pub(crate) fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .args([sig, &self.0.id().to_string()])
            .status()
            .unwrap()
            .success();
        assert!(ok, "kill {sig}");
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
