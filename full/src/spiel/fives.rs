//! All Fives (and the thesis's rules) as a state with explicit chance: the
//! deal tile by tile (each seat's hand in turn), a forced `draw` action by a
//! seat that cannot play followed by a chance node for the tile drawn, a
//! forced `pass` when it may not draw, and with `to` > 0 hands repeated
//! until a side reaches `to`. The action ids (docs/python.md): a play of
//! tile `t` at location `l` (Left 0, Right 1, Up 2, Down 3) is `4 t + l`;
//! draw is `4 T`, pass `4 T + 1` (`T` tiles in the set).

use super::SpielError;
use crate::belief::matching;
use crate::fives::{
    FivesPosition, Opening, fives_action_of as action_of, fives_draw_id, fives_pass_id, fives_play_id as play_id,
};
use crate::game::MAX_HANDS;
use crate::openspiel::deal_seat;
use crate::position::HandEnd;
use crate::rules::{FullRules, MAX_SEATS};
use crate::seen::Seen;
use engine::{ActionList, Loc, TileSet, bit};
use std::sync::Arc;

/// What one history entry was, and who saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// Chance dealt `tile` to `seat` (seen by that seat).
    Deal { seat: u8, tile: u8 },
    /// `seat` played.
    Play { seat: u8, tile: u8, loc: Loc },
    /// `seat` could not play and drew (the tiles matching the open ends).
    Stuck { seat: u8, matching: TileSet },
    /// Chance gave `seat` the drawn `tile` (seen by that seat).
    Drawn { seat: u8, tile: u8 },
    /// `seat` could not play nor draw, and passed (the tiles matching the open ends).
    Pass { seat: u8, matching: TileSet },
}

/// An All-Fives state.
#[derive(Clone, Debug)]
pub struct FivesState {
    /// Shared by the states cloned or restarted from one.
    pub rules: Arc<FullRules>,
    /// A match is played until a side reaches this score; 0 plays one hand.
    pub to: u32,
    /// The hand being played (0 first).
    pub hand_no: u32,
    /// The hands being dealt.
    pub deal: [TileSet; MAX_SEATS],
    pub dealt: u8,
    pub pos: Option<FivesPosition>,
    pub seen: Seen,
    /// The mover drew: a chance node gives it a tile.
    pub drawing: bool,
    /// Each side's points in the hands finished.
    pub totals: [u32; MAX_SEATS],
    pub previous: Option<HandEnd>,
    /// The opening of the hand being played (public: its forced tile is the first play).
    pub opening: Option<Opening>,
    pub over: bool,
    pub history: Vec<u32>,
    /// Each history entry's event and the hand it belongs to.
    pub events: Vec<(u32, Event)>,
    /// The tiles each seat has played in the hand being played (the
    /// events' plays of this hand, kept as they come for the tensor).
    pub(super) hand_played: [TileSet; MAX_SEATS],
    /// The tiles each seat has drawn in the hand being played.
    pub(super) hand_drawn: [TileSet; MAX_SEATS],
}

impl FivesState {
    /// A game under `rules` (All Fives), before the deal: one hand, or with
    /// `to` > 0 a match to `to`.
    pub fn new(rules: FullRules, to: u32) -> FivesState {
        FivesState::sharing(Arc::new(rules), to)
    }

    /// A game under `rules` (shared), before the deal.
    fn sharing(rules: Arc<FullRules>, to: u32) -> FivesState {
        FivesState {
            rules,
            to,
            hand_no: 0,
            deal: [0; MAX_SEATS],
            dealt: 0,
            pos: None,
            seen: Seen::default(),
            drawing: false,
            totals: [0; MAX_SEATS],
            previous: None,
            opening: None,
            over: false,
            history: Vec::new(),
            events: Vec::new(),
            hand_played: [0; MAX_SEATS],
            hand_drawn: [0; MAX_SEATS],
        }
    }

    /// This game at its start: a new state of the same rules, keeping how
    /// the hand before it ended when it was built as a later hand of a
    /// match ([`FivesState::from_view`]).
    pub fn restart(&self) -> FivesState {
        let mut s = FivesState::sharing(Arc::clone(&self.rules), self.to);
        if self.hand_no == 0 {
            s.previous = self.previous;
        }
        s
    }

    /// [`restart`](Self::restart) in place, keeping the lists' room (what
    /// the vector environment resets with, allocating nothing).
    pub fn clear(&mut self) {
        let mut history = std::mem::take(&mut self.history);
        let mut events = std::mem::take(&mut self.events);
        let mut seen = std::mem::take(&mut self.seen);
        history.clear();
        events.clear();
        seen.clear();
        *self = FivesState {
            history,
            events,
            seen,
            ..self.restart()
        };
    }

