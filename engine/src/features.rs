//! The opponent features of docs/rules.md section 6 (the thesis's Table 8).

use serde::{Deserialize, Serialize};

use crate::board::Board;

/// The five features recorded after a target turn.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Features {
    /// Target points from plays so far / t (domino and blocked points excluded).
    pub points_per_turn: f64,
    /// Defense score of the board after the turn.
    pub defense: f64,
    /// Tiles drawn so far by the target's opponent / t.
    pub opponent_draws_per_turn: f64,
    /// Target scoring plays so far / t.
    pub scoring_plays_per_turn: f64,
    /// Count of the board after the turn.
    pub count: f64,
}

impl Features {
    /// The features in Table 8's order.
    pub fn to_array(&self) -> [f64; 5] {
        [
            self.points_per_turn,
            self.defense,
            self.opponent_draws_per_turn,
            self.scoring_plays_per_turn,
            self.count,
        ]
    }
}

/// Accumulates what the features need over one game, from one seat's point of
/// view (the seat being modelled).
#[derive(Clone, Copy, Debug, Default)]
pub struct FeatureTracker {
    turns: u32,
    points: u32,
    scoring_plays: u32,
    opponent_draws: u32,
    latest: Option<Features>,
}

impl FeatureTracker {
    /// The modelled seat's opponent drew a tile.
    pub fn opponent_drew(&mut self) {
        self.opponent_draws += 1;
    }

    /// The modelled seat finished a turn (a play scoring `count_points` from the
    /// count, or a pass when `count_points` is 0 and nothing was played);
    /// returns the features after it.
    pub fn turn(&mut self, count_points: u32, board: &Board) -> Features {
        self.turns += 1;
        self.points += count_points;
        if count_points > 0 {
            self.scoring_plays += 1;
        }
        let t = self.turns as f64;
        let f = Features {
            points_per_turn: self.points as f64 / t,
            defense: board.defense() as f64,
            opponent_draws_per_turn: self.opponent_draws as f64 / t,
            scoring_plays_per_turn: self.scoring_plays as f64 / t,
            count: board.count() as f64,
        };
        self.latest = Some(f);
        f
    }

    /// The features after the latest turn, if the seat has had one.
    pub fn latest(&self) -> Option<Features> {
        self.latest
    }

    /// Turns taken by the modelled seat.
    pub fn turns(&self) -> u32 {
        self.turns
    }
}
