//! What the coordinator checks on disk: the results-root marker, who owns an
//! experiment directory, the file a completion names, and that every done
//! task's file is (still) under its final name.

use std::path::{Path, PathBuf};

use jobs::layout::{
    ExperimentDir, GAMES_DIR, MANIFEST, Owner, PathError, RESULTS_MARKER, SUCCESS, Stage, confine, confine_name,
    create_confined_dir, file_digest, is_plain_file,
};
use jobs::{Job, Spec};

use crate::shared::Shared;
use crate::store::{CompletionTarget, ExpState, StoreError, now_ms};

/// How long after a completion the coordinator waits for the worker's own
/// rename before finishing it itself.
pub const RENAME_GRACE_MS: i64 = 1500;

/// The content of the results root's marker, written with a fresh random
/// value the first time a coordinator serves this root.
pub fn ensure_marker(results: &Path) -> std::io::Result<String> {
    let path = results.join(RESULTS_MARKER);
    match std::fs::read_to_string(&path) {
        Ok(s) if !s.trim().is_empty() => return Ok(s.trim().to_string()),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let value = format!(
        "muggins-results-{:016x}{:016x}",
        rand::random::<u64>(),
        rand::random::<u64>()
    );
    jobs::layout::write_atomic(&path, format!("{value}\n").as_bytes())
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(value)
}

fn invalid(e: impl std::fmt::Display) -> StoreError {
    StoreError::Invalid(e.to_string())
}

/// Submits `spec`: the output directory must be free or already this
/// experiment's; it is claimed with an owner record before the experiment
/// exists. A training run's `train.start` file (`start`, the bytes the
/// submission sent) is kept in its directory as `start.safetensors`, what
/// its workers read. Resubmitting an existing experiment checks its files and re-runs
/// the tasks whose files are gone. Returns the id and whether it was created.
pub fn submit(shared: &Shared, job: &Job, text: &str, start: &[u8]) -> Result<(String, bool), StoreError> {
    let root = &shared.config.results;
    let id = job.id();
    let output = job.output();
    let mut store = shared.store();
    let dir = confine(root, output).map_err(|e| invalid(format!("output = {output:?}: {e}")))?;
    let owner = Owner::read(&dir).map_err(invalid)?;
    let users = store.experiments_with_output(output)?;
    if let Some(o) = owner.as_ref().filter(|o| o.id != id) {
        let state = users
            .iter()
            .find(|(other, _)| *other == o.id)
            .map_or("unknown to this coordinator", |(_, s)| s.as_str());
        return Err(StoreError::Conflict(format!(
            "output = \"{}\" holds experiment {} ({state}), from another spec: an output directory belongs to one \
             experiment; give this spec another output, or delete {} to start over",
            output,
            o.id,
            dir.display()
        )));
    }
    // This coordinator's own record of the experiment claims the directory
    // too (its owner record may have been deleted).
    let ours = users.iter().any(|(other, _)| *other == id);
    for (other, state) in users {
        if other != id && (state == ExpState::Running || (owner.is_none() && dir.exists())) {
            return Err(StoreError::Conflict(format!(
                "output = \"{}\" is used by experiment {other} ({}); give this spec another output",
                output,
                state.as_str()
            )));
        }
    }
    // A grid's partitions go under games/; a training run's directory is
    // its own.
    let inner = match job {
        Job::Grid(_) => ExperimentDir::new(output).file(GAMES_DIR),
        Job::Train(_) => output.to_string(),
    };
    let confined = |e| invalid(format!("output = {output:?}: {e}"));
    if owner.is_none() && !ours {
        confine(root, &inner).map_err(confined)?;
        refuse_foreign_files(&dir, output)?;
    }
    create_confined_dir(root, &inner).map_err(confined)?;
    if owner.is_none() {
        let me = Owner {
            id: id.clone(),
            name: job.name().to_string(),
            spec_hash: job.hash(),
            spec_toml: text.to_string(),
        };
        me.write(&dir).map_err(invalid)?;
    }
    // A training run's start file, for its workers, before any task of it
    // can be leased (the spec's id covers its hash).
    if matches!(job, Job::Train(t) if t.train.start.is_some()) {
        let path = dir.join(jobs::layout::START_NET);
        jobs::layout::write_atomic(&path, start).map_err(|e| invalid(format!("{}: {e}", path.display())))?;
    }
    let (id, created) = store.submit(job, text)?;
    drop(store);
    if !created {
        verify(shared, &id)?;
    }
    Ok((id, created))
}

/// How many of the files found in an unowned output directory are named.
const FOREIGN_SHOWN: usize = 3;

/// An output directory no experiment owns (no owner record) is taken only
/// when it holds nothing but directories: files there were not written by
/// muggins, would sit among its partitions (a `games/*.parquet` glob reads
/// them) and are never deleted, so the directory is refused naming a few.
fn refuse_foreign_files(dir: &Path, output: &str) -> Result<(), StoreError> {
    let (found, more) = jobs::layout::files_under(dir, FOREIGN_SHOWN)
        .map_err(|e| invalid(format!("output = {output:?}: reading {}: {e}", dir.display())))?;
    if found.is_empty() {
        return Ok(());
    }
    let mut names: Vec<String> = found
        .iter()
        .map(|f| Path::new(output).join(f).display().to_string())
        .collect();
    if more {
        names.push("...".into());
    }
    Err(StoreError::Conflict(format!(
        "output = {output:?}: {} already exists and holds files muggins did not write ({}) and no owner record {}: \
         an experiment's output directory must be new or empty; give this spec another output, or move those files \
         away",
        dir.display(),
        names.join(", "),
        jobs::layout::OWNER_FILE
    )))
}

/// Checks that every placed done task of `id` still has its file (with the
/// size recorded at completion) and re-runs those that do not, with what
/// depends on them. A succeeded experiment missing a file, or its seal, runs
/// again. The files are looked at without holding the store's lock.
pub fn verify(shared: &Shared, id: &str) -> Result<(), StoreError> {
    let root = &shared.config.results;
    // Read through the read-only connection: a pass over every done task
    // (10,000s) must not hold the lock that leases take. A task placed
    // after this snapshot is checked on the next pass.
    let (e, tasks) = {
        let reader = shared.reader();
        (reader.experiment(id)?, reader.done_tasks(id, false)?)
    };
    let mut lost = Vec::new();
    // With `[output] moves = true` (or matches: the hands table), a games
    // shard is whole only with its side tables.
    let spec = jobs::Spec::from_toml(&e.spec_toml).ok();
    let moves = spec.as_ref().is_some_and(|s| s.output_moves);
    let hands = spec.as_ref().is_some_and(|s| s.writes_hands());
    let out = ExperimentDir::new(&e.output);
    let mut checked = 0usize;
    // A file is there only as itself: a symbolic link at its name is not
    // it (its task runs again, and the rename replaces the link).
    for t in tasks.iter().filter(|t| t.placed && t.stage != Stage::Check) {
        let there = confine_name(root, &t.final_file)
            .ok()
            .and_then(|p| std::fs::symlink_metadata(p).ok())
            .is_some_and(|m| m.is_file() && t.file_bytes.is_none_or(|b| b == m.len()));
        let games = t.stage == Stage::Games;
        let side = |wanted: bool, file: String| {
            !wanted || !games || confine_name(root, &file).is_ok_and(|p| is_plain_file(&p))
        };
        let moves_there = side(moves, out.moves_partition(t.shard)) && side(hands, out.hands_partition(t.shard));
        checked += 1;
        if !there || !moves_there {
            lost.push(t.task_id.clone());
        }
    }
    // Every file gone (the directory was deleted, as the docs suggest to
    // start over): that is a fresh start, not a loss to warn of.
    if !lost.is_empty() && lost.len() == checked {
        tracing::info!(experiment = %id, output = %e.output, tasks = lost.len(), "none of the experiment's files are there: starting it over");
    } else if let Some(first) = lost.first() {
        tracing::warn!(experiment = %id, tasks = lost.len(), first = %first, "files missing; their tasks run again");
    }
    let dir = confine(root, &e.output).map_err(invalid)?;
    if !lost.is_empty() {
        // The directory is no longer complete: take the seal away first.
        let _ = std::fs::remove_file(dir.join(SUCCESS));
        let _ = std::fs::remove_file(dir.join(MANIFEST));
        shared.store().requeue_lost(id, &lost)?;
    } else if e.state == ExpState::Succeeded && !(dir.join(SUCCESS).is_file() && dir.join(MANIFEST).is_file()) {
        shared.store().unseal(id)?;
    }
    Ok(())
}

/// Finishes what completions left: a partition already under its final
/// name is marked placed; one still under its temporary name past the
/// grace period (its worker died between completing and renaming) is
/// renamed here; one under neither name is lost and its task runs again.
pub fn place(shared: &Shared, id: &str) -> Result<(), StoreError> {
    let root = &shared.config.results;
    let unplaced = shared.store().done_tasks(id, true)?;
    let mut lost = Vec::new();
    // A partition that cannot be put at its name (its directory leads out
    // of the results root, a directory is at the name): the completion
    // counts as a failure of its task, whose temporary file is removed, and
    // the task runs again; one that keeps failing fails its experiment,
    // naming the path. Whether the experiment failed.
    let unplaceable = |t: &crate::store::DoneTask, why: String| -> Result<bool, StoreError> {
        let error = format!("the partition {:?} cannot be put in place: {why}", t.final_file);
        tracing::error!(task = %t.task_id, %error, "partition not placed; task runs again");
        if let Ok(tmp) = confine_name(root, &t.temp_file) {
            let _ = std::fs::remove_file(tmp);
        }
        let failed = shared.store().fail_done(id, &t.task_id, &error)?;
        if failed {
            tracing::error!(task = %t.task_id, %error, "task failed for good; experiment failed");
        }
        Ok(failed)
    };
    for t in unplaced {
        // The final name is a rename's target: a symbolic link there is
        // replaced, never written through.
        let (fin, tmp) = match (confine_name(root, &t.final_file), confine(root, &t.temp_file)) {
            (Ok(f), Ok(t)) => (f, t),
            (Err(e @ (PathError::Root { .. } | PathError::Io { .. })), _)
            | (_, Err(e @ (PathError::Root { .. } | PathError::Io { .. }))) => {
                // The disk may be back on the next sweep.
                tracing::warn!(task = %t.task_id, error = %e, "partition path unreadable; placed later");
                continue;
            }
            (Err(e), _) | (_, Err(e)) => {
                if unplaceable(&t, e.to_string())? {
                    return Ok(());
                }
                continue;
            }
        };
        let at = locate(&fin, &tmp, is_plain_file);
        if at == Location::Final {
            shared.store().mark_placed(id, &t.task_id)?;
        } else if at == Location::Temporary {
            if now_ms() - t.completed_ms > RENAME_GRACE_MS {
                match jobs::durable_rename(&tmp, &fin) {
                    Ok(()) => tracing::warn!(task = %t.task_id, "renamed a completed partition its worker left behind"),
                    Err(e) if is_plain_file(&fin) => tracing::debug!(error = %e, "the worker renamed it first"),
                    Err(e) => {
                        if unplaceable(&t, e.to_string())? {
                            return Ok(());
                        }
                        continue;
                    }
                }
                shared.store().mark_placed(id, &t.task_id)?;
            }
        } else {
            tracing::warn!(task = %t.task_id, file = %fin.display(), "partition missing; task requeued");
            lost.push(t.task_id);
        }
    }
    shared.store().requeue_lost(id, &lost)?;
    Ok(())
}

/// Where a completed partition is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Location {
    Final,
    Temporary,
    Missing,
}

