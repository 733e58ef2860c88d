//! Playing one game end to end, and replaying a move list to check it.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::board::Loc;
use crate::deal::Deal;
use crate::features::{FeatureTracker, Features};
use crate::position::{Action, ActionList, Position, Seat};
use crate::rules::Rules;
use crate::search::{PlayerView, Searcher};
use crate::seed::{Stream, below, game_rng, shuffle};
use crate::table::ValueStore;
use crate::targets::{EngineKind, OpponentModel, TargetKind, target_choice};
use crate::tiles::{bit, bits};
use rand_chacha::ChaCha20Rng;

/// What the player can see.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Observability {
    /// The player sees the target's hand (and so the boneyard's contents).
    Full,
    /// The player sees its own hand, the board and the history.
    Partial,
}

impl std::str::FromStr for Observability {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "full" => Ok(Observability::Full),
            "partial" => Ok(Observability::Partial),
            _ => Err(format!("unknown observability {s:?}: expected full or partial")),
        }
    }
}

impl fmt::Display for Observability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Observability::Full => "full",
            Observability::Partial => "partial",
        })
    }
}

/// The player's decision engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PlayerEngine {
    Expectimax,
    /// M* with the model named by the information source.
    MStar,
}

impl std::str::FromStr for PlayerEngine {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "expectimax" => Ok(PlayerEngine::Expectimax),
            "mstar" => Ok(PlayerEngine::MStar),
            _ => Err(format!("unknown engine {s:?}: expected mstar or expectimax")),
        }
    }
}

impl fmt::Display for PlayerEngine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PlayerEngine::Expectimax => "expectimax",
            PlayerEngine::MStar => "mstar",
        })
    }
}

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
    pub starting_state: u64,
    pub repeat: u64,
    pub engine: PlayerEngine,
    pub target: TargetKind,
    pub observability: Observability,
}

/// How a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ending {
    /// A seat emptied its hand.
    Domino,
    /// Two consecutive passes.
    Blocked,
}

impl fmt::Display for Ending {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Ending::Domino => "domino",
            Ending::Blocked => "blocked",
        })
    }
}

/// One event of a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Move {
    /// A play, with the points it scored from the count.
    Play {
        seat: Seat,
        tile: u8,
        loc: Loc,
        points: u32,
    },
    /// A tile drawn from the boneyard.
    Draw { seat: Seat, tile: u8 },
    /// A pass (no play, empty boneyard).
    Pass { seat: Seat },
}

impl Move {
    /// The move's token: `T33L` (play), `P23R+5` (scoring play), `Td01` (draw), `T-` (pass).
    pub fn token(&self, rules: &Rules) -> String {
        match *self {
            Move::Play {
                seat,
                tile,
                loc,
                points,
            } => {
                let mut s = format!("{}{}{}", seat.letter(), rules.tile_name(tile), loc.letter());
                if points > 0 {
                    s.push_str(&format!("+{points}"));
                }
                s
            }
            Move::Draw { seat, tile } => format!("{}d{}", seat.letter(), rules.tile_name(tile)),
            Move::Pass { seat } => format!("{}-", seat.letter()),
        }
    }
}

/// Everything recorded of one game.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameRecord {
    pub leader: Seat,
    pub player_score: u32,
    pub target_score: u32,
    /// player_score - target_score.
    pub score_diff: i32,
    pub ending: Ending,
    /// Plays and passes.
    pub turns: u32,
    pub player_draws: u32,
    pub target_draws: u32,
    /// Searched M* decisions (each makes one prediction of the target type).
    pub predictions: u32,
    pub predictions_correct: u32,
    /// Positions valued at the roots of the player's searched decisions.
    pub nodes: u64,
    pub moves: Vec<Move>,
}

impl GameRecord {
    /// The move list as space-separated tokens (see [`Move::token`]).
    pub fn moves_text(&self, rules: &Rules) -> String {
        let tokens: Vec<String> = self.moves.iter().map(|m| m.token(rules)).collect();
        tokens.join(" ")
    }
    pub fn win_or_tie(&self) -> bool {
        self.score_diff >= 0
    }
}

/// A game that cannot be played as asked.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GameError {
    #[error("starting_state = {index} is out of range: these rules have {count} starting states (0-{})", count - 1)]
    StartingState { index: u64, count: u64 },
}

/// Who makes the player's moves in [`run`], and what it hears of the target.
trait PlayerBrain {
    /// Chooses among `actions` (two or more, or one for policies that draw
    /// from a stream on every decision).
    fn choose(&mut self, pos: &Position, actions: &[Action], tracker: &FeatureTracker) -> usize;
    /// Whether a single legal action is played without asking [`Self::choose`].
    fn skips_forced(&self) -> bool {
        true
    }
    /// The target is about to play `action` at `pos` (its hand after any draws).
    fn target_decides(&mut self, _pos: &Position, _action: Action, _actions: &[Action]) {}
    /// The target finished a turn; `features` are those after it.
    fn target_turn(&mut self, _features: &Features) {}
}

