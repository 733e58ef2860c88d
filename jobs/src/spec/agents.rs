//! Named agents and who plays whom (All Fives): `[agents.NAME]` tables,
//! `[grid] agents` with `opponents` (a cross) or `tournament` (a round robin
//! or a gauntlet over the pool), `[grid] paired` (every deal played again
//! with the sides swapped, cutechess's `-repeat`), and `[stop] sprt`
//! (sequential stopping of an A-versus-B experiment). See docs/specs.md,
//! "Agents, tournaments and stopping".

use full::FullTarget;

use super::shaping::ShapingLevel;

/// How a named agent plays.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AgentPlay {
    /// Searches (M*, Expectimax, ISMCTS or DominAI) with these settings.
    Search(AgentSearch),
    /// A fixed strategy (random, scorer, defender, heaviest, searcher).
    Strategy(FullTarget),
    /// A program outside muggins (docs/agents.md). It plays the opponent's
    /// side of its pairings, as a strategy does.
    External(super::external::ExternalAgent),
    /// A network's policy from a model file (block and team).
    Net(crate::nets::NetAgent),
}

/// A searching agent's settings; what a table leaves out is `[search]`'s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AgentSearch {
    /// How it searches: the full game's one settings type, checked by
    /// [`full::SearchSettings::check`]. `worlds` applies under partial
    /// observation (a game under full observation plays with none).
    pub settings: full::SearchSettings,
    /// The transposition table's megabytes (per thread) when this agent
    /// plays: a match's table is the largest of its two agents'. It never
    /// replaces an entry (checked against the budget), so it changes speed
    /// and memory, never a result.
    pub table_mb: u32,
}

impl AgentSearch {
    /// Its shaping with the model that predicts for it.
    pub fn shaping(&self) -> ShapingLevel {
        ShapingLevel {
            shaping: self.settings.shaping,
            predictor: self.settings.predictor,
        }
    }
}

/// A named agent of the pool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Agent {
    /// Its name in the spec, in rows (`agent`, `opponent`) and reports.
    pub name: String,
    /// How it plays.
    pub play: AgentPlay,
}

impl Agent {
    /// Whether it searches (a strategy or an external agent never takes the
    /// `agent` side of a pairing).
    pub fn searches(&self) -> bool {
        matches!(self.play, AgentPlay::Search(_) | AgentPlay::Net(_))
    }

    /// Whether it is a program outside muggins.
    pub fn is_external(&self) -> bool {
        matches!(self.play, AgentPlay::External(_))
    }
}

/// How the pairings were made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `agents` x `opponents`.
    Cross,
    /// Every two agents of the pool once (two strategies never meet).
    RoundRobin,
    /// The first agent against each other one.
    Gauntlet,
}

impl Format {
    /// The name in specs and reports.
    pub fn name(self) -> &'static str {
        match self {
            Format::Cross => "cross",
            Format::RoundRobin => "round-robin",
            Format::Gauntlet => "gauntlet",
        }
    }
}

/// The agents and their pairings: the grid of an agents spec is
/// observability x deal x repeat x pairing x seat (the seat fastest).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pool {
    /// The agents, searching ones as `[agents]` names them (in name order),
    /// then the built-in strategies the pairings use.
    pub agents: Vec<Agent>,
    /// (agent, opponent) indices into `agents`; the agent always searches.
    pub pairings: Vec<(u16, u16)>,
    /// Whether each deal is played twice, the sides swapped.
    pub paired: bool,
    /// How the pairings were made.
    pub format: Format,
}

impl Pool {
    /// 2 when paired, else 1: games per deal, repeat and pairing.
    pub fn seatings(&self) -> u64 {
        if self.paired { 2 } else { 1 }
    }
}

/// `[stop] sprt`: a sequential probability ratio test on the paired
/// outcomes of an A-versus-B experiment, on logistic Elo (`elo0`, `elo1`)
/// or on the mean score difference per game (`diff0`, `diff1`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sprt {
    /// What the hypotheses are about.
    pub on: SprtOn,
    /// H0's value.
    pub h0: f64,
    /// H1's value.
    pub h1: f64,
    /// The chance of accepting H1 when H0 holds.
    pub alpha: f64,
    /// The chance of accepting H0 when H1 holds.
    pub beta: f64,
}

