//! Training as an experiment (`[train]`, docs/train.md): generations of
//! self-play, fit and gate of one network.
//!
//! A generation: the best network so far plays `games` self-play games at
//! the spec's temperature (partitions of training rows); the fit makes a
//! candidate from the best network and those rows; the gate plays the
//! candidate against the best, greedy, in pairs under an SPRT, and keeps
//! the better; the kept network then meets the fixed anchors. Everything a
//! generation writes is under `gen-NNN/` and every network under `nets/`,
//! named by its SHA-256; `gen-NNN/generation.json`, written last, is the
//! generation's record. Every file is written whole (a hidden temporary,
//! then a rename), so a run killed anywhere resumes from what is there:
//! the partitions written are kept, a fit or gate cut short is redone.
//! Each step is a function of the spec and the step before (the games'
//! streams are keyed by their coordinates, the fit's gradient is the same
//! bits on any thread count), so the final network's hash does not depend
//! on the thread count nor on where a run was stopped.

mod fit;
mod fixed;
mod play;
mod rows;
pub mod spec;
mod stages;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};

pub use fit::{FitReport, first_network};
pub use fixed::{Fixed, PAST_KEPT, TrainSearch};
pub use play::{Player, pair, self_play};
pub use rows::{TrainRow, read_train, train_parquet, train_schema};
pub use spec::{Keep, TrainSpec, TrainSpecError, is_train_spec};

use crate::files::{IoError, io};
use crate::layout::{
    BEST_NET, GENERATION_FILE, NETS_DIR, SELF_PLAY_DIR, TRAIN_SPEC_FILE, TRAIN_SUMMARY, generation_dir, net_file,
    write_atomic,
};
use crate::manifest::write_json_atomic;
use crate::spec::{Sprt, SprtOn};
use crate::sprt::{PairStats, ShardPairs, Verdict, Walk};

/// Why training stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    /// Reading or writing a file.
    #[error(transparent)]
    Io(#[from] IoError),
    /// The directory holds another spec's training.
    #[error(
        "{dir} holds the training of another spec (id {have}, this one's {want}); give another --out or another name"
    )]
    #[allow(missing_docs)]
    OtherSpec { dir: PathBuf, have: String, want: String },
    /// A network file of the directory cannot be read.
    #[error(transparent)]
    Net(#[from] net::NetError),
    /// `train.start`'s file is not the one the spec was parsed with.
    #[error("train.start = {0:?}: {1}")]
    Start(String, String),
}

/// The run's best networks before the next generation's (the first, then
/// each generation's kept one), each once, without the current best, the
/// last [`fixed::PAST_KEPT`] of them: what the population's `past` draws
/// from. A function of the generations' records, so a resumed run draws
/// from the same.
fn past_bests(summary: &Summary) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for h in std::iter::once(&summary.first).chain(summary.generations.iter().map(|r| &r.best)) {
        if *h != summary.best && !seen.contains(h) {
            seen.push(h.clone());
        }
    }
    let skip = seen.len().saturating_sub(fixed::PAST_KEPT);
    seen.split_off(skip)
}

/// A match's pairs: counts, score and Elo with its 95% interval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchRecord {
    /// Pairs played.
    pub pairs: u64,
    /// Pairs scoring 0, 1/2, 1, 3/2, 2 points.
    pub penta: [u64; 5],
    /// The first side's score, 0 to 1.
    pub score: f64,
    /// Its logistic Elo.
    pub elo: f64,
    /// The 95% interval's low end.
    pub elo_low: f64,
    /// Its high end.
    pub elo_high: f64,
}

impl MatchRecord {
    fn of(s: &PairStats) -> MatchRecord {
        let (elo, elo_low, elo_high) = s.elo();
        MatchRecord {
            pairs: s.pairs(),
            penta: s.penta,
            score: s.score(),
            elo,
            elo_low,
            elo_high,
        }
    }
}

