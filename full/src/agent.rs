//! The seats' players: a fixed strategy or a search ([`FullAgent`]), how a
//! search is set ([`SearchSettings`]), the scratch a searching seat reuses,
//! the rules, options and scratch a match's searching seats decide with
//! ([`MatchContext`]), and one searched decision ([`search_decision`])
//! dispatched to the engine the settings name (alpha-beta, ISMCTS,
//! DominAI), with the worlds of its belief under partial observation. The
//! game loops (`game.rs`, `open_hand.rs`) sit above this layer; the engines
//! below it.

use rand_chacha::ChaCha20Rng;

use engine::TileSet;

use super::alphabeta::{AlphaBeta, Limits};
use super::eval::{Evaluation, LinearEval};
use super::fives::FivesPosition;
use super::ismcts::IsmctsTree;
use super::rules::{FullRules, MAX_SEATS};
use super::search::FullDecision;
use super::seen::Seen;
use super::table::FivesTable;
use super::targets::{DEFAULT_TARGET_DEPTH, FullTarget};
use super::worlds::{BeliefScore, WorldSampler, WorldSource};
use engine::PlayerEngine;

/// A seat's player in the full game: a fixed strategy, or a search.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FullAgent {
    /// Plays a fixed strategy.
    Fixed(FullTarget),
    /// Searches with these settings.
    Search(SearchSettings),
    /// Decided outside muggins ([`ExternalSeats`], docs/agents.md): asked
    /// for a play whenever it has two or more.
    External,
}

/// What a seat decided outside muggins is told when asked for a play:
/// only what that seat may know (docs/agents.md).
#[derive(Clone, Copy, Debug)]
pub struct SeatView<'a> {
    /// The seat.
    pub seat: u8,
    /// The hand of the match (0 first).
    pub hand_no: u32,
    /// Its tiles now.
    pub tiles: TileSet,
    /// This hand's actions so far in the game's ids (All Fives: plays, draws
    /// and passes; block and team: OpenSpiel's ids of the plays).
    pub history: &'a [u32],
    /// Each seat's number of tiles.
    pub sizes: [u8; MAX_SEATS],
    /// Tiles in the boneyard.
    pub boneyard: u8,
    /// Points each side made in this hand so far (All Fives).
    pub points: [u32; MAX_SEATS],
    /// Each side's total over the match's earlier hands (All Fives).
    pub totals: [u32; MAX_SEATS],
    /// The legal actions' ids, ascending.
    pub legal: &'a [u32],
}

/// The seats decided outside muggins: the caller's (jobs' agent
/// processes); `full` stays pure.
pub trait ExternalSeats: std::fmt::Debug {
    /// A block or team hand dealt as `hands` begins (told only to seats
    /// that keep the game's state beside the loop, such as a network's:
    /// [`crate::spiel::NetSeats`]; a program outside muggins is told its
    /// own tiles by its questions).
    fn begin_hand(&mut self, _rules: &FullRules, _hands: &[TileSet; MAX_SEATS]) {}

    /// The id the seat of `view` plays, or why it forfeits the game.
    fn decide(&mut self, view: &SeatView) -> Result<u32, String>;
}

/// A game given up by a seat decided outside muggins: the seat and why
/// (docs/agents.md, "Forfeits").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Forfeit {
    /// The seat that forfeited.
    pub seat: u8,
    /// Why: `illegal action 17`, `time`, `crash`, `protocol: ...`.
    pub reason: String,
}

impl<'a> MatchContext<'a, '_> {
    /// A context with no seat decided outside muggins, before a match's
    /// first hand.
    pub fn new(rules: &'a FullRules, opts: &'a MatchOptions<'a>, scratch: &'a mut Scratch) -> Self {
        MatchContext {
            rules,
            opts,
            scratch,
            external: None,
            totals: [0; MAX_SEATS],
            hand_no: 0,
        }
    }
}

