//! Where an experiment's files live under the results root, and the file
//! mechanics every service shares: paths confined to the root for real
//! (symlinks resolved), atomic writes, content hashes, the results-root
//! marker and the owner record of an experiment directory.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::files::{IoError, durable_rename};

/// The marker file the coordinator keeps at the top of its results root.
/// Workers read it and send its content when they lease, which proves they
/// see the same directory.
pub const RESULTS_MARKER: &str = ".muggins-results";

/// The owner record at the top of an experiment directory: the directory
/// belongs to the experiment (spec hash) named there for ever, until deleted.
pub const OWNER_FILE: &str = "_experiment.json";

/// Why a path was refused.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    /// Empty, absolute, or with a component other than a plain name (`..`,
    /// `.`, a root or prefix); holds the path as given.
    #[error("path {0:?} is not a plain relative path inside the results root")]
    NotRelative(String),
    /// An existing ancestor resolves outside the root, or the path goes
    /// through a dangling symbolic link.
    #[error("path {path:?} resolves to {resolved} (through a symbolic link), outside the results root {root}")]
    Escapes {
        /// The relative path as given.
        path: String,
        /// Where it leads: the resolved ancestor, or the dangling link's target.
        resolved: PathBuf,
        /// The results root, resolved.
        root: PathBuf,
    },
    /// The results root cannot be resolved (missing, or unreadable).
    #[error("results root {root}: {source}")]
    Root {
        /// The results root as given.
        root: PathBuf,
        /// Why it could not be resolved.
        source: std::io::Error,
    },
    /// A component could not be resolved or the directory created.
    #[error("{path}: {source}")]
    Io {
        /// The path concerned, under the root.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
}

/// `root/relative`, refusing absolute paths, `..`, and any existing component
/// that resolves (through symbolic links) outside `root`.
pub fn confine(root: &Path, relative: &str) -> Result<PathBuf, PathError> {
    let p = Path::new(relative);
    if relative.is_empty() || p.is_absolute() || p.components().any(|c| !matches!(c, Component::Normal(_))) {
        return Err(PathError::NotRelative(relative.to_string()));
    }
    let real_root = root.canonicalize().map_err(|source| PathError::Root {
        root: root.to_path_buf(),
        source,
    })?;
    let joined = root.join(p);
    // The deepest existing ancestor, with every link in it resolved; what
    // does not exist yet cannot be a link.
    let mut probe = joined.as_path();
    loop {
        match probe.canonicalize() {
            Ok(real) => {
                if !real.starts_with(&real_root) {
                    return Err(PathError::Escapes {
                        path: relative.to_string(),
                        resolved: real,
                        root: real_root,
                    });
                }
                break;
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(PathError::Io {
                    path: probe.to_path_buf(),
                    source,
                });
            }
        }
        // A dangling link is no directory to create files in.
        if std::fs::symlink_metadata(probe).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(PathError::Escapes {
                path: relative.to_string(),
                resolved: std::fs::read_link(probe).unwrap_or_default(),
                root: real_root,
            });
        }
        match probe.parent() {
            Some(parent) if parent != root && parent.starts_with(root) => probe = parent,
            _ => break,
        }
    }
    Ok(joined)
}

/// `root/relative` as a name a file is put at (by a rename) or removed
/// from: its directory is confined as by [`confine`], but whatever is at
/// the name itself is not followed. A symbolic link there, even one
/// leading outside the root, is fine: rename(2) and unlink(2) replace or
/// remove the link itself and never write through it. Whether a file is
/// at the name is [`is_plain_file`]'s to say (a link is none).
pub fn confine_name(root: &Path, relative: &str) -> Result<PathBuf, PathError> {
    let p = Path::new(relative);
    let (Some(name), Some(parent)) = (p.file_name(), p.parent()) else {
        return Err(PathError::NotRelative(relative.to_string()));
    };
    if p.components().any(|c| !matches!(c, Component::Normal(_))) {
        return Err(PathError::NotRelative(relative.to_string()));
    }
    let dir = match parent.to_str() {
        Some("") => {
            root.canonicalize().map_err(|source| PathError::Root {
                root: root.to_path_buf(),
                source,
            })?;
            root.to_path_buf()
        }
        Some(parent) => confine(root, parent)?,
        None => return Err(PathError::NotRelative(relative.to_string())),
    };
    Ok(dir.join(name))
}