    pub fn rules(&self) -> &FullRules {
        &self.rules
    }

    /// The draw action's id.
    pub fn draw_id(&self) -> u32 {
        fives_draw_id(&self.rules)
    }

    /// The pass action's id.
    pub fn pass_id(&self) -> u32 {
        fives_pass_id(&self.rules)
    }

    pub fn current_player(&self) -> i64 {
        match &self.pos {
            _ if self.over => super::TERMINAL,
            None => super::CHANCE,
            Some(_) if self.drawing => super::CHANCE,
            Some(p) => p.mover as i64,
        }
    }

    /// The tiles a chance node may give, or `None` at a player node.
    pub fn chance_tiles(&self) -> Option<TileSet> {
        match &self.pos {
            _ if self.over => None,
            None => Some(self.rules().all_tiles() & !self.deal.iter().fold(0, |m, h| m | h)),
            Some(p) if self.drawing => Some(p.boneyard),
            Some(_) => None,
        }
    }

    pub fn legal_actions(&self) -> Vec<u32> {
        let mut ids = [0u32; 128];
        let n = self.legal_ids(&mut ids);
        ids[..n].to_vec()
    }

    /// Writes the legal actions' ids into `ids`, ascending (a chance node's
    /// tiles, or the mover's plays, draw or pass), and returns how many;
    /// none at the end. Allocates nothing.
    pub fn legal_ids(&self, ids: &mut [u32; 128]) -> usize {
        if self.over {
            return 0;
        }
        if let Some(tiles) = self.chance_tiles() {
            let mut n = 0;
            for t in engine::bits(tiles) {
                ids[n] = u32::from(t);
                n += 1;
            }
            return n;
        }
        let p = self.pos.as_ref().expect("a player node has a position");
        let rules = self.rules();
        if !p.can_play(rules, p.mover) {
            ids[0] = if self.may_draw(p) {
                self.draw_id()
            } else {
                self.pass_id()
            };
            return 1;
        }
        let mut list = ActionList::default();
        p.actions(rules, &mut list);
        for (id, a) in ids.iter_mut().zip(list.as_slice()) {
            *id = play_id(*a);
        }
        list.len()
    }

    fn may_draw(&self, p: &FivesPosition) -> bool {
        p.boneyard.count_ones() > self.rules().config().keep as u32
    }

    /// Applies `action`, or says why it is not legal.
    pub fn apply(&mut self, action: u32) -> Result<(), SpielError> {
        if self.over {
            return Err(SpielError::Over(action));
        }
        if let Some(tiles) = self.chance_tiles() {
            if action >= 64 || tiles & bit(action as u8) == 0 {
                return Err(SpielError::NotChance(action));
            }
            self.chance(action as u8);
        } else {
            let mut ids = [0u32; 128];
            let n = self.legal_ids(&mut ids);
            if !ids[..n].contains(&action) {
                return Err(SpielError::Illegal(action));
            }
            self.act(action);
        }
        self.history.push(action);
        Ok(())
    }

    /// [`apply`](Self::apply) of a player's action its caller took from
    /// [`legal_ids`](Self::legal_ids) of this very state (a vector
    /// environment's checked mask): the list is not made again. Checked in
    /// debug builds.
    pub fn apply_legal(&mut self, action: u32) {
        debug_assert!(
            self.chance_tiles().is_none() && !self.over && {
                let mut ids = [0u32; 128];
                let n = self.legal_ids(&mut ids);
                ids[..n].contains(&action)
            },
            "{action} is not a legal player action here"
        );
        self.act(action);
        self.history.push(action);
    }

    fn push(&mut self, e: Event) {
        self.events.push((self.hand_no, e));
        match e {
            Event::Play { seat, tile, .. } => self.hand_played[seat as usize] |= bit(tile),
            Event::Drawn { seat, tile } => self.hand_drawn[seat as usize] |= bit(tile),
            _ => {}
        }
    }

    fn chance(&mut self, tile: u8) {
        let rules = &self.rules;
        let event = match self.pos.as_mut() {
            None => {
                let seat = deal_seat(rules, self.dealt);
                self.deal[seat as usize] |= bit(tile);
                self.dealt += 1;
                if self.dealt == rules.dealt() {
                    let opening = Opening::of(rules, &self.deal, self.previous);
                    self.opening = Some(opening);
                    self.pos = Some(FivesPosition::deal(rules, self.deal, opening));
                    self.seen.clear();
                }
                Event::Deal { seat, tile }
            }
            Some(p) => {
                let seat = p.mover;
                p.draw(tile);
                self.seen.drew(seat);
                self.drawing = false;
                Event::Drawn { seat, tile }
            }
        };
        self.push(event);
    }

