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
pub(super) fn check_open_pool(pool: &Pool, preset: Preset) -> Result<(), SpecError> {
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
