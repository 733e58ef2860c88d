//! OpenSpiel's block and team as a state: its action ids, its chance
//! actions (the deal, tile by tile), and its observations, strings and
//! tensors alike, as `python_block_dominoes` and `python_team_dominoes`
//! write them (their hands in deal order until the deal is done, then
//! sorted; their quirks kept, e.g. team's `hand_sizes` piece).

use super::SpielError;
use crate::openspiel::{action_from_id, action_id, deal_seat};
use crate::position::{FullAction, FullActions, FullPosition, OPENING};
use crate::rules::{FullRules, MAX_SEATS, Preset};
use engine::{TileSet, bit};
use std::sync::Arc;

use super::View;
use super::tensor::TensorOut;

/// A block or team state (OpenSpiel's game exactly), from the deal's
/// first chance node.
#[derive(Clone, Debug)]
pub struct OpenSpielState {
    /// Shared by the states cloned from one (a vector environment's
    /// thousands of games read one copy).
    pub rules: Arc<FullRules>,
    /// Each seat's tiles as OpenSpiel lists them (deal order, sorted once dealt).
    pub lists: [Vec<u8>; MAX_SEATS],
    pub dealt: TileSet,
    pub pos: Option<FullPosition>,
    /// Every action so far (chance actions included).
    pub history: Vec<u32>,
    /// The plays so far: (seat, play).
    pub plays: Vec<(u8, FullAction)>,
    /// Per seat, the tiles it was shown not to hold (skipped while they matched an end).
    pub void: [TileSet; MAX_SEATS],
}

impl OpenSpielState {
    pub fn new(rules: FullRules) -> OpenSpielState {
        OpenSpielState::sharing(Arc::new(rules))
    }

    /// A new game of the same rules (sharing them), before the deal.
    pub fn fresh(&self) -> OpenSpielState {
        OpenSpielState::sharing(Arc::clone(&self.rules))
    }

    fn sharing(rules: Arc<FullRules>) -> OpenSpielState {
        OpenSpielState {
            rules,
            lists: Default::default(),
            dealt: 0,
            pos: None,
            history: Vec::new(),
            plays: Vec::new(),
            void: [0; MAX_SEATS],
        }
    }

    pub fn current_player(&self) -> i64 {
        match &self.pos {
            None => super::CHANCE,
            Some(p) if p.end.is_some() => super::TERMINAL,
            Some(p) => p.mover as i64,
        }
    }

    pub fn legal_actions(&self) -> Vec<u32> {
        match &self.pos {
            None => (0..self.rules.tile_count() as u32)
                .filter(|&t| self.dealt >> t & 1 == 0)
                .collect(),
            Some(p) if p.end.is_some() => Vec::new(),
            Some(p) => {
                let mut list = FullActions::default();
                p.actions(&self.rules, &mut list);
                let mut ids: Vec<u32> = list
                    .as_slice()
                    .iter()
                    .map(|&a| action_id(&self.rules, p.mover, a))
                    .collect();
                ids.sort_unstable();
                ids
            }
        }
    }

    /// Applies `action`, or says why it is not legal.
    pub fn apply(&mut self, action: u32) -> Result<(), SpielError> {
        let rules = &self.rules;
        match self.pos.as_mut() {
            None => {
                if action >= rules.tile_count() as u32 || self.dealt >> action & 1 == 1 {
                    return Err(SpielError::NotDealable(action));
                }
                let k = self.dealt.count_ones() as u8;
                self.dealt |= bit(action as u8);
                self.lists[deal_seat(rules, k) as usize].push(action as u8);
                if k + 1 == rules.dealt() {
                    let mut hands = [0; MAX_SEATS];
                    for (h, list) in hands.iter_mut().zip(self.lists.iter_mut()) {
                        list.sort_unstable();
                        *h = list.iter().fold(0, |m, &t| m | bit(t));
                    }
                    self.pos = Some(FullPosition::deal(rules, hands));
                }
            }
            Some(p) => {
                let found = action_from_id(rules, action as u64)
                    .filter(|&(seat, a)| p.end.is_none() && seat == p.mover && p.is_legal(rules, a));
                let Some((seat, a)) = found else {
                    return Err(SpielError::Illegal(action));
                };
                p.play(rules, a);
                self.lists[seat as usize].retain(|&t| t != a.tile);
                self.plays.push((seat, a));
                // Seats skipped before the next mover hold nothing that matches an end.
                if p.end.is_none() {
                    let seats = rules.seats();
                    let mut s = (seat + 1) % seats;
                    let matching = matching(rules, p);
                    while s != p.mover {
                        self.void[s as usize] |= matching;
                        s = (s + 1) % seats;
                    }
                }
            }
        }
        self.history.push(action);
        Ok(())
    }

