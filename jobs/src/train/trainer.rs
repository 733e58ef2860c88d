//! A training run's steps over its directory: the first network and its
//! anchors, one self-play partition, a generation's fit, gate and
//! evaluation. [`Trainer::run`] takes them in order in one process;
//! `muggins run` calls it. The coordinator's tasks take the same steps on
//! workers ([`crate::train::cluster`]), so both write the same files.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};

use super::*;

/// What `first.json` holds: the untrained network and its anchors' matches.
#[derive(Serialize, Deserialize)]
pub(super) struct First {
    pub(super) first: String,
    pub(super) anchors: Vec<(String, MatchRecord)>,
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
    pub(super) fn net_path(&self, sha: &str) -> PathBuf {
        self.dir.join(net_file(sha))
    }

    pub(super) fn gen_dir(&self, g: u32) -> PathBuf {
        self.dir.join(generation_dir(g))
    }

    /// Generation `g`'s self-play partition `k`.
    pub(super) fn partition(&self, g: u32, k: usize) -> PathBuf {
        self.gen_dir(g)
            .join(SELF_PLAY_DIR)
            .join(crate::layout::part_file(k as u64))
    }

    pub(super) fn load(&self, sha: &str) -> Result<net::Model, TrainError> {
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
            belief_prior: spec.belief_prior().map(String::from),
            belief_hidden: None,
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

    /// Claims the directory for this spec (`_train.json`), or refuses one
    /// that holds another spec's training.
    pub(super) fn claim_dir(&self) -> Result<(), TrainError> {
        std::fs::create_dir_all(&self.dir).map_err(io(&self.dir))?;
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
        self.claim_dir()?;
        let spec = self.spec;
        let Some(First {
            first,
            anchors: first_anchors,
        }) = self.first()?
        else {
            return Ok(None);
        };
        let mut summary = Summary {
            name: spec.name.clone(),
            spec_id: spec.id(),
            first: first.clone(),
            first_anchors,
            generations: Vec::new(),
            best: first,
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
        self.write_best(&summary)?;
        Ok(Some(summary))
    }

    /// Copies the best network to `best.safetensors`.
    pub(super) fn write_best(&self, summary: &Summary) -> Result<(), TrainError> {
        let best = self.net_path(&summary.best);
        let bytes = std::fs::read(&best).map_err(io(&best))?;
        Ok(write_atomic(&self.dir.join(BEST_NET), &bytes)?)
    }

    /// The first network, saved (a function of the spec: any step may
    /// write it again, the same bytes).
    pub(super) fn first_model(&self) -> Result<net::Model, TrainError> {
        self.save(&self.first_network()?, 0)
    }

    /// The first network's hash and its anchors' matches, played once and
    /// kept in `first.json`; `None` when stopped.
    pub(super) fn first(&self) -> Result<Option<First>, TrainError> {
        let first = self.first_model()?;
        let path = self.dir.join(FIRST_FILE);
        if let Some(f) = read_json::<First>(&path)?
            && f.first == first.sha256
        {
            return Ok(Some(f));
        }
        let Some(anchors) = self.anchors(0, &first)? else {
            return Ok(None);
        };
        let f = First {
            first: first.sha256,
            anchors,
        };
        write_json_atomic(&path, &f)?;
        // As read back, so that a run resumed (or run on workers) has the
        // same figures to the last bit (JSON's floats may round once).
        Ok(Some(read_json(&path)?.expect("just written")))
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
            // A head that corrects another prior (or none), or of another
            // shape, is not this training's: the network gets a new one.
            Some(m)
                if m.meta.belief_prior.as_deref() != spec.belief_prior()
                    || m.meta.belief_hidden != spec.belief_hidden() =>
            {
                Ok(fit::with_belief_head(spec, m.mlp.without_belief()))
            }
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

    /// The networks generation `g`'s self-play reads: the best so far and
    /// (with `past` in the population) the past ones it draws from.
    pub(super) fn players(&self, best: &str, past: &[String]) -> Result<(net::Model, Vec<net::Model>), TrainError> {
        let model = self.load(best)?;
        // Only a population with `past` plays them.
        let past = if self.spec.population().contains(&Fixed::Past) {
            past.iter().map(|h| self.load(h)).collect::<Result<_, _>>()?
        } else {
            Vec::new()
        };
        Ok((model, past))
    }

    /// Writes generation `g`'s partition `k` whole (its `rows` as
    /// Parquet) and returns where.
    pub(super) fn write_partition(&self, g: u32, k: usize, rows: &[TrainRow]) -> Result<PathBuf, IoError> {
        let path = self.partition(g, k);
        write_atomic(&path, &self.partition_bytes(rows))?;
        Ok(path)
    }

    /// A partition's file: its rows as Parquet.
    pub(super) fn partition_bytes(&self, rows: &[TrainRow]) -> Vec<u8> {
        rows::train_parquet(rows, self.spec.belief(), self.spec.belief_prior().is_some())
    }

    /// Generation `g`'s partition `k` played on `threads` threads (each a
    /// run of its games: a game is a function of its coordinates, so the
    /// rows are the same on any count); `None` when stopped.
    pub(super) fn partition_rows(
        &self,
        g: u32,
        k: usize,
        model: &net::Model,
        past: &[net::Model],
        threads: usize,
    ) -> Option<Vec<TrainRow>> {
        let (first, games) = self.spec.shards()[k];
        let pieces = (threads.max(1) as u64).min(games.max(1));
        let cut = |i: u64| first + games * i / pieces;
        let played = parallel(pieces as usize, pieces as usize, self.stop, |i| {
            let (a, b) = (cut(i as u64), cut(i as u64 + 1));
            play::self_play(self.spec, g, model, past, a, b - a)
        })?;
        Some(played.into_iter().flatten().collect())
    }

    fn generation(&self, g: u32, best: &str, past: &[String]) -> Result<Option<Generation>, TrainError> {
        let spec = self.spec;
        let parts_dir = self.gen_dir(g).join(SELF_PLAY_DIR);
        std::fs::create_dir_all(&parts_dir).map_err(io(&parts_dir))?;
        let (model, past) = self.players(best, past)?;
        let shards = spec.shards();
        let t0 = std::time::Instant::now();
        let todo: Vec<usize> = (0..shards.len()).filter(|&k| !self.partition(g, k).exists()).collect();
        (self.progress)(&format!(
            "generation {g}/{}: self-play, {} games in {} partitions ({} to play) by {}",
            spec.train.generations,
            spec.train.games,
            shards.len(),
            todo.len(),
            &best[..12]
        ));
        let done = AtomicUsize::new(0);
        let played = parallel(todo.len(), self.threads, self.stop, |i| -> Result<bool, IoError> {
            // Stopped inside: not written, the next run plays it again.
            let Some(rows) = self.partition_rows(g, todo[i], &model, &past, 1) else {
                return Ok(false);
            };
            self.write_partition(g, todo[i], &rows)?;
            let n = done.fetch_add(1, Ordering::Relaxed) + 1;
            if todo.len() <= 50 || n.is_multiple_of(10) || n == todo.len() {
                (self.progress)(&format!("generation {g}: self-play partitions {n}/{}", todo.len()));
            }
            Ok(true)
        });
        let Some(played) = played else { return Ok(None) };
        if !played
            .into_iter()
            .collect::<Result<Vec<bool>, _>>()?
            .into_iter()
            .all(|w| w)
        {
            return Ok(None);
        }
        self.finish(g, &model, t0.elapsed().as_secs_f64())
    }

    /// Generation `g` once its self-play partitions are written (by the
    /// best network `model`): the fit, the gate and the kept network's
    /// anchors; writes `generation.json` and returns the record, `None`
    /// when stopped.
    pub(super) fn finish(
        &self,
        g: u32,
        model: &net::Model,
        self_play_seconds: f64,
    ) -> Result<Option<Generation>, TrainError> {
        let spec = self.spec;
        let parts: Vec<PathBuf> = (0..spec.shards().len()).map(|k| self.partition(g, k)).collect();
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
            let prior = if fit.belief_prior_loss > 0.0 {
                format!(" (the constraints prior alone {:.4})", fit.belief_prior_loss)
            } else {
                String::new()
            };
            (self.progress)(&format!(
                "generation {g}: belief loss {:.4} -> {:.4} nats a hidden tile{prior}",
                fit.belief_loss_first, fit.belief_loss_last
            ));
        }
        let Some(gate) = self.gate(g, &candidate, model)? else {
            return Ok(None);
        };
        let best = if gate.kept_candidate { &candidate } else { model };
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
        let path = self.gen_dir(g).join(GENERATION_FILE);
        write_json_atomic(&path, &record)?;
        // As read back: a resumed run reads it so.
        Ok(read_json(&path)?)
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
