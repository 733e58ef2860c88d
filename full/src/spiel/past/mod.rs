//! `resample_from_infostate`: a state that `player` cannot tell from the
//! true one. The hidden tiles' places now are drawn exactly uniformly from
//! the `constraints` belief ([`Constraints`]: every placement that
//! agrees with the hand sizes and the tiles each seat showed it lacks); a
//! past that leads there is then built for each other seat (which of its
//! tiles were dealt and which drawn when), and the state is replayed from
//! that history, so it is a true state of the game with the player's own
//! information unchanged. A placement no past can lead to is drawn again.

use super::SpielError;
use crate::belief::{BONEYARD, Constraints, Observation};
use crate::fives::{FivesPosition, Opening, fives_action_of, fives_draw_id, fives_pass_id};
use crate::openspiel::deal_seat;
use crate::position::HandEnd;
use crate::rules::{FivesLead, FullRules, MAX_SEATS};
use crate::seen::Seen;
use engine::{TileSet, bit, bits};
use rand_core::RngCore;

use super::fives::{Event, FivesState};
use super::open::OpenSpielState;

/// Placements drawn before giving up (each agrees with what the player saw;
/// one without a consistent past is rare).
const TRIES: usize = 1000;

/// Placements drawn after those from a tighter belief ([`FivesState::resample`]).
const RETRIES: usize = 1000;

/// A tile's weight for the forced opening (the heaviest tile dealt: a
/// double above any other tile, then by pips and the higher end).
fn weight(rules: &FullRules, t: u8) -> (bool, u8, u8) {
    let (a, b) = rules.pips(t);
    (a == b, a + b, b)
}

/// `e` if it is an event of `seat`.
fn own(e: Event, seat: u8) -> Option<Event> {
    match e {
        Event::Deal { seat: s, .. }
        | Event::Play { seat: s, .. }
        | Event::Stuck { seat: s, .. }
        | Event::Drawn { seat: s, .. }
        | Event::Pass { seat: s, .. } => (s == seat).then_some(e),
    }
}

/// The hidden tiles' holders drawn from `obs`: each seat's hand.
fn draw_hands(c: &mut Constraints, obs: &Observation, rng: &mut impl RngCore) -> Option<[TileSet; MAX_SEATS]> {
    let mut at = [u8::MAX; 64];
    c.sample(rng, &mut at)?;
    let mut hands = [0; MAX_SEATS];
    for t in bits(obs.hidden) {
        let h = at[t as usize] as usize;
        if h != BONEYARD {
            hands[h] |= bit(t);
        }
    }
    Some(hands)
}

impl OpenSpielState {
    pub fn resample(&self, player: u8, rng: &mut impl RngCore) -> Result<OpenSpielState, SpielError> {
        let Some(pos) = &self.pos else {
            return Err(SpielError::NotDealt);
        };
        let rules = &self.rules;
        let obs = Observation::of_hands(rules, &pos.hands, pos.boneyard, player, &self.void, &[0; MAX_SEATS]);
        let mut c = Constraints::new(&obs);
        let mut hands = draw_hands(&mut c, &obs, rng).ok_or(SpielError::NoPlacement("what the player saw"))?;
        hands[player as usize] = pos.hands[player as usize];
        self.with_hands(player, &hands)
    }
}

impl FivesState {
    pub fn resample(&self, player: u8, rng: &mut impl RngCore) -> Result<FivesState, SpielError> {
        let Some(pos) = &self.pos else {
            return Err(SpielError::NotDealt);
        };
        if self.over {
            return Ok(self.clone());
        }
        let rules = self.rules();
        let (void, void_pips) = self.seen.voids();
        let obs = Observation::new(rules, pos, player, &void, &void_pips);
        let mut c = Constraints::new(&obs);
        for _ in 0..TRIES {
            if let Some(world) = self.world_of(player, &mut c, &obs, rng)? {
                return Ok(world);
            }
        }
        // Rarely (about one hand in a thousand at three and four seats, in
        // none at two: tests/it/resample.rs) no placement of those gets a
        // past. Drawn again from placements that also keep each seat that
        // holds only dealt tiles off the tiles a past rules out for it:
        // every placement with a past is still one of them, so the world is
        // as uniform over consistent placements as before, and one is found
        // far more often. The first phase is untouched, so a world found
        // there is the one found before this phase was added.
        let obs = self.tightened(obs);
        let mut c = Constraints::new(&obs);
        for _ in 0..RETRIES {
            if let Some(world) = self.world_of(player, &mut c, &obs, rng)? {
                return Ok(world);
            }
        }
        Err(SpielError::NoPast(TRIES + RETRIES))
    }

