//! A full-information game position and its transitions (docs/rules.md section 3).

use serde::{Deserialize, Serialize};

use crate::board::{Board, Loc};
use crate::deal::Deal;
use crate::rules::{Blocked, Lead, Rules};
use crate::tiles::{TileSet, bit, bits};

/// The two seats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Seat {
    /// The agent under test; its points count positively in score_diff.
    /// Index 0 of [`Position::hands`].
    Player = 0,
    /// The opponent, playing a fixed target strategy; its points count
    /// negatively in score_diff. Index 1 of [`Position::hands`].
    Target = 1,
}

impl Seat {
    /// The seat that moves after this one.
    #[inline]
    pub fn other(self) -> Seat {
        match self {
            Seat::Player => Seat::Target,
            Seat::Target => Seat::Player,
        }
    }
    /// +1 for the player, -1 for the target: the sign of this seat's points in score_diff.
    #[inline]
    pub fn sign(self) -> i32 {
        match self {
            Seat::Player => 1,
            Seat::Target => -1,
        }
    }
    /// The seat's letter in move tokens: `P` or `T`.
    pub fn letter(self) -> char {
        match self {
            Seat::Player => 'P',
            Seat::Target => 'T',
        }
    }
}

/// Playing `tile` at `loc`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Action {
    /// Index of the tile in the set's canonical order; it comes from the
    /// mover's hand.
    pub tile: u8,
    /// Where the tile goes; [`Loc::Left`] for the first tile of a game.
    pub loc: Loc,
}

/// Most actions a seat can ever have: a free lead from a full hand (55 tiles at
/// most) or four locations with at most ten tiles each.
const MAX_ACTIONS: usize = 64;

/// A fixed-capacity list of actions, filled by move generation without allocating.
#[derive(Clone, Copy, Debug)]
pub struct ActionList {
    len: u8,
    items: [Action; MAX_ACTIONS],
}

impl Default for ActionList {
    fn default() -> Self {
        ActionList {
            len: 0,
            items: [Action {
                tile: 0,
                loc: Loc::Left,
            }; MAX_ACTIONS],
        }
    }
}

impl ActionList {
    /// Appends an action (the list holds at most 64; the engines' move
    /// generators never exceed that).
    #[inline]
    pub fn push(&mut self, a: Action) {
        self.items[self.len as usize] = a;
        self.len += 1;
    }
    /// Empties the list, for reuse without allocating.
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
    }
    /// Number of actions held (at most 64).
    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }
    /// Whether the list holds no action: after [`Position::actions`], the
    /// mover must draw, or pass if the boneyard is empty.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The actions in the order they were added (canonical order after
    /// [`Position::actions`]).
    #[inline]
    pub fn as_slice(&self) -> &[Action] {
        &self.items[..self.len as usize]
    }
}

/// What a play or pass did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// Change of score_diff (player minus target) caused by this step.
    pub reward: i32,
    /// Points the mover scored from the count (0 or a positive multiple of 5).
    pub count_points: u32,
    /// Whether the game is over after this step.
    pub terminal: bool,
}

/// A full-information position: both hands, the boneyard's contents, the board,
/// whose turn it is and whether the previous turn was a pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Position {
    /// The two hands, indexed by [`Seat`] (`hands[Seat::Player as usize]`).
    pub hands: [TileSet; 2],
    /// The tiles left to draw. Full information covers its contents, not
    /// its order: draws are chance events.
    pub boneyard: TileSet,
    /// The line of play.
    pub board: Board,
    /// The seat whose turn it is: to play, or to draw or pass when it has no play.
    pub mover: Seat,
    /// 1 if the previous turn was a pass, else 0.
    pub passes: u8,
}

impl Position {
    /// The opening position of a deal: the leader is to move.
    pub fn start(rules: &Rules, deal: &Deal) -> Position {
        let hands = [deal.player, deal.target];
        let mover = match rules.config().lead {
            Lead::HighestDouble => forced_lead(rules, hands).0,
            Lead::Player => Seat::Player,
            Lead::Target => Seat::Target,
        };
        Position {
            hands,
            boneyard: deal.boneyard,
            board: Board::default(),
            mover,
            passes: 0,
        }
    }

    /// Tiles on the board.
    #[inline]
    pub fn board_tiles(&self, rules: &Rules) -> TileSet {
        rules.all_tiles() & !(self.hands[0] | self.hands[1] | self.boneyard)
    }