/// What [`run`] returns besides the brain's own counts.
struct Played {
    leader: Seat,
    scores: [u32; 2],
    draws: [u32; 2],
    turns: u32,
    ending: Ending,
    moves: Vec<Move>,
}

/// The random streams of one game.
struct Streams {
    boneyard: [u8; 64],
    target: ChaCha20Rng,
}

impl Streams {
    fn new(deal: &Deal, mut shuffle_rng: ChaCha20Rng, target: ChaCha20Rng) -> Streams {
        let mut boneyard = [0u8; 64];
        let size = deal.boneyard.count_ones() as usize;
        for (slot, t) in boneyard.iter_mut().zip(bits(deal.boneyard)) {
            *slot = t;
        }
        shuffle(&mut shuffle_rng, &mut boneyard[..size]);
        Streams { boneyard, target }
    }
}

/// The game loop shared by searched games and training games.
fn run(rules: &Rules, deal: &Deal, mut streams: Streams, target: TargetKind, brain: &mut impl PlayerBrain) -> Played {
    let mut next_draw = 0;
    let mut pos = Position::start(rules, deal);
    let leader = pos.mover;
    let mut tracker = FeatureTracker::default();
    let mut scores = [0u32; 2];
    let mut draws = [0u32; 2];
    let mut turns = 0u32;
    let mut moves = Vec::with_capacity(32);
    let mut list = ActionList::default();
    let ending = loop {
        pos.actions(rules, &mut list);
        let seat = pos.mover;
        if list.is_empty() {
            if pos.boneyard != 0 {
                let tile = streams.boneyard[next_draw];
                next_draw += 1;
                debug_assert!(pos.boneyard & bit(tile) != 0);
                pos.draw(tile);
                draws[seat as usize] += 1;
                if seat == Seat::Player {
                    tracker.opponent_drew();
                }
                moves.push(Move::Draw { seat, tile });
                continue;
            }
            let step = pos.pass(rules);
            moves.push(Move::Pass { seat });
            turns += 1;
            if seat == Seat::Target {
                let f = tracker.turn(0, &pos.board);
                brain.target_turn(&f);
            }
            if step.terminal {
                add_signed(&mut scores, step.reward);
                break Ending::Blocked;
            }
            continue;
        }
        let acts = list.as_slice();
        let index = match seat {
            Seat::Target => {
                let i = match target {
                    // One draw from the target stream per decision, however many actions.
                    TargetKind::Random => below(&mut streams.target, acts.len() as u64) as usize,
                    kind => target_choice(rules, kind, &pos, acts).expect("deterministic target"),
                };
                brain.target_decides(&pos, acts[i], acts);
                i
            }
            Seat::Player if acts.len() == 1 && brain.skips_forced() => 0,
            Seat::Player => brain.choose(&pos, acts, &tracker),
        };
        let Action { tile, loc } = acts[index];
        let step = pos.play(rules, acts[index]);
        turns += 1;
        scores[seat as usize] += (step.reward * seat.sign()) as u32;
        moves.push(Move::Play {
            seat,
            tile,
            loc,
            points: step.count_points,
        });
        if seat == Seat::Target {
            let f = tracker.turn(step.count_points, &pos.board);
            brain.target_turn(&f);
        }
        if step.terminal {
            break Ending::Domino;
        }
    };
    Played {
        leader,
        scores,
        draws,
        turns,
        ending,
        moves,
    }
}

/// Likelihoods below this are raised to it, so that one surprising action
/// (a world sample that missed, say) cannot rule a type out for good.
pub const BAYES_FLOOR: f64 = 1e-3;

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
}

impl<S: ValueStore> Searching<'_, '_, S> {
    fn posterior(&self) -> [f64; 3] {
        let m = self.log_posterior.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let e = self.log_posterior.map(|l| (l - m).exp());
        let z: f64 = e.iter().sum();
        e.map(|x| x / z)
    }
}

/// The most probable type (ties: the first of random, scorer, defender).
fn most_probable(p: &[f64; 3]) -> TargetKind {
    let mut best = 0;
    for k in 1..3 {
        if p[k] > p[best] {
            best = k;
        }
    }
    TargetKind::ALL[best]
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
                self.searcher
                    .decide_partial_mix(&PlayerView::of(pos), &mix[..n], &mut self.world_rng)
            }
        };
        self.nodes += d.evaluations;
        d.index
    }

    fn target_decides(&mut self, pos: &Position, action: Action, _actions: &[Action]) {
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
            &mut self.world_rng,
        );
        for k in 0..3 {
            self.log_posterior[k] += lik[k].max(BAYES_FLOOR).ln();
        }
    }
}