    /// A placement drawn from `c` and, if a past leads there, the state
    /// replayed from it.
    fn world_of(
        &self,
        player: u8,
        c: &mut Constraints,
        obs: &Observation,
        rng: &mut impl RngCore,
    ) -> Result<Option<FivesState>, SpielError> {
        let hands = draw_hands(c, obs, rng).ok_or(SpielError::NoPlacement("what the player saw"))?;
        let Some(history) = self.history_for(player, &hands) else {
            return Ok(None);
        };
        let mut core = self.restart();
        for a in history {
            core.apply(a)?;
        }
        Ok(Some(core))
    }

    /// The history with this hand's hidden chance outcomes replaced so that
    /// the others hold `hands` now, or `None` if no past leads there.
    fn history_for(&self, player: u8, hands: &[TileSet; MAX_SEATS]) -> Option<Vec<u32>> {
        let rules = self.rules();
        let start = self.events.iter().position(|&(h, _)| h == self.hand_no)?;
        let mut pasts: [Option<Past>; MAX_SEATS] = Default::default();
        for s in 0..rules.seats() {
            if s != player {
                pasts[s as usize] = Some(self.past_of(s, hands[s as usize], start)?);
            }
        }
        let mut out = self.history[..start].to_vec();
        for (i, &(_, e)) in self.events.iter().enumerate().skip(start) {
            let a = match e {
                Event::Deal { seat, .. } if seat != player => pasts[seat as usize].as_mut()?.dealt.pop()? as u32,
                Event::Drawn { seat, .. } if seat != player => {
                    let past = pasts[seat as usize].as_ref()?;
                    past.drawn.iter().find(|&&(at, _)| at == i)?.1 as u32
                }
                _ => self.history[i],
            };
            out.push(a);
        }
        Some(out)
    }

    /// `obs` tightened as [`tighten`] does, from this hand's events.
    fn tightened(&self, obs: Observation) -> Observation {
        let Some(start) = self.events.iter().position(|&(h, _)| h == self.hand_no) else {
            return obs;
        };
        let forced = self.opening.and_then(|o| o.forced);
        tighten(self.rules(), &self.events[start..], forced, obs)
    }

    fn past_of(&self, seat: u8, now: TileSet, start: usize) -> Option<Past> {
        let forced = self.opening.and_then(|o| o.forced);
        past_of(self.rules(), &self.events[start..], forced, seat, now, start)
    }
}

/// `obs` with what a past implies, in a hand of `events` opened by a
/// `forced` tile, for each seat but the observer whose hidden tiles were
/// all dealt (none of its draws is a tile it still holds): no tile heavier
/// than the forced opening (the heaviest dealt), and none that matched an
/// end when it was stuck or passed. Every placement a past leads to keeps
/// these, so drawing from the tightened constraints loses none of them.
fn tighten(rules: &FullRules, events: &[(u32, Event)], forced: Option<u8>, mut obs: Observation) -> Observation {
    let heavier: TileSet = match forced {
        Some(f) => bits(rules.all_tiles())
            .filter(|&t| weight(rules, t) > weight(rules, f))
            .fold(0, |m, t| m | bit(t)),
        None => 0,
    };
    for s in (0..rules.seats()).filter(|&s| s != obs.seat) {
        let mut ruled_out = heavier;
        let mut drew_kept = false;
        for (i, &(_, e)) in events.iter().enumerate() {
            match e {
                Event::Stuck { seat, matching } | Event::Pass { seat, matching } if seat == s => {
                    ruled_out |= matching;
                }
                Event::Drawn { seat, .. } if seat == s => {
                    let next = events[i + 1..].iter().find_map(|&(_, e)| own(e, s));
                    drew_kept |= !matches!(next, Some(Event::Play { .. }));
                }
                _ => {}
            }
        }
        if !drew_kept {
            obs.void[s as usize] |= ruled_out & obs.hidden;
        }
    }
    obs
}