/// Finds a completed partition under its final or its temporary name. Its
/// worker may rename it at any moment: looking at the final name, then the
/// temporary one, can miss a rename made between the two looks, so "under
/// neither" is believed only after a second look at the final name (the
/// rename is atomic: at every instant one of the two names holds the file).
/// Before, such a partition was called lost and its task ran twice.
fn locate(fin: &Path, tmp: &Path, is_file: impl Fn(&Path) -> bool) -> Location {
    if is_file(fin) {
        Location::Final
    } else if is_file(tmp) {
        Location::Temporary
    } else if is_file(fin) {
        Location::Final
    } else {
        Location::Missing
    }
}

/// A completion's file as checked: its final name (relative to the results
/// root), whether it is there already, and its size and SHA-256.
pub struct Checked {
    pub final_file: String,
    pub placed: bool,
    pub bytes: u64,
    pub sha256: String,
}

/// Why a completion is refused.
pub enum Refusal {
    /// The request itself is wrong (names, counts): refused, nothing counted.
    Request(String),
    /// The file is missing or not what the worker said: counted as a failure
    /// of that worker, and the task runs again.
    File(String),
}

/// Removes the temporary partition a refused completion names, when the
/// name is one of the task's shard (a hidden `.part-NNNNN.*` file directly
/// in its partitions directory: the completing lease's, or a stale lease's
/// of the same task) and it is inside the results root; anything else is
/// left alone.
pub fn discard_temp(root: &Path, t: &CompletionTarget, temp_file: &str) {
    let stage = t.stage;
    if !ExperimentDir::new(&t.output).is_temp_partition_of(stage, t.shard, temp_file) {
        return;
    }
    if let Ok(path) = confine_name(root, temp_file)
        && std::fs::symlink_metadata(&path).is_ok()
    {
        match std::fs::remove_file(&path) {
            Ok(()) => tracing::debug!(file = %temp_file, "a refused completion's temporary file removed"),
            Err(e) => {
                tracing::warn!(file = %temp_file, error = %e, "cannot remove a refused completion's temporary file")
            }
        }
    }
}

