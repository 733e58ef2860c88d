//! DominAI's search: minimax with alpha-beta between the partnerships over
//! lines of play it imagines from its matrices, the depth growing with the
//! turn, for All-Fives and block positions alike.

use engine::Board;
use engine::TileSet;
use engine::{Action, ActionList};

use crate::belief::{HOLDERS, Observation};
use crate::fives::FivesPosition;
use crate::position::{FullAction, FullActions, FullPosition};
use crate::rules::{FullRules, MAX_SEATS};
use crate::search::{FULL_TIE_EPSILON, FullDecision};

use super::matrices::DominaiMatrices;

/// The table of a line: All Fives' board, or block's open ends.
#[derive(Clone, Copy, Debug)]
enum Table {
    Fives(Board),
    Block { ends: [u8; 4], open: u8 },
}

/// A move of a line: an All-Fives play, or a block play.
#[derive(Clone, Copy, Debug)]
enum Move {
    Fives(Action),
    Block(FullAction),
}

impl Move {
    fn tile(self) -> u8 {
        match self {
            Move::Fives(a) => a.tile,
            Move::Block(a) => a.tile,
        }
    }
}

/// A line of play as DominAI imagines it: the table, who holds how many
/// tiles, which tiles each other seat may hold (its own hand exactly),
/// the points each side made in the hand (All Fives).
#[derive(Clone, Copy, Debug)]
struct Line {
    table: Table,
    mover: u8,
    passes: u8,
    count: [u8; MAX_SEATS],
    possible: [TileSet; MAX_SEATS],
    points: [i64; MAX_SEATS],
    /// Set when the hand is over: the value for the searching side.
    over: Option<f64>,
}

/// Leaves: a hand won or lost ("+10 / -10").
const LEAF: f64 = 10.0;
/// Transit nodes: a state that favours the side, or not ("+1 / -1").
const TRANSIT: f64 = 1.0;

/// The most moves a line's node lists (a double-9 hand of 55 tiles on four
/// ends stays below this).
const MOVES: usize = 256;

struct Search<'a> {
    rules: &'a FullRules,
    side: u8,
    me: u8,
    /// Absolute probabilities of the root (per tile, per seat).
    prob: [[f64; HOLDERS]; 64],
    /// All Fives: the root position (its opening rule); block: unused.
    fives: Option<FivesPosition>,
    nodes: u64,
    limit: u64,
    stopped: bool,
    /// Whether the current iteration valued a node at its depth limit
    /// (if not, a deeper iteration would search the same tree).
    horizon: bool,
}

