//! The searcher: the rules, a value store and scratch space; the player's
//! decisions under full and partial observation; and the plain (unpruned)
//! Expectimax and M* search over chance nodes. With pruning on, values below
//! the root come from the pruned search (`pruned`) instead.

use rand_core::RngCore;

use crate::board::Board;
use crate::position::{Action, ActionList, Position, Seat};
use crate::rules::Rules;
use crate::table::{Key, ValueStore};
use crate::targets::{EngineKind, TargetKind, target_choice};
use crate::tiles::{TileSet, bits};
use crate::worlds::{Belief, Unseen, Worlds};

use super::config::{SearchConfig, UNLIMITED};
use super::pruned::{PruneState, Pruned};

/// Actions whose values lie within this of the best count as tied.
pub const TIE_EPSILON: f64 = 1e-9;

/// The outcome of one searched decision.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decision {
    /// Index of the chosen action in canonical order.
    pub index: usize,
    /// The chosen action: the first in canonical order whose value lies
    /// within [`TIE_EPSILON`] of the best.
    pub action: Action,
    /// Its (average) value: the expected change of score_diff from here on.
    pub value: f64,
    /// Positions valued at the root: actions x worlds. Unlike the nodes the
    /// search expands, this does not depend on what the table already held.
    pub evaluations: u64,
    /// The best value among the other actions (`None` with a single action).
    pub best_other: Option<f64>,
}

/// What the player sees under partial observation: its own hand, the board,
/// and the number of tiles it cannot see that the target holds.
#[derive(Clone, Copy, Debug)]
pub struct PlayerView {
    /// The player's own hand.
    pub hand: TileSet,
    /// The line of play.
    pub board: Board,
    /// Tiles the player cannot see: the target's hand and the boneyard together.
    pub unseen: TileSet,
    /// Number of tiles in the target's hand; the rest of `unseen` is the boneyard.
    pub target_size: u32,
    /// 1 if the previous turn was a pass, else 0 (as [`Position::passes`]).
    pub passes: u8,
    /// Tiles the target has shown it cannot hold (it drew or passed with
    /// none matching the open ends); used by [`Belief::Constraints`].
    pub target_void: TileSet,
}

impl PlayerView {
    /// The player's view of a position.
    pub fn of(pos: &Position) -> PlayerView {
        PlayerView {
            hand: pos.hands[Seat::Player as usize],
            board: pos.board,
            unseen: pos.hands[Seat::Target as usize] | pos.boneyard,
            target_size: pos.hands[Seat::Target as usize].count_ones(),
            passes: pos.passes,
            target_void: 0,
        }
    }
}

/// A searcher: the rules, a value store, and reusable scratch space.
#[derive(Debug)]
pub struct Searcher<S> {
    rules: Rules,
    store: S,
    config: SearchConfig,
    nodes: u64,
    worlds: Worlds,
    values: Vec<f64>,
    /// Whether the search prunes (alpha-beta and Star1); off by default.
    prune: bool,
    /// What the pruned search keeps between searches.
    pruned: PruneState,
}

impl<S: ValueStore> Searcher<S> {
    /// A searcher over `store`, which must only ever hold values of these rules.
    pub fn new(rules: Rules, config: SearchConfig, store: S) -> Searcher<S> {
        let pruned = PruneState::new(&rules);
        Searcher {
            rules,
            store,
            config,
            nodes: 0,
            worlds: Worlds::default(),
            values: Vec::with_capacity(64),
            prune: false,
            pruned,
        }
    }

    /// Turns pruning on or off (off by default). Pruning never changes a
    /// value or a decision, and the table still only ever holds exact values
    /// (so pruned and unpruned searches may share one); only the nodes
    /// expanded change, usually far fewer. See [`Self::with_pruning`].
    pub fn set_pruning(&mut self, on: bool) {
        self.prune = on;
    }

    /// Where partial observation's worlds come from from now on (the table
    /// holds values of positions, which no belief changes).
    pub fn set_belief(&mut self, belief: Belief) {
        self.config.belief = belief;
    }