/// The statistic an SPRT tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SprtOn {
    /// Logistic Elo of the agent over the opponent, from the pair scores
    /// (win 1, tie 1/2, loss 0; pentanomial).
    Elo,
    /// The agent's score difference per game (points), pair means.
    ScoreDiff,
}

impl Pool {
    /// The pool in the spec's canonical JSON (what the hash covers).
    pub(super) fn canonical(&self, stop: Option<&Sprt>, table_mb: u32) -> String {
        let text = |s: &str| serde_json::to_string(s).expect("a string serialises");
        let agents: Vec<String> = self
            .agents
            .iter()
            .map(|a| match &a.play {
                AgentPlay::Strategy(t) => format!("{{\"name\":{},\"strategy\":{}}}", text(&a.name), text(t.name())),
                AgentPlay::External(e) => e.canonical(&a.name),
                // `simulations`, `adaptive`, `belief` and `leaves` only when set:
                // specs without them keep their ids.
                AgentPlay::Net(n) => format!(
                    "{{\"name\":{},\"engine\":{},\"model_sha256\":{},\"temperature\":{}{}{}{}{}}}",
                    text(&a.name),
                    text(engine::PlayerEngine::Net.name()),
                    text(&n.sha256),
                    n.temperature,
                    if n.simulations > 0 {
                        format!(",\"simulations\":{}", n.simulations)
                    } else {
                        String::new()
                    },
                    if n.adaptive { ",\"adaptive\":true" } else { "" },
                    match n.belief {
                        full::spiel::GuidedBelief::Constraints => String::new(),
                        b => format!(",\"belief\":{}", text(b.name())),
                    } + &match n.leaves {
                        None => String::new(),
                        Some(l) => format!(
                            ",\"leaves\":{{\"engine\":{},\"depth\":{},\"worlds\":{}}}",
                            text(l.engine.name()),
                            l.depth,
                            l.worlds
                        ),
                    },
                    match n.world_search {
                        None => String::new(),
                        Some(w) => format!(
                            // adaptive only when set: ids made before it stay.
                            ",\"world_search\":{{\"engine\":{},\"budget\":{},\"worlds\":{},\"belief\":{},\
                             \"eval_sha256\":{}{}}}",
                            text(w.engine.name()),
                            w.budget,
                            w.worlds,
                            text(w.belief.name()),
                            text(crate::evals::shipped_eval_hash()),
                            super::fields::adaptive_json(w.adaptive)
                        ),
                    }
                ),
                &AgentPlay::Search(AgentSearch {
                    settings: s,
                    table_mb: mb,
                }) => format!(
                    "{{\"name\":{},\"engine\":{},\"depth\":{},\"budget\":{},\"worlds\":{},\"belief\":{},\
                     \"shaping\":{},\"learned\":{}{}}}",
                    text(&a.name),
                    text(s.engine.name()),
                    s.depth,
                    s.budget,
                    s.worlds,
                    text(s.belief.name()),
                    text(
                        &ShapingLevel {
                            shaping: s.shaping,
                            predictor: s.predictor
                        }
                        .name()
                    ),
                    s.learned,
                    // Present only when it differs from [search]'s (which the
                    // canonical JSON has), so pools before it keep their ids;
                    // likewise adaptive only when set.
                    if mb != table_mb {
                        format!(",\"table_mb\":{mb}")
                    } else {
                        String::new()
                    } + &super::fields::adaptive_json(s.adaptive)
                ),
            })
            .collect();
        let pairings: Vec<String> = self.pairings.iter().map(|(a, o)| format!("[{a},{o}]")).collect();
        let stop = stop.map_or(String::new(), |s| {
            let on = match s.on {
                SprtOn::Elo => "elo",
                SprtOn::ScoreDiff => "diff",
            };
            format!(
                ",\"stop\":{{\"sprt\":{{\"on\":{},\"h0\":{},\"h1\":{},\"alpha\":{},\"beta\":{}}}}}",
                text(on),
                s.h0,
                s.h1,
                s.alpha,
                s.beta
            )
        });
        format!(
            ",\"pool\":{{\"agents\":[{}],\"pairings\":[{}],\"paired\":{},\"format\":{}}}{stop}",
            agents.join(","),
            pairings.join(","),
            self.paired,
            text(self.format.name())
        )
    }
}
