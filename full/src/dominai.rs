//! The DominAI player of seed 002 (Vielma's challenge report, a four-player
//! partnership double-6 player): per-player probability matrices as its
//! belief, and minimax with alpha-beta between the partnerships, the depth
//! growing with the turn. docs/dominai.md says what the report says, what
//! it leaves vague, and what was chosen; the aim is a faithful baseline,
//! not an improved one.

use engine::Board;
use engine::{Action, ActionList};
use engine::{TileSet, bits};

use super::belief::{HOLDERS, Marginals, Observation};
use super::fives::FivesPosition;
use super::position::{FullAction, FullActions, FullPosition};
use super::rules::{FullRules, MAX_SEATS};
use super::search::{FULL_TIE_EPSILON, FullDecision};

/// Seed 002's matrices for one observation: one profile per other holder
/// (the other seats, and the boneyard when there is one: a profile that
/// never passes, which the report, with no boneyard, does not have).
#[derive(Clone, Debug, PartialEq)]
pub struct DominaiMatrices {
    /// Whether a holder has a profile (another seat with tiles, or a
    /// non-empty boneyard).
    pub profiled: [bool; HOLDERS],
    /// Binary: 1 unless the tile is the observer's, played, or of a value
    /// the holder passed on (after the corrections).
    pub binary: [TileSet; HOLDERS],
    /// Accumulated: per tile, how many profiles have a 1.
    pub accumulated: [u8; 64],
    /// Relative: binary / accumulated.
    pub relative: [[f64; HOLDERS]; 64],
    /// Indeterminate tiles: the holder's tiles minus its cells of relative 1.
    pub indeterminate: [i32; HOLDERS],
    /// Absolute: 1 where relative is 1; else, with a binary 1, the holder's
    /// indeterminate tiles over the sum of the indeterminate tiles of the
    /// holders with a 1 for the tile.
    pub absolute: [[f64; HOLDERS]; 64],
    /// Rounds of the two corrections until nothing changed.
    pub rounds: u32,
    hidden: TileSet,
    size: [u8; HOLDERS],
}

impl DominaiMatrices {
    /// The matrices of `obs` (`rules` gives the tiles' pips).
    pub fn new(rules: &FullRules, obs: &Observation) -> DominaiMatrices {
        let mut m = DominaiMatrices {
            profiled: [false; HOLDERS],
            binary: [0; HOLDERS],
            accumulated: [0; 64],
            relative: [[0.0; HOLDERS]; 64],
            indeterminate: [0; HOLDERS],
            absolute: [[0.0; HOLDERS]; 64],
            rounds: 0,
            hidden: obs.hidden,
            size: obs.size,
        };
        for h in 0..HOLDERS {
            if obs.size[h] == 0 {
                continue;
            }
            m.profiled[h] = true;
            let mut b = obs.hidden;
            if h < MAX_SEATS {
                // "The player passed to that specific value": every tile
                // with that value is set to 0.
                for p in 0..=rules.set() {
                    if obs.void_pips[h] >> p & 1 == 1 {
                        b &= !rules.pip_mask(p);
                    }
                }
            }
            m.binary[h] = b;
        }
        m.settle();
        m
    }

    /// The corrections, repeated "until no modifications are needed", then
    /// the absolute matrix.
    fn settle(&mut self) {
        let m = self;
        loop {
            m.rounds += 1;
            m.relative_and_indeterminate();
            let mut changed = false;
            for h in (0..HOLDERS).filter(|&h| m.profiled[h]) {
                // (a) No indeterminate tiles: the holder has exactly its
                // certain tiles, so every uncertain cell is 0.
                if m.indeterminate[h] == 0 {
                    let certain = m.certain(h);
                    if m.binary[h] & !certain != 0 {
                        m.binary[h] = certain;
                        changed = true;
                    }
                }
                // (b) As many possible tiles as tiles in hand: it holds
                // them all, so no other holder can.
                let possible = m.binary[h];
                if possible.count_ones() == m.size[h] as u32 {
                    for g in (0..HOLDERS).filter(|&g| g != h && m.profiled[g]) {
                        if m.binary[g] & possible != 0 {
                            m.binary[g] &= !possible;
                            changed = true;
                        }
                    }
                }
            }
            if !changed || m.rounds > 64 {
                break;
            }
        }
        m.absolute = [[0.0; HOLDERS]; 64];
        for t in bits(m.hidden) {
            let with = |h: &usize| m.profiled[*h] && m.binary[*h] >> t & 1 == 1;
            let sum: i32 = (0..HOLDERS).filter(with).map(|h| m.indeterminate[h].max(0)).sum();
            for h in (0..HOLDERS).filter(with) {
                m.absolute[t as usize][h] = if m.relative[t as usize][h] >= 1.0 {
                    1.0
                } else if sum > 0 {
                    m.indeterminate[h].max(0) as f64 / sum as f64
                } else {
                    0.0
                };
            }
        }
    }