    fn act(&mut self, action: u32) {
        let rules = &self.rules;
        let mut p = self.pos.expect("a player node has a position");
        let seat = p.mover;
        let event = if action == fives_draw_id(rules) {
            self.seen.stuck(rules, &p);
            self.drawing = true;
            Event::Stuck {
                seat,
                matching: matching(rules, &p).0,
            }
        } else if action == fives_pass_id(rules) {
            self.seen.stuck(rules, &p);
            let matching = matching(rules, &p).0;
            p.pass(rules);
            Event::Pass { seat, matching }
        } else {
            let a = action_of(action);
            self.seen.played(&p, a);
            p.play(rules, a);
            Event::Play {
                seat,
                tile: a.tile,
                loc: a.loc,
            }
        };
        self.push(event);
        self.pos = Some(p);
        if let Some(end) = p.end {
            self.end_hand(end, &p);
        }
    }

    /// The hand ended: its points join the totals; the game ends, or the
    /// next hand's deal begins.
    fn end_hand(&mut self, end: HandEnd, p: &FivesPosition) {
        for (t, s) in self.totals.iter_mut().zip(p.scores) {
            *t += s;
        }
        let sides = self.rules().sides() as usize;
        let to = self.to;
        if to == 0 || self.totals[..sides].iter().any(|&t| t >= to) || self.hand_no as u64 + 1 >= MAX_HANDS {
            self.over = true;
            return;
        }
        self.previous = Some(end);
        self.hand_no += 1;
        self.hand_played = [0; MAX_SEATS];
        self.hand_drawn = [0; MAX_SEATS];
        self.deal = [0; MAX_SEATS];
        self.dealt = 0;
        self.pos = None;
    }

    /// Each player's return: for one hand, its side's points minus the
    /// mean of the other sides'; for a match, 1 to the winning side's
    /// seats and -1/(sides - 1) to the others' (ties to the lower side,
    /// as `muggins run`'s matches). Zeros before the end.
    pub fn returns(&self) -> Vec<f64> {
        let rules = self.rules();
        let seats = rules.seats();
        if !self.over {
            return vec![0.0; seats as usize];
        }
        let sides = rules.sides() as usize;
        let totals = &self.totals[..sides];
        (0..seats)
            .map(|s| {
                let me = rules.side(s) as usize;
                if self.to == 0 {
                    let others: u32 = totals.iter().sum::<u32>() - totals[me];
                    totals[me] as f64 - others as f64 / (sides - 1) as f64
                } else {
                    let best = *totals.iter().max().expect("two sides");
                    let winner = totals.iter().position(|&t| t == best).expect("found");
                    if me == winner { 1.0 } else { -1.0 / (sides - 1) as f64 }
                }
            })
            .collect()
    }

    /// The largest return a player can get (`min_utility` is its negative
    /// for one hand): every play scoring the largest count, plus every pip
    /// of the set; 1 for a match.
    pub fn max_utility(&self) -> f64 {
        if self.to > 0 {
            return 1.0;
        }
        let r = self.rules();
        let tiles = r.tile_count() as f64;
        tiles * 8.0 * r.set() as f64 + r.pip_total(r.all_tiles()) as f64 + 5.0
    }

    pub fn min_utility(&self) -> f64 {
        if self.to > 0 {
            -1.0 / (self.rules().sides() - 1) as f64
        } else {
            -self.max_utility()
        }
    }

    /// The most actions one hand can take (deal, plays, draws with their
    /// chance nodes, passes), times the hands a match may take.
    pub fn max_game_length(&self) -> u64 {
        let r = self.rules();
        let (tiles, dealt) = (r.tile_count() as u64, r.dealt() as u64);
        let hand = dealt + 2 * tiles + 2 * (tiles - dealt) + r.seats() as u64;
        if self.to > 0 { hand * MAX_HANDS } else { hand }
    }

    /// The number of distinct action ids.
    pub fn num_distinct_actions(&self) -> u32 {
        self.pass_id() + 1
    }

    /// The string of `action` when `player` takes it.
    pub fn action_string(&self, player: i64, action: u32) -> String {
        let r = self.rules();
        let tile = |t: u32| {
            let (a, b) = r.pips(t as u8);
            format!("{a}-{b}")
        };
        if player == super::CHANCE {
            return format!("chance {}", tile(action));
        }
        if action == self.draw_id() {
            return format!("p{player} draw");
        }
        if action == self.pass_id() {
            return format!("p{player} pass");
        }
        format!("p{player} {}{}", tile(action / 4), action_of(action).loc.letter())
    }
}