/// What a completion reports.
pub struct Completion<'a> {
    pub worker_id: &'a str,
    pub task_id: &'a str,
    pub rows: u64,
    pub checksum: &'a str,
    pub temp_file: &'a str,
    pub file_bytes: u64,
    pub file_sha256: &'a str,
}

fn is_sha256(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// Checks the file a completion names, against the task it completes.
/// `spec` is the task's spec for a games task (its side tables are
/// checked), `None` otherwise.
pub fn check_completion(
    root: &Path,
    t: &CompletionTarget,
    c: &Completion<'_>,
    spec: Option<&Spec>,
) -> Result<Checked, Refusal> {
    let stage = t.stage;
    let dir = ExperimentDir::new(&t.output);
    if stage == Stage::Games && c.rows != t.games {
        return Err(Refusal::Request(format!(
            "task {} has {} games but {} rows were reported",
            c.task_id, t.games, c.rows
        )));
    }
    // With `[output] moves = true` the worker puts the shard's per-move table
    // in place before its games partition: a completion without it is a
    // file missing.
    let side_tables = [
        (
            spec.is_some_and(|s| s.output_moves),
            dir.moves_partition(t.shard),
            "per-move",
        ),
        (
            spec.is_some_and(|s| s.writes_hands()),
            dir.hands_partition(t.shard),
            "per-hand",
        ),
    ];
    for (wanted, file, what) in side_tables {
        if stage != Stage::Games || !wanted {
            continue;
        }
        // Its name was checked; what is on disk there is the worker's doing.
        let path = confine_name(root, &file).map_err(|e| Refusal::File(e.to_string()))?;
        if !is_plain_file(&path) {
            return Err(Refusal::File(format!(
                "worker {} completed task {} without its {what} table {file:?} under the results root {}",
                c.worker_id,
                c.task_id,
                display_root(root)
            )));
        }
    }
    if stage == Stage::Check {
        // A replay to compare: no file, just the rows' checksum.
        if c.rows != t.games {
            return Err(Refusal::Request(format!(
                "check task {} has {} games but {} rows were reported",
                c.task_id, t.games, c.rows
            )));
        }
        return Ok(Checked {
            final_file: String::new(),
            placed: true,
            bytes: 0,
            sha256: String::new(),
        });
    }
    let (final_file, placed) = match (
        dir.partition(stage, t.shard),
        dir.marker_file(stage, t.shard, c.checksum),
    ) {
        (Some(partition), _) => {
            if !dir.is_temp_partition(stage, c.temp_file) {
                let inside = dir.file(stage.partitions_dir().unwrap_or_default());
                return Err(Refusal::Request(format!(
                    "temp_file {:?} must be a hidden file directly under {inside}/",
                    c.temp_file
                )));
            }
            (partition, false)
        }
        // Fit and report write their files themselves (atomically) and
        // complete with the SHA-256 of the file that marks them done.
        (None, Some(want)) => {
            if !is_sha256(c.checksum) || c.temp_file != want {
                return Err(Refusal::Request(format!(
                    "a {stage} task completes with its file's SHA-256 as checksum and the file {want:?}; got {:?}",
                    c.temp_file
                )));
            }
            (want, true)
        }
        (None, None) => unreachable!("every stage writes partitions or one file"),
    };
    if !is_sha256(c.file_sha256) {
        return Err(Refusal::Request(format!(
            "file_sha256 {:?} is not a SHA-256 in hex: this worker is older than the coordinator; upgrade it",
            c.file_sha256
        )));
    }
    // The name was checked above: a path that leads out of the results
    // root now (a link on the way) is the disk's state, a file refusal.
    let path = confine(root, c.temp_file).map_err(|e| Refusal::File(e.to_string()))?;
    let shown = display_root(root);
    let (bytes, sha256) = match file_digest(&path) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(Refusal::File(format!(
                "worker {} completed task {} with {:?}, but there is no such file under the coordinator's results \
                 root {shown}: the worker's --results must be the same shared directory",
                c.worker_id, c.task_id, c.temp_file
            )));
        }
        Err(e) => return Err(Refusal::File(format!("{}: {e}", path.display()))),
    };
    if bytes != c.file_bytes || sha256 != c.file_sha256 {
        return Err(Refusal::File(format!(
            "{:?} under {shown} holds {bytes} bytes with SHA-256 {sha256}, but worker {} wrote {} bytes with {}",
            c.temp_file, c.worker_id, c.file_bytes, c.file_sha256
        )));
    }
    if placed && sha256 != c.checksum {
        return Err(Refusal::File(format!(
            "{:?} has SHA-256 {sha256}, not the checksum {} it completes with",
            c.temp_file, c.checksum
        )));
    }
    Ok(Checked {
        final_file,
        placed,
        bytes,
        sha256,
    })
}

