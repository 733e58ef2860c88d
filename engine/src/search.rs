//! Expectimax and M* over chance nodes, with a transposition table of
//! full-information values, and the player's decisions under full and partial
//! observation (RULES.md section 5).

use rand_core::RngCore;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::board::{Board, Loc};
use crate::position::{Action, ActionList, Position, Seat};
use crate::rules::{Blocked, MAX_SET, Rules};
use crate::table::{DEFAULT_TABLE_CAP, Key, ValueStore};
use crate::targets::{EngineKind, TargetKind, target_choice};
use crate::tiles::{TileSet, bit, bits};
use crate::worlds::{Belief, WorldCount, Worlds};

/// Actions whose values lie within this of the best count as tied.
pub const TIE_EPSILON: f64 = 1e-9;

/// How far the search looks ahead.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DepthLimit {
    /// To the end of the game (the default).
    #[default]
    Unlimited,
    /// This many turns (plays and passes; draws are free), 1 to 254. A leaf's
    /// value is the score difference so far.
    Turns(u8),
}

impl DepthLimit {
    fn code(self) -> u8 {
        match self {
            DepthLimit::Unlimited => UNLIMITED,
            DepthLimit::Turns(n) => n.clamp(1, UNLIMITED - 1),
        }
    }
}

const UNLIMITED: u8 = u8::MAX;

/// `unlimited`, or a number of turns from 1 to 254; the error says what is
/// expected (the caller names the key or flag).
impl std::str::FromStr for DepthLimit {
    type Err = String;
    fn from_str(s: &str) -> Result<DepthLimit, String> {
        if s == "unlimited" {
            return Ok(DepthLimit::Unlimited);
        }
        match s.parse::<u8>() {
            Ok(n) if (1..UNLIMITED).contains(&n) => Ok(DepthLimit::Turns(n)),
            _ => Err(format!(
                "expected \"unlimited\" or a number of turns from 1 to {}",
                UNLIMITED - 1
            )),
        }
    }
}

/// Search settings for the player's decisions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SearchConfig {
    /// How many worlds a partial-observation decision values (default: every split).
    pub worlds: WorldCount,
    /// The weight of each world (default: uniform).
    pub belief: Belief,
    /// How far each search looks ahead (default: to the end of the game).
    pub depth: DepthLimit,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            worlds: WorldCount::All,
            belief: Belief::Uniform,
            depth: DepthLimit::Unlimited,
        }
    }
}

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
    /// Per tile: the most it can add to the count as the outermost tile of an
    /// end once the board holds a tile (2p for the double (p|p), else its
    /// high pip).
    end_value: [u8; 64],
    /// Per tile: its pip sum (what it adds to the count as the lead, and to a
    /// hand's pips).
    lead_value: [u8; 64],
    /// Per tile: its two pips as a bit mask over pips.
    pip_mask: [u32; 64],
    /// Per set of pips (a bit mask): the tiles showing any of them.
    reach: Box<[TileSet]>,
    /// The double (p|p) of each pip, as a tile set of one.
    double_of: [TileSet; MAX_SET as usize + 1],
    /// Bounds (lower, upper) proven by pruned searches that failed low or
    /// high, by key: never values, so they stay out of the store.
    proven: FxHashMap<Key, (f64, f64)>,
    /// Scratch lists of children, one per level of the pruned search.
    kids: Vec<Vec<Kid>>,
}

