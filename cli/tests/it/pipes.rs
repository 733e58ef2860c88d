//! A reader of standard output that goes away (`muggins ... | head -3`):
//! every command ends quietly, with status 0 (or killed by SIGPIPE), never a
//! panic or an error about the pipe.

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use crate::util::{Dir, TestCommand};

/// Commands that print a lot (or at least something).
const COMMANDS: &[&[&str]] = &[
    &["play", "--state", "5"],
    &["play", "--state", "5", "--json"],
    &["play", "--preset", "all-fives", "--state", "5", "--match", "150"],
    &["play", "--preset", "block", "--state", "5"],
    &["solve", "--states", "0-199"],
    &["bench", "--runs", "1", "--states", "0-9"],
    &["openspiel", "replay", "--game", "python_block_dominoes"],
    &["--help"],
];

#[track_caller]
fn assert_quiet(what: &[&str], status: ExitStatus, stderr: &str) {
    assert!(
        status.success() || status.signal() == Some(13),
        "{what:?} on a closed pipe: {status}; stderr: {stderr}"
    );
    for bad in ["panicked", "Broken pipe", "error"] {
        assert!(
            !stderr.contains(bad),
            "{what:?} on a closed pipe wrote {bad:?}: {stderr}"
        );
    }
}

#[test]
fn every_command_ends_quietly_when_its_output_pipe_is_closed() {
    for args in COMMANDS {
        // A pipe whose reader is gone before the first line is written.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let o = TestCommand::new(args)
            .in_empty_dir()
            .stdin("[]\n[0, 1]\n".repeat(50))
            .stdout_to(Stdio::from(writer))
            .timeout(Duration::from_secs(120))
            .output();
        assert_quiet(args, o.status, &o.stderr);
    }
}

#[test]
fn play_piped_into_head_ends_quietly() {
    for args in [
        &["play", "--preset", "all-fives", "--state", "5", "--match", "150"][..],
        &["play", "--state", "5"],
    ] {
        let dir = Dir::new();
        let mut p = TestCommand::new(args)
            .current_dir(dir.path())
            .stdout_to(Stdio::piped())
            .stderr_to(Stdio::piped())
            .spawn();
        // `head -3`: three lines read, then the pipe closed.
        let mut out = BufReader::new(p.0.stdout.take().unwrap());
        for _ in 0..3 {
            let mut line = String::new();
            assert!(out.read_line(&mut line).unwrap() > 0, "{args:?} printed under 3 lines");
        }
        drop(out);
        let status = p.wait_timeout(Duration::from_secs(120)).expect("it ends");
        let mut err = String::new();
        std::io::Read::read_to_string(p.0.stderr.as_mut().unwrap(), &mut err).unwrap();
        assert_quiet(args, status, &err);
    }
}
