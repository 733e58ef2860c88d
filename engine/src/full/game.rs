//! All-Fives hands and matches played by fixed strategies in every seat:
//! the targets (`random`, `scorer`, `defender`, `heaviest`), one hand from a
//! deal, and a match of hands to a target score, each hand from its own
//! seeded streams.
//!
//! Randomness: the streams of a match are ChaCha20 keyed (see
//! [`crate::seed::keyed_rng`]) by the experiment seed, the first hand's deal
//! index and the repeat, with the tag `mugfull1`; stream `hand << 8 |
//! purpose` serves hand `hand` (0 = the deal of a later hand, 1 = the
//! boneyard's order, 2 + seat = that seat's random choices). A match is thus
//! a pure function of (seed, deal, repeat, rules, agents).

use rand_chacha::ChaCha20Rng;

use crate::board::Loc;
use crate::position::{Action, ActionList};
use crate::seed::{below, keyed_rng, shuffle};
use crate::targets::TargetKind;
use crate::tiles::{TileSet, bits};

use super::alphabeta::{AlphaBeta, Limits};
use super::block_search::heaviest;
use super::deal::deal_from_index;
use super::eval::{Evaluation, LinearEval};
use super::fives::{FivesPosition, Opening, Scored};
use super::ismcts::{IsmctsTree, Seen};
use super::position::HandEnd;
use super::rules::{FullRules, MAX_SEATS};
use super::search::{FullAgent, FullDecision, FullEngine, SearchSettings, models};
use super::table::FivesTable;
use super::worlds::{BeliefScore, WorldSampler};

/// A fixed strategy of the full game (written and read by its name; ordered
/// as the thesis's targets, then `heaviest`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FullTarget {
    /// One of the thesis's targets: `random` (uniform), `scorer` (most
    /// points, then highest count) or `defender` (most defense, then lowest
    /// count), ties to the first play in canonical order.
    Thesis(TargetKind),
    /// Plays its heaviest legal tile (pip total, then high pip) at the first
    /// location that takes it: DominAI's "beginner strategy", abw333's
    /// "bota gorda".
    Heaviest,
    /// A non-myopic opponent: Expectimax to a depth (`[search]
    /// target_depth`) under full observation. Not a fixed strategy: a seat
    /// with this target searches ([`FullAgent::target`]); M* models it as
    /// minimising.
    Searcher,
}

impl FullTarget {
    /// Every strategy.
    pub const ALL: [FullTarget; 4] = [
        FullTarget::Thesis(TargetKind::Random),
        FullTarget::Thesis(TargetKind::Scorer),
        FullTarget::Thesis(TargetKind::Defender),
        FullTarget::Heaviest,
    ];

    /// The name in specs and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            FullTarget::Thesis(TargetKind::Random) => "random",
            FullTarget::Thesis(TargetKind::Scorer) => "scorer",
            FullTarget::Thesis(TargetKind::Defender) => "defender",
            FullTarget::Heaviest => "heaviest",
            FullTarget::Searcher => "searcher",
        }
    }
}

impl FullTarget {
    /// The thesis's target this is, if it is one.
    pub fn thesis(self) -> Option<TargetKind> {
        match self {
            FullTarget::Thesis(k) => Some(k),
            FullTarget::Heaviest | FullTarget::Searcher => None,
        }
    }
}

