//! A full-game grid point with external agents (docs/agents.md), on
//! either side or both: each process is told the game, decides its side's
//! seats, and is told the end; a forfeit becomes the row of a game the
//! other side won by the game's maximum.

use crate::external::{BeginError, End, ExternalPool, ForfeitNote, Game};
use crate::grid::GameCoords;
use crate::rows::{ExecError, GameRow};
use crate::spec::{AgentPlay, ExternalAgent, Spec};
use engine::{Ending, Seat};
use full::{Forfeit, FullRules, Preset};

/// The external agents of grid point `c`'s pairing (either side, or
/// both), each with the seats it plays.
pub(super) fn externals<'s>(
    spec: &'s Spec,
    c: &GameCoords,
    rules: &FullRules,
) -> Vec<(&'s str, &'s ExternalAgent, Vec<u8>)> {
    let (Some(pool), Some(k)) = (spec.pool.as_ref(), c.pairing) else {
        return Vec::new();
    };
    let (a, o) = pool.pairings[k as usize];
    [(a, true), (o, false)]
        .into_iter()
        .filter_map(|(i, agent_side)| {
            let agent = &pool.agents[i as usize];
            let AgentPlay::External(e) = &agent.play else {
                return None;
            };
            let seats = (0..rules.seats())
                .filter(|&s| (rules.side(s) == c.agent_side) == agent_side)
                .collect();
            Some((agent.name.as_str(), e, seats))
        })
        .collect()
}

/// Begins the game with its external agents (`externals`): the forfeit
/// of the first that is out of restarts, the task's error when one cannot
/// start.
pub(super) fn begin(
    ext: &mut ExternalPool,
    externals: &[(&str, &ExternalAgent, Vec<u8>)],
    spec: &Spec,
    c: &GameCoords,
    rules: &FullRules,
    to: u32,
) -> Result<Option<Forfeit>, ExecError> {
    for (name, agent, seats) in externals {
        let game = Game::new(rules, to, seats, game_seed(spec, c));
        match ext.begin(name, agent, seats, &game) {
            Ok(()) => {}
            Err(BeginError::Forfeit(reason)) => {
                // The others already begun hear the game's end.
                let forfeit = Forfeit { seat: seats[0], reason };
                end(ext, None, Some(&forfeit));
                return Ok(Some(forfeit));
            }
            Err(BeginError::Fatal(message)) => {
                ext.abandon();
                return Err(ExecError::Game {
                    index: c.game_index,
                    message,
                });
            }
        }
    }
    Ok(None)
}

/// The seed the agent is given for its own randomness: a function of the
/// game's coordinates (so a deterministic agent plays a game the same way
/// each time it is run).
fn game_seed(spec: &Spec, c: &GameCoords) -> u64 {
    spec.seed ^ c.game_index.wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// Tells the agents the game's end: each side's points (`totals`) and the
/// winning side (`null` and `tie` when every side has the same points),
/// or the forfeit: the seat, the reason's kind (`illegal`, `time`,
/// `protocol`, `crash`) and its detail.
pub(super) fn end(ext: &mut ExternalPool, totals: Option<(&[u32], u8)>, forfeit: Option<&Forfeit>) {
    let end = match (totals, forfeit) {
        (_, Some(f)) => End::Forfeit {
            forfeit: ForfeitNote {
                seat: f.seat,
                reason: reason_kind(&f.reason),
                detail: f.reason.clone(),
            },
        },
        (Some((t, w)), None) => {
            let tie = t.windows(2).all(|p| p[0] == p[1]);
            End::Result {
                points: t.to_vec(),
                winner: (!tie).then_some(w),
                tie,
            }
        }
        (None, None) => End::Abandoned {},
    };
    ext.end(end);
}

/// A forfeit's reason as rows and messages name it: the first word of its
/// detail (`crash: no restarts left` -> `crash`).
fn reason_kind(detail: &str) -> String {
    detail.split([':', ' ']).next().unwrap_or("forfeit").to_string()
}

/// The game's maximum, which the other side wins by when a seat forfeits:
/// block 69 and team 100 (OpenSpiel's utility bounds), an All-Fives match
/// its target score, one All-Fives hand the pips of the whole set.
pub(super) fn maximum(rules: &FullRules, to: u32) -> u32 {
    match rules.kind() {
        Preset::Block => 69,
        Preset::Team => 100,
        Preset::AllFives if to > 0 => to,
        Preset::AllFives => rules.pip_total(rules.all_tiles()),
    }
}

/// The row of a game `f` forfeited (`row`: the grid point's row as named):
/// the forfeiting side scores 0, the other the game's maximum; `forfeit`
/// names the reason's kind (`illegal`, `time`, `crash`, `protocol`); the
/// detail goes to the worker's log.
pub(super) fn forfeit_row(row: GameRow, c: &GameCoords, rules: &FullRules, to: u32, f: &Forfeit) -> GameRow {
    let kind = reason_kind(&f.reason);
    // A game stopped by the worker's stop is given back, not written: no
    // forfeit to tell.
    let stopped = f.reason.ends_with(crate::external::STOPPING);
    if !stopped {
        tracing::warn!(
            target: crate::external::LOG_TARGET,
            "game {}: {} forfeits (seat {}): {}",
            c.game_index,
            if rules.side(f.seat) == c.agent_side {
                row.agent.as_deref().unwrap_or("the external agent")
            } else {
                row.opponent.as_deref().unwrap_or("the external agent")
            },
            f.seat,
            f.reason
        );
    }
    let max = maximum(rules, to);
    let agent_lost = rules.side(f.seat) == c.agent_side;
    let (player_score, target_score) = if agent_lost { (0, max) } else { (max, 0) };
    let score_diff = player_score as i32 - target_score as i32;
    GameRow {
        leader: Seat::Player,
        player_score,
        target_score,
        score_diff,
        win_or_tie: score_diff >= 0,
        ending: Ending::Forfeit,
        forfeit: Some(kind),
        ..row
    }
}
