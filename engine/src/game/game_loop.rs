//! The game loop shared by searched games and training games: the seeded
//! streams of one game, the player's brain that the loop asks for moves, and
//! [`run`], which plays a deal to its end and returns what happened.

use crate::deal::Deal;
use crate::features::{FeatureTracker, Features};
use crate::position::{Action, ActionList, Position, Seat};
use crate::rules::Rules;
use crate::seed::{below, shuffle};
use crate::targets::{TargetKind, target_choice};
use crate::tiles::{TileSet, bit, bits};
use rand_chacha::ChaCha20Rng;

use super::record::{Ending, Move, add_signed};

/// Who makes the player's moves in [`run`], and what it hears of the target.
pub(super) trait PlayerBrain {
    /// Chooses among `actions` (two or more, or one for policies that draw
    /// from a stream on every decision).
    fn choose(&mut self, pos: &Position, actions: &[Action], tracker: &FeatureTracker) -> usize;
    /// Whether a single legal action is played without asking [`Self::choose`].
    fn skips_forced(&self) -> bool {
        true
    }
    /// The target is about to play `action` at `pos` (its hand after any
    /// draws); `void`: tiles it has shown it lacks (empty if it drew this turn).
    fn target_decides(&mut self, _pos: &Position, _action: Action, _actions: &[Action], _void: TileSet) {}
    /// The target finished a turn; `features` are those after it.
    fn target_turn(&mut self, _features: &Features) {}
    /// The tiles the target has shown it cannot hold now (when it drew or
    /// passed, none of its tiles matched an open end; a tile it then drew
    /// and kept matched none of those ends either).
    fn target_void(&mut self, _void: TileSet) {}
}

/// The tiles that could be played on `board` (a seat that cannot play
/// holds none of them).
fn playable(rules: &Rules, board: &crate::board::Board) -> TileSet {
    let mut m = 0;
    for t in bits(rules.all_tiles()) {
        if crate::board::Loc::ALL[..board.open_locations()]
            .iter()
            .any(|&loc| board.accepts(rules, t, loc))
        {
            m |= bit(t);
        }
    }
    m
}

/// What [`run`] returns besides the brain's own counts.
pub(super) struct Played {
    pub(super) leader: Seat,
    pub(super) scores: [u32; 2],
    pub(super) draws: [u32; 2],
    pub(super) turns: u32,
    pub(super) ending: Ending,
    pub(super) moves: Vec<Move>,
}

/// The random streams of one game.
pub(super) struct Streams {
    boneyard: [u8; 64],
    target: ChaCha20Rng,
}

impl Streams {
    pub(super) fn new(deal: &Deal, mut shuffle_rng: ChaCha20Rng, target: ChaCha20Rng) -> Streams {
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
pub(super) fn run(
    rules: &Rules,
    deal: &Deal,
    mut streams: Streams,
    target: TargetKind,
    brain: &mut impl PlayerBrain,
) -> Played {
    let mut next_draw = 0;
    let mut pos = Position::start(rules, deal);
    let leader = pos.mover;
    let mut tracker = FeatureTracker::default();
    let mut scores = [0u32; 2];
    let mut draws = [0u32; 2];
    let mut turns = 0u32;
    let mut moves = Vec::with_capacity(32);
    let mut list = ActionList::default();
    let mut target_void: TileSet = 0;
    let mut target_drew = false;
    let ending = loop {
        pos.actions(rules, &mut list);
        let seat = pos.mover;
        if list.is_empty() {
            if seat == Seat::Target {
                let m = playable(rules, &pos.board);
                // Tiles drawn now may match what it lacked before.
                target_void = if pos.boneyard != 0 { m } else { target_void | m };
                target_drew |= pos.boneyard != 0;
                brain.target_void(target_void);
            }
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
                brain.target_decides(&pos, acts[i], acts, if target_drew { 0 } else { target_void });
                target_drew = false;
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