/// The gate of a generation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateRecord {
    /// The candidate against the best.
    #[serde(flatten)]
    pub result: MatchRecord,
    /// The SPRT's log-likelihood ratio at the end.
    pub llr: f64,
    /// What it said.
    pub verdict: Verdict,
    /// Whether the candidate became the best.
    pub kept_candidate: bool,
}

/// A generation's record (`gen-NNN/generation.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Generation {
    /// 1, 2, ...
    pub generation: u32,
    /// The network that played the self-play (the best before).
    pub played_by: String,
    /// Self-play games.
    pub games: u64,
    /// Their training rows.
    pub rows: u64,
    /// Self-play's wall time (seconds; of this run's part when resumed).
    pub self_play_seconds: f64,
    /// The fit.
    pub fit: FitReport,
    /// The candidate it made.
    pub candidate: String,
    /// The gate.
    pub gate: GateRecord,
    /// The best network after the gate.
    pub best: String,
    /// The best network against each anchor.
    pub anchors: Vec<(String, MatchRecord)>,
}

/// The run's summary (`summary.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// The spec's name.
    pub name: String,
    /// The spec's id.
    pub spec_id: String,
    /// The untrained network.
    pub first: String,
    /// The first network against each anchor.
    pub first_anchors: Vec<(String, MatchRecord)>,
    /// Every generation done.
    pub generations: Vec<Generation>,
    /// The best network at the end.
    pub best: String,
}

fn read_json<T: for<'de> Deserialize<'de>>(path: &Path) -> Result<Option<T>, IoError> {
    match std::fs::read(path) {
        Ok(b) => serde_json::from_slice(&b)
            .map(Some)
            .map_err(|e| crate::files::format(path, e)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io(path)(e)),
    }
}

