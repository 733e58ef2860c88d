//! A training run's tasks (`[train]`, docs/train.md "On a cluster"): a
//! self-play partition played on every thread of the worker, or a
//! generation's fit, gate and anchors on the fit's threads, each through
//! `jobs::train::Trainer` over the run's directory under the results root,
//! then the run's report rewritten.

use std::path::Path;
use std::sync::atomic::Ordering;

use jobs::layout::{Stage, self_play_of};
use jobs::train::{TrainError, TrainRow, TrainSpec, Trainer};

use crate::assignment::Assignment;
use crate::error::TaskError;
use crate::stages::{Halt, Output, Work, resolve};

/// Files (a network or a record not readable now, a disk full) may be
/// there on another try; another spec in the directory or a start file
/// that changed is so anywhere.
fn failed(e: TrainError) -> Halt {
    Halt::Failed(match e {
        TrainError::Io(_) | TrainError::Net(_) => TaskError::Io(e.to_string()),
        TrainError::OtherSpec { .. } | TrainError::Start(..) => TaskError::Fit(e.to_string()),
    })
}

/// A broken machine's self-play (`MUGGINS_FAILPOINT=corrupt-rows`, tests):
/// every outcome off by a point, so its partitions' hashes are wrong.
fn tamper(rows: &mut [TrainRow]) {
    if crate::stages::broken() {
        for r in rows {
            r.outcome += 1.0;
        }
    }
}

fn output(w: jobs::stages::Written) -> Output {
    Output::Written {
        file: w.file,
        hash: w.hash,
        bytes: w.bytes,
        rows: w.rows,
    }
}

/// The work of a training run's task `a`.
pub(crate) fn prepare(
    results: &Path,
    a: &Assignment,
    spec: &TrainSpec,
    threads: usize,
    fit_threads: usize,
) -> Result<Work, TaskError> {
    let dir = resolve(results, a.dir.output())?;
    let spec = spec.clone();
    let generations = spec.train.generations;
    let parts = spec.shards().len() as u64;
    let shard = a.shard;
    let outside = |what: String| TaskError::Spec(format!("task {}: {what}", a.lease.task_id));
    Ok(match a.stage {
        Stage::SelfPlay | Stage::Check => {
            let (g, k) = self_play_of(shard.index);
            if !(1..=generations).contains(&g) || k >= parts {
                return Err(outside(format!(
                    "generation {g}, partition {k}: the spec has {generations} generations of {parts} partitions"
                )));
            }
            let check = a.stage == Stage::Check;
            Box::new(move |progress, cancel| {
                let quiet = |_: &str| {};
                let t = Trainer {
                    spec: &spec,
                    dir,
                    threads,
                    stop: cancel,
                    progress: &quiet,
                };
                let done = if check {
                    // A cross-check: the partition played again, its file's hash compared.
                    t.check_task(g, k as usize, &tamper)
                        .map_err(failed)?
                        .map(|(checksum, games)| Output::Checked { checksum, rows: games })
                } else {
                    t.self_play_task(g, k as usize, &tamper).map_err(failed)?.map(output)
                };
                let out = done.ok_or(Halt::Cancelled)?;
                progress.store(shard.games, Ordering::Relaxed);
                Ok(out)
            })
        }
        Stage::Generation => {
            let g = shard.index;
            if !(1..=u64::from(generations)).contains(&g) {
                return Err(outside(format!("generation {g}: the spec has {generations}")));
            }
            Box::new(move |_, cancel| {
                let name = spec.name.clone();
                let said = move |line: &str| tracing::info!(training = %name, "{line}");
                let t = Trainer {
                    spec: &spec,
                    dir: dir.clone(),
                    threads: fit_threads,
                    stop: cancel,
                    progress: &said,
                };
                let Some((w, summary)) = t.generation_task(g as u32).map_err(failed)? else {
                    return Err(Halt::Cancelled);
                };
                analysis::train_report::write(&dir, &spec, &summary)
                    .map_err(|e| Halt::Failed(TaskError::Io(e.to_string())))?;
                Ok(output(w))
            })
        }
        other => return Err(outside(format!("a training run has no {other} stage"))),
    })
}
