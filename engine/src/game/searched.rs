//! Searched games: a game's coordinates ([`GameConfig`]), where M* takes its
//! model of the target ([`InfoSource`]), the searching player's brain, and
//! [`play_game`], which runs it through the game loop and records the game.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::deal::Deal;
use crate::features::FeatureTracker;
use crate::position::{Action, Position};
use crate::search::{PlayerView, Searcher};
use crate::seed::{Stream, game_rng};
use crate::table::ValueStore;
use crate::targets::{EngineKind, OpponentModel, TargetKind};
use crate::tiles::TileSet;
use rand_chacha::ChaCha20Rng;

use super::bayes::{BAYES_FLOOR, likelihoods, most_probable};
use super::game_loop::{PlayerBrain, Streams, run};
use super::record::{GameError, GameRecord, Observability, PlayerEngine};

/// Where M* takes its model of the target from.
#[derive(Clone, Copy)]
pub enum InfoSource<'a> {
    /// The true target type.
    Oracle,
    /// A classifier's prediction from the opponent features.
    Classifier(&'a dyn OpponentModel),
    /// A posterior over the three types from the target's observed actions;
    /// M* values actions against the posterior mixture (docs/rules.md §5).
    Bayes,
}

impl fmt::Debug for InfoSource<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InfoSource::Oracle => f.write_str("Oracle"),
            InfoSource::Classifier(_) => f.write_str("Classifier"),
            InfoSource::Bayes => f.write_str("Bayes"),
        }
    }
}

/// The coordinates of one game apart from its information source.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct GameConfig {
    /// The experiment seed.
    pub seed: u64,
    /// The deal: an index below [`Rules::starting_states`]; [`play_game`]
    /// fails with [`GameError::StartingState`] otherwise.
    pub starting_state: u64,
    /// Which repeat of the starting state. With `seed` and `starting_state`
    /// it keys the boneyard order and the random target's draws.
    pub repeat: u64,
    /// The player's decision engine.
    pub engine: PlayerEngine,
    /// The true type of the opponent the player faces.
    pub target: TargetKind,
    /// What the player sees of the target's hand.
    pub observability: Observability,
}
/// One searched decision of the player, as the moves table records it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SearchedDecision {
    /// The chosen action's value (expected change of score_diff from there).
    pub value: f64,
    /// The best value among the other actions.
    pub best_other: Option<f64>,
    /// Positions valued at the root (actions x worlds).
    pub evaluations: u64,
}

/// The player's searching brain.
struct Searching<'s, 'a, S> {
    searcher: &'s mut Searcher<S>,
    game: &'a GameConfig,
    source: InfoSource<'a>,
    world_rng: ChaCha20Rng,
    /// ln P(type) up to a constant, for the Bayes source.
    log_posterior: [f64; 3],
    predictions: u32,
    correct: u32,
    nodes: u64,
    /// The searched decisions, in order, when the caller asked for them.
    decisions: Option<Vec<SearchedDecision>>,
    /// What the target has shown it lacks.
    target_void: TileSet,
}

impl<S: ValueStore> Searching<'_, '_, S> {
    fn posterior(&self) -> [f64; 3] {
        let m = self.log_posterior.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let e = self.log_posterior.map(|l| (l - m).exp());
        let z: f64 = e.iter().sum();
        e.map(|x| x / z)
    }
}