impl std::fmt::Display for FullTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl serde::Serialize for FullTarget {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for FullTarget {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<FullTarget, D::Error> {
        let name = String::deserialize(d)?;
        name.parse().map_err(serde::de::Error::custom)
    }
}

impl std::str::FromStr for FullTarget {
    type Err = String;
    fn from_str(s: &str) -> Result<FullTarget, String> {
        FullTarget::ALL
            .into_iter()
            .chain([FullTarget::Searcher])
            .find(|t| t.name() == s)
            .ok_or_else(|| format!("unknown target {s:?}: expected random, scorer, defender, heaviest or searcher"))
    }
}

/// The index (in `actions`, canonical order, non-empty) of the play
/// `target` makes; `rng` serves the random target.
pub fn full_choice(
    rules: &FullRules,
    target: FullTarget,
    pos: &FivesPosition,
    actions: &[Action],
    rng: &mut ChaCha20Rng,
) -> usize {
    fixed_choice(rules, target, pos, actions).unwrap_or_else(|| below(rng, actions.len() as u64) as usize)
}

/// The play of a deterministic strategy (index in `actions`, canonical
/// order, non-empty); `None` for `random`, whose play is a draw, and for
/// `searcher`, which is not a fixed strategy.
pub fn fixed_choice(rules: &FullRules, target: FullTarget, pos: &FivesPosition, actions: &[Action]) -> Option<usize> {
    let kind = match target {
        FullTarget::Thesis(TargetKind::Random) | FullTarget::Searcher => return None,
        FullTarget::Heaviest => return Some(heaviest(rules, actions.iter().map(|a| a.tile))),
        FullTarget::Thesis(k) => k,
    };
    let mut best = 0;
    let mut best_key = (i64::MIN, i64::MIN);
    for (i, a) in actions.iter().enumerate() {
        let mut board = pos.board;
        board.play(rules, a.tile, a.loc);
        let count = board.count() as i64;
        let key = match kind {
            TargetKind::Scorer => (if count > 0 && count % 5 == 0 { count } else { 0 }, count),
            _ => (board.defense() as i64, -count),
        };
        // Strictly greater: ties keep the earlier play.
        if key > best_key {
            best_key = key;
            best = i;
        }
    }
    Some(best)
}

/// One event of a hand, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FullMove {
    /// `seat` played `tile` at `loc`, scoring as said.
    Play {
        /// The seat.
        seat: u8,
        /// The tile.
        tile: u8,
        /// Where.
        loc: Loc,
        /// What the play scored.
        scored: Scored,
    },
    /// `seat` drew `tile` from the boneyard.
    Draw {
        /// The seat.
        seat: u8,
        /// The tile.
        tile: u8,
    },
    /// `seat` passed (no play, nothing it may draw).
    Pass {
        /// The seat.
        seat: u8,
        /// What the pass scored (a blocking pass scores the hand).
        scored: Scored,
    },
}

/// A hand played to its end.
#[derive(Clone, Debug, PartialEq)]
pub struct HandRecord {
    /// The deal: each seat's tiles.
    pub hands: [TileSet; MAX_SEATS],
    /// Who opened, and with what when forced.
    pub opening: Opening,
    /// How it ended.
    pub end: HandEnd,
    /// Points each side made (index: side).
    pub scores: [u32; MAX_SEATS],
    /// Every play, draw and pass.
    pub moves: Vec<FullMove>,
    /// Positions the searching seats valued.
    pub nodes: u64,
    /// The searching seats' decisions with two or more plays: the index of
    /// the play in `moves`, and the decision.
    pub decisions: Vec<(usize, FullDecision)>,
    /// How well the agent side's belief placed the hidden tiles at each of
    /// its partial-observation decisions (in the order of `decisions`).
    pub beliefs: Vec<BeliefScore>,
}

/// The streams of hand `hand` of the match (seed, deal, repeat).
fn stream(seed: u64, deal: u64, repeat: u64, hand: u64, purpose: u64) -> ChaCha20Rng {
    keyed_rng(seed, deal, repeat, b"mugfull1", hand << 8 | purpose)
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
}

/// The table's default size in megabytes, per thread playing.
pub const DEFAULT_TABLE_MB: u32 = 64;

/// The `searcher` target's default depth.
pub const DEFAULT_TARGET_DEPTH: u8 = 2;