    fn relative_and_indeterminate(&mut self) {
        for t in bits(self.hidden) {
            let a = (0..HOLDERS)
                .filter(|&h| self.profiled[h] && self.binary[h] >> t & 1 == 1)
                .count() as u8;
            self.accumulated[t as usize] = a;
            for h in 0..HOLDERS {
                self.relative[t as usize][h] = if a > 0 && self.binary[h] >> t & 1 == 1 {
                    1.0 / a as f64
                } else {
                    0.0
                };
            }
        }
        for h in 0..HOLDERS {
            self.indeterminate[h] = if self.profiled[h] {
                self.size[h] as i32 - self.certain(h).count_ones() as i32
            } else {
                0
            };
        }
    }

    /// The tiles only holder `h` may have (relative probability 1).
    fn certain(&self, h: usize) -> TileSet {
        bits(self.binary[h] & self.hidden)
            .filter(|&t| self.accumulated[t as usize] == 1)
            .fold(0, |s, t| s | 1 << t)
    }

    /// The report's "value probability": the chance that holder `h` has
    /// any tile with pip `v`, chaining P(A or B) = P(A) + P(B) - P(A)P(B)
    /// over those tiles' absolute probabilities (independence assumed).
    pub fn value_probability(&self, rules: &FullRules, h: usize, v: u8) -> f64 {
        bits(rules.pip_mask(v) & self.hidden).fold(0.0, |p, t| {
            let q = self.absolute[t as usize][h];
            p + q - p * q
        })
    }

    /// The absolute matrix as marginals, renormalised per tile over the
    /// holders (the report's rows need not sum to 1); a tile no profile
    /// may hold is shared by the holders' sizes.
    pub fn marginals(&self, out: &mut Marginals) {
        for row in out.iter_mut() {
            *row = [0.0; HOLDERS];
        }
        let total: f64 = self.size.iter().map(|&s| s as f64).sum();
        for t in bits(self.hidden) {
            let row = &self.absolute[t as usize];
            let sum: f64 = row.iter().sum();
            for h in 0..HOLDERS {
                out[t as usize][h] = if sum > 0.0 {
                    row[h] / sum
                } else {
                    self.size[h] as f64 / total
                };
            }
        }
    }
}

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