/// The results root as a person should see it: absolute, links resolved.
pub fn display_root(root: &Path) -> String {
    root.canonicalize()
        .unwrap_or_else(|_| PathBuf::from(root))
        .display()
        .to_string()
}

/// A chunk as a worker reports it: range, checksum, and the file (relative
/// to the results root) with the size and SHA-256 the worker measured.
pub struct ReportedChunk {
    pub first_game: u64,
    pub games: u64,
    pub checksum: String,
    pub file: Option<(String, u64, String)>,
}

/// The chunks a worker reports, each file under the results root holding
/// the bytes the worker measured; the first that does not, refused.
pub fn chunks_in(root: &Path, chunks: Vec<ReportedChunk>) -> Result<Vec<crate::store::ChunkIn>, String> {
    chunks
        .into_iter()
        .map(|c| {
            let file = match c.file {
                None => None,
                Some((file, want_bytes, want_sha)) => {
                    let path = confine(root, &file).map_err(|e| e.to_string())?;
                    let (bytes, sha) = file_digest(&path).map_err(|e| format!("chunk {file}: {e}"))?;
                    if bytes != want_bytes || sha != want_sha {
                        return Err(format!(
                            "chunk {file} holds {bytes} bytes with SHA-256 {sha}, not the {want_bytes} bytes with \
                             {want_sha} reported"
                        ));
                    }
                    Some(file)
                }
            };
            Ok(crate::store::ChunkIn {
                first_game: c.first_game,
                games: c.games,
                checksum: c.checksum,
                file,
            })
        })
        .collect()
}

