//! Named agents on OpenSpiel's block and team: which engines, beliefs and
//! strategies play them.

use engine::TargetKind;
use full::{FullTarget, Preset};

use super::SpecError;
use super::agents::{AgentPlay, Pool};
use super::fields::bad;
use super::shaping::ShapingLevel;

/// Named agents on block and team: the searches go to a depth or a node
/// budget a world (mstar, expectimax; dominai) or spend a node budget
/// (ismcts), their worlds from the uniform or constraints belief; the
/// strategies are random and heaviest.
pub(super) fn check_open_pool(pool: &Pool, preset: Preset) -> Result<(), SpecError> {
    if preset == Preset::AllFives {
        return Ok(());
    }
    for a in &pool.agents {
        let key = |k: &str| format!("agents.{}.{k}", a.name);
        match &a.play {
            AgentPlay::Search(s) => {
                if s.belief.all_fives_only() {
                    return Err(bad(
                        &key("belief"),
                        format!("\"{}\"", s.belief.name()),
                        format!("{preset}'s worlds come from \"uniform\" or \"constraints\""),
                    ));
                }
                if s.learned {
                    return Err(bad(
                        &key("evaluation"),
                        "\"learned\"",
                        format!(
                            "the learned evaluation is all-fives' (two seats of double-6); {preset}'s searches value \
                             leaves by the score"
                        ),
                    ));
                }
                if let Some(a) = s.adaptive {
                    return Err(bad(
                        &key("adaptive"),
                        super::fields::adaptive_text(a),
                        format!("adaptive effort stops all-fives' worlds, not {preset}'s"),
                    ));
                }
                if s.shaping != ShapingLevel::NONE {
                    return Err(bad(
                        &key("shaping"),
                        format!("\"{}\"", s.shaping.name()),
                        format!("shaping applies to all-fives, not {preset}"),
                    ));
                }
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
