//! `resample_from_infostate`: a state that `player` cannot tell from the
//! true one. The hidden tiles' places now are drawn exactly uniformly from
//! the `constraints` belief ([`Constraints`]: every placement that
//! agrees with the hand sizes and the tiles each seat showed it lacks); a
//! past that leads there is then built for each other seat (which of its
//! tiles were dealt and which drawn when), and the state is replayed from
//! that history, so it is a true state of the game with the player's own
//! information unchanged. A placement no past can lead to is drawn again.

use crate::belief::{BONEYARD, Constraints, Observation};
use crate::rules::MAX_SEATS;
use engine::{TileSet, bit, bits};
use rand_core::RngCore;

use super::fives::{Event, FivesState};
use super::open::OpenSpielState;

/// Placements drawn before giving up (each agrees with what the player saw;
/// one without a consistent past is rare).
const TRIES: usize = 1000;

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
    pub fn resample(&self, player: u8, rng: &mut impl RngCore) -> Result<OpenSpielState, String> {
        let Some(pos) = &self.pos else {
            return Err("resample_from_infostate: the deal is not done".into());
        };
        let rules = &self.rules;
        let obs = Observation::of_hands(rules, &pos.hands, pos.boneyard, player, &self.void, &[0; MAX_SEATS]);
        let mut c = Constraints::new(&obs);
        let mut hands = draw_hands(&mut c, &obs, rng).ok_or("no placement agrees with what the player saw")?;
        hands[player as usize] = pos.hands[player as usize];
        self.with_hands(player, &hands)
    }
}

impl FivesState {
    pub fn resample(&self, player: u8, rng: &mut impl RngCore) -> Result<FivesState, String> {
        let Some(pos) = &self.pos else {
            return Err("resample_from_infostate: the deal is not done".into());
        };
        if self.over {
            return Ok(self.clone());
        }
        let rules = self.rules();
        let (void, void_pips) = self.seen.voids();
        let obs = Observation::new(rules, pos, player, &void, &void_pips);
        let mut c = Constraints::new(&obs);
        for _ in 0..TRIES {
            let hands = draw_hands(&mut c, &obs, rng).ok_or("no placement agrees with what the player saw")?;
            if let Some(history) = self.history_for(player, &hands) {
                let mut core = FivesState::new(self.rules.clone(), self.to);
                for a in history {
                    core.apply(a)?;
                }
                return Ok(core);
            }
        }
        Err(format!("no past found for {TRIES} placements"))
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

    /// A past of `seat` this hand (events from `start`) that leaves it
    /// holding `now`: which of its tiles it was dealt and which it drew at
    /// each draw, every tile it held when it was stuck matching no open end.
    fn past_of(&self, seat: u8, now: TileSet, start: usize) -> Option<Past> {
        let events = &self.events[start..];
        let mine = |e: &Event| match *e {
            Event::Deal { seat: s, .. }
            | Event::Play { seat: s, .. }
            | Event::Stuck { seat: s, .. }
            | Event::Drawn { seat: s, .. }
            | Event::Pass { seat: s, .. } => s == seat,
        };
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
        let rules = self.rules();
        let weight = |t: u8| {
            let (a, b) = rules.pips(t);
            (a == b, a + b, b)
        };
        let ceiling = self.opening.and_then(|o| o.forced).map(weight);
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