/// `s` as a plain word, safe in a file name, a URL or a log: each
/// character other than an ASCII letter, digit, '-', '_' or '.' written as
/// '_' (a plain word is itself).
pub fn plain_name(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Whether `path` is a regular file itself, not a symbolic link to one.
pub fn is_plain_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file())
}

/// The first `limit` entries under `dir` that are not directories (files,
/// symbolic links, anything else), as paths relative to `dir` in sorted
/// order, and whether there are more. Links to directories are not
/// followed: a link is an entry. A missing `dir` holds nothing.
pub fn files_under(dir: &Path, limit: usize) -> std::io::Result<(Vec<PathBuf>, bool)> {
    fn walk(dir: &Path, rel: &Path, limit: usize, found: &mut Vec<PathBuf>) -> std::io::Result<bool> {
        let mut entries = match std::fs::read_dir(dir) {
            Ok(d) => d
                .map(|e| e.map(|e| e.file_name()))
                .collect::<std::io::Result<Vec<_>>>()?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
            Err(e) => return Err(e),
        };
        entries.sort();
        for name in entries {
            let (path, rel) = (dir.join(&name), rel.join(&name));
            if std::fs::symlink_metadata(&path)?.is_dir() {
                if walk(&path, &rel, limit, found)? {
                    return Ok(true);
                }
            } else if found.len() == limit {
                return Ok(true);
            } else {
                found.push(rel);
            }
        }
        Ok(false)
    }
    let mut found = Vec::new();
    let more = walk(dir, Path::new(""), limit, &mut found)?;
    Ok((found, more))
}

/// Creates `root/relative` as a directory (and its parents), confined to `root`.
pub fn create_confined_dir(root: &Path, relative: &str) -> Result<PathBuf, PathError> {
    let dir = confine(root, relative)?;
    std::fs::create_dir_all(&dir).map_err(|source| PathError::Io {
        path: dir.clone(),
        source,
    })?;
    // Check again: a link may have been raced in while creating.
    confine(root, relative)
}

/// Writes `bytes` to `path` through a hidden temporary file in the same
/// directory, fsync and a durable rename: readers see the old file or the
/// whole new one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), IoError> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    // A name of this writer's own: two processes (a worker whose lease
    // expired and the one that took the task over) may write the same file
    // at once, each a whole copy, never through the other's temporary.
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    // The pid and the clock's nanoseconds tell machines on a shared disk apart.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let tmp = path.with_file_name(format!(".{name}.{}-{nanos}-{n}.tmp", std::process::id()));
    let err = |source| IoError::Io {
        path: tmp.clone(),
        source,
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(|source| IoError::Io {
            path: parent.to_path_buf(),
            source,
        })?;
    }
    let mut f = File::create(&tmp).map_err(err)?;
    f.write_all(bytes).map_err(err)?;
    f.sync_all().map_err(err)?;
    durable_rename(&tmp, path)
}

/// The size and SHA-256 (lowercase hex) of a file, read in blocks.
pub fn file_digest(path: &Path) -> std::io::Result<(u64, String)> {
    use sha2::{Digest, Sha256};
    let mut f = File::open(path)?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    let mut n = 0u64;
    loop {
        let k = f.read(&mut buf)?;
        if k == 0 {
            break;
        }
        n += k as u64;
        h.update(&buf[..k]);
    }
    Ok((n, hex_of(&h.finalize())))
}

/// The SHA-256 (lowercase hex, as [`file_digest`] gives a file's) of
/// `bytes`: what a file of them would hash to.
pub fn bytes_digest(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    hex_of(&Sha256::digest(bytes))
}

fn hex_of(digest: &[u8]) -> String {
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Who owns an experiment directory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    /// The id of the experiment that claimed the directory; the coordinator
    /// refuses a submission with another id there.
    pub id: String,
    /// The spec's `name`.
    pub name: String,
    /// SHA-256 (hex) of the canonical spec.
    pub spec_hash: String,
    /// The spec itself, so the directory describes itself (the report reads
    /// exactly the partitions it names).
    pub spec_toml: String,
}

