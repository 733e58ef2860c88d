//! What each stage computes: the grid's games, training samples, the
//! classifier fit and the report. Each runs on blocking threads, reporting
//! progress and watching for cancellation.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use jobs::layout::{self, Stage};
use jobs::{ExecError, Executor, Spec};

use crate::assignment::{Assignment, ChunkRec};
use crate::error::TaskError;

/// What a task produced.
pub(crate) enum Output {
    /// A games shard's rows in game order, and the ranges this lease played
    /// that no chunk committed (the completion names them).
    Games {
        rows: Vec<jobs::GameRow>,
        uncommitted: Vec<ChunkRec>,
    },
    /// A check task: the replayed range's rows' checksum (no file).
    Checked {
        checksum: String,
        rows: u64,
    },
    Samples(Vec<jobs::SampleRow>),
    /// A stage that wrote its own files (fit, report): the file that marks it
    /// done (relative to the experiment directory), its SHA-256 and size, and
    /// a row count.
    Written {
        file: String,
        hash: String,
        bytes: u64,
        rows: u64,
    },
}

/// Why a stage's work stopped early.
pub(crate) enum Halt {
    Cancelled,
    Failed(TaskError),
}

impl From<TaskError> for Halt {
    fn from(e: TaskError) -> Halt {
        Halt::Failed(e)
    }
}

/// A game that could not be played: cancelled, or a failure of the task.
impl From<ExecError> for Halt {
    fn from(e: ExecError) -> Halt {
        match e {
            ExecError::Cancelled => Halt::Cancelled,
            e => Halt::Failed(TaskError::Exec(e.to_string())),
        }
    }
}

/// A stage's work: runs on a blocking thread with a progress counter and a
/// cancel flag.
pub(crate) type Work = Box<dyn FnOnce(&AtomicU64, &AtomicBool) -> Result<Output, Halt> + Send>;

/// `relative` under the results root, confined to it.
pub(crate) fn resolve(root: &Path, relative: &str) -> Result<PathBuf, TaskError> {
    layout::confine(root, relative).map_err(|e| TaskError::Path(e.to_string()))
}

/// A name to put a file at under the results root: its directory confined,
/// whatever is at the name itself (a link) replaced by the rename, never
/// written through.
fn resolve_name(root: &Path, relative: &str) -> Result<PathBuf, TaskError> {
    layout::confine_name(root, relative).map_err(|e| TaskError::Path(e.to_string()))
}

/// Where a games task's committed chunks go: the work pushes each one, the
/// heartbeats send them, and the completion sends those still unsent.
pub(crate) type ChunkSink = Arc<std::sync::Mutex<Vec<ChunkRec>>>;

/// How a games task commits its work.
#[derive(Clone, Debug)]
pub(crate) struct Chunking {
    /// Commit a chunk once this long has passed since the last one.
    pub every: Duration,
    pub sink: ChunkSink,
}