    pub fn returns(&self) -> Vec<f64> {
        let seats = self.rules.seats() as usize;
        match &self.pos {
            Some(p) if p.end.is_some() => p.returns(&self.rules)[..seats].iter().map(|&r| r as f64).collect(),
            _ => vec![0.0; seats],
        }
    }

    /// OpenSpiel's string of `action` by `player`.
    pub fn action_string(&self, player: i64, action: u32) -> String {
        if player == super::CHANCE {
            return format!("Deal {}", tile_tuple(&self.rules, action as u8));
        }
        match action_from_id(&self.rules, action as u64) {
            Some((seat, a)) => play_string(&self.rules, seat, a),
            None => format!("action {action}"),
        }
    }

    /// The observation (or information state) string of `player`, as
    /// OpenSpiel's observer writes it.
    pub fn observation_string(&self, player: u8, view: View) -> String {
        let mut pieces = vec![format!("p{player}")];
        if view.private {
            pieces.push(format!("hand:{}", self.hand_string(player)));
        }
        if view.public {
            if view.perfect_recall {
                let h: Vec<String> = self
                    .plays
                    .iter()
                    .map(|&(s, a)| play_string(&self.rules, s, a))
                    .collect();
                pieces.push(format!("history:[{}]", h.join(", ")));
            } else if let Some(&(s, a)) = self.plays.last() {
                pieces.push(format!("last_action:{}", play_string(&self.rules, s, a)));
            }
        }
        pieces.join(" ")
    }

    fn hand_string(&self, player: u8) -> String {
        let tiles: Vec<String> = self.lists[player as usize]
            .iter()
            .map(|&t| tile_tuple(&self.rules, t))
            .collect();
        format!("[{}]", tiles.join(", "))
    }

    /// The tensor's pieces (name, shape) for `view`.
    pub fn tensor_pieces(&self, view: View) -> Vec<(&'static str, Vec<usize>)> {
        let seats = self.rules.seats() as usize;
        let team = self.rules.kind() == Preset::Team;
        let mut pieces = vec![("player", vec![seats])];
        if view.private {
            pieces.push(("hand", vec![7, 3]));
        }
        if view.public {
            if view.perfect_recall {
                pieces.push(("actions_history", vec![if team { 25 } else { 14 }, 5]));
            } else {
                pieces.push(("last_action", vec![4]));
                pieces.push(("hand_sizes", vec![seats]));
            }
        }
        pieces
    }

    /// The observation (or information state) tensor of `player`, as
    /// OpenSpiel's observer fills it.
    pub fn tensor(&self, player: u8, view: View) -> Vec<f32> {
        let mut out = Vec::new();
        self.tensor_into(player, view, &mut out);
        out
    }

    /// [`Self::tensor`] appended to `out` (no allocation once a vector
    /// has room; a slice is written in place): the tensor is zeroed at
    /// once and its other entries written.
    pub fn tensor_into(&self, player: u8, view: View, out: &mut impl TensorOut) {
        let seats = self.rules.seats() as usize;
        let rows = if self.rules.kind() == Preset::Team { 25 } else { 14 };
        let private = if view.private { 21 } else { 0 };
        let public = match (view.public, view.perfect_recall) {
            (false, _) => 0,
            (true, true) => 5 * rows,
            (true, false) => 4 + seats,
        };
        let t = out.take(seats + private + public);
        t.fill(0.0);
        let pips = |t: u8| {
            let (a, b) = self.rules.pips(t);
            (a as f32, b as f32)
        };
        t[player as usize] = 1.0;
        let mut at = seats;
        if view.private {
            for (row, &tile) in t[at..at + 21].chunks_exact_mut(3).zip(&self.lists[player as usize]) {
                let (x, y) = pips(tile);
                row.copy_from_slice(&[x, y, 1.0]);
            }
            at += 21;
        }
        let play = |s: u8, a: FullAction| {
            let (x, y) = pips(a.tile);
            let edge = if a.cover == OPENING { 0.0 } else { a.cover as f32 };
            [x, y, edge, s as f32]
        };
        if view.public {
            if view.perfect_recall {
                for (row, &(s, a)) in t[at..at + 5 * rows].chunks_exact_mut(5).zip(&self.plays) {
                    row[..4].copy_from_slice(&play(s, a));
                    row[4] = 1.0;
                }
            } else {
                if let Some(&(s, a)) = self.plays.last() {
                    t[at..at + 4].copy_from_slice(&play(s, a));
                }
                // OpenSpiel's piece: [0] the player's hand, [1] hands[1 - player]
                // (Python's negative index for players 2 and 3), the rest 0.
                let sizes = &mut t[at + 4..at + 4 + seats];
                sizes[0] = self.lists[player as usize].len() as f32;
                let other = (1 - player as i64).rem_euclid(seats as i64) as usize;
                sizes[1] = self.lists[other].len() as f32;
            }
        }
    }

