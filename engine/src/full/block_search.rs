//! Depth-limited Expectimax and M* for OpenSpiel's block and team games
//! under full observation ([`FullSearcher::choose_open`]), and a hand of
//! them played by agents.
//!
//! The agent's side maximises its return; each opponent minimises it
//! (Expectimax) or follows its model (M*: `heaviest` plays its heaviest
//! tile, `random` is the uniform average over its plays; a searching
//! opponent is modelled as `random`). Depth counts plays; at depth 0 a
//! position is worth the return the agent's side would get if the hand were
//! blocked there. Ties within 1e-9 go to the first play in OpenSpiel's id
//! order. There are no chance nodes after the deal.

use rand_chacha::ChaCha20Rng;

use crate::seed::below;
use crate::tiles::TileSet;

use super::belief::Observation;
use super::dominai::dominai_decide_block;
use super::game::FullTarget;
use super::position::{FullAction, FullActions, FullPosition, HandEnd};
use super::rules::{FullRules, MAX_SEATS};
use super::search::{FullAgent, FullDecision, FullEngine, FullSearcher, best_of, models};

/// The heaviest play (pip total, then high pip; the first among equals).
pub fn heaviest_play(rules: &FullRules, actions: &[FullAction]) -> usize {
    heaviest(rules, actions.iter().map(|a| a.tile))
}

/// The index of the heaviest of `tiles` (pip total, then high pip; the first
/// among equals): the `heaviest` strategy of every preset.
pub(super) fn heaviest(rules: &FullRules, tiles: impl IntoIterator<Item = u8>) -> usize {
    let key = |t: u8| {
        let (a, b) = rules.pips(t);
        (a + b, b)
    };
    let mut best = (0, (0, 0));
    for (i, t) in tiles.into_iter().enumerate() {
        if i == 0 || key(t) > best.1 {
            best = (i, key(t));
        }
    }
    best.0
}

/// [`FullSearcher`] on block and team hands.
impl FullSearcher<'_> {
    /// The mover's play among its legal plays (two or more) in a block or
    /// team hand.
    pub fn choose_open(&mut self, pos: &FullPosition) -> FullDecision {
        let mut list = FullActions::default();
        pos.actions(self.rules, &mut list);
        let start = self.nodes;
        let mut d = best_of(list.len(), |i| {
            let mut next = *pos;
            next.play(self.rules, list.as_slice()[i]);
            self.open_value(&next, self.depth - 1)
        });
        d.nodes = self.nodes - start;
        d
    }

    fn open_value(&mut self, pos: &FullPosition, depth: u8) -> f64 {
        self.nodes += 1;
        let rules = self.rules;
        if pos.end.is_some() || depth == 0 {
            // Partners share a return: the side's index is one of its seats.
            return pos.pip_returns(rules)[self.side as usize] as f64;
        }
        let mut list = FullActions::default();
        pos.actions(rules, &mut list);
        // Heaviest plays its play; random, and any model block has no count
        // for, is the uniform average.
        let model_play = |model| (model == FullTarget::Heaviest).then(|| heaviest_play(rules, list.as_slice()));
        self.decision(pos.mover, list.len(), model_play, |s, i| {
            let mut next = *pos;
            next.play(rules, list.as_slice()[i]);
            s.open_value(&next, depth - 1)
        })
    }
}

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

/// Plays a block or team hand from `hands`, `agents[seat]` in each seat;
/// `seat_rngs` drive the random strategies (one draw per decision).
pub fn play_open_hand(
    rules: &FullRules,
    hands: [TileSet; MAX_SEATS],
    agents: &[FullAgent; MAX_SEATS],
    seat_rngs: &mut [ChaCha20Rng; MAX_SEATS],
) -> OpenHandRecord {
    let models = models(agents);
    let mut pos = FullPosition::deal(rules, hands);
    let mut list = FullActions::default();
    let (mut plays, mut legal, mut decisions, mut nodes) = (Vec::new(), Vec::new(), Vec::new(), 0);
    // What every seat showed: a seat skipped because it could not play
    // holds no tile matching the open ends then (there are no draws).
    let (mut void, mut void_pips) = ([0 as TileSet; MAX_SEATS], [0u16; MAX_SEATS]);
    let mut beliefs = Vec::new();
    while pos.end.is_none() {
        let seat = pos.mover;
        pos.actions(rules, &mut list);
        let n = list.len();
        let i = match agents[seat as usize] {
            FullAgent::Fixed(FullTarget::Heaviest) => heaviest_play(rules, list.as_slice()),
            // One draw per decision, however many plays (as the thesis's random target).
            FullAgent::Fixed(_) => below(&mut seat_rngs[seat as usize], n as u64) as usize,
            FullAgent::Search(_) if n == 1 => 0,
            FullAgent::Search(settings) if settings.engine == FullEngine::Dominai => {
                let obs = Observation::of_hands(rules, &pos.hands, pos.boneyard, seat, &void, &void_pips);
                let limit = if settings.budget > 0 {
                    settings.budget
                } else {
                    super::game::DOMINAI_NODES
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
            FullAgent::Search(settings) => {
                let mut s = FullSearcher::new(rules, seat, settings.engine, settings.depth, models);
                let d = s.choose_open(&pos);
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
    OpenHandRecord {
        hands,
        plays,
        legal,
        end: pos.end.expect("the loop ends with the hand"),
        returns: pos.returns(rules),
        nodes,
        decisions,
        beliefs,
    }
}