impl Default for MatchOptions<'_> {
    fn default() -> Self {
        MatchOptions {
            eval: None,
            table_mb: DEFAULT_TABLE_MB,
            target_depth: DEFAULT_TARGET_DEPTH,
            predictors: None,
            agent_side: 0,
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
}

impl Scratch {
    /// Scratch for `agents` within `table_mb` megabytes: a budgeted search's
    /// table is sized to its budget (the largest of the agents').
    pub fn for_agents(agents: &[FullAgent], table_mb: u32) -> Scratch {
        Scratch {
            table: FivesTable::with_slots(Self::slots_for(agents, table_mb)),
            tree: IsmctsTree::default(),
            sampler: WorldSampler::default(),
            worlds: Vec::new(),
            marginals: Box::new([[0.0; super::belief::HOLDERS]; 64]),
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
        let slots = Self::slots_for(agents, table_mb);
        SCRATCH.with(|cell| {
            // A reentrant call (not made by muggins) gets scratch of its own.
            let Ok(mut held) = cell.try_borrow_mut() else {
                return f(&mut Scratch::for_agents(agents, table_mb));
            };
            if held.as_ref().is_none_or(|s| s.table.capacity() != slots) {
                // Free the old table before making the new one.
                *held = None;
                *held = Some(Scratch::for_agents(agents, table_mb));
            }
            f(held.as_mut().expect("set above"))
        })
    }

    /// The table's slots for `agents` within `table_mb` megabytes.
    fn slots_for(agents: &[FullAgent], table_mb: u32) -> usize {
        let budgets: Vec<u64> = agents
            .iter()
            .filter_map(|a| match a {
                FullAgent::Search(s) if s.engine != FullEngine::Ismcts => Some(s.budget),
                _ => None,
            })
            .collect();
        let budget = if budgets.contains(&0) {
            0
        } else {
            budgets.iter().copied().max().unwrap_or(1)
        };
        FivesTable::slots_for(budget, table_mb)
    }
}

impl FullAgent {
    /// The agent a target seat is: its fixed strategy, or for `searcher`
    /// Expectimax to `depth` under full observation.
    pub fn target(t: FullTarget, depth: u8) -> FullAgent {
        match t {
            FullTarget::Searcher => FullAgent::Search(SearchSettings::fixed(FullEngine::Expectimax, depth)),
            t => FullAgent::Fixed(t),
        }
    }
}

/// The searched decision of `seat` (the mover, two or more plays) at `pos`
/// (the true position; under partial observation only what the seat may
/// know of it is used: its worlds come from its belief given `seen`), with
/// how well the belief placed the hidden tiles (partial observation only).
#[allow(clippy::too_many_arguments)]
pub fn search_decision(
    rules: &FullRules,
    pos: &FivesPosition,
    seen: &Seen,
    settings: SearchSettings,
    models: [FullTarget; MAX_SEATS],
    opts: &MatchOptions,
    scratch: &mut Scratch,
    rng: &mut ChaCha20Rng,
) -> (FullDecision, Option<BeliefScore>) {
    let seat = pos.mover;
    let k = settings.worlds as usize;
    if settings.engine == FullEngine::Dominai {
        // Its matrices are its belief, whatever `belief` says.
        scratch
            .sampler
            .prepare(rules, pos, seat, seen, crate::Belief::Dominai, &models, 1, rng);
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
        scratch
            .sampler
            .prepare(rules, pos, seat, seen, settings.belief, &models, k, rng);
    }
    let score = partial.then(|| belief_score(scratch, pos));
    if settings.engine == FullEngine::Ismcts {
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
    let mut ab = AlphaBeta::new(rules, seat, settings.engine, models, eval, &mut scratch.table);
    if let Some(p) = &predictor {
        ab = ab.shaped(settings.shaping, p);
    }
    if !partial {
        return (ab.decide(&[*pos], limits), None);
    }
    scratch.sampler.worlds(k, rng, &mut scratch.worlds);
    (ab.decide(&scratch.worlds, limits), score)
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

/// Plays one hand from `hands` with `agents[seat]` in each seat; a searching
/// seat's M* models the others by their strategies (a searching opponent as
/// `searcher`). `rngs`: the boneyard's stream, then one stream per seat (a
/// random strategy's choices, a searching seat's worlds).
pub fn play_hand(
    rules: &FullRules,
    hands: [TileSet; MAX_SEATS],
    opening: Opening,
    agents: &[FullAgent; MAX_SEATS],
    boneyard_rng: &mut ChaCha20Rng,
    seat_rngs: &mut [ChaCha20Rng; MAX_SEATS],
) -> HandRecord {
    let opts = MatchOptions::default();
    Scratch::with_thread_scratch(agents, opts.table_mb, |scratch| {
        play_hand_with(rules, hands, opening, agents, boneyard_rng, seat_rngs, &opts, scratch)
    })
}

/// [`play_hand`] with the match's options and scratch.
#[allow(clippy::too_many_arguments)]
pub fn play_hand_with(
    rules: &FullRules,
    hands: [TileSet; MAX_SEATS],
    opening: Opening,
    agents: &[FullAgent; MAX_SEATS],
    boneyard_rng: &mut ChaCha20Rng,
    seat_rngs: &mut [ChaCha20Rng; MAX_SEATS],
    opts: &MatchOptions,
    scratch: &mut Scratch,
) -> HandRecord {
    let mut pos = FivesPosition::deal(rules, hands, opening);
    let mut order: Vec<u8> = bits(pos.boneyard).collect();
    shuffle(boneyard_rng, &mut order);
    let mut next_draw = 0;
    let mut moves = Vec::new();
    let mut nodes = 0;
    let mut decisions = Vec::new();
    let mut beliefs = Vec::new();
    let models = models(agents);
    let mut list = ActionList::default();
    let mut seen = Seen::default();
    while pos.end.is_none() {
        let seat = pos.mover;
        if !pos.can_play(rules, seat) {
            seen.stuck(rules, &pos);
            // Draw while the boneyard holds more than the tiles kept back, else pass.
            if pos.boneyard.count_ones() > rules.config().keep as u32 {
                let tile = order[next_draw];
                next_draw += 1;
                pos.draw(tile);
                seen.drew(seat);
                moves.push(FullMove::Draw { seat, tile });
            } else {
                let scored = pos.pass(rules);
                moves.push(FullMove::Pass { seat, scored });
            }
            continue;
        }
        pos.actions(rules, &mut list);
        let i = match agents[seat as usize] {
            FullAgent::Fixed(FullTarget::Searcher) => {
                unreachable!("a searcher target plays as FullAgent::target makes it")
            }
            FullAgent::Fixed(t) => full_choice(rules, t, &pos, list.as_slice(), &mut seat_rngs[seat as usize]),
            FullAgent::Search(_) if list.len() == 1 => 0,
            FullAgent::Search(settings) => {
                let (d, score) = search_decision(
                    rules,
                    &pos,
                    &seen,
                    settings,
                    models,
                    opts,
                    scratch,
                    &mut seat_rngs[seat as usize],
                );
                // Only the agent side's decisions are recorded (a searching
                // target's are its own business, as a fixed target's).
                if rules.side(seat) == opts.agent_side {
                    nodes += d.nodes;
                    decisions.push((moves.len(), d));
                    beliefs.extend(score);
                }
                d.index
            }
        };
        let a = list.as_slice()[i];
        seen.played(&pos, a);
        let scored = pos.play(rules, a);
        moves.push(FullMove::Play {
            seat,
            tile: a.tile,
            loc: a.loc,
            scored,
        });
    }
    HandRecord {
        hands,
        opening,
        end: pos.end.expect("the loop ends with the hand"),
        scores: pos.scores,
        moves,
        nodes,
        decisions,
        beliefs,
    }
}

/// A match played to its end.
#[derive(Clone, Debug, PartialEq)]
pub struct MatchRecord {
    /// The hands in order.
    pub hands: Vec<HandRecord>,
    /// Each side's total (index: side).
    pub totals: [u32; MAX_SEATS],
    /// The side that reached the target score first.
    pub winner: u8,
}

/// Most hands a match may take: a match still short of `to` after this many
/// hands ends there (it cannot happen at `to` <= 1000 in practice; it bounds
/// the loop should every hand score nothing).
pub const MAX_HANDS: u64 = 10_000;

/// The hands of one grid point: the first dealt as deal index `deal`, later
/// ones from the match's deal stream, until a side's total reaches `to`
/// (checked at the end of each hand; with `to` = 0, after one hand). The
/// winner is the side with the highest total, ties to the lower side index.
/// Returns `None` when `deal` is not a deal index of the rules.
pub fn play_match(
    rules: &FullRules,
    seed: u64,
    deal: u64,
    repeat: u64,
    agents: &[FullAgent; MAX_SEATS],
    to: u32,
) -> Option<MatchRecord> {
    play_match_with(rules, seed, deal, repeat, agents, to, &MatchOptions::default())
}

/// [`play_match`] with options for the searching seats.
pub fn play_match_with(
    rules: &FullRules,
    seed: u64,
    deal: u64,
    repeat: u64,
    agents: &[FullAgent; MAX_SEATS],
    to: u32,
    opts: &MatchOptions,
) -> Option<MatchRecord> {
    let first = deal_from_index(rules, deal)?;
    Some(Scratch::with_thread_scratch(agents, opts.table_mb, |scratch| {
        play_hands(rules, (seed, deal, repeat), first, agents, to, opts, scratch)
    }))
}

/// The hands of a match from its first deal (see [`play_match`]).
fn play_hands(
    rules: &FullRules,
    (seed, deal, repeat): (u64, u64, u64),
    first: [TileSet; MAX_SEATS],
    agents: &[FullAgent; MAX_SEATS],
    to: u32,
    opts: &MatchOptions,
    scratch: &mut Scratch,
) -> MatchRecord {
    let mut hands = Vec::new();
    let mut totals = [0u32; MAX_SEATS];
    let mut previous = None;
    for h in 0..MAX_HANDS {
        let dealt = if h == 0 {
            first
        } else {
            super::deal::random_deal(rules, &mut stream(seed, deal, repeat, h, 0))
        };
        let opening = Opening::of(rules, &dealt, previous);
        let mut seat_rngs = std::array::from_fn(|s| stream(seed, deal, repeat, h, 2 + s as u64));
        let record = play_hand_with(
            rules,
            dealt,
            opening,
            agents,
            &mut stream(seed, deal, repeat, h, 1),
            &mut seat_rngs,
            opts,
            scratch,
        );
        for (t, s) in totals.iter_mut().zip(record.scores) {
            *t += s;
        }
        previous = Some(record.end);
        hands.push(record);
        if totals[..rules.sides() as usize].iter().any(|&t| t >= to) {
            break;
        }
    }
    let best = *totals[..rules.sides() as usize].iter().max().expect("two sides");
    let winner = totals.iter().position(|&t| t == best).expect("found above") as u8;
    MatchRecord { hands, totals, winner }
}

/// One All-Fives hand from a uniformly random deal, every seat playing
/// uniformly random legal plays and drawing uniformly from the boneyard (the
/// playout benchmark's hand; the first hand's lead rule applies).
pub fn random_fives_hand(rules: &FullRules, rng: &mut impl rand_core::RngCore) -> FivesPosition {
    use super::deal::{below as below32, random_deal};
    let hands = random_deal(rules, rng);
    let mut pos = FivesPosition::deal(rules, hands, Opening::of(rules, &hands, None));
    let mut list = ActionList::default();
    while pos.end.is_none() {
        if !pos.can_play(rules, pos.mover) {
            pos.draw_or_pass(rules, rng);
            continue;
        }
        pos.actions(rules, &mut list);
        let i = below32(rng, list.len() as u32) as usize;
        pos.play(rules, list.as_slice()[i]);
    }
    pos
}

/// Plays `games` random All-Fives hands from one ChaCha8 stream seeded with
/// `seed`; returns the sum of side 0's points minus side 1's, a checksum.
pub fn fives_playouts(rules: &FullRules, seed: u64, games: u64) -> i64 {
    super::deal::playout_sum(seed, games, |rng| {
        let end = random_fives_hand(rules, rng);
        end.scores[0] as i64 - end.scores[1] as i64
    })
}