    /// This searcher with pruning on or off: below the root, values are
    /// searched with an alpha-beta window (alpha-beta at the player's and the
    /// Expectimax target's decisions, Ballard's Star1 at draws and at the
    /// M*(random) target's uniform average, the window passed through at the
    /// deterministic M* targets). Every root action of a decision is still
    /// searched with the full window, so decisions carry the exact value of
    /// every action.
    pub fn with_pruning(mut self, on: bool) -> Searcher<S> {
        self.prune = on;
        self
    }

    /// Whether this searcher prunes.
    pub fn pruning(&self) -> bool {
        self.prune
    }

    /// The rules this searcher plays by.
    pub fn rules(&self) -> &Rules {
        &self.rules
    }
    /// The settings of this searcher's decisions.
    pub fn config(&self) -> &SearchConfig {
        &self.config
    }
    /// The value store (e.g. to ask how many values it holds).
    pub fn store(&self) -> &S {
        &self.store
    }
    /// Gives the store back, to keep its values for another searcher.
    pub fn into_store(self) -> S {
        self.store
    }
    /// Positions expanded (table misses) since this searcher was made; when
    /// pruning, not counting those its bounds settled without expanding.
    pub fn nodes(&self) -> u64 {
        self.nodes
    }
    /// The values of the actions at the last decision, in canonical order.
    pub fn last_values(&self) -> &[f64] {
        &self.values
    }

    /// The expected final-score-difference change from `pos` on, under `kind`.
    pub fn value_of(&mut self, pos: &Position, kind: EngineKind) -> f64 {
        self.value(pos, kind, self.config.depth.code())
    }

    /// The player's decision under full observation.
    pub fn decide_full(&mut self, pos: &Position, kind: EngineKind) -> Decision {
        self.decide_full_mix(pos, &[(kind, 1.0)])
    }

    /// The player's decision under full observation against a mixture of
    /// models: each action is worth the weighted sum of its values under each
    /// engine kind (weights summing to 1).
    pub fn decide_full_mix(&mut self, pos: &Position, mix: &[(EngineKind, f64)]) -> Decision {
        debug_assert_eq!(pos.mover, Seat::Player);
        let mut list = ActionList::default();
        pos.actions(&self.rules, &mut list);
        let depth = self.config.depth.code();
        self.values.clear();
        for &a in list.as_slice() {
            let mut v = 0.0;
            for &(kind, w) in mix {
                if w > 0.0 {
                    v += w * self.after(pos, a, kind, depth);
                }
            }
            self.values.push(v);
        }
        self.pick(&list, 1)
    }

    /// The player's decision under partial observation: every action is valued
    /// in every world by the full-observation search, and the weighted averages
    /// compared. `rng` is drawn from only when worlds are sampled.
    pub fn decide_partial(&mut self, view: &PlayerView, kind: EngineKind, rng: &mut impl RngCore) -> Decision {
        self.decide_partial_mix(view, &[(kind, 1.0)], rng)
    }

    /// [`Self::decide_partial`] against a mixture of models (see [`Self::decide_full_mix`]).
    pub fn decide_partial_mix(
        &mut self,
        view: &PlayerView,
        mix: &[(EngineKind, f64)],
        rng: &mut impl RngCore,
    ) -> Decision {
        let rules = &self.rules;
        let mut list = ActionList::default();
        let probe = Position {
            hands: [view.hand, 0],
            boneyard: 0,
            board: view.board,
            mover: Seat::Player,
            passes: view.passes,
        };
        probe.actions(rules, &mut list);
        let mut worlds = std::mem::take(&mut self.worlds);
        worlds.fill(
            rules,
            Unseen {
                tiles: view.unseen,
                target_size: view.target_size,
                void: view.target_void,
            },
            self.config.worlds,
            self.config.belief,
            rng,
        );
        let depth = self.config.depth.code();
        let n = list.len();
        let mut acc = [0.0f64; 64];
        let mut total_weight = 0.0;
        for w in worlds.as_slice() {
            let pos = Position {
                hands: [view.hand, w.target],
                boneyard: w.boneyard,
                board: view.board,
                mover: Seat::Player,
                passes: view.passes,
            };
            for (i, &a) in list.as_slice().iter().enumerate() {
                for &(kind, m) in mix {
                    if m > 0.0 {
                        acc[i] += w.weight * m * self.after(&pos, a, kind, depth);
                    }
                }
            }
            total_weight += w.weight;
        }
        let n_worlds = worlds.as_slice().len() as u64;
        self.worlds = worlds;
        self.values.clear();
        self.values.extend(acc[..n].iter().map(|v| v / total_weight));
        self.pick(&list, n_worlds)
    }

