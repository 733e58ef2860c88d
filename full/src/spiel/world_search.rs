//! M* or Expectimax with the learned leaves (`eval.rs`, the searches' own
//! All-Fives leaf), searched on worlds that a network's agent draws
//! (`engine = "mstar"` with `net` and `evaluation = "learned"`): the
//! worlds come from the All-Fives state's own resampling (the constraints
//! belief, each world kept only if some past of the other seats leads to it:
//! their draws, the ends they were stuck at and the forced opening, as
//! `past.rs` replays them), or from a pool of such worlds weighted by the
//! likelihood of the other seats' plays under the network's policy
//! (`belief = "policy"`, `pool.rs`); each world is then searched as M*'s
//! decisions search theirs (`AlphaBeta::decide`: afresh, within the node
//! budget, iterative deepening, the values averaged, ties to the first
//! play; with `adaptive`, the worlds in order until the best play is
//! decided). Every other seat is a searcher to the search (minimised at M*'s
//! nodes), as M* takes any searching opponent.
//!
//! A decision is a pure function of the model, the state, the seat's view
//! and the stream: the pool and the worlds are drawn from the stream in a
//! fixed order, the forward pass has the same bits everywhere, and the
//! search's result does not depend on its table's size.

use engine::{ActionList, PlayerEngine};
use rand_core::RngCore;

use super::pool::{BeliefPool, GuidedBelief, POLICY_POOL};
use super::{Encoding, SpielError, SpielState};
use crate::alphabeta::{Adaptive, AlphaBeta, Limits};
use crate::eval::{Evaluation, LinearEval};
use crate::fives::{FivesPosition, fives_play_id};
use crate::table::FivesTable;
use crate::targets::FullTarget;

/// The most worlds a decision searches.
pub const MAX_WORLD_SEARCH_WORLDS: u16 = 1000;

/// The most nodes a world's search may spend.
pub const MAX_WORLD_SEARCH_BUDGET: u64 = 10_000_000;

/// How an agent searches the worlds its network draws.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct WorldSearch {
    /// `MStar` or `Expectimax` (with searching opponents both minimise).
    pub engine: PlayerEngine,
    /// Nodes a world (iterative deepening stops before passing it).
    pub budget: u64,
    /// Worlds a decision.
    pub worlds: u16,
    /// `Constraints` (each world the state's own resampling) or `Policy`
    /// (a pool weighted by the network's likelihood of the others' plays).
    pub belief: GuidedBelief,
    /// Stop the worlds once the best play is decided at this confidence
    /// (`AlphaBeta::decide_with`, docs/search.md "Adaptive effort"); every
    /// world is still drawn, so the stream moves on as without it.
    pub adaptive: Option<Adaptive>,
}

/// Why a [`WorldSearch`] was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum WorldSearchError {
    #[error("engine {0:?}: the learned leaves over a network's worlds are searched by \"mstar\" or \"expectimax\"")]
    Engine(&'static str),
    #[error("budget = {0}: 1 to {MAX_WORLD_SEARCH_BUDGET} nodes a world")]
    Budget(u64),
    #[error("worlds = {0}: 1 to {MAX_WORLD_SEARCH_WORLDS}")]
    Worlds(u64),
    #[error(
        "belief = \"head\": the learned leaves' worlds come from \"constraints\" or \"policy\" (the network's \
         likelihood of the other seats' plays)"
    )]
    Belief,
}

impl WorldSearch {
    /// Checked construction: each field in range.
    pub fn new(
        engine: PlayerEngine,
        budget: u64,
        worlds: u64,
        belief: GuidedBelief,
    ) -> Result<WorldSearch, WorldSearchError> {
        if !matches!(engine, PlayerEngine::MStar | PlayerEngine::Expectimax) {
            return Err(WorldSearchError::Engine(engine.name()));
        }
        if !(1..=MAX_WORLD_SEARCH_BUDGET).contains(&budget) {
            return Err(WorldSearchError::Budget(budget));
        }
        if !(1..=MAX_WORLD_SEARCH_WORLDS as u64).contains(&worlds) {
            return Err(WorldSearchError::Worlds(worlds));
        }
        if belief == GuidedBelief::Head {
            return Err(WorldSearchError::Belief);
        }
        Ok(WorldSearch {
            engine,
            budget,
            worlds: worlds as u16,
            belief,
            adaptive: None,
        })
    }

    /// The same search with the adaptive stop at `adaptive` (`None`: every
    /// world searched).
    pub fn with_adaptive(self, adaptive: Option<Adaptive>) -> WorldSearch {
        WorldSearch { adaptive, ..self }
    }

    /// The pool a `policy` decision weighs: four times the worlds, within
    /// [`POLICY_POOL`]'s bounds (the worlds are drawn from it by weight).
    pub fn pool_size(&self) -> u32 {
        (4 * self.worlds as u32).clamp(POLICY_POOL.0, POLICY_POOL.1)
    }
}

/// A world search's storage, kept between decisions.
#[derive(Debug, Default)]
pub struct WorldBuffers {
    pool: BeliefPool,
    worlds: Vec<FivesPosition>,
    /// The table, sized for the budget it was made for.
    table: Option<(u64, FivesTable)>,
}

/// What a world search reads: the network (and the encoding its file
/// names) that weighs a `policy` pool, and the leaves' evaluation.
#[derive(Clone, Copy, Debug)]
pub struct WorldModels<'a> {
    pub model: &'a net::Model,
    pub encoding: Encoding,
    pub eval: &'a LinearEval,
}

/// The action id `player` (the seat to act in the All-Fives `state`, two
/// or more plays) plays after `how` searches the worlds drawn for it, the
/// leaves valued by `models.eval`.
pub fn world_decide(
    bufs: &mut WorldBuffers,
    models: WorldModels,
    state: &SpielState,
    player: u8,
    how: WorldSearch,
    rng: &mut impl RngCore,
) -> Result<u32, SpielError> {
    let rules = state.rules();
    let policy = how.belief == GuidedBelief::Policy;
    if policy {
        bufs.pool
            .prepare_policy(models.model, models.encoding, state, player, how.pool_size(), rng)?;
    }
    bufs.worlds.clear();
    for _ in 0..how.worlds {
        let world = if policy {
            bufs.pool.draw(rng)
        } else {
            state.resample(player, rng)?
        };
        match &world {
            SpielState::Fives(f) => bufs.worlds.push(f.pos.ok_or(SpielError::NotDealt)?),
            SpielState::Open(_) => return Err(SpielError::Inconsistent("the learned leaves search All-Fives worlds")),
        }
    }
    if !matches!(&bufs.table, Some((b, _)) if *b == how.budget) {
        bufs.table = Some((how.budget, FivesTable::for_budget(how.budget, crate::DEFAULT_TABLE_MB)));
    }
    let table = &mut bufs.table.as_mut().expect("made above").1;
    let others = [FullTarget::Searcher; crate::MAX_SEATS];
    let mut ab = AlphaBeta::new(
        rules,
        player,
        how.engine,
        others,
        Evaluation::Learned(models.eval),
        table,
    );
    let limits = Limits {
        depth: crate::DEEPEST,
        budget: how.budget,
    };
    let decision = ab.decide_with(&bufs.worlds, limits, how.adaptive);
    let mut list = ActionList::default();
    bufs.worlds[0].actions(rules, &mut list);
    Ok(fives_play_id(list.as_slice()[decision.index]))
}
