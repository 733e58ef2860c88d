//! The grid of games in Table 12 order, and its cut into shards.
//!
//! Game indices run over rule set (with a rules factor) x information source x observability x target x
//! starting state x belief x budget x shaping x engine x repeat, the repeat varying
//! fastest (belief, budget and shaping are levels only where the spec lists several). Shard k holds
//! the games [k * G, min((k + 1) * G, N)). A game's result depends only on its
//! coordinates, never on the shard that holds it.

use engine::{Belief, Observability, PlayerEngine};
use full::FullTarget;

use crate::spec::{AgentPlay, Source, Spec, StateSet};

/// The six coordinates of one game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GameCoords {
    /// The index these coordinates were decoded from.
    pub game_index: u64,
    /// Where M* takes its model of the target from (slowest-varying).
    pub information_source: Source,
    /// What the player can see.
    pub observability: Observability,
    /// The target seat's type.
    pub target: FullTarget,
    /// The deal: an entry of the spec's starting-state set (a state index,
    /// not a position in the set).
    pub starting_state: u64,
    /// The player's decision engine.
    pub engine: PlayerEngine,
    /// Where partial observation's worlds come from (varies just slower
    /// than the engine; a grid of one belief has the indices it always had).
    pub belief: Belief,
    /// How the search shapes opponents' nodes (varies just slower than the
    /// engine; a grid of one shaping has the indices it always had).
    pub shaping: crate::spec::ShapingLevel,
    /// The node budget, where the spec lists several (varies just slower
    /// than the shaping); `None`: the spec's one budget.
    pub budget: Option<u64>,
    /// Repeat number, 1-based (fastest-varying; with named agents, just
    /// slower than the seating).
    pub repeat: u32,
    /// With named agents: the pairing (an index of `Pool::pairings`).
    pub pairing: Option<u32>,
    /// With named agents: the side the agent sits at, 0 or 1 (1 is the
    /// deal's second game of a pair, the sides swapped; fastest-varying).
    pub agent_side: u8,
    /// With a rules factor (`[grid] rules`): the rule set, an index of
    /// `Spec::rule_sets` (slowest-varying).
    pub rules: Option<u32>,
}

/// The game at `index` (below `spec.games()`).
pub fn coords(spec: &Spec, index: u64) -> GameCoords {
    let g = &spec.grid;
    // The rules factor varies slowest: each rule set's games are the grid
    // without the factor, after the sets before it.
    let per_set = spec.games_per_rule_set();
    let rules = (!spec.rule_sets.is_empty()).then(|| (index / per_set) as u32);
    let deal = |i: u64| match (&g.starting_states, rules) {
        // A spread spreads over its rule set's own deals.
        (&StateSet::Spread { count, .. }, Some(k)) => StateSet::Spread {
            count,
            of: spec.rule_sets[k as usize].deals,
        }
        .get(i),
        _ => g.starting_states.get(i),
    };
    let mut rest = index % per_set;
    let mut digit = |n: u64| {
        let d = rest % n;
        rest /= n;
        d
    };
    if let Some(pool) = &spec.pool {
        // Observability x deal x repeat x pairing x seat, the seat fastest,
        // so a pair's two games are neighbours (and share a shard), and
        // every pairing of a deal comes together (the report compares the
        // agents facing one opponent on the same deals as they stream by).
        let agent_side = digit(pool.seatings()) as u8;
        let pairing = digit(pool.pairings.len() as u64) as u32;
        let repeat = digit(g.repeats as u64) as u32 + 1;
        let state = deal(digit(g.starting_states.len()));
        let observability = g.observability[digit(g.observability.len() as u64) as usize];
        let (a, o) = pool.pairings[pairing as usize];
        // The agent's side: a searching agent's settings, or an external
        // agent's (its rows name the engine `external`).
        let (engine, belief, shaping, budget) = match &pool.agents[a as usize].play {
            AgentPlay::Search(s) => (
                s.settings.engine,
                s.settings.belief,
                s.shaping(),
                Some(s.settings.budget),
            ),
            AgentPlay::External(_) => (
                PlayerEngine::External,
                Belief::Uniform,
                crate::spec::ShapingLevel::NONE,
                None,
            ),
            AgentPlay::Net(_) => (
                PlayerEngine::Net,
                Belief::Uniform,
                crate::spec::ShapingLevel::NONE,
                None,
            ),
            AgentPlay::Strategy(_) => {
                unreachable!("a pairing's agent searches or is external (checked when the spec was read)")
            }
        };
        let target = match pool.agents[o as usize].play {
            AgentPlay::Strategy(t) => t,
            AgentPlay::Search(_) | AgentPlay::External(_) | AgentPlay::Net(_) => FullTarget::Searcher,
        };
        return GameCoords {
            game_index: index,
            information_source: Source::Oracle,
            observability,
            target,
            starting_state: state,
            engine,
            belief,
            shaping,
            budget,
            repeat,
            pairing: Some(pairing),
            agent_side,
            rules,
        };
    }
    let repeat = digit(g.repeats as u64) as u32 + 1;
    let engine = g.engine[digit(g.engine.len() as u64) as usize];
    let shaping = g.shaping[digit(g.shaping.len() as u64) as usize];
    let budget = (!g.budget.is_empty()).then(|| g.budget[digit(g.budget.len() as u64) as usize]);
    let belief = g.belief[digit(g.belief.len() as u64) as usize];
    let state = deal(digit(g.starting_states.len()));
    let target = g.target[digit(g.target.len() as u64) as usize];
    let observability = g.observability[digit(g.observability.len() as u64) as usize];
    let information_source = g.information_source[digit(g.information_source.len() as u64) as usize];
    GameCoords {
        game_index: index,
        information_source,
        observability,
        target,
        starting_state: state,
        engine,
        belief,
        shaping,
        budget,
        repeat,
        pairing: None,
        agent_side: 0,
        rules,
    }
}

/// One shard of the grid.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Shard {
    /// The shard's number, 0-based; names its task and partition file.
    pub index: u64,
    /// Index of its first game (grid game, or training game in the samples
    /// stage).
    pub first_game: u64,
    /// How many consecutive games it holds; 0 for the single shard of the
    /// fit and report stages.
    pub games: u64,
}

/// The shards of a spec's grid.
pub fn shards(spec: &Spec) -> Vec<Shard> {
    cut(spec.games(), spec.shard_games)
}

/// `n` items cut into shards of `size` (the last one shorter), in order.
/// Every stage's shards come from here.
pub fn cut(n: u64, size: u64) -> Vec<Shard> {
    (0..n.div_ceil(size))
        .map(|k| Shard {
            index: k,
            first_game: k * size,
            games: size.min(n - k * size),
        })
        .collect()
}
