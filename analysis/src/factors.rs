//! Every factor of the grid on its own: for each factor with more than one
//! level in the rows (rule set, information source, observability, target, engine,
//! belief, shaping, budget, agent, opponent), the games, mean score
//! difference with its 95% interval and win/tie share of each level,
//! marginal over the other factors. One accumulator per (factor, level),
//! the levels in the order the rows first show them: the rows come in game
//! order, so that is the spec's order (rule sets, then each factor's list).
//! A grid of named agents has its own factors (rule set, observability,
//! agent, opponent): the settings each agent brings are not levels of it.

use serde::{Deserialize, Serialize};

use crate::nan_from_null;
use crate::stats::{self, Moments};
use crate::table::{Entry, Table};

/// One level of one factor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FactorLevel {
    pub factor: String,
    pub level: String,
    pub games: u64,
    #[serde(deserialize_with = "nan_from_null")]
    pub mean_score_diff: f64,
    #[serde(deserialize_with = "nan_from_null")]
    pub ci_low: f64,
    #[serde(deserialize_with = "nan_from_null")]
    pub ci_high: f64,
    #[serde(deserialize_with = "nan_from_null")]
    pub win_or_tie: f64,
}

const FACTORS: [&str; 10] = [
    "rules",
    "information_source",
    "observability",
    "target",
    "engine",
    "belief",
    "shaping",
    "budget",
    "agent",
    "opponent",
];

/// A factor's level as it is keyed: a name the engine spells (no
/// allocation for the thesis's rows) or one made for the row; ordered by
/// its text either way.
#[derive(Clone, Debug)]
enum Level {
    Static(&'static str),
    Name(String),
}

impl Level {
    fn as_str(&self) -> &str {
        match self {
            Level::Static(s) => s,
            Level::Name(s) => s,
        }
    }
}

impl PartialEq for Level {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Level {}

impl PartialOrd for Level {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Level {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

#[derive(Debug, Default)]
pub(crate) struct FactorAcc {
    /// Per factor, its levels in first-seen order.
    levels: [Vec<(Level, Moments, u64)>; FACTORS.len()],
}

impl FactorAcc {
    pub(crate) fn add(&mut self, r: &jobs::GameRow) {
        use engine::Observability;
        let levels: [Option<Level>; 10] = [
            r.rules.clone().map(Level::Name),
            Some(Level::Static(r.information_source.name())),
            Some(Level::Static(match r.observability {
                Observability::Full => "full",
                Observability::Partial => "partial",
            })),
            Some(Level::Static(r.target.name())),
            Some(Level::Static(r.engine.name())),
            r.belief.map(|b| Level::Static(b.name())),
            Some(match r.shaping == jobs::ShapingLevel::NONE {
                true => Level::Static("none"),
                false => Level::Name(r.shaping.name()),
            }),
            r.budget.map(|b| Level::Name(b.to_string())),
            r.agent.clone().map(Level::Name),
            r.opponent.clone().map(Level::Name),
        ];
        // Named agents: the grid's factors are the rule set, observability,
        // agent and opponent; source, target, engine, belief, shaping and
        // budget are the agents' own settings.
        let agents = r.agent.is_some();
        for (k, level) in levels.into_iter().enumerate() {
            if agents && !matches!(FACTORS[k], "rules" | "observability" | "agent" | "opponent") {
                continue;
            }
            if let Some(level) = level {
                let list = &mut self.levels[k];
                let i = match list.iter().position(|(l, _, _)| *l == level) {
                    Some(i) => i,
                    None => {
                        list.push((level, Moments::default(), 0));
                        list.len() - 1
                    }
                };
                list[i].1.add(r.score_diff as f64);
                list[i].2 += r.win_or_tie as u64;
            }
        }
    }

    /// The levels of the factors that vary, in factor order.
    pub(crate) fn finish(&self) -> Vec<FactorLevel> {
        let mut out = Vec::new();
        for (k, name) in FACTORS.iter().enumerate() {
            let levels = &self.levels[k];
            if levels.len() < 2 {
                continue;
            }
            for (level, m, wins) in levels {
                let t = stats::paired_test(m);
                out.push(FactorLevel {
                    factor: name.to_string(),
                    level: level.as_str().to_string(),
                    games: m.n,
                    mean_score_diff: m.mean(),
                    ci_low: t.ci_low,
                    ci_high: t.ci_high,
                    win_or_tie: *wins as f64 / m.n.max(1) as f64,
                });
            }
        }
        out
    }
}

/// The factors' table, for report.md and factors.csv.
fn table<'a>() -> Table<'a, FactorLevel> {
    Table::new()
        .column("factor", &["factor"], |l: &FactorLevel| Entry::same(&l.factor))
        .column("level", &["level"], |l| Entry::same(&l.level))
        .column("games", &["games"], |l| Entry::same(l.games))
        .column("mean diff [95%]", &["mean_score_diff", "ci_low", "ci_high"], |l| {
            Entry::new(
                format!("{:+.3} [{:+.3}, {:+.3}]", l.mean_score_diff, l.ci_low, l.ci_high),
                [l.mean_score_diff, l.ci_low, l.ci_high],
            )
        })
        .column("win/tie", &["win_or_tie"], |l| {
            Entry::new(format!("{:.1}%", 100.0 * l.win_or_tie), [l.win_or_tie])
        })
}

/// The section in Markdown (nothing when no factor varies).
pub(crate) fn markdown(levels: &[FactorLevel]) -> String {
    if levels.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "## By factor\n\nEach factor of the grid that has more than one level, on its own (every other factor \
         pooled): the games, the agent side's mean score difference with its 95% interval, and its win/tie share. \
         `factors.csv` has the same numbers.\n\n",
    );
    s.push_str(&table().markdown(levels));
    s.push('\n');
    s
}

/// factors.csv.
pub(crate) fn csv(levels: &[FactorLevel]) -> String {
    table().csv(levels)
}
