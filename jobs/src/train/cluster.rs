//! A training run's tasks on a coordinator's workers (docs/train.md,
//! "On a cluster"): generation `g`'s self-play partitions ([`Stage::SelfPlay`],
//! one task each, on any workers at once), then its fit, gate and anchors
//! ([`Stage::Generation`], one task). Each task reads what the tasks before
//! it wrote under the run's directory (the networks by hash, the
//! generations' records) and writes its files whole, by the same steps as
//! [`Trainer::run`], so a run on workers writes the same networks as one
//! in a single process, and a task run twice writes the same partition.
//!
//! [`Stage::SelfPlay`]: crate::layout::Stage::SelfPlay
//! [`Stage::Generation`]: crate::layout::Stage::Generation

use std::path::Path;

use super::*;
use crate::stages::Written;

/// What a cluster's self-play task does to its rows before writing them:
/// nothing but in a test's broken machine (the worker's failpoint).
pub type Tamper<'a> = &'a dyn Fn(&mut [TrainRow]);

impl Trainer<'_> {
    /// The records of generations `1..g`, each written before generation
    /// `g`'s tasks were leased, after the first network `first`: what `g`
    /// plays from.
    fn history(&self, g: u32, first: String) -> Result<Summary, TrainError> {
        let mut summary = Summary {
            name: self.spec.name.clone(),
            spec_id: self.spec.id(),
            first: first.clone(),
            first_anchors: Vec::new(),
            generations: Vec::new(),
            best: first,
        };
        for h in 1..g {
            let path = self.gen_dir(h).join(GENERATION_FILE);
            let Some(record) = read_json::<Generation>(&path)? else {
                return Err(TrainError::Io(IoError::Io {
                    path,
                    source: std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        format!("generation {h}'s record is missing, and generation {g} plays from it"),
                    ),
                }));
            };
            summary.best = record.best.clone();
            summary.generations.push(record);
        }
        Ok(summary)
    }

    /// A file the run wrote, as a task completes with it.
    fn written(&self, path: &Path, rows: u64) -> Result<Written, TrainError> {
        let (bytes, hash) = crate::layout::file_digest(path).map_err(io(path))?;
        let file = path
            .strip_prefix(&self.dir)
            .expect("a file of the run's directory")
            .to_string_lossy()
            .into_owned();
        Ok(Written {
            file,
            hash,
            bytes,
            rows,
        })
    }

    /// Generation `g`'s self-play partition `k`, played by the best network
    /// after generation `g - 1` on every thread and written whole; `None`
    /// when stopped. A file already there is played again and replaced
    /// (the same bytes, when it is right): it may be what a worker wrote
    /// after losing its lease, or what a worker a cross-check found wrong
    /// left. `tamper` alters the rows before they are written (a test's
    /// broken machine).
    pub fn self_play_task(&self, g: u32, k: usize, tamper: Tamper<'_>) -> Result<Option<Written>, TrainError> {
        self.claim_dir()?;
        let Some(rows) = self.replay(g, k, tamper)? else {
            return Ok(None);
        };
        let path = self.write_partition(g, k, &rows)?;
        Ok(Some(self.written(&path, rows.len() as u64)?))
    }

    /// A cross-check of generation `g`'s partition `k`: the partition
    /// played again, as [`Self::self_play_task`] plays it, but not written;
    /// returns the SHA-256 its file would have and its games (`None` when
    /// stopped). Two workers that play it right get the file's hash.
    pub fn check_task(&self, g: u32, k: usize, tamper: Tamper<'_>) -> Result<Option<(String, u64)>, TrainError> {
        self.claim_dir()?;
        let Some(rows) = self.replay(g, k, tamper)? else {
            return Ok(None);
        };
        let games = self.spec.shards()[k].1;
        Ok(Some((crate::layout::bytes_digest(&self.partition_bytes(&rows)), games)))
    }

    /// Partition `k` of generation `g` played by the networks the
    /// generations before it chose, `tamper` applied.
    fn replay(&self, g: u32, k: usize, tamper: Tamper<'_>) -> Result<Option<Vec<TrainRow>>, TrainError> {
        let history = self.history(g, self.first_model()?.sha256)?;
        let (model, past) = self.players(&history.best, &past_bests(&history))?;
        Ok(self.partition_rows(g, k, &model, &past, self.threads).map(|mut rows| {
            tamper(&mut rows);
            rows
        }))
    }

    /// Generation `g` once its partitions are written: the fit, the gate
    /// and the anchors (the first network's too, before the first
    /// generation), then `summary.json` and, after the last generation,
    /// `best.safetensors`. Returns the record's file and the summary;
    /// `None` when stopped.
    pub fn generation_task(&self, g: u32) -> Result<Option<(Written, Summary)>, TrainError> {
        self.claim_dir()?;
        let Some(first) = self.first()? else {
            return Ok(None);
        };
        let mut summary = Summary {
            first_anchors: first.anchors,
            ..self.history(g, first.first)?
        };
        let path = self.gen_dir(g).join(GENERATION_FILE);
        let record = match read_json::<Generation>(&path)? {
            Some(r) => r,
            None => {
                let model = self.load(&summary.best)?;
                let seconds = self.self_play_span(g, &summary.best);
                match self.finish(g, &model, seconds)? {
                    Some(r) => r,
                    None => return Ok(None),
                }
            }
        };
        summary.best = record.best.clone();
        let rows = record.rows;
        summary.generations.push(record);
        write_json_atomic(&self.dir.join(TRAIN_SUMMARY), &summary)?;
        if g == self.spec.train.generations {
            self.write_best(&summary)?;
        }
        Ok(Some((self.written(&path, rows)?, summary)))
    }

    /// Self-play's wall time on the workers: from when its network was
    /// ready (the last generation's record, or the first network's file) to
    /// the last partition's write, by the files' times.
    fn self_play_span(&self, g: u32, best: &str) -> f64 {
        let modified = |p: &Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
        let from = match g {
            1 => modified(&self.net_path(best)),
            _ => modified(&self.gen_dir(g - 1).join(GENERATION_FILE)),
        };
        let to = (0..self.spec.shards().len())
            .filter_map(|k| modified(&self.partition(g, k)))
            .max();
        match (from, to) {
            (Some(a), Some(b)) => b.duration_since(a).map_or(0.0, |d| d.as_secs_f64()),
            _ => 0.0,
        }
    }
}
