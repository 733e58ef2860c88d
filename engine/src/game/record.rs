//! What a game leaves behind: its record, its moves, and the replay that
//! checks a move list against the rules.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::board::Loc;
use crate::deal::Deal;
use crate::position::{Action, ActionList, Position, Seat};
use crate::rules::Rules;
use crate::tiles::bit;

/// What the player can see.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
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

/// The player's decision engine: the one engine type of muggins. The
/// spec (`engine = ...`), `muggins play --agent`, the Python `Bot` and the
/// rows all name an engine through [`FromStr`](std::str::FromStr) and
/// [`Display`](fmt::Display) here, and its facts ([`values_leaves`],
/// [`SEARCHES`]) are read from here: adding an engine is one variant and
/// its name in [`PlayerEngine::name`].
///
/// [`values_leaves`]: PlayerEngine::values_leaves
/// [`SEARCHES`]: PlayerEngine::SEARCHES
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PlayerEngine {
    /// Expectimax: the target is taken to minimise the player's score difference.
    Expectimax,
    /// M* with the model named by the information source.
    MStar,
    /// Information-set Monte Carlo tree search (the full game only).
    Ismcts,
    /// Seed 002's DominAI player (the full game only; docs/dominai.md).
    Dominai,
    /// A network's policy read from a model file (block and team;
    /// docs/rl.md, "Model files and the `net` engine"): it does not search.
    Net,
    /// An agent outside muggins on the named agent's side (docs/agents.md):
    /// it appears in rows, never in a spec's `engine`.
    External,
}

impl PlayerEngine {
    /// The engines a spec, `muggins play` or a Python `Bot` may name: every
    /// search muggins runs itself (not [`PlayerEngine::External`]).
    pub const SEARCHES: [PlayerEngine; 4] = [
        PlayerEngine::MStar,
        PlayerEngine::Expectimax,
        PlayerEngine::Ismcts,
        PlayerEngine::Dominai,
    ];

    /// Every engine a spec, `muggins play` or a Python `Bot` may name: the
    /// searches and a network's policy.
    pub const NAMED: [PlayerEngine; 5] = [
        PlayerEngine::MStar,
        PlayerEngine::Expectimax,
        PlayerEngine::Ismcts,
        PlayerEngine::Dominai,
        PlayerEngine::Net,
    ];

    /// Every engine, as rows may name it.
    pub const ALL: [PlayerEngine; 6] = [
        PlayerEngine::MStar,
        PlayerEngine::Expectimax,
        PlayerEngine::Ismcts,
        PlayerEngine::Dominai,
        PlayerEngine::Net,
        PlayerEngine::External,
    ];

    /// Its name in specs, on the command line, in Python and in rows.
    pub fn name(self) -> &'static str {
        match self {
            PlayerEngine::Expectimax => "expectimax",
            PlayerEngine::MStar => "mstar",
            PlayerEngine::Ismcts => "ismcts",
            PlayerEngine::Dominai => "dominai",
            PlayerEngine::Net => "net",
            PlayerEngine::External => "external",
        }
    }

    /// Whether the engine values depth-limited leaves (the alpha-beta
    /// searches M* and Expectimax): what a learned evaluation, shaping and
    /// adaptive effort apply to. ISMCTS plays out to the hand's end, DominAI
    /// keeps its own rules.
    pub fn values_leaves(self) -> bool {
        matches!(self, PlayerEngine::MStar | PlayerEngine::Expectimax)
    }

    /// The names of `engines` joined by `and` or `or` for a message:
    /// `mstar, expectimax or ismcts`.
    pub fn listed(engines: &[PlayerEngine], conjunction: &str) -> String {
        let names: Vec<&str> = engines.iter().map(|e| e.name()).collect();
        match names.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} {conjunction} {last}", rest.join(", ")),
            _ => names.concat(),
        }
    }
}

impl std::str::FromStr for PlayerEngine {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        PlayerEngine::ALL.into_iter().find(|e| e.name() == s).ok_or_else(|| {
            format!(
                "unknown engine {s:?}: expected {}",
                PlayerEngine::listed(&PlayerEngine::NAMED, "or")
            )
        })
    }
}

impl fmt::Display for PlayerEngine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Ending {
    /// A seat emptied its hand.
    Domino,
    /// Two consecutive passes.
    Blocked,
    /// A seat played by a program outside muggins gave the game up (an
    /// illegal action, a time-out, a crash; never from the engine itself).
    Forfeit,
}

impl fmt::Display for Ending {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Ending::Domino => "domino",
            Ending::Blocked => "blocked",
            Ending::Forfeit => "forfeit",
        })
    }
}

