//! The docs' examples run as written: every fenced block of README.md and
//! docs/*.md that starts with `$ muggins play` (deterministic output) is run
//! and its output compared line for line; every `$ muggins` command of the
//! docs names a command that exists.

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