/// Asks `external` (which must be there: a seat is `External`) for the
/// play of `view`'s seat; its index in `legal`, or the forfeit.
pub fn external_choice(external: Option<&mut (dyn ExternalSeats + '_)>, view: &SeatView) -> Result<usize, Forfeit> {
    let ext = external.expect("a seat decided outside muggins comes with its ExternalSeats");
    let forfeit = |reason| Forfeit {
        seat: view.seat,
        reason,
    };
    let id = ext.decide(view).map_err(forfeit)?;
    view.legal
        .iter()
        .position(|&l| l == id)
        .ok_or_else(|| forfeit(format!("illegal action {id}")))
}

/// Which of muggins' searches runs an engine: the one place that maps each
/// engine to its search, so that the compiler refuses a new engine until
/// it has one (the game loops dispatch on this, never on the engine).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Route {
    /// Depth-limited alpha-beta (M*, Expectimax): `AlphaBeta`, PIMC.
    AlphaBeta,
    /// Information-set Monte Carlo tree search.
    Ismcts,
    /// Seed 002's player.
    Dominai,
}

/// The search that runs `engine` ([`SearchSettings::check`] refuses the
/// one that is no search of muggins', `external`).
pub(crate) fn route(engine: PlayerEngine) -> Route {
    match engine {
        PlayerEngine::MStar | PlayerEngine::Expectimax => Route::AlphaBeta,
        PlayerEngine::Ismcts => Route::Ismcts,
        PlayerEngine::Dominai => Route::Dominai,
        PlayerEngine::Net | PlayerEngine::External => {
            panic!("a network's policy and an agent outside muggins are FullAgent::External's seats, never a search")
        }
    }
}

/// The deepest a search goes, in plays and draws: deeper than any hand, so
/// a search to it stops only at the end of the hand or of its budget
/// ([`engine::DepthLimit::Unlimited`]).
pub const DEEPEST: u8 = 254;

/// The depth a [`SearchSettings`] carries for `limit`: its turns, or
/// [`DEEPEST`] for no limit.
pub fn depth_of(limit: engine::DepthLimit) -> u8 {
    match limit {
        engine::DepthLimit::Turns(n) => n.min(DEEPEST),
        engine::DepthLimit::Unlimited => DEEPEST,
    }
}

/// How a searching seat searches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SearchSettings {
    /// Expectimax, M* or ISMCTS.
    pub engine: PlayerEngine,
    /// The deepest search, in plays and draws (1 to [`DEEPEST`], which is
    /// no limit: [`depth_of`]); iterative deepening stops here if the
    /// budget has not stopped it first.
    pub depth: u8,
    /// Nodes per world of a decision (ISMCTS: per decision, times the
    /// worlds); 0: no budget, search to `depth`.
    pub budget: u64,
    /// Worlds sampled per decision under partial observation (PIMC); 0: full
    /// observation (the true position).
    pub worlds: u16,
    /// Whether depth-limited leaves use the learned evaluation (else the
    /// score so far).
    pub learned: bool,
    /// Where the worlds of a partial-observation decision come from.
    pub belief: engine::Belief,
    /// How opponents' nodes are shaped by a prediction of their play
    /// (Expectimax and M*; docs/prediction.md).
    pub shaping: super::alphabeta::Shaping,
    /// The model that predicts the opponents' plays for the shaping.
    pub predictor: super::predict::PredictModel,
    /// Adaptive effort (All Fives, Expectimax and M*, partial
    /// observation): stop adding worlds once the best play is decided at
    /// the stated confidence (`AlphaBeta::decide_with`); at most `worlds`.
    pub adaptive: Option<super::alphabeta::Adaptive>,
}

impl SearchSettings {
    /// The depth as a limit: [`DEEPEST`] is none.
    pub fn depth_limit(&self) -> engine::DepthLimit {
        match self.depth {
            d if d >= DEEPEST => engine::DepthLimit::Unlimited,
            d => engine::DepthLimit::Turns(d),
        }
    }

    /// A search of `engine` to `depth` under full observation, no budget,
    /// leaves valued by the score so far.
    pub fn fixed(engine: PlayerEngine, depth: u8) -> SearchSettings {
        SearchSettings {
            engine,
            depth,
            budget: 0,
            worlds: 0,
            learned: false,
            belief: engine::Belief::Uniform,
            shaping: super::alphabeta::Shaping::None,
            predictor: super::predict::PredictModel::Logit,
            adaptive: None,
        }
    }

