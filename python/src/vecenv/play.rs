//! One game's part of a step: the chance nodes and the engines' seats
//! played to the learner's turn, its observation written, a finished game
//! recorded and dealt again.

use rand_chacha::ChaCha20Rng;

use full::spiel::{CHANCE, SpielState};

use super::{ENGINE_STREAM, Illegal, Out, Shared, Slot, has};
use crate::bot::Bot;

impl Shared<'_> {
    fn engine_stream(&self, bot: &Bot, i: usize, slot: &Slot, player: u8) -> ChaCha20Rng {
        let at = (slot.state.history().len() as u64) << 8 | player as u64;
        engine::seed::keyed_rng(
            bot.seed(),
            (i as u64) << 32 | slot.episode,
            at,
            engine::seed::PYTHON,
            ENGINE_STREAM,
        )
    }

    /// Plays the chance nodes and the engines' seats until a learner's seat
    /// acts or the game ends.
    fn play_out(&self, i: usize, slot: &mut Slot) -> Result<(), String> {
        loop {
            let player = slot.state.current_player();
            if player == CHANCE {
                slot.state.apply_chance(&mut slot.chance).map_err(|e| e.to_string())?;
                continue;
            }
            let Ok(p) = u8::try_from(player) else {
                return Ok(());
            };
            let Some(bot) = &self.engines[p as usize] else {
                return Ok(());
            };
            let mut rng = self.engine_stream(bot, i, slot, p);
            let a = bot.decide(&slot.state, p, &mut rng)?;
            slot.state.apply(a).map_err(|e| e.to_string())?;
        }
    }

    /// A new game in `slot`, played to the learner's first turn (a game
    /// that ends before it is dealt again), its observation written.
    pub(super) fn start(&self, i: usize, slot: &mut Slot, out: Out<'_>) -> Result<(), String> {
        loop {
            slot.state.restart_in_place();
            self.play_out(i, slot)?;
            if !slot.state.is_terminal() {
                break;
            }
            slot.episode += 1;
        }
        self.observe(&slot.state, out);
        Ok(())
    }

    /// The acting seat's observation, its legal actions as a mask and as
    /// a list (ascending, padded with -1).
    fn observe(&self, state: &SpielState, out: Out<'_>) {
        let p = state.current_player();
        *out.seat = p as i32;
        state.encode_slice(p.max(0) as u8, self.encoding, out.obs);
        out.mask.fill(0);
        out.py_mask.fill(0);
        let mut ids = [0u32; 128];
        let count = state.legal_ids(&mut ids);
        for &id in &ids[..count] {
            out.mask[id as usize / 64] |= 1 << (id % 64);
            out.py_mask[id as usize] = 1;
        }
        let (listed, rest) = out.legal.split_at_mut(count);
        for (slot, &id) in listed.iter_mut().zip(&ids[..count]) {
            *slot = id as i32;
        }
        rest.fill(-1);
        *out.count = count as i32;
    }

    /// One learner action in game `i`, then the others' to its next turn;
    /// a finished game is recorded and started anew.
    pub(super) fn advance(&self, i: usize, slot: &mut Slot, action: i64, out: Out<'_>) -> Result<(), String> {
        let actor = slot.state.current_player() as u8;
        let legal = u32::try_from(action)
            .ok()
            .filter(|&a| (a as usize) < self.actions && has(out.mask, a));
        let forfeit = match legal {
            Some(a) => {
                // The mask is this state's legal list, kept in Rust.
                slot.state.apply_legal(a).map_err(|e| e.to_string())?;
                self.play_out(i, slot)?;
                None
            }
            None if self.illegal == Illegal::Forfeit => Some(actor),
            None => return Err(format!("actions[{i}] = {action}: not a legal action of game {i}")),
        };
        *out.reward = 0.0;
        *out.terminated = 0;
        if forfeit.is_none() && !slot.state.is_terminal() {
            self.observe(&slot.state, out);
            return Ok(());
        }
        let returns = match forfeit {
            Some(seat) => self.forfeit_returns(&slot.state, seat),
            None => slot.state.returns(),
        };
        for (r, &v) in out.returns.iter_mut().zip(&returns) {
            *r = v as f32;
        }
        // The learner's reward: its seat's, the one that acted last if several.
        *out.reward = returns[actor as usize] as f32;
        *out.terminated = 1;
        slot.state.encode_slice(actor, self.encoding, out.final_obs);
        slot.episode += 1;
        self.start(i, slot, out)
    }

    /// The returns when `seat` forfeits: its side gets the game's worst
    /// return, the other sides share its opposite.
    fn forfeit_returns(&self, state: &SpielState, seat: u8) -> Vec<f64> {
        let rules = state.rules();
        let low = state.min_utility();
        let sides = rules.sides() as f64;
        (0..self.seats as u8)
            .map(|s| {
                if rules.side(s) == rules.side(seat) {
                    low
                } else {
                    -low / (sides - 1.0)
                }
            })
            .collect()
    }
}