    fn pick(&self, list: &ActionList, worlds: u64) -> Decision {
        let best = self.values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let index = self
            .values
            .iter()
            .position(|&v| v >= best - TIE_EPSILON)
            .expect("a decision has at least one action");
        let best_other = (self.values.iter().enumerate())
            .filter(|&(i, _)| i != index)
            .map(|(_, &v)| v)
            .reduce(f64::max);
        Decision {
            index,
            action: list.as_slice()[index],
            value: self.values[index],
            evaluations: list.len() as u64 * worlds,
            best_other,
        }
    }

    /// Value of playing `a` at `pos`: its reward plus the value of what follows.
    #[inline]
    fn after(&mut self, pos: &Position, a: Action, kind: EngineKind, depth: u8) -> f64 {
        let mut child = *pos;
        let step = child.play(&self.rules, a);
        step.reward as f64
            + if step.terminal {
                0.0
            } else {
                self.below(&child, kind, depth)
            }
    }

    /// Value of the position a turn later: a leaf when the depth runs out.
    #[inline]
    fn below(&mut self, child: &Position, kind: EngineKind, depth: u8) -> f64 {
        match depth {
            UNLIMITED => self.value(child, kind, UNLIMITED),
            1 => 0.0,
            d => self.value(child, kind, d - 1),
        }
    }

    fn value(&mut self, pos: &Position, kind: EngineKind, depth: u8) -> f64 {
        if self.prune {
            return Pruned::new(&self.rules, &mut self.store, &mut self.nodes, &mut self.pruned, kind)
                .value(pos, depth);
        }
        let key = Key::new(pos, kind, depth);
        if let Some(v) = self.store.get(&key) {
            return v;
        }
        self.nodes += 1;
        let v = self.expand(pos, kind, depth);
        self.store.insert(key, v);
        v
    }

    fn expand(&mut self, pos: &Position, kind: EngineKind, depth: u8) -> f64 {
        let mut list = ActionList::default();
        pos.actions(&self.rules, &mut list);
        let acts = list.as_slice();
        match acts.len() {
            0 if pos.boneyard != 0 => {
                // A chance node: each boneyard tile is equally likely to be drawn.
                let mut sum = 0.0;
                for t in bits(pos.boneyard) {
                    let mut c = *pos;
                    c.draw(t);
                    sum += self.value(&c, kind, depth);
                }
                sum / pos.boneyard.count_ones() as f64
            }
            0 => {
                let mut c = *pos;
                let step = c.pass(&self.rules);
                step.reward as f64
                    + if step.terminal {
                        0.0
                    } else {
                        self.below(&c, kind, depth)
                    }
            }
            1 => self.after(pos, acts[0], kind, depth),
            n => match (pos.mover, kind) {
                (Seat::Player, _) => {
                    let mut best = f64::NEG_INFINITY;
                    for &a in acts {
                        best = best.max(self.after(pos, a, kind, depth));
                    }
                    best
                }
                (Seat::Target, EngineKind::Expectimax) => {
                    let mut best = f64::INFINITY;
                    for &a in acts {
                        best = best.min(self.after(pos, a, kind, depth));
                    }
                    best
                }
                (Seat::Target, EngineKind::MStar(TargetKind::Random)) => {
                    let mut sum = 0.0;
                    for &a in acts {
                        sum += self.after(pos, a, kind, depth);
                    }
                    sum / n as f64
                }
                (Seat::Target, EngineKind::MStar(model)) => {
                    let i = target_choice(&self.rules, model, pos, acts).expect("deterministic model");
                    self.after(pos, acts[i], kind, depth)
                }
            },
        }
    }
}
