//! Playing one game end to end, and replaying a move list to check it.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::board::Loc;
use crate::deal::Deal;
use crate::features::FeatureTracker;
use crate::position::{Action, ActionList, Position, Seat};
use crate::rules::Rules;
use crate::search::{PlayerView, Searcher};
use crate::seed::{Stream, below, game_rng, shuffle};
use crate::table::ValueStore;
use crate::targets::{EngineKind, OpponentModel, TargetKind, target_choice};
use crate::tiles::{bit, bits};

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
            _ => Err(format!(
                "unknown observability {s:?}: expected full or partial"
            )),
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
            _ => Err(format!(
                "unknown engine {s:?}: expected mstar or expectimax"
            )),
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
}

impl fmt::Debug for InfoSource<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InfoSource::Oracle => f.write_str("Oracle"),
            InfoSource::Classifier(_) => f.write_str("Classifier"),
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

/// Plays one game and records it. The result depends only on the rules, the
/// search settings, `game` and `source`, never on what `searcher`'s table holds.
pub fn play_game<S: ValueStore>(
    searcher: &mut Searcher<S>,
    game: &GameConfig,
    source: InfoSource<'_>,
) -> Result<GameRecord, GameError> {
    let rules = searcher.rules().clone();
    let rules = &rules;
    let deal = Deal::from_index(rules, game.starting_state).ok_or(GameError::StartingState {
        index: game.starting_state,
        count: rules.starting_states(),
    })?;
    let rng = |stream| game_rng(game.seed, game.starting_state, game.repeat, stream);
    let mut boneyard_order = [0u8; 64];
    let size = deal.boneyard.count_ones() as usize;
    for (slot, t) in boneyard_order.iter_mut().zip(bits(deal.boneyard)) {
        *slot = t;
    }
    shuffle(&mut rng(Stream::Boneyard), &mut boneyard_order[..size]);
    let mut next_draw = 0;
    let mut target_rng = rng(Stream::Target);
    let mut world_rng = rng(Stream::Worlds);

    let mut pos = Position::start(rules, &deal);
    let leader = pos.mover;
    let mut tracker = FeatureTracker::default();
    let mut scores = [0u32; 2];
    let mut draws = [0u32; 2];
    let (mut turns, mut predictions, mut correct, mut nodes) = (0u32, 0u32, 0u32, 0u64);
    let mut moves = Vec::with_capacity(32);
    let mut list = ActionList::default();
    let ending = loop {
        pos.actions(rules, &mut list);
        let seat = pos.mover;
        if list.is_empty() {
            if pos.boneyard != 0 {
                let tile = boneyard_order[next_draw];
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
                tracker.turn(0, &pos.board);
            }
            if step.terminal {
                add_signed(&mut scores, step.reward);
                break Ending::Blocked;
            }
            continue;
        }
        let acts = list.as_slice();
        let index = match seat {
            Seat::Target => match game.target {
                // One draw from the target stream per decision, however many actions.
                TargetKind::Random => below(&mut target_rng, acts.len() as u64) as usize,
                kind => target_choice(rules, kind, &pos, acts).expect("deterministic target"),
            },
            Seat::Player if acts.len() == 1 => 0,
            Seat::Player => {
                let kind = match game.engine {
                    PlayerEngine::Expectimax => EngineKind::Expectimax,
                    PlayerEngine::MStar => {
                        let model = match source {
                            InfoSource::Oracle => game.target,
                            InfoSource::Classifier(m) => match tracker.latest() {
                                Some(f) => m.predict(&f),
                                None => m.prior(),
                            },
                        };
                        predictions += 1;
                        correct += (model == game.target) as u32;
                        EngineKind::MStar(model)
                    }
                };
                let d = match game.observability {
                    Observability::Full => searcher.decide_full(&pos, kind),
                    Observability::Partial => {
                        searcher.decide_partial(&PlayerView::of(&pos), kind, &mut world_rng)
                    }
                };
                nodes += d.evaluations;
                d.index
            }
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
            tracker.turn(step.count_points, &pos.board);
        }
        if step.terminal {
            break Ending::Domino;
        }
    };
    Ok(GameRecord {
        leader,
        player_score: scores[0],
        target_score: scores[1],
        score_diff: scores[0] as i32 - scores[1] as i32,
        ending,
        turns,
        player_draws: draws[0],
        target_draws: draws[1],
        predictions,
        predictions_correct: correct,
        nodes,
        moves,
    })
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
            Move::Play {
                tile, loc, points, ..
            } => {
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
                    return Err(fail(
                        "a pass needs no legal play and an empty boneyard".into(),
                    ));
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
