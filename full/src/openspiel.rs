//! OpenSpiel interoperability for `block` and `team`: its action ids (one
//! block of ids per seat: per tile in canonical order, the opening play,
//! then the low pip covered, then the high pip; 77 per seat for double-6),
//! its chance actions (the tile dealt), and replaying an OpenSpiel history.

use engine::{TileSet, bit};

use super::position::{FullAction, FullActions, FullPosition, OPENING};
use super::rules::{DealOrder, FullRules, MAX_SEATS};

/// OpenSpiel's id of `seat` making play `a`.
pub fn action_id(rules: &FullRules, seat: u8, a: FullAction) -> u32 {
    let (p, _) = rules.pips(a.tile);
    let code = if a.cover == OPENING {
        0
    } else if a.cover == p {
        1
    } else {
        2
    };
    seat as u32 * rules.actions_per_seat() as u32 + rules.action_offset(a.tile) as u32 + code
}

/// The seat and play an OpenSpiel action id names, or `None` for an id out
/// of range.
pub fn action_from_id(rules: &FullRules, id: u64) -> Option<(u8, FullAction)> {
    let per = rules.actions_per_seat() as u64;
    let seat = id / per;
    if seat >= rules.seats() as u64 {
        return None;
    }
    let within = (id % per) as u16;
    // The last tile whose offset is at most `within` (offsets ascend; tile 0's is 0).
    let tile = rules.action_tile(within);
    let (p, q) = rules.pips(tile);
    let cover = match within - rules.action_offset(tile) {
        0 => OPENING,
        1 => p,
        _ => q,
    };
    Some((seat as u8, FullAction { tile, cover }))
}

/// The seat the `k`-th chance action deals to.
pub fn deal_seat(rules: &FullRules, k: u8) -> u8 {
    match rules.deal_order() {
        DealOrder::Blocks => k / rules.hand(),
        DealOrder::RoundRobin => k % rules.seats(),
    }
}

/// A deal as OpenSpiel's chance actions: the tiles in the order dealt (each
/// seat's tiles ascending).
pub fn chance_actions(rules: &FullRules, hands: &[TileSet; MAX_SEATS]) -> Vec<u32> {
    let mut left = *hands;
    (0..rules.dealt())
        .map(|k| {
            let s = deal_seat(rules, k) as usize;
            let t = left[s].trailing_zeros();
            left[s] &= left[s] - 1;
            t
        })
        .collect()
}

/// What replaying a history found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistoryReplay {
    /// The sorted legal action ids at each decision node along the history,
    /// before the action taken there, and at the last node too when the
    /// history stops at a decision node.
    pub legal: Vec<Vec<u32>>,
    /// The seats' returns when the history ends the game.
    pub returns: Option<Vec<i32>>,
}

/// A history that is not a legal OpenSpiel game.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("step {index} (action {action}): {reason}")]
pub struct HistoryError {
    /// The 0-based position of the step in the history.
    pub index: usize,
    /// The action id given there.
    pub action: u64,
    /// Why it is illegal.
    pub reason: String,
}

/// Replays an OpenSpiel history (chance actions first, then plays).
pub fn replay_history(rules: &FullRules, history: &[u64]) -> Result<HistoryReplay, HistoryError> {
    let mut hands = [0 as TileSet; MAX_SEATS];
    let mut dealt: TileSet = 0;
    let mut pos: Option<FullPosition> = None;
    let mut legal = Vec::new();
    let mut list = FullActions::default();
    let ids = |p: &FullPosition, list: &mut FullActions| -> Vec<u32> {
        p.actions(rules, list);
        list.as_slice().iter().map(|&a| action_id(rules, p.mover, a)).collect()
    };
    for (index, &action) in history.iter().enumerate() {
        let fail = |reason: String| HistoryError { index, action, reason };
        let Some(p) = pos.as_mut() else {
            // A chance node: the action is the tile dealt.
            if action >= rules.tile_count() as u64 {
                return Err(fail(format!(
                    "a deal names a tile 0-{}, not {action}",
                    rules.tile_count() - 1
                )));
            }
            let t = action as u8;
            if dealt & bit(t) != 0 {
                return Err(fail(format!("tile {} was dealt already", rules.tile_name(t))));
            }
            let k = dealt.count_ones() as u8;
            dealt |= bit(t);
            hands[deal_seat(rules, k) as usize] |= bit(t);
            if k + 1 == rules.dealt() {
                pos = Some(FullPosition::deal(rules, hands));
            }
            continue;
        };
        if p.end.is_some() {
            return Err(fail("the game is over".into()));
        }
        legal.push(ids(p, &mut list));
        let named = action_from_id(rules, action);
        match named {
            Some((seat, a)) if seat == p.mover && p.is_legal(rules, a) => p.play(rules, a),
            Some((seat, _)) if seat != p.mover => {
                return Err(fail(format!("it is seat {}'s turn, not seat {seat}'s", p.mover)));
            }
            Some(_) => return Err(fail("not a legal play here".into())),
            None => {
                return Err(fail(format!(
                    "not an action id of this game (0-{})",
                    rules.seats() as u32 * rules.actions_per_seat() as u32 - 1
                )));
            }
        }
    }
    let returns = match &pos {
        Some(p) if p.end.is_some() => Some(p.returns(rules)[..rules.seats() as usize].to_vec()),
        Some(p) => {
            legal.push(ids(p, &mut list));
            None
        }
        None => None,
    };
    Ok(HistoryReplay { legal, returns })
}