    /// The shaping's name with its model and parameters, e.g.
    /// `prune(logit, top 2)`; `none` when plain.
    pub fn shaping_name(&self) -> String {
        use super::alphabeta::Shaping;
        let m = self.predictor.name();
        match self.shaping {
            s if s.is_plain() => "none".to_string(),
            Shaping::Prune { top_n, epsilon_ppm } if epsilon_ppm > 0 => {
                format!("prune({m}, top {top_n}, p >= {})", epsilon_ppm as f64 / 1e6)
            }
            Shaping::Prune { top_n, .. } => format!("prune({m}, top {top_n})"),
            Shaping::Asymmetric { likely, extend, reduce } => {
                format!("asymmetric({m}, top {likely} +{extend}, others -{reduce})")
            }
            _ => format!("expect({m})"),
        }
    }
}

impl FullAgent {
    /// A short name: the strategy's, or `mstar/3`, `expectimax/2` (a fixed
    /// depth), or `mstar (20000 nodes, 16 worlds, learned, model)`, or
    /// `dominai`.
    pub fn name(self) -> String {
        match self {
            FullAgent::Fixed(t) => t.name().to_string(),
            FullAgent::External => PlayerEngine::External.name().to_string(),
            FullAgent::Search(s) => {
                let reach = if s.budget > 0 {
                    format!("{} nodes", s.budget)
                } else {
                    format!("depth {}", s.depth)
                };
                let worlds = match (s.worlds, s.adaptive) {
                    (0, _) => String::new(),
                    (k, None) => format!(", {k} worlds"),
                    (k, Some(super::alphabeta::Adaptive::DEFAULT)) => format!(", up to {k} worlds (adaptive)"),
                    (k, Some(a)) => format!(", up to {k} worlds (adaptive {a})"),
                };
                let eval = if s.learned { ", learned" } else { "" };
                let mut belief = if s.belief != engine::Belief::Uniform && s.worlds > 0 {
                    format!(", {}", s.belief.name())
                } else {
                    String::new()
                };
                if !s.shaping.is_plain() {
                    belief = format!("{belief}, {}", s.shaping_name());
                }
                match (s.engine, s.budget, s.worlds, s.learned) {
                    (PlayerEngine::Dominai, 0, _, _) => PlayerEngine::Dominai.name().to_string(),
                    (PlayerEngine::Dominai, b, _, _) => format!("dominai ({b} nodes)"),
                    (_, 0, 0, false) if belief.is_empty() => format!("{}/{}", s.engine.name(), s.depth),
                    _ => format!("{} ({reach}{worlds}{eval}{belief})", s.engine.name()),
                }
            }
        }
    }
}

/// What a searching seat takes the other seats to play: their strategies,
/// a searching seat being modelled as `searcher` (it minimises).
pub(crate) fn models(agents: &[FullAgent; MAX_SEATS]) -> [FullTarget; MAX_SEATS] {
    std::array::from_fn(|s| match agents[s] {
        FullAgent::Fixed(t) => t,
        FullAgent::Search(_) | FullAgent::External => FullTarget::Searcher,
    })
}

/// What the searching seats of a match use besides their settings.
#[derive(Clone, Copy, Debug)]
pub struct MatchOptions<'a> {
    /// The learned evaluation (needed by settings with `learned`).
    pub eval: Option<&'a LinearEval>,
    /// The transposition table's memory, in megabytes (one table per match
    /// being played; a budgeted search takes no more than its budget needs).
    pub table_mb: u32,
    /// The depth of a `searcher` target's Expectimax.
    pub target_depth: u8,
    /// The opponent-move predictors (needed by settings with a shaping).
    pub predictors: Option<&'a super::predict::Predictors>,
    /// The side whose searched decisions the record keeps (nodes, values,
    /// belief scores): 0, the agent's side, unless a paired game seated the
    /// agent at side 1.
    pub agent_side: u8,
    /// Threads a searched decision's sampled worlds are shared among (1:
    /// the playing thread alone). The decisions and their node counts are
    /// the same for any number (docs/search.md): only the wall time of a
    /// decision changes, so this is for a game played alone (`muggins
    /// play`, a bench), not for games already played on every core.
    pub decision_threads: usize,
}

/// The table's default size in megabytes, per thread playing.
pub const DEFAULT_TABLE_MB: u32 = 64;