/// A past of `seat` in a hand's `events` (history indices from `start`)
/// that leaves it holding `now`: which of its tiles it was dealt and which
/// it drew at each draw, every tile it held when it was stuck matching no
/// open end, and none dealt heavier than a `forced` opening tile.
fn past_of(
    rules: &crate::rules::FullRules,
    events: &[(u32, Event)],
    forced: Option<u8>,
    seat: u8,
    now: TileSet,
    start: usize,
) -> Option<Past> {
    {
        let mine = |e: &Event| own(*e, seat).is_some();
        // When each tile it played left its hand.
        let mut release = [usize::MAX; 64];
        let mut tiles = now;
        let mut stuck = Vec::new();
        for (i, (_, e)) in events.iter().enumerate() {
            match *e {
                Event::Play { seat: s, tile, .. } if s == seat => {
                    release[tile as usize] = i;
                    tiles |= bit(tile);
                }
                Event::Stuck { seat: s, matching } | Event::Pass { seat: s, matching } if s == seat => {
                    stuck.push((i, matching));
                }
                _ => {}
            }
        }
        // Slots: the deal (from the start), each draw (from when it was made);
        // a draw followed by the seat's play drew the tile played.
        let mut slots = Vec::new();
        let mut fixed = Vec::new();
        for (i, (_, e)) in events.iter().enumerate() {
            match *e {
                Event::Deal { seat: s, .. } if s == seat => slots.push(i),
                Event::Drawn { seat: s, .. } if s == seat => {
                    let next = events[i + 1..].iter().find(|(_, e)| mine(e)).map(|(_, e)| *e);
                    match next {
                        Some(Event::Play { tile, .. }) => fixed.push((i, tile)),
                        _ => slots.push(i),
                    }
                }
                _ => {}
            }
        }
        let free: Vec<u8> = bits(tiles).filter(|t| !fixed.iter().any(|&(_, f)| f == *t)).collect();
        if free.len() != slots.len() {
            return None;
        }
        // A forced opening is the heaviest tile dealt (the highest double).
        let weight = |t: u8| weight(rules, t);
        let ceiling = forced.map(weight);
        let dealt_at = |from: usize| matches!(events[from].1, Event::Deal { .. });
        let fits = |t: u8, from: usize| {
            let until = release[t as usize];
            from < until
                && !(dealt_at(from) && ceiling.is_some_and(|c| weight(t) > c))
                && stuck.iter().all(|&(j, m)| j < from || j >= until || m & bit(t) == 0)
        };
        let assigned = match_slots(&free, &slots, fits)?;
        let mut past = Past::default();
        for (k, &slot) in slots.iter().enumerate() {
            let t = free[assigned[k]];
            if matches!(events[slot].1, Event::Deal { .. }) {
                past.dealt.push(t);
            } else {
                past.drawn.push((start + slot, t));
            }
        }
        past.drawn.extend(fixed.iter().map(|&(i, t)| (start + i, t)));
        // Dealt tiles are popped: ascending in deal order.
        past.dealt.sort_unstable_by(|a, b| b.cmp(a));
        Some(past)
    }
}

/// One seat's past: the tiles dealt to it (popped in deal order) and the
/// tile each of its draws gave (history index, tile).
#[derive(Default)]
struct Past {
    dealt: Vec<u8>,
    drawn: Vec<(usize, u8)>,
}