/// One event of a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Move {
    /// A play, with the points it scored from the count.
    Play {
        /// The seat that played.
        seat: Seat,
        /// Index of the tile played.
        tile: u8,
        /// Where it was played.
        loc: Loc,
        /// Points from the count: 0 or a positive multiple of 5 (a domino's
        /// pips are not included).
        points: u32,
    },
    /// A tile drawn from the boneyard.
    Draw {
        /// The seat that drew (it had no legal play).
        seat: Seat,
        /// Index of the tile drawn.
        tile: u8,
    },
    /// A pass (no play, empty boneyard).
    Pass {
        /// The seat that passed.
        seat: Seat,
    },
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
    /// The seat that made the first play.
    pub leader: Seat,
    /// The player's points: count points, domino pips and the blocked-game
    /// difference.
    pub player_score: u32,
    /// The target's points, made up as `player_score` is.
    pub target_score: u32,
    /// player_score - target_score.
    pub score_diff: i32,
    /// How the game ended.
    pub ending: Ending,
    /// Plays and passes.
    pub turns: u32,
    /// Tiles the player drew from the boneyard.
    pub player_draws: u32,
    /// Tiles the target drew from the boneyard.
    pub target_draws: u32,
    /// Searched M* decisions (each makes one prediction of the target type).
    pub predictions: u32,
    /// Predictions equal to the true target type (all of them under the
    /// oracle source).
    pub predictions_correct: u32,
    /// Positions valued at the roots of the player's searched decisions.
    pub nodes: u64,
    /// Every play, draw and pass in order; [`replay`] checks them against the deal.
    pub moves: Vec<Move>,
}

impl GameRecord {
    /// The move list as space-separated tokens (see [`Move::token`]).
    pub fn moves_text(&self, rules: &Rules) -> String {
        let tokens: Vec<String> = self.moves.iter().map(|m| m.token(rules)).collect();
        tokens.join(" ")
    }
    /// Whether the player won or tied: score_diff >= 0.
    pub fn win_or_tie(&self) -> bool {
        self.score_diff >= 0
    }
}

/// A game that cannot be played as asked.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GameError {
    /// The starting state is not below the number of starting states.
    #[error("starting_state = {index} is out of range: these rules have {count} starting states (0-{})", count - 1)]
    StartingState {
        /// The starting state asked for.
        index: u64,
        /// The number of starting states of the rules ([`Rules::starting_states`]).
        count: u64,
    },
}

/// A move list that does not follow the rules from its deal.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("move {index} ({token}): {reason}")]
pub struct ReplayError {
    /// Position of the offending move in the list; the list's length when it
    /// ends before the game does.
    pub index: usize,
    /// The offending move's token (see [`Move::token`]); empty when the list
    /// ends before the game does.
    pub token: String,
    /// What is wrong with the move.
    pub reason: String,
}

/// What a replayed move list adds up to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Replayed {
    /// The player's points over the game.
    pub player_score: u32,
    /// The target's points over the game.
    pub target_score: u32,
    /// How the game ended.
    pub ending: Ending,
    /// Plays and passes (draws are not turns).
    pub turns: u32,
}

/// One move of a replay, just after it was made.
#[derive(Clone, Copy, Debug)]
pub struct ReplayStep<'a> {
    /// The move's position in the list.
    pub index: usize,
    /// The move.
    pub mv: &'a Move,
    /// The position after the move.
    pub position: &'a Position,
    /// The player's points so far.
    pub player_score: u32,
    /// The target's points so far.
    pub target_score: u32,
    /// Plays and passes so far (draws are not turns).
    pub turns: u32,
}

/// Replays `moves` from `deal`, checking that every move is legal when it is
/// made (right seat, legal play, draws only when forced and from the boneyard,
/// passes only when forced, the points of each play) and that the list ends
/// exactly when the game does.
pub fn replay(rules: &Rules, deal: &Deal, moves: &[Move]) -> Result<Replayed, ReplayError> {
    replay_with(rules, deal, moves, |_| {})
}

/// [`replay`], calling `each` after every legal move (what `muggins play`
/// prints its move table from: the scores are the rules', not the caller's).
pub fn replay_with(
    rules: &Rules,
    deal: &Deal,
    moves: &[Move],
    mut each: impl FnMut(&ReplayStep<'_>),
) -> Result<Replayed, ReplayError> {
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
        each(&ReplayStep {
            index,
            mv: m,
            position: &pos,
            player_score: scores[0],
            target_score: scores[1],
            turns,
        });
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

/// Adds a signed step reward to the seats' scores: a positive reward to the
/// player, a negative one to the target.
pub(super) fn add_signed(scores: &mut [u32; 2], reward: i32) {
    if reward > 0 {
        scores[0] += reward as u32;
    } else {
        scores[1] += (-reward) as u32;
    }
}
