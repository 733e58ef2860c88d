//! Table 9's target-vs-target games for the classifier's training data.

use crate::deal::Deal;
use crate::features::{FeatureTracker, Features};
use crate::position::{Action, Position};
use crate::rules::Rules;
use crate::seed::below;
use crate::targets::{TargetKind, target_choice};
use rand_chacha::ChaCha20Rng;

use super::game_loop::{PlayerBrain, Streams, run};

/// Table 9 of the thesis: the (player type, target type) pairing of training
/// game i is `TABLE_9[i % 9]`.
pub const TABLE_9: [(TargetKind, TargetKind); 9] = [
    (TargetKind::Random, TargetKind::Random),
    (TargetKind::Defender, TargetKind::Random),
    (TargetKind::Scorer, TargetKind::Random),
    (TargetKind::Random, TargetKind::Defender),
    (TargetKind::Defender, TargetKind::Defender),
    (TargetKind::Scorer, TargetKind::Defender),
    (TargetKind::Random, TargetKind::Scorer),
    (TargetKind::Defender, TargetKind::Scorer),
    (TargetKind::Scorer, TargetKind::Scorer),
];

/// A target-vs-target game for the classifier's training data.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainingGame {
    /// The game's index in the experiment: it picks the pairing
    /// `TABLE_9[index % 9]` and keys the game's streams.
    pub index: u64,
    /// The starting state drawn for it, below [`Rules::starting_states`].
    pub starting_state: u64,
    /// The fixed policy the player seat plays.
    pub player: TargetKind,
    /// The target seat's type: the label of every sample.
    pub target: TargetKind,
    /// The features after each of the target seat's turns (each a sample labelled `target`).
    pub samples: Vec<Features>,
}

/// The player seat played by a fixed policy.
struct Policy {
    kind: TargetKind,
    rules: Rules,
    rng: ChaCha20Rng,
    samples: Vec<Features>,
}

impl PlayerBrain for Policy {
    fn skips_forced(&self) -> bool {
        // A random policy draws once per decision, like the random target.
        self.kind != TargetKind::Random
    }
    fn choose(&mut self, pos: &Position, actions: &[Action], _tracker: &FeatureTracker) -> usize {
        match self.kind {
            TargetKind::Random => below(&mut self.rng, actions.len() as u64) as usize,
            kind => target_choice(&self.rules, kind, pos, actions).expect("deterministic policy"),
        }
    }
    fn target_turn(&mut self, features: &Features) {
        self.samples.push(*features);
    }
}

/// Training game `index` of an experiment: pairing `TABLE_9[index % 9]`, a
/// starting state drawn uniformly from the training streams (`seed::training_rng`).
pub fn training_game(rules: &Rules, seed: u64, index: u64) -> TrainingGame {
    use crate::seed::{TrainingStream, training_rng};
    let state = below(
        &mut training_rng(seed, index, TrainingStream::Deal),
        rules.starting_states(),
    );
    let deal = Deal::from_index(rules, state).expect("drawn below the number of states");
    let (player, target) = TABLE_9[(index % 9) as usize];
    let streams = Streams::new(
        &deal,
        training_rng(seed, index, TrainingStream::Boneyard),
        training_rng(seed, index, TrainingStream::Target),
    );
    let mut brain = Policy {
        kind: player,
        rules: rules.clone(),
        rng: training_rng(seed, index, TrainingStream::Player),
        samples: Vec::new(),
    };
    run(rules, &deal, streams, target, &mut brain);
    TrainingGame {
        index,
        starting_state: state,
        player,
        target,
        samples: brain.samples,
    }
}