/// `f(0..n)` on `threads` threads, the results in order; `None` if `stop`
/// said so before every item was taken.
fn parallel<T: Send>(n: usize, threads: usize, stop: &AtomicBool, f: impl Fn(usize) -> T + Sync) -> Option<Vec<T>> {
    let next = AtomicUsize::new(0);
    let mut out: Vec<(usize, T)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads.clamp(1, n.max(1)))
            .map(|_| {
                s.spawn(|| {
                    let mut mine = Vec::new();
                    while !stop.load(Ordering::Relaxed) {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        if k >= n {
                            break;
                        }
                        mine.push((k, f(k)));
                    }
                    mine
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    if out.len() < n {
        return None;
    }
    out.sort_by_key(|(k, _)| *k);
    Some(out.into_iter().map(|(_, t)| t).collect())
}

/// What `_train.json` holds: the spec and its id.
#[derive(Serialize, Deserialize)]
struct Held {
    spec_id: String,
    spec: TrainSpec,
}

/// A training run's spec and summary as its directory `dir` holds them
/// (`None` when `dir` is not a training run's or no generation is done),
/// for rebuilding its report.
pub fn read_run(dir: &Path) -> Result<Option<(TrainSpec, Summary)>, IoError> {
    let Some(held) = read_json::<Held>(&dir.join(TRAIN_SPEC_FILE))? else {
        return Ok(None);
    };
    Ok(read_json::<Summary>(&dir.join(TRAIN_SUMMARY))?.map(|s| (held.spec, s)))
}

/// A training run in `dir` (the spec's results directory).
#[allow(missing_debug_implementations)]
pub struct Trainer<'a> {
    /// The spec.
    pub spec: &'a TrainSpec,
    /// Its results directory.
    pub dir: PathBuf,
    /// Threads for self-play, the fit and the matches.
    pub threads: usize,
    /// Set (by a signal) to stop at the next safe point.
    pub stop: &'a AtomicBool,
    /// Told of each step, in words.
    pub progress: &'a (dyn Fn(&str) + Sync),
}

impl Trainer<'_> {
    fn net_path(&self, sha: &str) -> PathBuf {
        self.dir.join(net_file(sha))
    }

    fn gen_dir(&self, g: u32) -> PathBuf {
        self.dir.join(generation_dir(g))
    }

    fn load(&self, sha: &str) -> Result<net::Model, TrainError> {
        Ok(net::Model::load(&self.net_path(sha))?)
    }

    /// Writes `mlp` as a network of the spec (provenance: its spec id and
    /// generation) and returns it as read back (its hash the file's).
    fn save(&self, mlp: &net::Mlp, generation: u32) -> Result<net::Model, TrainError> {
        let spec = self.spec;
        let state = spec.state();
        let meta = net::Meta {
            format_version: net::FORMAT_VERSION,
            game: spec.train.game.clone(),
            encoding: spec.train.encoding.clone(),
            encoding_version: full::spiel::ENCODING_VERSION,
            inputs: state.encoding_size(spec.encoding()),
            actions: state.action_count() as usize,
            hidden: spec.train.hidden.clone(),
            activation: "tanh".into(),
            belief: None,
            provenance: net::Provenance {
                made_by: format!("muggins run ({} training)", spec.name),
                spec_id: Some(spec.id()),
                generation: Some(generation),
            },
        };
        let bytes = net::Model::to_bytes(&meta, mlp);
        let model = net::Model::from_bytes(&bytes).map_err(|why| net::NetError::Invalid {
            path: self.dir.join(NETS_DIR),
            why,
        })?;
        let path = self.net_path(&model.sha256);
        if !path.exists() {
            write_atomic(&path, &bytes)?;
        }
        Ok(model)
    }

    fn claim_dir(&self) -> Result<(), TrainError> {
        let path = self.dir.join(TRAIN_SPEC_FILE);
        let want = self.spec.id();
        match read_json::<Held>(&path)? {
            Some(h) if h.spec_id != want => Err(TrainError::OtherSpec {
                dir: self.dir.clone(),
                have: h.spec_id,
                want,
            }),
            Some(_) => Ok(()),
            None => Ok(write_json_atomic(
                &path,
                &Held {
                    spec_id: want,
                    spec: self.spec.clone(),
                },
            )?),
        }
    }

    /// Runs (or resumes) every generation; `None` when stopped.
    pub fn run(&self) -> Result<Option<Summary>, TrainError> {
        std::fs::create_dir_all(&self.dir).map_err(io(&self.dir))?;
        self.claim_dir()?;
        let spec = self.spec;
        let first = self.save(&self.first_network()?, 0)?;
        let Some(first_anchors) = self.anchors(0, &first)? else {
            return Ok(None);
        };
        let mut summary = Summary {
            name: spec.name.clone(),
            spec_id: spec.id(),
            first: first.sha256.clone(),
            first_anchors,
            generations: Vec::new(),
            best: first.sha256,
        };
        let (started, mut ran) = (std::time::Instant::now(), 0u32);
        let total = spec.train.generations;
        for g in 1..=total {
            let record = match read_json::<Generation>(&self.gen_dir(g).join(GENERATION_FILE))? {
                Some(r) => {
                    (self.progress)(&format!("generation {g}: done before (best {})", &r.best[..12]));
                    r
                }
                None => match self.generation(g, &summary.best, &past_bests(&summary))? {
                    Some(r) => {
                        ran += 1;
                        let each = started.elapsed().as_secs_f64() / ran as f64;
                        (self.progress)(&format!(
                            "generation {g}/{total} done ({each:.0} s a generation here; about {:.0} s left)",
                            each * (total - g) as f64
                        ));
                        r
                    }
                    None => return Ok(None),
                },
            };
            summary.best = record.best.clone();
            summary.generations.push(record);
            write_json_atomic(&self.dir.join(TRAIN_SUMMARY), &summary)?;
        }
        let best = self.net_path(&summary.best);
        let bytes = std::fs::read(&best).map_err(io(&best))?;
        write_atomic(&self.dir.join(BEST_NET), &bytes)?;
        Ok(Some(summary))
    }

    /// The first generation's network: `train.start`'s weights (the file
    /// the spec was parsed with) or weights drawn from the seed.
    fn first_network(&self) -> Result<net::Mlp, TrainError> {
        let spec = self.spec;
        let start = |why: String| TrainError::Start(spec.train.start.clone().unwrap_or_default(), why);
        let model = spec.start_model().map_err(|e| match e {
            TrainSpecError::Field { why, .. } => start(why),
            e => start(e.to_string()),
        })?;
        match model {
            Some(m) if Some(&m.sha256) != spec.train.start_sha256.as_ref() => Err(start(format!(
                "its SHA-256 is {}, the spec was parsed with {}: the file changed",
                m.sha256,
                spec.train.start_sha256.as_deref().unwrap_or("no file")
            ))),
            Some(m) => Ok(fit::with_belief_head(spec, m.mlp)),
            None => {
                let state = spec.state();
                Ok(fit::first_network(
                    spec,
                    state.encoding_size(spec.encoding()),
                    state.action_count() as usize,
                ))
            }
        }
    }

    fn generation(&self, g: u32, best: &str, past: &[String]) -> Result<Option<Generation>, TrainError> {
        let spec = self.spec;
        let dir = self.gen_dir(g);
        let parts_dir = dir.join(SELF_PLAY_DIR);
        std::fs::create_dir_all(&parts_dir).map_err(io(&parts_dir))?;
        let model = self.load(best)?;
        // Only a population with `past` plays them.
        let past: Vec<net::Model> = if spec.population().contains(&Fixed::Past) {
            past.iter().map(|h| self.load(h)).collect::<Result<_, _>>()?
        } else {
            Vec::new()
        };
        let shards = spec.shards();
        let t0 = std::time::Instant::now();
        let part = |k: usize| parts_dir.join(crate::layout::part_file(k as u64));
        let todo: Vec<usize> = (0..shards.len()).filter(|&k| !part(k).exists()).collect();
        (self.progress)(&format!(
            "generation {g}/{}: self-play, {} games in {} partitions ({} to play) by {}",
            spec.train.generations,
            spec.train.games,
            shards.len(),
            todo.len(),
            &best[..12]
        ));
        let done = AtomicUsize::new(0);
        let played = parallel(todo.len(), self.threads, self.stop, |i| -> Result<(), IoError> {
            let k = todo[i];
            let (first, games) = shards[k];
            let rows = play::self_play(spec, g, &model, &past, first, games);
            write_atomic(&part(k), &rows::train_parquet(&rows, spec.belief()))?;
            let n = done.fetch_add(1, Ordering::Relaxed) + 1;
            if todo.len() <= 50 || n.is_multiple_of(10) || n == todo.len() {
                (self.progress)(&format!("generation {g}: self-play partitions {n}/{}", todo.len()));
            }
            Ok(())
        });
        let Some(played) = played else { return Ok(None) };
        played.into_iter().collect::<Result<Vec<()>, _>>()?;
        let self_play_seconds = t0.elapsed().as_secs_f64();
        let parts: Vec<PathBuf> = (0..shards.len()).map(part).collect();
        let stop = || self.stop.load(Ordering::Relaxed);
        let Some((mlp, fit)) = fit::fit(spec, g, &model.mlp, &parts, self.threads, &stop)? else {
            return Ok(None);
        };
        let candidate = self.save(&mlp, g)?;
        (self.progress)(&format!(
            "generation {g}: fit {} rows, {} steps in {:.1} s; value loss {:.4} -> {:.4}, entropy {:.3} -> {:.3}",
            fit.rows,
            fit.steps,
            fit.seconds,
            fit.value_loss_first,
            fit.value_loss_last,
            fit.entropy_first,
            fit.entropy_last
        ));
        if spec.belief() {
            (self.progress)(&format!(
                "generation {g}: belief loss {:.4} -> {:.4} nats a hidden tile",
                fit.belief_loss_first, fit.belief_loss_last
            ));
        }
        let Some(gate) = self.gate(g, &candidate, &model)? else {
            return Ok(None);
        };
        let best = if gate.kept_candidate { &candidate } else { &model };
        (self.progress)(&format!(
            "generation {g}: gate {} after {} pairs (candidate's Elo {:+.1} [{:+.1}, {:+.1}]): {} kept",
            gate.verdict.words(),
            gate.result.pairs,
            gate.result.elo,
            gate.result.elo_low,
            gate.result.elo_high,
            if gate.kept_candidate {
                "the candidate"
            } else {
                "the best"
            }
        ));
        let Some(anchors) = self.anchors(g, best)? else {
            return Ok(None);
        };
        let record = Generation {
            generation: g,
            played_by: model.sha256.clone(),
            games: spec.train.games,
            rows: fit.rows,
            self_play_seconds,
            fit,
            candidate: candidate.sha256.clone(),
            gate,
            best: best.sha256.clone(),
            anchors,
        };
        write_json_atomic(&dir.join(GENERATION_FILE), &record)?;
        Ok(Some(record))
    }

    fn greedy<'m>(&self, model: &'m net::Model) -> Player<'m> {
        Player::Net {
            model,
            encoding: self.spec.encoding(),
            temperature: 0.0,
            search: None,
        }
    }

    /// The candidate against the best under the gate's SPRT.
    fn gate(&self, g: u32, candidate: &net::Model, best: &net::Model) -> Result<Option<GateRecord>, TrainError> {
        let gate = &self.spec.train.gate;
        let (a, b) = (self.greedy(candidate), self.greedy(best));
        let sprt = Sprt {
            on: SprtOn::Elo,
            h0: gate.elo0,
            h1: gate.elo1,
            alpha: gate.alpha,
            beta: gate.beta,
        };
        let mut walk = Walk::untraced(sprt);
        let chunk = 64 * self.threads.max(1) as u64;
        let mut start = 0;
        while start < gate.pairs && walk.verdict == Verdict::Undecided {
            let n = chunk.min(gate.pairs - start);
            let Some(pairs) = parallel(n as usize, self.threads, self.stop, |i| {
                play::pair(self.spec, g, engine::seed::TRAIN_GATE, start + i as u64, &a, &b)
            }) else {
                return Ok(None);
            };
            walk.step(&ShardPairs { pairs });
            start += n;
        }
        let result = MatchRecord::of(walk.total());
        let kept_candidate = match (gate.keep, walk.verdict) {
            (spec::Keep::Latest, _) | (_, Verdict::H1) => true,
            (_, Verdict::H0) => false,
            (_, Verdict::Undecided) => result.score > 0.5,
        };
        Ok(Some(GateRecord {
            result,
            llr: walk.llr,
            verdict: walk.verdict,
            kept_candidate,
        }))
    }

    /// `model` against each anchor (generation `g`'s deals).
    fn anchors(&self, g: u32, model: &net::Model) -> Result<Option<Vec<(String, MatchRecord)>>, TrainError> {
        let me = self.greedy(model);
        let mut out = Vec::new();
        for anchor in self.spec.anchors() {
            let them = Player::Fixed(anchor);
            let Some(pairs) = parallel(self.spec.train.eval.pairs as usize, self.threads, self.stop, |i| {
                play::pair(self.spec, g, engine::seed::TRAIN_EVAL, i as u64, &me, &them)
            }) else {
                return Ok(None);
            };
            let r = MatchRecord::of(&ShardPairs { pairs }.stats());
            (self.progress)(&format!(
                "generation {g}: {} against {}: score {:.3}, Elo {:+.1} [{:+.1}, {:+.1}] over {} pairs",
                &model.sha256[..12],
                anchor.name(),
                r.score,
                r.elo,
                r.elo_low,
                r.elo_high,
                r.pairs
            ));
            out.push((anchor.name(), r));
        }
        Ok(Some(out))
    }
}
