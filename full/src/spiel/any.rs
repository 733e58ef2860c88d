//! A state of any preset: OpenSpiel's block and team ([`OpenSpielState`])
//! or All Fives and the thesis's rules ([`FivesState`]) behind one type, so
//! that what stands on this layer (the Python package, the reinforcement-
//! learning environments) matches on the game once, here. The game facts a
//! caller needs (the number of action ids, the bounds of a return, the
//! longest game) are read from here too.

use super::SpielError;
use engine::TileSet;
use rand_core::RngCore;

use super::{FivesState, OpenSpielState, View};
use crate::rules::{FullRules, Preset};

/// A state of any preset.
#[derive(Clone, Debug)]
pub enum SpielState {
    Open(OpenSpielState),
    Fives(FivesState),
}

impl SpielState {
    /// A game under `rules` before the deal: block and team are OpenSpiel's
    /// games; All Fives and the thesis's rules one hand, or with `to` > 0 a
    /// match to `to`.
    pub fn new(rules: FullRules, to: u32) -> SpielState {
        if rules.kind() == Preset::AllFives {
            SpielState::Fives(FivesState::new(rules, to))
        } else {
            SpielState::Open(OpenSpielState::new(rules))
        }
    }

    pub fn rules(&self) -> &FullRules {
        match self {
            SpielState::Open(c) => &c.rules,
            SpielState::Fives(c) => c.rules(),
        }
    }

    /// The player to act: a seat, [`super::CHANCE`] or [`super::TERMINAL`].
    pub fn current_player(&self) -> i64 {
        match self {
            SpielState::Open(c) => c.current_player(),
            SpielState::Fives(c) => c.current_player(),
        }
    }

    pub fn is_terminal(&self) -> bool {
        self.current_player() == super::TERMINAL
    }

    /// The legal actions, ascending (at a chance node, the outcomes).
    pub fn legal_actions(&self) -> Vec<u32> {
        match self {
            SpielState::Open(c) => c.legal_actions(),
            SpielState::Fives(c) => c.legal_actions(),
        }
    }

    /// Applies `action`, or says why it is not legal.
    pub fn apply(&mut self, action: u32) -> Result<(), SpielError> {
        match self {
            SpielState::Open(c) => c.apply(action),
            SpielState::Fives(c) => c.apply(action),
        }
    }

    /// [`apply`](Self::apply) of a player's action that its caller took
    /// from [`legal_ids`](Self::legal_ids) of this very state: All Fives
    /// does not list the legal actions again (block and team check an
    /// action without a list, and do as `apply`).
    pub fn apply_legal(&mut self, action: u32) -> Result<(), SpielError> {
        match self {
            SpielState::Open(c) => c.apply(action),
            SpielState::Fives(c) => {
                c.apply_legal(action);
                Ok(())
            }
        }
    }

    /// Every seat's return (zeros until the end).
    pub fn returns(&self) -> Vec<f64> {
        match self {
            SpielState::Open(c) => c.returns(),
            SpielState::Fives(c) => c.returns(),
        }
    }

    /// Every action so far, chance actions included.
    pub fn history(&self) -> &[u32] {
        match self {
            SpielState::Open(c) => &c.history,
            SpielState::Fives(c) => &c.history,
        }
    }

    /// The string of `action` taken by `player` (`CHANCE`: a tile dealt or drawn).
    pub fn action_string(&self, player: i64, action: u32) -> String {
        match self {
            SpielState::Open(c) => c.action_string(player, action),
            SpielState::Fives(c) => c.action_string(player, action),
        }
    }

    pub fn observation_string(&self, player: u8, view: View) -> String {
        match self {
            SpielState::Open(c) => c.observation_string(player, view),
            SpielState::Fives(c) => c.observation_string(player, view),
        }
    }

    pub fn tensor(&self, player: u8, view: View) -> Vec<f32> {
        match self {
            SpielState::Open(c) => c.tensor(player, view),
            SpielState::Fives(c) => c.tensor(player, view),
        }
    }

