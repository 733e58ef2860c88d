//! The docs' examples run as written: every fenced block of README.md and
//! docs/*.md that starts with `$ muggins play` (deterministic output) is run
//! and its output compared line for line; every `$ muggins run` transcript
//! is run for real and each line it shows must be one the run printed, in
//! order (what varies from run to run, timings, rates and ports, is
//! compared as a pattern); every `$ muggins` command of the docs names a
//! command that exists.

use std::path::PathBuf;

use crate::util::TestCommand;

/// (file, command line, the lines shown after it) of every fenced block
/// that starts with `$ muggins`.
fn examples() -> Vec<(PathBuf, String, Vec<String>)> {
    let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let mut block: Option<Vec<String>> = None;
        for line in text.lines() {
            if line.starts_with("```") {
                match block.take() {
                    Some(b) if b.first().is_some_and(|l| l.starts_with("$ muggins ")) => {
                        out.push((f.clone(), b[0][2..].to_string(), b[1..].to_vec()));
                    }
                    Some(_) => {}
                    None => block = Some(Vec::new()),
                }
            } else if let Some(b) = &mut block {
                b.push(line.to_string());
            }
        }
    }
    out
}

#[test]
fn the_docs_play_examples_print_what_the_docs_show() {
    let plays: Vec<_> = examples()
        .into_iter()
        .filter(|(_, c, _)| c.starts_with("muggins play "))
        .collect();
    assert!(!plays.is_empty(), "README.md shows a play example");
    for (file, command, shown) in plays {
        let args: Vec<&str> = command.split_whitespace().skip(1).collect();
        let got = TestCommand::new(&args).stdout();
        let got: Vec<&str> = got.lines().collect();
        assert_eq!(got, shown, "{}: `{command}` prints something else", file.display());
    }
}

#[test]
fn every_command_the_docs_show_exists() {
    for (file, command, _) in examples() {
        let sub = command.split_whitespace().nth(1).unwrap();
        let help = TestCommand::new(&[sub, "--help"]).stdout();
        assert!(
            help.contains("Usage: muggins"),
            "{}: `{command}`: {help}",
            file.display()
        );
    }
}

/// `line` with what varies between runs (times, rates, ETAs, ports) made
/// a placeholder, and trailing blanks dropped.
fn normalize(line: &str) -> String {
    let patterns = [
        (r"127\.0\.0\.1:\d+", "127.0.0.1:PORT"),
        (r"\d+(\.\d+)? s\b", "T s"),
        (r"\d+ games/s", "R games/s"),
        (r"\[ *T s\]", "[T s]"),
        (r"\d+ workers, \d+ threads", "W workers, N threads"),
    ];
    let mut out = line.trim_end().to_string();
    for (p, to) in patterns {
        out = regex::Regex::new(p).unwrap().replace_all(&out, to).into_owned();
    }
    out
}

/// The spec a transcript runs, as the argument to give `muggins run` from
/// the repository's root: a file of the repository as written, or
/// (`duel.toml`) the last TOML block of the same document before the
/// transcript, written to `dir`.
fn transcript_spec(file: &std::path::Path, command: &str, dir: &crate::util::Dir) -> PathBuf {
    let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    let spec = command.split_whitespace().nth(2).unwrap();
    if root.join(spec).exists() {
        return PathBuf::from(spec);
    }
    let text = std::fs::read_to_string(file).unwrap();
    let before = &text[..text.find(&format!("$ {command}")).unwrap()];
    let start = before
        .rfind("```toml\n")
        .unwrap_or_else(|| panic!("{spec}: no TOML block before it"));
    let body = &before[start + 8..];
    dir.create(spec, &body[..body.find("```").unwrap()])
}

#[test]
fn the_docs_run_transcripts_show_what_a_run_prints() {
    let runs: Vec<_> = examples()
        .into_iter()
        .filter(|(_, c, _)| c.starts_with("muggins run "))
        .collect();
    assert!(runs.len() >= 3, "README.md shows the run transcripts");
    let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."));
    for (file, command, shown) in runs {
        let dir = crate::util::Dir::new();
        let spec = transcript_spec(&file, &command, &dir);
        let out = dir.join("out");
        let args = ["run".as_ref(), spec.as_os_str(), "--out".as_ref(), out.as_os_str()];
        // Both streams into one file, in the order written.
        let log = std::fs::File::create(dir.join("log")).unwrap();
        TestCommand::new(&args)
            .current_dir(&root)
            .stdout_to(log.try_clone().unwrap())
            .stderr_to(log)
            .success();
        // The temporary paths read as the docs write them.
        let name = command.split_whitespace().nth(2).unwrap();
        let printed: Vec<String> = dir
            .read("log")
            .lines()
            .map(|l| {
                normalize(
                    &l.replace(&spec.display().to_string(), name)
                        .replace(&out.display().to_string(), "/tmp/muggins"),
                )
            })
            .collect();
        // Each shown line (but `...`) is printed, in the order shown.
        let mut at = 0;
        for want in shown.iter().filter(|l| l.trim() != "...").map(|l| normalize(l)) {
            let Some(k) = printed[at..].iter().position(|p| *p == want) else {
                panic!(
                    "{}: `{command}` shows a line the run did not print (after the lines matched so far):\n  {want}\nthe run printed:\n{}",
                    file.display(),
                    printed.join("\n")
                );
            };
            at += k + 1;
        }
    }
}
