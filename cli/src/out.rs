//! Standard output, the one way every command writes it: a reader that
//! goes away (`muggins play ... | head -3`) ends the process quietly with
//! status 0, as ripgrep does, instead of the panic of `println!` (the
//! workspace forbids the `unsafe` that restoring SIGPIPE's default needs).
//! Any other write error ends it with one `error:` line, status 2.
//!
//! `main.rs` defines this crate's own `println!` and `print!`, which
//! shadow the standard ones and call [`print`]; [`stdout`] is the writer
//! for output written in bulk.

use std::fmt;
use std::io::{self, BufWriter, Write};

/// Writes `args` (and a newline when `newline`) to standard output.
pub fn print(args: fmt::Arguments<'_>, newline: bool) {
    let mut out = io::stdout().lock();
    let written = out
        .write_fmt(args)
        .and_then(|()| if newline { out.write_all(b"\n") } else { Ok(()) });
    if let Err(e) = written {
        failed(&e);
    }
}

/// Ends the process after standard output failed: quietly when its reader
/// has gone.
fn failed(e: &io::Error) -> ! {
    if e.kind() == io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("error: writing standard output: {e}");
    std::process::exit(2);
}

/// An interrupted write is handed back (`write_all` tries it again); any
/// other error ends the process.
fn retry_or_end<T>(e: io::Error) -> io::Result<T> {
    match e.kind() {
        io::ErrorKind::Interrupted => Err(e),
        _ => failed(&e),
    }
}

/// Standard output locked and buffered for a command that writes much;
/// its errors end the process as [`print`]'s do, so they never come back
/// to the caller.
pub fn stdout() -> BufWriter<Stdout> {
    BufWriter::new(Stdout(io::stdout().lock()))
}

/// Locked standard output whose write errors end the process (see [`stdout`]).
#[derive(Debug)]
pub struct Stdout(io::StdoutLock<'static>);

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf).or_else(retry_or_end)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush().or_else(retry_or_end)
    }
}
