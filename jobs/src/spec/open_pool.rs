//! Named agents on OpenSpiel's block and team: which engines, beliefs and
//! strategies play them.

use engine::TargetKind;
use full::{FullTarget, Preset};

use super::SpecError;
use super::agents::{AgentPlay, Pool};
use super::fields::bad;

/// Named agents on block and team: the searches go to a depth or a node
/// budget a world (mstar, expectimax; dominai) or spend a node budget
/// (ismcts), their worlds from the uniform or constraints belief; the
/// strategies are random and heaviest.
///
/// A network plays All Fives one hand at a time (no `[match]`) from the
/// `rich` encoding: its seats are told their view alone
/// (`full::spiel::NetSeats`).
pub(super) fn check_open_pool(pool: &Pool, config: &full::FullConfig, match_to: Option<u32>) -> Result<(), SpecError> {
    let preset = config.preset;
    for a in pool.agents.iter().filter(|a| matches!(a.play, AgentPlay::Net(_))) {
        let AgentPlay::Net(n) = &a.play else { continue };
        let key = format!("agents.{}.net", a.name);
        if preset == Preset::AllFives {
            if let Some(to) = match_to.filter(|&t| t > 0) {
                return Err(bad(
                    "match.to",
                    to,
                    format!(
                        "agent {:?} is a network, which plays All Fives one hand at a time: leave [match] out",
                        a.name
                    ),
                ));
            }
            if n.policy.encoding() == full::spiel::Encoding::InfoState {
                return Err(bad(
                    &key,
                    format!("\"{}\"", n.path),
                    "an All-Fives network reads the \"rich\" encoding (or \"rich_history\") in muggins run \
                     (\"info_state\" shows the seat's drawn tiles, which its view does not tell; it plays from \
                     Python: muggins.Bot(\"net\"))",
                ));
            }
        }
        let rules = full::FullRules::new(*config).map_err(|e| bad("rules", "{...}", e.to_string()))?;
        n.policy
            .check(&full::spiel::SpielState::new(rules, 0))
            .map_err(|why| bad(&key, format!("\"{}\"", n.path), why.to_string()))?;
    }
    if preset == Preset::AllFives {
        return Ok(());
    }
    for a in &pool.agents {
        match &a.play {
            AgentPlay::Search(s) => {
                s.settings
                    .check(Some(preset), None)
                    .map_err(|e| super::pool::setting_error(&a.name, e))?;
            }
            AgentPlay::Strategy(
                FullTarget::Thesis(TargetKind::Scorer | TargetKind::Defender) | FullTarget::Searcher,
            ) => {
                return Err(bad(
                    "grid.agents",
                    format!("\"{}\"", a.name),
                    format!("{preset} has no count to score or defend: its strategies are random and heaviest"),
                ));
            }
            _ => {}
        }
    }
    Ok(())
}