impl Owner {
    /// The owner recorded in `experiment_dir`, if any.
    pub fn read(experiment_dir: &Path) -> Result<Option<Owner>, IoError> {
        let path = experiment_dir.join(OWNER_FILE);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map(Some).map_err(|e| IoError::Format {
                path,
                message: format!("not an owner record: {e}"),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(source) => Err(IoError::Io { path, source }),
        }
    }

    /// Records `self` as the owner of `experiment_dir`.
    pub fn write(&self, experiment_dir: &Path) -> Result<(), IoError> {
        let mut text = serde_json::to_vec_pretty(self).expect("an owner serialises");
        text.push(b'\n');
        write_atomic(&experiment_dir.join(OWNER_FILE), &text)
    }
}

mod stage;

pub use stage::{GAMES_DIR, SAMPLES_DIR, SELF_PLAY_STRIDE, Stage, self_play_of, self_play_shard};

// Names inside an experiment directory, relative to it.

/// Which worker played which games (`{"chunks": [{shard, first_game,
/// games, worker}]}`), written by the coordinator when the report task is
/// leased: the report's per-worker residuals read it.
pub const WORKERS_FILE: &str = "_workers.json";

/// The per-hand table of a grid of matches: `hands/part-NNNNN.parquet`.
pub const HANDS_DIR: &str = "hands";

/// Chunks committed before their games task completed:
/// `chunks/part-NNNNN/gFIRST-nGAMES.parquet` (removed when the experiment
/// is sealed; readers of `games/` never see them).
pub const CHUNKS_DIR: &str = "chunks";

/// The per-move table of `[output] moves = true`: `moves/part-NNNNN.parquet`,
/// one file per games shard, written before that shard's games partition.
pub const MOVES_DIR: &str = "moves";
/// The fit stage's report ([`training::Report`](crate::training::Report) as JSON).
pub const CLASSIFIER_REPORT: &str = "classifier/report.json";
/// The opponent-move predictors' held-out evaluation, written by the fit
/// stage of an experiment that shapes its search.
pub const PREDICTION_REPORT: &str = "prediction/report.json";
/// The directory the report stage writes the experiment's report into.
pub const REPORT_DIR: &str = "report";
/// The report's Markdown, inside [`REPORT_DIR`].
pub const REPORT_MD_FILE: &str = "report.md";
/// The report's JSON, inside [`REPORT_DIR`].
pub const REPORT_JSON_FILE: &str = "report.json";
/// The report as JSON; written last, so its presence marks the report done.
pub const REPORT_JSON: &str = "report/report.json";
/// The report as Markdown.
pub const REPORT_MD: &str = "report/report.md";
/// The manifest ([`Manifest`](crate::Manifest)), written when the experiment is sealed.
pub const MANIFEST: &str = "_manifest.json";
/// An empty file written after the manifest, when every partition is in place.
pub const SUCCESS: &str = "_SUCCESS";
/// Hidden partial partitions start with this:
/// `.part-NNNNN.<tag>.tmp` in the stage's partitions directory.
pub const TEMP_PREFIX: &str = ".part-";

/// A training run's spec and id (`[train]`, docs/train.md), in its directory.
pub const TRAIN_SPEC_FILE: &str = "_train.json";
/// A training run's networks, each `<sha256>.safetensors`.
pub const NETS_DIR: &str = "nets";
/// A training run's summary, rewritten after each generation.
pub const TRAIN_SUMMARY: &str = "summary.json";
/// A training run's best network at its end.
pub const BEST_NET: &str = "best.safetensors";
/// A copy of a training run's `train.start` file, in its directory, that a
/// coordinator writes when the run is submitted: what its workers read.
pub const START_NET: &str = "start.safetensors";
/// A training run's plot, beside `report.md` and `report.json`.
pub const TRAIN_CURVE: &str = "curve.svg";
/// A generation's record, inside its directory ([`generation_dir`]).
pub const GENERATION_FILE: &str = "generation.json";
/// A generation's self-play partitions, inside its directory.
pub const SELF_PLAY_DIR: &str = "selfplay";
/// A training run's untrained network and its anchors' matches.
pub const FIRST_FILE: &str = "first.json";

/// Generation `g`'s directory in a training run: `gen-007`.
pub fn generation_dir(g: u32) -> String {
    format!("gen-{g:03}")
}

/// The file of the network with hash `sha256` in a training run.
pub fn net_file(sha256: &str) -> String {
    format!("{NETS_DIR}/{sha256}.safetensors")
}

/// The model artifact's name, relative to the experiment directory.
pub fn model_file(hash: &str) -> String {
    format!("classifier/model-{hash}.json")
}

/// An experiment directory `<results>/<output>`: the names of its files
/// relative to the results root, as tasks and completions carry them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExperimentDir {
    output: String,
}

impl ExperimentDir {
    /// The directory `output` (the spec's `output`), relative to the results root.
    pub fn new(output: &str) -> ExperimentDir {
        ExperimentDir {
            output: output.to_string(),
        }
    }

    /// The directory itself, relative to the results root.
    pub fn output(&self) -> &str {
        &self.output
    }