impl<S: ValueStore> Searcher<S> {
    /// A searcher over `store`, which must only ever hold values of these rules.
    pub fn new(rules: Rules, config: SearchConfig, store: S) -> Searcher<S> {
        let mut end_value = [0u8; 64];
        let mut lead_value = [0u8; 64];
        let mut pip_mask = [0u32; 64];
        let mut double_of = [0; MAX_SET as usize + 1];
        for t in 0..rules.tile_count() {
            let (a, b) = rules.pips(t);
            end_value[t as usize] = if a == b { 2 * a } else { b };
            lead_value[t as usize] = a + b;
            pip_mask[t as usize] = 1 << a | 1 << b;
            if a == b {
                double_of[a as usize] = bit(t);
            }
        }
        let pips = rules.config().set as usize + 1;
        let reach = (0..1usize << pips)
            .map(|mask| {
                (0..pips as u8)
                    .filter(|&p| mask & 1 << p != 0)
                    .fold(0, |acc, p| acc | rules.with_pip(p))
            })
            .collect();
        Searcher {
            rules,
            store,
            config,
            nodes: 0,
            worlds: Worlds::default(),
            values: Vec::with_capacity(64),
            prune: false,
            end_value,
            lead_value,
            pip_mask,
            reach,
            double_of,
            proven: FxHashMap::default(),
            kids: Vec::new(),
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
            view.unseen,
            view.target_size,
            self.config.worlds,
            self.config.belief,
            view.target_void,
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
            return self.value_ab(pos, kind, depth, f64::NEG_INFINITY, f64::INFINITY);
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

// The pruned search (`Searcher::set_pruning`).
//
// Contract. `search_ab(pos, kind, depth, alpha, beta)` (alpha < beta)
// returns (v, exact), where t is the value the unpruned search computes for
// the same key, bit for bit:
//   (a) v <= alpha: v is an upper bound, t <= v;
//   (b) v >= beta: v is a lower bound, t >= v;
//   (c) alpha < v < beta: v == t;
// and `exact` says v == t whatever the window: a table hit, a value pinned by
// its bounds, or one computed without cutting anything off (every child
// exact), which is the very computation the full window makes. With the full
// window the result is always t. Only exact values enter the table (those
// strictly inside their window, and those computed as with the full window),
// so a hit is exact under any window, pruned and unpruned searches can share
// a table, and results never depend on what it held. A failed search's
// bound goes to `proven`, never to the table. A child's candidate (`search_kid`:
// the reward of a play or pass plus the child's value, or a drawn child's
// value) keeps the same contract for the window its parent gives it.
//
// Correctness. At the player's decision searched with (alpha, beta), child i
// is searched with (max(alpha, best so far), beta). Take j, the first child
// reaching the returned maximum v. If alpha < v < beta, child j was strictly
// inside its window, hence exact, and every other child is at most v, either
// exactly or as an upper bound at most its window's low end, itself at most
// v: so v == t. If v <= alpha, every child is bounded above by its result,
// at most v. If v >= beta, child j is a lower bound. The Expectimax target's
// decision mirrors this. At a node worth the uniform average of its children
// (a draw, or the M*(random) target's plays: Ballard's Star1), the children
// are summed in canonical order, as the unpruned search sums them; with every
// child known to lie in [lo_i, hi_i], child j's window (a_j, b_j) is such that
// the node's value with child j at a_j and every later child at its hi is at
// most alpha (and with child j at b_j and the later ones at their lo, at
// least beta). A child failing low (high) thus proves the node at most (at
// least) the value it gives with the later children at their hi (lo), which
// is returned; an exact child joins the sum. A single child (one legal play,
// a pass, or the deterministic M* target's pick) passes the window through,
// shifted by its reward.
//
// Floating point. Rounding is monotone: `x + y` and `x / n` (n > 0) never
// decrease when x or y grows. So a bound on a child bounds every value the
// unpruned code computes from it, in its own order of operations, which is
// kept. Windows shifted by a reward r (`shift_down`, `shift_up`) and Star1's
// windows (`widest`) are rounded outward until `r + bound`, or the node's
// value with the child at its bound, lands on the right side of the parent's
// bound, so no comparison is decided by a rounding error. Maxima, minima and
// picks are exact in any order, so decisions may reorder their children.
//
// Bounds. `hull` bounds a position's values from its children, `rough` by
// formula. Both give integers L <= U (never -0.0) such that every value of
// the position, under any engine kind and any depth limit of at least one
// turn, lies in [L, U]. `rough` bounds the reward sum of every prefix of
// every continuation (a depth-limited leaf is worth 0, so 0 is inside); a
// value is a max, min, pick or average of such sums, and so lies inside as a
// float too: adding an integer reward to a value in [L', U'] stays in
// [r + L', r + U'] (exact integers, monotone rounding), maxima, minima and
// picks stay inside, and an average of k floats in [L, U] stays inside (its
// partial sums are bounded by the exact integers j * L and j * U). Rewards:
// - Count points, to the mover of a play: 0, or the count after the play
//   when it is a positive multiple of 5. A tile is live when it may still be
//   played: it shows a pip exposed now, or a pip of another live tile (a
//   closure from the exposed pips; every tile, on an empty board). Dead tiles
//   stay in a hand, or are drawn into one, to the end. At most n plays are
//   left, n the number of live tiles, and a seat makes at most as many as
//   the live tiles of its hand and of the boneyard. The count is the sum of
//   at most four ends (Left, Right, and Up and Down once played on). At any
//   later time, an end is either unchanged since now, worth what it is worth
//   now (2p if its outermost tile is the double (p|p), else p; so at most p
//   while (p|p) is still in a hand or the boneyard, at most 2p otherwise), or
//   its outermost tile is a live tile played since, worth at most 2p for
//   (p|p) and its high pip otherwise (on an empty board, its pip sum: the
//   lead counts both halves alone, then its two sides, worth that together).
//   Distinct ends have distinct outermost tiles, so the count never exceeds
//   C, the sum of the four largest of these items. Besides, after k more
//   plays at most min(k, 4) ends have changed, each from at least its least
//   value now (Left and Right: their exposed pip, or 2p each for the sides
//   of a lone double, whose count is then taken as 4p since each side counts
//   2p once the other is covered; Up and Down: 0) to at most the value of a
//   distinct live tile: the count after the k-th play is at most the count
//   now plus the best sum over j <= min(k, 4) of (j-th largest live tile
//   value - j-th least end value). The cap of the k-th play is the lesser of
//   the two, rounded down to a multiple of 5. Caps grow with k, so a seat
//   with m plays left scores at most the caps of plays n - m + 1 ..= n.
// - The end of the game, at most once. A domino by the player adds the pips
//   of the target's last hand, at most those of the target's hand and the
//   boneyard, and is impossible while the player holds a dead tile; a domino
//   by the target mirrors this. A blocked game under `difference` gives the
//   target's pips minus the player's, at most pips(target hand + boneyard)
//   minus the player's dead pips (it keeps its dead tiles) and at least the
//   target's dead pips minus pips(player hand + boneyard); under `none`, 0.
//   A game cut off by the depth limit gives 0.
// So U = (the player's most count points) + max(0, its best ending), L =
// -(the target's most count points) + min(0, its worst ending). When the
// mover holds a single tile it can play, it must play it and the game ends
// there: [L, U] is the range of that play's rewards instead. `hull` takes,
// over the children a node's value is made of, the range of reward +
// `rough` of the child (the reward alone when the play or pass ends the game
// or the depth limit cuts in), and `rough` of the position itself at a
// chance node; the bounds proven by failed searches narrow it further.
impl<S: ValueStore> Searcher<S> {
    fn value_ab(&mut self, pos: &Position, kind: EngineKind, depth: u8, alpha: f64, beta: f64) -> f64 {
        self.search_ab(pos, kind, depth, alpha, beta).0
    }

    /// The value under the window (the contract above), and whether it is exact.
    fn search_ab(&mut self, pos: &Position, kind: EngineKind, depth: u8, alpha: f64, beta: f64) -> (f64, bool) {
        let key = Key::new(pos, kind, depth);
        match self.store.get(&key) {
            Some(v) => (v, true),
            None => self.search_miss(pos, key, kind, depth, alpha, beta, None),
        }
    }

    /// [`Self::search_ab`] of a position the table does not hold, whose
    /// bounds may be known already.
    #[allow(clippy::too_many_arguments)]
    fn search_miss(
        &mut self,
        pos: &Position,
        key: Key,
        kind: EngineKind,
        depth: u8,
        alpha: f64,
        beta: f64,
        known: Option<(f64, f64)>,
    ) -> (f64, bool) {
        let mut kids = self.kids.pop().unwrap_or_default();
        let node = self.children(pos, kind, depth, &mut kids);
        let (lo, hi) = match known {
            Some(b) => b,
            None => {
                let (mut lo, mut hi) = self.hull(pos, node, &kids);
                if let Some(&(l, h)) = self.proven.get(&key) {
                    lo = lo.max(l);
                    hi = hi.min(h);
                }
                (lo, hi)
            }
        };
        let result = if lo == hi {
            // Pinned: t is this very float (bounds are never -0.0).
            (lo, true)
        } else if hi <= alpha {
            (hi, false)
        } else if lo >= beta {
            (lo, false)
        } else {
            self.nodes += 1;
            let (v, exact) = self.expand_ab(node, &mut kids, kind, alpha, beta);
            let exact = exact || (alpha < v && v < beta);
            debug_assert!(
                !exact || (lo <= v && v <= hi),
                "{pos:?}: {v} outside its bounds [{lo}, {hi}]"
            );
            if exact {
                self.store.insert(key, v);
            } else {
                if self.proven.len() >= DEFAULT_TABLE_CAP {
                    self.proven.clear();
                }
                let e = self.proven.entry(key).or_insert((f64::NEG_INFINITY, f64::INFINITY));
                if v <= alpha {
                    e.1 = e.1.min(v);
                } else {
                    e.0 = e.0.max(v);
                }
            }
            (v, exact)
        };
        self.kids.push(kids);
        result
    }

    /// The children of `pos` into `kids` (positions and rewards only), and
    /// what kind of node it is.
    fn children(&self, pos: &Position, kind: EngineKind, depth: u8, kids: &mut Vec<Kid>) -> Node {
        kids.clear();
        let mut list = ActionList::default();
        pos.actions(&self.rules, &mut list);
        let acts = list.as_slice();
        if acts.is_empty() {
            if pos.boneyard != 0 {
                for t in bits(pos.boneyard) {
                    let mut c = *pos;
                    c.draw(t);
                    kids.push(Kid::new(c, None, false, depth));
                }
                return Node::Average;
            }
            let mut c = *pos;
            let step = c.pass(&self.rules);
            kids.push(Kid::new(
                c,
                Some(step.reward),
                step.terminal || depth == 1,
                next_depth(depth),
            ));
            return Node::Single;
        }
        let choice = match (pos.mover, kind) {
            (Seat::Target, EngineKind::MStar(model)) if model != TargetKind::Random && acts.len() > 1 => {
                target_choice(&self.rules, model, pos, acts)
            }
            _ => None,
        };
        for (i, &a) in acts.iter().enumerate() {
            if choice.is_some_and(|c| c != i) {
                continue;
            }
            let mut c = *pos;
            let step = c.play(&self.rules, a);
            kids.push(Kid::new(
                c,
                Some(step.reward),
                step.terminal || depth == 1,
                next_depth(depth),
            ));
        }
        match (kids.len(), pos.mover, kind) {
            (1, _, _) => Node::Single,
            (_, Seat::Player, _) => Node::Max,
            (_, Seat::Target, EngineKind::Expectimax) => Node::Min,
            // The M*(random) target: the uniform average of its plays.
            _ => Node::Average,
        }
    }

    /// Bounds on the value of `pos` (see above) from its children: the hull
    /// of their candidates' bounds by [`Self::rough`], and `rough` of `pos`
    /// itself at a chance node.
    fn hull(&self, pos: &Position, node: Node, kids: &[Kid]) -> (f64, f64) {
        if node == Node::Average && kids[0].reward.is_none() {
            return self.rough(pos);
        }
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for k in kids {
            let (l, h) = if k.leaf { (0.0, 0.0) } else { self.rough(&k.pos) };
            lo = lo.min(k.candidate(l));
            hi = hi.max(k.candidate(h));
        }
        (lo, hi)
    }

    /// Bounds on the value of a child not in the table (its `hull` and proven bounds).
    fn known(&mut self, kid: &Kid, kind: EngineKind) -> (f64, f64) {
        let mut grandkids = self.kids.pop().unwrap_or_default();
        let node = self.children(&kid.pos, kind, kid.depth, &mut grandkids);
        let (mut lo, mut hi) = self.hull(&kid.pos, node, &grandkids);
        self.kids.push(grandkids);
        if let Some(&(l, h)) = kid.key.and_then(|key| self.proven.get(&key)) {
            lo = lo.max(l);
            hi = hi.min(h);
        }
        (lo, hi)
    }

    /// Searches a node whose children `children` listed.
    fn expand_ab(&mut self, node: Node, kids: &mut [Kid], kind: EngineKind, alpha: f64, beta: f64) -> (f64, bool) {
        if node == Node::Single {
            return self.search_kid(&kids[0], kind, alpha, beta);
        }
        let bound = node == Node::Average && (alpha > f64::NEG_INFINITY || beta < f64::INFINITY);
        for k in kids.iter_mut() {
            if k.leaf {
                continue;
            }
            let key = Key::new(&k.pos, kind, k.depth);
            k.key = Some(key);
            if let Some(v) = self.store.get(&key) {
                (k.lo, k.hi) = (v, v);
            } else if bound {
                let (lo, hi) = self.known(k, kind);
                (k.lo, k.hi, k.bounded) = (lo, hi, true);
            }
        }
        match node {
            Node::Max => self.max_ab(kids, kind, alpha, beta),
            Node::Min => self.min_ab(kids, kind, alpha, beta),
            _ => self.star_ab(kids, kind, alpha, beta),
        }
    }

    /// Searches a child not known exactly: its candidate under the window.
    fn search_kid(&mut self, kid: &Kid, kind: EngineKind, alpha: f64, beta: f64) -> (f64, bool) {
        if kid.leaf {
            return (kid.candidate(0.0), true);
        }
        let (a, b) = match kid.reward {
            None => (alpha, beta),
            Some(r) => (shift_down(alpha, r as f64), shift_up(beta, r as f64)),
        };
        let (v, exact) = match kid.key {
            _ if kid.exact() => (kid.lo, true),
            // The table was asked already.
            Some(key) => self.search_miss(
                &kid.pos,
                key,
                kind,
                kid.depth,
                a,
                b,
                kid.bounded.then_some((kid.lo, kid.hi)),
            ),
            None => self.search_ab(&kid.pos, kind, kid.depth, a, b),
        };
        (kid.candidate(v), exact)
    }

    /// Alpha-beta at the player's decision: children known exactly first,
    /// then the rest by immediate reward, highest first.
    fn max_ab(&mut self, kids: &[Kid], kind: EngineKind, alpha: f64, beta: f64) -> (f64, bool) {
        let order = ordered(kids, |k| -k.reward.unwrap_or(0));
        let mut best = f64::NEG_INFINITY;
        let mut exact = true;
        for (n, &i) in (1..).zip(&order[..kids.len()]) {
            let k = &kids[i as usize];
            let (x, e) = if k.exact() {
                (k.candidate(k.lo), true)
            } else {
                self.search_kid(k, kind, alpha.max(best), beta)
            };
            exact &= e;
            best = best.max(x);
            if best >= beta {
                return (best, exact && n == kids.len());
            }
        }
        (best, exact)
    }

    /// Alpha-beta at the Expectimax target's decision (lowest reward first).
    fn min_ab(&mut self, kids: &[Kid], kind: EngineKind, alpha: f64, beta: f64) -> (f64, bool) {
        let order = ordered(kids, |k| k.reward.unwrap_or(0));
        let mut best = f64::INFINITY;
        let mut exact = true;
        for (n, &i) in (1..).zip(&order[..kids.len()]) {
            let k = &kids[i as usize];
            let (x, e) = if k.exact() {
                (k.candidate(k.lo), true)
            } else {
                self.search_kid(k, kind, alpha, beta.min(best))
            };
            exact &= e;
            best = best.min(x);
            if best <= alpha {
                return (best, exact && n == kids.len());
            }
        }
        (best, exact)
    }

    /// Star1 at a node worth the uniform average of its children.
    fn star_ab(&mut self, kids: &[Kid], kind: EngineKind, alpha: f64, beta: f64) -> (f64, bool) {
        let n = kids.len();
        let hi = |k: &Kid| k.candidate(k.hi);
        let lo = |k: &Kid| k.candidate(k.lo);
        let mut sum = 0.0;
        let mut exact = true;
        for j in 0..n {
            let k = &kids[j];
            if k.exact() {
                sum += k.candidate(k.lo);
                continue;
            }
            let rest = &kids[j + 1..];
            let a = if alpha == f64::NEG_INFINITY {
                alpha
            } else {
                let top = fill(sum, hi(k), rest, hi, n);
                if top <= alpha {
                    return (top, false);
                }
                let guess = alpha * n as f64 - sum - rest.iter().map(hi).sum::<f64>();
                widest(guess, f64::NEG_INFINITY, |a| fill(sum, a, rest, hi, n) <= alpha)
            };
            let b = if beta == f64::INFINITY {
                beta
            } else {
                let bottom = fill(sum, lo(k), rest, lo, n);
                if bottom >= beta {
                    return (bottom, false);
                }
                let guess = beta * n as f64 - sum - rest.iter().map(lo).sum::<f64>();
                widest(guess, f64::INFINITY, |b| fill(sum, b, rest, lo, n) >= beta)
            };
            let (x, e) = self.search_kid(k, kind, a, b);
            exact &= e;
            if !e && x <= a {
                // The child is at most x: the node at most fill(x) <= fill(a) <= alpha.
                return (fill(sum, x, rest, hi, n), false);
            }
            if !e && x >= b {
                return (fill(sum, x, rest, lo, n), false);
            }
            sum += x;
        }
        (sum / n as f64, exact)
    }

    /// Bounds on every value of `pos`, any depth, by formula (see above).
    fn rough(&self, pos: &Position) -> (f64, f64) {
        let rules = &self.rules;
        let [player, target] = pos.hands;
        let rest = player | target | pos.boneyard;
        let board = &pos.board;
        let mover = pos.hands[pos.mover as usize];
        if mover.count_ones() == 1 && !board.is_empty() {
            // A single tile the mover can play ends the game now.
            let tile = mover.trailing_zeros() as u8;
            let (a, b) = rules.pips(tile);
            let (mut lo, mut hi) = (i32::MAX, i32::MIN);
            for &loc in &Loc::ALL[..board.open_locations()] {
                let p = board.exposed(loc).unwrap_or(0);
                if p == a || p == b {
                    let mut c = *pos;
                    let r = c.play(rules, Action { tile, loc }).reward;
                    lo = lo.min(r);
                    hi = hi.max(r);
                }
            }
            if lo <= hi {
                return (lo as f64, hi as f64);
            }
        }
        let live = if board.is_empty() {
            rest
        } else {
            let mut pips = 0u32;
            for &loc in &Loc::ALL[..board.open_locations()] {
                pips |= 1 << board.exposed(loc).unwrap_or(0);
            }
            let mut live = 0;
            loop {
                let reach = self.reach[pips as usize] & rest;
                if reach == live {
                    break live;
                }
                for t in bits(reach & !live) {
                    pips |= self.pip_mask[t as usize];
                }
                live = reach;
            }
        };
        // The four largest items, and the four largest live tile values.
        let mut items = [0u32; 4];
        let mut tiles = [0u32; 4];
        if board.is_empty() {
            for t in bits(live) {
                push_top(&mut items, self.lead_value[t as usize] as u32);
            }
        } else {
            for t in bits(live) {
                let v = self.end_value[t as usize] as u32;
                push_top(&mut items, v);
                push_top(&mut tiles, v);
            }
            for &loc in &Loc::ALL[..board.open_locations()] {
                let p = board.exposed(loc).unwrap_or(0) as u32;
                let double_played = self.double_of[p as usize] & rest == 0;
                push_top(&mut items, if double_played { 2 * p } else { p });
            }
        }
        let items: u32 = items.iter().sum();
        // cap[k]: the count after the (k + 1)-th play from now is at most this.
        let mut cap = [items; 4];
        if !board.is_empty() {
            let l = board.exposed(Loc::Left).unwrap_or(0) as i32;
            let r = board.exposed(Loc::Right).unwrap_or(0) as i32;
            let (now, least_l, least_r) = match board.tile_count() {
                1 if l == r => (4 * l, 2 * l, 2 * l),
                1 => (l + r, l, r),
                _ => (board.count() as i32, l, r),
            };
            let least = [0, 0, least_l.min(least_r), least_l.max(least_r)];
            let (mut sum, mut best) = (now, now);
            for k in 0..4 {
                sum += tiles[k] as i32 - least[k];
                best = best.max(sum);
                cap[k] = cap[k].min(best as u32);
            }
        }
        let cap = cap.map(|c| (c / 5 * 5) as i32);
        let n = live.count_ones();
        let points = |seat: TileSet| -> i32 {
            let plays = ((seat | pos.boneyard) & live).count_ones();
            // The caps of plays n - plays + 1 ..= n; from the fourth on, cap[3].
            let first = n + 1 - plays;
            let early: i32 = (first..=n.min(3)).map(|k| cap[k as usize - 1]).sum();
            early + (n + 1).saturating_sub(first.max(4)) as i32 * cap[3]
        };
        let pips = |set: TileSet| -> i32 { bits(set).map(|t| self.lead_value[t as usize] as i32).sum() };
        let (pp, pt, pb) = (pips(player), pips(target), pips(pos.boneyard));
        let dead = rest & !live;
        let mut best_end = 0;
        let mut worst_end = 0;
        if player & dead == 0 {
            best_end = pt + pb;
        }
        if target & dead == 0 {
            worst_end = -(pp + pb);
        }
        if rules.config().blocked == Blocked::Difference {
            best_end = best_end.max(pt + pb - pips(player & dead));
            worst_end = worst_end.min(pips(target & dead) - (pp + pb));
        }
        let up = points(player) + best_end;
        let down = points(target) - worst_end;
        // 0.0 - down, not -down: never -0.0.
        (0.0 - down as f64, up as f64)
    }
}

/// The remaining depth of a child a turn later (`depth` above 1).
#[inline]
fn next_depth(depth: u8) -> u8 {
    if depth == UNLIMITED { UNLIMITED } else { depth - 1 }
}

/// What a node of the pruned search does with its children.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Node {
    /// One child: a single play, a pass, or the deterministic target's choice.
    Single,
    /// The player's decision.
    Max,
    /// The Expectimax target's decision.
    Min,
    /// The uniform average of the children: the draws of a chance node, or
    /// the plays of the M*(random) target.
    Average,
}

/// A child under the pruned search.
#[derive(Clone, Copy, Debug)]
struct Kid {
    pos: Position,
    /// Its table key, once the table was asked.
    key: Option<Key>,
    /// The reward of the play or pass leading to it; `None` for a draw,
    /// whose candidate is the child's value itself.
    reward: Option<i32>,
    /// Whether the game ends there or the depth limit cuts in: its value is 0.
    leaf: bool,
    /// The child's remaining depth.
    depth: u8,
    /// Bounds on the child's value (not yet the candidate); equal when it is
    /// known exactly.
    lo: f64,
    hi: f64,
    /// Whether `lo` and `hi` were computed (else they are infinite, or exact).
    bounded: bool,
}

impl Kid {
    fn new(pos: Position, reward: Option<i32>, leaf: bool, depth: u8) -> Kid {
        let (lo, hi) = if leaf {
            (0.0, 0.0)
        } else {
            (f64::NEG_INFINITY, f64::INFINITY)
        };
        Kid {
            pos,
            key: None,
            reward,
            leaf,
            depth,
            lo,
            hi,
            bounded: false,
        }
    }
    #[inline]
    fn exact(&self) -> bool {
        self.lo == self.hi
    }
    /// The candidate for a value `v` of the child, computed as the unpruned
    /// search does: the value itself after a draw, else reward + value.
    #[inline]
    fn candidate(&self, v: f64) -> f64 {
        match self.reward {
            None => v,
            Some(r) => r as f64 + v,
        }
    }
}

/// The order in which to search `kids`: those known exactly first (they cost
/// nothing), then by `rank`; stable, so ties keep canonical order.
fn ordered(kids: &[Kid], rank: impl Fn(&Kid) -> i32) -> [u8; 64] {
    let mut order = [0u8; 64];
    let key = |k: &Kid| (!k.exact(), rank(k));
    for i in 0..kids.len() {
        let mut j = i;
        while j > 0 && key(&kids[order[j - 1] as usize]) > key(&kids[i]) {
            order[j] = order[j - 1];
            j -= 1;
        }
        order[j] = i as u8;
    }
    order
}

/// An average node's value, computed as the unpruned search does, if the
/// next child's candidate were `x` and each later one `bound(kid)`: monotone
/// in every argument.
#[inline]
fn fill(sum: f64, x: f64, rest: &[Kid], bound: impl Fn(&Kid) -> f64, n: usize) -> f64 {
    let mut s = sum + x;
    for k in rest {
        s += bound(k);
    }
    s / n as f64
}

/// From `guess`, the first value moving towards `give_up` (an infinity,
/// which `ok` accepts) one float at a time that `ok` accepts: guesses off by
/// a few roundings are corrected, and a wild one gives up on pruning.
fn widest(guess: f64, give_up: f64, ok: impl Fn(f64) -> bool) -> f64 {
    let mut x = guess;
    for _ in 0..64 {
        if ok(x) {
            return x;
        }
        x = if give_up < 0.0 { x.next_down() } else { x.next_up() };
    }
    give_up
}

/// A child window bound c with `r + c <= a` in floats, as large as rounding allows.
#[inline]
fn shift_down(a: f64, r: f64) -> f64 {
    if a.is_infinite() {
        return a;
    }
    let mut c = a - r;
    while r + c > a {
        c = c.next_down();
    }
    c
}

/// A child window bound c with `r + c >= b` in floats, as small as rounding allows.
#[inline]
fn shift_up(b: f64, r: f64) -> f64 {
    if b.is_infinite() {
        return b;
    }
    let mut c = b - r;
    while r + c < b {
        c = c.next_up();
    }
    c
}

/// Keeps the four largest values seen in `top`, largest first.
#[inline]
fn push_top(top: &mut [u32; 4], v: u32) {
    if v > top[3] {
        let mut i = 3;
        while i > 0 && top[i - 1] < v {
            top[i] = top[i - 1];
            i -= 1;
        }
        top[i] = v;
    }
}