/// The work of assignment `a` of the grid `spec` (loading what it needs
/// first; a fit on `fit_threads`); a training run's tasks are `train.rs`'s.
pub(crate) fn prepare(
    results: &Path,
    executor: &Arc<Executor>,
    a: &Assignment,
    spec: &Spec,
    chunking: &Chunking,
    fit_threads: usize,
) -> Result<Work, TaskError> {
    let spec = spec.clone();
    let shard = a.shard;
    Ok(match a.stage {
        Stage::Games => {
            let model = trained(results, a, &spec)?;
            let executor = Arc::clone(executor);
            // The per-move table, when asked for, goes in place before the
            // games partition is written, so a completed shard has both (such
            // a shard is played whole: its chunks would need moves too).
            let hands_path = match spec.writes_hands() {
                true => Some(resolve_name(results, &a.dir.hands_partition(shard.index))?),
                false => None,
            };
            if spec.output_moves {
                let moves_path = resolve_name(results, &a.dir.moves_partition(shard.index))?;
                return Ok(Box::new(move |progress, cancel| {
                    let mut played = executor.run_with_extras(&spec, shard, model.as_deref(), progress, cancel)?;
                    tamper(&mut played.rows);
                    write_table(&moves_path, &jobs::moves_parquet(&spec.name, &played.moves))?;
                    if let Some(path) = &hands_path {
                        write_table(path, &jobs::hands_parquet(&spec.name, &played.hands))?;
                    }
                    let uncommitted = vec![range_of(&played.rows)];
                    Ok(Output::Games {
                        rows: played.rows,
                        uncommitted,
                    })
                }));
            }
            let chunked_name = spec.name.clone();
            let chunked = Chunked {
                executor,
                spec,
                shard,
                model,
                done: a
                    .chunks
                    .iter()
                    .filter_map(|c| {
                        let (file, _, _) = c.file.as_ref()?;
                        Some((c.clone(), resolve(results, file).ok()?))
                    })
                    .collect(),
                results: results.to_path_buf(),
                dir: a.dir.clone(),
                chunking: chunking.clone(),
                task: a.lease.task_id.clone(),
            };
            // The per-hand table goes in place before the games partition.
            Box::new(move |progress, cancel| {
                let (output, hands) = chunked.play(progress, cancel)?;
                if let Some(path) = &hands_path {
                    write_table(path, &jobs::hands_parquet(&chunked_name, &hands))?;
                }
                Ok(output)
            })
        }
        Stage::Check => {
            let executor = Arc::clone(executor);
            let model = trained(results, a, &spec)?;
            Box::new(move |progress, cancel| {
                let mut rows = executor.run_with(&spec, shard, model.as_deref(), progress, cancel)?;
                tamper(&mut rows);
                Ok(Output::Checked {
                    checksum: jobs::checksum(&rows),
                    rows: rows.len() as u64,
                })
            })
        }
        Stage::Samples => Box::new(move |progress, _| {
            let rows = jobs::training::run_samples(&spec, shard);
            progress.store(shard.games, Ordering::Relaxed);
            Ok(Output::Samples(rows))
        }),
        Stage::Fit => {
            let dir = resolve(results, a.dir.output())?;
            Box::new(move |_, _| fit(&spec, &dir, fit_threads).map_err(Halt::from))
        }
        Stage::Report => {
            let dir = resolve(results, a.dir.output())?;
            Box::new(move |_, cancel| report(&spec, &dir, cancel))
        }
        Stage::SelfPlay | Stage::Generation => {
            return Err(TaskError::Spec(format!(
                "task {}: a grid has no {} stage",
                a.lease.task_id, a.stage
            )));
        }
    })
}

/// What the fit stage made for a grid that needs it (the classifier or the
/// predictors), loaded from its content-addressed artifact.
fn trained(results: &Path, a: &Assignment, spec: &Spec) -> Result<Option<Arc<jobs::predictors::Trained>>, TaskError> {
    Ok(match &a.model {
        Some(hash) if spec.needs_classifier() => Some(Arc::new(jobs::predictors::Trained::Classifier(load_model(
            results, a, hash,
        )?))),
        Some(hash) if spec.needs_predictors() => Some(Arc::new(jobs::predictors::Trained::Predictors(
            load_predictors(results, a, hash)?,
        ))),
        _ => None,
    })
}

/// Reads the fit stage's artifact `hash` and parses it with `parse`, which
/// checks the content hash. Never falls back.
fn read_artifact<T, E: std::fmt::Display>(
    results: &Path,
    a: &Assignment,
    hash: &str,
    parse: impl FnOnce(&[u8]) -> Result<T, E>,
) -> Result<T, TaskError> {
    let path = resolve(results, &a.dir.file(&layout::model_file(hash)))?;
    let shown = path.display().to_string();
    let bytes = std::fs::read(&path).map_err(|e| TaskError::ModelMissing {
        path: shown.clone(),
        message: e.to_string(),
    })?;
    parse(&bytes).map_err(|e| TaskError::ModelCorrupt {
        path: shown,
        message: e.to_string(),
    })
}

/// The grid's predictors artifact.
fn load_predictors(results: &Path, a: &Assignment, hash: &str) -> Result<jobs::predictors::Predictors, TaskError> {
    read_artifact(results, a, hash, |b| jobs::predictors::from_bytes(b, hash))
}

/// The grid's classifier artifact.
fn load_model(results: &Path, a: &Assignment, hash: &str) -> Result<classifier::Artifact, TaskError> {
    read_artifact(results, a, hash, |b| classifier::Artifact::from_bytes(b, hash))
}

/// The fit stage: `jobs::stages::fit` (the classifier, or the predictors).
fn fit(spec: &Spec, dir: &Path, threads: usize) -> Result<Output, TaskError> {
    let w = jobs::stages::fit(spec, dir, threads).map_err(|e| match e {
        jobs::stages::FitError::Io(e) => TaskError::Io(e.to_string()),
        jobs::stages::FitError::Fit(why) => TaskError::Fit(why.to_string()),
    })?;
    Ok(Output::Written {
        file: w.file,
        hash: w.hash,
        bytes: w.bytes,
        rows: w.rows,
    })
}