/// The pairs of a games partition in game order (`[stop] sprt`), as the
/// text the store keeps.
pub fn pair_stats(root: &Path, file: &str) -> Result<String, String> {
    let path = confine(root, file).map_err(|e| e.to_string())?;
    let rows = jobs::read_partition(&path).map_err(|e| e.to_string())?;
    let pairs = jobs::sprt::ShardPairs::of_rows(rows.iter().map(|(_, r)| r));
    Ok(serde_json::to_string(&pairs).expect("pairs serialise"))
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::path::Path;

    use super::{Location, locate};

    /// A worker's rename that lands between the coordinator's look at the
    /// final name and its look at the temporary one: the partition is in
    /// place, not lost (the CI run of stop 53 ran such a task twice).
    #[test]
    fn a_rename_between_the_looks_is_not_a_lost_partition() {
        let (fin, tmp) = (
            Path::new("games/part-00001.parquet"),
            Path::new("games/.part-00001.tmp"),
        );
        // The file is at `tmp` for the first look, and at `fin` from the second on.
        let looks = RefCell::new(0);
        let renamed_after_first_look = |p: &Path| {
            let mut n = looks.borrow_mut();
            *n += 1;
            if *n == 1 { p == tmp } else { p == fin }
        };
        assert_eq!(locate(fin, tmp, renamed_after_first_look), Location::Final);
        assert_eq!(*looks.borrow(), 3);
        assert_eq!(locate(fin, tmp, |p| p == fin), Location::Final);
        assert_eq!(locate(fin, tmp, |p| p == tmp), Location::Temporary);
        assert_eq!(locate(fin, tmp, |_| false), Location::Missing);
    }
}