/// A perfect matching of `tiles` to `slots` (slot k takes tile
/// `out[k]`) where `fits(tile, slot)`, by augmenting paths; `None` if
/// there is none.
fn match_slots(tiles: &[u8], slots: &[usize], fits: impl Fn(u8, usize) -> bool) -> Option<Vec<usize>> {
    let mut owner: Vec<Option<usize>> = vec![None; slots.len()];
    fn augment(
        t: usize,
        tiles: &[u8],
        slots: &[usize],
        fits: &dyn Fn(u8, usize) -> bool,
        seen: &mut [bool],
        owner: &mut [Option<usize>],
    ) -> bool {
        for k in 0..slots.len() {
            if seen[k] || !fits(tiles[t], slots[k]) {
                continue;
            }
            seen[k] = true;
            if owner[k].is_none_or(|o| augment(o, tiles, slots, fits, seen, owner)) {
                owner[k] = Some(t);
                return true;
            }
        }
        false
    }
    for t in 0..tiles.len() {
        let mut seen = vec![false; slots.len()];
        if !augment(t, tiles, slots, &fits, &mut seen, &mut owner) {
            return None;
        }
    }
    owner.into_iter().collect()
}

impl FivesState {
    /// A one-hand state that `seat`, holding `tiles`, cannot tell from the
    /// hand it is playing, given the hand's public `history` in action ids
    /// (plays, draws, passes: the agent protocol's view, docs/agents.md):
    /// the others' tiles drawn exactly from the constraints belief (hand
    /// sizes and the voids the history shows), a consistent past for every
    /// seat, the whole replayed. `previous`: how the match's previous hand
    /// ended (`None` for a first hand).
    pub fn from_view(
        rules: &FullRules,
        seat: u8,
        tiles: TileSet,
        history: &[u32],
        previous: Option<HandEnd>,
        rng: &mut impl RngCore,
    ) -> Result<FivesState, SpielError> {
        let view = PublicView::of(rules, seat, tiles, history)?;
        let forced =
            matches!(rules.config().lead, FivesLead::HighestDouble) || !matches!(previous, Some(HandEnd::Domino(_)));
        let forced = forced.then_some(view.first_tile).flatten();
        let replay = Replay {
            rules,
            view: &view,
            seat,
            tiles,
            forced,
            previous,
        };
        // As `resample`: the second phase only where the first found nothing.
        let mut c = Constraints::new(&view.obs);
        for _ in 0..TRIES {
            if let Some(state) = replay.attempt(&mut c, &view.obs, rng)? {
                return Ok(state);
            }
        }
        let obs = tighten(rules, &view.events, forced, view.obs);
        let mut c = Constraints::new(&obs);
        for _ in 0..RETRIES {
            if let Some(state) = replay.attempt(&mut c, &obs, rng)? {
                return Ok(state);
            }
        }
        Err(SpielError::NoPast(TRIES + RETRIES))
    }
}

/// A hand to rebuild from a [`PublicView`]: the seat whose view it is, its
/// tiles, the forced opening tile and how the previous hand ended.
struct Replay<'a> {
    rules: &'a FullRules,
    view: &'a PublicView,
    seat: u8,
    tiles: TileSet,
    forced: Option<u8>,
    previous: Option<HandEnd>,
}

impl Replay<'_> {
    /// A placement drawn from `c` (under `obs`) and, if every seat has a
    /// past leading there, the hand replayed from it.
    fn attempt(
        &self,
        c: &mut Constraints,
        obs: &Observation,
        rng: &mut impl RngCore,
    ) -> Result<Option<FivesState>, SpielError> {
        let (rules, view) = (self.rules, self.view);
        let mut hands = draw_hands(c, obs, rng).ok_or(SpielError::NoPlacement("the history"))?;
        hands[self.seat as usize] = self.tiles;
        let mut pasts: Vec<Past> = Vec::new();
        for s in 0..rules.seats() {
            match past_of(rules, &view.events, self.forced, s, hands[s as usize], 0) {
                Some(p) => pasts.push(p),
                None => return Ok(None),
            }
        }
        let mut state = FivesState::new(rules.clone(), 0);
        state.previous = self.previous;
        let mut k = 0;
        for (i, &(_, e)) in view.events.iter().enumerate() {
            let a = match e {
                Event::Deal { seat: s, .. } => pasts[s as usize]
                    .dealt
                    .pop()
                    .ok_or(SpielError::Inconsistent("a deal is short"))?
                    as u32,
                Event::Drawn { seat: s, .. } => {
                    let p = &pasts[s as usize];
                    p.drawn
                        .iter()
                        .find(|&&(at, _)| at == i)
                        .ok_or(SpielError::Inconsistent("a draw has no tile"))?
                        .1 as u32
                }
                _ => {
                    k += 1;
                    view.ids[k - 1]
                }
            };
            state.apply(a)?;
        }
        Ok(Some(state))
    }
}