impl Search<'_> {
    /// The mover's moves with the tiles it may hold, in canonical order.
    fn moves(&self, line: &Line, out: &mut [Move; MOVES]) -> usize {
        let hand = line.possible[line.mover as usize];
        match line.table {
            Table::Fives(board) => {
                let mut p = self.fives.expect("an All-Fives line");
                p.board = board;
                p.mover = line.mover;
                p.hands[line.mover as usize] = hand;
                if !board.is_empty() {
                    p.forced = None;
                }
                p.end = None;
                let mut list = ActionList::default();
                p.actions(self.rules, &mut list);
                for (o, &a) in out.iter_mut().zip(list.as_slice()) {
                    *o = Move::Fives(a);
                }
                list.len().min(MOVES)
            }
            Table::Block { ends, open } => {
                let mut p = FullPosition::deal(self.rules, [0; MAX_SEATS]);
                p.ends = ends;
                p.open = open;
                p.mover = line.mover;
                p.hands[line.mover as usize] = hand;
                let mut list = FullActions::default();
                p.actions(self.rules, &mut list);
                for (o, &a) in out.iter_mut().zip(list.as_slice()) {
                    *o = Move::Block(a);
                }
                list.len().min(MOVES)
            }
        }
    }

    fn play(&self, line: &Line, mv: Move) -> Line {
        let mut l = *line;
        let me = l.mover as usize;
        match (&mut l.table, mv) {
            (Table::Fives(board), Move::Fives(a)) => {
                board.play(self.rules, a.tile, a.loc);
                let c = board.count();
                if c > 0 && c.is_multiple_of(5) {
                    l.points[self.rules.side(l.mover) as usize] += c as i64;
                }
            }
            (Table::Block { ends, open }, Move::Block(a)) => {
                let (p, q) = self.rules.pips(a.tile);
                if *open == 0 {
                    (ends[0], ends[1], *open) = (p, q, 2);
                } else {
                    let i = ends[..*open as usize]
                        .iter()
                        .position(|&e| e == a.cover)
                        .expect("the covered pip is open");
                    ends[i] = if p == a.cover { q } else { p };
                }
            }
            _ => unreachable!("a line's moves are of its game"),
        }
        for s in &mut l.possible {
            *s &= !(1 << mv.tile());
        }
        l.count[me] -= 1;
        l.passes = 0;
        if l.count[me] == 0 {
            l.over = Some(if self.rules.side(l.mover) == self.side {
                LEAF
            } else {
                -LEAF
            });
        }
        l.mover = (l.mover + 1) % self.rules.seats();
        l
    }

    fn pass(&self, line: &Line) -> Line {
        let mut l = *line;
        l.passes += 1;
        if l.passes >= self.rules.seats() {
            // Blocked: the side holding fewer tiles is taken to win.
            l.over = Some(LEAF * self.tiles_edge(&l).signum());
        }
        l.mover = (l.mover + 1) % self.rules.seats();
        l
    }

    /// Tiles the other sides hold minus the searching side's (most of them).
    fn tiles_edge(&self, l: &Line) -> f64 {
        let mut mine = 0i64;
        let mut theirs = i64::MAX;
        for side in 0..self.rules.sides() {
            let n: i64 = (0..self.rules.seats())
                .filter(|&s| self.rules.side(s) == side)
                .map(|s| l.count[s as usize] as i64)
                .sum();
            if side == self.side {
                mine = n;
            } else {
                theirs = theirs.min(n);
            }
        }
        (theirs - mine) as f64
    }

    /// A transit node: +1 if the state favours the side, -1 if it favours
    /// another, 0 if even: in All Fives by the hand's points, then (as in
    /// block and team, which score no points) by fewer tiles in hand.
    fn transit(&self, l: &Line) -> f64 {
        let mine = l.points[self.side as usize];
        let best_other = (0..self.rules.sides())
            .filter(|&s| s != self.side)
            .map(|s| l.points[s as usize])
            .max()
            .unwrap_or(0);
        let edge = (mine - best_other) as f64;
        let edge = if edge == 0.0 { self.tiles_edge(l) } else { edge };
        TRANSIT * edge.signum()
    }

    /// The value of `line` for the searching side, `depth` plies left,
    /// within (alpha, beta).
    fn value(&mut self, line: &Line, depth: u32, mut alpha: f64, mut beta: f64) -> f64 {
        self.nodes += 1;
        if let Some(v) = line.over {
            return v;
        }
        if depth == 0 {
            self.horizon = true;
            return self.transit(line);
        }
        if self.nodes >= self.limit {
            self.stopped = true;
            return self.transit(line);
        }
        let mut moves = [Move::Block(FullAction { tile: 0, cover: 0 }); MOVES];
        let n = self.moves(line, &mut moves);
        let moves = &moves[..n];
        let maximise = self.rules.side(line.mover) == self.side;
        // Another seat plays with the chance that it holds a playable tile
        // (the report's value probability, over its playable candidates),
        // else passes; the searching seat knows its hand.
        let q = if n == 0 {
            0.0
        } else if line.mover == self.me {
            1.0
        } else {
            let mut seen: TileSet = 0;
            let mut none = 1.0;
            for m in moves {
                let t = m.tile();
                if seen >> t & 1 == 0 {
                    seen |= 1 << t;
                    none *= 1.0 - self.prob[t as usize][line.mover as usize];
                }
            }
            1.0 - none
        };
        let pass_value = if q < 1.0 {
            self.value(&self.pass(line), depth - 1, f64::NEG_INFINITY, f64::INFINITY)
        } else {
            0.0
        };
        if q <= 0.0 {
            return pass_value;
        }
        // value = q * best + (1 - q) * pass: the window on `best`.
        let rest = (1.0 - q) * pass_value;
        alpha = (alpha - rest) / q;
        beta = (beta - rest) / q;
        let mut best = if maximise { f64::NEG_INFINITY } else { f64::INFINITY };
        for &m in moves {
            let v = self.value(&self.play(line, m), depth - 1, alpha, beta);
            if maximise {
                best = best.max(v);
                alpha = alpha.max(v);
            } else {
                best = best.min(v);
                beta = beta.min(v);
            }
            if alpha >= beta {
                break;
            }
        }
        q * best + rest
    }

    /// The root: iterative deepening to `full` plies over `root_moves`
    /// (the true position's legal plays), stopping at the node cap.
    fn decide(&mut self, line: &Line, root_moves: &[Move], full: u32) -> FullDecision {
        let n = root_moves.len();
        let mut decided: Option<(usize, f64, Option<f64>)> = None;
        for depth in 1..=full.max(1) {
            self.horizon = false;
            let mut values = [0.0f64; MOVES];
            for (i, &m) in root_moves.iter().enumerate() {
                values[i] = self.value(&self.play(line, m), depth - 1, f64::NEG_INFINITY, f64::INFINITY);
            }
            if self.stopped && decided.is_some() {
                break;
            }
            let mut best = 0;
            for i in 1..n {
                if values[i] > values[best] + FULL_TIE_EPSILON {
                    best = i;
                }
            }
            let other = (0..n).filter(|&i| i != best).map(|i| values[i]).reduce(f64::max);
            decided = Some((best, values[best], other));
            // A tree searched to its leaves everywhere is the same tree at
            // any greater depth: deepening it again changes nothing.
            if self.stopped || !self.horizon {
                break;
            }
        }
        let (index, value, best_other) = decided.expect("depth 1 is always searched");
        FullDecision {
            index,
            value,
            best_other,
            nodes: self.nodes,
        }
    }
}