impl<S: ValueStore> PlayerBrain for Searching<'_, '_, S> {
    fn choose(&mut self, pos: &Position, _actions: &[Action], tracker: &FeatureTracker) -> usize {
        let target = self.game.target;
        let mut mix = [(EngineKind::Expectimax, 1.0); 3];
        let mut n = 1;
        if self.game.engine == PlayerEngine::MStar {
            let predicted = match self.source {
                InfoSource::Oracle => target,
                InfoSource::Classifier(m) => match tracker.latest() {
                    Some(f) => m.predict(&f),
                    None => m.prior(),
                },
                InfoSource::Bayes => {
                    let p = self.posterior();
                    for (k, t) in TargetKind::ALL.into_iter().enumerate() {
                        mix[k] = (EngineKind::MStar(t), p[k]);
                    }
                    n = 3;
                    most_probable(&p)
                }
            };
            if n == 1 {
                mix[0] = (EngineKind::MStar(predicted), 1.0);
            }
            self.predictions += 1;
            self.correct += (predicted == target) as u32;
        }
        let d = match self.game.observability {
            Observability::Full => self.searcher.decide_full_mix(pos, &mix[..n]),
            Observability::Partial => {
                let view = PlayerView {
                    target_void: self.target_void,
                    ..PlayerView::of(pos)
                };
                self.searcher.decide_partial_mix(&view, &mix[..n], &mut self.world_rng)
            }
        };
        self.nodes += d.evaluations;
        if let Some(list) = self.decisions.as_mut() {
            list.push(SearchedDecision {
                value: d.value,
                best_other: d.best_other,
                evaluations: d.evaluations,
            });
        }
        d.index
    }

    fn target_void(&mut self, void: TileSet) {
        self.target_void = void;
    }

    fn target_decides(&mut self, pos: &Position, action: Action, _actions: &[Action], void: TileSet) {
        if !matches!(self.source, InfoSource::Bayes) || self.game.engine != PlayerEngine::MStar {
            return;
        }
        let rules = self.searcher.rules();
        // A forced opening says nothing about the type.
        if pos.board.is_empty() && rules.config().lead == crate::rules::Lead::HighestDouble {
            return;
        }
        let lik = likelihoods(
            rules,
            pos,
            action,
            self.game.observability,
            self.searcher.config(),
            void,
            &mut self.world_rng,
        );
        for k in 0..3 {
            self.log_posterior[k] += lik[k].max(BAYES_FLOOR).ln();
        }
    }
}

/// Plays one game and records it. The result depends only on the rules, the
/// search settings, `game` and `source`, never on what `searcher`'s table holds.
pub fn play_game<S: ValueStore>(
    searcher: &mut Searcher<S>,
    game: &GameConfig,
    source: InfoSource<'_>,
) -> Result<GameRecord, GameError> {
    play(searcher, game, source, false).map(|(r, _)| r)
}

/// [`play_game`], also returning the player's searched decisions in order
/// (those with two or more legal actions), for the per-move table.
pub fn play_game_recorded<S: ValueStore>(
    searcher: &mut Searcher<S>,
    game: &GameConfig,
    source: InfoSource<'_>,
) -> Result<(GameRecord, Vec<SearchedDecision>), GameError> {
    play(searcher, game, source, true)
}

fn play<S: ValueStore>(
    searcher: &mut Searcher<S>,
    game: &GameConfig,
    source: InfoSource<'_>,
    record: bool,
) -> Result<(GameRecord, Vec<SearchedDecision>), GameError> {
    let rules = searcher.rules().clone();
    let deal = Deal::from_index(&rules, game.starting_state).ok_or(GameError::StartingState {
        index: game.starting_state,
        count: rules.starting_states(),
    })?;
    let rng = |stream| game_rng(game.seed, game.starting_state, game.repeat, stream);
    let streams = Streams::new(&deal, rng(Stream::Boneyard), rng(Stream::Target));
    let mut brain = Searching {
        searcher,
        game,
        source,
        world_rng: rng(Stream::Worlds),
        log_posterior: [0.0; 3],
        predictions: 0,
        correct: 0,
        nodes: 0,
        decisions: record.then(Vec::new),
        target_void: 0,
    };
    let p = run(&rules, &deal, streams, game.target, &mut brain);
    let record = GameRecord {
        leader: p.leader,
        player_score: p.scores[0],
        target_score: p.scores[1],
        score_diff: p.scores[0] as i32 - p.scores[1] as i32,
        ending: p.ending,
        turns: p.turns,
        player_draws: p.draws[0],
        target_draws: p.draws[1],
        predictions: brain.predictions,
        predictions_correct: brain.correct,
        nodes: brain.nodes,
        moves: p.moves,
    };
    Ok((record, brain.decisions.unwrap_or_default()))
}