/// What every seat saw of a hand: its events (deals and draws without
/// their tiles), the acting seat's observation, the ids of the actions.
struct PublicView {
    events: Vec<(u32, Event)>,
    obs: Observation,
    /// The player actions' ids, in order (a draw is its id, then a chance node).
    ids: Vec<u32>,
    first_tile: Option<u8>,
}

impl PublicView {
    fn of(rules: &FullRules, seat: u8, tiles: TileSet, history: &[u32]) -> Result<PublicView, SpielError> {
        let seats = rules.seats();
        let (draw, pass) = (fives_draw_id(rules), fives_pass_id(rules));
        // Plays and passes pass the turn on; the leader is where they began.
        let turns = history.iter().filter(|&&a| a != draw).count() as u64;
        let leader = ((seat as u64 + seats as u64 * (turns + 1) - turns) % seats as u64) as u8;
        let mut pos = FivesPosition::deal(rules, [rules.all_tiles(); MAX_SEATS], Opening { leader, forced: None });
        pos.boneyard = 0;
        let mut events: Vec<(u32, Event)> = (0..rules.dealt())
            .map(|k| {
                (
                    0,
                    Event::Deal {
                        seat: deal_seat(rules, k),
                        tile: 0,
                    },
                )
            })
            .collect();
        let mut seen = Seen::default();
        let mut sizes = [rules.hand() as i32; MAX_SEATS];
        let (mut draws, mut on_board, mut first_tile) = (0u32, 0 as TileSet, None);
        let mut ids = Vec::new();
        for &a in history {
            let s = pos.mover;
            let matching = crate::belief::matching(rules, &pos).0;
            if a == draw {
                seen.stuck(rules, &pos);
                seen.drew(s);
                events.push((0, Event::Stuck { seat: s, matching }));
                events.push((0, Event::Drawn { seat: s, tile: 0 }));
                sizes[s as usize] += 1;
                draws += 1;
            } else if a == pass {
                seen.stuck(rules, &pos);
                pos.pass(rules);
                events.push((0, Event::Pass { seat: s, matching }));
            } else {
                let act = fives_action_of(a);
                if a > draw || on_board >> act.tile & 1 == 1 {
                    return Err(SpielError::HistoryAction(a));
                }
                first_tile.get_or_insert(act.tile);
                pos.play(rules, act);
                on_board |= bit(act.tile);
                sizes[s as usize] -= 1;
                events.push((
                    0,
                    Event::Play {
                        seat: s,
                        tile: act.tile,
                        loc: act.loc,
                    },
                ));
            }
            ids.push(a);
        }
        if pos.mover != seat {
            return Err(SpielError::HistorySeat(seat));
        }
        let (void, void_pips) = seen.voids();
        let hidden = rules.all_tiles() & !tiles & !on_board;
        let mut obs = Observation {
            seat,
            seats,
            hidden,
            size: [0; crate::belief::HOLDERS],
            void: [0; crate::belief::HOLDERS],
            void_pips: [0; MAX_SEATS],
        };
        let boneyard = rules.tile_count() as i32 - rules.dealt() as i32 - draws as i32;
        obs.size[BONEYARD] = u8::try_from(boneyard)
            .map_err(|_| SpielError::HistoryCounts("history: more draws than the boneyard held"))?;
        for s in (0..seats as usize).filter(|&s| s != seat as usize) {
            obs.size[s] = u8::try_from(sizes[s])
                .map_err(|_| SpielError::HistoryCounts("history: a seat played more tiles than it had"))?;
            obs.void[s] = void[s];
            obs.void_pips[s] = void_pips[s];
        }
        let total: u32 = obs.size.iter().map(|&n| n as u32).sum();
        if total != hidden.count_ones() || sizes[seat as usize] != tiles.count_ones() as i32 {
            return Err(SpielError::HistoryCounts("the tiles and the history do not add up"));
        }
        Ok(PublicView {
            events,
            obs,
            ids,
            first_tile,
        })
    }
}

#[cfg(test)]
mod tests;
