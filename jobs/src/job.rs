//! What a coordinator runs: a grid experiment ([`Spec`]) or a training run
//! (`[train]`, [`TrainSpec`]), each cut into stages of tasks ([`Planned`]).
//! The coordinator and the workers read a submitted spec through [`Job`]
//! only, so the two kinds share submission, leases, files and resumption.

use crate::layout::{SELF_PLAY_STRIDE, Stage, self_play_shard};
use crate::train::{StartFrom, TrainSpec, TrainSpecError, is_train_spec};
use crate::{Shard, Spec, SpecError};

/// A submitted spec of either kind.
#[derive(Clone, Debug)]
pub enum Job {
    /// A grid of games (and its classifier, predictors, report).
    Grid(Spec),
    /// A training run's generations.
    Train(TrainSpec),
}

/// Why a spec is refused.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    /// A grid spec's error.
    #[error(transparent)]
    Grid(#[from] SpecError),
    /// A training spec's error.
    #[error(transparent)]
    Train(#[from] TrainSpecError),
}

/// A task of a job's plan: its stage, its place in the order (a task is
/// leased once every task of a lower `order` is done) and its shard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Planned {
    /// The stage.
    pub stage: Stage,
    /// Its turn: tasks of one turn run together, after every earlier turn's.
    pub order: u32,
    /// Its shard.
    pub shard: Shard,
}

impl Job {
    /// Parses a spec of either kind (a `[train]` table makes a training
    /// run), a training run's `train.start` read from the path it writes
    /// (the submitting machine's view); a training run as a coordinator
    /// runs it: at most [`SELF_PLAY_STRIDE`] partitions a generation.
    pub fn from_toml(text: &str) -> Result<Job, JobError> {
        Job::from_toml_with(text, StartFrom::Path)
    }

    /// [`Self::from_toml`] with a training run's `train.start` read from
    /// `from` (a coordinator's copy, or the bytes a submission sent).
    pub fn from_toml_with(text: &str, from: StartFrom<'_>) -> Result<Job, JobError> {
        if is_train_spec(text) {
            let spec = TrainSpec::from_toml_with(text, from)?;
            check_for_workers(&spec)?;
            return Ok(Job::Train(spec));
        }
        Ok(Job::Grid(Spec::from_toml(text)?))
    }

    /// The grid spec, if it is one.
    pub fn grid(&self) -> Option<&Spec> {
        match self {
            Job::Grid(s) => Some(s),
            Job::Train(_) => None,
        }
    }

    /// The spec's name.
    pub fn name(&self) -> &str {
        match self {
            Job::Grid(s) => &s.name,
            Job::Train(s) => &s.name,
        }
    }

    /// The SHA-256 (hex) of the canonical spec.
    pub fn hash(&self) -> String {
        match self {
            Job::Grid(s) => s.hash(),
            Job::Train(s) => s.id(),
        }
    }

    /// The experiment id: the name and the hash's first 12 hex digits.
    pub fn id(&self) -> String {
        match self {
            Job::Grid(s) => s.id(),
            Job::Train(s) => format!("{}-{}", crate::layout::plain_name(&s.name), &s.id()[..12]),
        }
    }

    /// The results directory, relative to the results root (a training
    /// run's is its name, as under `muggins run --out`).
    pub fn output(&self) -> &str {
        match self {
            Job::Grid(s) => &s.output,
            Job::Train(s) => &s.name,
        }
    }

    /// The games it plays: the grid's, or every generation's self-play.
    pub fn games(&self) -> u64 {
        match self {
            Job::Grid(s) => s.games(),
            Job::Train(s) => u64::from(s.train.generations) * s.train.games,
        }
    }

    /// Its stages in the order they run, each once.
    pub fn stages(&self) -> Vec<Stage> {
        let mut out: Vec<Stage> = Vec::new();
        for p in self.plan() {
            if !out.contains(&p.stage) {
                out.push(p.stage);
            }
        }
        out
    }

    /// Every task, in order.
    pub fn plan(&self) -> Vec<Planned> {
        let one = Shard {
            index: 0,
            first_game: 0,
            games: 0,
        };
        let mut out = Vec::new();
        let mut push = |stage: Stage, order: u32, shards: Vec<Shard>| {
            out.extend(shards.into_iter().map(|shard| Planned { stage, order, shard }));
        };
        match self {
            Job::Grid(spec) => {
                // The classifier's training games and fit come before the
                // grid when the grid uses the classifier source; the
                // opponent-move predictors play their own training hands.
                let mut stages: Vec<(Stage, Vec<Shard>)> = Vec::new();
                if spec.needs_classifier() {
                    stages.push((Stage::Samples, crate::training::sample_shards(spec)));
                    stages.push((Stage::Fit, vec![one]));
                } else if spec.needs_predictors() {
                    stages.push((Stage::Fit, vec![one]));
                }
                stages.push((Stage::Games, crate::shards(spec)));
                stages.push((Stage::Report, vec![one]));
                for (order, (stage, shards)) in stages.into_iter().enumerate() {
                    push(stage, order as u32, shards);
                }
            }
            Job::Train(spec) => {
                // Each generation's partitions, then its fit, gate and anchors.
                for g in 1..=spec.train.generations {
                    let parts = spec.shards().into_iter().enumerate();
                    let shards = parts.map(|(k, (first_game, games))| Shard {
                        index: self_play_shard(g, k as u64),
                        first_game,
                        games,
                    });
                    push(Stage::SelfPlay, 2 * g - 2, shards.collect());
                    let generation = Shard {
                        index: u64::from(g),
                        ..one
                    };
                    push(Stage::Generation, 2 * g - 1, vec![generation]);
                }
            }
        }
        out
    }
}

/// A training run on a coordinator's workers: a generation's partitions
/// must fit a task's shard number.
fn check_for_workers(spec: &TrainSpec) -> Result<(), TrainSpecError> {
    let parts = spec.train.games.div_ceil(spec.train.shard_games);
    if parts > SELF_PLAY_STRIDE {
        return Err(TrainSpecError::field(
            "train.shard_games",
            spec.train.shard_games.to_string(),
            &format!(
                "{parts} self-play partitions a generation; a coordinator takes at most {SELF_PLAY_STRIDE}: give a \
                 larger train.shard_games"
            ),
        ));
    }
    Ok(())
}