/// The report stage: builds the report from the partitions alone.
fn report(spec: &Spec, dir: &Path, cancel: &AtomicBool) -> Result<Output, Halt> {
    let parts = jobs::stages::report_partitions(spec, dir).map_err(|e| TaskError::Io(e.to_string()))?;
    // Every partition is in place before the coordinator leases the report;
    // one lost since then makes the coordinator re-run its task and take
    // this lease back (then `cancel` is set), so a short wait suffices.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while let Some(missing) = parts.iter().find(|p| !p.exists()) {
        if cancel.load(Ordering::SeqCst) {
            return Err(Halt::Cancelled);
        }
        if std::time::Instant::now() > deadline {
            return Err(TaskError::PartitionMissing(missing.display().to_string()).into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    analysis::write_report(dir).map_err(|e| TaskError::Io(e.to_string()))?;
    let report = dir.join(layout::REPORT_JSON);
    let bytes = std::fs::read(&report).map_err(|e| TaskError::Io(format!("{}: {e}", report.display())))?;
    Ok(Output::Written {
        file: layout::REPORT_JSON.into(),
        hash: classifier::sha256_hex(&bytes),
        bytes: bytes.len() as u64,
        rows: spec.games(),
    })
}

/// Writes a side table (moves, hands) under its final name, atomically (a
/// re-run writes the same bytes).
fn write_table(path: &Path, bytes: &[u8]) -> Result<(), TaskError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| TaskError::Io(format!("{}: {e}", dir.display())))?;
    }
    layout::write_atomic(path, bytes).map_err(|e| TaskError::Io(e.to_string()))
}

/// The per-hand rows kept beside a chunk file (a grid of matches).
fn chunk_hands_path(chunk: &Path) -> PathBuf {
    layout::chunk_hands_file(chunk)
}

/// Fault injection (tests): `MUGGINS_FAILPOINT=corrupt-rows` makes this
/// worker's games wrong (every score difference off by one), as a broken
/// machine would; cross-checks must catch it.
fn tamper(rows: &mut [jobs::GameRow]) {
    if broken() {
        for r in rows {
            r.score_diff += 1;
        }
    }
}

/// Whether `MUGGINS_FAILPOINT=corrupt-rows` makes this worker a broken
/// machine ([`tamper`]; a training run's rows: `train.rs`).
pub(crate) fn broken() -> bool {
    std::env::var_os("MUGGINS_FAILPOINT").is_some_and(|v| v == "corrupt-rows")
}

/// The range and checksum of contiguous rows (not committed in a file).
fn range_of(rows: &[jobs::GameRow]) -> ChunkRec {
    ChunkRec {
        first_game: rows.first().map_or(0, |r| r.game_index),
        games: rows.len() as u64,
        checksum: jobs::checksum(rows),
        file: None,
    }
}

/// A games task played in pieces: the ranges earlier leases committed are
/// read back from their chunk files (checked against their checksums),
/// the rest is played in runs sized to a quarter of the chunk interval,
/// and whenever the interval has passed the rows played since the last
/// chunk are written to a chunk file and handed to the heartbeat. A killed
/// worker so loses at most the games after its last chunk, and the next
/// lease plays only those.
struct Chunked {
    executor: Arc<Executor>,
    spec: Spec,
    shard: jobs::Shard,
    model: Option<Arc<jobs::predictors::Trained>>,
    done: Vec<(ChunkRec, PathBuf)>,
    results: PathBuf,
    dir: layout::ExperimentDir,
    chunking: Chunking,
    task: String,
}

