//! Flags shared by several commands, and their validation.

use anyhow::{Result, bail};
use clap::Args;
use engine::{Belief, Blocked, DepthLimit, Lead, Rules, RulesConfig, SearchConfig, WorldCount};

/// The rule set, flag by flag (defaults: the thesis rules). Each is
/// `None` unless given, so that a command can tell a flag given with its
/// default value from one left out.
#[derive(Debug, Clone, Args)]
pub struct RulesArgs {
    /// Play with the double-N set (1-9) [default: 3].
    #[arg(long, value_name = "N")]
    pub set: Option<u8>,
    /// Tiles dealt to each seat [default: 3].
    #[arg(long)]
    pub hand: Option<u8>,
    /// Tiles left in the boneyard (2 * hand + boneyard = tiles in the set) [default: 4].
    #[arg(long)]
    pub boneyard: Option<u8>,
    /// Who opens: highest-double, player or target [default: highest-double].
    #[arg(long)]
    pub lead: Option<Lead>,
    /// Scoring of a blocked game: difference or none [default: difference].
    #[arg(long)]
    pub blocked: Option<Blocked>,
}

impl RulesArgs {
    pub fn rules(&self) -> Result<Rules> {
        let t = RulesConfig::default();
        Ok(Rules::new(RulesConfig {
            set: self.set.unwrap_or(t.set),
            hand: self.hand.unwrap_or(t.hand),
            boneyard: self.boneyard.unwrap_or(t.boneyard),
            lead: self.lead.unwrap_or(t.lead),
            blocked: self.blocked.unwrap_or(t.blocked),
        })?)
    }

    /// Whether any flag was given.
    pub fn any_given(&self) -> bool {
        self.set.is_some()
            || self.hand.is_some()
            || self.boneyard.is_some()
            || self.lead.is_some()
            || self.blocked.is_some()
    }
}

/// Search settings.
#[derive(Debug, Clone, Args)]
pub struct SearchArgs {
    /// Worlds per partial-observation decision: all, or a sample of K.
    #[arg(long, default_value = "all")]
    pub worlds: WorldCount,
    /// Look-ahead in turns: unlimited, or 1-254.
    #[arg(long, default_value = "unlimited")]
    pub depth: DepthLimit,
    /// Where partial observation's worlds come from: uniform, constraints
    /// (and, in the full game, dominai or model); see docs/beliefs.md.
    #[arg(long, default_value = "uniform")]
    pub belief: Belief,
}

impl SearchArgs {
    /// The thesis's search settings (its beliefs: uniform and constraints).
    pub fn config(&self) -> Result<SearchConfig> {
        let belief = self.belief;
        if belief.all_fives_only() {
            bail!(
                "--belief {}: the thesis's worlds split the unseen tiles between the target and the boneyard: use \
                 uniform or constraints (dominai and model play --preset all-fives)",
                belief.name()
            );
        }
        Ok(SearchConfig {
            worlds: self.worlds,
            depth: self.depth,
            belief,
        })
    }
}

pub fn parse_depth(s: &str) -> Result<DepthLimit> {
    s.parse().map_err(|why| anyhow::anyhow!("--depth {s:?}: {why}"))
}

/// The starting states `--states` names (the text form of the spec's
/// `starting_states`, parsed by the same [`jobs::StateSet::parse`]), in order.
/// The CLI holds them in memory, so a set may have at most
/// [`jobs::MAX_LISTED_STATES`] states.
pub fn parse_states(s: &str, rules: &Rules) -> Result<Vec<u64>> {
    let set =
        jobs::StateSet::parse(s, rules.starting_states()).map_err(|why| anyhow::anyhow!("--states {s:?}: {why}"))?;
    if set.len() > jobs::MAX_LISTED_STATES {
        bail!(
            "--states {s:?}: names {} states; a command takes at most {}",
            set.len(),
            jobs::MAX_LISTED_STATES
        );
    }
    Ok(set.iter().collect())
}
