//! `muggins bench sandbox`: what the walls around an external agent cost
//! (docs/agents.md, "The sandbox"): a start (spawn to the first reply) and
//! a decision (one line there and back), for `cat` started plainly, only
//! contained (`sandbox = false`) and sandboxed.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::median;

/// Lines sent through one process to time a round trip.
const TRIPS: u32 = 2000;

/// One line there and back through a started `cat`.
type Trip = Box<dyn FnMut() -> Result<()>>;

/// One `cat`, as `how` starts it (0 plainly, 1 contained, 2 sandboxed),
/// and how long it took to answer its first line.
fn started(how: u8, dir: &std::path::Path) -> Result<(Trip, Duration)> {
    let mut cmd = Command::new("cat");
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let t = Instant::now();
    let mut process = match how {
        0 => Plain(cmd.spawn().context("starting cat")?),
        _ => {
            let config = sandbox::Config {
                walls: how == 2,
                required: false,
                network: false,
                limits: sandbox::Limits {
                    memory_mb: 4096,
                    processes: 256,
                    open_files: 1024,
                    cpu_s: 0,
                },
                read: vec![],
                dir: dir.to_path_buf(),
            };
            let s = sandbox::start(cmd, &config).map_err(|e| anyhow::anyhow!("starting cat: {e}"))?;
            Walled(s.process)
        }
    };
    let child = process.child();
    let mut stdin = child.stdin.take().context("stdin")?;
    let mut stdout = BufReader::new(child.stdout.take().context("stdout")?);
    let mut line = String::new();
    stdin.write_all(b"hello\n")?;
    stdout.read_line(&mut line)?;
    let start = t.elapsed();
    let trip = move || -> Result<()> {
        line.clear();
        stdin.write_all(b"{\"type\": \"decide\"}\n")?;
        stdout.read_line(&mut line)?;
        let _ = &process;
        Ok(())
    };
    Ok((Box::new(trip), start))
}

/// A process started either way; killed when dropped.
enum Started {
    Plain(std::process::Child),
    Walled(sandbox::Contained),
}
use Started::{Plain, Walled};

impl Started {
    fn child(&mut self) -> &mut std::process::Child {
        match self {
            Plain(c) => c,
            Walled(c) => c.child(),
        }
    }
}

impl Drop for Started {
    fn drop(&mut self) {
        match self {
            Plain(c) => {
                let _ = c.kill();
                let _ = c.wait();
            }
            Walled(c) => c.kill(),
        }
    }
}

pub(super) fn run(runs: usize) -> Result<()> {
    let dir = std::env::temp_dir().join(format!("muggins-bench-sandbox-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    println!(
        "the sandbox's cost: `cat` started and answering its first line (start, median of {} starts), \
         and one line there and back (decision, mean of {TRIPS}, median of {runs} runs)",
        runs * 20
    );
    println!("{:<12} {:>10} {:>12}", "started", "start ms", "decision us");
    for (how, name) in [(0u8, "plainly"), (1, "contained"), (2, "sandboxed")] {
        let mut starts = Vec::new();
        for _ in 0..runs * 20 {
            let (_, t) = started(how, &dir)?;
            starts.push(t);
        }
        let mut trips = Vec::new();
        for _ in 0..runs {
            let (mut trip, _) = started(how, &dir)?;
            let t = Instant::now();
            for _ in 0..TRIPS {
                trip()?;
            }
            trips.push(t.elapsed() / TRIPS);
        }
        println!(
            "{name:<12} {:>10.2} {:>12.1}",
            median(starts).as_secs_f64() * 1e3,
            median(trips).as_secs_f64() * 1e6
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}