/// P(action | type) for random, scorer and defender, from the player's view of
/// the target's decision at `pos`: the belief-weighted share of worlds (the
/// true one under full observation) in which the type's policy picks `action`;
/// for random, the weighted average of 1/|legal actions| over the worlds where
/// `action` is legal (0 elsewhere).
pub fn likelihoods(
    rules: &Rules,
    pos: &Position,
    action: Action,
    observability: Observability,
    config: &crate::search::SearchConfig,
    rng: &mut impl rand_core::RngCore,
) -> [f64; 3] {
    let mut worlds = crate::worlds::Worlds::default();
    let target_hand = pos.hands[Seat::Target as usize];
    match observability {
        Observability::Full => worlds.fill(
            rules,
            target_hand,
            target_hand.count_ones(),
            crate::worlds::WorldCount::All,
            config.belief,
            rng,
        ),
        Observability::Partial => worlds.fill(
            rules,
            target_hand | pos.boneyard,
            target_hand.count_ones(),
            config.worlds,
            config.belief,
            rng,
        ),
    }
    let mut sums = [0.0f64; 3];
    let mut total = 0.0;
    let mut list = ActionList::default();
    for w in worlds.as_slice() {
        total += w.weight;
        let p = Position {
            hands: [pos.hands[0], w.target],
            boneyard: w.boneyard,
            ..*pos
        };
        p.actions(rules, &mut list);
        let acts = list.as_slice();
        let Some(i) = acts.iter().position(|&a| a == action) else {
            continue;
        };
        sums[0] += w.weight / acts.len() as f64;
        for (k, kind) in [(1, TargetKind::Scorer), (2, TargetKind::Defender)] {
            if target_choice(rules, kind, &p, acts) == Some(i) {
                sums[k] += w.weight;
            }
        }
    }
    sums.map(|s| s / total.max(f64::MIN_POSITIVE))
}

/// Plays one game and records it. The result depends only on the rules, the
/// search settings, `game` and `source`, never on what `searcher`'s table holds.
pub fn play_game<S: ValueStore>(
    searcher: &mut Searcher<S>,
    game: &GameConfig,
    source: InfoSource<'_>,
) -> Result<GameRecord, GameError> {
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
    };
    let p = run(&rules, &deal, streams, game.target, &mut brain);
    Ok(GameRecord {
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
    })
}

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
    pub index: u64,
    pub starting_state: u64,
    pub player: TargetKind,
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

fn add_signed(scores: &mut [u32; 2], reward: i32) {
    if reward > 0 {
        scores[0] += reward as u32;
    } else {
        scores[1] += (-reward) as u32;
    }
}

/// A move list that does not follow the rules from its deal.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("move {index} ({token}): {reason}")]
pub struct ReplayError {
    pub index: usize,
    pub token: String,
    pub reason: String,
}

/// What a replayed move list adds up to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Replayed {
    pub player_score: u32,
    pub target_score: u32,
    pub ending: Ending,
    pub turns: u32,
}

/// Replays `moves` from `deal`, checking that every move is legal when it is
/// made (right seat, legal play, draws only when forced and from the boneyard,
/// passes only when forced, the points of each play) and that the list ends
/// exactly when the game does.
pub fn replay(rules: &Rules, deal: &Deal, moves: &[Move]) -> Result<Replayed, ReplayError> {
    let mut pos = Position::start(rules, deal);
    let mut scores = [0u32; 2];
    let mut turns = 0;
    let mut list = ActionList::default();
    for (index, m) in moves.iter().enumerate() {
        let fail = |reason: String| ReplayError {
            index,
            token: m.token(rules),
            reason,
        };
        pos.actions(rules, &mut list);
        let seat = match *m {
            Move::Play { seat, .. } | Move::Draw { seat, .. } | Move::Pass { seat } => seat,
        };
        if seat != pos.mover {
            return Err(fail(format!("it is {:?}'s turn", pos.mover)));
        }
        let ended = match *m {
            Move::Play { tile, loc, points, .. } => {
                let a = Action { tile, loc };
                if !list.as_slice().contains(&a) {
                    return Err(fail("not a legal play here".into()));
                }
                let step = pos.play(rules, a);
                if step.count_points != points {
                    return Err(fail(format!(
                        "the play scores {} points, not {points}",
                        step.count_points
                    )));
                }
                turns += 1;
                scores[seat as usize] += (step.reward * seat.sign()) as u32;
                step.terminal.then_some(Ending::Domino)
            }
            Move::Draw { tile, .. } => {
                if !list.is_empty() {
                    return Err(fail("a seat with a legal play may not draw".into()));
                }
                if pos.boneyard & bit(tile) == 0 {
                    return Err(fail("the tile is not in the boneyard".into()));
                }
                pos.draw(tile);
                None
            }
            Move::Pass { .. } => {
                if !list.is_empty() || pos.boneyard != 0 {
                    return Err(fail("a pass needs no legal play and an empty boneyard".into()));
                }
                turns += 1;
                let step = pos.pass(rules);
                if step.terminal {
                    add_signed(&mut scores, step.reward);
                }
                step.terminal.then_some(Ending::Blocked)
            }
        };
        if let Some(ending) = ended {
            if index + 1 != moves.len() {
                return Err(fail("the game ended here but moves follow".into()));
            }
            return Ok(Replayed {
                player_score: scores[0],
                target_score: scores[1],
                ending,
                turns,
            });
        }
    }
    Err(ReplayError {
        index: moves.len(),
        token: String::new(),
        reason: "the move list ends before the game does".into(),
    })
}