    pub fn tensor_pieces(&self, view: View) -> Vec<(&'static str, Vec<usize>)> {
        match self {
            SpielState::Open(c) => c.tensor_pieces(view),
            SpielState::Fives(c) => c.tensor_pieces(view),
        }
    }

    /// The tiles `seat` holds now.
    pub fn hand_of(&self, seat: u8) -> TileSet {
        match self {
            SpielState::Open(c) => c.lists[seat as usize].iter().fold(0, |m, &t| m | 1 << t),
            SpielState::Fives(c) => c.hand_of(seat),
        }
    }

    /// The tiles of the boneyard now (none before the deal is done).
    pub fn boneyard(&self) -> TileSet {
        match self {
            SpielState::Open(c) => c.pos.as_ref().map_or(0, |p| p.boneyard),
            SpielState::Fives(c) => c.pos.as_ref().map_or(0, |p| p.boneyard),
        }
    }

    /// The holders a belief head places a tile with: the other seats and
    /// the boneyard (the game's seats in all; see [`Self::holders`]).
    pub fn belief_holders(&self) -> usize {
        self.rules().seats() as usize
    }

    /// Where each tile is, as `observer` would have a belief head place it
    /// (`out[t]` for tile id `t`, `rules().tile_count()` of them): the
    /// seat `observer + 1 + k` (around the table) holds it for `k` below
    /// `seats - 1`, `seats - 1` is the boneyard, and [`net::NO_HOLDER`] a
    /// tile the observer sees (its own, or played).
    pub fn holders(&self, observer: u8, out: &mut Vec<u8>) {
        let n = self.rules().seats();
        out.clear();
        out.resize(self.rules().tile_count() as usize, net::NO_HOLDER);
        for k in 0..n - 1 {
            let seat = (observer + 1 + k) % n;
            for t in engine::bits(self.hand_of(seat)) {
                out[t as usize] = k;
            }
        }
        for t in engine::bits(self.boneyard()) {
            out[t as usize] = n - 1;
        }
    }

    /// The constraints belief's marginals from `observer`'s side, in a
    /// belief head's order (`out[t * seats + k]` for tile id `t` and the
    /// holders `k` of [`Self::holders`]): the exact probability, over the
    /// deals that agree with every hand's size and every void the observer
    /// saw, that the tile is there ([`crate::Constraints::marginals`];
    /// in All Fives, from a seat other than the mover's, the mover's void
    /// leaves out the tiles matching the ends, one of which it may have
    /// just drawn); all
    /// 0 for a tile the observer sees, and everywhere before the deal. The
    /// prior a belief head trained with `belief_prior = "constraints"`
    /// corrects (docs/train.md): a holder it gives 0 is impossible.
    pub fn belief_prior(&self, observer: u8, out: &mut Vec<f32>) {
        let rules = self.rules();
        let n = rules.seats();
        out.clear();
        out.resize(rules.tile_count() as usize * n as usize, 0.0);
        let (hands, boneyard, void) = match self {
            SpielState::Open(c) => match &c.pos {
                Some(p) => (p.hands, p.boneyard, c.void),
                None => return,
            },
            SpielState::Fives(c) => match &c.pos {
                Some(p) => {
                    let mut void = c.seen.voids().0;
                    // The mover may hold a tile it has just drawn that
                    // matches the ends it was stuck at (its one play):
                    // from the other seats' side, it lacks none of them.
                    if p.mover != observer {
                        void[p.mover as usize] &= !crate::matching(rules, p).0;
                    }
                    (p.hands, p.boneyard, void)
                }
                None => return,
            },
        };
        let obs = crate::Observation::of_hands(rules, &hands, boneyard, observer, &void, &[0; crate::MAX_SEATS]);
        let mut m = [[0.0; crate::HOLDERS]; 64];
        crate::Constraints::new(&obs).marginals(&mut m);
        for t in engine::bits(obs.hidden) {
            let row = &mut out[t as usize * n as usize..][..n as usize];
            for k in 0..n - 1 {
                row[k as usize] = m[t as usize][((observer + 1 + k) % n) as usize] as f32;
            }
            row[n as usize - 1] = m[t as usize][crate::BONEYARD] as f32;
        }
    }