impl Chunked {
    fn play(&self, progress: &AtomicU64, cancel: &AtomicBool) -> Result<(Output, Vec<jobs::HandRow>), Halt> {
        let shard = self.shard;
        let end = shard.first_game + shard.games;
        let hands_too = self.spec.writes_hands();
        let mut rows: Vec<jobs::GameRow> = Vec::with_capacity(shard.games as usize);
        let mut hands: Vec<jobs::HandRow> = Vec::new();
        let mut covered: Vec<(u64, u64)> = Vec::new();
        for (c, path) in &self.done {
            let back = jobs::read_partition(path).map(|r| r.into_iter().map(|(_, x)| x).collect::<Vec<_>>());
            let back_hands = match hands_too {
                true => jobs::read_hands(&chunk_hands_path(path)).map(|h| h.into_iter().map(|(_, x)| x).collect()),
                false => Ok(Vec::new()),
            };
            match (back, back_hands) {
                (Ok(r), Ok(h))
                    if r.len() as u64 == c.games
                        && r.first().map(|x| x.game_index) == Some(c.first_game)
                        && jobs::checksum(&r) == c.checksum =>
                {
                    rows.extend(r);
                    hands.extend(h);
                    covered.push((c.first_game, c.first_game + c.games));
                }
                (Ok(_), Ok(_)) => {
                    tracing::warn!(task = %self.task, file = %path.display(), "a chunk's rows are not what was committed; replaying its games")
                }
                (Err(e), _) | (_, Err(e)) => {
                    tracing::warn!(task = %self.task, error = %e, "a chunk cannot be read; replaying its games")
                }
            }
        }
        covered.sort_unstable();
        let resumed: u64 = covered.iter().map(|(a, b)| b - a).sum();
        progress.store(resumed, Ordering::Relaxed);
        if resumed > 0 {
            tracing::info!(task = %self.task, resumed, of = shard.games, chunks = covered.len(), "resuming: games already committed are not played again");
        }
        let mut gaps = Vec::new();
        let mut at = shard.first_game;
        for &(a, b) in &covered {
            if a > at {
                gaps.push((at, a));
            }
            at = at.max(b);
        }
        if at < end {
            gaps.push((at, end));
        }
        let threads = self.executor.threads() as u64;
        let every = self.chunking.every;
        let mut per_game: Option<f64> = None;
        let mut last_commit = std::time::Instant::now();
        let mut uncommitted = Vec::new();
        for (k, &(g0, g1)) in gaps.iter().enumerate() {
            let mut at = g0;
            let mut pending: Vec<jobs::GameRow> = Vec::new();
            let mut pending_hands: Vec<jobs::HandRow> = Vec::new();
            while at < g1 {
                let floor = (4 * threads).max(8);
                let want = match per_game {
                    None => floor,
                    Some(t) => ((every.as_secs_f64() / 4.0 / t.max(1e-9)) as u64).max(floor),
                };
                let n = want.min(g1 - at);
                let t0 = std::time::Instant::now();
                let piece = jobs::Shard {
                    index: shard.index,
                    first_game: at,
                    games: n,
                };
                let mut part =
                    self.executor
                        .run_with_extras(&self.spec, piece, self.model.as_deref(), progress, cancel)?;
                tamper(&mut part.rows);
                per_game = Some(t0.elapsed().as_secs_f64() / n as f64);
                pending.extend(part.rows);
                pending_hands.extend(part.hands);
                at += n;
                let more = at < g1 || k + 1 < gaps.len();
                if more && last_commit.elapsed() >= every {
                    let c = self.commit(&pending, &pending_hands)?;
                    self.chunking.sink.lock().unwrap_or_else(|e| e.into_inner()).push(c);
                    rows.append(&mut pending);
                    hands.append(&mut pending_hands);
                    last_commit = std::time::Instant::now();
                }
            }
            if !pending.is_empty() {
                uncommitted.push(range_of(&pending));
                rows.append(&mut pending);
                hands.append(&mut pending_hands);
            }
        }
        rows.sort_unstable_by_key(|r| r.game_index);
        hands.sort_unstable_by_key(|h| (h.game_index, h.hand));
        Ok((Output::Games { rows, uncommitted }, hands))
    }

    /// Writes contiguous rows as a chunk file (atomically, under the name
    /// their range decides) and measures it.
    fn commit(&self, rows: &[jobs::GameRow], hands: &[jobs::HandRow]) -> Result<ChunkRec, TaskError> {
        let mut c = range_of(rows);
        let rel = self.dir.chunk_file(self.shard.index, c.first_game, c.games);
        let path = resolve(&self.results, &rel)?;
        let io = |e: String| TaskError::Io(e);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| io(format!("{}: {e}", dir.display())))?;
        }
        if self.spec.writes_hands() {
            // Before the chunk itself: a chunk file means its hands are there.
            write_table(&chunk_hands_path(&path), &jobs::hands_parquet(&self.spec.name, hands))?;
        }
        let temp = layout::temp_file(&path);
        jobs::write_partition(&temp, &self.spec.name, rows).map_err(|e| io(e.to_string()))?;
        jobs::durable_rename(&temp, &path).map_err(|e| io(e.to_string()))?;
        let (bytes, sha) = layout::file_digest(&path).map_err(|e| io(format!("{}: {e}", path.display())))?;
        c.file = Some((rel, bytes, sha));
        tracing::info!(task = %self.task, first = c.first_game, games = c.games, "chunk committed");
        Ok(c)
    }
}
