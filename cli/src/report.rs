//! `muggins report`: rebuilds an experiment's report from its partitions,
//! or a training run's from its summary.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

pub fn run(dir: &Path) -> Result<()> {
    if dir.join(jobs::layout::TRAIN_SPEC_FILE).is_file() {
        let Some((spec, summary)) = jobs::train::read_run(dir)? else {
            bail!(
                "{}: a training run with no generation done yet: run its spec again (`muggins run SPEC`, with the \
                 same --out) to go on",
                dir.display()
            );
        };
        crate::cluster::train::write_report(dir, &spec, &summary)?;
        println!("{}", dir.join(jobs::layout::REPORT_MD_FILE).display());
        return Ok(());
    }
    check_experiment_dir(dir)?;
    let out = analysis::write_report(dir).map_err(|e| match &e {
        analysis::ReportError::Io(jobs::IoError::Io { path, source })
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            anyhow::anyhow!(
                "{} is missing: the report reads every partition; run the experiment again (`muggins run SPEC`, with \
                 the same --out) and it plays the missing games and rebuilds the report",
                path.display()
            )
        }
        _ => e.into(),
    })?;
    println!("{}", out.join(jobs::layout::REPORT_MD_FILE).display());
    Ok(())
}

/// Refuses a directory that is not an experiment's (one with `games/`),
/// naming the experiment directories inside it when it is a results root.
fn check_experiment_dir(dir: &Path) -> Result<()> {
    if dir.is_file() {
        let parent = dir
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        bail!(
            "{} is a file, not a directory: give the experiment directory that holds it, {}",
            dir.display(),
            parent.display()
        );
    }
    if !dir.is_dir() {
        bail!(
            "{}: no such directory: give an experiment directory, <results>/<experiment>",
            dir.display()
        );
    }
    if dir.join(jobs::layout::GAMES_DIR).is_dir() {
        return Ok(());
    }
    let mut inside: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.join(jobs::layout::GAMES_DIR).is_dir())
                .collect()
        })
        .unwrap_or_default();
    inside.sort();
    let shown: Vec<String> = inside.iter().map(|p| p.display().to_string()).collect();
    let hint = match shown.as_slice() {
        [] => "nor is any directory inside it: give <results>/<experiment>, the directory an experiment wrote".into(),
        [one] => format!("did you mean {one}?"),
        many => format!("did you mean one of {}?", many.join(", ")),
    };
    bail!(
        "{} has no games/ folder: it is not an experiment directory; {hint}",
        dir.display()
    )
}
