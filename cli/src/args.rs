//! Flags shared by several commands, and their validation.

use anyhow::{Result, bail};
use clap::Args;
use engine::{Blocked, DepthLimit, Lead, Rules, RulesConfig, SearchConfig, WorldCount};

/// The rule set, flag by flag (defaults: the thesis rules).
#[derive(Debug, Clone, Args)]
pub struct RulesArgs {
    /// Play with the double-N set (1-9).
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub set: u8,
    /// Tiles dealt to each seat.
    #[arg(long, default_value_t = 3)]
    pub hand: u8,
    /// Tiles left in the boneyard (2 * hand + boneyard = tiles in the set).
    #[arg(long, default_value_t = 4)]
    pub boneyard: u8,
    /// Who opens: highest-double, player or target.
    #[arg(long, default_value = "highest-double")]
    pub lead: Lead,
    /// Scoring of a blocked game: difference or none.
    #[arg(long, default_value = "difference")]
    pub blocked: Blocked,
}

impl RulesArgs {
    pub fn rules(&self) -> Result<Rules> {
        Ok(Rules::new(RulesConfig {
            set: self.set,
            hand: self.hand,
            boneyard: self.boneyard,
            lead: self.lead,
            blocked: self.blocked,
        })?)
    }
}

/// Search settings.
#[derive(Debug, Clone, Args)]
pub struct SearchArgs {
    /// Worlds per partial-observation decision: all, or a sample of K.
    #[arg(long, default_value = "all")]
    pub worlds: String,
    /// Look-ahead in turns: unlimited, or 1-254.
    #[arg(long, default_value = "unlimited")]
    pub depth: String,
}

impl SearchArgs {
    pub fn config(&self) -> Result<SearchConfig> {
        Ok(SearchConfig {
            worlds: parse_worlds(&self.worlds)?,
            depth: parse_depth(&self.depth)?,
            ..SearchConfig::default()
        })
    }
}

pub fn parse_worlds(s: &str) -> Result<WorldCount> {
    s.parse().map_err(|why| anyhow::anyhow!("--worlds {s:?}: {why}"))
}

pub fn parse_depth(s: &str) -> Result<DepthLimit> {
    s.parse().map_err(|why| anyhow::anyhow!("--depth {s:?}: {why}"))
}

/// Parses a list of starting states such as `0-4199`, `17` or `0-9,20,30-39`,
/// checking every index against the rules.
pub fn parse_states(s: &str, rules: &Rules) -> Result<Vec<u64>> {
    let count = rules.starting_states();
    let mut out = Vec::new();
    for part in s.split(',') {
        let part = part.trim();
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part, part),
        };
        let (Ok(lo), Ok(hi)) = (lo.parse::<u64>(), hi.parse::<u64>()) else {
            bail!("--states {s:?}: {part:?} is not a state index or a range like 0-99");
        };
        if lo > hi {
            bail!("--states {s:?}: range {part:?} runs backwards");
        }
        if hi >= count {
            bail!(
                "--states {s:?}: state {hi} is out of range: these rules have {count} starting states (0-{})",
                count - 1
            );
        }
        if hi - lo >= 50_000_000 {
            bail!("--states {s:?}: range {part:?} is larger than 50,000,000 states");
        }
        out.extend(lo..=hi);
    }
    Ok(out)
}