impl Default for MatchOptions<'_> {
    fn default() -> Self {
        MatchOptions {
            eval: None,
            table_mb: DEFAULT_TABLE_MB,
            target_depth: DEFAULT_TARGET_DEPTH,
            predictors: None,
            agent_side: 0,
            decision_threads: 1,
        }
    }
}

/// The table and tree searching seats reuse through a match.
#[derive(Debug)]
pub struct Scratch {
    table: FivesTable,
    tree: IsmctsTree,
    sampler: WorldSampler,
    worlds: Vec<FivesPosition>,
    marginals: Box<super::belief::Marginals>,
    /// The tables of a decision's helper threads (`decision_threads`).
    helpers: Vec<FivesTable>,
}

impl Scratch {
    /// Scratch for `agents` within `table_mb` megabytes: a budgeted search's
    /// table is sized to its budget (the largest of the agents').
    pub fn for_agents(agents: &[FullAgent], table_mb: u32) -> Scratch {
        Scratch {
            table: FivesTable::for_budget(Self::budget_for(agents), table_mb),
            tree: IsmctsTree::default(),
            sampler: WorldSampler::default(),
            worlds: Vec::new(),
            marginals: Box::new([[0.0; super::belief::HOLDERS]; 64]),
            helpers: Vec::new(),
        }
    }

    /// Runs `f` with this thread's scratch for `agents`, kept from one match
    /// to the next (one table per thread, not one allocation per match).
    /// What a search finds in it does not depend on what it held: the table
    /// is emptied before every world of every decision, the tree before
    /// every decision.
    pub fn with_thread_scratch<R>(agents: &[FullAgent], table_mb: u32, f: impl FnOnce(&mut Scratch) -> R) -> R {
        thread_local! {
            static SCRATCH: std::cell::RefCell<Option<Scratch>> = const { std::cell::RefCell::new(None) };
        }
        let budget = Self::budget_for(agents);
        let slots = FivesTable::slots_for(budget, table_mb);
        let grows = FivesTable::grows_for(budget, table_mb);
        SCRATCH.with(|cell| {
            // A reentrant call (not made by muggins) gets scratch of its own.
            let Ok(mut held) = cell.try_borrow_mut() else {
                return f(&mut Scratch::for_agents(agents, table_mb));
            };
            if held
                .as_ref()
                .is_none_or(|s| s.table.capacity() != slots || s.table.grows() != grows)
            {
                // Free the old table before making the new one.
                *held = None;
                *held = Some(Scratch::for_agents(agents, table_mb));
            }
            f(held.as_mut().expect("set above"))
        })
    }

    /// The budget `agents`' table is sized for: the largest of the
    /// searchers', 0 (none: the table's megabytes) if one has none.
    fn budget_for(agents: &[FullAgent]) -> u64 {
        let budgets: Vec<u64> = agents
            .iter()
            .filter_map(|a| match a {
                FullAgent::Search(s) if s.engine != PlayerEngine::Ismcts => Some(s.budget),
                _ => None,
            })
            .collect();
        if budgets.contains(&0) {
            0
        } else {
            budgets.iter().copied().max().unwrap_or(1)
        }
    }
}

impl FullAgent {
    /// The agent a target seat is: its fixed strategy, or for `searcher`
    /// Expectimax to `depth` under full observation.
    pub fn target(t: FullTarget, depth: u8) -> FullAgent {
        match t {
            FullTarget::Searcher => FullAgent::Search(SearchSettings::fixed(PlayerEngine::Expectimax, depth)),
            t => FullAgent::Fixed(t),
        }
    }
}

/// What the searching seats of a match decide with besides the position and
/// their settings: the rules, the match's options and the scratch they reuse;
/// and who decides the seats decided outside muggins.
#[derive(Debug)]
pub struct MatchContext<'a, 'e> {
    /// The rules of the match.
    pub rules: &'a FullRules,
    /// The options of the match's searching seats.
    pub opts: &'a MatchOptions<'a>,
    /// The table and tree the searching seats reuse.
    pub scratch: &'a mut Scratch,
    /// The seats decided outside muggins (`None` when there are none).
    pub external: Option<&'e mut dyn ExternalSeats>,
    /// Each side's total over the match's earlier hands.
    pub totals: [u32; MAX_SEATS],
    /// The hand being played (0 first).
    pub hand_no: u32,
}

