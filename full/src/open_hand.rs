//! A block or team hand (OpenSpiel's games) played to its end by agents:
//! the game loop of the open-hand presets, above the agents' layer.

use rand_chacha::ChaCha20Rng;

use engine::TileSet;
use engine::seed::below;

use super::agent::{ExternalSeats, Forfeit, FullAgent, Route, SeatView, external_choice, models, route};
use super::belief::{Observation, open_world_of};
use super::dominai::dominai_decide_block;
use super::ismcts::IsmctsTree;
use super::open_ismcts::ismcts_open;
use super::openspiel::action_id;
use super::position::{FullAction, FullActions, FullPosition, HandEnd};
use super::rules::{FullRules, MAX_SEATS};
use super::search::{FullDecision, FullSearcher};
use super::targets::{FullTarget, heaviest_play};

/// A block or team hand played to its end.
#[derive(Clone, Debug, PartialEq)]
pub struct OpenHandRecord {
    /// The deal.
    pub hands: [TileSet; MAX_SEATS],
    /// Every play, in order.
    pub plays: Vec<(u8, FullAction)>,
    /// The legal plays the mover had before each play.
    pub legal: Vec<u32>,
    /// How the hand ended.
    pub end: HandEnd,
    /// Each seat's return (OpenSpiel's).
    pub returns: [i32; MAX_SEATS],
    /// Positions the searching seats valued.
    pub nodes: u64,
    /// The searching seats' decisions: the play's index in `plays`, and the decision.
    pub decisions: Vec<(usize, FullDecision)>,
    /// How well DominAI's matrices placed the hidden tiles at each of the
    /// agent side's DominAI decisions.
    pub beliefs: Vec<super::worlds::BeliefScore>,
}

/// Expectimax or M* to the settings' depth on `settings.worlds` worlds of
/// the mover of `pos` (PIMC under partial observation): the others' tiles
/// drawn exactly from the `constraints` belief of `obs` (or, with the
/// `uniform` belief, its hand sizes alone) with the seat's stream; the play
/// with the best mean value, ties to the first in OpenSpiel's order. Only
/// the mover's hand and the public part of `pos` are read (the game loop
/// here, and the Python package's bots, decide with it).
pub fn pimc_open(
    rules: &FullRules,
    pos: &FullPosition,
    obs: &Observation,
    settings: super::agent::SearchSettings,
    models: [FullTarget; MAX_SEATS],
    rng: &mut ChaCha20Rng,
) -> FullDecision {
    let obs = belief_view(obs, settings.belief);
    let mut belief = super::belief::Constraints::new(&obs);
    let (mut sum, mut values, mut nodes) = (Vec::new(), Vec::new(), 0);
    let mut at = [u8::MAX; 64];
    for _ in 0..settings.worlds {
        belief
            .sample(rng, &mut at)
            .expect("the true deal agrees with what the seat saw");
        let world = open_world_of(rules, pos, &obs, &at);
        let mut s = FullSearcher::new(rules, pos.mover, settings.engine, settings.depth, models);
        s.open_values_budget(&world, settings.budget, &mut values);
        nodes += s.nodes();
        sum.resize(values.len(), 0.0);
        for (t, v) in sum.iter_mut().zip(&values) {
            *t += v;
        }
    }
    let k = settings.worlds.max(1) as f64;
    let mut d = super::search::best_of(sum.len(), |i| sum[i] / k);
    d.nodes = nodes;
    d
}

/// What a block or team seat's worlds are drawn from: `obs`, or with the
/// `uniform` belief its hand sizes alone.
fn belief_view(obs: &Observation, belief: engine::Belief) -> Observation {
    if belief == engine::Belief::Uniform {
        obs.without_voids()
    } else {
        *obs
    }
}

/// The decision of a searching seat, the mover of `pos`, that sees what
/// `obs` says (under partial observation, `settings.worlds > 0`): PIMC
/// ([`pimc_open`]) for M* and Expectimax, ISMCTS on `settings.budget` times
/// `settings.worlds` nodes for ISMCTS (the tree kept in `tree` between
/// decisions). DominAI is decided by `dominai_decide_block`.
pub fn decide_open(
    rules: &FullRules,
    pos: &FullPosition,
    obs: &Observation,
    settings: super::agent::SearchSettings,
    models: [FullTarget; MAX_SEATS],
    tree: &mut IsmctsTree,
    rng: &mut ChaCha20Rng,
) -> FullDecision {
    match route(settings.engine) {
        Route::Ismcts => {}
        Route::AlphaBeta | Route::Dominai => return pimc_open(rules, pos, obs, settings, models, rng),
    }
    let budget = settings.budget.max(1) * settings.worlds.max(1) as u64;
    if settings.worlds == 0 {
        return ismcts_open(tree, rules, pos, None, budget, rng);
    }
    let obs = belief_view(obs, settings.belief);
    let mut belief = super::belief::Constraints::new(&obs);
    ismcts_open(tree, rules, pos, Some((&mut belief, &obs)), budget, rng)
}

/// Plays a block or team hand from `hands`, `agents[seat]` in each seat;
/// `seat_rngs` drive the random strategies (one draw per decision).
pub fn play_open_hand(
    rules: &FullRules,
    hands: [TileSet; MAX_SEATS],
    agents: &[FullAgent; MAX_SEATS],
    seat_rngs: &mut [ChaCha20Rng; MAX_SEATS],
) -> OpenHandRecord {
    play_open_hand_external(rules, hands, agents, seat_rngs, None).expect("no seat is decided outside muggins")
}