    /// A state `player` cannot tell from this one (its hidden tiles drawn
    /// from the constraints belief).
    pub fn resample(&self, player: u8, rng: &mut impl RngCore) -> Result<SpielState, SpielError> {
        Ok(match self {
            SpielState::Open(c) => SpielState::Open(c.resample(player, rng)?),
            SpielState::Fives(c) => SpielState::Fives(c.resample(player, rng)?),
        })
    }

    /// At a chance node, applies an outcome drawn uniformly with `rng`
    /// (without building the list of outcomes; block and team deal the
    /// rest of the deal at once); else does nothing.
    pub fn apply_chance(&mut self, rng: &mut impl RngCore) -> Result<(), SpielError> {
        let tiles = match self {
            SpielState::Open(c) if c.pos.is_none() => return c.deal_rest(rng),
            SpielState::Open(_) => return Ok(()),
            SpielState::Fives(c) => match c.chance_tiles() {
                Some(t) => t,
                None => return Ok(()),
            },
        };
        let k = engine::seed::below_u32(rng, tiles.count_ones());
        let tile = engine::bits(tiles).nth(k as usize).ok_or(SpielError::NoOutcome)?;
        self.apply(tile as u32)
    }

    /// Writes the legal actions' ids into `ids`, ascending, and returns
    /// how many (none at a chance node or the end), allocating nothing.
    pub fn legal_ids(&self, ids: &mut [u32; 128]) -> usize {
        match self {
            SpielState::Open(c) => c.legal_ids(ids),
            SpielState::Fives(c) if c.current_player() < 0 => 0,
            SpielState::Fives(c) => c.legal_ids(ids),
        }
    }

    /// This game at its start, in place, keeping its lists' room.
    pub fn restart_in_place(&mut self) {
        match self {
            SpielState::Open(c) => c.clear(),
            SpielState::Fives(c) => c.clear(),
        }
    }

    /// This game at its start.
    pub fn restart(&self) -> SpielState {
        match self {
            SpielState::Open(c) => SpielState::Open(c.fresh()),
            SpielState::Fives(c) => SpielState::Fives(c.restart()),
        }
    }

    /// The number of action ids (OpenSpiel's `num_distinct_actions`).
    pub fn action_count(&self) -> u32 {
        match self {
            SpielState::Open(c) => c.rules.seats() as u32 * c.rules.actions_per_seat() as u32,
            SpielState::Fives(c) => c.num_distinct_actions(),
        }
    }

    /// The smallest return (OpenSpiel's bound for block and team).
    pub fn min_utility(&self) -> f64 {
        match self {
            SpielState::Open(c) if c.rules.seats() == 2 => -69.0,
            SpielState::Open(_) => -100.0,
            SpielState::Fives(c) => c.min_utility(),
        }
    }

    /// The largest return.
    pub fn max_utility(&self) -> f64 {
        match self {
            SpielState::Open(_) => -self.min_utility(),
            SpielState::Fives(c) => c.max_utility(),
        }
    }

    /// The return a network's value of 1 stands for (its targets are the
    /// returns divided by it): the largest return, except for one All-Fives
    /// hand, whose bound (1,517 points for double-6) is some 50 times what
    /// a hand scores, and whose values are in units of [`EVAL_LIMIT`] (60
    /// points, the most the learned leaf may add) instead.
    ///
    /// [`EVAL_LIMIT`]: crate::EVAL_LIMIT
    pub fn value_scale(&self) -> f64 {
        match self {
            SpielState::Fives(c) if c.to == 0 => crate::EVAL_LIMIT,
            _ => self.max_utility(),
        }
    }

    /// The most legal actions a player node can have.
    pub fn max_legal(&self) -> usize {
        match self {
            // A tile goes on one of the two ends, or opens.
            SpielState::Open(c) => 2 * c.rules.hand() as usize,
            // The engine's list of plays holds them all.
            SpielState::Fives(_) => 64,
        }
    }

    /// The most actions a game takes (OpenSpiel's number for block and team).
    pub fn max_game_length(&self) -> u64 {
        match self {
            SpielState::Open(_) => 28,
            SpielState::Fives(c) => c.max_game_length(),
        }
    }
}