/// The searched decision of the mover of `pos` (two or more plays; `pos` is
/// the true position: under partial observation only what the seat may
/// know of it is used, its worlds coming from its belief given `seen`),
/// with how well the belief placed the hidden tiles (partial observation
/// only). `models`: what the seat takes each seat to play; `rng`: the
/// seat's stream.
pub fn search_decision(
    ctx: &mut MatchContext,
    pos: &FivesPosition,
    seen: &Seen,
    settings: SearchSettings,
    models: [FullTarget; MAX_SEATS],
    rng: &mut ChaCha20Rng,
) -> (FullDecision, Option<BeliefScore>) {
    let (rules, opts) = (ctx.rules, ctx.opts);
    let scratch = &mut *ctx.scratch;
    let seat = pos.mover;
    let k = settings.worlds as usize;
    let route = route(settings.engine);
    if let Route::Dominai = route {
        // Its matrices are its belief, whatever `belief` says.
        scratch.sampler.prepare(
            rules,
            pos,
            seen,
            WorldSource {
                belief: engine::Belief::Dominai,
                models: &models,
                worlds: 1,
            },
            rng,
        );
        let score = belief_score(scratch, pos);
        let obs = *scratch.sampler.observation();
        let limit = if settings.budget > 0 {
            settings.budget
        } else {
            DOMINAI_NODES
        };
        let turns = seen.plays().count() as u32;
        let d = super::dominai::dominai_decide(rules, pos, &obs, turns, rules.seats() as u32, limit);
        return (d, Some(score));
    }
    let partial = k > 0;
    if partial {
        scratch.sampler.prepare(
            rules,
            pos,
            seen,
            WorldSource {
                belief: settings.belief,
                models: &models,
                worlds: k,
            },
            rng,
        );
    }
    let score = partial.then(|| belief_score(scratch, pos));
    if let Route::Ismcts = route {
        let budget = settings.budget.max(1) * k.max(1) as u64;
        let sampler = partial.then_some(&mut scratch.sampler);
        return (scratch.tree.decide(rules, pos, budget, sampler, rng), score);
    }
    let eval = if settings.learned {
        Evaluation::Learned(
            opts.eval
                .expect("a learned evaluation is given with settings that use it"),
        )
    } else {
        Evaluation::Score
    };
    let limits = Limits {
        depth: settings.depth.max(1),
        budget: settings.budget,
    };
    let predictor = (!settings.shaping.is_plain()).then(|| {
        let set = opts
            .predictors
            .expect("the predictors are given with settings that shape the search");
        let mut p = super::predict::Predictor::new(set, settings.predictor, &models);
        // The DBN's evidence: each seat's plays so far, as the table saw them.
        p.observe(rules, seen);
        p
    });
    // Helpers' tables of the playing table's capacity (fixed for the
    // scratch), kept from one decision to the next.
    let extra = opts.decision_threads.max(1) - 1;
    while scratch.helpers.len() < extra {
        scratch.helpers.push(scratch.table.like());
    }
    let mut ab = AlphaBeta::new(rules, seat, settings.engine, models, eval, &mut scratch.table);
    if let Some(p) = &predictor {
        ab = ab.shaped(settings.shaping, p);
    }
    if !partial {
        return (ab.decide(&[*pos], limits), None);
    }
    // Every world is drawn whether or not the adaptive stop uses it, so the
    // seat's stream moves on the same with and without it.
    scratch.sampler.worlds(k, rng, &mut scratch.worlds);
    let helpers = &mut scratch.helpers[..extra];
    (
        ab.decide_threaded(&scratch.worlds, limits, settings.adaptive, helpers),
        score,
    )
}

/// The node cap of a DominAI decision without a budget.
pub const DOMINAI_NODES: u64 = 200_000;

/// The log loss and Brier score of the prepared belief's marginals against
/// where the hidden tiles of `pos` are.
fn belief_score(scratch: &mut Scratch, pos: &FivesPosition) -> BeliefScore {
    scratch.sampler.marginals(&mut scratch.marginals);
    let obs = scratch.sampler.observation();
    let (log_loss, brier) = super::belief::scores(obs, &scratch.marginals, &obs.holders_in(pos));
    BeliefScore {
        log_loss,
        brier,
        ess: scratch.sampler.ess(),
    }
}