/// The line DominAI starts from: its own hand exactly, the others' tiles
/// as its binary matrix allows.
fn root_line(
    rules: &FullRules,
    m: &DominaiMatrices,
    obs: &Observation,
    hands: &[TileSet; MAX_SEATS],
    table: Table,
) -> Line {
    let me = obs.seat as usize;
    let mut possible = [0; MAX_SEATS];
    let mut count = [0; MAX_SEATS];
    for s in 0..rules.seats() as usize {
        count[s] = hands[s].count_ones() as u8;
        possible[s] = if s == me { hands[s] } else { m.binary[s] & obs.hidden };
    }
    Line {
        table,
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
    let table = Table::Fives(pos.board);
    decide(
        rules,
        obs,
        &pos.hands,
        pos.passes,
        table,
        Some(*pos),
        moves,
        turns_passed + n0,
        node_limit,
    )
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
    let table = Table::Block {
        ends: pos.ends,
        open: pos.open,
    };
    decide(
        rules,
        obs,
        &pos.hands,
        0,
        table,
        None,
        moves,
        turns_passed + n0,
        node_limit,
    )
}

/// The matrices of `obs`, the root line, and the search over `root_moves`.
#[allow(clippy::too_many_arguments)]
fn decide(
    rules: &FullRules,
    obs: &Observation,
    hands: &[TileSet; MAX_SEATS],
    passes: u8,
    table: Table,
    fives: Option<FivesPosition>,
    root_moves: impl Iterator<Item = Move>,
    depth: u32,
    node_limit: u64,
) -> FullDecision {
    let m = DominaiMatrices::new(rules, obs);
    let mut line = root_line(rules, &m, obs, hands, table);
    line.passes = passes;
    let mut search = Search {
        rules,
        side: rules.side(obs.seat),
        me: obs.seat,
        prob: m.absolute,
        fives,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::FullConfig;

    #[test]
    fn the_reports_absolute_probabilities() {
        // Three players holding 4, 4 and 5 tiles with 3, 2 and 5
        // indeterminate: a tile all three may hold is 3/10, 2/10, 5/10;
        // one only players 1 and 2 may hold is 3/5 and 2/5; players 2 and
        // 3: 2/7 and 5/7 (the report prints 0.3, 0.2, 0.5, 0.6, 0.4, 0.3
        // and 0.7).
        let rules = FullRules::new(FullConfig::all_fives(4)).unwrap();
        let t = |a: u8, b: u8| {
            (0..rules.tile_count())
                .find(|&t| rules.pips(t) == (a.min(b), a.max(b)))
                .unwrap()
        };
        let mut obs = Observation {
            seat: 0,
            seats: 4,
            hidden: 0,
            size: [0, 4, 4, 5, 0],
            void: [0; HOLDERS],
            void_pips: [0; MAX_SEATS],
        };
        // Player 1 certainly holds 4-6; player 2 holds 1-3 and 3-4.
        let p1_only = [t(4, 6)];
        let p2_only = [t(1, 3), t(3, 4)];
        let p12 = [t(0, 4)];
        let p23 = [t(0, 3), t(3, 5)];
        let shared = [t(0, 1), t(1, 1), t(1, 2), t(2, 2), t(1, 4), t(0, 5)];
        let mut hidden = 0u64;
        for &x in p1_only.iter().chain(&p2_only).chain(&p12).chain(&p23).chain(&shared) {
            hidden |= 1 << x;
        }
        obs.hidden = hidden;
        // Binary matrices by hand (passes would give them; set directly).
        let mut m = DominaiMatrices::new(&rules, &obs);
        let set = |list: &[u8]| list.iter().fold(0u64, |s, &x| s | 1 << x);
        m.binary[1] = set(&p1_only) | set(&p12) | set(&shared);
        m.binary[2] = set(&p2_only) | set(&p12) | set(&p23) | set(&shared);
        m.binary[3] = set(&p23) | set(&shared);
        m.rounds = 0;
        m.settle();
        assert_eq!(m.rounds, 1, "no correction applies");
        assert_eq!(m.indeterminate[1..4], [3, 2, 5]);
        let abs = |m: &DominaiMatrices, tile: u8, h: usize| m.absolute[tile as usize][h];
        let s = shared[0];
        assert!((abs(&m, s, 1) - 0.3).abs() < 1e-12);
        assert!((abs(&m, s, 2) - 0.2).abs() < 1e-12);
        assert!((abs(&m, s, 3) - 0.5).abs() < 1e-12);
        assert!((abs(&m, p12[0], 1) - 0.6).abs() < 1e-12);
        assert!((abs(&m, p12[0], 2) - 0.4).abs() < 1e-12);
        assert!((abs(&m, p23[0], 2) - 2.0 / 7.0).abs() < 1e-12);
        assert!((abs(&m, p23[0], 3) - 5.0 / 7.0).abs() < 1e-12);
        assert_eq!(abs(&m, p1_only[0], 1), 1.0);
        assert!((m.relative[s as usize][1] - 1.0 / 3.0).abs() < 1e-12);
        assert!((m.relative[p12[0] as usize][2] - 0.5).abs() < 1e-12);
    }
}