/// The position DominAI decides at, in the terms of either game.
#[derive(Clone, Copy, Debug)]
struct Root<'p> {
    /// The seats' hands: its own is read, of the others only their sizes.
    hands: &'p [TileSet; MAX_SEATS],
    /// Passes in a row before the decision (0 for block and team).
    passes: u8,
    /// The table.
    table: Table,
    /// All Fives: the position itself (its opening rule); block: `None`.
    fives: Option<FivesPosition>,
}

/// The line DominAI starts from at `root`: its own hand exactly, the
/// others' tiles as its binary matrix allows.
fn root_line(rules: &FullRules, m: &DominaiMatrices, obs: &Observation, root: &Root) -> Line {
    let hands = root.hands;
    let me = obs.seat as usize;
    let mut possible = [0; MAX_SEATS];
    let mut count = [0; MAX_SEATS];
    for s in 0..rules.seats() as usize {
        count[s] = hands[s].count_ones() as u8;
        possible[s] = if s == me { hands[s] } else { m.binary[s] & obs.hidden };
    }
    Line {
        table: root.table,
        mover: obs.seat,
        passes: 0,
        count,
        possible,
        points: [0; MAX_SEATS],
        over: None,
    }
}

/// DominAI's play for the mover of the All-Fives position `pos` (index into
/// `pos.actions`, which must have two or more), who sees only what `obs`
/// holds (its own hand, and of the others only their sizes: `pos.hands`
/// is read for its own hand and the sizes): minimax with alpha-beta, its
/// side maximising, to depth `turns_passed + n0` plies, deepening
/// iteratively until that depth or until `node_limit` nodes have been
/// searched (the deepest finished iteration decides).
pub fn dominai_decide(
    rules: &FullRules,
    pos: &FivesPosition,
    obs: &Observation,
    turns_passed: u32,
    n0: u32,
    node_limit: u64,
) -> FullDecision {
    let mut list = ActionList::default();
    pos.actions(rules, &mut list);
    let moves = list.as_slice().iter().map(|&a| Move::Fives(a));
    let root = Root {
        hands: &pos.hands,
        passes: pos.passes,
        table: Table::Fives(pos.board),
        fives: Some(*pos),
    };
    decide(rules, obs, &root, moves, turns_passed + n0, node_limit)
}

/// [`dominai_decide`] for a block or team position (index into
/// `pos.actions`).
pub fn dominai_decide_block(
    rules: &FullRules,
    pos: &FullPosition,
    obs: &Observation,
    turns_passed: u32,
    n0: u32,
    node_limit: u64,
) -> FullDecision {
    let mut list = FullActions::default();
    pos.actions(rules, &mut list);
    let moves = list.as_slice().iter().map(|&a| Move::Block(a));
    let root = Root {
        hands: &pos.hands,
        passes: 0,
        table: Table::Block {
            ends: pos.ends,
            open: pos.open,
        },
        fives: None,
    };
    decide(rules, obs, &root, moves, turns_passed + n0, node_limit)
}

/// The matrices of `obs`, the line at `root`, and the search over `root_moves`.
fn decide(
    rules: &FullRules,
    obs: &Observation,
    root: &Root,
    root_moves: impl Iterator<Item = Move>,
    depth: u32,
    node_limit: u64,
) -> FullDecision {
    let m = DominaiMatrices::new(rules, obs);
    let mut line = root_line(rules, &m, obs, root);
    line.passes = root.passes;
    let mut search = Search {
        rules,
        side: rules.side(obs.seat),
        me: obs.seat,
        prob: m.absolute,
        fives: root.fives,
        nodes: 0,
        limit: node_limit.max(1),
        stopped: false,
        horizon: false,
    };
    let mut moves = [Move::Block(FullAction { tile: 0, cover: 0 }); MOVES];
    let mut n = 0;
    for (o, mv) in moves.iter_mut().zip(root_moves) {
        *o = mv;
        n += 1;
    }
    search.decide(&line, &moves[..n], depth)
}
