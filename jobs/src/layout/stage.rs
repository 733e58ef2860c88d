//! The stages of an experiment and the tasks' shard numbers of a
//! training run's self-play ([`self_play_shard`]), with the partition
//! directories the stages write; re-exported by [`crate::layout`].

/// The games stage's partitions: `games/part-NNNNN.parquet`.
pub const GAMES_DIR: &str = "games";
/// The samples stage's partitions: `classifier/samples/part-NNNNN.parquet`.
pub const SAMPLES_DIR: &str = "classifier/samples";

/// The stages of an experiment, in the order they run: the classifier's
/// training games and fit (only when the grid uses the classifier source),
/// the grid, the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stage {
    /// Training games (Table 9) written as sample partitions under [`SAMPLES_DIR`].
    Samples,
    /// One task: fits the classifier and writes the model and
    /// [`CLASSIFIER_REPORT`](crate::layout::CLASSIFIER_REPORT), or for a shaped search fits the opponent-move
    /// predictors and writes them and [`PREDICTION_REPORT`](crate::layout::PREDICTION_REPORT).
    Fit,
    /// The grid's games, written as partitions under [`GAMES_DIR`].
    Games,
    /// Cross-checks: a sampled range of committed games replayed by another
    /// worker, its rows' checksum compared (no file). Its tasks are added
    /// as games tasks complete, in the games stage's turn.
    Check,
    /// One task: writes the report under [`REPORT_DIR`](crate::layout::REPORT_DIR).
    Report,
    /// A training run's self-play partition (`[train]`, docs/train.md):
    /// generation `g`'s partition `k` ([`self_play_shard`]), written in
    /// place under the generation's [`SELF_PLAY_DIR`](crate::layout::SELF_PLAY_DIR).
    SelfPlay,
    /// A training run's generation once its self-play is written: the fit,
    /// the gate and the anchors; [`GENERATION_FILE`](crate::layout::GENERATION_FILE) marks it done.
    Generation,
}

impl Stage {
    /// Every stage, in the order they run.
    pub const ALL: [Stage; 7] = [
        Stage::Samples,
        Stage::Fit,
        Stage::Games,
        Stage::Check,
        Stage::Report,
        Stage::SelfPlay,
        Stage::Generation,
    ];

    /// The stage's name on the wire, in the state file and in metrics.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Samples => "samples",
            Stage::Fit => "fit",
            Stage::Games => "games",
            Stage::Check => "check",
            Stage::Report => "report",
            Stage::SelfPlay => "selfplay",
            Stage::Generation => "generation",
        }
    }

    /// The stage of a [`name`](Self::name); `None` for any other text.
    pub fn parse(s: &str) -> Option<Stage> {
        Stage::ALL.into_iter().find(|st| st.name() == s)
    }

    /// The id of the stage's task for shard `index`, e.g. `games-00012`
    /// (a self-play partition's names its generation and partition:
    /// `selfplay-003-00012`).
    pub fn task_id(self, index: u64) -> String {
        match self {
            Stage::SelfPlay => {
                let (g, k) = self_play_of(index);
                format!("{}-{g:03}-{k:05}", self.name())
            }
            _ => format!("{}-{index:05}", self.name()),
        }
    }

    /// The id of the cross-check of games `first..` of games shard
    /// `shard`, e.g. `check-00012-60480`.
    pub fn check_task_id(shard: u64, first: u64) -> String {
        format!("{}-{shard:05}-{first}", Stage::Check.name())
    }

    /// The id of the tie-breaking replay of a disputed check task.
    pub fn tiebreak_task_id(check: &str) -> String {
        format!("{check}-tiebreak")
    }

    /// The stage a task id belongs to (shard tasks, checks and tie-breaks).
    pub fn of_task_id(id: &str) -> Option<Stage> {
        let (stage, _) = id.split_once('-')?;
        Stage::parse(stage)
    }

    /// Where a partition-writing stage's partitions go, relative to the
    /// experiment directory (`None` for stages that write one file in place).
    pub fn partitions_dir(self) -> Option<&'static str> {
        match self {
            Stage::Samples => Some(SAMPLES_DIR),
            Stage::Games => Some(GAMES_DIR),
            Stage::Fit | Stage::Check | Stage::Report | Stage::SelfPlay | Stage::Generation => None,
        }
    }
}

/// The most self-play partitions a generation of a training run on a
/// coordinator may have: a task's shard number holds the generation and
/// the partition ([`self_play_shard`]).
pub const SELF_PLAY_STRIDE: u64 = 1_000_000;

/// The shard number of generation `g`'s self-play partition `k`.
pub fn self_play_shard(g: u32, k: u64) -> u64 {
    debug_assert!(k < SELF_PLAY_STRIDE);
    u64::from(g) * SELF_PLAY_STRIDE + k
}

/// The generation and partition of a self-play shard number.
pub fn self_play_of(shard: u64) -> (u32, u64) {
    ((shard / SELF_PLAY_STRIDE) as u32, shard % SELF_PLAY_STRIDE)
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
