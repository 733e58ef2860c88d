//! The names a user gives a seat's player, and the one check of a search's
//! settings. The spec (`[agents.NAME]`, `[search]`), `muggins play` and the
//! Python `Bot` parse engines, strategies and leaf evaluations through the
//! types here and check a [`SearchSettings`] with
//! [`SearchSettings::check`]; each names the failing setting in its own
//! words ([`Setting`]: `agents.x.budget`, `--budget`, `budget =`).

use std::fmt;
use std::str::FromStr;

use engine::{Observability, PlayerEngine};

use super::agent::{DEEPEST, SearchSettings};
use super::alphabeta::Shaping;
use super::rules::Preset;
use super::targets::FullTarget;

/// What a seat's player is called by: one of muggins' searches or a fixed
/// strategy (`--agent`, the Python `Bot`'s engine).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PlayerName {
    /// A search: M*, Expectimax, ISMCTS, DominAI.
    Search(PlayerEngine),
    /// A fixed strategy (random, scorer, defender, heaviest).
    Fixed(FullTarget),
    /// A network's policy (its model file is given beside the name).
    Net,
}

impl FromStr for PlayerName {
    type Err = String;
    fn from_str(s: &str) -> Result<PlayerName, String> {
        if let Some(&e) = PlayerEngine::SEARCHES.iter().find(|e| e.name() == s) {
            return Ok(PlayerName::Search(e));
        }
        if s == PlayerEngine::Net.name() {
            return Ok(PlayerName::Net);
        }
        match s.parse::<FullTarget>() {
            Ok(FullTarget::Searcher) => Err(
                "\"searcher\" is a target (an Expectimax opponent), not a player: for seat 0 give expectimax with a \
                 depth"
                    .into(),
            ),
            Ok(t) => Ok(PlayerName::Fixed(t)),
            Err(_) => Err(format!(
                "unknown agent {s:?}: expected {}, or a strategy: {}",
                PlayerEngine::listed(&PlayerEngine::NAMED, "or"),
                FullTarget::ALL.map(|t| t.name()).join(", ")
            )),
        }
    }
}

impl fmt::Display for PlayerName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlayerName::Search(e) => f.write_str(e.name()),
            PlayerName::Fixed(t) => f.write_str(t.name()),
            PlayerName::Net => f.write_str(PlayerEngine::Net.name()),
        }
    }
}

/// How a search values the positions where it stops before the hand's end.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Leaves {
    /// The score so far (`"score"`).
    #[default]
    Score,
    /// The shipped learned evaluation (`"learned"`; All Fives).
    Learned,
}

impl Leaves {
    /// Whether leaves use the learned evaluation ([`SearchSettings::learned`]).
    pub fn is_learned(self) -> bool {
        self == Leaves::Learned
    }

    /// The name of a search's leaves.
    pub fn of(learned: bool) -> Leaves {
        if learned { Leaves::Learned } else { Leaves::Score }
    }

    /// Its name in specs, on the command line and in Python.
    pub fn name(self) -> &'static str {
        match self {
            Leaves::Score => "score",
            Leaves::Learned => "learned",
        }
    }
}

impl FromStr for Leaves {
    type Err = String;
    fn from_str(s: &str) -> Result<Leaves, String> {
        [Leaves::Score, Leaves::Learned]
            .into_iter()
            .find(|l| l.name() == s)
            .ok_or_else(|| format!("unknown evaluation {s:?}: expected \"score\" or \"learned\""))
    }
}

impl fmt::Display for Leaves {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A setting of a search, as [`SettingError`] names it; each front end
/// spells it in its own words (a spec key, a flag, a keyword argument).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Setting {
    /// The engine.
    Engine,
    /// The depth in plays and draws.
    Depth,
    /// The node budget.
    Budget,
    /// Worlds sampled a decision.
    Worlds,
    /// The leaves' evaluation.
    Evaluation,
    /// Where the worlds come from.
    Belief,
    /// The shaping of opponents' nodes.
    Shaping,
    /// Adaptive effort.
    Adaptive,
    /// What the seat sees (a game's setting, not the search's).
    Observability,
}

impl Setting {
    /// The setting's name as a spec key and a Python keyword.
    pub fn name(self) -> &'static str {
        match self {
            Setting::Engine => "engine",
            Setting::Depth => "depth",
            Setting::Budget => "budget",
            Setting::Worlds => "worlds",
            Setting::Evaluation => "evaluation",
            Setting::Belief => "belief",
            Setting::Shaping => "shaping",
            Setting::Adaptive => "adaptive",
            Setting::Observability => "observability",
        }
    }
}

/// Settings that do not go together: which one to change, its value, and
/// why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettingError {
    /// The setting to change.
    pub setting: Setting,
    /// Its value as given, e.g. `"learned"`, `0`.
    pub value: String,
    /// Why it cannot be, and what would do.
    pub why: String,
}