    /// The mover's legal plays in canonical order (tile ascending, then Left,
    /// Right, Up, Down). Empty means the mover must draw, or pass if the
    /// boneyard is empty.
    #[inline]
    pub fn actions(&self, rules: &Rules, out: &mut ActionList) {
        out.len = 0;
        let hand = self.hands[self.mover as usize];
        if self.board.is_empty() {
            match rules.config().lead {
                Lead::HighestDouble => {
                    let (_, tile) = forced_lead(rules, self.hands);
                    if hand & bit(tile) != 0 {
                        out.push(Action { tile, loc: Loc::Left });
                    }
                }
                Lead::Player | Lead::Target => {
                    for tile in bits(hand) {
                        out.push(Action { tile, loc: Loc::Left });
                    }
                }
            }
            return;
        }
        let n = self.board.open_locations();
        let mut masks = [0u64; 4];
        let mut any = 0;
        for (i, m) in masks.iter_mut().enumerate().take(n) {
            let pip = self.board.exposed(Loc::ALL[i]).unwrap_or(0);
            *m = hand & rules.with_pip(pip);
            any |= *m;
        }
        for tile in bits(any) {
            for i in 0..n {
                if masks[i] & bit(tile) != 0 {
                    out.push(Action { tile, loc: Loc::ALL[i] });
                }
            }
        }
    }

    /// Plays an action of the mover (legal by construction of [`Self::actions`]).
    #[inline]
    pub fn play(&mut self, rules: &Rules, a: Action) -> Step {
        let me = self.mover as usize;
        self.hands[me] &= !bit(a.tile);
        self.board.play(rules, a.tile, a.loc);
        self.passes = 0;
        let count = self.board.count();
        let count_points = if count > 0 && count.is_multiple_of(5) { count } else { 0 };
        let mut gained = count_points as i32;
        let terminal = self.hands[me] == 0;
        if terminal {
            // Domino: the mover also scores the pips left in the other hand.
            gained += rules.pip_total(self.hands[1 - me]) as i32;
        }
        let reward = self.mover.sign() * gained;
        self.mover = self.mover.other();
        Step {
            reward,
            count_points,
            terminal,
        }
    }

    /// Moves `tile` from the boneyard into the mover's hand.
    #[inline]
    pub fn draw(&mut self, tile: u8) {
        debug_assert!(self.boneyard & bit(tile) != 0);
        self.boneyard &= !bit(tile);
        self.hands[self.mover as usize] |= bit(tile);
    }

    /// The mover passes (it has no play and the boneyard is empty). A second
    /// consecutive pass blocks the game and scores it.
    #[inline]
    pub fn pass(&mut self, rules: &Rules) -> Step {
        self.mover = self.mover.other();
        if self.passes == 1 {
            return Step {
                reward: self.blocked_reward(rules),
                count_points: 0,
                terminal: true,
            };
        }
        self.passes = 1;
        Step {
            reward: 0,
            count_points: 0,
            terminal: false,
        }
    }

    /// The score_diff change of a blocked ending under the `blocked` rule.
    pub fn blocked_reward(&self, rules: &Rules) -> i32 {
        match rules.config().blocked {
            Blocked::None => 0,
            // The lower pip total scores the difference: +diff for the player
            // when its total is lower, -diff when the target's is.
            Blocked::Difference => rules.pip_total(self.hands[1]) as i32 - rules.pip_total(self.hands[0]) as i32,
        }
    }
}

/// The seat that must open under `lead = highest-double`, and the tile: the
/// highest double in either hand, else the heaviest tile (pip sum, then high pip).
pub(crate) fn forced_lead(rules: &Rules, hands: [TileSet; 2]) -> (Seat, u8) {
    let both = hands[0] | hands[1];
    let mut best: Option<(u8, (bool, u32, u8))> = None;
    for tile in bits(both) {
        let (a, b) = rules.pips(tile);
        // Doubles first, then by pip sum, then by high pip.
        let rank = (a == b, (a + b) as u32, b);
        if best.is_none_or(|(_, r)| rank > r) {
            best = Some((tile, rank));
        }
    }
    let (tile, _) = best.expect("hands are never both empty at the start");
    let seat = if hands[0] & bit(tile) != 0 {
        Seat::Player
    } else {
        Seat::Target
    };
    (seat, tile)
}