    /// `<output>/<inner>`.
    pub fn file(&self, inner: &str) -> String {
        format!("{}/{inner}", self.output)
    }

    /// Shard `shard`'s partition of a partition-writing stage.
    pub fn partition(&self, stage: Stage, shard: u64) -> Option<String> {
        let dir = stage.partitions_dir()?;
        Some(format!("{}/{dir}/{}", self.output, part_file(shard)))
    }

    /// A committed chunk of games shard `shard`: the rows of games
    /// `first..first + games` (a name that only the range decides, so a
    /// replay writes the same file).
    pub fn chunk_file(&self, shard: u64, first: u64, games: u64) -> String {
        format!(
            "{}/{CHUNKS_DIR}/{}/g{first:012}-n{games}.parquet",
            self.output,
            part_file(shard).trim_end_matches(".parquet")
        )
    }

    /// Games shard `shard`'s per-hand table (a grid of matches).
    pub fn hands_partition(&self, shard: u64) -> String {
        format!("{}/{HANDS_DIR}/{}", self.output, part_file(shard))
    }

    /// Games shard `shard`'s per-move table (with `[output] moves = true`).
    pub fn moves_partition(&self, shard: u64) -> String {
        format!("{}/{MOVES_DIR}/{}", self.output, part_file(shard))
    }

    /// The hidden name a worker writes shard `shard`'s partition under
    /// (`tag` tells the leases apart).
    pub fn temp_partition(&self, stage: Stage, shard: u64, tag: &str) -> Option<String> {
        let dir = stage.partitions_dir()?;
        Some(format!("{}/{dir}/{TEMP_PREFIX}{shard:05}.{tag}.tmp", self.output))
    }

    /// Whether `path` may name a hidden partition of `stage`: a hidden,
    /// non-Parquet file directly in the stage's partitions directory.
    pub fn is_temp_partition(&self, stage: Stage, path: &str) -> bool {
        let Some(dir) = stage.partitions_dir() else {
            return false;
        };
        path.strip_prefix(&format!("{}/{dir}/", self.output))
            .is_some_and(|n| n.starts_with('.') && !n.contains('/') && !n.ends_with(".parquet") && !n.contains(".."))
    }

    /// Whether `path` may name a hidden partition of shard `shard` of
    /// `stage`, as [`temp_partition`](Self::temp_partition) names them
    /// (whatever the tag).
    pub fn is_temp_partition_of(&self, stage: Stage, shard: u64, path: &str) -> bool {
        self.is_temp_partition(stage, path)
            && path
                .rsplit('/')
                .next()
                .is_some_and(|n| n.starts_with(&format!("{TEMP_PREFIX}{shard:05}.")))
    }

    /// The file a task that writes in place completes with: the fit's
    /// model (`hash`: the model's), the report, a training run's self-play
    /// partition or generation record (`shard`: the task's).
    pub fn marker_file(&self, stage: Stage, shard: u64, hash: &str) -> Option<String> {
        match stage {
            Stage::Fit => Some(self.file(&model_file(hash))),
            Stage::Report => Some(self.file(REPORT_JSON)),
            Stage::SelfPlay => {
                let (g, k) = self_play_of(shard);
                Some(self.file(&format!("{}/{SELF_PLAY_DIR}/{}", generation_dir(g), part_file(k))))
            }
            Stage::Generation => Some(self.file(&format!("{}/{GENERATION_FILE}", generation_dir(shard as u32)))),
            Stage::Samples | Stage::Games | Stage::Check => None,
        }
    }
}

/// Whether `name` is a shard's partition file, `part-NNNNN.parquet`.
pub fn is_part_file(name: &str) -> bool {
    name.starts_with("part-") && name.ends_with(".parquet")
}

/// The hands table a worker keeps beside a chunk file of a match grid.
pub fn chunk_hands_file(chunk: &Path) -> PathBuf {
    chunk.with_extension("hands.parquet")
}

/// The temporary name a file is written under before its durable rename.
pub fn temp_file(path: &Path) -> PathBuf {
    path.with_extension("tmp")
}

/// The hash a model artifact's file name carries (`model-<hash>.json`,
/// [`model_file`]), if the name has that form.
pub fn model_hash_of(file_name: &str) -> Option<&str> {
    file_name.strip_prefix("model-")?.strip_suffix(".json")
}

/// The file name of a shard's partition.
pub fn part_file(shard: u64) -> String {
    format!("part-{shard:05}.parquet")
}