impl fmt::Display for SettingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} = {}: {}", self.setting.name(), self.value, self.why)
    }
}

impl std::error::Error for SettingError {}

fn refuse(setting: Setting, value: impl fmt::Display, why: impl Into<String>) -> Result<(), SettingError> {
    Err(SettingError {
        setting,
        value: value.to_string(),
        why: why.into(),
    })
}

fn quoted(s: &str) -> String {
    format!("\"{s}\"")
}

impl SearchSettings {
    /// Whether these settings make a search muggins can run in `preset`
    /// (`None`: any game, checked again when the game is known) seen with
    /// `observability` (`None`: either). The one check of the spec, `muggins
    /// play` and the Python `Bot`; the first setting that cannot be is
    /// named.
    pub fn check(&self, preset: Option<Preset>, observability: Option<Observability>) -> Result<(), SettingError> {
        let e = self.engine;
        let alpha_beta: Vec<PlayerEngine> = PlayerEngine::SEARCHES
            .into_iter()
            .filter(|e| e.values_leaves())
            .collect();
        let alpha_beta = PlayerEngine::listed(&alpha_beta, "and");
        if e == PlayerEngine::Net {
            return refuse(
                Setting::Engine,
                quoted(e.name()),
                "is a network's policy, not a search: it takes a model file and a temperature, no search settings",
            );
        }
        if !PlayerEngine::SEARCHES.contains(&e) {
            return refuse(
                Setting::Engine,
                quoted(e.name()),
                format!(
                    "is no engine of muggins' own: the engines are {}; an agent outside muggins is a program \
                     (docs/agents.md)",
                    PlayerEngine::listed(&PlayerEngine::SEARCHES, "and")
                ),
            );
        }
        if e == PlayerEngine::Ismcts && self.budget == 0 {
            return refuse(
                Setting::Budget,
                0,
                "ismcts runs until a node budget is spent: give a budget, e.g. 20000",
            );
        }
        if e.values_leaves() && self.depth >= DEEPEST && self.budget == 0 {
            return refuse(
                Setting::Depth,
                quoted("unlimited"),
                format!(
                    "{e} with an unlimited depth needs a node budget: a search of the whole hand would not finish; \
                     give a depth in plays and draws (e.g. 3) or a budget"
                ),
            );
        }
        let open = preset.filter(|&p| p != Preset::AllFives);
        if self.learned {
            if let Some(p) = open {
                return refuse(
                    Setting::Evaluation,
                    quoted("learned"),
                    format!(
                        "the learned evaluation is all-fives' (two seats of double-6); {p}'s searches value leaves \
                         by the score"
                    ),
                );
            }
            if !e.values_leaves() {
                return refuse(
                    Setting::Evaluation,
                    quoted("learned"),
                    format!("the learned evaluation values the leaves of {alpha_beta}; {e} has none"),
                );
            }
        }
        if let Some(a) = self.adaptive {
            let a = a.confidence();
            if !e.values_leaves() {
                return refuse(
                    Setting::Adaptive,
                    a,
                    format!("adaptive effort stops the worlds of {alpha_beta}, not {e}"),
                );
            }
            if let Some(p) = open {
                return refuse(
                    Setting::Adaptive,
                    a,
                    format!("adaptive effort stops all-fives' worlds, not {p}'s"),
                );
            }
        }
        if self.shaping != Shaping::None {
            let name = quoted(&self.shaping_name());
            if !e.values_leaves() {
                return refuse(
                    Setting::Shaping,
                    name,
                    format!("shaping applies to the searches {alpha_beta}, not {e}"),
                );
            }
            if let Some(p) = open {
                return refuse(Setting::Shaping, name, format!("shaping applies to all-fives, not {p}"));
            }
        }
        // DominAI's belief is its own matrices, in every game.
        if let Some(p) = open
            && self.belief.all_fives_only()
            && e != PlayerEngine::Dominai
        {
            return refuse(
                Setting::Belief,
                quoted(self.belief.name()),
                format!(
                    "{p}'s worlds come from \"uniform\" or \"constraints\" (the model and dominai beliefs weigh \
                     all-fives' plays)"
                ),
            );
        }
        match observability {
            Some(Observability::Full) if e == PlayerEngine::Dominai => refuse(
                Setting::Observability,
                quoted("full"),
                "dominai plays from its own hand and its probability matrices, never seeing the others' tiles: \
                 use partial observation",
            ),
            Some(Observability::Partial) if self.worlds == 0 && e != PlayerEngine::Dominai => refuse(
                Setting::Worlds,
                0,
                "under partial observation a search samples worlds: give a number of worlds, e.g. 16",
            ),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::alphabeta::Adaptive;
    use crate::predict::PredictModel;
    use engine::Belief;

    fn mstar() -> SearchSettings {
        SearchSettings {
            engine: PlayerEngine::MStar,
            depth: 3,
            budget: 0,
            worlds: 16,
            learned: false,
            belief: Belief::Constraints,
            shaping: Shaping::None,
            predictor: PredictModel::Logit,
            adaptive: None,
        }
    }

    #[test]
    fn every_engine_and_strategy_name_reads_back_as_itself() {
        for e in PlayerEngine::SEARCHES {
            let name: PlayerName = e.name().parse().unwrap();
            assert_eq!(name, PlayerName::Search(e));
            assert_eq!(name.to_string(), e.name());
            assert_eq!(e.name().parse::<PlayerEngine>(), Ok(e));
        }
        for t in FullTarget::ALL {
            assert_eq!(t.name().parse::<PlayerName>(), Ok(PlayerName::Fixed(t)));
        }
        for l in [Leaves::Score, Leaves::Learned] {
            assert_eq!(l.name().parse::<Leaves>(), Ok(l));
            assert_eq!(Leaves::of(l.is_learned()), l);
        }
        let e = "minimax".parse::<PlayerName>().unwrap_err();
        assert!(
            e.contains("mstar, expectimax, ismcts, dominai or net") && e.contains("heaviest"),
            "{e}"
        );
        assert!("searcher".parse::<PlayerName>().unwrap_err().contains("target"));
        assert!(
            PlayerEngine::External.name().parse::<PlayerName>().is_err(),
            "no user names external"
        );
        assert!(
            "deep"
                .parse::<Leaves>()
                .unwrap_err()
                .contains("\"score\" or \"learned\"")
        );
    }

    /// Each rule names the setting to change; settings that go together pass.
    #[test]
    fn the_check_names_the_setting_that_cannot_be() {
        let fives = Some(Preset::AllFives);
        let partial = Some(Observability::Partial);
        assert_eq!(mstar().check(fives, partial), Ok(()));
        let refused = |s: SearchSettings, preset: Option<Preset>, obs: Option<Observability>| {
            s.check(preset, obs).expect_err("refused").setting
        };
        let with = |f: fn(&mut SearchSettings)| {
            let mut s = mstar();
            f(&mut s);
            s
        };
        let cases: [(SearchSettings, Option<Preset>, Option<Observability>, Setting); 12] = [
            (with(|s| s.engine = PlayerEngine::External), None, None, Setting::Engine),
            (with(|s| s.engine = PlayerEngine::Ismcts), None, None, Setting::Budget),
            (with(|s| s.depth = DEEPEST), None, None, Setting::Depth),
            (
                with(|s| {
                    s.engine = PlayerEngine::Ismcts;
                    s.budget = 100;
                    s.learned = true;
                }),
                None,
                None,
                Setting::Evaluation,
            ),
            (
                with(|s| s.learned = true),
                Some(Preset::Block),
                None,
                Setting::Evaluation,
            ),
            (
                with(|s| {
                    s.engine = PlayerEngine::Dominai;
                    s.adaptive = Some(Adaptive::DEFAULT);
                }),
                None,
                None,
                Setting::Adaptive,
            ),
            (
                with(|s| s.adaptive = Some(Adaptive::DEFAULT)),
                Some(Preset::Team),
                None,
                Setting::Adaptive,
            ),
            (
                with(|s| {
                    s.engine = PlayerEngine::Dominai;
                    s.shaping = Shaping::Expect;
                }),
                None,
                None,
                Setting::Shaping,
            ),
            (
                with(|s| s.shaping = Shaping::Expect),
                Some(Preset::Block),
                None,
                Setting::Shaping,
            ),
            (
                with(|s| s.belief = Belief::Model),
                Some(Preset::Team),
                None,
                Setting::Belief,
            ),
            (
                with(|s| s.engine = PlayerEngine::Dominai),
                fives,
                Some(Observability::Full),
                Setting::Observability,
            ),
            (with(|s| s.worlds = 0), fives, partial, Setting::Worlds),
        ];
        for (i, (s, preset, obs, want)) in cases.into_iter().enumerate() {
            assert_eq!(refused(s, preset, obs), want, "case {i}: {s:?}");
            // Left unsaid, the game or the observability checks nothing of its own.
            if preset.is_some() && obs.is_none() {
                assert_eq!(s.check(None, obs), Ok(()), "case {i}");
            }
        }
        // DominAI's belief is its own matrices, in team too; budgets make
        // an unlimited depth finite.
        let dominai = with(|s| {
            s.engine = PlayerEngine::Dominai;
            s.belief = Belief::Dominai;
            s.worlds = 0;
        });
        assert_eq!(dominai.check(Some(Preset::Team), partial), Ok(()));
        let budgeted = with(|s| {
            s.depth = DEEPEST;
            s.budget = 1000;
        });
        assert_eq!(budgeted.check(fives, partial), Ok(()));
        let e = with(|s| s.learned = true).check(Some(Preset::Block), None).unwrap_err();
        assert_eq!(e.to_string().split(':').next(), Some("evaluation = \"learned\""));
    }
}