    /// This game before the deal again, its lists emptied in place (their
    /// room kept).
    pub fn clear(&mut self) {
        for list in &mut self.lists {
            list.clear();
        }
        self.dealt = 0;
        self.pos = None;
        self.history.clear();
        self.plays.clear();
        self.void = [0; MAX_SEATS];
    }

    /// Writes the legal plays' ids into `ids`, ascending (a player node;
    /// none elsewhere), and returns how many: at most [`FullActions`]' room.
    pub fn legal_ids(&self, ids: &mut [u32; 128]) -> usize {
        let Some(p) = self.pos.as_ref().filter(|p| p.end.is_none()) else {
            return 0;
        };
        let mut list = FullActions::default();
        p.actions(&self.rules, &mut list);
        for (id, &a) in ids.iter_mut().zip(list.as_slice()) {
            *id = action_id(&self.rules, p.mover, a);
        }
        ids[..list.len()].sort_unstable();
        list.len()
    }

    /// Deals the rest of the deal at once, each tile drawn uniformly from
    /// those left with `rng` (as many chance actions in turn would).
    pub fn deal_rest(&mut self, rng: &mut impl rand_core::RngCore) -> Result<(), SpielError> {
        while self.pos.is_none() {
            let left = self.rules.all_tiles() & !self.dealt;
            let k = engine::seed::below_u32(rng, left.count_ones());
            // The k-th tile left.
            let mut rest = left;
            for _ in 0..k {
                rest &= rest - 1;
            }
            self.apply(rest.trailing_zeros())?;
        }
        Ok(())
    }

    /// A state with the hidden tiles of the others placed as `hands` (the
    /// seats' current hands; the player's own unchanged), with the history
    /// that deals them (each seat's tiles ascending) and the same plays.
    pub fn with_hands(&self, player: u8, hands: &[TileSet; MAX_SEATS]) -> Result<OpenSpielState, SpielError> {
        let rules = &self.rules;
        let seats = rules.seats() as usize;
        let mut dealt: [Vec<u8>; MAX_SEATS] = Default::default();
        for (s, d) in dealt.iter_mut().enumerate().take(seats) {
            if s == player as usize {
                // Its own deal, in the order it was dealt.
                let own = (0..rules.dealt())
                    .filter(|&k| deal_seat(rules, k) == player)
                    .map(|k| self.history[k as usize] as u8);
                d.extend(own);
            } else {
                let played = self
                    .plays
                    .iter()
                    .filter(|&&(p, _)| p as usize == s)
                    .fold(0, |m, &(_, a)| m | bit(a.tile));
                d.extend(engine::bits(hands[s] | played));
                d.reverse();
            }
        }
        let mut core = self.fresh();
        for k in 0..rules.dealt() {
            let s = deal_seat(rules, k) as usize;
            let t = if s == player as usize {
                dealt[s].remove(0)
            } else {
                dealt[s]
                    .pop()
                    .ok_or(SpielError::Inconsistent("a seat's deal is short"))?
            };
            core.apply(t as u32)?;
        }
        for &a in &self.history[rules.dealt() as usize..] {
            core.apply(a)?;
        }
        Ok(core)
    }
}

impl OpenSpielState {
    /// The state of a hand dealt as `hands` (each seat's tiles dealt
    /// ascending), before its first play: what a game loop that knows the
    /// deal keeps beside its position, so that a network reads a seat's
    /// information state ([`super::NetSeats`]).
    pub fn dealt(rules: &FullRules, hands: &[TileSet; MAX_SEATS]) -> Result<OpenSpielState, SpielError> {
        let seats = rules.seats() as usize;
        if hands[..seats].iter().any(|h| h.count_ones() != rules.hand() as u32) {
            return Err(SpielError::NotADeal {
                preset: rules.kind(),
                hand: rules.hand(),
            });
        }
        let mut core = OpenSpielState::new(rules.clone());
        for t in crate::openspiel::chance_actions(rules, hands) {
            core.apply(t)?;
        }
        Ok(core)
    }
}

/// The tiles matching an open end of `pos`.
fn matching(rules: &FullRules, pos: &FullPosition) -> TileSet {
    pos.ends[..pos.open as usize]
        .iter()
        .fold(0, |m, &e| m | rules.pip_mask(e))
}

/// A tile as OpenSpiel's Python tuple of floats, e.g. `(2.0, 5.0)`.
fn tile_tuple(rules: &FullRules, tile: u8) -> String {
    let (a, b) = rules.pips(tile);
    format!("({a}.0, {b}.0)")
}

/// A play as OpenSpiel's `Action` prints, e.g. `p0 tile:(2.0, 5.0) pip:5.0`.
fn play_string(rules: &FullRules, seat: u8, a: FullAction) -> String {
    let edge = if a.cover == OPENING {
        "None".to_string()
    } else {
        format!("{}.0", a.cover)
    };
    format!("p{seat} tile:{} pip:{edge}", tile_tuple(rules, a.tile))
}