/// [`play_open_hand`] with seats decided outside muggins
/// ([`FullAgent::External`]) by `external`: the hand, or the forfeit that
/// ended it.
pub fn play_open_hand_external(
    rules: &FullRules,
    hands: [TileSet; MAX_SEATS],
    agents: &[FullAgent; MAX_SEATS],
    seat_rngs: &mut [ChaCha20Rng; MAX_SEATS],
    mut external: Option<&mut dyn ExternalSeats>,
) -> Result<OpenHandRecord, Forfeit> {
    let models = models(agents);
    if let Some(e) = external.as_deref_mut() {
        e.begin_hand(rules, &hands);
    }
    let mut pos = FullPosition::deal(rules, hands);
    let mut list = FullActions::default();
    let (mut plays, mut legal, mut decisions, mut nodes) = (Vec::new(), Vec::new(), Vec::new(), 0);
    // What every seat showed: a seat skipped because it could not play
    // holds no tile matching the open ends then (there are no draws).
    let (mut void, mut void_pips) = ([0 as TileSet; MAX_SEATS], [0u16; MAX_SEATS]);
    let mut beliefs = Vec::new();
    let mut tree = IsmctsTree::default();
    while pos.end.is_none() {
        let seat = pos.mover;
        pos.actions(rules, &mut list);
        let n = list.len();
        let i = match agents[seat as usize] {
            FullAgent::Fixed(FullTarget::Heaviest) => heaviest_play(rules, list.as_slice()),
            // One draw per decision, however many plays (as the thesis's random target).
            FullAgent::Fixed(_) => below(&mut seat_rngs[seat as usize], n as u64) as usize,
            FullAgent::Search(_) | FullAgent::External if n == 1 => 0,
            FullAgent::External => {
                let history: Vec<u32> = plays.iter().map(|&(s, a)| action_id(rules, s, a)).collect();
                let mut legal: Vec<u32> = list.as_slice().iter().map(|&a| action_id(rules, seat, a)).collect();
                legal.sort_unstable();
                let view = SeatView {
                    seat,
                    hand_no: 0,
                    tiles: pos.hands[seat as usize],
                    history: &history,
                    sizes: std::array::from_fn(|s| pos.hands[s].count_ones() as u8),
                    boneyard: pos.boneyard.count_ones() as u8,
                    points: [0; MAX_SEATS],
                    totals: [0; MAX_SEATS],
                    legal: &legal,
                };
                let k = external_choice(external.as_deref_mut(), &view)?;
                let id = legal[k];
                (0..n)
                    .find(|&i| action_id(rules, seat, list.as_slice()[i]) == id)
                    .expect("a legal id names a play")
            }
            FullAgent::Search(settings) if route(settings.engine) == Route::Dominai => {
                let obs = Observation::of_hands(rules, &pos.hands, pos.boneyard, seat, &void, &void_pips);
                let limit = if settings.budget > 0 {
                    settings.budget
                } else {
                    super::agent::DOMINAI_NODES
                };
                let d = dominai_decide_block(rules, &pos, &obs, plays.len() as u32, rules.seats() as u32, limit);
                if rules.side(seat) == rules.side(0) {
                    let mut m = [[0.0; super::belief::HOLDERS]; 64];
                    super::dominai::DominaiMatrices::new(rules, &obs).marginals(&mut m);
                    let truth = obs.holders_of(&pos.hands, pos.boneyard);
                    let (log_loss, brier) = super::belief::scores(&obs, &m, &truth);
                    beliefs.push(super::worlds::BeliefScore {
                        log_loss,
                        brier,
                        ess: None,
                    });
                }
                nodes += d.nodes;
                decisions.push((plays.len(), d));
                d.index
            }
            FullAgent::Search(settings) if settings.worlds > 0 || route(settings.engine) == Route::Ismcts => {
                let obs = Observation::of_hands(rules, &pos.hands, pos.boneyard, seat, &void, &void_pips);
                let rng = &mut seat_rngs[seat as usize];
                let d = decide_open(rules, &pos, &obs, settings, models, &mut tree, rng);
                nodes += d.nodes;
                decisions.push((plays.len(), d));
                d.index
            }
            FullAgent::Search(settings) => {
                let mut s = FullSearcher::new(rules, seat, settings.engine, settings.depth, models);
                let d = s.choose_open(&pos, settings.budget);
                nodes += s.nodes();
                decisions.push((plays.len(), d));
                d.index
            }
        };
        let a = list.as_slice()[i];
        plays.push((seat, a));
        legal.push(n as u32);
        pos.play(rules, a);
        // Seats between the player and the next mover were skipped.
        let next = if pos.end.is_some() { seat } else { pos.mover };
        let mut s = (seat + 1) % rules.seats();
        while s != next && !(pos.end == Some(HandEnd::Domino(seat))) {
            for &e in &pos.ends[..pos.open as usize] {
                void[s as usize] |= rules.pip_mask(e);
                void_pips[s as usize] |= 1 << e;
            }
            s = (s + 1) % rules.seats();
        }
    }
    Ok(OpenHandRecord {
        hands,
        plays,
        legal,
        end: pos.end.expect("the loop ends with the hand"),
        returns: pos.returns(rules),
        nodes,
        decisions,
        beliefs,
    })
}
