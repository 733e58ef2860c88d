//! What `muggins run` finds in an output directory before it writes there:
//! a symbolic link at a partition's name, files it did not write, another
//! experiment's unfinished run.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::cluster::{SLOW_SPEC, expected, rows, wait_for};
use crate::util::{Dir, TestCommand};

/// 40 games in 2 shards, written to `output`.
fn spec(output: &str) -> String {
    format!(
        r#"
name = "outs"
seed = 3
output = "{output}"
[grid]
information_source = ["oracle"]
observability = ["full"]
target = ["scorer", "random"]
starting_states = "0-9"
engine = ["mstar", "expectimax"]
repeats = 1
[shards]
games = 20
"#
    )
}

/// `muggins run SPEC --out <dir>/res`, which must end within two minutes
/// (a run that loops fails the test instead of hanging it).
fn run(dir: &Dir, spec: &Path) -> TestCommand {
    let mut cmd = TestCommand::new(&["run"]);
    cmd.arg(spec)
        .arg("--out")
        .arg(dir.join("res"))
        .timeout(Duration::from_secs(120));
    cmd
}

/// Every file under `dir` whose name ends in `.tmp`.
fn temp_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let (path, kind) = (e.path(), e.file_type().unwrap());
        if kind.is_dir() {
            out.extend(temp_files(&path));
        } else if e.file_name().to_string_lossy().ends_with(".tmp") {
            out.push(path);
        }
    }
    out
}

#[test]
fn a_link_at_a_partitions_name_is_replaced_and_never_written_through() {
    let dir = Dir::new();
    let precious = dir.create("outside/precious.parquet", "bytes that are not the results'");
    let text = spec("sym-part");
    let spec = dir.create_spec(&text);
    let exp = dir.join("res/sym-part");
    let part = exp.join("games/part-00000.parquet");
    // In a directory muggins does not own, the link is a file it did not
    // write: refused at once, naming it, and left where it is.
    std::fs::create_dir_all(part.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink(&precious, &part).unwrap();
    let err = run(&dir, &spec).assert_err(&["sym-part", "games/part-00000.parquet"]);
    assert!(err.contains("did not write"), "{err}");
    assert!(std::fs::symlink_metadata(&part).unwrap().file_type().is_symlink());
    assert_eq!(dir.read("outside/precious.parquet"), "bytes that are not the results'");
    assert_eq!(temp_files(&exp), Vec::<PathBuf>::new());
    // In the experiment's own directory, a partition swapped for the link
    // is played again and put in place of the link.
    std::fs::remove_dir_all(&exp).unwrap();
    run(&dir, &spec).success();
    std::fs::remove_file(&part).unwrap();
    std::os::unix::fs::symlink(&precious, &part).unwrap();
    let o = run(&dir, &spec).success();
    assert!(o.stdout.contains("40 rows in"), "{}", o.stdout);
    assert!(
        std::fs::symlink_metadata(&part).unwrap().file_type().is_file(),
        "the link was replaced by the partition"
    );
    assert_eq!(dir.read("outside/precious.parquet"), "bytes that are not the results'");
    assert_eq!(temp_files(&exp), Vec::<PathBuf>::new());
    assert!(exp.join("_SUCCESS").is_file());
    assert_eq!(rows(&exp), expected(&text, &exp));
}

#[test]
fn an_output_directory_holding_files_muggins_did_not_write_is_refused_and_left_alone() {
    let dir = Dir::new();
    let foreign = dir.create("res/foreign/games/part-00007.parquet", "not parquet at all\n");
    let readme = dir.create("res/foreign/README.txt", "my notes\n");
    let spec = dir.create_spec(&spec("foreign"));
    let err = run(&dir, &spec).assert_err(&[
        &dir.join("res/foreign").display().to_string(),
        "foreign/README.txt",
        "foreign/games/part-00007.parquet",
        "did not write",
    ]);
    assert_eq!(err.matches("error:").count(), 1, "{err}");
    assert_eq!(std::fs::read_to_string(&foreign).unwrap(), "not parquet at all\n");
    assert_eq!(std::fs::read_to_string(&readme).unwrap(), "my notes\n");
    assert!(!dir.join("res/foreign/_experiment.json").exists(), "not claimed");
    // Moved away, the (now empty) directory is fine.
    std::fs::remove_file(&foreign).unwrap();
    std::fs::remove_file(&readme).unwrap();
    run(&dir, &spec).success();
    assert!(dir.join("res/foreign/_SUCCESS").is_file());
    // And a directory muggins owns resumes (here: finds its work done),
    // even with a file dropped in it later.
    dir.create("res/foreign/NOTES.txt", "later\n");
    let again = run(&dir, &spec).success();
    assert!(again.stderr.contains("resuming experiment"), "{}", again.stderr);
    assert_eq!(dir.read("res/foreign/NOTES.txt"), "later\n");
}

/// Every file under `dir`, with its size, in order.
fn listing(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let (path, meta) = (e.path(), e.metadata().unwrap());
        if meta.is_dir() {
            out.extend(listing(&path));
        } else {
            out.push((path, meta.len()));
        }
    }
    out.sort();
    out
}

#[test]
fn a_run_plays_only_its_own_experiment_and_leaves_an_interrupted_one_alone() {
    let dir = Dir::new();
    let slow = dir.create_spec(SLOW_SPEC);
    let mut first = TestCommand::new(&["run"]);
    first
        .arg(&slow)
        .arg("--out")
        .arg(dir.join("res"))
        .args(["--workers", "1", "--threads", "1", "--no-web"])
        .quiet();
    let mut first = first.spawn();
    // Ctrl-C as soon as the first experiment is submitted.
    let faults = dir.join("res/faults");
    wait_for("the first run's experiment", 120, || {
        faults.join("_experiment.json").is_file()
    });
    first.signal("-INT");
    assert!(
        first.wait_timeout(Duration::from_secs(60)).is_some(),
        "Ctrl-C ends the run"
    );
    assert!(
        !faults.join("_SUCCESS").exists(),
        "the first run was interrupted unfinished"
    );
    let before = listing(&faults);
    // Another spec in the same --out runs to its end and plays none of the
    // interrupted experiment's games (before, its workers finished that
    // older experiment first, showing no progress of their own).
    let text = spec("mine");
    let o = run(&dir, &dir.create_spec(&text)).success();
    assert!(o.stderr.contains("succeeded: 40 games"), "{}", o.stderr);
    assert!(
        o.stderr.contains("also holds unfinished experiment faults-") && o.stderr.contains("run its spec to resume it"),
        "{}",
        o.stderr
    );
    assert_eq!(rows(&dir.join("res/mine")), expected(&text, &dir.join("res/mine")));
    assert_eq!(
        listing(&faults),
        before,
        "the interrupted experiment's files are untouched"
    );
    assert!(!faults.join("_SUCCESS").exists());
}
